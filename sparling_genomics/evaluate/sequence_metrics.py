"""End-to-end metrics on output strings: exact match and normalised edit distance (E2EE).

The Levenshtein distance is a small dynamic programme written here (no extra dependency
for a dozen lines); E2EE divides it by the longer string's length, as the paper does.
"""

from __future__ import annotations

from collections.abc import Sequence


def edit_distance(a: Sequence, b: Sequence) -> int:
    """Levenshtein distance (insertions, deletions, substitutions all cost 1)."""
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]


def normalized_edit_distance(a: Sequence, b: Sequence) -> float:
    """Edit distance divided by ``max(len(a), len(b))``; 0 for two empty strings."""
    longest = max(len(a), len(b))
    return edit_distance(a, b) / longest if longest else 0.0


def exact_match(predicted: Sequence[Sequence], truth: Sequence[Sequence]) -> float:
    """Fraction of outputs equal to their truth."""
    if len(predicted) != len(truth):
        raise ValueError("predicted and truth differ in length")
    if not truth:
        return 0.0
    return sum(list(p) == list(t) for p, t in zip(predicted, truth)) / len(truth)


def edit_error(predicted: Sequence[Sequence], truth: Sequence[Sequence]) -> float:
    """Mean normalised edit distance (the paper's E2EE)."""
    if len(predicted) != len(truth):
        raise ValueError("predicted and truth differ in length")
    if not truth:
        return 0.0
    return sum(normalized_edit_distance(p, t) for p, t in zip(predicted, truth)) / len(truth)
