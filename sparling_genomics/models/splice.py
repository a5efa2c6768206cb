"""SpliceAI-style dilated residual head ``h``: motif map ``(N, K, L + context)`` -> per-position
class logits ``(N, classes, L)``.

As in SpliceAI (Jaganathan et al. 2019): a 1x1 convolution to ``channels``, residual units
(BN-ReLU-dilated conv, twice, plus the input) in groups, a 1x1 "skip" convolution summed
after each group, and a final 1x1 convolution to the classes; the ``context / 2`` flanking
positions on each side are cropped. SpliceAI-400 is kernel 11 x 8 units, dilations 1 x4 and
4 x4, 32 channels. Convolutions run as channels-last 2-D convolutions (see ``motif.py``).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


def _conv(cin: int, cout: int, kernel: int = 1, dilation: int = 1) -> nn.Conv2d:
    return nn.Conv2d(
        cin, cout, (1, kernel), padding=(0, dilation * (kernel - 1) // 2), dilation=(1, dilation)
    )


class DilatedResidualUnit(nn.Module):
    def __init__(self, channels: int, kernel: int, dilation: int) -> None:
        super().__init__()
        self.body = nn.Sequential(
            nn.BatchNorm2d(channels),
            nn.ReLU(),
            _conv(channels, channels, kernel, dilation),
            nn.BatchNorm2d(channels),
            nn.ReLU(),
            _conv(channels, channels, kernel, dilation),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.body(x)

    def forward_valid(self, x: torch.Tensor) -> torch.Tensor:
        """:meth:`forward` in eval mode at the positions whose receptive field lies inside
        ``x`` (no padding; the output is shorter). The second normalisation is folded into
        the first convolution (an affine map after a linear one) and the ReLUs run in place:
        the same function with fewer passes over the map."""
        norm1, _, conv1, norm2, _, conv2 = self.body
        scale = norm2.weight / torch.sqrt(norm2.running_var + norm2.eps)
        weight = conv1.weight * scale.view(-1, 1, 1, 1)
        bias = (conv1.bias - norm2.running_mean) * scale + norm2.bias
        h = F.conv2d(torch.relu_(norm1(x)), weight, bias, dilation=conv1.dilation)
        h = F.conv2d(torch.relu_(h), conv2.weight, conv2.bias, dilation=conv2.dilation)
        cut = (x.shape[-1] - h.shape[-1]) // 2
        return x[..., cut : x.shape[-1] - cut] + h


SPLICEAI_400 = {"kernel": 11, "dilations": [1, 1, 1, 1, 4, 4, 4, 4], "group": 4}


class SpliceAIHead(nn.Module):
    """Dilated residual network with skip connections; crops ``context // 2`` per side."""

    def __init__(
        self,
        in_channels: int,
        classes: int,
        *,
        context: int,
        channels: int = 32,
        kernel: int = 11,
        dilations: list[int] | None = None,
        group: int = 4,
    ) -> None:
        super().__init__()
        dilations = list(dilations or SPLICEAI_400["dilations"])
        self.context = context
        self.receptive_field = 1 + sum(2 * d * (kernel - 1) for d in dilations)
        self.inp = _conv(in_channels, channels)
        self.skip_in = _conv(channels, channels)
        self.units = nn.ModuleList(DilatedResidualUnit(channels, kernel, d) for d in dilations)
        n_skips = (len(dilations) + group - 1) // group
        self.skips = nn.ModuleList(_conv(channels, channels) for _ in range(n_skips))
        self.group = group
        self.out = _conv(channels, classes)

    def forward(self, m: torch.Tensor) -> torch.Tensor:
        if not self.training and self.receptive_field // 2 <= self.context // 2:
            return self.forward_valid(m)
        return self.forward_padded(m)

    def forward_padded(self, m: torch.Tensor) -> torch.Tensor:
        """Logits over the whole (padded) map, then cropped: what training computes."""
        x = self.inp(m.unsqueeze(2).contiguous(memory_format=torch.channels_last))
        skip = self.skip_in(x)
        for i, unit in enumerate(self.units):
            x = unit(x)
            if (i + 1) % self.group == 0 or i + 1 == len(self.units):
                skip = skip + self.skips[i // self.group](x)
        logits = self.out(skip).squeeze(2)
        half = self.context // 2
        if half:
            logits = logits[..., half:-half]
        return logits.contiguous()

    def forward_valid(self, m: torch.Tensor) -> torch.Tensor:
        """The same logits (in eval mode, where the receptive field fits in the cropped
        context) computed only where the output positions need them: each unit's unpadded
        convolutions shrink the map, so the dilated units run on ~half the positions (a
        variant's +-50 nt window costs ~2x less)."""
        keep = m.shape[-1] - 2 * (self.context // 2) + self.receptive_field - 1
        if keep < m.shape[-1]:  # positions no output sees
            cut = (m.shape[-1] - keep) // 2
            m = m[..., cut : cut + keep]
        x = self.inp(m.unsqueeze(2).contiguous(memory_format=torch.channels_last))
        skip = self.skip_in(x)
        for i, unit in enumerate(self.units):
            x = unit.forward_valid(x)
            if (i + 1) % self.group == 0 or i + 1 == len(self.units):
                cut = (skip.shape[-1] - x.shape[-1]) // 2
                skip = skip[..., cut : skip.shape[-1] - cut] + self.skips[i // self.group](x)
        logits = self.out(skip).squeeze(2)
        cut = (logits.shape[-1] - (keep - self.receptive_field + 1)) // 2
        if cut:
            logits = logits[..., cut : logits.shape[-1] - cut]
        return logits.contiguous()
