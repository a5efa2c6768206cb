"""Heads ``h`` that read sparse motif maps.

``CTCSequenceHead1D`` turns a sparse map ``(N, K, L)`` into per-frame class logits
``(N, K + 1, L / pool)`` (class 0 is the CTC blank) for connectionist temporal
classification: the output string is the frame argmaxes with repeats collapsed and blanks
dropped. CTC reads the order and the count of motifs exactly, which a slot decoder learns
only slowly (a slot-decoder probe on the planted task plateaued near 65% exact match;
docs/method.md, "Design choices"), and it is cheap on a CPU.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from .split import RowEdit, norm_edits


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

    def split_edits(self, source: list[int], target: list[int]) -> list[RowEdit]:
        """Channels ``target`` read as copies of ``source``, the two sharing the source's
        input weights (``models/split.py``)."""
        gain = [] if self.gain is None else [RowEdit(self.gain, 0, source, target)]
        return [*gain, RowEdit(self.inp.weight, 1, source, target, share=True)]

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


def _ctc(log_probs: torch.Tensor, targets: list[list[int]], reduction: str) -> torch.Tensor:
    """``F.ctc_loss`` of ``(T, N, classes + 1)`` log-probabilities against class-index
    strings (class c is CTC label c + 1; 0 is the blank)."""
    frames, n, _ = log_probs.shape
    flat = torch.tensor([c + 1 for t in targets for c in t], dtype=torch.long)
    lengths = torch.tensor([len(t) for t in targets], dtype=torch.long)
    frames_t = torch.full((n,), frames, dtype=torch.long)
    return F.ctc_loss(log_probs, flat, frames_t, lengths, blank=0, reduction=reduction,
                      zero_infinity=True)  # fmt: skip


def _log_probs(logits: torch.Tensor) -> torch.Tensor:
    return F.log_softmax(logits.float(), dim=1).permute(2, 0, 1)  # (T, N, C+1)


def ctc_loss(logits: torch.Tensor, targets: list[list[int]]) -> torch.Tensor:
    """Mean CTC loss of frame logits ``(N, classes + 1, T)`` against class-index strings."""
    return _ctc(_log_probs(logits), targets, "mean")


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

    For symbols laid out on a ring (DigitCircle): every pixel between ``r_min`` and ``r_max``
    px from the centre falls in one (radius, angle) bin and the map is *summed* per bin (an
    exact polar re-binning: a one-pixel activation is never missed, and a dense map early in
    annealing is not saturated away as a max would). A convolution over all radius bins and
    3 angle bins, then circular convolutions and a bidirectional GRU read the ring. Far
    leaner than the paper's BiLSTM + transformer (a CPU preset's ``h``); it reads the order
    around the ring, and the task rotates the decoded ring to its start.
    """

    def __init__(
        self,
        motifs: int,
        classes: int,
        *,
        size: int,
        hidden: int = 64,
        angles: int = 96,
        radii: int = 8,
        r_min: float = 10.0,
        r_max: float = 46.0,
        centre: float | None = None,
        layers: int = 2,
        recurrent: bool = True,
    ) -> None:
        super().__init__()
        self.angles, self.radii = angles, radii
        rows, cols = torch.meshgrid(torch.arange(size), torch.arange(size), indexing="ij")
        centre = (size - 1) / 2 if centre is None else centre
        dx, dy = cols - centre, centre - rows  # y up
        radius = torch.sqrt(dx**2 + dy**2)
        theta = torch.atan2(dy, dx) % (2 * torch.pi)
        a_bin = (theta / (2 * torch.pi) * angles).long().clamp(max=angles - 1)
        r_bin = ((radius - r_min) / (r_max - r_min) * radii).floor().long()
        inside = (r_bin >= 0) & (r_bin < radii)
        self.register_buffer("pixels", torch.nonzero(inside.flatten()).squeeze(1), False)
        self.register_buffer("bins", (r_bin * angles + a_bin).flatten()[inside.flatten()], False)
        self.gain = nn.Parameter(torch.full((motifs,), 3.0))
        # Per-channel scale of the ring sums (they grow with the bin's area and the density).
        self.ring_norm = nn.BatchNorm2d(motifs, affine=False)
        self.inp = nn.Conv2d(motifs, hidden, (radii, 3))
        self.layers = nn.ModuleList(
            [nn.Conv1d(hidden, hidden, 3, padding=1, padding_mode="circular")
             for _ in range(layers)]
        )  # fmt: skip
        self.rnn = (
            nn.GRU(hidden, hidden // 2, batch_first=True, bidirectional=True) if recurrent else None
        )
        self.out = nn.Conv1d(hidden, classes + 1, 1)

    def split_edits(self, source: list[int], target: list[int]) -> list[RowEdit]:
        """Channels ``target`` read as copies of ``source`` (gain and ring statistics copied,
        the input weights shared: ``models/split.py``)."""
        return [RowEdit(self.gain, 0, source, target),
                *norm_edits(self.ring_norm, source, target),
                RowEdit(self.inp.weight, 1, source, target, share=True)]  # fmt: skip

    def ring(self, m: torch.Tensor) -> torch.Tensor:
        """The map summed per (radius, angle) bin: ``(N, K, radii, angles)``."""
        n, k = m.shape[:2]
        flat = m.flatten(2)[:, :, self.pixels]
        out = flat.new_zeros(n, k, self.radii * self.angles)
        out.index_add_(2, self.bins, flat)
        return out.view(n, k, self.radii, self.angles)

    def forward(self, m: torch.Tensor) -> torch.Tensor:
        ring = self.ring_norm(self.ring(torch.tanh(m * self.gain.view(1, -1, 1, 1))))
        ring = torch.cat([ring[..., -1:], ring, ring[..., :1]], dim=-1)  # circular in angle
        h = torch.relu(self.inp(ring)).squeeze(2)  # (N, hidden, angles)
        for layer in self.layers:
            h = h + torch.relu(layer(h))
        if self.rnn is not None:
            h = h + self.rnn(h.transpose(1, 2))[0].transpose(1, 2)
        return self.out(h)


def cyclic_ctc_loss(logits: torch.Tensor, targets: list[list[int]]) -> torch.Tensor:
    """CTC loss against the best cyclic rotation of each target string: for a ring read from
    an arbitrary start, every rotation of the output is the same ring."""
    log_probs = _log_probs(logits)
    longest = max((len(t) for t in targets), default=0)
    losses = []
    for shift in range(max(longest, 1)):
        rotated = [t[shift % len(t) :] + t[: shift % len(t)] if t else t for t in targets]
        losses.append(_ctc(log_probs, rotated, "none"))
    per_sample = torch.stack(losses).min(dim=0).values
    lengths = torch.tensor([max(len(t), 1) for t in targets], dtype=per_sample.dtype)
    return (per_sample / lengths.to(per_sample.device)).mean()


class AttentionDecoderHead(nn.Module):
    """Sparse map ``(N, K, *spatial)`` (1-D or 2-D) -> an output string, read by a small
    transformer: the Sparling paper's ``h`` (1x1 conv, max-pool, transformer encoder and
    decoder), lean enough for a CPU preset.

    ``forward(m)`` returns the encoder memory ``(N, P, hidden)`` (P pooled positions, each
    with a learned position embedding per spatial dim); :meth:`teacher_forced_logits` and
    :meth:`greedy_decode` run the decoder on it. Vocabulary index ``v`` is output token
    ``v``; ``vocab`` is the begin/end-of-string token. Used where the output order is not a
    scan order of the input (LaTeX fractions are read numerator first).
    """

    def __init__(
        self,
        motifs: int,
        vocab: int,
        *,
        spatial: tuple[int, ...],
        pool: int = 4,
        hidden: int = 64,
        heads: int = 4,
        encoder_layers: int = 1,
        decoder_layers: int = 2,
        max_length: int = 32,
        norm_first: bool = False,
    ) -> None:
        super().__init__()
        if len(spatial) not in (1, 2):
            raise ValueError("AttentionDecoderHead reads 1-D or 2-D maps")
        self.vocab, self.pool, self.max_length = vocab, pool, max_length
        self.gain = nn.Parameter(torch.full((motifs,), 3.0))
        conv = nn.Conv1d if len(spatial) == 1 else nn.Conv2d
        self.inp = conv(motifs, hidden, 3, padding=1)
        pooled = [-(-s // pool) for s in spatial]
        self.positions = nn.ParameterList(
            [nn.Parameter(torch.randn(p, hidden) * 0.1) for p in pooled]
        )
        self.encoder = nn.TransformerEncoder(
            nn.TransformerEncoderLayer(
                hidden, heads, 2 * hidden, 0.0, batch_first=True, norm_first=norm_first
            ),
            encoder_layers,
            enable_nested_tensor=False,
        )
        self.embed = nn.Embedding(vocab + 1, hidden)
        self.step_positions = nn.Parameter(torch.randn(max_length + 1, hidden) * 0.1)
        self.decoder = nn.TransformerDecoder(
            nn.TransformerDecoderLayer(
                hidden, heads, 2 * hidden, 0.0, batch_first=True, norm_first=norm_first
            ),
            decoder_layers,
        )
        self.out = nn.Linear(hidden, vocab + 1)

    def forward(self, m: torch.Tensor) -> torch.Tensor:
        shape = (1, -1) + (1,) * (m.dim() - 2)
        h = torch.relu(self.inp(torch.tanh(m * self.gain.view(shape))))
        if m.dim() == 3:
            h = F.max_pool1d(h, self.pool, ceil_mode=True) + self.positions[0].T[None]
        else:
            h = F.max_pool2d(h, self.pool, ceil_mode=True)
            h = h + self.positions[0].T[None, :, :, None] + self.positions[1].T[None, :, None, :]
        return self.encoder(h.flatten(2).transpose(1, 2))

    def _decode(self, memory: torch.Tensor, prefix: torch.Tensor) -> torch.Tensor:
        steps = prefix.shape[1]
        x = self.embed(prefix) + self.step_positions[:steps][None]
        mask = torch.triu(torch.full((steps, steps), float("-inf"), device=prefix.device), 1)
        return self.out(self.decoder(x, memory, tgt_mask=mask))

    def _prefix(self, targets: list[list[int]], device) -> tuple[torch.Tensor, torch.Tensor]:
        """Decoder input (start token + target) and wanted output (target + end token)."""
        length = min(self.max_length, max((len(t) for t in targets), default=0)) + 1
        inp = torch.full((len(targets), length), self.vocab, dtype=torch.long)
        want = torch.full((len(targets), length), -100, dtype=torch.long)
        for i, t in enumerate(targets):
            t = list(t)[: self.max_length]
            inp[i, 1 : len(t) + 1] = torch.tensor(t, dtype=torch.long)
            want[i, : len(t)] = torch.tensor(t, dtype=torch.long)
            want[i, len(t)] = self.vocab
        return inp.to(device), want.to(device)

    def loss(self, memory: torch.Tensor, targets: list[list[int]]) -> torch.Tensor:
        """Teacher-forced cross-entropy per output token (end token included)."""
        inp, want = self._prefix(targets, memory.device)
        logits = self._decode(memory, inp)
        return F.cross_entropy(logits.flatten(0, 1).float(), want.flatten(), ignore_index=-100)

    @torch.no_grad()
    def greedy_decode(self, memory: torch.Tensor) -> list[list[int]]:
        """Most likely token at each step until the end token (or ``max_length``)."""
        n = memory.shape[0]
        prefix = torch.full((n, 1), self.vocab, dtype=torch.long, device=memory.device)
        done = torch.zeros(n, dtype=torch.bool, device=memory.device)
        for _ in range(self.max_length + 1):
            step = self._decode(memory, prefix)[:, -1].argmax(-1)
            step = torch.where(done, torch.full_like(step, self.vocab), step)
            prefix = torch.cat([prefix, step[:, None]], dim=1)
            done |= step == self.vocab
            if bool(done.all()):
                break
        out = []
        for row in prefix[:, 1:].tolist():
            out.append(row[: row.index(self.vocab)] if self.vocab in row else row)
        return out
