import pytest
from hypothesis import given
from hypothesis import strategies as st

from sparling_genomics.evaluate.sequence_metrics import (
    edit_distance,
    edit_error,
    exact_match,
    normalized_edit_distance,
)


@pytest.mark.parametrize(
    "a,b,d",
    [("", "", 0), ("abc", "", 3), ("kitten", "sitting", 3), ([1, 2, 3], [1, 3], 1), ([0], [1], 1)],
)
def test_edit_distance_worked_examples(a, b, d):
    assert edit_distance(a, b) == d
    assert edit_distance(b, a) == d


def test_normalised_and_means():
    assert normalized_edit_distance("kitten", "sitting") == pytest.approx(3 / 7)
    assert normalized_edit_distance([], []) == 0.0
    pred = [[1, 2], [3], []]
    truth = [[1, 2], [4], [5, 6]]
    assert exact_match(pred, truth) == pytest.approx(1 / 3)
    assert edit_error(pred, truth) == pytest.approx((0 + 1 + 1) / 3)


@given(st.lists(st.integers(0, 3), max_size=8), st.lists(st.integers(0, 3), max_size=8))
def test_edit_distance_bounds(a, b):
    d = edit_distance(a, b)
    assert abs(len(a) - len(b)) <= d <= max(len(a), len(b))
    assert (d == 0) == (a == b)
