"""LaTeX-OCR expressions (the Sparling paper's second domain): tokens and the paper's grammar.

An expression is a string of 1-30 output tokens from the paper's grammar (its ``latex_cfg``;
weights in brackets, default 1)::

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
"""

from __future__ import annotations

from functools import cache

import numpy as np

from ..errors import ConfigError

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

MAX_TOKENS = 60  # the longest expression a spec may ask for


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
