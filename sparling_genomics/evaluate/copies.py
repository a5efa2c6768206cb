"""Near-copy channels: motif channels that repeat another channel's motif or its sites.

Two channels are near-copies when their PWMs agree -- the mean Pearson correlation of
aligned columns is at least ``similarity`` (0.9) at some offset and strand, over at least
``min_overlap`` columns and 60% of the narrower motif (a shared 4-nt corner, such as the AG
of ``cAGGTaag`` and ``tttgcAGG``, is not a copy) -- or when their sites coincide: at least
``overlap`` (half) of the sites of either lie within ±``within`` (2) nt of a site of the
other, in the same window. Channels linked by such pairs form groups; ``copies`` counts the
channels beyond the first of each group (what could be dropped without losing a motif), the
figure the splicing benchmark holds to at most 10% of the learned channels.

The column correlation is written here rather than taken from Tomtom (memelite): the criterion
is a similarity threshold on a pair, which Tomtom's p-values (that depend on the target set)
do not give; motif families, which do use Tomtom, are a separate step.
"""

from __future__ import annotations

import math

import numpy as np


def reverse_complement_pwm(probs: np.ndarray) -> np.ndarray:
    """The PWM read on the other strand (columns A, C, G, T: reverse both axes)."""
    return np.asarray(probs)[::-1, ::-1]


def _column_correlation(a: np.ndarray, b: np.ndarray) -> float:
    """Mean Pearson correlation of paired columns (a column without spread counts as 0)."""
    a = a - a.mean(axis=1, keepdims=True)
    b = b - b.mean(axis=1, keepdims=True)
    norm = np.sqrt((a * a).sum(axis=1) * (b * b).sum(axis=1))
    r = np.divide((a * b).sum(axis=1), norm, out=np.zeros(len(a)), where=norm > 1e-12)
    return float(r.mean())


def pwm_similarity(a: np.ndarray, b: np.ndarray, *, min_overlap: int = 4) -> float:
    """Best mean column correlation of PWMs ``a`` and ``b`` (width, 4) over every offset
    with at least ``min_overlap`` shared columns and 60% of the narrower motif (all of it if
    narrower still), on both strands of ``b``."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    narrow = min(len(a), len(b))
    need = max(1, min(max(min_overlap, math.ceil(0.6 * narrow)), narrow))
    best = -1.0
    for other in (b, reverse_complement_pwm(b)):
        for shift in range(-(len(other) - need), len(a) - need + 1):
            lo, hi = max(0, shift), min(len(a), shift + len(other))
            if hi - lo >= need:
                best = max(best, _column_correlation(a[lo:hi], other[lo - shift : hi - shift]))
    return best


def site_overlap(
    window_a: np.ndarray, position_a: np.ndarray, window_b: np.ndarray, position_b: np.ndarray,
    *, within: int = 2,
) -> float:  # fmt: skip
    """Fraction of sites A (window, position) with a site B in the same window within
    ±``within`` positions."""
    if len(position_a) == 0 or len(position_b) == 0:
        return 0.0
    span = int(max(np.max(position_a), np.max(position_b))) + 2 * within + 1
    keys_b = np.sort(np.asarray(window_b, np.int64) * span + np.asarray(position_b, np.int64))
    keys_a = np.asarray(window_a, np.int64) * span + np.asarray(position_a, np.int64)
    lo = np.searchsorted(keys_b, keys_a - within, side="left")
    hi = np.searchsorted(keys_b, keys_a + within, side="right")
    return float((hi > lo).mean())


def near_copies(
    pwms: dict[int, np.ndarray],
    sites: dict[int, tuple[np.ndarray, np.ndarray]] | None = None,
    *,
    similarity: float = 0.9,
    overlap: float = 0.5,
    within: int = 2,
    min_overlap: int = 4,
) -> dict:
    """Near-copy pairs and groups among channels with PWMs ``pwms`` (channel -> (width, 4))
    and, if given, their ``sites`` (channel -> (windows, positions)).

    Returns ``{"channels", "pairs": [{a, b, similarity, overlap}], "groups", "copies",
    "copy_fraction"}``.
    """
    channels = sorted(pwms)
    parent = {c: c for c in channels}

    def root(c: int) -> int:
        while parent[c] != c:
            parent[c] = parent[parent[c]]
            c = parent[c]
        return c

    pairs = []
    for i, a in enumerate(channels):
        for b in channels[i + 1 :]:
            sim = pwm_similarity(pwms[a], pwms[b], min_overlap=min_overlap)
            shared = 0.0
            if sites is not None and a in sites and b in sites:
                shared = max(site_overlap(*sites[a], *sites[b], within=within),
                             site_overlap(*sites[b], *sites[a], within=within))  # fmt: skip
            if sim >= similarity or shared >= overlap:
                pairs.append({"a": a, "b": b, "similarity": round(sim, 4),
                              "overlap": round(shared, 4)})  # fmt: skip
                parent[root(b)] = root(a)
    groups: dict[int, list[int]] = {}
    for c in channels:
        groups.setdefault(root(c), []).append(c)
    linked = [g for g in groups.values() if len(g) > 1]
    copies = sum(len(g) - 1 for g in linked)
    return {
        "channels": len(channels),
        "pairs": pairs,
        "groups": linked,
        "copies": copies,
        "copy_fraction": copies / len(channels) if channels else 0.0,
    }
