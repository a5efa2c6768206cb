"""LaTeX-OCR images: deterministic from a seed, drawn as mathtext draws it, and the truth boxes
hold the symbols they name."""

import numpy as np
import pytest
from matplotlib.font_manager import FontProperties
from matplotlib.mathtext import MathTextParser

from sparling_genomics.domains.latex import (
    CPU_SPEC,
    PAPER_SPEC,
    LatexSpec,
    generate_batch,
    generate_sample,
    render,
)
from sparling_genomics.domains.latex_grammar import (
    SYMBOLS,
    TOKEN_SYMBOL,
    TOKENS,
    latex,
    random_expression,
)
from sparling_genomics.errors import ConfigError

QUIET = LatexSpec(noise=0.0)


def reference(source: str, spec: LatexSpec) -> np.ndarray:
    """mathtext's own raster of ``$source$``, binarised and cropped to its ink."""
    prop = FontProperties(math_fontfamily="cm", size=spec.fontsize)
    image = MathTextParser("agg").parse(f"${source}$", dpi=spec.dpi, prop=prop).image
    ink = image >= spec.ink_threshold * 255
    rows, cols = np.flatnonzero(ink.any(1)), np.flatnonzero(ink.any(0))
    return ink[rows[0] : rows[-1] + 1, cols[0] : cols[-1] + 1]


def test_same_seed_same_batch_other_index_other_batch():
    a, b = generate_batch(3, 7, 4), generate_batch(3, 7, 4)
    c = generate_batch(3, 8, 4)
    for x, y in zip(a, b):
        assert np.array_equal(x.image, y.image) and x.tokens == y.tokens and x.boxes == y.boxes
    assert any(x.tokens != z.tokens for x, z in zip(a, c))
    assert all(s.image.shape == (120, 360) and s.image.dtype == np.uint8 for s in a)
    assert set(np.unique(a[0].image)) <= {0, 1}


def test_token_strings_are_1_to_30_long_uniformly_and_parse_as_mathtext():
    rng = np.random.default_rng(0)
    parser = MathTextParser("path")
    lengths = []
    for i in range(300):
        s = generate_sample(rng, CPU_SPEC)
        assert all(0 <= t < len(TOKENS) for t in s.tokens)
        lengths.append(len(s.tokens))
        if i < 40:
            parser.parse(f"${latex(s.tokens)}$")  # raises on invalid mathtext
    assert set(lengths) == set(range(1, 31))
    assert abs(np.mean(lengths) - 15.5) < 2


@pytest.mark.parametrize("spec", [PAPER_SPEC, CPU_SPEC], ids=["paper", "cpu"])
def test_composed_image_matches_mathtexts_own_rendering(spec):
    rng = np.random.default_rng(3)
    for _ in range(6):
        tokens = random_expression(rng, int(rng.integers(5, 31)))
        ink, _ = render(tokens, spec)
        ref = reference(latex(tokens), spec)
        assert ink.shape == ref.shape
        assert (ink != ref).sum() <= 3  # anti-aliasing where glyphs overlap


def test_noise_free_ink_lies_in_boxes_and_every_box_holds_its_symbol_ink():
    rng = np.random.default_rng(4)
    pad = QUIET.box_pad
    for _ in range(30):
        s = generate_sample(rng, QUIET)
        expected = [TOKEN_SYMBOL[t] for t in s.tokens if t in TOKEN_SYMBOL]
        assert [b[0] for b in s.boxes] == expected  # one box per drawn symbol, token order
        covered = np.zeros(s.image.shape, bool)
        for symbol, r0, r1, c0, c1 in s.boxes:
            assert 0 <= r0 < r1 <= 120 and 0 <= c0 < c1 <= 360
            covered[r0:r1, c0:c1] = True
            inner = s.image[r0 + pad : r1 - pad, c0 + pad : c1 - pad]
            assert inner.size and inner.any()
            assert inner[0].any() and inner[-1].any() and inner[:, 0].any() and inner[:, -1].any()
            if SYMBOLS[symbol] == "frac_bar":
                assert inner.all() and inner.shape[0] <= 2 < inner.shape[1]
            if SYMBOLS[symbol] in "()":
                assert inner.shape[0] > inner.shape[1]
        assert not s.image[~covered].any()
        assert s.image.any()


_DIGIT_NAMES = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]


def _glyph_symbol(name: str) -> str:
    """A symbol class from a BaKoMa glyph name (``two``, ``x``, ``plus``, ``parenleftbig``)."""
    for prefix, symbol in (("parenleft", "("), ("parenright", ")"), ("plus", "+")):
        if name.startswith(prefix):
            return symbol
    return str(_DIGIT_NAMES.index(name)) if name in _DIGIT_NAMES else name


