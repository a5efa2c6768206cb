"""Per-position site metrics: SpliceAI top-k accuracy and PR-AUC (average precision).

Top-k accuracy (Jaganathan et al. 2019), for one site type over all labelled positions: with
k the number of true sites, the fraction of true sites among the k highest-scoring positions.
Average precision is the step-wise area under the precision-recall curve (as
``sklearn.metrics.average_precision_score``, written out here in a few lines of numpy to keep
scikit-learn out of the dependencies); tied scores are one threshold.
"""

from __future__ import annotations

import numpy as np


def topk_accuracy(scores: np.ndarray, truth: np.ndarray) -> float | None:
    """Fraction of true sites among the ``k = truth.sum()`` highest scores (None if k = 0)."""
    scores = np.asarray(scores, dtype=np.float64).ravel()
    truth = np.asarray(truth, dtype=bool).ravel()
    k = int(truth.sum())
    if k == 0:
        return None
    top = np.argpartition(-scores, k - 1)[:k]
    return float(truth[top].sum()) / k


def average_precision(scores: np.ndarray, truth: np.ndarray) -> float | None:
    """Area under the precision-recall curve, sum over thresholds of (R_n - R_{n-1}) P_n."""
    scores = np.asarray(scores, dtype=np.float64).ravel()
    truth = np.asarray(truth, dtype=bool).ravel()
    positives = int(truth.sum())
    if positives == 0:
        return None
    order = np.argsort(-scores, kind="mergesort")
    s, t = scores[order], truth[order]
    # The last index of each run of tied scores is one threshold.
    last = np.r_[np.flatnonzero(np.diff(s) != 0), len(s) - 1]
    tp = np.cumsum(t)[last]
    precision = tp / (last + 1)
    recall = tp / positives
    return float(np.sum(np.diff(np.r_[0.0, recall]) * precision))


def site_metrics(probabilities: np.ndarray, labels: np.ndarray, classes: list[str]) -> dict:
    """Top-k and PR-AUC per site class (class 0 is 'none'); labels < 0 are ignored.

    ``probabilities``: (P, C) scores of P positions, ``labels``: (P,) class indices.
    """
    keep = labels >= 0
    probabilities, labels = probabilities[keep], labels[keep]
    out: dict = {"positions": int(keep.sum())}
    topks = []
    for c, name in enumerate(classes):
        if c == 0:
            continue
        truth = labels == c
        topk = topk_accuracy(probabilities[:, c], truth)
        out[name] = {
            "sites": int(truth.sum()),
            "topk": topk,
            "pr_auc": average_precision(probabilities[:, c], truth),
        }
        if topk is not None:
            topks.append(topk)
    out["mean_topk"] = float(np.mean(topks)) if topks else None
    return out
