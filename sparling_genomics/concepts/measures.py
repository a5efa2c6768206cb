"""Measures that compare concept sets: recovery of known manifolds (R^2 per manifold, seed
002), probe loss (held-out logistic probes from concept activations to labels, seed 004) and
cross-seed stability (MPPC, seed 004).

Probes use scikit-learn's ``LogisticRegression``; the rest is a few lines of numpy."""

from __future__ import annotations

import numpy as np

from .base import Concepts


def recovery_r2(concepts: Concepts, x: np.ndarray, parts: np.ndarray) -> np.ndarray:
    """Per true manifold ``i``: the best R^2 with which one concept's contribution (its code
    times its block, mapped back to activation units) reproduces ``parts[:, i]`` over all
    rows, ``1 - |part - estimate|^2 / |part - mean(part)|^2``."""
    codes = concepts.codes(x)
    best = np.full(parts.shape[1], -np.inf)
    for c in range(concepts.count):
        estimate = concepts.part(codes, c) * concepts.scaling.scale
        for i in range(parts.shape[1]):
            truth = parts[:, i]
            total = float(((truth - truth.mean(0)) ** 2).sum())
            r2 = 1.0 - float(((truth - estimate) ** 2).sum()) / max(total, 1e-12)
            best[i] = max(best[i], r2)
    return best


def probe_loss(
    features: np.ndarray, labels: np.ndarray, *, seed: int = 0, test_fraction: float = 0.3
) -> dict:
    """Mean held-out binary cross-entropy (nats) of one logistic probe per label column
    (``labels`` (n, L) bool) from ``features`` (n, c) (standardised); lower is better.
    Columns with no positive (or no negative) row are skipped and counted."""
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(seed)
    n = len(features)
    order = rng.permutation(n)
    cut = int(round(n * (1 - test_fraction)))
    train, test = order[:cut], order[cut:]
    mu, sd = features[train].mean(0), features[train].std(0) + 1e-8
    f = (features - mu) / sd
    losses, skipped = [], 0
    for j in range(labels.shape[1]):
        y = labels[:, j].astype(int)
        if y[train].min() == y[train].max() or y[test].min() == y[test].max():
            skipped += 1
            continue
        probe = LogisticRegression(max_iter=500, C=1.0).fit(f[train], y[train])
        p = np.clip(probe.predict_proba(f[test])[:, 1], 1e-7, 1 - 1e-7)
        losses.append(float(-(y[test] * np.log(p) + (1 - y[test]) * np.log(1 - p)).mean()))
    return {"probe_loss": float(np.mean(losses)) if losses else None,
            "labels": len(losses), "skipped": skipped}  # fmt: skip


def mppc(a: np.ndarray, b: np.ndarray) -> float:
    """Mean over the concepts of ``a`` (n, ca) of the largest |Pearson r| with any concept of
    ``b`` (n, cb), both concept activations on the same rows (1: every concept of one seed
    reappears in the other). Constant columns correlate 0."""
    def standardise(m: np.ndarray) -> np.ndarray:
        m = m - m.mean(0)
        sd = np.sqrt((m**2).sum(0))
        return np.divide(m, sd, out=np.zeros_like(m), where=sd > 0)

    r = np.abs(standardise(a.astype(np.float64)).T @ standardise(b.astype(np.float64)))
    return float(r.max(1).mean()) if r.size else 0.0
