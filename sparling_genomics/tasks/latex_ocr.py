"""The LaTeX-OCR task (``--task latex_ocr``): images of ``domains/latex.py`` -> token strings."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace

import numpy as np
import torch

from ..config import RunConfig, bounded
from ..domains.latex import LatexSample, LatexSpec, generate_batch
from ..domains.latex_grammar import CHARACTERS, SYMBOLS, TOKEN_SYMBOL, TOKENS
from ..errors import ConfigError
from ..models.heads import AttentionDecoderHead
from ..models.motif import MotifModel2D
from ..models.sparling import SparlingModel
from ..sparsity.layer import SpatialSparsity
from ..sparsity.settings import SparseSettings
from .base import Batch, Cell, Task, check_stride, map_span


@dataclass
class LatexOcrData:
    """``data``: image size and rendering scale, expression lengths, noise, set sizes."""

    # The cpu size: the paper's expressions at half scale (its 120 x 360 px, 200 dpi
    # is the paper preset).
    height: int = bounded(60, min=1)
    width: int = bounded(180, min=1)
    dpi: float = bounded(100.0, above=0)
    fontsize: float = bounded(10.0, above=0)
    min_tokens: int = bounded(1, min=1)
    max_tokens: int = bounded(30, min=1)
    # Length curriculum (0: off): the longest training expression grows from
    # curriculum_start_tokens to max_tokens over the first curriculum_samples samples.
    curriculum_samples: int = bounded(0, min=0)
    curriculum_start_tokens: int = bounded(4, min=1)
    # Loss-gated curriculum (0: off): the longest training expression starts at
    # curriculum_start_tokens and grows by curriculum_step tokens each time the training loss
    # per token (a running mean over ~50 batches, at least 100 batches after the last growth)
    # is below curriculum_loss, or once curriculum_dwell samples (0: no cap) were spent at
    # one length. Either curriculum holds annealing until training draws the full grammar.
    curriculum_loss: float = bounded(0.0, min=0)
    curriculum_step: int = bounded(2, min=1)
    curriculum_dwell: int = bounded(0, min=0)
    noise: float = bounded(0.25, min=0)
    box_pad: int = bounded(2, min=0)
    val_size: int = bounded(500, min=1)
    test_size: int = bounded(1000, min=1)


@dataclass
class LatexOcrModel:
    """``model``: the 2-D motif network g, the sparse layer and the attention decoder."""

    motif_channels: int = bounded(32, min=1)
    hidden: int = bounded(16, min=1)
    stride: int = bounded(2, min=1)
    first_kernel: int = bounded(5, min=1)
    residual_units: int = bounded(3, min=0)
    # Receptive field 5 + 3 * 4 * 2 = 29 px (paper: 65 at 2x scale).
    unit_kernel: int = bounded(5, min=1)
    head_pool: int = bounded(4, min=1)
    head_hidden: int = bounded(64, min=1)
    head_heads: int = bounded(4, min=1)
    head_encoder_layers: int = bounded(1, min=0)
    head_decoder_layers: int = bounded(2, min=1)
    head_norm_first: bool = False  # pre-LayerNorm transformer layers
    sparse: SparseSettings = field(
        default_factory=lambda: SparseSettings(peak_window=2, peak_below=0.001)
    )


#: What latex_ocr sets in the shared ``train`` and ``annealing`` blocks.
DEFAULTS = {
    "train": {"eval_every": 4_000, "final_samples": 40_000},
    "annealing": {"bar_decay_per_sample": 5e-6},  # as digit_circle
}

PRESETS: dict[str, dict] = {
    "cpu": {},
    "paper": {
        "data": {
            "height": 120,
            "width": 360,
            "dpi": 200.0,
            "val_size": 2000,
            "test_size": 5000,
        },
        "model": {
            "hidden": 64,
            "stride": 1,
            "first_kernel": 9,
            "residual_units": 7,
            "head_hidden": 256,
            "head_heads": 8,
            "head_encoder_layers": 6,
            "head_decoder_layers": 6,
            "head_pool": 8,
        },
        "train": {
            "batch_size": 32,
            "lr": 0.0005,
            "max_samples": 6_000_000,
            "max_seconds": 72_000.0,
            "eval_every": 20_000,
        },
        "annealing": {"bar_decay_per_sample": 1e-7},
    },
    "tiny": {
        "model": {
            "hidden": 8,
            "residual_units": 1,
            "head_hidden": 16,
            "head_heads": 2,
            "head_decoder_layers": 1,
        },
        "data": {"val_size": 16, "test_size": 16, "max_tokens": 6},
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


class LatexOcrTask(Task):
    """LaTeX-OCR: a noisy rendered expression -> its token string.

    ``g`` is the shared 2-D residual CNN, the sparse layer the shared one (plain BatchNorm, as
    the paper's LaTeX layer), and ``h`` an :class:`AttentionDecoderHead` (a fraction is read
    numerator first, so no left-to-right scan of the image gives the token order).
    Channels are mapped many-to-one to symbols for the confusion error, as in the paper.
    The head is kept on the task (``self.head``) so the loss and the decoding can run its
    decoder on the encoder memory the model returns as ``outputs['logits']``.
    """

    name = "latex_ocr"
    symbols = SYMBOLS
    tokens = TOKENS
    ce_matching = "many_to_one"
    data_config = LatexOcrData
    model_config = LatexOcrModel
    defaults = DEFAULTS
    presets = PRESETS

    def __init__(self, config: RunConfig, seed: int) -> None:
        super().__init__(config, seed)
        data = config.data
        self.spec = LatexSpec(
            height=data.height,
            width=data.width,
            dpi=data.dpi,
            fontsize=data.fontsize,
            min_tokens=data.min_tokens,
            max_tokens=data.max_tokens,
            noise=data.noise,
            box_pad=data.box_pad,
        )
        self.spec.check()
        self.curriculum_samples = data.curriculum_samples
        self.curriculum_start = data.curriculum_start_tokens
        self.curriculum_loss, self.curriculum_step = data.curriculum_loss, data.curriculum_step
        self.curriculum_dwell = data.curriculum_dwell
        if self.curriculum_samples > 0 and self.curriculum_loss > 0:
            raise ConfigError("data.curriculum_samples and data.curriculum_loss: choose one")
        if (self.curriculum_samples > 0 or self.curriculum_loss > 0) and not (
            self.spec.min_tokens <= self.curriculum_start <= self.spec.max_tokens
        ):
            raise ConfigError(
                "data.curriculum_start_tokens must lie in min_tokens..max_tokens"
            )
        gated = self.curriculum_loss > 0
        self.curriculum_tokens = self.curriculum_start if gated else self.spec.max_tokens
        self._running_loss: float | None = None
        self._batches_at_length = self._samples_at_length = 0
        self._drawn_tokens = 0  # the longest expression the last training batch could hold
        self.stride = check_stride(config.model.stride)
        self.head: AttentionDecoderHead | None = None
        self._mean_symbols: float | None = None

    @property
    def map_shape(self) -> tuple[int, int]:
        return (-(-self.spec.height // self.stride), -(-self.spec.width // self.stride))

    def _span(self, start: int, stop: int, size: int) -> slice:
        return map_span(start, stop, stride=self.stride, size=size)

    def _batch(self, samples: list[LatexSample]) -> Batch:
        x = torch.from_numpy(np.stack([s.image for s in samples])[:, None].astype(np.float32))
        rows, cols = self.map_shape
        cells: list[list[Cell]] = [
            [((self._span(r0, r1, rows), self._span(c0, c1, cols)), k)
             for k, r0, r1, c0, c1 in s.boxes]
            for s in samples
        ]  # fmt: skip
        return Batch(x, [s.tokens for s in samples], cells)

    def train_batch(self, index: int, batch_size: int) -> Batch:
        spec = self.training_spec(index * batch_size)
        self._drawn_tokens = spec.max_tokens
        return self._batch(generate_batch(self.seed, index, batch_size, spec))

    def training_spec(self, samples: int) -> LatexSpec:
        """The spec of the training batch that starts after ``samples`` samples.

        With ``data.curriculum_samples`` > 0 the longest expression grows linearly from
        ``data.curriculum_start_tokens`` to ``max_tokens`` over that many samples (a length
        curriculum: short expressions first, so ``g`` can learn glyphs before ``h`` has to
        learn reading order); evaluation always draws from the full spec.
        With ``data.curriculum_loss`` > 0 it is the loss-gated length instead
        (:meth:`track_loss`), whatever ``samples`` is.
        """
        if self.curriculum_loss > 0:
            return replace(self.spec, max_tokens=self.curriculum_tokens)
        if samples >= self.curriculum_samples:
            return self.spec
        grown = (self.spec.max_tokens - self.curriculum_start) * samples // self.curriculum_samples
        return replace(self.spec, max_tokens=self.curriculum_start + grown)

    def eval_batches(self, split: str, batch_size: int) -> Iterator[Batch]:
        return self.generated_eval_batches(
            split, batch_size, lambda seed, i, n: self._batch(generate_batch(seed, i, n, self.spec))
        )

    def swappable_symbols(self) -> list[int]:
        """The 16 characters (not ``+``, the parentheses or the fraction bar)."""
        return [SYMBOLS.index(c) for c in CHARACTERS]

    def swap_output(self, target, cells, index, symbol):
        """Boxes are in token order: the ``index``-th symbol-drawing token changes."""
        drawing = [i for i, t in enumerate(target) if t in TOKEN_SYMBOL]
        if index >= len(drawing):
            return None
        position = drawing[index]
        if TOKEN_SYMBOL[target[position]] != cells[index][1]:
            return None
        if cells[index][1] not in self.swappable_symbols():
            return None
        out = list(target)
        out[position] = TOKENS.index(SYMBOLS[symbol])
        return out

    def true_density(self) -> float:
        """Mean symbols per image (from 200 fixed samples) / (channels x map positions)."""
        if self._mean_symbols is None:  # 200 renders: once per task, not per call
            samples = generate_batch(999, 0, 200, self.spec)
            self._mean_symbols = float(np.mean([len(s.boxes) for s in samples]))
        rows, cols = self.map_shape
        return self._mean_symbols / (self.config.model.motif_channels * rows * cols)

    def build_model(self, *, sparse: bool = True) -> SparlingModel:
        m = self.config.model
        k = m.motif_channels
        g = MotifModel2D(
            k,
            hidden=m.hidden,
            first_kernel=m.first_kernel,
            residual_units=m.residual_units,
            unit_kernel=m.unit_kernel,
            stride=self.stride,
        )
        start = self.config.annealing.start_density
        layer = SpatialSparsity.from_config(k, start, m.sparse) if sparse else None
        self.head = AttentionDecoderHead(
            k,
            len(self.tokens),
            spatial=self.map_shape,
            pool=m.head_pool,
            hidden=m.head_hidden,
            heads=m.head_heads,
            encoder_layers=m.head_encoder_layers,
            decoder_layers=m.head_decoder_layers,
            max_length=self.spec.max_tokens + 1,
            norm_first=m.head_norm_first,
        )
        return SparlingModel(g, layer, self.head)

    def _head(self) -> AttentionDecoderHead:
        if self.head is None:
            raise RuntimeError("build_model() first: the loss and decoding use its head")
        return self.head

    def loss(self, outputs: dict[str, torch.Tensor], batch: Batch) -> torch.Tensor:
        loss = self._head().loss(outputs["logits"], batch.targets)
        if self.curriculum_loss > 0 and loss.requires_grad:
            self.track_loss(float(loss.detach()), len(batch))
        return loss

    def track_loss(self, loss: float, samples: int = 1) -> None:
        """The loss-gated curriculum: a training batch's loss per token into the running
        mean; the longest expression grows once the mean is below ``data.curriculum_loss``
        (at least 100 batches after the last growth, so the mean is of the current length)
        or once ``data.curriculum_dwell`` samples were spent at the current length."""
        mean = self._running_loss
        self._running_loss = loss if mean is None else 0.98 * mean + 0.02 * loss
        self._batches_at_length += 1
        self._samples_at_length += samples
        learnt = self._batches_at_length >= 100 and self._running_loss < self.curriculum_loss
        dwelt = 0 < self.curriculum_dwell <= self._samples_at_length
        if self.curriculum_tokens < self.spec.max_tokens and (learnt or dwelt):
            grown = self.curriculum_tokens + self.curriculum_step
            self.curriculum_tokens = min(self.spec.max_tokens, grown)
            self._running_loss, self._batches_at_length, self._samples_at_length = None, 0, 0

    def training_state(self) -> dict:
        """The loss-gated curriculum's current longest expression: for the training log and
        the checkpoint (a resumed run goes on at that length)."""
        return {"curriculum_tokens": self.curriculum_tokens} if self.curriculum_loss > 0 else {}

    def load_training_state(self, state: dict) -> None:
        if self.curriculum_loss > 0 and "curriculum_tokens" in state:
            self.curriculum_tokens = int(state["curriculum_tokens"])

    def ready_to_anneal(self) -> bool:
        """Hold annealing while a curriculum draws shorter expressions than the grammar's:
        tightening the density on a task that is still growing (the 2026-12-03 run began at
        12 of 30 tokens) cut the reading it had not finished learning."""
        return self._drawn_tokens >= self.spec.max_tokens

    def decode(self, outputs: dict[str, torch.Tensor]) -> list[list[int]]:
        return self._head().greedy_decode(outputs["logits"])
