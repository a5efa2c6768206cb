"""Our evaluation positions as the peers see them: windows -> genome runs -> peer predictions.

A splicing dataset window is ``window`` labelled positions in transcript orientation: on the
plus strand index ``i`` is genome position ``start + i``; on the minus strand the window is
reverse complemented, so index ``i`` is ``start + window - 1 - i``. A peer (SpliceAI,
OpenSpliceAI) predicts over an oriented sequence with ``flank / 2`` bases of real genome on
each side (N beyond a sequence's ends), in chunks of :data:`CHUNK` outputs as SpliceAI does.

Windows of one (sequence, strand) that touch or overlap are merged into one :class:`Run`, so
a gene cluster's context is read once rather than once per 1,000-nt window (at 10k context a
lone window would cost 11 positions of input per output, a run about 3). Each window then
takes its slice of its run's oriented output: the peer's probabilities at exactly the
positions our ``evaluate`` scores, matched to our classes by name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np
import torch

from sparling_genomics.errors import InputError
from sparling_genomics.genome.sequence import one_hot, reverse_complement_codes

from .spliceai_net import PEER_CLASSES

CHUNK = 5000  # outputs per forward row (SpliceAI's SL)


@dataclass
class Run:
    """Merged windows of one strand of one sequence: genome interval ``[lo, hi)``."""

    seqid: str
    strand: int
    lo: int
    hi: int
    #: (row in the caller's window list, window start)
    windows: list[tuple[int, int]] = field(default_factory=list)

    def offset(self, start: int, window: int) -> int:
        """Index of a window's first output in the run's oriented output."""
        return start - self.lo if self.strand == 1 else self.hi - start - window


def window_runs(seqids: list[str], strands: np.ndarray, starts: np.ndarray,
                window: int) -> list[Run]:  # fmt: skip
    """Windows (``seqids[i]``, ``strands[i]``, ``starts[i]``) merged into runs."""
    order = sorted(range(len(starts)), key=lambda i: (seqids[i], int(strands[i]), int(starts[i])))
    runs: list[Run] = []
    for i in order:
        seqid, strand, start = seqids[i], int(strands[i]), int(starts[i])
        last = runs[-1] if runs else None
        if last and (last.seqid, last.strand) == (seqid, strand) and start <= last.hi:
            last.hi = max(last.hi, start + window)
        else:
            last = Run(seqid, strand, start, start + window)
            runs.append(last)
        last.windows.append((i, start))
    return runs


def run_inputs(fetch: Callable[[str, int, int], np.ndarray], run: Run, context: int,
               chunk: int = CHUNK) -> np.ndarray:  # fmt: skip
    """One-hot rows ``(n, 4, chunk + context)`` covering a run's oriented output in chunks;
    ``fetch(seqid, start, end)`` gives genome codes (N beyond the sequence's ends)."""
    half = context // 2
    length = run.hi - run.lo
    n = -(-length // chunk)
    if run.strand == 1:
        codes = fetch(run.seqid, run.lo - half, run.lo + n * chunk + half)
    else:
        # Oriented: output j is genome hi - 1 - j, so the reverse complement of the bases up
        # to hi + half (the padding past the run's start, N or genome, comes last).
        codes = reverse_complement_codes(fetch(run.seqid, run.hi - n * chunk - half,
                                               run.hi + half))  # fmt: skip
    rows = np.stack([codes[c * chunk : c * chunk + chunk + context] for c in range(n)])
    return one_hot(rows)


@torch.no_grad()
def predict_runs(
    net: torch.nn.Module, fetch, runs: list[Run], *, batch: int = 4, chunk: int = CHUNK,
    device: torch.device | None = None,
) -> Iterator[tuple[Run, np.ndarray]]:
    """Each run with the peer's oriented probabilities ``(hi - lo, 3)`` (:data:`PEER_CLASSES`)."""
    device = device or torch.device("cpu")
    for run in runs:
        rows = run_inputs(fetch, run, int(net.context), chunk)
        outs = []
        for lo in range(0, len(rows), batch):
            x = torch.from_numpy(rows[lo : lo + batch]).to(device)
            outs.append(net(x).float().cpu().numpy())  # (b, 3, chunk)
        probs = np.concatenate(outs).transpose(0, 2, 1).reshape(-1, 3)
        yield run, probs[: run.hi - run.lo]


def class_columns(classes: list[str]) -> list[int]:
    """Columns of the peers' outputs in the order of our ``classes`` (matched by name)."""
    missing = [c for c in classes if c not in PEER_CLASSES]
    if missing:
        raise InputError(
            f"the peers predict {', '.join(PEER_CLASSES[1:])} only; the dataset also has "
            f"{', '.join(missing)}"
        )
    return [PEER_CLASSES.index(c) for c in classes]


def peer_site_scores(net: torch.nn.Module, fetch, seqids: list[str], strands: np.ndarray,
                     starts: np.ndarray, labels: np.ndarray, classes: list[str], *,
                     batch: int = 4, chunk: int = CHUNK, device: torch.device | None = None,
                     progress: Callable[[int, int], None] | None = None,
                     ) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """The peer's probabilities at the labelled positions of the windows, in our class order,
    and their labels: ``(P, C)`` and ``(P,)``, the arrays ``site_metrics`` takes.

    ``labels``: ``(n, window)`` labels of the windows (-1 not labelled), transcript
    orientation, as the dataset holds them."""
    window = labels.shape[1]
    columns = class_columns(classes)
    runs = window_runs(seqids, strands, starts, window)
    per_window: list[np.ndarray | None] = [None] * len(starts)
    for done, (run, probs) in enumerate(
        predict_runs(net, fetch, runs, batch=batch, chunk=chunk, device=device), 1
    ):
        for row, start in run.windows:
            at = run.offset(start, window)
            keep = labels[row] >= 0
            per_window[row] = probs[at : at + window][keep][:, columns]
        if progress:
            progress(done, len(runs))
    scores = np.concatenate([p for p in per_window if p is not None]).astype(np.float32)
    kept = np.concatenate([labels[i][labels[i] >= 0] for i in range(len(starts))])
    return scores, kept.astype(np.int16)
