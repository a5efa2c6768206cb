"""The interface every task (genomic or paper domain) gives the shared trainer."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass, field

import torch

from ..models.sparling import SparlingModel

# One true motif occurrence: the slices of its cell (one per spatial dim) and its symbol.
Cell = tuple[tuple[slice, ...], int]


@dataclass
class Batch:
    """Inputs, output strings and (where known) the true motif cells of each sample."""

    x: torch.Tensor
    targets: list[list[int]]
    cells: list[list[Cell]] = field(default_factory=list)

    def __len__(self) -> int:
        return self.x.shape[0]

    def to(self, device: torch.device) -> Batch:
        return Batch(self.x.to(device), self.targets, self.cells)


class Task(ABC):
    """A dataset generator + its model + its loss + its end-to-end decoding.

    Training batches are a pure function of (seed, batch index), so a resumed run sees the
    same data as an uninterrupted one; evaluation sets are fixed per split.
    """

    name: str = ""
    symbols: list[str] = []

    def __init__(self, config: dict, seed: int) -> None:
        self.config = config
        self.seed = seed

    @abstractmethod
    def build_model(self, *, sparse: bool = True) -> SparlingModel:
        """A fresh model (from the global torch seed)."""

    @abstractmethod
    def train_batch(self, index: int, batch_size: int) -> Batch:
        """The ``index``-th training batch; deterministic in (seed, index)."""

    @abstractmethod
    def eval_batches(self, split: str, batch_size: int) -> Iterator[Batch]:
        """The fixed evaluation set of ``split`` ('val' or 'test') in batches."""

    @abstractmethod
    def loss(self, outputs: dict[str, torch.Tensor], batch: Batch) -> torch.Tensor:
        """Training loss of model outputs on a batch."""

    @abstractmethod
    def decode(self, outputs: dict[str, torch.Tensor]) -> list[list[int]]:
        """Predicted output strings (lists of symbol indices)."""

    def true_density(self) -> float | None:
        """Expected fraction of positions per channel holding a true motif, if known."""
        return None
