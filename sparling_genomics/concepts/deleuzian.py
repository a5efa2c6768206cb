"""Deleuzian concept extraction (seed 004, second paper): concepts are recurring
*differences* between activations. Sample pairs of rows, take each difference ``x_i - x_j``,
project every row (a sample) onto it and measure the projections' skewness; a negative-skew
difference is flipped so that every skewness is positive, and each difference is weighted by
the inverse of its skewness (a few extreme rows make a skewed, redundant direction; the
weight spreads the clusters over more kinds of difference). Weighted k-means (k-means++
start, Lloyd steps) of the differences; the centroids are the concepts, in the activations'
own space, and a row's activation of a concept is its (centred, scaled) projection onto it.

Written here rather than taken from scikit-learn's KMeans: the weighted k-means++ start and
Lloyd steps are a dozen lines, and the seed controls every draw."""

from __future__ import annotations

import numpy as np

from .base import Concepts, Scaling, check_activations


def skewness(projections: np.ndarray) -> np.ndarray:
    """Sample skewness of each column of ``projections`` (rows, columns)."""
    centred = projections - projections.mean(0)
    var = (centred**2).mean(0)
    return (centred**3).mean(0) / np.maximum(var, 1e-12) ** 1.5


def weighted_kmeans(
    points: np.ndarray, weights: np.ndarray, k: int, rng: np.random.Generator,
    *, iterations: int = 100,
) -> np.ndarray:  # fmt: skip
    """Centroids ``(k, d)`` of weighted k-means (k-means++ start drawn with the weights)."""
    centres = [points[rng.choice(len(points), p=weights / weights.sum())]]
    closest = ((points - centres[0]) ** 2).sum(1)
    for _ in range(1, k):
        p = weights * closest
        pick = rng.choice(len(points), p=p / p.sum()) if p.sum() > 0 else rng.integers(len(points))
        centres.append(points[pick])
        closest = np.minimum(closest, ((points - points[pick]) ** 2).sum(1))
    centres = np.array(centres)
    sq = (points**2).sum(1)
    for _ in range(iterations):
        d2 = sq[:, None] - 2 * points @ centres.T + (centres**2).sum(1)[None]
        label = d2.argmin(1)
        mass = np.bincount(label, weights, minlength=k)
        sums = np.zeros_like(centres)
        np.add.at(sums, label, weights[:, None] * points)
        new = np.where(mass[:, None] > 0, sums / np.maximum(mass, 1e-12)[:, None], centres)
        if np.allclose(new, centres):
            break
        centres = new
    return centres


def fit_deleuzian(
    x: np.ndarray,
    concepts: int,
    *,
    pairs: int = 20_000,
    skew_rows: int = 4096,
    seed: int = 0,
    where: str = "activations",
) -> Concepts:
    """``concepts`` Deleuzian concepts of activations ``x`` (n, d) from ``pairs`` sampled
    differences (skewness measured over ``skew_rows`` sampled rows)."""
    check_activations(x, concepts, where)
    rng = np.random.default_rng(seed)
    scaling = Scaling.of(np.asarray(x, np.float64))
    scaled = scaling.apply(x).astype(np.float64)
    n = len(scaled)
    i, j = rng.integers(0, n, (2, pairs))
    diffs = scaled[i] - scaled[j]
    diffs = diffs[np.linalg.norm(diffs, axis=1) > 1e-9]
    if len(diffs) < concepts:
        raise_few(where, len(diffs), concepts)
    units = diffs / np.linalg.norm(diffs, axis=1, keepdims=True)
    rows = scaled[rng.choice(n, min(n, skew_rows), replace=False)]
    skew = skewness(rows @ units.T)
    flip = skew < 0
    diffs[flip] *= -1
    weights = 1.0 / np.maximum(np.abs(skew), 1e-3)
    centres = weighted_kmeans(diffs, weights, concepts, rng)
    norms = np.linalg.norm(centres, axis=1, keepdims=True)
    directions = centres / np.maximum(norms, 1e-12)

    def encode(scaled_rows: np.ndarray) -> np.ndarray:
        # Projection onto each concept: the code of a one-direction "block".
        return (scaled_rows @ directions.T)[:, :, None].astype(np.float32)

    info = {"concepts": concepts, "pairs": int(len(diffs)), "flipped": int(flip.sum()),
            "median_abs_skew": round(float(np.median(np.abs(skew))), 4)}  # fmt: skip
    return Concepts("deleuzian", directions[:, None, :].astype(np.float32), scaling, encode,
                    info=info, signed=True)  # fmt: skip


def raise_few(where: str, have: int, concepts: int) -> None:
    from ..errors import ConfigError

    raise ConfigError(f"{where}: {have} distinct activation differences for {concepts} "
                      "concepts; use fewer concepts or more data")  # fmt: skip
