"""The LaTeX-OCR task (``--task latex_ocr``): images of ``domains/latex.py`` -> token strings."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import numpy as np
import torch

from ..domains.latex import LatexSample, LatexSpec, generate_batch
from ..domains.latex_grammar import CHARACTERS, SYMBOLS, TOKEN_SYMBOL, TOKENS
from ..errors import ConfigError
from ..models.heads import AttentionDecoderHead
from ..models.motif import MotifModel2D
from ..models.sparling import SparlingModel
from ..sparsity.layer import SpatialSparsity
from .base import Batch, Cell, Task, check_stride, map_span


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

    def __init__(self, config: dict, seed: int) -> None:
        super().__init__(config, seed)
        data = config["data"]
        self.spec = LatexSpec(
            height=int(data["height"]),
            width=int(data["width"]),
            dpi=float(data["dpi"]),
            fontsize=float(data["fontsize"]),
            min_tokens=int(data["min_tokens"]),
            max_tokens=int(data["max_tokens"]),
            noise=float(data["noise"]),
            box_pad=int(data["box_pad"]),
        )
        self.spec.check()
        self.curriculum_samples = int(data["curriculum_samples"])
        self.curriculum_start = int(data["curriculum_start_tokens"])
        if self.curriculum_samples < 0 or (
            self.curriculum_samples > 0
            and not self.spec.min_tokens <= self.curriculum_start <= self.spec.max_tokens
        ):
            raise ConfigError(
                "data.curriculum_samples must be >= 0 and data.curriculum_start_tokens lie in "
                "min_tokens..max_tokens"
            )
        self.stride = check_stride(int(config["model"]["stride"]))
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
        return self._batch(generate_batch(self.seed, index, batch_size, spec))

    def training_spec(self, samples: int) -> LatexSpec:
        """The spec of the training batch that starts after ``samples`` samples.

        With ``data.curriculum_samples`` > 0 the longest expression grows linearly from
        ``data.curriculum_start_tokens`` to ``max_tokens`` over that many samples (a length
        curriculum: short expressions first, so ``g`` can learn glyphs before ``h`` has to
        learn reading order); evaluation always draws from the full spec.
        """
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
        return self._mean_symbols / (int(self.config["model"]["motif_channels"]) * rows * cols)

    def build_model(self, *, sparse: bool = True) -> SparlingModel:
        m = self.config["model"]
        k = int(m["motif_channels"])
        g = MotifModel2D(
            k,
            hidden=int(m["hidden"]),
            first_kernel=int(m["first_kernel"]),
            residual_units=int(m["residual_units"]),
            unit_kernel=int(m["unit_kernel"]),
            stride=self.stride,
        )
        start = self.config["annealing"]["start_density"]
        layer = SpatialSparsity.from_config(k, start, m["sparse"]) if sparse else None
        self.head = AttentionDecoderHead(
            k,
            len(self.tokens),
            spatial=self.map_shape,
            pool=int(m["head_pool"]),
            hidden=int(m["head_hidden"]),
            heads=int(m["head_heads"]),
            encoder_layers=int(m["head_encoder_layers"]),
            decoder_layers=int(m["head_decoder_layers"]),
            max_length=self.spec.max_tokens + 1,
            norm_first=bool(m.get("head_norm_first", False)),
        )
        return SparlingModel(g, layer, self.head)

    def _head(self) -> AttentionDecoderHead:
        if self.head is None:
            raise RuntimeError("build_model() first: the loss and decoding use its head")
        return self.head

    def loss(self, outputs: dict[str, torch.Tensor], batch: Batch) -> torch.Tensor:
        return self._head().loss(outputs["logits"], batch.targets)

    def decode(self, outputs: dict[str, torch.Tensor]) -> list[list[int]]:
        return self._head().greedy_decode(outputs["logits"])
