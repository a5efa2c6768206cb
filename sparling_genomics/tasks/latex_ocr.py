"""LaTeX-OCR data (the Sparling paper's second domain): rendered expressions in a noisy image.

A sample is a binary image (paper: 120 x 360 px at 200 dpi) of a random LaTeX expression and
the expression as a string of 1-30 output tokens. Expressions come from the paper's grammar
(its ``latex_cfg``; weights in brackets, default 1)::

    start    ::= line | [0.25] \\frac{ start }{ start }
    line     ::= term | [0.25] term + line
    term     ::= atom | [0.25] atom term                      (juxtaposition)
    atom     ::= scripted | [0.25] \\left( line \\right)
    scripted ::= symbol | symbol ^{ symbol } | symbol _{ symbol }
    symbol   ::= 0 | 1 | ... | 9 | x | y | z | a | b | c

A length is drawn uniformly from ``min_tokens..max_tokens`` and the expression from the
grammar conditioned on that many tokens (exactly, by dynamic programming over the grammar:
the distribution of the paper's rejection sampler, without its thousands of draws).

Tokens (``TOKENS``) are LaTeX fragments: the 16 characters, ``+``, ``\\left(``, ``\\right)``,
``^{``, ``_{``, ``\\frac{``, ``}{`` and ``}`` (one ``}`` closes any group); joined they are the
expression's mathtext source, and a token counts as one step of the output string as the
paper's tokens do. Truth (``SYMBOLS``): one box per rendered symbol -- the 16 characters,
``+``, ``(``, ``)`` and the fraction bar (drawn by ``}{``) -- its class and its ink extent
padded by ``box_pad`` px and clipped to the image; boxes are in token order.

Rendering is matplotlib mathtext's, offline, in Computer Modern (``fontset='cm'``, the
BaKoMa fonts matplotlib ships), not pdflatex as in the paper; so ``\\frac`` sets numerator and
denominator one size smaller (mathtext has no display style) and ``\\left(`` picks a sized or
scaled parenthesis as mathtext does. Speed: the full mathtext parse (pyparsing, ~13 ms) would
cap the generator near 70 samples/s, so the expression's box tree is built directly from
its tokens with mathtext's own layout routines (``matplotlib._mathtext``: ``Parser.symbol``,
``subsuper``, ``_genfrac``, ``_auto_sized_delimiter``, ``ship``: the same nodes the parser
builds, checked against it by the tests), each distinct glyph is rasterised once (cached,
as FreeType draws it for ``MathTextParser('agg')``) and binarised (ink: coverage >=
``ink_threshold``; paper: 0.25), and the glyphs are stamped at their positions; fraction
bars are filled rectangles as in mathtext's raster output. A symbol's box is exactly the ink
it stamped. The ink is centred in the image (as the paper pads the rendering); an expression
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

from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from functools import cache, lru_cache

import numpy as np
import torch

from ..config import RunConfig, bounded
from ..errors import ConfigError
from ..models.heads import AttentionDecoderHead
from ..models.motif import MotifModel2D
from ..models.sparling import SparlingModel
from ..sparsity.layer import SparseSettings, SpatialSparsity
from .base import Batch, Cell, Task, check_stride, map_span

CHARACTERS = "0123456789xyzabc"

#: Output tokens: the model's vocabulary; ``"".join`` of a token string is its LaTeX.
TOKENS: list[str] = [*CHARACTERS, "+", r"\left(", r"\right)", "^{", "_{", r"\frac{", "}{", "}"]

#: Rendered symbol classes, the truth boxes' labels.
SYMBOLS: list[str] = [*CHARACTERS, "+", "(", ")", "frac_bar"]

#: The symbol each token draws (token index -> symbol index); the other tokens draw nothing.
TOKEN_SYMBOL: dict[int, int] = {
    **{TOKENS.index(c): SYMBOLS.index(c) for c in [*CHARACTERS, "+"]},
    TOKENS.index(r"\left("): SYMBOLS.index("("),
    TOKENS.index(r"\right)"): SYMBOLS.index(")"),
    TOKENS.index("}{"): SYMBOLS.index("frac_bar"),
}

# The paper's grammar: nonterminal -> [(weight, elements)]; other elements are tokens.
GRAMMAR: dict[str, list[tuple[float, tuple[str, ...]]]] = {
    "start": [(1.0, ("line",)), (0.25, (r"\frac{", "start", "}{", "start", "}"))],
    "line": [(1.0, ("term",)), (0.25, ("term", "+", "line"))],
    "term": [(1.0, ("atom",)), (0.25, ("atom", "term"))],
    "atom": [(1.0, ("scripted",)), (0.25, (r"\left(", "line", r"\right)"))],
    "scripted": [
        (1.0, ("symbol",)),
        (1.0, ("symbol", "^{", "symbol", "}")),
        (1.0, ("symbol", "_{", "symbol", "}")),
    ],
    "symbol": [(1.0, (c,)) for c in CHARACTERS],
}

_TOKEN_INDEX = {t: i for i, t in enumerate(TOKENS)}
_SYMBOL_TOKENS = frozenset([*CHARACTERS, "+"])  # tokens mathtext sets as one character

MAX_TOKENS = 60  # the longest expression a spec may ask for
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


def latex(tokens: list[int]) -> str:
    """The mathtext source of a token string (without the ``$`` delimiters)."""
    return "".join(TOKENS[t] for t in tokens)


# ---------------------------------------------------------------- expressions


@cache
def _inside(name: str, n: int) -> float:
    """Probability that nonterminal ``name`` derives exactly ``n`` tokens."""
    productions = GRAMMAR[name]
    total = sum(w for w, _ in productions)
    return sum(w / total * _sequence(elements, n) for w, elements in productions)


@cache
def _sequence(elements: tuple[str, ...], n: int) -> float:
    """Probability that ``elements`` in a row derive exactly ``n`` tokens (each >= 1)."""
    if not elements:
        return 1.0 if n == 0 else 0.0
    first, rest = elements[0], elements[1:]
    if first not in GRAMMAR:
        return _sequence(rest, n - 1) if n >= 1 else 0.0
    return sum(_inside(first, m) * _sequence(rest, n - m) for m in range(1, n - len(rest) + 1))


def _pick(rng: np.random.Generator, weights: list[float]) -> int:
    u = rng.random() * sum(weights)
    for i, w in enumerate(weights):
        u -= w
        if u < 0 and w > 0:
            return i
    return max(i for i, w in enumerate(weights) if w > 0)  # u rounded past the end


def _derive(rng: np.random.Generator, name: str, n: int, out: list[str]) -> None:
    productions = GRAMMAR[name]
    weights = [w * _sequence(elements, n) for w, elements in productions]
    _derive_sequence(rng, productions[_pick(rng, weights)][1], n, out)


def _derive_sequence(rng: np.random.Generator, elements: tuple[str, ...], n: int, out) -> None:
    for i, element in enumerate(elements):
        rest = elements[i + 1 :]
        if element not in GRAMMAR:
            out.append(element)
            n -= 1
            continue
        if rest:
            lengths = range(1, n - len(rest) + 1)
            weights = [_inside(element, m) * _sequence(rest, n - m) for m in lengths]
            m = lengths[_pick(rng, weights)]
        else:
            m = n
        _derive(rng, element, m, out)
        n -= m


def random_expression(rng: np.random.Generator, n: int) -> list[int]:
    """A token string of exactly ``n`` tokens from the grammar (conditioned on its length)."""
    if not 1 <= n <= MAX_TOKENS:
        raise ConfigError(f"expression length {n} is outside 1..{MAX_TOKENS}")
    for m in range(1, n + 1):  # fill the tables bottom-up (shallow recursion)
        _inside("start", m)
    out: list[str] = []
    _derive(rng, "start", n, out)
    return [_TOKEN_INDEX[t] for t in out]


# ---------------------------------------------------------------- rendering


@dataclass
class _Stamp:
    symbol: int
    row: int
    col: int
    ink: np.ndarray  # bool, cropped to its ink


class _Renderer:
    """Lays out token strings with mathtext's routines and rasterises them from cached glyphs
    (one renderer per font size and dpi)."""

    CACHE_LIMIT = 20000  # cached glyphs (sized parentheses vary) before a fresh start

    def __init__(self, fontsize: float, dpi: float) -> None:
        from matplotlib import _mathtext
        from matplotlib.font_manager import FontProperties
        from matplotlib.ft2font import LoadFlags

        self.mt = _mathtext
        self.fontsize, self.dpi = fontsize, dpi
        self.flags = LoadFlags.DEFAULT  # matplotlib's default text.hinting for Agg
        self.prop = FontProperties(math_fontfamily="cm", size=fontsize)
        self.parser = _mathtext.Parser()
        self._fresh()

    def _fresh(self) -> None:
        self.fontset = self.mt.BakomaFonts(self.prop, self.flags)
        self.glyphs: dict[tuple, tuple[np.ndarray, int, int]] = {}

    def layout(self, tokens: list[str]):
        """The box tree mathtext's parser builds for ``$<tokens joined>$``."""
        p, mt = self.parser, self.mt
        self.s = "".join(tokens)
        self.tokens = tokens
        self.locs = np.cumsum([0] + [len(t) for t in tokens]).tolist()
        p._state_stack = [mt.ParserState(self.fontset, "default", "rm", self.fontsize, self.dpi)]
        p._em_width_cache = {}
        p._needs_space_after_subsuper = False
        try:
            before = p.non_math([""])  # enters math: pushes a state in mathtext.default
            p.get_state().font = "normal"  # matplotlib's mathtext.default, whatever rcParams say
            nodes, i = self._sequence(0, ())
            if i != len(tokens):
                raise ValueError(f"unbalanced token string: {self.s!r}")
            math = p.math(_Toks(nodes))
            after = p.non_math([""])
            return mt.Hlist([*before, *math, *after])
        finally:
            p._state_stack = []
            p._em_width_cache = {}

    def _sequence(self, i: int, stops: tuple[str, ...]):
        p, tokens = self.parser, self.tokens
        nodes: list = []
        while i < len(tokens) and tokens[i] not in stops:
            nucleus, i = self._atom(i)
            if i < len(tokens) and tokens[i] in ("^{", "_{"):
                op, loc = tokens[i][0], self.locs[i]
                p.push_state()  # a {...} group
                arg, i = self._sequence(i + 1, ("}",))
                p.pop_state()
                i = self._expect(i, "}")
                [group] = p.group(_Toks(arg))
                [nucleus] = nucleus
                nodes.extend(p.subsuper(self.s, loc, {"nucleus": nucleus, "subsuper": [op, group]}))
            else:
                nodes.extend(nucleus)
        return nodes, i

    def _atom(self, i: int):
        p, mt, token = self.parser, self.mt, self.tokens[i]
        if token == r"\left(":
            inner, i = self._sequence(i + 1, (r"\right)",))
            return [p._auto_sized_delimiter("(", inner, ")")], self._expect(i, r"\right)")
        if token == r"\frac{":
            num, i = self._sequence(i + 1, ("}{",))
            den, i = self._sequence(self._expect(i, "}{"), ("}",))
            rule = p.get_state().get_current_underline_thickness()
            style = p._MathStyle.TEXTSTYLE
            frac = p._genfrac("", "", rule, style, mt.Hlist(num), mt.Hlist(den))
            return frac, self._expect(i, "}")
        if token in _SYMBOL_TOKENS:
            return p.symbol(self.s, self.locs[i], {"sym": token}), i + 1
        raise ValueError(f"token {token!r} cannot start an atom in {self.s!r}")

    def _expect(self, i: int, token: str) -> int:
        if i >= len(self.tokens) or self.tokens[i] != token:
            raise ValueError(f"expected {token!r} at token {i} of {self.s!r}")
        return i + 1

    def stamps(self, tokens: list[int], threshold: float) -> list[_Stamp]:
        """The ink of each rendered symbol, in token order, at integer pixel positions (as
        ``MathTextParser('agg')`` draws them: rows down, origin at the rendering's corner)."""
        text = [TOKENS[t] for t in tokens]
        box = self.layout(text)
        first = self.mt.ship(box)
        xmin = min([*[ox + info.metrics.xmin for ox, _, info in first.glyphs],
                    *[x for x, _, _, _ in first.rects], 0]) - 1  # fmt: skip
        ymin = min([*[oy - info.metrics.ymax for _, oy, info in first.glyphs],
                    *[y for _, y, _, _ in first.rects], 0]) - 1  # fmt: skip
        out = self.mt.ship(box, (-xmin, -ymin))
        drawn = [TOKEN_SYMBOL[t] for t in tokens if t in TOKEN_SYMBOL]
        glyph_symbols = [s for s in drawn if s != SYMBOLS.index("frac_bar")]
        if len(glyph_symbols) != len(out.glyphs) or len(drawn) - len(glyph_symbols) != len(
            out.rects
        ):
            raise RuntimeError(f"mathtext drew other glyphs than expected for {''.join(text)!r}")
        glyph_stamps = []
        for symbol, (ox, oy, info) in zip(glyph_symbols, out.glyphs):
            ink, dr, dc = self._glyph(info, threshold)
            row, col = int(oy - info.metrics.iceberg) + dr, int(ox) + dc
            glyph_stamps.append(_Stamp(symbol, row, col, ink))
        rect_stamps = []
        for x, y, bw, bh in out.rects:  # as mathtext's Output.to_raster
            height = max(int(bh) - 1, 0)
            y = int(y + bh / 2 - (height + 1) / 2) if height == 0 else int(y)
            x1, x2 = int(np.floor(x)), int(np.ceil(x + bw))
            ink = np.ones((height + 1, x2 + 1 - x1), bool)
            rect_stamps.append(_Stamp(SYMBOLS.index("frac_bar"), y, x1, ink))
        glyph_iter, rect_iter = iter(glyph_stamps), iter(rect_stamps)
        return [next(rect_iter) if s == SYMBOLS.index("frac_bar") else next(glyph_iter)
                for s in drawn]  # fmt: skip

    def _glyph(self, info, threshold: float) -> tuple[np.ndarray, int, int]:
        """A glyph's binarised ink and its offset from the point FreeType draws it at."""
        key = (info.font.fname, info.fontsize, info.glyph_index, threshold)
        hit = self.glyphs.get(key)
        if hit is not None:
            return hit
        if len(self.glyphs) >= self.CACHE_LIMIT:
            self._fresh()
        font = info.font
        font.set_size(info.fontsize, self.dpi)
        glyph = font.load_glyph(info.glyph_index, flags=self.flags)
        xmin, ymin, xmax, ymax = (v / 64 for v in glyph.bbox)
        margin = 4
        x0 = margin - int(np.floor(min(xmin, 0)))
        canvas = np.zeros(
            (int(np.ceil(ymax - ymin)) + 2 * margin, x0 + int(np.ceil(max(xmax, 0))) + margin),
            np.uint8,
        )
        font.draw_glyph_to_bitmap(canvas, x0, margin, glyph, antialiased=True)
        font.clear()  # FT2Font keeps every loaded glyph until cleared
        cut = min(threshold * 255, float(canvas.max()))  # a faint glyph keeps its darkest px
        ink = canvas >= max(cut, 1)
        rows, cols = np.flatnonzero(ink.any(1)), np.flatnonzero(ink.any(0))
        if len(rows) == 0:  # a glyph with no ink at all (never for this grammar's symbols)
            hit = (np.zeros((0, 0), bool), 0, 0)
        else:
            crop = ink[rows[0] : rows[-1] + 1, cols[0] : cols[-1] + 1]
            hit = (crop, int(rows[0]) - margin, int(cols[0]) - x0)
        self.glyphs[key] = hit
        return hit


