"""LaTeX-OCR rendering: the token-driven layout is the box tree mathtext's parser builds."""

import numpy as np
from matplotlib.font_manager import FontProperties

from sparling_genomics.domains.latex import PAPER_SPEC
from sparling_genomics.domains.latex_grammar import TOKENS, latex, random_expression


def test_layout_is_the_box_tree_mathtext_parses():
    """The token-driven layout equals the one mathtext's parser builds from the source."""
    from matplotlib import _mathtext

    from sparling_genomics.domains.latex_mathtext import glyph_renderer

    renderer = glyph_renderer(PAPER_SPEC.fontsize, PAPER_SPEC.dpi)
    rng = np.random.default_rng(2)
    sources = [latex(random_expression(rng, int(rng.integers(1, 31)))) for _ in range(25)]
    sources += [
        r"\frac{\frac{a}{b}}{\left(x+\left(y_{1}\right)^{2}\right)}+3",
        r"\left(\frac{1}{2}\right)_{x}c^{\frac{a}{b}}",
        r"+x^{}",
    ]
    for source in sources:
        tokens = _tokenise(source)
        ours = _mathtext.ship(renderer.layout(tokens))
        fontset = _mathtext.BakomaFonts(
            FontProperties(math_fontfamily="cm", size=PAPER_SPEC.fontsize), renderer.flags
        )
        box = _mathtext.Parser().parse(f"${source}$", fontset, PAPER_SPEC.fontsize, PAPER_SPEC.dpi)
        theirs = _mathtext.ship(box)

        def glyphs(out):
            return [(round(x, 6), round(y, 6), i.font.fname, round(i.fontsize, 6), i.glyph_index)
                    for x, y, i in out.glyphs]  # fmt: skip

        assert glyphs(ours) == glyphs(theirs), source
        assert np.allclose(ours.rects, theirs.rects), source


def _tokenise(source: str) -> list[str]:
    out = []
    while source:
        token = max((t for t in TOKENS if source.startswith(t)), key=len)
        out.append(token)
        source = source[len(token) :]
    return out
