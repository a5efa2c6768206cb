"""Topology and geometry of a point cloud: the measures of the training diagnostics.

For one point cloud (the rows of an embedding matrix, or a layer's activation vectors on a
fixed sample): Vietoris-Rips persistent homology in dimensions 0 and 1 (``ripser``), summed to
the maximum and total persistence of each dimension; the intrinsic dimension by TwoNN
(``scikit-dimension``'s global estimate, and the mean of the maximum-likelihood TwoNN estimates
over each point's neighbourhood); and, for a matrix whose rows are the residues of a cyclic
group, the share of its power at each discrete Fourier frequency (``numpy.fft``). Seed 004
(Tang et al.) reads these across a run's checkpoints: when a network groks modular addition, a
long-lived H1 bar appears in its token embeddings, its local intrinsic dimension falls, and its
embedding's power concentrates on a few frequencies.

Clouds are centred and scaled to unit root-mean-square norm first, so measures of different
checkpoints (whose weights grow or shrink) compare; duplicate rows are dropped (a sparse
layer's many identical vectors would give zero-length bars and a TwoNN division by zero);
large clouds are subsampled with a fixed seed.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

MIN_POINTS = 4  # fewer points carry no H1 and no TwoNN neighbours


@dataclass
class CloudMeasures:
    """The measures of one point cloud; ``None`` where the cloud is too small for one."""

    points: int
    dimension: int
    h0_max: float | None = None
    h0_total: float | None = None
    h1_max: float | None = None
    h1_total: float | None = None
    h1_bars: int | None = None
    h1_dominance: float | None = None  # longest H1 bar / second longest (inf: only one)
    twonn: float | None = None  # global intrinsic dimension
    twonn_local: float | None = None  # mean of the pointwise (neighbourhood) estimates
    diagrams: dict[str, np.ndarray] = field(default_factory=dict, repr=False)

    def as_dict(self) -> dict:
        """The scalar measures (JSON-ready: an infinite dominance becomes ``None``)."""
        out = {k: v for k, v in self.__dict__.items() if k != "diagrams"}
        if out["h1_dominance"] is not None and not np.isfinite(out["h1_dominance"]):
            out["h1_dominance"] = None
        return out


def prepare_cloud(points: np.ndarray, max_points: int = 1000, seed: int = 0) -> np.ndarray:
    """``points`` (n, d) as float64, duplicates dropped, at most ``max_points`` rows (a seeded
    subsample), centred and scaled to unit root-mean-square row norm."""
    x = np.asarray(points, dtype=np.float64)
    if x.ndim != 2:
        raise ValueError(f"a point cloud is a 2-D array (points, features), not {x.shape}")
    x = x[np.isfinite(x).all(1)]
    if len(x):
        x = np.unique(x, axis=0)
    if len(x) > max_points:
        keep = np.random.default_rng(seed).choice(len(x), max_points, replace=False)
        x = x[np.sort(keep)]
    if not len(x):
        return x
    x = x - x.mean(0)
    scale = np.sqrt((x**2).sum(1).mean())
    return x / scale if scale > 0 else x


def persistence(cloud: np.ndarray) -> dict[str, np.ndarray]:
    """Vietoris-Rips persistence diagrams of ``cloud`` in dimensions 0 and 1: ``{"h0": (k, 2),
    "h1": (m, 2)}`` birth/death pairs (H0's one infinite bar dropped)."""
    from ripser import ripser

    if len(cloud) < 2:
        return {"h0": np.zeros((0, 2)), "h1": np.zeros((0, 2))}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "more columns than rows": a small cloud, not a mix-up
        dgms = ripser(cloud, maxdim=1)["dgms"]
    return {f"h{k}": d[np.isfinite(d[:, 1])] for k, d in enumerate(dgms)}


def summarise_diagram(diagram: np.ndarray) -> tuple[float, float, int]:
    """(max persistence, total persistence, number of bars) of one diagram."""
    life = diagram[:, 1] - diagram[:, 0] if len(diagram) else np.zeros(0)
    life = life[life > 0]
    return (float(life.max()) if len(life) else 0.0, float(life.sum()), int(len(life)))


def twonn_dimension(cloud: np.ndarray, neighbours: int = 20) -> tuple[float, float]:
    """(global, mean local) TwoNN intrinsic dimension of ``cloud``.

    Global: scikit-dimension's TwoNN. Local: TwoNN's maximum-likelihood estimate
    ``k / sum(log(r2 / r1))`` over each point's ``neighbours`` nearest neighbours (``r1``,
    ``r2``: a point's first and second neighbour distances), vectorised here because
    scikit-dimension's pointwise fit refits TwoNN point by point (~100x slower per cloud).
    """
    import skdim
    from scipy.spatial import cKDTree

    k = max(3, min(neighbours, len(cloud) - 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        glob = float(skdim.id.TwoNN().fit(cloud).dimension_)
    dist, index = cKDTree(cloud).query(cloud, k=k + 1)  # column 0: the point itself
    r1, r2 = dist[:, 1], dist[:, 2]
    ok = r1 > 0
    log_mu = np.where(ok, np.log(np.where(ok, r2, 1.0) / np.where(ok, r1, 1.0)), np.nan)
    hood = log_mu[index]  # each point's neighbourhood (itself included)
    sums, counts = np.nansum(hood, 1), np.sum(np.isfinite(hood), 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        local = counts / sums
    local = local[np.isfinite(local) & (counts >= 3)]
    return glob, float(local.mean()) if len(local) else float("nan")


def measure_cloud(points: np.ndarray, max_points: int = 1000, seed: int = 0) -> CloudMeasures:
    """All the measures of one point cloud (see the module docstring)."""
    x = prepare_cloud(points, max_points, seed)
    out = CloudMeasures(points=int(len(x)), dimension=int(x.shape[1]) if x.ndim == 2 else 0)
    if len(x) < MIN_POINTS:
        return out
    out.diagrams = persistence(x)
    out.h0_max, out.h0_total, _ = summarise_diagram(out.diagrams["h0"])
    out.h1_max, out.h1_total, out.h1_bars = summarise_diagram(out.diagrams["h1"])
    h1 = out.diagrams["h1"]
    life = np.sort(h1[:, 1] - h1[:, 0])[::-1] if len(h1) else np.zeros(0)
    if len(life) >= 2 and life[1] > 0:
        out.h1_dominance = float(life[0] / life[1])
    elif len(life) == 1:
        out.h1_dominance = float("inf")
    if len(x) > 2:
        glob, local = twonn_dimension(x)
        out.twonn = glob if np.isfinite(glob) else None
        out.twonn_local = local if np.isfinite(local) else None
    return out


def fourier_spectrum(embedding: np.ndarray) -> np.ndarray:
    """The share of an embedding's power at each frequency 0..p//2, where row ``i`` embeds
    residue ``i`` mod ``p``: the power of the DFT along the token axis, summed over features
    (frequency ``k`` and ``p - k`` folded together), normalised to sum to 1."""
    e = np.asarray(embedding, dtype=np.float64)
    e = e - e.mean(0)
    power = (np.abs(np.fft.rfft(e, axis=0)) ** 2).sum(1)
    p = len(e)
    # rfft keeps k = 0..p//2: every k but 0 (and p/2 for even p) stands for k and p - k.
    weight = np.full(len(power), 2.0)
    weight[0] = 1.0
    if p % 2 == 0:
        weight[-1] = 1.0
    power = power * weight
    total = power.sum()
    return power / total if total > 0 else power


def top_frequencies(spectrum: np.ndarray, k: int = 5) -> tuple[list[int], float]:
    """The ``k`` frequencies (excluding 0) with the most power, and their summed share."""
    order = np.argsort(spectrum[1:])[::-1][:k] + 1
    return [int(i) for i in order], float(spectrum[order].sum())
