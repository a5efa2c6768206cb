"""The AudioMNISTSequence task (``--task audio_sequence``): spectrograms of
``domains/audio_sequence.py`` -> the digits in time order."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from ..config import RunConfig, bounded
from ..domains.audio_sequence import AudioSequenceSample, AudioSequenceSpec, generate_batch
from ..domains.spoken_digits import DIGITS, load_audiomnist, split_speakers
from ..errors import ConfigError
from ..models.heads import CTCSequenceHead1D, ctc_greedy_decode, ctc_loss
from ..models.motif import MotifModel1D
from ..models.sparling import SparlingModel
from ..sparsity.layer import SpatialSparsity
from ..sparsity.settings import SparseSettings
from .base import Batch, Cell, Task


@dataclass
class AudioSequenceData:
    """``data``: the clip corpus, clip counts and length, noise, evaluation set sizes."""

    corpus: str = ""  # AudioMNIST directory, or `sparling-genomics audio-corpus --out`
    seconds: float = bounded(15.0, above=0)
    min_clips: int = bounded(5, min=1)
    max_clips: int = bounded(10, min=1)
    noise: float = bounded(2.0**-10, min=0)
    val_size: int = bounded(500, min=1)
    test_size: int = bounded(1000, min=1)


@dataclass
class AudioSequenceModel:
    """``model``: the motif network g over mel frames, the sparse layer and the CTC head."""

    motif_channels: int = bounded(10, min=1)
    hidden: int = bounded(32, min=1)
    first_kernel: int = bounded(9, min=1)
    residual_units: int = bounded(3, min=0)
    unit_kernel: int = bounded(9, min=1)  # receptive field 9 + 3 * 8 = 33 frames, the paper's
    head_hidden: int = bounded(64, min=1)
    head_pool: int = bounded(4, min=1)
    head_layers: int = bounded(2, min=1)
    # No GRU: digits come in time order, so convolutions over frames read them; the
    # GRU cost ~40% of a step on 2 cores.
    head_recurrent: bool = False
    sparse: SparseSettings = field(default_factory=SparseSettings)


#: What audio_sequence sets in the shared ``train`` and ``annealing`` blocks.
DEFAULTS = {
    "train": {
        "eval_every": 2_000,
        "final_samples": 80_000,  # the rest of the budget
        # One core trains while the other makes the next batch (the spectrograms cost ~60% of
        # a step): 102 samples/s against 86 with two torch threads and no prefetching.
        "threads": 1,
        "prefetch": True,
    },
    "annealing": {
        # 6% per evaluation. Over a run the bar then falls about as far (3e-5 x ~180k
        # samples = 5.4) as the paper's (1e-7 x 6e7 = 6). At 1e-5 the first benchmark with
        # prefetching spent 38k samples at density 0.5 (unseen validation voices plateau
        # near 65-70% exact match, the bar starts at 1.0) and 32k waiting out the last
        # step, which left 8k of the 20k final samples (FNE 13.5%, E2EE 18%).
        "bar_decay_per_sample": 3e-5,
    },
}

PRESETS: dict[str, dict] = {
    "cpu": {},
    "paper": {
        "model": {"hidden": 64, "head_hidden": 256},
        "train": {
            "batch_size": 32,
            "lr": 0.001,
            "max_samples": 60_000_000,
            "max_seconds": 72_000.0,
            "eval_every": 20_000,
        },
        "annealing": {"bar_decay_per_sample": 1e-7},
        "data": {"val_size": 2000, "test_size": 5000},
    },
    "tiny": {
        "model": {"hidden": 8, "residual_units": 1, "head_hidden": 16},
        "data": {
            "val_size": 16,
            "test_size": 16,
            "seconds": 4.0,
            "min_clips": 2,
            "max_clips": 3,
        },
        "train": {
            "batch_size": 8,
            "max_samples": 96,
            "eval_every": 32,
            "eval_batch_size": 16,
            "final_samples": 32,
            "checkpoint_every_seconds": 0.0,
        },
        "annealing": {"bar_decay_per_sample": 1e-2, "stop_density": 0.05},
    },
}


class AudioSequenceTask(Task):
    """AudioMNISTSequence: a log-mel spectrogram of spoken digits -> the digits in time order.

    The corpus is ``data.corpus``: a real AudioMNIST directory or one written by
    ``sparling-genomics audio-corpus``. Train, validation and test use disjoint speakers
    (``split_speakers``), so test voices are unseen. ``g`` is the shared 1-D residual CNN
    over frames (64 mel bins in, 33-frame receptive field), the sparse layer the shared one
    (plain BatchNorm), and ``h`` a CTC head over time: digits come in time order, so CTC
    reads the string exactly. Channels are mapped many-to-one to digits for CE, as the paper.
    The spectrogram enters as ``(dB - max) / 20 + 2``: within [-2, 2] whatever the level.
    """

    name = "audio_sequence"
    symbols = [str(d) for d in DIGITS]
    path_keys = ("data.corpus",)
    ce_matching = "many_to_one"
    data_config = AudioSequenceData
    model_config = AudioSequenceModel
    defaults = DEFAULTS
    presets = PRESETS

    def __init__(self, config: RunConfig, seed: int) -> None:
        super().__init__(config, seed)
        data = config.data
        self.spec = AudioSequenceSpec(
            seconds=data.seconds,
            min_clips=data.min_clips,
            max_clips=data.max_clips,
            noise=data.noise,
        )
        self.spec.check()
        if not data.corpus:
            raise ConfigError(
                "audio_sequence needs data.corpus: an AudioMNIST directory "
                "(<speaker>/<digit>_<speaker>_<rep>.wav), or build one offline with "
                "`sparling-genomics audio-corpus --out DIR` and pass --set data.corpus=DIR"
            )
        self.corpus = load_audiomnist(Path(data.corpus))
        self.speakers = split_speakers(self.corpus.speakers)

    def _batch(self, samples: list[AudioSequenceSample]) -> Batch:
        spec = np.stack([s.spectrogram for s in samples])  # (N, frames, mels)
        spec = (spec - spec.max(axis=(1, 2), keepdims=True)) / 20.0 + 2.0
        x = torch.from_numpy(np.ascontiguousarray(spec.transpose(0, 2, 1), dtype=np.float32))
        cells: list[list[Cell]] = [
            [((slice(f0, f1),), d) for d, f0, f1 in s.spans] for s in samples
        ]
        return Batch(x, [s.digits for s in samples], cells)

    def train_batch(self, index: int, batch_size: int) -> Batch:
        return self._batch(
            generate_batch(self.seed, index, batch_size, self.corpus, self.speakers["train"],
                           self.spec)
        )  # fmt: skip

    def eval_batches(self, split: str, batch_size: int) -> Iterator[Batch]:
        def make(seed: int, index: int, size: int) -> Batch:
            speakers = self.speakers[split]
            return self._batch(generate_batch(seed, index, size, self.corpus, speakers, self.spec))

        return self.generated_eval_batches(split, batch_size, make)

    def swappable_symbols(self) -> list[int]:
        return list(DIGITS)

    def swap_output(self, target, cells, index, symbol):
        """Spans are in time order, as the output: digit ``index`` changes."""
        if index >= len(target) or target[index] != cells[index][1]:
            return None
        out = list(target)
        out[index] = symbol
        return out

    def true_density(self) -> float:
        mean_clips = (self.spec.min_clips + self.spec.max_clips) / 2
        return mean_clips / (self.config.model.motif_channels * self.spec.frames)

    def build_model(self, *, sparse: bool = True) -> SparlingModel:
        m = self.config.model
        k = m.motif_channels
        g = MotifModel1D(
            k,
            in_channels=self.spec.n_mels,
            hidden=m.hidden,
            first_kernel=m.first_kernel,
            residual_units=m.residual_units,
            unit_kernel=m.unit_kernel,
            reverse_complement=False,
        )
        start = self.config.annealing.start_density
        layer = SpatialSparsity.from_config(k, start, m.sparse) if sparse else None
        h = CTCSequenceHead1D(
            k,
            len(self.symbols),
            hidden=m.head_hidden,
            pool=m.head_pool,
            layers=m.head_layers,
            recurrent=m.head_recurrent,
        )
        return SparlingModel(g, layer, h)

    def loss(self, outputs: dict[str, torch.Tensor], batch: Batch) -> torch.Tensor:
        return ctc_loss(outputs["logits"], batch.targets)

    def decode(self, outputs: dict[str, torch.Tensor]) -> list[list[int]]:
        return ctc_greedy_decode(outputs["logits"])
