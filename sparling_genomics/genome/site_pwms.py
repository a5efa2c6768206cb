"""Annotated site PWMs: the base probabilities around every labelled site of one class in a
dataset's training block (e.g. the donor's ``MAG|GTRAGT`` and the acceptor's ``TGCAG|G``).

They are the reference a splicing model's motifs are named and judged against: built from the
run's own dataset (same genome, same transcripts, training block only, so the test block the
motifs come from is never used), in transcript orientation as the windows are stored.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from .dataset import SiteDataset
from .pwm import probability_matrix

#: Bases each side of the labelled base: 31 columns, g's default receptive field.
DEFAULT_FLANK = 15


def annotated_site_pwm(
    dataset: SiteDataset,
    kind: str,
    *,
    split: str = "train",
    upstream: int = DEFAULT_FLANK,
    downstream: int = DEFAULT_FLANK,
    chunk: int = 256,
) -> tuple[np.ndarray, int]:
    """(``(upstream + 1 + downstream, 4)`` probabilities, number of sites) of the windows
    around every site of class ``kind`` in ``split``; column ``upstream`` is the labelled
    base (the donor's last exon base, the acceptor's first exon base)."""
    if kind not in dataset.classes[1:]:
        raise InputError(
            f"{dataset.path}: no site class {kind!r} (classes: {', '.join(dataset.classes[1:])})"
        )
    code = dataset.classes.index(kind)
    half = dataset.context // 2
    width = upstream + 1 + downstream
    counts = np.zeros((4, width))
    n = 0
    index = dataset.indices(split)
    for lo in range(0, len(index), chunk):
        part = index[lo : lo + chunk]
        y = dataset.labels(part)
        rows = np.flatnonzero((y == code).any(axis=1))
        if not len(rows):
            continue
        x, _ = dataset.read(part[rows])
        w_idx, pos = np.nonzero(y[rows] == code)
        # Input column of output position p is half + p; pad so every window fits.
        pad = max(upstream, downstream)
        padded = np.pad(x, ((0, 0), (0, 0), (pad, pad)))
        cols = (half + pos + pad - upstream)[:, None] + np.arange(width)[None, :]
        windows = padded[w_idx[:, None], :, cols].transpose(0, 2, 1)  # (sites, 4, width)
        counts += windows.sum(axis=0)
        n += len(pos)
    if n == 0:
        raise InputError(f"{dataset.path}: no {kind} sites in the {split} block")
    return probability_matrix(counts[None]), n
