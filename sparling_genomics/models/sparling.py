"""``SparlingModel``: ``h ∘ sparse ∘ g``, trained end to end on (x, y) only."""

from __future__ import annotations

import torch
from torch import nn

from ..sparsity.layer import SpatialSparsity


class SparlingModel(nn.Module):
    """Motif model ``g``, spatial sparse layer (or none, for a non-sparse baseline), head ``h``."""

    def __init__(self, g: nn.Module, sparse: SpatialSparsity | None, h: nn.Module) -> None:
        super().__init__()
        self.g = g
        self.sparse = sparse
        self.h = h

    @property
    def density(self) -> float | None:
        return None if self.sparse is None else self.sparse.density

    def set_density(self, density: float) -> None:
        if self.sparse is not None:
            self.sparse.density = density

    def motifs(self, x: torch.Tensor) -> torch.Tensor:
        """The motif layer: sparse activations (or g's raw output without a sparse layer)."""
        z = self.g(x)
        return z if self.sparse is None else self.sparse(z)

    def forward(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        m = self.motifs(x)
        return {"logits": self.h(m), "motifs": m}
