"""The interface every task (genomic or paper domain) gives the shared trainer."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import torch

from ..config import RunConfig
from ..errors import ConfigError
from ..models.sparling import SparlingModel

# One true motif occurrence: the slices of its cell (one per spatial dim) and its symbol.
Cell = tuple[tuple[slice, ...], int]


def map_span(start: int, stop: int, *, stride: int, size: int, pad: int = 0) -> slice:
    """The pixels ``[start, stop)``, widened by ``pad`` each side, as positions of a motif map
    of ``size`` positions at ``stride`` (position i is centred on pixel ``stride * i``)."""
    lo = max(0, start - pad)
    hi = stop - 1 + pad
    return slice(min(size, -(-lo // stride)), min(size, hi // stride + 1))


def check_stride(stride: int) -> int:
    """``model.stride`` of a 2-D task: 1, 2 or 4."""
    if stride not in (1, 2, 4):
        raise ConfigError(f"model.stride must be 1, 2 or 4, got {stride}")
    return stride


@dataclass
class Batch:
    """Inputs, output strings or per-position labels ``y``, and (where known) the true motif
    cells of each sample."""

    x: torch.Tensor
    targets: list[list[int]]
    cells: list[list[Cell]] = field(default_factory=list)
    y: torch.Tensor | None = None

    def __len__(self) -> int:
        return self.x.shape[0]

    def to(self, device: torch.device) -> Batch:
        y = None if self.y is None else self.y.to(device)
        return Batch(self.x.to(device), self.targets, self.cells, y)

    def head(self, n: int) -> Batch:
        """The first ``n`` samples."""
        return Batch(self.x[:n], self.targets[:n], self.cells[:n] if self.cells else [],
                     None if self.y is None else self.y[:n])  # fmt: skip


class Task(ABC):
    """A dataset generator + its model + its loss + its end-to-end decoding.

    Training batches are a pure function of (seed, batch index), so a resumed run sees the
    same data as an uninterrupted one; evaluation sets are fixed per split.
    """

    name: str = ""
    symbols: list[str] = []
    #: The end-to-end metric (a key of ``Evaluation.e2e``, higher is better) that drives
    #: annealing and picks the final weights.
    accuracy_metric: str = "exact_match"
    #: How CE matches channels to symbols: "one_to_one" (Hungarian; DigitCircle, planted) or
    #: "many_to_one" (each channel to its most common symbol; the paper's LaTeX and audio).
    ce_matching: str = "one_to_one"
    #: DNA tasks: motifs can be exported as PWMs/logos, named against JASPAR and scanned.
    exports_motifs: bool = False
    #: What ``export`` names motifs against by default: "jaspar" (DNA binding motifs) or
    #: "splicing" (RNA-level signals: annotated site PWMs, branch point, ESE hexamers).
    reference_motifs: str = "jaspar"
    #: How ``evaluate.evaluation`` scores the end-to-end output: "sequence" (output strings
    #: from :meth:`decode`: exact match, edit error) or "sites" (per-position class
    #: probabilities from :meth:`site_probabilities`, scored per class of :attr:`classes`).
    scoring: Literal["sequence", "sites"] = "sequence"
    #: "sites" scoring: the class names, index 0 the background ("no site") class.
    classes: list[str] = []
    #: The task's config: its ``data`` and ``model`` dataclasses, what it sets in the shared
    #: ``train`` and ``annealing`` blocks (nested mapping), and its presets (cpu, paper, tiny:
    #: nested mappings merged over those defaults).
    data_config: type
    model_config: type
    defaults: dict = {}
    presets: dict[str, dict] = {}
    #: What a saved run's config meant by keys it lacks because it predates them (nested
    #: mapping): merged under the saved keys when a run is resumed or loaded, so an old run
    #: rebuilds the model it trained, not today's default.
    saved_run_defaults: dict = {}
    #: Config keys that name input files (``data.dataset``): a run records each relative to
    #: its folder where both lie in one results tree, so a moved run still finds them
    #: (``train/run_config.py``; ``io.record_path``).
    path_keys: tuple[str, ...] = ()
    #: The splits ``eval_batches`` can score.
    eval_splits: tuple[str, ...] = ("val", "test")
    #: The point cloud ``diagnose`` reads by default (``runners/diagnose.py``): "motifs"
    #: (the layer ``h`` reads), "g" (before the sparse layer), "embedding" (token embeddings).
    diagnostic_layer: str = "motifs"
    #: Inputs are residues of a cyclic group (modular addition): ``diagnose`` adds the
    #: Fourier spectrum of the token embeddings.
    cyclic_tokens: bool = False

    @classmethod
    def trained_config(cls, config: RunConfig, *, other_data: bool) -> RunConfig:
        """A saved run's ``config`` with whatever the model was trained on pinned before
        another dataset is put in (``other_data``), e.g. its class order. Default: as is."""
        return config

    def __init__(self, config: RunConfig, seed: int) -> None:
        self.config = config
        self.seed = seed
        self._eval_cache: dict[str, list[Batch]] = {}

    @abstractmethod
    def build_model(self, *, sparse: bool = True) -> SparlingModel:
        """A fresh model (from the global torch seed)."""

    @abstractmethod
    def train_batch(self, index: int, batch_size: int) -> Batch:
        """The ``index``-th training batch; deterministic in (seed, index)."""

    @abstractmethod
    def eval_batches(self, split: str, batch_size: int) -> Iterator[Batch]:
        """The fixed evaluation set of ``split`` ('val' or 'test') in batches."""

    def generated_eval_batches(
        self, split: str, batch_size: int, make: Callable[[int, int, int], Batch]
    ) -> Iterator[Batch]:
        """The fixed ``split`` set of a generated task, made once and cached:
        ``make(seed, index, size)`` builds a batch as ``generate_batch`` does, with seed
        12345 + 1 (val) or + 2 (test), so the set does not depend on the training seed."""
        if split not in ("val", "test"):
            raise ValueError(f"unknown evaluation split {split!r}")
        if split not in self._eval_cache:
            size = getattr(self.config.data, f"{split}_size")
            seed = 12345 + {"val": 1, "test": 2}[split]
            self._eval_cache[split] = [
                make(seed, i, min(batch_size, size - i)) for i in range(0, size, batch_size)
            ]
        yield from self._eval_cache[split]

    @abstractmethod
    def loss(self, outputs: dict[str, torch.Tensor], batch: Batch) -> torch.Tensor:
        """Training loss of model outputs on a batch."""

    def training_state(self) -> dict:
        """Task state that changes with training (e.g. a curriculum): logged at each
        evaluation, saved in checkpoints and given back by :meth:`load_training_state`."""
        return {}

    def load_training_state(self, state: dict) -> None:
        """Restore :meth:`training_state` from a checkpoint (no state: nothing to do)."""
        del state

    def ready_to_anneal(self) -> bool:
        """False while the task is not yet the final task (a curriculum): annealing waits."""
        return True

    @abstractmethod
    def decode(self, outputs: dict[str, torch.Tensor]) -> list[list[int]]:
        """"sequence" scoring: predicted output strings (lists of symbol indices)."""

    def site_probabilities(
        self, outputs: dict[str, torch.Tensor], batch: Batch
    ) -> tuple[np.ndarray, np.ndarray]:
        """"sites" scoring: per-position class probabilities ``(positions, classes)`` and
        labels ``(positions,)`` (-1: unlabelled) of a batch, on the CPU."""
        raise NotImplementedError(f"task {self.name!r} is not scored per position")

    def swappable_symbols(self) -> list[int]:
        """Symbols a perturbation-consistency test may swap (none: the test is not run)."""
        return []

    def swap_output(self, target: list[int], cells: list[Cell], index: int,
                    symbol: int) -> list[int] | None:  # fmt: skip
        """The output string once true motif ``cells[index]`` is symbol ``symbol`` instead,
        or None where that would make no valid sample."""
        return None

    def true_density(self) -> float | None:
        """Expected fraction of positions per channel holding a true motif, if known."""
        return None


def first_eval_batches(task, split: str, batch_size: int, count: int) -> Iterator[Batch]:
    """The first ``count`` inputs of ``task``'s ``split`` evaluation set in batches (the last
    one cut short): the checks that look at a fixed share of a split. ``task``: anything with
    :meth:`Task.eval_batches`."""
    seen = 0
    if count <= 0:
        return
    for batch in task.eval_batches(split, batch_size):
        batch = batch if seen + len(batch) <= count else batch.head(count - seen)
        yield batch
        seen += len(batch)
        if seen >= count:
            return
