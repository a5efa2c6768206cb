"""Grammar between families: preferred signed spacings between two families' sites.

For each ordered pair of families (A, B) and each signed spacing ``s = b - a`` within
``max_spacing`` (transcript orientation, as the windows are; positive: B downstream of A), the
observed number of site pairs of one window at that spacing is compared with a
shuffled-position null: B's sites of each window moved to uniformly drawn scorable positions of
the same window, A's kept. The expected count is exact, not sampled: ``sum over windows of
n_B(w) / S(w) * #{a in A(w): a + s scorable}``, ``S(w)`` the window's scorable positions.
Spacings are pooled in bins of ``bin_width``; the test is the Poisson upper tail and q-values
are Benjamini-Hochberg over every bin of every pair. A pair of one family with itself counts
each pair of distinct sites once per order (spacing 0 is left out).

A spacing shorter than half the two representatives' widths summed means the sites overlap:
two families that are shifted copies of one motif show such a peak, which is redundancy, not
grammar; such bins are flagged ``overlap``. Sums over windows are cross-correlations, done by
FFT (numpy): a pair costs a few products of (windows x positions) spectra.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from .positions import poisson_upper, ratio_or_none

MAX_SPACING = 100
BIN_WIDTH = 5
CHUNK = 128  # windows whose spectra are held at once


def _window_lags(product: np.ndarray, size: int, max_spacing: int) -> np.ndarray:
    """Per row, the cross-correlation at lags -max..+max from its spectrum product
    ``conj(A) * B``."""
    corr = np.fft.irfft(product, n=size, axis=-1)
    return np.concatenate([corr[..., -max_spacing:], corr[..., : max_spacing + 1]], axis=-1)


def spacing_enrichment(
    scorable: np.ndarray,
    sites: dict[str, np.ndarray],
    widths: dict[str, int] | None = None,
    *,
    max_spacing: int = MAX_SPACING,
    bin_width: int = BIN_WIDTH,
    q_threshold: float = 0.05,
) -> dict:
    """Preferred spacings between families. ``scorable``: (windows, positions) bool;
    ``sites[name]``: (n, 2) rows of (window ordinal, position); ``widths``: each family's
    representative width (for the overlap flag). Returns the settings, every tested pair's
    bins and the enriched ones (q below ``q_threshold``, ratio > 1), largest ratio first."""
    windows, length = scorable.shape
    size = 1 << int(np.ceil(np.log2(length + max_spacing + 1)))
    names = list(sites)
    rows_of = {}
    for name in names:
        rows = np.asarray(sites[name], dtype=np.int64).reshape(-1, 2)
        rows = rows[(rows[:, 1] >= 0) & (rows[:, 1] < length)]
        rows_of[name] = rows[scorable[rows[:, 0], rows[:, 1]]]
    edges = np.arange(-max_spacing, max_spacing + 2, bin_width)
    edges[-1] = max_spacing + 1
    lags = np.arange(-max_spacing, max_spacing + 1)
    which = np.searchsorted(edges, lags, side="right") - 1
    nb = len(edges) - 1
    observed = {(a, b): np.zeros(len(lags)) for a in names for b in names}
    expected = {(a, b): np.zeros(len(lags)) for a in names for b in names}
    total = np.maximum(scorable.sum(axis=1), 1).astype(float)
    for lo in range(0, windows, CHUNK):  # spectra of CHUNK windows at a time: bounded memory
        hi = min(lo + CHUNK, windows)
        mask_spec = np.fft.rfft(scorable[lo:hi].astype(float), n=size, axis=1)
        spec, counts, room = {}, {}, {}
        for name in names:
            x = np.zeros((hi - lo, length))
            rows = rows_of[name][(rows_of[name][:, 0] >= lo) & (rows_of[name][:, 0] < hi)]
            np.add.at(x, (rows[:, 0] - lo, rows[:, 1]), 1.0)
            spec[name], counts[name] = np.fft.rfft(x, n=size, axis=1), x.sum(axis=1)
            # #{a in A(w): a + s scorable} per window and lag.
            room[name] = _window_lags(np.conj(spec[name]) * mask_spec, size, max_spacing)
        for a in names:
            for b in names:
                product = (np.conj(spec[a]) * spec[b]).sum(axis=0)
                observed[a, b] += np.rint(_window_lags(product[None], size, max_spacing)[0])
                expected[a, b] += (counts[b] / total[lo:hi]) @ room[a]
    tested = []
    for a in names:
        for b in names:
            o, e = observed[a, b], expected[a, b]
            if a == b:  # a site with itself is no pair; a moved site meets its own origin
                o[max_spacing] = 0.0
                e = e - _self_term(rows_of[a], total, lags, scorable)
                e[max_spacing] = 0.0
            tested.append((a, b, np.bincount(which, weights=o, minlength=nb),
                           np.bincount(which, weights=np.maximum(e, 0.0), minlength=nb)))
    p = poisson_upper(np.concatenate([t[2] for t in tested]),
                      np.concatenate([t[3] for t in tested])) if tested else np.zeros(0)
    q = stats.false_discovery_control(p, method="bh") if len(p) else p
    widths = widths or {}
    pairs, enriched = [], []
    for i, (a, b, o, e) in enumerate(tested):
        rows = slice(i * nb, (i + 1) * nb)
        overlap = (widths.get(a, 0) + widths.get(b, 0)) / 2
        entry = {"a": a, "b": b, "observed": o.astype(int).tolist(),
                 "expected": np.round(e, 3).tolist(),
                 "ratio": [ratio_or_none(x, y) for x, y in zip(o, e)],
                 "q": [float(v) for v in q[rows]]}  # fmt: skip
        pairs.append(entry)
        for k in range(nb):
            ratio = entry["ratio"][k]
            if entry["q"][k] < q_threshold and ratio is not None and ratio > 1:
                lo, hi = int(edges[k]), int(edges[k + 1]) - 1
                enriched.append({"a": a, "b": b, "spacing": [lo, hi],
                                 "observed": int(o[k]), "expected": round(float(e[k]), 3),
                                 "ratio": ratio, "q": entry["q"][k],
                                 "overlap": bool(min(abs(lo), abs(hi)) < overlap
                                                 or lo <= 0 <= hi)})  # fmt: skip
    enriched.sort(key=lambda r: (r["overlap"], -r["ratio"], r["q"]))
    return {"max_spacing": max_spacing, "bin_width": bin_width, "bin_edges": edges.tolist(),
            "null": "B's sites of each window moved to uniform scorable positions of that "
            "window, A's kept", "test": "Poisson upper tail, Benjamini-Hochberg over every "
            "bin of every ordered pair", "pairs": pairs, "enriched": enriched}  # fmt: skip


def _self_term(rows: np.ndarray, total: np.ndarray, lags: np.ndarray,
               scorable: np.ndarray) -> np.ndarray:  # fmt: skip
    """For A = B: the null's expected pairs of a site with its own moved copy (the null
    moves every site, so a site is never paired with itself): sum over sites of
    [a + s scorable] / S(w), removed from the expectation."""
    out = np.zeros(len(lags))
    w_idx, pos = rows[:, 0], rows[:, 1]
    for i, s in enumerate(lags):
        target = pos + s
        ok = (target >= 0) & (target < scorable.shape[1])
        hit = np.zeros(len(pos), bool)
        hit[ok] = scorable[w_idx[ok], target[ok]]
        out[i] = float((hit / total[w_idx]).sum())
    return out
