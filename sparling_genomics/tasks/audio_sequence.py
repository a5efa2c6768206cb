"""The AudioMNISTSequence task (``--task audio_sequence``): spectrograms of
``domains/audio_sequence.py`` -> the digits in time order."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import torch

from ..domains.audio_sequence import AudioSequenceSample, AudioSequenceSpec, generate_batch
from ..domains.spoken_digits import DIGITS, load_audiomnist, split_speakers
from ..errors import ConfigError
from ..models.heads import CTCSequenceHead1D, ctc_greedy_decode, ctc_loss
from ..models.motif import MotifModel1D
from ..models.sparling import SparlingModel
from ..sparsity.layer import SpatialSparsity
from .base import Batch, Cell, Task


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
    ce_matching = "many_to_one"

    def __init__(self, config: dict, seed: int) -> None:
        super().__init__(config, seed)
        data = config["data"]
        self.spec = AudioSequenceSpec(
            seconds=float(data["seconds"]),
            min_clips=int(data["min_clips"]),
            max_clips=int(data["max_clips"]),
            noise=float(data["noise"]),
        )
        self.spec.check()
        if not str(data["corpus"]):
            raise ConfigError(
                "audio_sequence needs data.corpus: an AudioMNIST directory "
                "(<speaker>/<digit>_<speaker>_<rep>.wav), or build one offline with "
                "`sparling-genomics audio-corpus --out DIR` and pass --set data.corpus=DIR"
            )
        self.corpus = load_audiomnist(Path(str(data["corpus"])))
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
        return mean_clips / (int(self.config["model"]["motif_channels"]) * self.spec.frames)

    def build_model(self, *, sparse: bool = True) -> SparlingModel:
        m = self.config["model"]
        k = int(m["motif_channels"])
        g = MotifModel1D(
            k,
            in_channels=self.spec.n_mels,
            hidden=int(m["hidden"]),
            first_kernel=int(m["first_kernel"]),
            residual_units=int(m["residual_units"]),
            unit_kernel=int(m["unit_kernel"]),
            reverse_complement=False,
        )
        start = self.config["annealing"]["start_density"]
        layer = SpatialSparsity.from_config(k, start, m["sparse"]) if sparse else None
        h = CTCSequenceHead1D(
            k,
            len(self.symbols),
            hidden=int(m["head_hidden"]),
            pool=int(m["head_pool"]),
            layers=int(m["head_layers"]),
            recurrent=bool(m["head_recurrent"]),
        )
        return SparlingModel(g, layer, h)

    def loss(self, outputs: dict[str, torch.Tensor], batch: Batch) -> torch.Tensor:
        return ctc_loss(outputs["logits"], batch.targets)

    def decode(self, outputs: dict[str, torch.Tensor]) -> list[list[int]]:
        return ctc_greedy_decode(outputs["logits"])