@pytest.mark.parametrize("spec", [QUIET, CPU_SPEC], ids=["paper", "cpu"])
def test_boxes_are_the_glyphs_and_bars_mathtexts_parser_places(spec):
    """Each box holds the symbol matplotlib's public parser puts there: the class named by the
    glyph (or a fraction rule), at the glyph's ink extent (to within 2.5 px: the parser's
    glyphs are unhinted and not rounded to pixels)."""
    from matplotlib.ft2font import LoadFlags

    rng = np.random.default_rng(11)
    prop = FontProperties(math_fontfamily="cm", size=spec.fontsize)
    for _ in range(8):
        s = generate_sample(rng, LatexSpec(**{**spec.__dict__, "noise": 0.0}))
        parse = MathTextParser("path").parse(f"${latex(s.tokens)}$", dpi=spec.dpi, prop=prop)
        found = []  # (symbol, top, bottom, left, right) with y up
        for font, size, _, index, x, y in parse.glyphs:
            font.set_size(size, spec.dpi)
            x0, y0, x1, y1 = (v / 64 for v in font.load_glyph(index, LoadFlags.NO_HINTING).bbox)
            symbol = _glyph_symbol(font.get_glyph_name(index))
            found.append((symbol, y + y1, y + y0, x + x0, x + x1))
        for x, y, w, h in parse.rects:  # mathtext's raster fills columns floor..ceil inclusive
            found.append(("frac_bar", y + h, y, np.floor(x), np.ceil(x + w) + 1))
        # Reading order of the public parse: glyphs, then rules, each in token order.
        bars = [b for b in s.boxes if SYMBOLS[b[0]] == "frac_bar"]
        ours = [b for b in s.boxes if SYMBOLS[b[0]] != "frac_bar"] + bars
        assert [SYMBOLS[b[0]] for b in ours] == [f[0] for f in found]
        pad = spec.box_pad
        ours = np.array([b[1:] for b in ours]) + [pad, -pad, pad, -pad]
        theirs = np.array([f[1:] for f in found])
        theirs[:, :2] = -theirs[:, :2]  # rows grow downwards
        # One frame for both: shift theirs by the median offset.
        theirs[:, :2] += np.median(ours[:, :2] - theirs[:, :2])
        theirs[:, 2:] += np.median(ours[:, 2:] - theirs[:, 2:])
        assert np.abs(ours - theirs).max() <= 2.5, latex(s.tokens)


def test_noise_sets_pixels_to_ink_outside_the_boxes():
    quiet = generate_batch(5, 0, 3, QUIET)
    noisy = generate_batch(5, 0, 3, PAPER_SPEC)
    ink, total = 0, 0
    for q, n in zip(quiet, noisy):
        assert q.tokens == n.tokens and q.boxes == n.boxes
        assert np.all(n.image >= q.image)  # noise only adds ink
        outside = np.ones(q.image.shape, bool)
        for _, r0, r1, c0, c1 in q.boxes:
            outside[r0:r1, c0:c1] = False
        ink += int(n.image[outside].sum())
        total += int(outside.sum())
    assert abs(ink / total - 0.25) < 0.01


def test_impossible_spec_is_refused():
    with pytest.raises(ConfigError, match="tokens per expression"):
        LatexSpec(min_tokens=20, max_tokens=10).check()
    with pytest.raises(ConfigError, match="tokens per expression"):
        LatexSpec(min_tokens=0).check()
    with pytest.raises(ConfigError, match="noise"):
        LatexSpec(noise=1.0).check()
    with pytest.raises(ConfigError, match="box_pad"):
        LatexSpec(box_pad=-1).check()
    with pytest.raises(ConfigError, match="ink threshold"):
        LatexSpec(ink_threshold=0).check()
    with pytest.raises(ConfigError, match="too small"):
        LatexSpec(dpi=20).check()
    with pytest.raises(ConfigError, match="does not fit"):
        LatexSpec(height=40).check()
    PAPER_SPEC.check()
    CPU_SPEC.check()


def test_an_expression_that_does_not_fit_is_drawn_again_never_cropped(monkeypatch):
    from sparling_genomics.domains import latex as latex_ocr

    wide = [TOKENS.index(t) for t in "1+" * 14 + "1"]  # 29 tokens, ~390 px at 100 dpi
    narrow = [TOKENS.index(t) for t in [r"\frac{", r"x", r"}{", r"2", r"}"]]
    draws = iter([wide, wide, narrow])
    monkeypatch.setattr(latex_ocr, "random_expression", lambda rng, n: next(draws))
    s = generate_sample(np.random.default_rng(0), LatexSpec(height=60, width=180, dpi=100.0))
    assert s.tokens == narrow
    monkeypatch.setattr(latex_ocr, "random_expression", lambda rng, n: wide)
    with pytest.raises(ConfigError, match="no expression of .* tokens fitted"):
        generate_sample(np.random.default_rng(0), CPU_SPEC)
    assert render(wide, LatexSpec(width=1000, dpi=100.0))[0].shape[1] > 180
