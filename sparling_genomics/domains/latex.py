"""LaTeX-OCR images (the Sparling paper's second domain): rendered expressions in a noisy image.

A sample is a binary image (paper: 120 x 360 px at 200 dpi) of a random expression of the
paper's grammar (``latex_grammar``: a length drawn uniformly from ``min_tokens..max_tokens``,
the expression conditioned on it) and the expression as a string of output tokens. Truth: one
box per rendered symbol (``SYMBOLS``), its ink extent padded by ``box_pad`` px and clipped to
the image, in token order. The ink is matplotlib mathtext's (``latex_mathtext``), binarised,
each glyph stamped at its integer pixel position; a symbol's box is exactly the ink it
stamped. The ink is centred in the image (as the paper pads the rendering); an expression
whose ink does not fit inside the image with ``box_pad`` px to spare is drawn again at the
same length (lengths stay uniform; at 30 tokens ~2% of draws are redrawn), never cropped.
Noise then sets each pixel to ink with probability ``noise`` (paper: 0.25), from a stream of
its own, so a spec's noise never changes which expressions a seed gives.

Generation speed, one thread pinned to one core of a 2-core machine (matplotlib 3.11,
``generate_batch`` of 256 after warm-up, the other core busy): paper size ``PAPER_SPEC``
(120 x 360 px, 200 dpi) 440-490 samples/s; ``CPU_SPEC`` (60 x 180 px, 100 dpi: the same
expressions at half scale) 480-820 samples/s. Laying out in Python (~1 ms) dominates.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ConfigError
from .latex_grammar import MAX_TOKENS, random_expression
from .latex_mathtext import glyph_renderer

MAX_TRIES = 200  # draws of one length before an expression that fits is given up on


@dataclass(frozen=True)
class LatexSpec:
    """Image size, rendering scale, expression lengths and noise (defaults: the paper's)."""

    height: int = 120
    width: int = 360
    dpi: float = 200.0
    fontsize: float = 10.0  # points; LaTeX's default size, as in the paper
    min_tokens: int = 1
    max_tokens: int = 30
    noise: float = 0.25  # probability that a pixel is set to ink
    box_pad: int = 2
    ink_threshold: float = 0.25  # glyph coverage at which a pixel is ink

    @property
    def em(self) -> float:
        """The font size in pixels."""
        return self.fontsize * self.dpi / 72

    def check(self) -> None:
        if not 1 <= self.min_tokens <= self.max_tokens <= MAX_TOKENS:
            raise ConfigError(
                f"tokens per expression must satisfy 1 <= min_tokens <= max_tokens <= {MAX_TOKENS}"
            )
        if not 0 <= self.noise < 1:
            raise ConfigError("the pixel noise probability must lie in [0, 1)")
        if not 0 < self.ink_threshold <= 1:
            raise ConfigError("the ink threshold must lie in (0, 1]")
        if self.box_pad < 0:
            raise ConfigError("box_pad must be >= 0")
        if self.dpi <= 0 or self.fontsize <= 0 or self.em < 4:
            raise ConfigError(
                f"a {self.fontsize} pt font at {self.dpi} dpi is under 4 px: too small to read"
            )
        need = 2 * self.em + 2 * self.box_pad
        if self.height < need or self.width < need:
            raise ConfigError(
                f"a {self.height} x {self.width} px image does not fit expressions in a "
                f"{self.em:.0f} px font (each side needs at least {need:.0f} px)"
            )


PAPER_SPEC = LatexSpec()
#: Half the paper's scale for CPU training: the same expressions at 100 dpi in 60 x 180 px.
CPU_SPEC = LatexSpec(height=60, width=180, dpi=100.0)


@dataclass
class LatexSample:
    image: np.ndarray  # (height, width) uint8 in {0, 1}
    tokens: list[int]  # the output string: indices into TOKENS
    boxes: list[tuple[int, int, int, int, int]]  # (symbol, row0, row1, col0, col1), half-open


def render(
    tokens: list[int], spec: LatexSpec | None = None
) -> tuple[np.ndarray, list[tuple[int, int, int, int, int]]] | None:
    """The ink of ``tokens`` (any well-formed string of TOKENS) as a tight bool image and one
    box per drawn symbol, in token order: (symbol, row0, row1, col0, col1), the symbol's ink
    extent in that image (unpadded). ``None`` when nothing is drawn."""
    spec = spec or PAPER_SPEC
    renderer = glyph_renderer(float(spec.fontsize), float(spec.dpi))
    stamps = renderer.stamps(tokens, spec.ink_threshold)
    stamps = [s for s in stamps if s.ink.size]
    if not stamps:
        return None
    r0 = min(s.row for s in stamps)
    c0 = min(s.col for s in stamps)
    r1 = max(s.row + s.ink.shape[0] for s in stamps)
    c1 = max(s.col + s.ink.shape[1] for s in stamps)
    image = np.zeros((r1 - r0, c1 - c0), bool)
    boxes = []
    for s in stamps:
        r, c = s.row - r0, s.col - c0
        h, w = s.ink.shape
        image[r : r + h, c : c + w] |= s.ink
        boxes.append((s.symbol, r, r + h, c, c + w))
    return image, boxes


# ---------------------------------------------------------------- samples


def generate_sample(rng: np.random.Generator, spec: LatexSpec | None = None) -> LatexSample:
    """One LaTeX-OCR image with its output token string and symbol boxes."""
    spec = spec or PAPER_SPEC
    spec.check()
    n = int(rng.integers(spec.min_tokens, spec.max_tokens + 1))
    noise_seed = int(rng.integers(2**63))  # drawn always: the noise never moves the expressions
    pad = spec.box_pad
    for _ in range(MAX_TRIES):
        tokens = random_expression(rng, n)
        drawn = render(tokens, spec)
        if drawn is None:
            continue
        ink, boxes = drawn
        h, w = ink.shape
        if h + 2 * pad <= spec.height and w + 2 * pad <= spec.width:
            break
    else:
        raise ConfigError(
            f"no expression of {n} tokens fitted a {spec.height} x {spec.width} px image in "
            f"{MAX_TRIES} draws; use a larger image or a smaller font or max_tokens"
        )
    top, left = (spec.height - h) // 2, (spec.width - w) // 2
    image = np.zeros((spec.height, spec.width), np.uint8)
    image[top : top + h, left : left + w] = ink
    boxes = [
        (symbol, max(0, top + r0 - pad), min(spec.height, top + r1 + pad),
         max(0, left + c0 - pad), min(spec.width, left + c1 + pad))
        for symbol, r0, r1, c0, c1 in boxes
    ]  # fmt: skip
    if spec.noise > 0:
        noise_rng = np.random.default_rng(noise_seed)
        image |= (noise_rng.random(image.shape) < spec.noise).astype(np.uint8)
    return LatexSample(image, tokens, boxes)


def generate_batch(
    seed: int, index: int, size: int, spec: LatexSpec | None = None
) -> list[LatexSample]:
    """``size`` samples, a pure function of (seed, index)."""
    rng = np.random.default_rng([seed, index])
    return [generate_sample(rng, spec) for _ in range(size)]
