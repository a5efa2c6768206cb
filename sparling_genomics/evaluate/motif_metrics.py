"""Motif metrics of the Sparling paper: FNE, FPE and CE, from a confusion count matrix.

For each true motif (in order) take the per-channel maximum of the motif map inside its
cell, then zero the cell; the motif is *found* by the argmax channel, or missed when every
channel is zero there. Every active position left afterwards is a false positive of its
channel. From the counts (rows: channels + "none", columns: symbols + "none"):

* FNE = missed motifs / true motifs.
* FPE = false-positive activations / (found motifs + false-positive activations).
* CE  = 1 - matched / found motifs, where "matched" is the best one-to-one channel -> symbol
  assignment (Hungarian, ``scipy.optimize.linear_sum_assignment``) or, many-to-one, each
  channel mapped to the symbol it most often finds.
* Spread = the mean, over found motifs, of the share of the cell's per-channel peaks (their
  sum) outside the winning channel: 0 where one channel alone marks each motif, near
  ``1 - 1/C`` where every channel fires on it alike (a distributed code). Unlike CE it is
  read at any density, so a run's log shows where the code is one-channel and where not.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.optimize import linear_sum_assignment

from ..tasks.base import Cell


class MotifConfusion:
    """Counts of (predicted channel or none) x (true symbol or none)."""

    def __init__(self, channels: int, symbols: int) -> None:
        self.channels = channels
        self.symbols = symbols
        self.counts = np.zeros((channels + 1, symbols + 1), dtype=np.int64)
        self.spread_sum = 0.0  # over found motifs: the cell's peak mass off its winner

    @property
    def none_channel(self) -> int:
        return self.channels

    @property
    def none_symbol(self) -> int:
        return self.symbols

    def add_sample(self, motif_map: np.ndarray, cells: Sequence[Cell]) -> None:
        """Count one sample: ``motif_map`` is ``(C, *spatial)``, cells its true motifs."""
        m = np.array(motif_map, copy=True)
        for slices, symbol in cells:
            region = (slice(None),) + tuple(slices)
            per_channel = m[region].reshape(m.shape[0], -1).max(axis=1, initial=0.0)
            m[region] = 0
            if (per_channel > 0).any():
                self.counts[int(per_channel.argmax()), symbol] += 1
                self.spread_sum += 1.0 - float(per_channel.max() / per_channel.sum())
            else:
                self.counts[self.none_channel, symbol] += 1
        leftover = (m.reshape(m.shape[0], -1) > 0).sum(axis=1)
        self.counts[: self.channels, self.none_symbol] += leftover

    def add_batch(self, motif_maps: np.ndarray, cells: Sequence[Sequence[Cell]]) -> None:
        for motif_map, sample_cells in zip(motif_maps, cells):
            self.add_sample(motif_map, sample_cells)

    # -- the three errors ----------------------------------------------------------------
    def fne(self) -> float:
        true = self.counts[:, : self.symbols]
        total = true.sum()
        return float(true[self.none_channel].sum() / total) if total else 0.0

    def fpe(self) -> float:
        predicted = self.counts[: self.channels]
        total = predicted.sum()
        return float(predicted[:, self.none_symbol].sum() / total) if total else 0.0

    def found(self) -> np.ndarray:
        """Channel x symbol counts of found true motifs."""
        return self.counts[: self.channels, : self.symbols]

    def ce(self) -> float:
        """Confusion error under the best one-to-one channel/symbol matching."""
        found = self.found()
        total = found.sum()
        if not total:
            return 0.0
        rows, cols = linear_sum_assignment(-found)
        return float(1.0 - found[rows, cols].sum() / total)

    def ce_many_to_one(self) -> float:
        """Confusion error when each channel is mapped to its most common symbol."""
        found = self.found()
        total = found.sum()
        return float(1.0 - found.max(axis=1).sum() / total) if total else 0.0

    def channel_to_symbol(self, many_to_one: bool = False) -> dict[int, int]:
        """The matching behind :meth:`ce` (one-to-one) or :meth:`ce_many_to_one` (each
        channel to its most common symbol); channels that found nothing are omitted."""
        found = self.found()
        if many_to_one:
            return {c: int(found[c].argmax()) for c in range(self.channels) if found[c].any()}
        rows, cols = linear_sum_assignment(-found)
        return {int(r): int(c) for r, c in zip(rows, cols) if found[r, c] > 0}

    def symbol_to_channel(self) -> dict[int, int]:
        """Per symbol, the channel that most often finds it (symbols never found omitted)."""
        found = self.found()
        return {s: int(found[:, s].argmax()) for s in range(self.symbols) if found[:, s].any()}

    def symbol_channels(self) -> dict[int, list[int]]:
        """Per symbol, the channels that stand for it: those whose most common found symbol it
        is (the many-to-one matching; symbols no channel stands for are omitted)."""
        groups: dict[int, list[int]] = {}
        for channel, symbol in self.channel_to_symbol(many_to_one=True).items():
            groups.setdefault(symbol, []).append(channel)
        return groups

    def per_symbol(self, names: Sequence[str]) -> dict[str, dict]:
        """Per true symbol (named by ``names``): its sites, how many no channel found, and
        which channels found the rest (nonzero counts only) -- where a run's CE and FNE come
        from, kept in ``metrics.json`` so it can be read after the weights are gone."""
        out = {}
        for s, name in enumerate(names):
            column = self.counts[:, s]
            out[name] = {
                "sites": int(column.sum()),
                "missed": int(column[self.none_channel]),
                "channels": {str(c): int(n) for c, n in enumerate(column[: self.channels]) if n},
            }
        return out

    def false_positives_per_channel(self) -> dict[str, int]:
        """Per channel, its activations that fall on no true motif (nonzero counts only)."""
        fp = self.counts[: self.channels, self.none_symbol]
        return {str(c): int(n) for c, n in enumerate(fp) if n}

    def spread(self) -> float:
        """Mean share of a found motif's cell peaks outside its winning channel."""
        found = int(self.found().sum())
        return self.spread_sum / found if found else 0.0

    def summary(self) -> dict[str, float]:
        return {
            "fne": self.fne(),
            "fpe": self.fpe(),
            "ce": self.ce(),
            "ce_many_to_one": self.ce_many_to_one(),
            "spread": self.spread(),
            "true_motifs": int(self.counts[:, : self.symbols].sum()),
            "false_positive_activations": int(self.counts[: self.channels, self.none_symbol].sum()),
        }
