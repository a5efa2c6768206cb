"""DigitCircle images (the Sparling paper's first domain): digits on a circle in a noisy image.

A sample is a 100 x 100 binary image holding 3-6 distinct digits, 12 px tall, in a
monospace font, centred on a circle of radius 20-34 px around the image centre, at angles
with a random rotation and at least ``1 / (2n)`` of a turn between neighbours, each jittered
by up to +/-3 px. Pixels are set with p = 0.125 before the digits are stamped (a digit's box
is overwritten by its glyph) and flipped with p = 0.05 after. The output string is the
digits in counter-clockwise order (as seen, y up) starting from the smallest digit. Truth:
each digit's box (its glyph's ink extent) and identity.

Glyphs come from DejaVu Sans Mono, the monospace font matplotlib ships (no download),
rendered with Pillow once per process and binarised.

The task that trains on them is ``tasks/digit_circle.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from ..errors import ConfigError

IMAGE_SIZE = 100
GLYPH_HEIGHT = 12


@dataclass(frozen=True)
class DigitCircleSpec:
    size: int = IMAGE_SIZE
    min_digits: int = 3
    max_digits: int = 6
    min_radius: float = 20.0
    max_radius: float = 34.0
    jitter: int = 3
    noise_before: float = 0.125
    noise_after: float = 0.05
    glyph_height: int = GLYPH_HEIGHT

    def check(self) -> None:
        if not 1 <= self.min_digits <= self.max_digits <= 10:
            raise ConfigError("digits per image must satisfy 1 <= min_digits <= max_digits <= 10")
        if not 0 <= self.noise_before < 1 or not 0 <= self.noise_after < 1:
            raise ConfigError("pixel noise probabilities must lie in [0, 1)")
        reach = self.max_radius + self.jitter + self.glyph_height
        if 2 * reach > self.size:
            raise ConfigError(
                f"digits on a circle of radius {self.max_radius} do not fit a {self.size} px image"
            )


@dataclass
class DigitCircleSample:
    image: np.ndarray  # (size, size) uint8 in {0, 1}
    digits: list[int]  # the output string: counter-clockwise from the smallest digit
    boxes: list[tuple[int, int, int, int, int]]  # (digit, row0, row1, col0, col1), half-open


def font_path() -> Path:
    import matplotlib

    path = Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSansMono.ttf"
    if not path.is_file():
        raise ConfigError(f"{path}: matplotlib's DejaVu Sans Mono font is missing")
    return path


@lru_cache(maxsize=4)
def digit_glyphs(height: int = GLYPH_HEIGHT) -> tuple[np.ndarray, ...]:
    """Binary bitmaps of the digits 0-9, cropped to their ink, ``height`` px tall."""
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.truetype(str(font_path()), size=4 * height)
    glyphs = []
    for digit in range(10):
        canvas = Image.new("L", (8 * height, 8 * height), 0)
        ImageDraw.Draw(canvas).text((height, height), str(digit), fill=255, font=font)
        ink = np.asarray(canvas) > 127
        rows, cols = np.flatnonzero(ink.any(1)), np.flatnonzero(ink.any(0))
        crop = canvas.crop((cols[0], rows[0], cols[-1] + 1, rows[-1] + 1))
        width = max(1, round(crop.width * height / crop.height))
        small = np.asarray(crop.resize((width, height), Image.LANCZOS)) > 100
        glyphs.append(small.astype(np.uint8))
    return tuple(glyphs)


def generate_sample(rng: np.random.Generator, spec: DigitCircleSpec | None = None):
    """One DigitCircle image with its output string and digit boxes."""
    spec = spec or DigitCircleSpec()
    spec.check()
    glyphs = digit_glyphs(spec.glyph_height)
    n = int(rng.integers(spec.min_digits, spec.max_digits + 1))
    digits = [int(d) for d in rng.choice(10, size=n, replace=False)]
    image = (rng.random((spec.size, spec.size)) < spec.noise_before).astype(np.uint8)
    angles, boxes = _place(rng, spec, [glyphs[d].shape for d in digits])
    for digit, (row0, row1, col0, col1) in zip(digits, boxes):
        image[row0:row1, col0:col1] = glyphs[digit]
    boxes = [(d, *box) for d, box in zip(digits, boxes)]
    flips = rng.random(image.shape) < spec.noise_after
    image ^= flips.astype(np.uint8)
    order = np.argsort(angles)  # counter-clockwise
    ccw = [digits[i] for i in order]
    start = ccw.index(min(ccw))
    return DigitCircleSample(image, ccw[start:] + ccw[:start], boxes)


def _place(rng: np.random.Generator, spec: DigitCircleSpec, shapes, tries: int = 1000):
    """Angles and boxes (row0, row1, col0, col1) of glyphs of ``shapes`` on a circle, drawn
    again until no two boxes touch (so every digit's box holds exactly its glyph)."""
    centre = (spec.size - 1) / 2
    for _ in range(tries):
        angles = _angles(rng, len(shapes))
        radius = rng.uniform(spec.min_radius, spec.max_radius)
        boxes = []
        for (h, w), angle in zip(shapes, angles):
            dy, dx = rng.integers(-spec.jitter, spec.jitter + 1, size=2)
            # y grows downwards in the image: counter-clockwise as seen is -y.
            row = int(round(centre - radius * np.sin(angle) + dy - h / 2))
            col = int(round(centre + radius * np.cos(angle) + dx - w / 2))
            row, col = min(max(row, 0), spec.size - h), min(max(col, 0), spec.size - w)
            boxes.append((row, row + h, col, col + w))
        if not any(_touch(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1 :]):
            return angles, boxes
    raise ConfigError(f"could not place {len(shapes)} digits without overlap in {tries} tries")


def _touch(a, b) -> bool:
    return a[0] <= b[1] and b[0] <= a[1] and a[2] <= b[3] and b[2] <= a[3]


def _angles(rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` angles in [0, 2 pi) with a random rotation and gaps of at least 1/(2n) turn."""
    min_gap = 1.0 / (2 * n)
    slack = 1.0 - n * min_gap
    gaps = min_gap + slack * rng.dirichlet(np.ones(n))
    turns = (rng.random() + np.concatenate([[0.0], np.cumsum(gaps[:-1])])) % 1.0
    return 2 * np.pi * turns


def generate_batch(seed: int, index: int, size: int, spec: DigitCircleSpec | None = None):
    """``size`` samples, a pure function of (seed, index)."""
    rng = np.random.default_rng([seed, index])
    return [generate_sample(rng, spec) for _ in range(size)]


def canonical_ring(digits: list[int]) -> list[int]:
    """A ring of digits read from any start, rotated to start at its smallest digit; a digit
    read twice (at the seam of the sweep) is kept once, digits being distinct."""
    seen: list[int] = []
    for d in digits:
        if d not in seen:
            seen.append(d)
    if not seen:
        return seen
    start = seen.index(min(seen))
    return seen[start:] + seen[:start]
