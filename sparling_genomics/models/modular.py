"""Networks of the modular-addition task (seed 004's grokking set-up): ``g`` reads the token
pair ``[a, b]`` and gives the representation ``h`` reads; ``h`` maps it to the ``p`` classes.

Both ``g`` keep the token embedding as ``embed`` (a ``p x d`` matrix): it is the point cloud
the grokking diagnostics read (``evaluate/topology.py``).
"""

from __future__ import annotations

import torch
from torch import nn


class ModularTransformer(nn.Module):
    """A pre-LN transformer encoder over ``[a, b]`` (token embedding + learned position
    embedding, no dropout); its output is the second token's hidden state."""

    def __init__(self, p: int, *, d_model: int = 128, heads: int = 4, ffn: int = 256,
                 layers: int = 2) -> None:  # fmt: skip
        super().__init__()
        self.embed = nn.Embedding(p, d_model)
        self.position = nn.Parameter(torch.randn(2, d_model) * 0.02)
        self.blocks = nn.ModuleList(
            nn.TransformerEncoderLayer(
                d_model, heads, dim_feedforward=ffn, dropout=0.0, batch_first=True,
                norm_first=True,
            )  # fmt: skip
            for _ in range(layers)
        )
        self.motifs = d_model  # the width h reads

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        z = self.embed(x) + self.position
        for block in self.blocks:
            z = block(z)
        return z[:, 1]


class ModularMLP(nn.Module):
    """The MLP variant: the two tokens' shared embeddings concatenated, then GELU layers."""

    def __init__(self, p: int, *, d_embed: int = 128, width: int = 512, layers: int = 3) -> None:
        super().__init__()
        self.embed = nn.Embedding(p, d_embed)
        dims = [2 * d_embed] + [width] * layers
        self.hidden = nn.Sequential(
            *(m for a, b in zip(dims, dims[1:]) for m in (nn.Linear(a, b), nn.GELU()))
        )
        self.motifs = width

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.hidden(self.embed(x).flatten(1))


class ModularHead(nn.Module):
    """``h``: (a final LayerNorm for the transformer, then) a linear map to the classes."""

    def __init__(self, width: int, p: int, *, norm: bool) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(width) if norm else nn.Identity()
        self.out = nn.Linear(width, p)

    def forward(self, m: torch.Tensor) -> torch.Tensor:
        return self.out(self.norm(m))
