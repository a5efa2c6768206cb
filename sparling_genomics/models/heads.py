"""Heads ``h`` that read sparse motif maps.

``CTCSequenceHead1D`` turns a sparse map ``(N, K, L)`` into per-frame class logits
``(N, K + 1, L / pool)`` (class 0 is the CTC blank) for connectionist temporal
classification: the output string is the frame argmaxes with repeats collapsed and blanks
dropped. CTC reads the order and the count of motifs exactly, which a slot decoder learns
only slowly (the probe in ``shared/notes/sparling-facts.md`` plateaued near 65%), and it is
cheap on a CPU.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class CTCSequenceHead1D(nn.Module):
    """Conv stack over the sparse map, max-pooled to frames, then per-frame logits."""

    def __init__(
        self,
        motifs: int,
        classes: int,
        *,
        hidden: int = 64,
        kernel: int = 5,
        pool: int = 4,
        layers: int = 2,
        recurrent: bool = False,
        saturate: bool = True,
    ) -> None:
        super().__init__()
        self.pool = pool
        # tanh(gain * m): a motif's presence, not its height above the threshold, is what
        # the output depends on; without it a site just above threshold is nearly invisible
        # to h, and h must relearn its scale each time annealing raises the thresholds.
        self.gain = nn.Parameter(torch.full((motifs,), 3.0)) if saturate else None
        self.rnn = (
            nn.GRU(hidden, hidden // 2, batch_first=True, bidirectional=True) if recurrent else None
        )
        self.inp = nn.Conv1d(motifs, hidden, kernel, padding=kernel // 2)
        self.layers = nn.ModuleList(
            [nn.Conv1d(hidden, hidden, 3, padding=1) for _ in range(layers)]
        )
        self.out = nn.Conv1d(hidden, classes + 1, 1)

    def forward(self, m: torch.Tensor) -> torch.Tensor:
        if self.gain is not None:
            m = torch.tanh(m * self.gain.view(1, -1, 1))
        h = torch.relu(self.inp(m))
        if self.pool > 1:
            h = F.max_pool1d(h, self.pool, ceil_mode=True)
        for layer in self.layers:
            h = h + torch.relu(layer(h))
        if self.rnn is not None:
            h = h + self.rnn(h.transpose(1, 2))[0].transpose(1, 2)
        return self.out(h)


def ctc_loss(logits: torch.Tensor, targets: list[list[int]]) -> torch.Tensor:
    """Mean CTC loss of frame logits ``(N, classes + 1, T)`` against class-index strings."""
    n, _, frames = logits.shape
    log_probs = F.log_softmax(logits.float(), dim=1).permute(2, 0, 1)  # (T, N, C+1)
    flat = torch.tensor([c + 1 for t in targets for c in t], dtype=torch.long)
    lengths = torch.tensor([len(t) for t in targets], dtype=torch.long)
    frames_t = torch.full((n,), frames, dtype=torch.long)
    return F.ctc_loss(log_probs, flat, frames_t, lengths, blank=0, zero_infinity=True)


def ctc_greedy_decode(logits: torch.Tensor) -> list[list[int]]:
    """Best-path decoding: frame argmax, collapse repeats, drop blanks, shift to 0-based."""
    best = logits.argmax(dim=1).cpu().numpy()
    decoded = []
    for row in best:
        out, previous = [], 0
        for c in row:
            if c != previous and c != 0:
                out.append(int(c) - 1)
            previous = c
        decoded.append(out)
    return decoded


class PolarCTCHead(nn.Module):
    """Sparse image map ``(N, K, H, W)`` -> CTC frame logits over the angle around the image
    centre ``(N, classes + 1, angles)``, frame 0 at angle 0 (pointing right), increasing
    counter-clockwise as seen.

    For symbols laid out on a ring (DigitCircle): each site is spread by a ``spread`` x
    ``spread`` max-pool so the polar grid (``angles`` x ``radii`` bilinear samples between
    ``r_min`` and ``r_max`` px) cannot miss a one-pixel activation, the map is maxed over the
    radius, and circular convolutions (and optionally a bidirectional GRU) read the ring.
    Far leaner than the paper's BiLSTM + transformer (a CPU preset's ``h``); it reads the
    order around the ring exactly, and the task rotates the decoded ring to its start.
    """

    def __init__(
        self,
        motifs: int,
        classes: int,
        *,
        size: int,
        hidden: int = 64,
        angles: int = 96,
        radii: int = 16,
        r_min: float = 10.0,
        r_max: float = 46.0,
        spread: int = 5,
        layers: int = 2,
        recurrent: bool = True,
    ) -> None:
        super().__init__()
        self.spread = spread
        self.gain = nn.Parameter(torch.full((motifs,), 3.0))
        theta = torch.arange(angles, dtype=torch.float32) * (2 * torch.pi / angles)
        radius = torch.linspace(r_min, r_max, radii)
        centre = (size - 1) / 2
        x = centre + radius[:, None] * torch.cos(theta)[None, :]
        y = centre - radius[:, None] * torch.sin(theta)[None, :]  # rows grow downwards
        grid = torch.stack([x, y], dim=-1) / (size - 1) * 2 - 1  # (radii, angles, 2) in [-1, 1]
        self.register_buffer("grid", grid[None], persistent=False)
        self.inp = nn.Conv1d(motifs, hidden, 3, padding=1, padding_mode="circular")
        self.layers = nn.ModuleList(
            [nn.Conv1d(hidden, hidden, 3, padding=1, padding_mode="circular")
             for _ in range(layers)]
        )  # fmt: skip
        self.rnn = (
            nn.GRU(hidden, hidden // 2, batch_first=True, bidirectional=True) if recurrent else None
        )
        self.out = nn.Conv1d(hidden, classes + 1, 1)

    def forward(self, m: torch.Tensor) -> torch.Tensor:
        m = torch.tanh(m * self.gain.view(1, -1, 1, 1))
        if self.spread > 1:
            m = F.max_pool2d(m, self.spread, stride=1, padding=self.spread // 2)
        grid = self.grid.expand(m.shape[0], -1, -1, -1).to(m.dtype)
        ring = F.grid_sample(m, grid, align_corners=True).amax(dim=2)  # (N, K, angles)
        h = torch.relu(self.inp(ring))
        for layer in self.layers:
            h = h + torch.relu(layer(h))
        if self.rnn is not None:
            h = h + self.rnn(h.transpose(1, 2))[0].transpose(1, 2)
        return self.out(h)


def cyclic_ctc_loss(logits: torch.Tensor, targets: list[list[int]]) -> torch.Tensor:
    """CTC loss against the best cyclic rotation of each target string: for a ring read from
    an arbitrary start, every rotation of the output is the same ring."""
    n, _, frames = logits.shape
    log_probs = F.log_softmax(logits.float(), dim=1).permute(2, 0, 1)
    longest = max((len(t) for t in targets), default=0)
    losses = []
    for shift in range(max(longest, 1)):
        rotated = [t[shift % len(t) :] + t[: shift % len(t)] if t else t for t in targets]
        flat = torch.tensor([c + 1 for t in rotated for c in t], dtype=torch.long)
        lengths = torch.tensor([len(t) for t in rotated], dtype=torch.long)
        frames_t = torch.full((n,), frames, dtype=torch.long)
        losses.append(F.ctc_loss(log_probs, flat, frames_t, lengths, blank=0,
                                 reduction="none", zero_infinity=True))  # fmt: skip
    per_sample = torch.stack(losses).min(dim=0).values
    lengths = torch.tensor([max(len(t), 1) for t in targets], dtype=per_sample.dtype)
    return (per_sample / lengths.to(per_sample.device)).mean()
