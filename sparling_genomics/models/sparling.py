"""``SparlingModel``: ``h ∘ sparse ∘ g``, trained end to end on (x, y) only.

With a supplied site core (``models/core.py``): the core's per-class site logits pass through
sparse layers of their own (one per class: its own threshold and a fixed density suited to
the class's site frequency) and join the learned channels as ``h``'s last input channels; the
core's log-probabilities are added to ``h``'s logits. Without one, the model is exactly
``h ∘ sparse ∘ g``.

With motif blocks (``sparsity/blocks.py``) ``h`` reads every channel of the layer, but a motif
is a block: :meth:`SparlingModel.motif_activations` reports one activation per block (its
norm), and :meth:`SparlingModel.motif_groups` names the channels of each motif, for the
checks that drop or move a motif.
"""

from __future__ import annotations

import torch
from torch import nn

from ..errors import ConfigError
from ..sparsity.blocks import block_channels, block_norms
from ..sparsity.layer import SpatialSparsity
from .core import SiteCore


class SparlingModel(nn.Module):
    """Motif model ``g``, spatial sparse layer (or none, for a non-sparse baseline), head ``h``,
    and optionally a frozen site ``core`` with its per-class sparse layers ``core_sparse``."""

    def __init__(
        self,
        g: nn.Module,
        sparse: SpatialSparsity | None,
        h: nn.Module,
        core: SiteCore | None = None,
        core_sparse: list[SpatialSparsity] | None = None,
    ) -> None:
        super().__init__()
        if sparse is not None and getattr(sparse, "strand_window", 0) and not getattr(
            g, "reverse_complement", False
        ):
            raise ConfigError(
                "model.sparse.strand_window: the strand rule needs a motif model that reads "
                "both strands of DNA (model.reverse_complement: true)"
            )
        self.g = g
        self.sparse = sparse
        self.h = h
        if core is not None:
            if not core_sparse or len(core_sparse) != len(core.classes):
                raise ValueError("a site core needs one sparse layer per class")
            self.core = core
            self.core_sparse = nn.ModuleList(core_sparse)
        else:
            self.core = None

    @property
    def density(self) -> float | None:
        """The learned channels' (annealed) density."""
        return None if self.sparse is None else self.sparse.density

    @property
    def block_size(self) -> int:
        """Channels per learned motif (1 unless the sparse layer has motif blocks)."""
        return getattr(self.sparse, "block_size", 1)

    @property
    def learned(self) -> int:
        """Learned motifs (channels, or blocks of channels)."""
        return self.g.motifs // self.block_size

    @property
    def channels(self) -> int:
        """Motifs ``h`` reads: the learned ones, then one per core class."""
        return self.learned + (0 if self.core is None else len(self.core.classes))

    def motif_groups(self) -> list[list[int]]:
        """Per motif (learned, then core), its channels in the layer ``h`` reads."""
        b = self.block_size
        learned = [block_channels(i, b) for i in range(self.learned)]
        classes = 0 if self.core is None else len(self.core.classes)
        core = [[self.g.motifs + i] for i in range(classes)]
        return learned + core

    def motif_activations(self, layer: torch.Tensor) -> torch.Tensor:
        """One activation per motif of the layer ``h`` reads: the channel itself, or a
        block's l2 norm (a core's channels follow the learned ones unchanged)."""
        if self.block_size == 1:
            return layer
        k = self.g.motifs
        learned = block_norms(layer[:, :k], self.block_size)
        return torch.cat([learned, layer[:, k:]], 1) if layer.shape[1] > k else learned

    def set_density(self, density: float) -> None:
        if self.sparse is not None:
            self.sparse.density = density

    def trainable_parameters(self) -> list[nn.Parameter]:
        """Every parameter but the core's (the core is trained in a phase of its own)."""
        core = set() if self.core is None else {id(p) for p in self.core.parameters()}
        return [p for p in self.parameters() if id(p) not in core]

    def _core_motifs(self, s: torch.Tensor) -> torch.Tensor:
        return torch.cat([layer(s[:, i : i + 1]) for i, layer in enumerate(self.core_sparse)], 1)

    def motifs(self, x: torch.Tensor) -> torch.Tensor:
        """One activation per motif: the sparse layer's (or g's raw output without a sparse
        layer; with blocks, block norms), learned motifs first, then the core's."""
        return self.motif_activations(self._layer_and_core(x)[0])

    def _layer_and_core(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        """The whole layer ``h`` reads and the core's site logits (None without a core)."""
        if self.sparse is not None and getattr(self.sparse, "strand_window", 0):
            z, strand = self.g.forward_with_strand(x)  # the strand rule needs g's strands
            m = self.sparse(z, strand)
        else:
            z = self.g(x)
            m = z if self.sparse is None else self.sparse(z)
        if self.core is None:
            return m, None
        s = self.core(x)
        return torch.cat([m, self._core_motifs(s)], 1), s

    def layer_and_residual(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        """The whole layer ``h`` reads (learned channels, then the core's) and what is added
        to ``h``'s logits (the core's log-probabilities; None without a core): with
        :meth:`read`, the forward pass in two halves, for tests that edit the layer."""
        layer, s = self._layer_and_core(x)
        return layer, None if s is None else self.core.log_probabilities(s)

    def read(self, layer: torch.Tensor, residual: torch.Tensor | None = None) -> torch.Tensor:
        """``h``'s logits from a (possibly edited) motif layer and the residual."""
        logits = self.h(layer)
        return logits if residual is None else logits + residual

    def forward(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        layer, residual = self.layer_and_residual(x)
        logits = self.read(layer, residual)
        motifs = self.motif_activations(layer)
        out = {"logits": logits, "layer": layer}
        if self.core is None:
            return {**out, "motifs": motifs}
        # "motifs": the learned motifs (their density is the annealed one).
        k = self.learned
        return {**out, "motifs": motifs[:, :k], "core_motifs": motifs[:, k:]}


def strand_rule_on(sparse) -> bool:
    """Whether ``sparse`` (a sparse layer, a stand-in without the option, or None) applies
    the strand rule at its current density."""
    return bool(getattr(sparse, "strand_window", 0)) and sparse.strand_aware()


def halo_of(model) -> int:
    """Bases each side of a position that its motif-layer activation depends on: half of
    g's receptive field, the sparse layer's peak and competition windows, and a supplied
    core's window with its peak rule (a scan's chunk overlap, a variant's reach)."""
    rf = int(model.g.receptive_field)
    peak = 0
    if (
        model.sparse is not None
        and model.sparse.peak_window
        and (model.sparse.density <= model.sparse.peak_below)
    ):
        peak = int(model.sparse.peak_window)
    if strand_rule_on(model.sparse):
        peak += int(model.sparse.strand_window)  # and on the other strand's within +-strand
    if model.sparse is not None and model.sparse.competing():
        # A site also depends on the other channels' peaks within +-compete_window.
        peak += int(model.sparse.compete_window)
    halo = rf // 2 + peak + 1
    core = getattr(model, "core", None)
    if core is not None:  # a supplied core's channels: its window and their peak rule
        halo = max(halo, max(core.up, core.down) + max(
            (layer.peak_window for layer in model.core_sparse), default=0) + 1)
    return halo
