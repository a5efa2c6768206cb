"""Perturbation consistency: 1 for an ``h`` that reads symbols from channels, 0 for one
that reads them from something a swap does not move; with a symbol on two channels, moving
both (the score of record) is consistent where moving only the cell's winner is not."""

import numpy as np
import torch
from torch import nn

from sparling_genomics.evaluate.perturbation import perturbation_consistency
from sparling_genomics.models.heads import ctc_greedy_decode
from sparling_genomics.models.sparling import SparlingModel
from sparling_genomics.tasks.base import Batch, Task

K, L = 4, 40


class ChannelHead(nn.Module):
    """CTC frames: symbol c where channel c is active, blank elsewhere."""

    def forward(self, m):
        blank = torch.full_like(m[:, :1], 0.5)
        return torch.cat([blank, m], dim=1)


class MagnitudeHead(nn.Module):
    """Reads symbol c from the activation's height (c + 1), whatever its channel."""

    def forward(self, m):
        height = m.sum(dim=1)
        frames = [torch.full_like(height, 0.5)]
        frames += [(height.round() == c + 1).float() for c in range(K)]
        return torch.stack(frames, dim=1)


class DuplicateHead(nn.Module):
    """Channel K (a spare) is a second channel for symbol 0, and the one ``h`` trusts most:
    symbol 0 where either is on."""

    def forward(self, m):
        blank = torch.full_like(m[:, :1], 0.5)
        zero = torch.maximum(m[:, :1], 3 * m[:, K:])
        return torch.cat([blank, zero, m[:, 1:K]], dim=1)


class ToyTask(Task):
    name = "toy"
    symbols = ["a", "b", "c", "d"]

    def __init__(self, spare: bool = False):
        """Three symbols per sample; with ``spare``, symbol 0 also lights channel K, weaker."""
        super().__init__({}, 0)
        rng = np.random.default_rng(0)
        x = torch.zeros(20, K + spare, L)
        targets, cells = [], []
        for i in range(20):
            symbols = [int(s) for s in rng.integers(0, K, size=3)]
            sample_cells = []
            for j, s in enumerate(symbols):
                position = 5 + 12 * j
                x[i, s, position] = s + 1.0
                if spare and s == 0:
                    x[i, K, position] = 0.5
                sample_cells.append(((slice(position - 2, position + 3),), s))
            targets.append(symbols)
            cells.append(sample_cells)
        self.batch = Batch(x, targets, cells)

    def build_model(self, *, sparse=True):
        raise NotImplementedError

    def train_batch(self, index, batch_size):
        raise NotImplementedError

    def eval_batches(self, split, batch_size):
        yield self.batch

    def loss(self, outputs, batch):
        raise NotImplementedError

    def decode(self, outputs):
        return ctc_greedy_decode(outputs["logits"])

    def swappable_symbols(self):
        return list(range(K))

    def swap_output(self, target, cells, index, symbol):
        out = list(target)
        out[index] = symbol
        return out


def _score(head, task=None, symbol_channels=None):
    model = SparlingModel(nn.Identity(), None, head)
    identity = {s: s for s in range(K)}
    return perturbation_consistency(
        model, task or ToyTask(), "test", identity,
        symbol_channels or {s: [s] for s in range(K)},
        batch_size=20, device=torch.device("cpu"),
    )  # fmt: skip


def test_a_head_that_reads_channels_is_fully_consistent():
    result = _score(ChannelHead())
    assert result["perturbations"] == 20 and result["consistency"] == 1.0
    assert result["consistency_single_channel"] == 1.0


def test_a_head_that_ignores_channels_is_never_consistent():
    result = _score(MagnitudeHead())
    assert result["perturbations"] == 20 and result["consistency"] == 0.0
    assert result["consistency_single_channel"] == 0.0


def test_a_symbol_on_two_channels_moves_both():
    task = ToyTask(spare=True)
    zeros = sum(s == 0 for target in task.batch.targets for s in target)
    assert zeros > 0
    both = _score(DuplicateHead(), task, {0: [0, K], 1: [1], 2: [2], 3: [3]})
    assert both["perturbations"] == 20 and both["consistency"] == 1.0
    # Moving only channel 0 leaves the spare's 0 in place: every swap of a 0 fails.
    single = both["consistency_single_channel"]
    assert 0.0 < single < 1.0
    # A symbol no channel stands for falls back to the cell's winning channel.
    alone = _score(DuplicateHead(), task, {1: [1], 2: [2], 3: [3]})
    assert alone["consistency"] == single
