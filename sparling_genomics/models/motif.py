"""Local 1-D motif model ``g``: one-hot DNA ``(N, 4, L)`` -> motif logits ``(N, K, L)``.

A first convolution about as wide as a motif, a few residual units of BN-ReLU-conv (each
widens the receptive field by ``unit_kernel - 1``), then a 1x1 convolution to the K motif
channels. Padding keeps the length, so output position p looks at the ``receptive_field``
bases centred on p. With ``reverse_complement=True`` the model is scanned over both strands
and a channel keeps the stronger strand at each position (max over strands), so one channel
stands for one motif whichever strand it lies on, as a PWM scan does. With motif blocks of
``block_size`` channels (``sparsity/blocks.py``) a block keeps the strand where its l2 norm is
larger, whole, so its channels never mix the two strands.

The convolutions run as 2-D convolutions over ``(N, C, 1, L)`` in channels-last memory
layout: on CPU, oneDNN's channels-last 2-D kernels are about 1.5-2.5x faster than its 1-D
ones for these narrow layers (measured on 2 cores; see ``bench``), and the maths is the same.
"""

from __future__ import annotations

import torch
from torch import nn

from ..genome.sequence import reverse_complement_one_hot
from ..sparsity.blocks import block_norms, check_block_size, spread_blocks


def _conv(cin: int, cout: int, kernel: int) -> nn.Conv2d:
    return nn.Conv2d(cin, cout, (1, kernel), padding=(0, kernel // 2))


class ResidualUnit(nn.Module):
    """x + conv(relu(bn(x))) with a same-length convolution, on ``(N, C, 1, L)``."""

    def __init__(self, channels: int, kernel: int = 3) -> None:
        super().__init__()
        self.norm = nn.BatchNorm2d(channels)
        self.conv = _conv(channels, channels, kernel)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.conv(torch.relu_(self.norm(x)))


class MotifModel1D(nn.Module):
    """Motif model with receptive field ``first_kernel + (unit_kernel - 1) * residual_units``."""

    def __init__(
        self,
        motifs: int,
        *,
        in_channels: int = 4,
        hidden: int = 32,
        first_kernel: int = 15,
        residual_units: int = 2,
        unit_kernel: int = 3,
        reverse_complement: bool = True,
        block_size: int = 1,
    ) -> None:
        super().__init__()
        if first_kernel % 2 == 0 or unit_kernel % 2 == 0:
            raise ValueError("kernel sizes must be odd so positions stay centred")
        self.motifs = motifs  # output channels (motifs x block_size)
        self.block_size = check_block_size(motifs, block_size)
        self.reverse_complement = reverse_complement
        self.receptive_field = first_kernel + (unit_kernel - 1) * residual_units
        self.stem = _conv(in_channels, hidden, first_kernel)
        self.units = nn.Sequential(
            *[ResidualUnit(hidden, unit_kernel) for _ in range(residual_units)]
        )
        self.out_norm = nn.BatchNorm2d(hidden)
        self.out = nn.Conv2d(hidden, motifs, 1)

    def scan(self, x: torch.Tensor) -> torch.Tensor:
        """Motif logits ``(N, K, L)`` of one strand."""
        h = x.unsqueeze(2).contiguous(memory_format=torch.channels_last)
        h = self.units(self.stem(h))
        return self.out(torch.relu_(self.out_norm(h))).squeeze(2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.forward_with_strand(x)[0]

    def forward_with_strand(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        """The motif logits and, per position and motif (channel or block), True where they
        are the reverse strand's (None without reverse complement): for the sparse layer's
        strand rule."""
        if not self.reverse_complement:
            return self.scan(x).contiguous(), None
        both = self.scan(torch.cat([x, reverse_complement_one_hot(x)], dim=0))
        forward, reverse = both.chunk(2, dim=0)
        reverse = torch.flip(reverse, dims=(-1,))
        wins = self._reverse_wins(forward, reverse)
        if self.block_size == 1:
            return torch.maximum(forward, reverse), wins
        return torch.where(spread_blocks(wins, self.block_size), reverse, forward), wins

    def _reverse_wins(self, forward: torch.Tensor, reverse: torch.Tensor) -> torch.Tensor:
        """Per position and motif (a channel, or a block by its norm): the reverse strand is
        stronger."""
        return block_norms(reverse, self.block_size) > block_norms(forward, self.block_size)

    def strand_of_max(self, x: torch.Tensor) -> torch.Tensor:
        """Per position and motif (channel or block), 0 where the forward strand wins, 1 where
        the reverse does."""
        forward = self.scan(x)
        reverse = torch.flip(self.scan(reverse_complement_one_hot(x)), dims=(-1,))
        return self._reverse_wins(forward, reverse).to(torch.int8)


class ResidualUnit2D(nn.Module):
    """x + conv(relu(bn(x))) with a same-size k x k convolution, on ``(N, C, H, W)``."""

    def __init__(self, channels: int, kernel: int = 3) -> None:
        super().__init__()
        self.norm = nn.BatchNorm2d(channels)
        self.conv = nn.Conv2d(channels, channels, kernel, padding=kernel // 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.conv(torch.relu_(self.norm(x)))


class MotifModel2D(nn.Module):
    """Local 2-D motif model for images ``(N, C_in, H, W)`` -> motif logits
    ``(N, K, H / stride, W / stride)``, receptive field
    ``first_kernel + (unit_kernel - 1) * residual_units * stride`` pixels square (the paper's
    DigitCircle ``g``: stride 1, 4 residual units, 17 x 17).

    ``stride`` 2 makes the stem a stride-2 convolution, so the motif map has one position
    per 2 x 2 pixels: the residual units and the sparse layer then cost ~4x less, which is
    what lets a CPU preset train DigitCircle in minutes. A digit still gets one activation;
    the density is per motif-map position.
    """

    def __init__(
        self,
        motifs: int,
        *,
        in_channels: int = 1,
        hidden: int = 32,
        first_kernel: int = 9,
        residual_units: int = 4,
        unit_kernel: int = 3,
        stride: int = 1,
    ) -> None:
        super().__init__()
        if first_kernel % 2 == 0 or unit_kernel % 2 == 0:
            raise ValueError("kernel sizes must be odd so positions stay centred")
        if stride < 1:
            raise ValueError("stride must be at least 1")
        self.motifs = motifs
        self.stride = stride
        self.receptive_field = first_kernel + (unit_kernel - 1) * residual_units * stride
        self.stem = nn.Conv2d(
            in_channels, hidden, first_kernel, stride=stride, padding=first_kernel // 2
        )
        self.units = nn.Sequential(
            *[ResidualUnit2D(hidden, unit_kernel) for _ in range(residual_units)]
        )
        self.out_norm = nn.BatchNorm2d(hidden)
        self.out = nn.Conv2d(hidden, motifs, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.units(self.stem(x.contiguous(memory_format=torch.channels_last)))
        return self.out(torch.relu(self.out_norm(h))).contiguous()
