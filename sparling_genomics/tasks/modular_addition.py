"""Modular addition (``--task modular_addition``): the token pair ``[a, b]`` -> ``(a + b) mod
p``, trained on a fraction ``train_fraction`` of the ``p * p`` pairs: the task on which a
network *groks* (fits its training pairs early, generalises to the others much later), with
the settings of seed 004 (Tang et al.): a 2-layer pre-LN transformer (d_model 128, 4 heads,
FFN 256) or the 3-layer MLP variant, AdamW (lr 3e-3, beta2 0.98, weight decay 0.1), batch
512, a 10-step warm-up, a checkpoint every 500 steps.

There is nothing to anneal: the model has no sparse layer, ``h`` reads ``g``'s
representation. The task is here for the training diagnostics (``diagnose``): its token
embeddings are the point cloud whose first persistent homology changes when it groks.

Splits: ``train`` (the training pairs, with a ``label_permutation`` fraction of their labels
shuffled among themselves: the seed's ablation), ``val`` and ``test`` (the two halves of the
held-out pairs, true labels). The split is drawn with ``data.split_seed``, not the run's seed,
so runs of several seeds see the same pairs.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

import numpy as np
import torch
import torch.nn.functional as F

from ..config import RunConfig, bounded
from ..errors import ConfigError
from ..models.modular import ModularHead, ModularMLP, ModularTransformer
from ..models.sparling import SparlingModel
from .base import Batch, Task


@dataclass
class ModularData:
    """``data``: the modulus, the training fraction, the label-permutation ablation."""

    p: int = bounded(113, min=3)
    train_fraction: float = bounded(0.3, above=0, max=0.9)
    # The fraction of training labels shuffled among themselves (seed 004's ablation: it
    # groks up to 10%, not at 20%).
    label_permutation: float = bounded(0.0, min=0, max=1)
    split_seed: int = 0


@dataclass
class ModularModel:
    """``model``: the transformer (the seed's main model) or the MLP variant."""

    architecture: Literal["transformer", "mlp"] = "transformer"
    d_model: int = bounded(128, min=1)
    heads: int = bounded(4, min=1)
    ffn: int = bounded(256, min=1)
    layers: int = bounded(2, min=1)
    mlp_width: int = bounded(512, min=1)
    mlp_layers: int = bounded(3, min=1)


STEP = 512  # the seed's batch: the budgets below are counted in its steps

DEFAULTS = {
    "train": {
        "batch_size": STEP,
        "lr": 3e-3,
        "optimizer": "adamw",
        "weight_decay": 0.1,
        "adam_beta2": 0.98,
        "adam_eps": 1e-6,
        "warmup_samples": 10 * STEP,  # the seed's 10-step linear warm-up
        "max_samples": 60_000 * STEP,  # the seed's 60,000 steps
        "max_seconds": 1800.0,
        "eval_every": 100 * STEP,
        "eval_batch_size": 4096,
        "keep_checkpoints_every": 500 * STEP,  # the seed's checkpoint every 500 steps
        "final_samples": 0,
        "log_motif_metrics": False,
    },
    # No sparse layer: nothing to anneal (the annealer holds a density nothing reads).
    "annealing": {"enabled": False, "stop_density": 0.5},
}

PRESETS: dict[str, dict] = {
    "cpu": {},  # p = 113, alpha = 0.3 on 2 cores (BENCHMARKS.md: grokking)
    "paper": {"data": {"p": 197}, "train": {"max_seconds": 36_000.0}},  # the seed's main p
    "tiny": {
        "data": {"p": 13, "train_fraction": 0.5},
        "model": {"d_model": 16, "heads": 2, "ffn": 32, "layers": 1, "mlp_width": 32},
        "train": {
            "batch_size": 32,
            "max_samples": 640,
            "warmup_samples": 0,
            "eval_every": 128,
            "eval_batch_size": 64,
            "keep_checkpoints_every": 256,
            "checkpoint_every_seconds": 0.0,
        },
    },
}


def split_pairs(p: int, train_fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices ``a * p + b`` of the training pairs and of the held-out pairs (shuffled)."""
    order = np.random.default_rng(seed).permutation(p * p)
    n_train = int(round(train_fraction * p * p))
    if n_train < 1 or n_train >= p * p:
        raise ConfigError(
            f"data.train_fraction {train_fraction} leaves no training or no held-out pairs "
            f"of the {p * p} (p = {p})"
        )
    return order[:n_train], order[n_train:]


def permuted_labels(labels: np.ndarray, fraction: float, seed: int) -> np.ndarray:
    """``labels`` with a ``fraction`` of them (chosen at random) shuffled among themselves."""
    labels = labels.copy()
    if fraction <= 0:
        return labels
    rng = np.random.default_rng([seed, 1])
    chosen = rng.choice(len(labels), int(round(fraction * len(labels))), replace=False)
    labels[chosen] = labels[rng.permutation(chosen)]
    return labels


class ModularAdditionTask(Task):
    """``[a, b]`` -> ``(a + b) mod p``; accuracy is exact match of the one output symbol."""

    name = "modular_addition"
    data_config = ModularData
    model_config = ModularModel
    defaults = DEFAULTS
    presets = PRESETS
    eval_splits = ("train", "val", "test")
    #: The diagnostics' default point cloud: the token embeddings (``diagnose``).
    diagnostic_layer = "embedding"
    #: Tokens are residues mod p: the diagnostics add the embeddings' Fourier spectrum.
    cyclic_tokens = True

    def __init__(self, config: RunConfig, seed: int) -> None:
        super().__init__(config, seed)
        d = config.data
        self.p = d.p
        self.symbols = [str(i) for i in range(d.p)]
        train, held = split_pairs(d.p, d.train_fraction, d.split_seed)
        half = len(held) // 2
        self.pairs = {"train": train, "val": held[:half], "test": held[half:]}
        true = (train // d.p + train % d.p) % d.p
        self.labels = {
            "train": permuted_labels(true, d.label_permutation, d.split_seed),
            **{s: (self.pairs[s] // d.p + self.pairs[s] % d.p) % d.p for s in ("val", "test")},
        }
        if not len(self.pairs["val"]) or not len(self.pairs["test"]):
            raise ConfigError(f"data.train_fraction {d.train_fraction} leaves too few "
                              "held-out pairs for a val and a test split")  # fmt: skip

    def _batch(self, split: str, rows: np.ndarray) -> Batch:
        pairs = self.pairs[split][rows]
        labels = self.labels[split][rows]
        x = torch.from_numpy(np.stack([pairs // self.p, pairs % self.p], 1).astype(np.int64))
        return Batch(x, [[int(v)] for v in labels], y=torch.from_numpy(labels.astype(np.int64)))

    def train_batch(self, index: int, batch_size: int) -> Batch:
        n = len(self.pairs["train"])
        rng = np.random.default_rng([self.seed, index])
        return self._batch("train", rng.choice(n, min(batch_size, n), replace=False))

    def eval_batches(self, split: str, batch_size: int) -> Iterator[Batch]:
        if split not in self.eval_splits:
            raise ValueError(f"unknown evaluation split {split!r}")
        n = len(self.pairs[split])
        for start in range(0, n, batch_size):
            yield self._batch(split, np.arange(start, min(n, start + batch_size)))

    def build_model(self, *, sparse: bool = True) -> SparlingModel:
        m = self.config.model
        if m.architecture == "transformer":
            if m.d_model % m.heads:
                raise ConfigError(f"model.d_model {m.d_model} is not a multiple of "
                                  f"model.heads {m.heads}")  # fmt: skip
            g = ModularTransformer(self.p, d_model=m.d_model, heads=m.heads, ffn=m.ffn,
                                   layers=m.layers)  # fmt: skip
        else:
            g = ModularMLP(self.p, d_embed=m.d_model, width=m.mlp_width, layers=m.mlp_layers)
        return SparlingModel(g, None, ModularHead(g.motifs, self.p,
                                                  norm=m.architecture == "transformer"))

    def loss(self, outputs: dict[str, torch.Tensor], batch: Batch) -> torch.Tensor:
        return F.cross_entropy(outputs["logits"], batch.y)

    def decode(self, outputs: dict[str, torch.Tensor]) -> list[list[int]]:
        return [[int(i)] for i in outputs["logits"].argmax(-1).tolist()]
