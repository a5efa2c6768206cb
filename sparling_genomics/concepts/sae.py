"""TopK sparse autoencoder (the seeds' baseline): a linear encoder, ReLU, keep each row's k
largest codes; a linear decoder with unit-norm atoms. Each concept is one direction."""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from .base import (
    Autoencoder,
    Concepts,
    FitSettings,
    Scaling,
    check_activations,
    data_init,
    to_concepts,
    train_autoencoder,
)


class TopKSAE(Autoencoder):
    """``z = topk(relu(W_e (x - b) + c))``, ``x = W_d z + b``."""

    def __init__(self, features: int, concepts: int, k: int, init: torch.Tensor) -> None:
        super().__init__()
        self.k = k
        self.atoms = nn.Parameter(init.clone())  # (concepts, features)
        self.encoder = nn.Parameter(init.clone())
        self.enc_bias = nn.Parameter(torch.zeros(concepts))
        self.bias = nn.Parameter(torch.zeros(features))

    def codes(self, x: torch.Tensor) -> torch.Tensor:
        pre = torch.relu((x - self.bias) @ self.encoder.T + self.enc_bias)
        top = pre.topk(self.k, dim=1)
        z = torch.zeros_like(pre).scatter(1, top.indices, top.values)
        return z.unsqueeze(2)

    def decode(self, z: torch.Tensor) -> torch.Tensor:
        return z.squeeze(2) @ self.atoms + self.bias

    def dictionary(self) -> torch.Tensor:
        return self.atoms.unsqueeze(1)

    def restart(self, concepts: torch.Tensor, blocks: torch.Tensor) -> None:
        with torch.no_grad():
            self.atoms[concepts] = blocks[:, 0]
            self.encoder[concepts] = blocks[:, 0]
            self.enc_bias[concepts] = 0.0

    def after_step(self, z: torch.Tensor) -> None:
        self.atoms.div_(self.atoms.norm(dim=1, keepdim=True).clamp_min(1e-8))


def fit_topk_sae(
    x: np.ndarray, concepts: int, k: int, settings: FitSettings | None = None,
    *, where: str = "activations",
) -> Concepts:  # fmt: skip
    """A TopK SAE with ``concepts`` atoms, ``k`` active per row, fitted to ``x`` (n, d)."""
    settings = settings or FitSettings()
    check_activations(x, concepts, where, k=k)
    scaling = Scaling.of(np.asarray(x, np.float64))
    scaled = scaling.apply(x)
    generator = torch.Generator().manual_seed(settings.seed)
    torch.manual_seed(settings.seed)
    init = data_init(torch.from_numpy(scaled), concepts, generator)
    model = TopKSAE(scaled.shape[1], concepts, k, init)
    figures = train_autoencoder(model, scaled, settings)
    info = {"concepts": concepts, "k": k, "block": 1, "steps": settings.steps, **figures}
    return to_concepts("sae", model, scaling, info)
