"""The spatial sparse layer: BatchNorm, then ``relu(z - t_c)`` with quantile thresholds.

Follows the Sparling paper's ``SparseLayerWithBatchNorm`` (Gupta et al., the authors'
``sparling`` package) and differs where the reference is slow or unsound at tiny densities:

* One module for 1-D ``(N, C, L)`` and 2-D ``(N, C, H, W)`` input: the threshold broadcasts
  over every dimension but the channel one, so nothing is permuted back and forth.
* The ``(1 - density)`` quantile is taken with ``topk`` when the number of hits is small (it
  only has to find the few largest values) and with ``kthvalue`` otherwise.
* When a batch holds fewer than ``min_hits`` expected hits per channel, batches are
  accumulated before the quantile is taken. Only each batch's largest values are kept, which
  is all the quantile of the union can need, so accumulation costs little memory.
* Thresholds are *warm-started*: the first estimate after construction or after a density
  change replaces the thresholds outright; later estimates enter an EMA (old weight
  ``1 - momentum``). The reference starts at 0 and needs dozens of batches to get near the
  target at densities of 1e-3 and below.

Option ``peak_window=r`` (off by default, so the layer is the paper's): only positions that
are the maximum of their channel within ``±r`` (per spatial dim) can be active; the others are
set to ``-inf`` before the quantile and the ReLU. The density is then exactly the fraction of
active peaks, and a motif occurrence spends one activation, not two or three neighbouring
ones, which matters at densities equal to the true motif density. ``peak_below`` turns it on
only once annealing has brought the density that low: from the start it starves the early,
dense phase of gradient (a run stuck at the all-blank output for 100k+ samples).

Option ``compete_window=r`` (off by default; splicing turns it on): channels compete for
positions, so two channels never fire within r of each other: the anti-copy rule
(``sparsity/rules.py`` says how and why); it starts with the peak rule.

Option ``share_range=[low, high]`` (off by default): the channels share one firing budget,
each channel's density anywhere in ``[low, high]`` x the target (``sparsity/budget.py``),
another anti-copy rule: a frequent signal can be one channel, not several copies.

Option ``block_size=b`` (off by default): a motif is a block of b channels kept or dropped
together by its l2 norm, every rule above applied to the block norms (``sparsity/blocks.py``).

Option ``strand_window=r`` (off by default; needs g's strand of each position, which a
reverse-complement ``MotifModel1D`` supplies): a peak is dropped when the other strand has a
larger value of the same channel within ±r (ties go to the forward strand): a palindromic
site, read on both strands with g's two detections mirrored about its centre beyond the peak
window, spends one activation, not two. It starts with the peak rule.

The thresholds get no gradient. In eval mode they are frozen and BatchNorm uses its running
statistics, so the density measured on fresh data matches the target.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from ..errors import ConfigError
from ..models.split import RowEdit
from .blocks import block_channels, block_norms, check_block_size, spread_blocks
from .budget import budget_thresholds, check_share_range, share_hits
from .quantile import check_density, upper_quantile
from .rules import competition_winners, contest, local_max, strand_rule
from .settings import SparseSettings


class SpatialSparsity(nn.Module):
    """BatchNorm followed by per-channel thresholds set to the ``(1 - density)`` quantile.

    Args:
        channels: number of channels C (dimension 1 of the input).
        density: target fraction of non-zero outputs per channel, in (0, 1).
        affine: learn BatchNorm's scale and shift (the paper uses it for DigitCircle only).
        momentum: EMA weight of a new threshold estimate (the paper's 0.1).
        min_hits: accumulate batches until each quantile rests on at least this many
            expected hits per channel.
        per_channel: one threshold per channel (Sparling); ``False`` is the single global
            threshold ablation.
        block_size: channels per motif block (``sparsity/blocks.py``); with b > 1 the
            thresholds, peaks and competition are per block, on block norms.
    """

    def __init__(
        self,
        channels: int,
        density: float = 0.5,
        *,
        affine: bool = False,
        momentum: float = 0.1,
        min_hits: float = 20.0,
        per_channel: bool = True,
        peak_window: int = 0,
        peak_below: float = 1.0,
        compete_window: int = 0,
        share_range: tuple[float, float] | None = None,
        block_size: int = 1,
        strand_window: int = 0,
        bn_momentum: float = 0.1,
        eps: float = 1e-5,
    ) -> None:
        super().__init__()
        if channels < 1:
            raise ConfigError(f"the sparse layer needs at least one channel, got {channels}")
        if not 0.0 < momentum <= 1.0:
            raise ConfigError(f"threshold momentum must lie in (0, 1], got {momentum}")
        self.channels = channels
        self.block_size = check_block_size(channels, block_size)
        self.blocks = channels // self.block_size  # rows of the thresholds: one per motif
        self.affine = affine
        self.momentum = momentum
        self.min_hits = float(min_hits)
        self.per_channel = per_channel
        if peak_window < 0:
            raise ConfigError(f"peak_window must be >= 0, got {peak_window}")
        self.peak_window = int(peak_window)
        self.peak_below = float(peak_below)
        if compete_window < 0:
            raise ConfigError(f"compete_window must be >= 0, got {compete_window}")
        self.compete_window = int(compete_window)
        if strand_window < 0:
            raise ConfigError(f"strand_window must be >= 0, got {strand_window}")
        self.strand_window = int(strand_window)
        shares = None if share_range is None else check_share_range(share_range)
        self.share_range = None if shares in (None, (1.0, 1.0)) or not per_channel else shares
        self.bn_momentum = bn_momentum
        self.eps = eps
        if affine:
            self.weight = nn.Parameter(torch.ones(channels))
            self.bias = nn.Parameter(torch.zeros(channels))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.register_buffer("running_mean", torch.zeros(channels))
        self.register_buffer("running_var", torch.ones(channels))
        self.register_buffer("thresholds", torch.zeros(self.blocks if per_channel else 1))
        self.register_buffer("_density", torch.tensor(check_density(density), dtype=torch.float64))
        self.register_buffer("_warm", torch.tensor(False))
        self._pending: list[torch.Tensor] = []
        self._pending_elements = 0

    @classmethod
    def from_config(
        cls, channels: int, density: float, options: SparseSettings, *, blocks: bool = False
    ) -> SpatialSparsity:
        """The layer described by a task config's ``model.sparse`` settings; ``blocks``: the
        caller built g and h for motif blocks (``channels`` = motifs x block size), else a
        block size is refused."""
        if (options.block_size or 1) > 1 and not blocks:
            raise ConfigError(
                "model.sparse.block_size: motif blocks are built for the planted and splicing "
                "tasks only"
            )
        return cls(
            channels,
            float(density),
            affine=options.affine,
            momentum=options.momentum,
            min_hits=options.min_hits,
            per_channel=options.per_channel,
            peak_window=options.peak_window,
            peak_below=options.peak_below,
            compete_window=options.compete_window or 0,
            share_range=options.share_range,
            block_size=(options.block_size or 1) if blocks else 1,
            strand_window=options.strand_window or 0,
        )

    # -- density -------------------------------------------------------------------------
    @property
    def density(self) -> float:
        return float(self._density)

    @density.setter
    def density(self, value: float) -> None:
        value = check_density(value)
        if value != self.density:
            self._density.fill_(value)
            self.restart_thresholds()

    def restart_thresholds(self) -> None:
        """Let the next estimate replace the thresholds outright (batches pending for it are
        dropped): after a density change, or a channel re-initialised (``models/reinit.py``)."""
        self._warm.fill_(False)
        self._pending = []
        self._pending_elements = 0

    # -- forward -------------------------------------------------------------------------
    def normalize(self, x: torch.Tensor) -> torch.Tensor:
        """BatchNorm over every dimension but the channel one (works for 1-D and 2-D)."""
        return F.batch_norm(
            x,
            self.running_mean,
            self.running_var,
            self.weight,
            self.bias,
            training=self.training,
            momentum=self.bn_momentum,
            eps=self.eps,
        )

    def forward(self, x: torch.Tensor, strand: torch.Tensor | None = None) -> torch.Tensor:
        """``strand``: (N, motifs, L) bool, True where g read the reverse strand (used by the
        strand rule only)."""
        if x.dim() < 3 or x.shape[1] != self.channels:
            raise ValueError(
                f"SpatialSparsity expects (N, {self.channels}, ...) input, got {tuple(x.shape)}"
            )
        z = self.normalize(x)
        peaks = self.keep_peaks(block_norms(z, self.block_size), strand)
        s = self.compete(peaks)
        if self.training:
            with torch.no_grad():
                self._observe(s.detach())
        shape = (1, -1) + (1,) * (s.dim() - 2)
        kept = F.relu(s - self.thresholds.view(shape).to(s.dtype))
        if self.block_size == 1:
            return kept
        # Group soft-thresholding: the block's vector, its norm shrunk from n to relu(n - t).
        return z * spread_blocks(kept / s.clamp_min(1e-6), self.block_size)

    def keep_peaks(self, z: torch.Tensor, strand: torch.Tensor | None = None) -> torch.Tensor:
        """With ``peak_window`` r > 0 (and density at most ``peak_below``): ``z`` where it is
        its channel's max within ±r, else -inf; then, given the strands and with
        ``strand_window``, the peaks that lose to the other strand's set to -inf too."""
        r = self.peak_window
        if r and self.density <= self.peak_below:
            local = local_max(z, r, "peak_window")
            z = torch.where(z >= local, z, torch.full_like(z, float("-inf")))
        if strand is not None and self.strand_aware():
            with torch.no_grad():
                keep = strand_rule(z.detach(), strand, self.strand_window)
            z = torch.where(keep, z, torch.full_like(z, float("-inf")))
        return z

    def strand_aware(self) -> bool:
        """Whether the strand rule applies at the current density (to input whose strands
        g named)."""
        return bool(self.strand_window) and self.density <= self.peak_below

    def competing(self) -> bool:
        """Whether the channel competition applies at the current density."""
        return self.compete_window > 0 and self.blocks > 1 and self.density <= self.peak_below

    def compete(self, z: torch.Tensor) -> torch.Tensor:
        """With ``compete_window`` r > 0 (and density at most ``peak_below``): ``z`` with the
        candidates (``z > t``) that lose the competition within ±r set to -inf
        (:func:`rules.contest`); positions below threshold keep their values, so the threshold
        estimate still sees them."""
        if not self.competing():
            return z
        shape = (1, -1) + (1,) * (z.dim() - 2)
        t = self.thresholds.view(shape).to(z.dtype)
        return contest(z, t, self.compete_window)

    @torch.no_grad()
    def active_sites(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """The non-zero outputs of :meth:`forward` for one 1-D input ``(1, C, L)`` in eval
        mode, as ``(channel, position, value)``, without building the dense output (with
        blocks: ``(block, position, norm of the block's output)``). One strand's input: the
        strand rule is the caller's (``export/scan.py`` applies it to both strands' sites).

        Same values as ``forward`` (the same normalisation, the same ``z - t``), but the peak
        test and the subtraction run only where ``z > t``: a genome scan spends most of its
        sparse-layer time on positions that are far below the threshold.
        """
        if self.training or x.dim() != 3 or x.shape[0] != 1:
            raise ValueError("active_sites needs eval mode and one (1, C, L) input")
        z = block_norms(self.normalize(x), self.block_size)[0]
        t = self.thresholds.to(z.dtype)
        channel, position = torch.nonzero(z > t[:, None], as_tuple=True)
        value = z[channel, position]
        r = self.peak_window
        if r and self.density <= self.peak_below and len(position):
            # z >= max of its channel within +-r (beyond the ends: -inf, as max_pool pads).
            padded = F.pad(z, (r, r), value=float("-inf"))
            offsets = torch.arange(2 * r + 1, device=z.device)
            local = padded[channel[:, None], position[:, None] + offsets].amax(dim=1)
            keep = value >= local
            channel, position, value = channel[keep], position[keep], value[keep]
        if self.competing() and len(position):
            # The contest is among the candidates (above threshold, peaks), as in forward.
            values = torch.full_like(z, float("-inf"))
            values[channel, position] = value
            keep = competition_winners(values[None], self.compete_window)[0][channel, position]
            channel, position, value = channel[keep], position[keep], value[keep]
        return channel, position, value - t[channel]

    def pre_threshold(self, x: torch.Tensor, strand: torch.Tensor | None = None) -> torch.Tensor:
        """The normalised values ``z - t`` before the ReLU (for analysis and export; with
        blocks, block norms less the thresholds)."""
        shape = (1, -1) + (1,) * (x.dim() - 2)
        z = block_norms(self.normalize(x), self.block_size)
        z = self.compete(self.keep_peaks(z, strand))
        return z - self.thresholds.view(shape).to(x.dtype)

    @torch.no_grad()
    def calibrate(self, x: torch.Tensor) -> None:
        """Set BatchNorm's running statistics to those of ``x`` and the thresholds to its
        quantile at the current density, replacing both running averages: for input that no
        longer changes (a frozen site core), where one pass gives what the averages reach
        only after hundreds of steps (0.9^24 of the initial variance is still left after 24)."""
        dims = [0, *range(2, x.dim())]
        self.running_mean.copy_(x.mean(dim=dims).to(self.running_mean.dtype))
        self.running_var.copy_(x.var(dim=dims).to(self.running_var.dtype))
        z = F.batch_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                         training=False, eps=self.eps)  # fmt: skip
        peaks = self.keep_peaks(block_norms(z, self.block_size))
        rows = self._rows(self.compete(peaks))
        self._warm.fill_(False)
        self._pending, self._pending_elements = [], 0
        self._update(self._estimate(rows, rows.shape[1]), rows)

    # -- threshold estimation ------------------------------------------------------------
    def _rows(self, z: torch.Tensor) -> torch.Tensor:
        if self.per_channel:
            return z.transpose(0, 1).reshape(self.blocks, -1).float()
        return z.reshape(1, -1).float()

    def _observe(self, z: torch.Tensor) -> None:
        rows = self._rows(z)
        n = rows.shape[1]
        density = self.density
        if not self._pending and density * n >= self.min_hits:
            self._update(self._estimate(rows, n), rows)
            return
        # Too few expected hits in one batch: keep only what the union's quantile can need
        # (under a shared budget, up to the most a channel may fire).
        high = 1.0 if self.share_range is None else self.share_range[1]
        keep = min(n, math.ceil(high * (self.min_hits + density * n)) + 2)
        self._pending.append(torch.topk(rows, keep, dim=1).values)
        self._pending_elements += n
        if density * self._pending_elements >= self.min_hits:
            values = torch.cat(self._pending, dim=1)
            elements = self._pending_elements
            self._pending = []
            self._pending_elements = 0
            self._update(self._estimate(values, elements), values)

    def _estimate(self, values: torch.Tensor, elements: int) -> torch.Tensor:
        """Thresholds from ``values`` (rows: the observed values, or each row's largest of
        ``elements``): the ``(1 - density)`` quantile per row, or the shared budget's."""
        density = self.density
        if self.share_range is None:  # the (hits + 1)-th largest of each row, kept or not
            return upper_quantile(values, round(density * elements))
        most = min(share_hits(density, elements, self.share_range)[1] + 1, values.shape[1])
        top = torch.topk(values, most, dim=1).values
        return budget_thresholds(top, elements, density, self.share_range)

    def _update(self, estimate: torch.Tensor, values: torch.Tensor) -> None:
        if not bool(torch.isfinite(estimate).all()):
            # Fewer candidate positions (peaks) than the density asks for: every peak is
            # active, with the threshold just below the lowest peak of the row.
            finite = torch.where(
                torch.isfinite(values), values, torch.full_like(values, float("inf"))
            )
            floor = finite.min(dim=1).values - 1e-3
            floor = torch.where(torch.isfinite(floor), floor, torch.zeros_like(floor))
            estimate = torch.where(torch.isfinite(estimate), estimate, floor)
        estimate = estimate.to(self.thresholds.dtype)
        if bool(self._warm):
            self.thresholds.mul_(1.0 - self.momentum).add_(self.momentum * estimate)
        else:
            self.thresholds.copy_(estimate)
            self._warm.fill_(True)

    def split_edits(self, source: int, target: int) -> list:
        """The rows that make motif (channel or block) ``target`` a copy of ``source``:
        normalisation statistics (and affine weights) per channel; the threshold and pending
        quantile values per motif, when thresholds are per motif (``models/split.py``)."""
        s, t = block_channels(source, self.block_size), block_channels(target, self.block_size)
        names = ("running_mean", "running_var", "weight", "bias")
        edits = [RowEdit(x, 0, s, t) for n in names if (x := getattr(self, n, None)) is not None]
        if self.per_channel:
            rows = [self.thresholds, *self._pending]
            edits += [RowEdit(x, 0, [source], [target]) for x in rows]
        return edits

    # -- checkpointing of the accumulation buffer -----------------------------------------
    def get_extra_state(self) -> dict:
        return {
            "pending": [t.detach().cpu().clone() for t in self._pending],
            "pending_elements": int(self._pending_elements),
        }

    def set_extra_state(self, state: dict) -> None:
        device = self.thresholds.device
        self._pending = [t.to(device) for t in state.get("pending", [])]
        self._pending_elements = int(state.get("pending_elements", 0))

    def extra_repr(self) -> str:
        return (
            f"channels={self.channels}, density={self.density:.3g}, affine={self.affine}, "
            f"per_channel={self.per_channel}, min_hits={self.min_hits:g}, "
            f"peak_window={self.peak_window}, compete_window={self.compete_window}"
            + ("" if self.share_range is None else f", share_range={list(self.share_range)}")
            + ("" if self.block_size == 1 else f", block_size={self.block_size}")
            + (f", strand_window={self.strand_window}" if self.strand_window else "")
        )
