"""The planted task's ceiling: its own PWMs scanned over a split (a PWM-scan oracle).

A model that learns the motifs from the outputs alone can hardly beat a reader that is given
the planted PWMs, the planting cutoff and the spacing rule. The oracle scans every motif on
both strands, keeps windows at or above ``min_relative_score`` (every planted site is one, and
backgrounds holding one are rejected), resolves overlapping calls by log-odds score (the
likelihood ratio of the site against a uniform background: a longer motif that holds a
shorter one's k-mer wins its own sites), drops calls closer than ``min_gap`` to a stronger
one (planted sites never are), and reads the surviving identities in order. Its exact match is
the figure a benchmark sets beside the model's: where two planted motifs share k-mers (a
random draw with ARF4's ACGACAA inside IDD11's site) it falls well below 100%. It is a
strong reader, not the Bayes-optimal one (greedy, by log-odds against a uniform background),
so a model may edge past it; a floor above it is not one a motif reader can be held to.

Written here rather than with memelite's FIMO: FIMO calls by p-value per motif, not by the
task's relative-score cutoff, and does not resolve calls of different motifs against each
other; the scan is the task's own background-rejection scan (``site_scores``).
"""

from __future__ import annotations

import numpy as np
import torch

from ..genome.site_scan import site_scores
from .planted_motifs import PlantedMotifsTask


def oracle_calls(task: PlantedMotifsTask, x: torch.Tensor) -> list[list[int]]:
    """The oracle's ordered motif identities for one-hot sequences ``x`` ``(N, 4, L)``."""
    k = len(task.motifs)
    codes = x.argmax(1).numpy()
    codes[x.sum(1).numpy() == 0] = 4  # an all-zero column (N) holds no site
    relative = site_scores(codes, task.scan_filters).numpy()  # (N, 2K, L), both strands
    lows = np.array([m.min(0).sum() for m in task.log_odds_matrices])
    spans = np.array([m.max(0).sum() for m in task.log_odds_matrices]) - lows
    widths = np.array([m.width for m in task.motifs])
    calls = []
    for row in relative:
        channel, start = np.nonzero(row >= task.min_relative_score - 1e-5)
        motif = channel % k
        log_odds = row[channel, start] * spans[motif] + lows[motif]
        taken: list[tuple[int, int, int]] = []  # (start, end, motif)
        for i in np.argsort(-log_odds, kind="stable"):
            a, b = int(start[i]), int(start[i] + widths[motif[i]])
            if all(b + task.min_gap <= a2 or a >= b2 + task.min_gap for a2, b2, _ in taken):
                taken.append((a, b, int(motif[i])))
        calls.append([m for _, _, m in sorted(taken)])
    return calls


def oracle_exact_match(
    task: PlantedMotifsTask, split: str = "test", batch_size: int = 500
) -> float:
    """Share of ``split``'s samples whose oracle calls equal the planted identities."""
    right = total = 0
    for batch in task.eval_batches(split, batch_size):
        for called, target in zip(oracle_calls(task, batch.x), batch.targets):
            right += called == list(target)
            total += 1
    return right / total
