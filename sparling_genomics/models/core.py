"""The supplied site core: one small local site model per site class, trained first, then frozen.

As in the sparse-adjusted-motif splicing model (its "local splice-site identifiers"): each
site class gets a model whose first layer is one convolution over an *asymmetric* window
around the site (``upstream`` bases before it and ``downstream`` after it, in transcript
orientation), followed by a few 1x1 convolutions, ending in one logit per position: "is this
position a site of my class". The trainer fits the cores on the site labels alone (a
phase before the main training, :meth:`SiteCore.loss`), then freezes them. Inside the Sparling
model their logits enter the sparse layer as channels of their own (each with its own
threshold and density) beside the learned channels, and their log-probabilities are added to
``h``'s class logits as a residual, so the learned channels are free for other signals.

All classes share one set of weights: the first convolution spans the widest window (each
class's taps outside its own window are never read: each class convolves with its own slice
of the kernel, so a genome scan pays for each window's width, not the widest one's) and the
1x1 layers are grouped convolutions (one group per class), run a class at a time.
Convolutions are channels-last 2-D ones, as in ``motif.py``. There is
no normalisation or dropout, so train and eval mode compute the same function.

Class ``i`` of the core stands for label value ``i + 1`` (label 0 is the background class).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


def _group(tensor: torch.Tensor, i: int, groups: int) -> torch.Tensor:
    """Group ``i`` of ``groups`` equal slices of ``tensor``'s first dimension (a grouped
    convolution's weights or bias for one class)."""
    size = tensor.shape[0] // groups
    return tensor[i * size : (i + 1) * size]


class SiteCore(nn.Module):
    """Per-class local site models over asymmetric windows.

    Args:
        classes: the site classes (label values 1..C), for export and messages.
        windows: per class, ``(upstream, downstream)`` bases of context around the site.
        context: the input's total flank (``context // 2`` per side is cropped off the
            output, as ``SpliceAIHead`` crops it).
        hidden: width of each class's network.
        layers: 1x1 convolutions after the window convolution (the last one gives the logit).
    """

    def __init__(
        self,
        classes: list[str],
        windows: list[tuple[int, int]],
        *,
        context: int,
        hidden: int = 32,
        layers: int = 3,
    ) -> None:
        super().__init__()
        if not classes or len(classes) != len(windows):
            raise ValueError("a site core needs one (upstream, downstream) window per class")
        if layers < 1:
            raise ValueError("a site core needs at least one 1x1 layer (its output)")
        self.classes = list(classes)
        self.windows = [(int(u), int(d)) for u, d in windows]
        self.context = int(context)
        n = len(classes)
        self.up = max(u for u, _ in self.windows)
        self.down = max(d for _, d in self.windows)
        width = self.up + self.down + 1
        # Tap j reads base p - up + j; class i reads only its own [p - u, p + d].
        self.first = nn.Conv2d(4, n * hidden, (1, width))
        body: list[nn.Module] = []
        for k in range(layers):
            last = k == layers - 1
            body += [nn.ReLU(inplace=True),
                     nn.Conv2d(n * hidden, n * (1 if last else hidden), 1, groups=n)]  # fmt: skip
        self.body = nn.Sequential(*body)
        # Set by the trainer once the core phase ends (saved with the weights).
        self.register_buffer("trained", torch.tensor(False))

    @property
    def frozen(self) -> bool:
        return bool(self.trained)

    def freeze(self) -> None:
        """Mark the core trained and stop its gradients (the main training leaves it alone)."""
        self.trained.fill_(True)
        for p in self.parameters():
            p.requires_grad_(False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Site logits ``(N, C, L)`` at every input position (positions beyond the input
        read as N, all-zero)."""
        return self._valid(F.pad(x, (self.up, self.down)))

    def site_logits(self, x: torch.Tensor) -> torch.Tensor:
        """:meth:`forward` at the output positions only (what the core phase trains on): the
        context beyond the widest window is not computed (~30% less work at 400 nt)."""
        half = self.context // 2
        lo, hi = half - self.up, x.shape[-1] - half + self.down
        if lo < 0 or hi > x.shape[-1]:
            return self.crop(self.forward(x))
        return self._valid(x[..., lo:hi])

    def _valid(self, x: torch.Tensor) -> torch.Tensor:
        """Logits at the positions whose whole window lies inside ``x``."""
        x = x.unsqueeze(2).contiguous(memory_format=torch.channels_last)
        width = x.shape[-1] - self.up - self.down
        n = len(self.classes)
        out = []
        for i, (u, d) in enumerate(self.windows):
            lo = self.up - u  # the class's first tap
            z = F.conv2d(x[..., lo : lo + width + u + d], _group(self.first.weight, i, n)
                         [..., lo : self.up + d + 1], _group(self.first.bias, i, n))  # fmt: skip
            for layer in self.body:
                z = layer(z) if isinstance(layer, nn.ReLU) else F.conv2d(
                    z, _group(layer.weight, i, n), _group(layer.bias, i, n))  # fmt: skip
            out.append(z)
        return torch.cat(out, dim=1).squeeze(2).contiguous()

    def crop(self, s: torch.Tensor) -> torch.Tensor:
        """``s`` at the output positions (the input minus ``context // 2`` per side)."""
        half = self.context // 2
        return s[..., half:-half] if half else s

    def log_probabilities(self, s: torch.Tensor) -> torch.Tensor:
        """The residual added to ``h``'s logits ``(N, 1 + C, L')``: 0 for the background
        class, ``log sigmoid(s_c)`` for class c, at the output positions."""
        s = self.crop(s)
        return F.pad(F.logsigmoid(s), (0, 0, 1, 0))

    def loss(self, s: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """Binary cross-entropy of each class's logit against "label == class", over the
        labelled positions (``y`` -1: unlabelled) of output-position logits ``s`` (N, C, L)
        (:meth:`site_logits`)."""
        y = y.to(s.device)
        labelled = (y >= 0).unsqueeze(1).expand_as(s)
        codes = torch.arange(1, s.shape[1] + 1, device=s.device).view(1, -1, 1)
        target = (y.unsqueeze(1) == codes).to(s.dtype)
        per = F.binary_cross_entropy_with_logits(s, target, reduction="none")
        return per[labelled].mean() if bool(labelled.any()) else per.sum() * 0.0

    def extra_repr(self) -> str:
        spans = ", ".join(f"{c}: -{u}..+{d}" for c, (u, d) in zip(self.classes, self.windows))
        return f"windows=({spans}), trained={self.frozen}"


class CoreAlone(nn.Module):
    """The core as a site model on its own (its log-probabilities as class logits), so the
    shared evaluation loop can score it (the trainer logs it at the end of the core phase)."""

    def __init__(self, core: SiteCore) -> None:
        super().__init__()
        self.core = core
        self.sparse = None

    def forward(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        return {"logits": self.core.log_probabilities(self.core(x))}
