import numpy as np
import pytest

from sparling_genomics.evaluate.site_metrics import average_precision, site_metrics, topk_accuracy


def test_topk_hand_built_case():
    # 3 true sites; the 3 highest scores are positions 0, 1 and 4, of which 0 and 4 are true.
    scores = np.array([0.9, 0.8, 0.1, 0.2, 0.7, 0.3])
    truth = np.array([1, 0, 0, 0, 1, 1])
    assert topk_accuracy(scores, truth) == pytest.approx(2 / 3)
    assert topk_accuracy(scores, np.zeros(6)) is None
    assert topk_accuracy(truth.astype(float), truth) == 1.0


def test_average_precision_hand_built_case():
    # Ranked: T F T F -> precision at the true sites 1/1 and 2/3 -> AP = (1 + 2/3) / 2.
    scores = np.array([0.9, 0.8, 0.7, 0.6])
    truth = np.array([1, 0, 1, 0])
    assert average_precision(scores, truth) == pytest.approx((1 + 2 / 3) / 2)
    # Ties are one threshold: all tied -> precision = prevalence.
    assert average_precision(np.ones(4), truth) == pytest.approx(0.5)
    assert average_precision(scores, np.zeros(4)) is None


def test_site_metrics_ignores_unlabelled_positions_and_class_zero():
    probs = np.array([[0.1, 0.8, 0.1], [0.1, 0.1, 0.8], [0.9, 0.05, 0.05], [0.0, 1.0, 0.0]])
    labels = np.array([1, 2, 0, -1])  # the last position (a perfect 'acceptor') is ignored
    out = site_metrics(probs, labels, ["none", "acceptor", "donor"])
    assert out["positions"] == 3
    assert out["acceptor"] == {"sites": 1, "topk": 1.0, "pr_auc": 1.0}
    assert out["donor"]["topk"] == 1.0 and out["mean_topk"] == 1.0


def _reference(scores, truth):
    """Top-k and AP the slow way: every threshold in turn; ties at the k-th score averaged."""
    scores, truth = np.asarray(scores, dtype=np.float64), np.asarray(truth, dtype=bool)
    k = truth.sum()
    kth = np.sort(scores)[::-1][k - 1]
    above, tied = scores > kth, scores == kth
    topk = (truth[above].sum() + (k - above.sum()) * truth[tied].sum() / tied.sum()) / k
    ap, recall_before = 0.0, 0.0
    for threshold in np.unique(scores)[::-1]:
        called = scores >= threshold
        recall = truth[called].sum() / k
        ap += (recall - recall_before) * truth[called].sum() / called.sum()
        recall_before = recall
    return topk, ap


@pytest.mark.parametrize("levels", [None, 5, 50])  # continuous scores, or few distinct ones
def test_metrics_match_the_threshold_by_threshold_definition(levels):
    rng = np.random.default_rng(levels or 0)
    truth = rng.random(3000) < 0.05
    scores = rng.random(3000).astype(np.float32) + truth * 0.3
    if levels:  # many ties, also across the k-th score
        scores = np.round(scores * levels) / levels
    topk, ap = _reference(scores, truth)
    assert topk_accuracy(scores, truth) == pytest.approx(topk)
    assert average_precision(scores, truth) == pytest.approx(ap)
    assert 0 < topk < 1 and 0 < ap < 1
