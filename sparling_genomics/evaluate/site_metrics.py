"""Per-position site metrics: SpliceAI top-k accuracy and PR-AUC (average precision).

Top-k accuracy (Jaganathan et al. 2019), for one site type over all labelled positions: with
k the number of true sites, the fraction of true sites among the k highest-scoring positions.
Average precision is the step-wise area under the precision-recall curve (as
``sklearn.metrics.average_precision_score``, written out here in a few lines of numpy to keep
scikit-learn out of the dependencies); tied scores are one threshold.

Both are exact, so every position's score is held (what ``evaluate --split all`` over a whole
genome holds at once): the scorer keeps float32 scores of labelled positions only, and both
metrics come from one sorted copy of a class's scores searched at the true sites' scores.
"""

from __future__ import annotations

import numpy as np


def topk_accuracy(scores: np.ndarray, truth: np.ndarray) -> float | None:
    """Fraction of true sites among the ``k = truth.sum()`` highest scores (None if k = 0).

    Positions tied with the k-th score share its remaining places: each counts as true in
    proportion to the true sites among them (the expected value of any tie-break)."""
    return _ranked(scores, truth)[0]


def average_precision(scores: np.ndarray, truth: np.ndarray) -> float | None:
    """Area under the precision-recall curve, sum over thresholds of (R_n - R_{n-1}) P_n."""
    return _ranked(scores, truth)[1]


def _ranked(scores: np.ndarray, truth: np.ndarray) -> tuple[float | None, float | None]:
    """Top-k accuracy and average precision from one sorted copy of the scores.

    Every threshold that matters is a true site's score, so both need only counts of
    positions at or above a score: binary searches in the sorted scores (a float copy, no
    index arrays), a few bytes a position at the peak."""
    scores = np.asarray(scores).ravel()
    truth = np.asarray(truth, dtype=bool).ravel()
    true_scores = np.sort(scores[truth])
    k = len(true_scores)
    if k == 0:
        return None, None
    ranked = np.sort(scores)  # ascending; a copy, the caller's array is untouched
    n = len(ranked)
    # Top-k: the k-th highest score, positions above it, and those tied with it.
    kth = ranked[n - k]
    above = n - np.searchsorted(ranked, kth, side="right")
    tied = np.searchsorted(ranked, kth, side="right") - np.searchsorted(ranked, kth)
    true_above = k - np.searchsorted(true_scores, kth, side="right")
    true_tied = np.searchsorted(true_scores, kth, side="right") - np.searchsorted(true_scores, kth)
    hits = true_above + (k - above) * true_tied / tied
    # Average precision: one threshold per distinct true-site score (ties are one threshold).
    levels, count = np.unique(true_scores, return_counts=True)
    at_or_above = n - np.searchsorted(ranked, levels)
    true_at_or_above = k - np.searchsorted(true_scores, levels)
    precision = true_at_or_above / at_or_above
    return float(hits) / k, float(np.sum(count / k * precision))


def site_metrics(probabilities: np.ndarray, labels: np.ndarray, classes: list[str]) -> dict:
    """Top-k and PR-AUC per site class (class 0 is 'none'); labels < 0 are ignored.

    ``probabilities``: (P, C) scores of P positions, ``labels``: (P,) class indices.
    """
    keep = labels >= 0
    if not keep.all():
        probabilities, labels = probabilities[keep], labels[keep]
    del keep
    out: dict = {"positions": len(labels)}
    topks = []
    for c, name in enumerate(classes):
        if c == 0:
            continue
        truth = labels == c
        topk, pr_auc = _ranked(probabilities[:, c], truth)
        out[name] = {"sites": int(truth.sum()), "topk": topk, "pr_auc": pr_auc}
        if topk is not None:
            topks.append(topk)
    out["mean_topk"] = float(np.mean(topks)) if topks else None
    return out
