"""The DigitCircle task (``--task digit_circle``): images of ``domains/digit_circle.py``.

``g`` is a 2-D residual CNN (17 x 17 receptive field, 10 channels), the sparse layer is the
shared one, and ``h`` (a CPU preset's choice) reads the sparse map around the ring in polar
coordinates with CTC; the decoded ring is rotated to start at its smallest digit.
Perturbation consistency is scored by ``evaluate/perturbation.py`` with ``swap_output`` (a
digit may become any digit not already in the image). The paper's transformer decoder is not
built.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import torch

from ..domains.digit_circle import (
    DigitCircleSample,
    DigitCircleSpec,
    canonical_ring,
    generate_batch,
)
from ..models.heads import PolarCTCHead, ctc_greedy_decode, cyclic_ctc_loss
from ..models.motif import MotifModel2D
from ..models.sparling import SparlingModel
from ..sparsity.layer import SpatialSparsity
from .base import Batch, Cell, Task, check_stride, map_span


class DigitCircleTask(Task):
    """DigitCircle: noisy images of digits on a circle -> the digits counter-clockwise."""

    name = "digit_circle"
    symbols = [str(d) for d in range(10)]

    def __init__(self, config: dict, seed: int) -> None:
        super().__init__(config, seed)
        data = config["data"]
        self.spec = DigitCircleSpec(
            min_digits=int(data["min_digits"]),
            max_digits=int(data["max_digits"]),
            noise_before=float(data["noise_before"]),
            noise_after=float(data["noise_after"]),
        )
        self.spec.check()
        self.cell_pad = int(data["cell_pad"])
        self.stride = check_stride(int(config["model"]["stride"]))

    def _batch(self, samples: list[DigitCircleSample]) -> Batch:
        x = torch.from_numpy(np.stack([s.image for s in samples])[:, None].astype(np.float32))
        cells: list[list[Cell]] = [
            [((self._span(r0, r1), self._span(c0, c1)), d) for d, r0, r1, c0, c1 in s.boxes]
            for s in samples
        ]
        return Batch(x, [s.digits for s in samples], cells)

    def _span(self, start: int, stop: int) -> slice:
        """A box's pixel span, padded by ``cell_pad``, in motif-map positions."""
        return map_span(start, stop, stride=self.stride, size=self.map_size, pad=self.cell_pad)

    @property
    def map_size(self) -> int:
        return -(-self.spec.size // self.stride)

    def train_batch(self, index: int, batch_size: int) -> Batch:
        return self._batch(generate_batch(self.seed, index, batch_size, self.spec))

    def eval_batches(self, split: str, batch_size: int) -> Iterator[Batch]:
        return self.generated_eval_batches(
            split, batch_size, lambda seed, i, n: self._batch(generate_batch(seed, i, n, self.spec))
        )

    def swappable_symbols(self) -> list[int]:
        return list(range(len(self.symbols)))

    def swap_output(self, target, cells, index, symbol):
        """Digits are distinct: a digit already in the image cannot be swapped in."""
        old = cells[index][1]
        if symbol in target or old not in target:
            return None
        return canonical_ring([symbol if d == old else d for d in target])

    def true_density(self) -> float:
        """Mean digits per image / (channels x map positions): the fraction of the whole
        motif map that a true digit occupies (as for LaTeX and audio). With spare channels
        this is below one digit's share: per-channel thresholds give every channel the same
        density, so a budget of one digit's share per channel would make the spare channels
        fire on digits that another channel already found (the 12-channel benchmark at 1.4x
        the digits: a third of the digits had two channels on, and every failed perturbation
        was one of them). The price: 1.06x as many activations as digits, and about one digit
        in ten found by none (``docs/paper-domains.md``)."""
        mean_count = (self.spec.min_digits + self.spec.max_digits) / 2
        channels = int(self.config["model"]["motif_channels"])
        return mean_count / (channels * self.map_size**2)

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
        h = PolarCTCHead(
            k,
            len(self.symbols),
            size=self.map_size,
            centre=(self.spec.size - 1) / 2 / self.stride,
            r_min=10.0 / self.stride,
            r_max=46.0 / self.stride,
            hidden=int(m["head_hidden"]),
            angles=int(m["head_angles"]),
            layers=int(m["head_layers"]),
            recurrent=bool(m["head_recurrent"]),
        )
        return SparlingModel(g, layer, h)

    def loss(self, outputs: dict[str, torch.Tensor], batch: Batch) -> torch.Tensor:
        return cyclic_ctc_loss(outputs["logits"], batch.targets)

    def decode(self, outputs: dict[str, torch.Tensor]) -> list[list[int]]:
        return [canonical_ring(d) for d in ctc_greedy_decode(outputs["logits"])]
