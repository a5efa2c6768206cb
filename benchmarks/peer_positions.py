"""Our evaluation positions as the peers see them: windows -> genome runs -> peer predictions.

A splicing dataset window is ``window`` labelled positions in transcript orientation: on the
plus strand index ``i`` is genome position ``start + i``; on the minus strand the window is
reverse complemented, so index ``i`` is ``start + window - 1 - i``. A peer (SpliceAI,
OpenSpliceAI) predicts over an oriented sequence with ``flank / 2`` bases of real genome on
each side (N beyond a sequence's ends), in rows of at most :data:`CHUNK` outputs (SpliceAI's
own 5,000 would read 3 input bases per output at 10k context; 25,000 reads 1.4).

Windows of one (sequence, strand) closer than the peer's context are merged into one
:class:`Run`, so a stretch of genes is read with one context rather than one per 1,000-nt
window (at 10k context a lone window would cost 11 input bases per output). Each window then
takes its slice of its run's oriented output: the peer's probabilities at exactly the
positions our ``evaluate`` scores, matched to our classes by name.

That reads the genome around the genes, as our models do (``context="genome"``). SpliceAI and
OpenSpliceAI were trained otherwise: each transcript alone with N beyond its ends ("context
being provided on the RNA and not the DNA", SpliceAI's ``create_datapoints``; OpenSpliceAI's
stage 2 the same), and SpliceAI's variant tool pads the same way. ``context="transcript"``
reads them so: each labelled stretch (a gene, or genes that touch, on one strand: the records
the peers benchmark gives OpenSpliceAI) alone, N beyond its ends, on the same positions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np
import torch

from sparling_genomics.errors import InputError
from sparling_genomics.genome.sequence import N_CODE, one_hot, reverse_complement_codes

from .spliceai_net import PEER_CLASSES

CHUNK = 25_000  # outputs per forward row at most: 1.4x input per output at 10k context


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


def window_runs(seqids: list[str], strands: np.ndarray, starts: np.ndarray, window: int,
                join: int = 0) -> list[Run]:  # fmt: skip
    """Windows (``seqids[i]``, ``strands[i]``, ``starts[i]``) merged into runs: windows of one
    strand that overlap, touch or lie within ``join`` bases of each other."""
    order = sorted(range(len(starts)), key=lambda i: (seqids[i], int(strands[i]), int(starts[i])))
    runs: list[Run] = []
    for i in order:
        seqid, strand, start = seqids[i], int(strands[i]), int(starts[i])
        last = runs[-1] if runs else None
        if last and (last.seqid, last.strand) == (seqid, strand) and start <= last.hi + join:
            last.hi = max(last.hi, start + window)
        else:
            last = Run(seqid, strand, start, start + window)
            runs.append(last)
        last.windows.append((i, start))
    return runs


def true_stretches(mask: np.ndarray) -> list[tuple[int, int]]:
    """[start, end) of each run of True in ``mask``."""
    edges = np.flatnonzero(np.diff(np.concatenate([[0], mask.astype(np.int8), [0]])))
    return list(zip(edges[::2].tolist(), edges[1::2].tolist()))


def labelled_stretches(seqids: list[str], strands: np.ndarray, starts: np.ndarray,
                       labels: np.ndarray) -> list[tuple[Run, np.ndarray]]:  # fmt: skip
    """Each maximal stretch of labelled positions of one strand of one sequence: its genome
    interval (a :class:`Run` without windows) and its labels in transcript orientation."""
    window = labels.shape[1]
    out = []
    for run in window_runs(seqids, strands, starts, window):
        genome_order = np.full(run.hi - run.lo, -1, dtype=np.int16)
        for row, start in run.windows:
            own = labels[row] if run.strand == 1 else labels[row][::-1]
            at = start - run.lo
            keep = own >= 0
            genome_order[at : at + window][keep] = own[keep]
        for s, e in true_stretches(genome_order >= 0):
            piece = genome_order[s:e] if run.strand == 1 else genome_order[s:e][::-1]
            out.append((Run(run.seqid, run.strand, run.lo + s, run.lo + e), piece))
    return out


def run_inputs(fetch: Callable[[str, int, int], np.ndarray], run: Run, context: int,
               chunk: int = CHUNK, transcript: bool = False) -> list[np.ndarray]:  # fmt: skip
    """One-hot rows ``(4, n + context)`` covering a run's oriented output ``chunk`` outputs at
    a time (the last row shorter); ``fetch(seqid, start, end)`` gives genome codes (N beyond
    the sequence's ends); ``transcript``: N beyond the run's own ends instead of genome."""
    half = context // 2
    if transcript:
        pad = np.full(half, N_CODE, dtype=np.uint8)
        codes = np.concatenate([pad, fetch(run.seqid, run.lo, run.hi), pad])
    else:
        codes = fetch(run.seqid, run.lo - half, run.hi + half)
    if run.strand == -1:  # oriented: output j is genome position hi - 1 - j
        codes = reverse_complement_codes(codes)
    length = run.hi - run.lo
    return [one_hot(codes[c : min(c + chunk, length) + context]) for c in range(0, length, chunk)]


@torch.no_grad()
def predict_runs(
    net: torch.nn.Module, fetch, runs: list[Run], *, batch: int = 4, chunk: int = CHUNK,
    device: torch.device | None = None, transcript: bool = False,
) -> Iterator[tuple[Run, np.ndarray]]:
    """Each run with the peer's oriented probabilities ``(hi - lo, 3)`` (:data:`PEER_CLASSES`).
    Rows of one length share a forward pass, ``batch`` at a time."""
    device = device or torch.device("cpu")
    for run in runs:
        rows = run_inputs(fetch, run, int(net.context), chunk, transcript)
        outs = []
        lo = 0
        while lo < len(rows):
            hi = lo + 1
            while hi < len(rows) and hi - lo < batch and rows[hi].shape == rows[lo].shape:
                hi += 1
            x = torch.from_numpy(np.stack(rows[lo:hi])).to(device)
            outs += list(net(x).float().cpu().numpy())  # each (3, outputs)
            lo = hi
        yield run, np.concatenate(outs, axis=1).T


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
                     batch: int = 4, chunk: int = CHUNK, join: int | None = None,
                     device: torch.device | None = None,
                     progress: Callable[[int, int], None] | None = None,
                     context: str = "genome") -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """The peer's probabilities at the labelled positions of the windows, in our class order,
    and their labels: ``(P, C)`` and ``(P,)``, the arrays ``site_metrics`` takes.

    ``labels``: ``(n, window)`` labels of the windows (-1 not labelled), transcript
    orientation, as the dataset holds them; ``join``: windows this close share a run (default
    the peer's context); ``context``: ``genome`` (the genome around the genes) or
    ``transcript`` (each labelled stretch alone, N beyond it: how the peers were trained)."""
    window = labels.shape[1]
    columns = class_columns(classes)
    if context == "transcript":
        stretches = labelled_stretches(seqids, strands, starts, labels)
        predicted = predict_runs(net, fetch, [run for run, _ in stretches], batch=batch,
                                 chunk=chunk, device=device, transcript=True)  # fmt: skip
        parts = []
        for done, (_, probs) in enumerate(predicted, 1):
            parts.append(probs[:, columns])
            if progress:
                progress(done, len(stretches))
        kept = np.concatenate([own for _, own in stretches])
        return np.concatenate(parts).astype(np.float32), kept.astype(np.int16)
    if context != "genome":
        raise ValueError(f"context is genome or transcript, not {context!r}")
    # Windows closer than the peer's context share a run: scoring the gap costs less than a
    # second context.
    runs = window_runs(seqids, strands, starts, window,
                       join=int(net.context) if join is None else join)  # fmt: skip
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
