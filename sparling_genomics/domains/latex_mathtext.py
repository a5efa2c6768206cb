"""mathtext rendering of LaTeX-OCR token strings (``latex_grammar.TOKENS``), offline.

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
it stamped (``latex.render`` composes the stamps into an image).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .latex_grammar import CHARACTERS, SYMBOLS, TOKEN_SYMBOL, TOKENS

_SYMBOL_TOKENS = frozenset([*CHARACTERS, "+"])  # tokens mathtext sets as one character


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
def glyph_renderer(fontsize: float, dpi: float) -> _Renderer:
    """The renderer of one font size and resolution (cached: its glyph atlas is built once)."""
    return _Renderer(fontsize, dpi)
