"""Where a motif sits inside introns, against the intron-matched null.

The window null of ``positions.py`` asks "is the motif placed at a particular distance from
the sites, given where in genes it occurs?". In a genome of short introns (Arabidopsis: most
are under 150 nt) every intronic position lies within ~100 nt of an acceptor and of a donor,
so a motif that simply sits anywhere in introns looks enriched upstream of acceptors *and*
downstream of donors under that null. The question a branch-point claim needs is narrower: is
the motif enriched at -18..-45 nt from the acceptor *relative to other positions of the same
introns*?

**Null**: each intronic site is replaced by a uniformly drawn position of *its own intron*
(the run of intronic positions holding it, cut by the window's ends where the window cuts the
intron), so intron length, and with it the spread of distances an intron offers, is matched
exactly. The expected count in a distance bin is the sum over intronic sites of the share of
their intron's positions in that bin (exact, not sampled); the test is the Poisson upper tail,
q-values by Benjamini-Hochberg over every bin of every class, as in ``positions.py``. Sites
outside introns are not counted here.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from ..genome.regions import REGIONS
from .positions import (
    PositionalContext,
    PositionSettings,
    bin_categories,
    bin_edges,
    poisson_upper,
    ratio_or_none,
)

INTRON = REGIONS.index("intron")
NULL = ("each intronic site replaced by a uniformly drawn position of its own intron "
        "(intron length matched exactly)")  # fmt: skip


def intron_runs(context: PositionalContext) -> np.ndarray:
    """(windows, window) id of the intron run each scorable intronic position lies in (-1
    elsewhere): a run is a maximal stretch of intronic positions of one window."""
    intronic = (context.region == INTRON) & context.scorable
    starts = intronic.copy()
    starts[:, 1:] &= ~intronic[:, :-1]
    ids = np.cumsum(starts.ravel()).reshape(intronic.shape) - 1
    return np.where(intronic, ids, -1)


def intron_matched_enrichment(
    context: PositionalContext,
    window: np.ndarray,
    position: np.ndarray,
    settings: PositionSettings | None = None,
) -> dict:
    """Per class, the observed and intron-matched expected counts of a motif's intronic sites
    (output ``position`` of the context's windows ``window``) in each distance bin, with
    ratio, p and q; ``{"available": False}`` without region labels."""
    if context.region is None:
        return {"available": False}
    settings = settings or PositionSettings()
    runs = intron_runs(context)
    window = np.asarray(window, dtype=np.int64)
    position = np.asarray(position, dtype=np.int64)
    inside = (position >= 0) & (position < runs.shape[1])
    window, position = window[inside], position[inside]
    site_run = runs[window, position]
    window, position, site_run = window[site_run >= 0], position[site_run >= 0], \
        site_run[site_run >= 0]  # fmt: skip
    edges = bin_edges(settings)
    nb = len(edges) - 1
    n_runs = int(runs.max()) + 1
    length = np.bincount(runs[runs >= 0], minlength=n_runs).astype(float)
    per_run_sites = np.bincount(site_run, minlength=n_runs).astype(float)
    tests, blocks = [], {}
    for c, name in enumerate(context.classes):
        cat = bin_categories(context.distance[:, c, :], edges)
        counts = np.zeros((n_runs, nb + 1))
        np.add.at(counts, (runs[runs >= 0], cat[runs >= 0]), 1.0)
        expected = per_run_sites @ (counts / np.maximum(length, 1.0)[:, None])
        observed = np.bincount(cat[window, position], minlength=nb + 1).astype(float)
        blocks[name] = (observed, expected)
        tests += list(zip(observed[:nb], expected[:nb]))
    p = poisson_upper(np.array([t[0] for t in tests]), np.array([t[1] for t in tests]))
    q = stats.false_discovery_control(p, method="bh") if len(p) else p
    classes = {}
    for i, (name, (o, e)) in enumerate(blocks.items()):
        rows = slice(i * nb, (i + 1) * nb)
        classes[name] = {"observed": o[:nb].astype(int).tolist(),
                         "expected": np.round(e[:nb], 3).tolist(),
                         "ratio": [ratio_or_none(a, b) for a, b in zip(o[:nb], e[:nb])],
                         "p": [float(v) for v in p[rows]], "q": [float(v) for v in q[rows]]}
    return {"available": True, "n_sites": int(len(window)), "introns": n_runs,
            "bin_edges": edges.tolist(), "null": NULL,
            "test": "Poisson upper tail, Benjamini-Hochberg over all bins and classes",
            "classes": classes}  # fmt: skip


def enriched_bins(block: dict, name: str, lo: int, hi: int, q_threshold: float = 0.05) -> list:
    """The bins of class ``name`` overlapping ``[lo, hi)`` nt that are enriched (ratio > 1,
    q below ``q_threshold``) against the intron-matched null: ``(bin_lo, bin_hi, ratio, q)``."""
    if not block.get("available") or name not in block["classes"]:
        return []
    edges, entry = block["bin_edges"], block["classes"][name]
    return [(edges[b], edges[b + 1], entry["ratio"][b], entry["q"][b])
            for b in range(len(edges) - 1)
            if edges[b] < hi and edges[b + 1] > lo and entry["q"][b] < q_threshold
            and (entry["ratio"][b] or 0) > 1]  # fmt: skip


def intron_summary(block: dict, q_threshold: float = 0.05) -> str:
    """One line: where a motif's intronic sites are enriched against their own introns."""
    if not block.get("available"):
        return "no region labels: the intron-matched null is unavailable"
    if not block["n_sites"]:
        return "no sites inside introns"
    found = []
    for name in block["classes"]:
        for lo, hi, ratio, q in enriched_bins(block, name, -10**9, 10**9, q_threshold):
            where = f"{-hi + 1}-{-lo} nt upstream" if hi <= 0 else f"{lo}-{hi - 1} nt downstream"
            found.append((ratio, f"{where} of {name}s (x{ratio:.2f}, q {q:.2g})"))
    head = f"{block['n_sites']:,} sites inside introns"
    if not found:
        return f"{head}: no distance enriched against other positions of their own introns"
    best = [text for _, text in sorted(found, reverse=True)[:3]]
    return f"{head}, against other positions of their own introns: enriched " + "; ".join(best)
