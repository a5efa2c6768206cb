"""Motif channels -> their sites -> the windows a PWM is counted from.

A channel's *sites* are the positions where its sparse activation is non-zero (with the
peak-only layer each is a local maximum). The PWM of a channel counts the bases in the
``width`` (default: g's receptive field) window centred on each site, in the orientation the
model saw (transcript orientation for splicing windows); see ``genome/pwm.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch

from ..genome.pwm import probability_matrix, trim
from ..genome.sequence import reverse_complement_one_hot
from ..models.modes import eval_mode
from .formats import ExportedMotif


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
    with eval_mode(model):
        m = model.motifs(x).float().cpu().numpy()
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


def context_offset(task) -> int:
    """Bases of input context before a window's first output position (site tasks' datasets
    carry ``context`` bases of flank in all; 0 elsewhere)."""
    return getattr(getattr(task, "data", None), "context", 0) // 2


def output_positions(rows: np.ndarray, offset: int) -> np.ndarray:
    """Site rows (window, input position, strand) as (window, output position) pairs."""
    rows = np.asarray(rows, np.int64).reshape(-1, 3)
    return np.stack([rows[:, 0], rows[:, 1] - offset], axis=1)


@torch.no_grad()
def channel_site_windows(
    model, task, split: str = "test", *, batch_size: int = 64, device=None,
    progress: Callable[[int], None] | None = None,
) -> tuple[list[np.ndarray], list[np.ndarray], np.ndarray, list[np.ndarray]]:
    """Per channel: one-hot site windows ``(n, 4, rf)`` and activations; base background;
    per channel the sites as ``(n, 3)`` rows (window index in the split's evaluation order,
    activation position in the window's input, strand read: +1 / -1), in the windows' order
    (motif families link channels that fire at the same places); ``progress(windows)`` after
    each batch."""
    device = device or next(model.parameters()).device
    width = model.g.receptive_field
    offset = context_offset(task)
    k = getattr(model, "channels", model.g.motifs)  # learned channels, then a core's
    windows: list[list[np.ndarray]] = [[] for _ in range(k)]
    scores: list[list[float]] = [[] for _ in range(k)]
    where: list[list[np.ndarray]] = [[] for _ in range(k)]
    counts = np.zeros(4)
    first = 0
    for batch in task.eval_batches(split, batch_size):
        x = batch.x.to(device)
        length = x.shape[-1] - 2 * offset
        valid = (batch.y >= 0).numpy() if batch.y is not None else np.ones((len(x), length), bool)
        sites = merge_sites([collect_sites(model, x, offset=offset, valid=valid,
                                           first_window=first)])  # fmt: skip
        x_np = x.cpu().numpy()
        counts += (x_np[:, :, offset : offset + length] * valid[:, None, :]).sum(axis=(0, 2))
        both = bool(getattr(model.g, "reverse_complement", False))
        if both:
            reverse = model.g.strand_of_max(x).cpu().numpy().astype(bool)
            x_rc = reverse_complement_one_hot(x).cpu().numpy()
        for s in sites:
            for w in np.unique(s.window):
                pick = np.array(s.window) == w
                pos = np.array(s.position)[pick]
                got = site_windows(x_np[w - first][None], pos, width)
                strand = np.ones(len(pos), np.int64)
                if both:
                    rev = reverse[w - first, s.channel, pos]
                    strand[rev] = -1
                    if rev.any():
                        # The reverse strand's window, read 5'->3' on that strand.
                        mirrored = x_np.shape[-1] - 1 - pos[rev]
                        got[rev] = site_windows(x_rc[w - first][None], mirrored, width)
                windows[s.channel].append(got)
                scores[s.channel].extend(np.array(s.score)[pick].tolist())
                where[s.channel].append(np.stack([np.full(len(pos), w), pos, strand], axis=1))
        first += len(x)
        if progress is not None:
            progress(len(x))
    stacked = [np.concatenate(w) if w else np.zeros((0, 4, width)) for w in windows]
    background = counts / counts.sum() if counts.sum() else np.full(4, 0.25)
    located = [np.concatenate(w).astype(np.int64) if w else np.zeros((0, 3), np.int64)
               for w in where]  # fmt: skip
    return stacked, [np.array(s) for s in scores], background, located


def motifs_from_windows(
    windows: list[np.ndarray],
    *,
    min_sites: int = 10,
    trim_bits: float = 0.25,
    prefix: str = "sparling",
    background: np.ndarray | None = None,
) -> tuple[list[ExportedMotif], list[int]]:
    """Exported motifs (PWMs trimmed against ``background``, the sequences' base
    composition) and the channels that are silent (< min_sites)."""
    motifs, silent = [], []
    for channel, w in enumerate(windows):
        if len(w) < min_sites:
            silent.append(channel)
            continue
        probs = probability_matrix(w)
        lo, hi = trim(probs, trim_bits, background)
        motifs.append(ExportedMotif(f"{prefix}_c{channel:02d}", probs[lo:hi], len(w),
                                    channel=channel, offset=lo))  # fmt: skip
    return motifs, silent


def core_classes(model) -> dict[int, str]:
    """Channel -> site class of a model's supplied core channels (after the learned ones)."""
    core = getattr(model, "core", None)
    if core is None:
        return {}
    return {model.learned + i: name for i, name in enumerate(core.classes)}
