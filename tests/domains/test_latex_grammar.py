"""LaTeX-OCR expressions: the length-conditioned sampler draws as the paper's rejection sampler."""

from collections import Counter

import numpy as np

from sparling_genomics.domains.latex_grammar import GRAMMAR, TOKENS, random_expression


def _unconditional(rng, name="start"):
    """The paper's sampler: expand the grammar freely (then keep the lengths wanted)."""
    if name not in GRAMMAR:
        return [name]
    weights = np.cumsum([w for w, _ in GRAMMAR[name]])
    _, elements = GRAMMAR[name][int(np.searchsorted(weights, rng.random() * weights[-1]))]
    return [t for e in elements for t in _unconditional(rng, e)]


def test_length_conditioned_sampler_has_the_distribution_of_rejection_sampling():
    """Shapes of 4-token expressions (symbols blanked) are as frequent as when expressions
    are drawn freely from the grammar and those of other lengths rejected."""
    rng = np.random.default_rng(1)
    chars = set("0123456789xyzabc")

    def shape(tokens):
        return " ".join("S" if t in chars else t for t in tokens)

    free = Counter()
    while sum(free.values()) < 2000:
        expr = _unconditional(rng)
        if len(expr) == 4:
            free[shape(expr)] += 1
    ours = Counter(shape([TOKENS[t] for t in random_expression(rng, 4)]) for _ in range(2000))
    assert len(free) >= 6
    for key in set(free) | set(ours):
        p, q = free[key] / 2000, ours[key] / 2000
        assert abs(p - q) < 4.5 * np.sqrt(2 * max(p, 2e-3) / 2000), (key, p, q)
