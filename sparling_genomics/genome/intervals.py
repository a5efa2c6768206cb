"""Labelled intervals on one (sequence, strand): a sparse per-base track, and interval merging.

A dataset's site labels and its exon / intron regions are both kept as a ``LabelTrack`` per
(sequence, strand) and cut into windows with :meth:`LabelTrack.fill`.
"""

from __future__ import annotations

import numpy as np


class LabelTrack:
    """Labelled intervals of one (sequence, strand), kept sparse: memory grows with the
    number of labels, not with the sequence length (a human chromosome is 250 Mb)."""

    def __init__(self, intervals: list[tuple[int, int, int]]) -> None:
        rows = sorted(intervals)
        self.starts = np.array([r[0] for r in rows], dtype=np.int64)
        self.ends = np.array([r[1] for r in rows], dtype=np.int64)
        self.classes = np.array([r[2] for r in rows], dtype=np.int8)
        self.longest = int((self.ends - self.starts).max()) if rows else 0

    def fill(self, y: np.ndarray, start: int, end: int) -> None:
        """Write the labels inside [start, end) into ``y`` (``y[0]`` is ``start``); later
        intervals overwrite earlier ones where they overlap."""
        lo = np.searchsorted(self.starts, start - self.longest, side="left")
        hi = np.searchsorted(self.starts, end, side="left")
        for s, e, c in zip(self.starts[lo:hi], self.ends[lo:hi], self.classes[lo:hi]):
            a, b = max(int(s), start), min(int(e), end)
            if a < b:
                y[a - start : b - start] = c


def merge_intervals(intervals: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted, non-overlapping intervals (touching ones stay apart) covering ``intervals``."""
    out: list[list[int]] = []
    for s, e in sorted(intervals):
        if out and s < out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [(s, e) for s, e in out]
