"""Position probability matrices ``(width, 4)``: from counts, information, consensus, trim.

Information is in bits against a uniform background, as sequence logos show it.
"""

from __future__ import annotations

import numpy as np

from .sequence import ALPHABET


def probability_matrix(windows: np.ndarray, pseudocount: float = 0.1) -> np.ndarray:
    """(width, 4) base probabilities of one-hot site windows ``(n, 4, width)``."""
    counts = windows.sum(axis=0).T.astype(np.float64) + pseudocount
    return counts / counts.sum(axis=1, keepdims=True)


def information_content(probs: np.ndarray) -> np.ndarray:
    """Bits per position against a uniform background: 2 + sum p log2 p."""
    p = np.clip(probs, 1e-12, 1.0)
    return 2.0 + (p * np.log2(p)).sum(axis=1)


def consensus(probs: np.ndarray, *, strong: float = 1.0, weak: float = 0.5) -> str:
    """Most likely base per position: upper case at >= ``strong`` bits, lower case at >=
    ``weak`` bits, ``n`` below."""
    ic = information_content(probs)
    out = []
    for row, bits in zip(probs, ic):
        base = ALPHABET[int(np.argmax(row))]
        out.append(base if bits >= strong else base.lower() if bits >= weak else "n")
    return "".join(out)


def relative_entropy(probs: np.ndarray, background: np.ndarray) -> np.ndarray:
    """Bits per position against ``background`` (KL divergence, base 2)."""
    p = np.clip(probs, 1e-12, 1.0)
    q = np.clip(np.asarray(background, dtype=float), 1e-12, 1.0)
    return (p * np.log2(p / q)).sum(axis=1)


def trim(
    probs: np.ndarray, min_bits: float = 0.25, background: np.ndarray | None = None
) -> tuple[int, int]:
    """[start, end) of ``probs`` without low-information flanks (whole matrix if none pass).

    Information is measured against ``background`` when given (so that, in an AT-rich
    genome, flanks that merely follow the genome's composition count as uninformative),
    else against a uniform background.
    """
    bits = information_content(probs) if background is None else relative_entropy(probs, background)
    keep = np.flatnonzero(bits >= min_bits)
    if len(keep) == 0:
        return 0, len(probs)
    return int(keep[0]), int(keep[-1]) + 1


def dinucleotide_bits(probs: np.ndarray, pair: str) -> float:
    """Best ``min(bits of first, bits of second)`` over adjacent positions whose most likely
    bases read ``pair`` (0 if none do)."""
    ic = information_content(probs)
    a, b = ALPHABET.index(pair[0]), ALPHABET.index(pair[1])
    best = probs.argmax(axis=1)
    hits = np.flatnonzero((best[:-1] == a) & (best[1:] == b))
    return float(np.minimum(ic[hits], ic[hits + 1]).max()) if len(hits) else 0.0


def has_dinucleotide(probs: np.ndarray, pair: str, min_bits: float = 1.5) -> bool:
    """Whether two adjacent positions are ``pair`` (argmax bases) with >= ``min_bits`` each."""
    return dinucleotide_bits(probs, pair) >= min_bits


def aligned_kl(query: np.ndarray, reference: np.ndarray) -> tuple[float, int]:
    """Mean KL divergence ``KL(query || reference)`` in bits per column at the best ungapped
    alignment (same strand), and that offset (reference column of the query's first column).

    The narrower matrix must lie wholly inside the wider one (a trimmed motif inside a wide
    annotated site window), so every column of it is compared. Hand-written: Tomtom scores
    alignments by p-value, not by the divergence the benchmark's floor is stated in.
    """
    q, r = np.asarray(query, dtype=float), np.asarray(reference, dtype=float)
    flip = len(q) > len(r)
    narrow, wide = (r, q) if flip else (q, r)
    best, best_offset = np.inf, 0
    for offset in range(len(wide) - len(narrow) + 1):
        part = wide[offset : offset + len(narrow)]
        p, ref = (part, narrow) if flip else (narrow, part)
        value = float(relative_entropy(p, ref).mean())
        if value < best:
            best, best_offset = value, offset
    return best, (-best_offset if flip else best_offset)
