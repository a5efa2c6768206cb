"""Motif channels -> their sites -> position probability matrices (PWMs).

A channel's *sites* are the positions where its sparse activation is non-zero (with the
peak-only layer each is a local maximum). The PWM of a channel counts the bases in the
``width`` (default: g's receptive field) window centred on each site, in the orientation the
model saw (transcript orientation for splicing windows), plus a pseudocount. Information is in
bits against a uniform background, as sequence logos show it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from ..genome.sequence import ALPHABET


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


def probability_matrix(windows: np.ndarray, pseudocount: float = 0.1) -> np.ndarray:
    """(width, 4) base probabilities of one-hot site windows ``(n, 4, width)``."""
    counts = windows.sum(axis=0).T.astype(np.float64) + pseudocount
    return counts / counts.sum(axis=1, keepdims=True)


def information_content(probs: np.ndarray) -> np.ndarray:
    """Bits per position against a uniform background: 2 + sum p log2 p."""
    p = np.clip(probs, 1e-12, 1.0)
    return 2.0 + (p * np.log2(p)).sum(axis=1)


def consensus(probs: np.ndarray, *, strong: float = 1.0, weak: float = 0.5) -> str:
    """Most likely base per position: upper case at >= ``strong`` bits, lower case at >=
    ``weak`` bits, ``n`` below."""
    ic = information_content(probs)
    out = []
    for row, bits in zip(probs, ic):
        base = ALPHABET[int(np.argmax(row))]
        out.append(base if bits >= strong else base.lower() if bits >= weak else "n")
    return "".join(out)


def trim(probs: np.ndarray, min_bits: float = 0.25) -> tuple[int, int]:
    """[start, end) of ``probs`` without low-information flanks (whole matrix if none pass)."""
    keep = np.flatnonzero(information_content(probs) >= min_bits)
    if len(keep) == 0:
        return 0, len(probs)
    return int(keep[0]), int(keep[-1]) + 1


def has_dinucleotide(probs: np.ndarray, pair: str, min_bits: float = 1.5) -> bool:
    """Whether two adjacent positions are ``pair`` (argmax bases) with >= ``min_bits`` each."""
    ic = information_content(probs)
    best = [ALPHABET[int(i)] for i in probs.argmax(axis=1)]
    return any(
        best[i] == pair[0]
        and best[i + 1] == pair[1]
        and ic[i] >= min_bits
        and ic[i + 1] >= min_bits
        for i in range(len(best) - 1)
    )
