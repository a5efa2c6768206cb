"""Splicing (and any labelled-site) task: per-position site classes from an HDF5 dataset.

Input: one-hot windows ``(N, 4, context + window)`` from ``genome/dataset.py``; output: class
logits ``(N, classes, window)``; loss: cross-entropy over labelled positions (label -1 is
ignored). End-to-end metric: SpliceAI top-k accuracy per site class and PR-AUC; annealing and
model selection use the mean top-k over site classes on the validation block.

The Sparling model is ``g`` (a local motif model, receptive field 31 nt by default) -> the
spatial sparse layer with K motif channels -> a SpliceAI-400-style dilated residual ``h``. The
non-sparse baseline (``model.sparse_layer: false``) is the same network without the sparse
layer. Windows are read lazily from the dataset file, a batch at a time.

With ``model.core_sites`` (the default) the Sparling model also gets the supplied site core
(``models/core.py``): one local site model per class of the dataset (donor and acceptor, or a
BED's names), trained first on the labels alone and frozen; each class's channel has a fixed
density of its site frequency. Its windows (:data:`SITE_WINDOWS`) are asymmetric, more intron
than exon, following MaxEntScan's (Yeo & Burge 2004) 9-mer donor (3 exon + 6 intron bases)
and 23-mer acceptor (20 intron + 3 exon bases): the consensus and the polypyrimidine tract
belong to the core, the branch point (18-60 nt upstream of the acceptor) and everything
farther out is left to the learned channels.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from ..config import RunConfig, bounded
from ..errors import ConfigError
from ..genome.dataset import SiteDataset
from ..models.core import SiteCore
from ..models.motif import MotifModel1D
from ..models.sparling import SparlingModel
from ..models.splice import SpliceAIHead
from ..sparsity.blocks import layer_channels
from ..sparsity.layer import SpatialSparsity
from ..sparsity.settings import SparseSettings
from .base import Batch, Task

#: A core's window per site class, as (bases upstream, bases downstream) of the site base in
#: transcript orientation: MaxEntScan's windows (the donor is the exon's last base, the
#: acceptor the exon's first). Other classes: ``model.core_flank`` each side, or
#: ``model.core_windows``.
SITE_WINDOWS = {"donor": (2, 6), "acceptor": (20, 2)}


@dataclass
class SplicingData:
    """``data``: the dataset file and how much of its validation and test blocks to score."""

    dataset: str = ""  # HDF5 from `sparling-genomics dataset`
    val_windows: int = bounded(400, min=0)  # validation windows scored at each evaluation (0: all)
    test_windows: int = bounded(0, min=0)  # 0: the whole test block
    # The model's output classes in order ("none" first), written into the run's config at
    # training; a dataset built with another label order is matched by name (`evaluate
    # --dataset`, the pipeline's `apply:`). Empty: the dataset's order.
    classes: list[str] = bounded([])


@dataclass
class SplicingModel:
    """``model``: g, the sparse layer (or none: the baseline) and the SpliceAI-style head."""

    sparse_layer: bool = True  # false: the non-sparse baseline (same network otherwise)
    # 32, not 64: a genome scan costs ~5x less (chr1, both strands: ~30 s vs ~150 s
    # of g on 2 cores) and training gets ~1.4x more samples into its budget.
    motif_channels: int = bounded(32, min=1)
    hidden: int = bounded(32, min=1)
    first_kernel: int = bounded(11, min=1)
    residual_units: int = bounded(2, min=0)
    unit_kernel: int = bounded(11, min=1)  # receptive field of g: 11 + 2 * 10 = 31 nt
    head_channels: int = bounded(32, min=1)
    head_kernel: int = bounded(11, min=1)
    head_dilations: list[int] = bounded([1, 1, 1, 1, 4, 4, 4, 4], min=1)  # SpliceAI-400
    # The supplied site core (models/core.py): unsupplied, 29 of 32 learned channels became
    # GT/AG copies or a T-rich pattern on TAIR10 chr1; with the site itself supplied, they are
    # free for other signals. false: the ablation, exactly the model without a core. The
    # non-sparse baseline (sparse_layer: false) never has one: it is the unchanged reference.
    core_sites: bool = True
    # "CLASS:UPSTREAM:DOWNSTREAM" entries over SITE_WINDOWS (each CLASS must be one of the
    # dataset's); classes in neither get core_flank bases each side.
    core_windows: list[str] = bounded([])
    core_flank: int = bounded(10, min=0)
    core_hidden: int = bounded(32, min=1)  # a few thousand weights per class: a local model
    core_layers: int = bounded(3, min=1)  # 1x1 layers after the window convolution
    # A core channel's density = this x its class's share of labelled training positions:
    # 1.0 lets it fire about once per true site, as the learned channels' 0.18% does.
    core_density_scale: float = bounded(1.0, above=0)
    # > 0: after the core phase each core channel's density is raised (from the scale's, in
    # steps of 1.2x, up to 5%) until the channel fires at this share of the labelled sites of
    # the calibration windows, and its one-call-per-site peak rule stays on at any density:
    # the core motif is then called at nearly every true site, not only at the sites its
    # local window ranks first (train/core_phase.py). 0: the scale's density alone.
    core_site_recall: float = bounded(0.0, min=0, max=0.99)
    # Channels compete within +-2 nt (the anti-copy rule; sparsity/layer.py): without it, 14
    # of 32 channels were near-exact copies firing at the same sites
    # (bench_runs/splicing_before_core). With it copies take turns rather than vanish (13 of
    # 32 in bench_runs/splicing_ablations).
    # share_range [0.25, 8]: the learned channels share one firing budget (the annealed density
    # times K), each between 0.25x and 8x of it (sparsity/budget.py): mean top-k 0.848 over 3
    # seeds (0.849, 0.848, 0.846) against 0.833 with each channel at the annealed density
    # ([1, 1]; seed 0), 12 of 32 near-copies against 13 (bench_runs/splicing_ablations, *_seeds).
    sparse: SparseSettings = field(
        default_factory=lambda: SparseSettings(compete_window=2, share_range=[0.25, 8.0])
    )


#: What splicing sets in the shared ``train`` and ``annealing`` blocks.
DEFAULTS = {
    "train": {
        "max_samples": 10_000_000,
        "max_seconds": 1620.0,  # 27 min of training: the whole run fits in 30 on 2 cores
        "eval_every": 800,
        "eval_batch_size": 64,
        "final_samples": 28_000,
        "final_lr_schedule": "cosine",  # or 'constant'
        # The cosine's length for a baseline (no sparse layer, no annealing): about the
        # samples its budget allows on 2 cores, so it too ends at a low learning rate.
        "baseline_samples": 56_000,
        "log_motif_metrics": None,  # no motif truth: the key is not in a splicing config
        # The core phase (model.core_sites), sized for two cores (donor, acceptor): ~2 passes
        # over chr1's 13,761 training windows (~40k sites per class); two 32-wide cores train
        # at ~180 samples/s on one busy core, so 30k samples take 1.5-3 min, ~10% of the
        # main budget, which this does not count against.
        "core_samples": 30_000,
        "core_seconds": 180.0,
    },
    "annealing": {
        "start_density": 0.1,
        # Final density = the last 0.1 * 0.75**k at or above this: 0.1 * 0.75**14 = 0.178%
        # (the Sparling paper's splicing target was 0.18%).
        "stop_density": 0.0017,
        "bar_decay_per_sample": 4e-5,
    },
}

PRESETS: dict[str, dict] = {
    "cpu": {},
    "paper": {
        "model": {"motif_channels": 80, "hidden": 128, "first_kernel": 21, "residual_units": 0},
        "train": {
            "batch_size": 32,
            "lr": 0.001,
            "max_seconds": 36_000.0,
            "eval_every": 8_000,
            "final_samples": 100_000,
        },
        "annealing": {"bar_decay_per_sample": 2e-6},
        "data": {"val_windows": 0},
    },
    # SpliceAI-2k's reach, for a GPU or a longer CPU budget: h sees 2,000 nt (receptive field
    # 1 + 2 x 10 x (4 + 16 + 40 + 40) = 2,001 with kernel 11), the sparse motif layer as in the
    # cpu preset. Build its dataset with `dataset --context 2000` (on a 400-nt dataset the
    # outer units would read zeros). A sample costs more (a 3,000-nt input, 14 head units
    # instead of 8), so the CPU budget is 3x the cpu preset's; on a GPU the run ends by
    # samples. Measured beside SpliceAI and OpenSpliceAI: BENCHMARKS.md "peers".
    "long": {
        "model": {"head_dilations": [1, 1, 1, 1, 4, 4, 4, 4, 10, 10, 10, 10, 20, 20]},
        "train": {"max_seconds": 3 * 1620.0},
    },
    "tiny": {
        "model": {
            "motif_channels": 8,
            "hidden": 8,
            "head_channels": 8,
            "head_dilations": [1, 4],
        },
        "data": {"val_windows": 16, "test_windows": 0},
        "train": {
            "batch_size": 4,
            "max_samples": 96,
            "eval_every": 24,
            "eval_batch_size": 16,
            "final_samples": 24,
            "checkpoint_every_seconds": 0.0,
            "core_samples": 48,
        },
        "annealing": {"bar_decay_per_sample": 1e-2, "start_density": 0.1, "stop_density": 0.05},
    },
}


def _check_classes(classes: list[str]) -> None:
    """``data.classes`` (empty: the dataset's order) must be ``none`` then distinct names."""
    if not classes:
        return
    if classes[0] != "none":
        raise ConfigError(f"data.classes must start with 'none' (got {', '.join(classes)})")
    repeated = sorted({c for c in classes if classes.count(c) > 1})
    if repeated:
        raise ConfigError(f"data.classes lists {', '.join(repeated)} more than once")


class SplicingTask(Task):
    name = "splicing"
    exports_motifs = True
    accuracy_metric = "mean_topk"
    scoring = "sites"
    data_config = SplicingData
    model_config = SplicingModel
    defaults = DEFAULTS
    presets = PRESETS
    eval_splits = ("val", "test", "all")
    path_keys = ("data.dataset",)
    # Runs saved before the core, the channel competition and the shared budget had none of
    # them (each channel at the annealed density).
    saved_run_defaults = {
        "model": {"core_sites": False, "sparse": {"compete_window": 0, "share_range": [1.0, 1.0]}}
    }

    @classmethod
    def trained_config(cls, config: RunConfig, *, other_data: bool) -> RunConfig:
        """Runs trained before ``data.classes`` was recorded: the classes of the dataset they
        were trained on, read from it, so another dataset is matched to them by name."""
        if config.data.classes or not other_data:
            return config
        path = Path(config.data.dataset)
        if not path.is_file():
            raise ConfigError(
                f"{path}: the run's training dataset is gone and the run does not record its "
                "class order, so another dataset's classes cannot be matched to the model's"
            )
        dataset = SiteDataset(path)
        config.data.classes = list(dataset.file_classes)
        dataset.close()
        return config

    def __init__(self, config: RunConfig, seed: int) -> None:
        super().__init__(config, seed)
        path = config.data.dataset
        if not path:
            raise ConfigError(
                "data.dataset is empty: build one with `sparling-genomics dataset` and pass "
                "--dataset PATH (or --set data.dataset=PATH)"
            )
        _check_classes(list(config.data.classes))
        self.data = SiteDataset(path, class_order=list(config.data.classes) or None)
        self.classes = self.data.classes
        config.data.classes = list(self.classes)  # recorded in the run's saved config
        self.symbols = self.classes[1:]
        self.train_index = self.data.indices("train")
        if len(self.train_index) == 0:
            raise ConfigError(f"{path}: the dataset has no training windows")
        self._eval_index = {
            "val": self._subset(self.data.indices("val"), config.data.val_windows),
            "test": self._subset(self.data.indices("test"), config.data.test_windows),
            # Every window: a dataset of a genome (or part of one) the run never saw.
            "all": np.arange(len(self.data.split)),
        }

    @property
    def reference_motifs(self) -> str:
        """Splice sites and other transcript sites from an annotation are RNA-level signals:
        named against the splicing reference; a BED of peaks is DNA: JASPAR."""
        return "splicing" if self.data.summary.get("source") == "annotation" else "jaspar"

    def eval_indices(self, split: str) -> np.ndarray:
        """Dataset indices of the windows :meth:`eval_batches` yields for ``split``, in order."""
        return self._eval_index[split]

    @staticmethod
    def _subset(index: np.ndarray, size: int) -> np.ndarray:
        """Evenly spaced ``size`` windows of ``index`` (all when size is 0 or larger)."""
        if size <= 0 or size >= len(index):
            return index
        return index[np.linspace(0, len(index) - 1, size).round().astype(int)]

    # -- model ---------------------------------------------------------------------------
    def build_model(self, *, sparse: bool | None = None) -> SparlingModel:
        m = self.config.model
        sparse = m.sparse_layer if sparse is None else sparse
        block = (m.sparse.block_size or 1) if sparse else 1  # channels per motif
        g = MotifModel1D(
            layer_channels(m.motif_channels, block),
            hidden=m.hidden,
            first_kernel=m.first_kernel,
            residual_units=m.residual_units,
            unit_kernel=m.unit_kernel,
            reverse_complement=False,  # windows are in transcript orientation
            block_size=block,
        )
        start = self.config.annealing.start_density
        layer = (
            SpatialSparsity.from_config(g.motifs, start, m.sparse, blocks=True) if sparse else None
        )
        core, core_sparse = self.build_core() if sparse and m.core_sites else (None, None)
        h = SpliceAIHead(
            g.motifs + (0 if core is None else len(core.classes)),
            len(self.classes),
            context=self.data.context,
            channels=m.head_channels,
            kernel=m.head_kernel,
            dilations=list(m.head_dilations),
        )
        return SparlingModel(g, layer, h, core, core_sparse)

    def core_windows(self) -> list[tuple[int, int]]:
        """Per site class, the core's (upstream, downstream) window; a one-line error where
        ``model.core_windows`` is malformed or names a class the dataset does not have."""
        m = self.config.model
        sites = self.classes[1:]
        windows = {c: SITE_WINDOWS.get(c, (m.core_flank, m.core_flank)) for c in sites}
        for i, entry in enumerate(m.core_windows):
            name, _, rest = str(entry).rpartition(":")
            name, _, up = name.rpartition(":")
            if not name or not up.isdigit() or not rest.isdigit():
                raise ConfigError(
                    f"config key 'model.core_windows[{i}]' must be CLASS:UPSTREAM:DOWNSTREAM "
                    f"(bases), got {entry!r}"
                )
            if name not in windows:
                raise ConfigError(
                    f"config key 'model.core_windows[{i}]' names class {name!r}, which "
                    f"{self.config.data.dataset} does not have (its classes: {', '.join(sites)})"
                )
            windows[name] = (int(up), int(rest))
        return [windows[c] for c in sites]

    def site_frequencies(self, max_windows: int = 2000) -> list[float]:
        """Per site class, its share of the labelled positions of (up to ``max_windows``
        evenly spaced) training windows: the density of its core channel. A class without a
        labelled site cannot have a core: a one-line error."""
        path = self.config.data.dataset
        sites = self.classes[1:]
        if not sites:
            raise ConfigError(
                f"{path}: the dataset has no site classes, so model.core_sites has nothing to "
                "supply; set model.core_sites=false"
            )
        counts = (self.data.summary.get("sites") or {})
        empty = [c for c in sites if not counts.get(c, 1)]
        if empty:
            raise ConfigError(
                f"{path}: class {empty[0]!r} has no labelled sites, so model.core_sites cannot "
                "train its core; set model.core_sites=false"
            )
        index = self._subset(self.train_index, max_windows)
        found = np.zeros(len(self.classes), dtype=np.int64)
        for lo in range(0, len(index), 500):
            y = self.data.labels(index[lo : lo + 500])
            found += np.bincount(y[y >= 0].astype(np.int64), minlength=len(self.classes))
        labelled = max(1, int(found.sum()))
        return [max(1, int(n)) / labelled for n in found[1:]]

    def build_core(self) -> tuple[SiteCore, list[SpatialSparsity]]:
        """The supplied site core and its per-class sparse layers (fixed densities)."""
        m = self.config.model
        windows = self.core_windows()
        densities = [m.core_density_scale * f for f in self.site_frequencies()]
        for name, density in zip(self.classes[1:], densities):
            if density >= 0.5:
                raise ConfigError(
                    f"{self.config.data.dataset}: class {name!r} covers {density:.0%} of the "
                    "labelled positions (x model.core_density_scale): not a sparse site "
                    "signal a core channel can carry; set model.core_sites=false"
                )
        core = SiteCore(self.classes[1:], windows, context=self.data.context,
                        hidden=m.core_hidden, layers=m.core_layers)  # fmt: skip
        one = replace(m.sparse, block_size=None)  # a core class is one channel
        if m.core_site_recall:  # one call per site at whatever density the recall asks
            one = replace(one, peak_below=1.0)
        layers = [SpatialSparsity.from_config(1, d, one) for d in densities]
        return core, layers

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
