"""Motif channels -> their sites -> the windows a PWM is counted from.

A channel's *sites* are the positions where its sparse activation is non-zero (with the
peak-only layer each is a local maximum). The PWM of a channel counts the bases in the
``width`` (default: g's receptive field) window centred on each site, in the orientation the
model saw (transcript orientation for splicing windows); see ``genome/pwm.py``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch


@dataclass
class ChannelSites:
    """Sites of one channel: window index, position in the window's input, activation."""

    channel: int
    window: list[int] = field(default_factory=list)
    position: list[int] = field(default_factory=list)
    score: list[float] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.score)


@torch.no_grad()
def collect_sites(
    model,
    x: torch.Tensor,
    *,
    offset: int = 0,
    valid: np.ndarray | None = None,
    first_window: int = 0,
) -> list[ChannelSites]:
    """Active positions of every motif channel of ``model`` on one-hot windows ``x``.

    ``valid`` (N, L') masks the positions that count (input position = ``offset`` + index),
    e.g. the labelled output positions of splicing windows, so context is not counted twice.
    """
    was_training = model.training
    model.eval()
    try:
        m = model.motifs(x).float().cpu().numpy()
    finally:
        model.train(was_training)
    n, k, length = m.shape
    if valid is None:
        valid = np.ones((n, length - offset), dtype=bool)
    span = valid.shape[1]
    out = [ChannelSites(c) for c in range(k)]
    region = m[:, :, offset : offset + span] * valid[:, None, :]
    for w, c, p in zip(*np.nonzero(region > 0)):
        s = out[int(c)]
        s.window.append(first_window + int(w))
        s.position.append(offset + int(p))
        s.score.append(float(region[w, c, p]))
    return out


def merge_sites(parts: list[list[ChannelSites]]) -> list[ChannelSites]:
    """Concatenate per-batch site lists channel by channel."""
    merged = [ChannelSites(s.channel) for s in parts[0]]
    for part in parts:
        for into, s in zip(merged, part):
            into.window += s.window
            into.position += s.position
            into.score += s.score
    return merged


def site_windows(x: np.ndarray, positions: np.ndarray, width: int) -> np.ndarray:
    """One-hot windows ``(n, 4, width)`` centred on ``positions`` of ``x`` (n, 4, L); bases
    beyond the input are all-zero."""
    half = width // 2
    padded = np.pad(x, ((0, 0), (0, 0), (half, half)))
    idx = positions[:, None] + np.arange(width)[None, :]
    return np.take_along_axis(padded, idx[:, None, :].repeat(4, axis=1), axis=2)
