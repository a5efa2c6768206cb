"""Splicing (and any labelled-site) task: per-position site classes from an HDF5 dataset.

Input: one-hot windows ``(N, 4, context + window)`` from ``genome/dataset.py``; output: class
logits ``(N, classes, window)``; loss: cross-entropy over labelled positions (label -1 is
ignored). End-to-end metric: SpliceAI top-k accuracy per site class and PR-AUC; annealing and
model selection use the mean top-k over site classes on the validation block.

The Sparling model is ``g`` (a local motif model, receptive field 31 nt by default) -> the
spatial sparse layer with K motif channels -> a SpliceAI-400-style dilated residual ``h``. The
non-sparse baseline (``model.sparse_layer: false``) is the same network without the sparse
layer. Windows are read lazily from the dataset file, a batch at a time.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import torch
import torch.nn.functional as F

from ..errors import ConfigError
from ..genome.dataset import SiteDataset
from ..models.motif import MotifModel1D
from ..models.sparling import SparlingModel
from ..models.splice import SpliceAIHead
from ..sparsity.layer import SpatialSparsity
from .base import Batch, Task


class SplicingTask(Task):
    name = "splicing"
    exports_motifs = True
    accuracy_metric = "mean_topk"
    scoring = "sites"

    def __init__(self, config: dict, seed: int) -> None:
        super().__init__(config, seed)
        path = config["data"]["dataset"]
        if not path:
            raise ConfigError(
                "data.dataset is empty: build one with `sparling-genomics dataset` and pass "
                "--dataset PATH (or --set data.dataset=PATH)"
            )
        self.data = SiteDataset(path)
        self.classes = self.data.classes
        self.symbols = self.classes[1:]
        self.train_index = self.data.indices("train")
        if len(self.train_index) == 0:
            raise ConfigError(f"{path}: the dataset has no training windows")
        self._eval_index = {
            "val": self._subset(self.data.indices("val"), int(config["data"]["val_windows"])),
            "test": self._subset(self.data.indices("test"), int(config["data"]["test_windows"])),
        }

    @staticmethod
    def _subset(index: np.ndarray, size: int) -> np.ndarray:
        """Evenly spaced ``size`` windows of ``index`` (all when size is 0 or larger)."""
        if size <= 0 or size >= len(index):
            return index
        return index[np.linspace(0, len(index) - 1, size).round().astype(int)]

    # -- model ---------------------------------------------------------------------------
    def build_model(self, *, sparse: bool | None = None) -> SparlingModel:
        m = self.config["model"]
        sparse = bool(m["sparse_layer"]) if sparse is None else sparse
        k = int(m["motif_channels"])
        g = MotifModel1D(
            k,
            hidden=int(m["hidden"]),
            first_kernel=int(m["first_kernel"]),
            residual_units=int(m["residual_units"]),
            unit_kernel=int(m["unit_kernel"]),
            reverse_complement=False,  # windows are in transcript orientation
        )
        start = self.config["annealing"]["start_density"]
        layer = SpatialSparsity.from_config(k, start, m["sparse"]) if sparse else None
        h = SpliceAIHead(
            k,
            len(self.classes),
            context=self.data.context,
            channels=int(m["head_channels"]),
            kernel=int(m["head_kernel"]),
            dilations=[int(d) for d in m["head_dilations"]],
        )
        return SparlingModel(g, layer, h)

    # -- data ----------------------------------------------------------------------------
    def _batch(self, index: np.ndarray) -> Batch:
        x, y = self.data.read(index)
        return Batch(torch.from_numpy(x), [], y=torch.from_numpy(y))

    def train_batch(self, index: int, batch_size: int) -> Batch:
        n = len(self.train_index)
        first = index * batch_size
        picks = []
        while len(picks) < batch_size:
            epoch, offset = divmod(first + len(picks), n)
            order = np.random.default_rng([self.seed, epoch]).permutation(n)
            take = min(batch_size - len(picks), n - offset)
            picks.extend(order[offset : offset + take])
        return self._batch(self.train_index[np.array(picks)])

    def eval_batches(self, split: str, batch_size: int) -> Iterator[Batch]:
        index = self._eval_index[split]
        for lo in range(0, len(index), batch_size):
            yield self._batch(index[lo : lo + batch_size])

    # -- loss and metrics ----------------------------------------------------------------
    def loss(self, outputs: dict[str, torch.Tensor], batch: Batch) -> torch.Tensor:
        y = batch.y.to(outputs["logits"].device)
        return F.cross_entropy(outputs["logits"], y, ignore_index=-1)

    def decode(self, outputs: dict[str, torch.Tensor]) -> list[list[int]]:
        raise NotImplementedError("the splicing task is scored per position (site_probabilities)")

    def site_probabilities(
        self, outputs: dict[str, torch.Tensor], batch: Batch
    ) -> tuple[np.ndarray, np.ndarray]:
        p = torch.softmax(outputs["logits"].float(), dim=1)
        probs = p.permute(0, 2, 1).reshape(-1, p.shape[1]).cpu().numpy()
        return probs, batch.y.reshape(-1).numpy()