class _Toks(list):
    """Just enough of pyparsing's ParseResults for mathtext's parse actions."""

    def as_list(self) -> list:
        return list(self)

    def get(self, key, default=None):
        return list(self) if key == "group" else default


@lru_cache(maxsize=8)
def _renderer(fontsize: float, dpi: float) -> _Renderer:
    return _Renderer(fontsize, dpi)


def render(
    tokens: list[int], spec: LatexSpec | None = None
) -> tuple[np.ndarray, list[tuple[int, int, int, int, int]]] | None:
    """The ink of ``tokens`` (any well-formed string of TOKENS) as a tight bool image and one
    box per drawn symbol, in token order: (symbol, row0, row1, col0, col1), the symbol's ink
    extent in that image (unpadded). ``None`` when nothing is drawn."""
    spec = spec or PAPER_SPEC
    stamps = _renderer(float(spec.fontsize), float(spec.dpi)).stamps(tokens, spec.ink_threshold)
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


# --- the task -----------------------------------------------------------------------------


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
        if self.curriculum_samples < 0 or (
            self.curriculum_samples > 0
            and not self.spec.min_tokens <= self.curriculum_start <= self.spec.max_tokens
        ):
            raise ConfigError(
                "data.curriculum_samples must be >= 0 and data.curriculum_start_tokens lie in "
                "min_tokens..max_tokens"
            )
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
        return self._head().loss(outputs["logits"], batch.targets)

    def decode(self, outputs: dict[str, torch.Tensor]) -> list[list[int]]:
        return self._head().greedy_decode(outputs["logits"])
