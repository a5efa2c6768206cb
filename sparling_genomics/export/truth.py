"""Were the planted motifs *found*? Exported motifs judged by Tomtom against the planted PWMs
themselves, the way TF-MoDISco's own benchmarks compare patterns with the ground truth.

The stricter check of :mod:`sparling_genomics.evaluate.motif_recovery` asks whether a planted
motif is some exported motif's best match in all of JASPAR; that scores a planted TCP9 found
as a PWM whose best database match is its sibling TCP8 (the two differ by less than the sites
can tell) as missed. A head-to-head of motif finders asks the question here instead, and
reports both.
"""

from __future__ import annotations

import numpy as np

from .families import tomtom_between
from .naming import shuffle_columns


def truth_recovery(
    exported: dict[str, np.ndarray],
    planted: dict[str, np.ndarray],
    *,
    q_threshold: float = 0.01,
    seed: int = 0,
) -> dict:
    """Recovery of the ``planted`` PWMs ``{id: (width, 4)}`` by the ``exported`` motifs
    ``{id: (width, 4)}``, judged against the planted PWMs themselves.

    Tomtom (both strands, JASPAR padding columns in the null, q by Benjamini-Hochberg over
    the planted motifs per exported motif): an exported motif *recovers* its best-matching
    planted motif when that match has q < ``q_threshold``; it is *spurious* when it matches
    no planted motif at that q. The control matches column-shuffled copies of the exported
    motifs the same way and counts those that would have recovered something."""
    ids, targets = list(exported), list(planted)
    if not ids or not targets:
        return {"planted": len(targets), "exported": len(ids), "recovered": [],
                "recovered_count": 0, "spurious": len(ids), "by": {},
                "control_false_matches": 0, "q_threshold": q_threshold}  # fmt: skip
    probs = [np.asarray(exported[i], float) for i in ids]
    truth = [np.asarray(planted[t], float) for t in targets]
    sim = tomtom_between(probs, truth)
    by: dict[str, list[str]] = {}
    spurious = 0
    for row, motif_id in enumerate(ids):
        best = int(np.argmin(sim.p[row]))
        if sim.q[row, best] < q_threshold:
            by.setdefault(targets[best], []).append(motif_id)
        if not np.any(sim.q[row] < q_threshold):
            spurious += 1
    rng = np.random.default_rng(seed)
    shuffled = [shuffle_columns(p, rng) for p in probs]
    control = tomtom_between(shuffled, truth)
    recovered = [t for t in targets if t in by]
    return {
        "planted": len(targets),
        "exported": len(ids),
        "recovered": recovered,
        "recovered_count": len(recovered),
        "spurious": spurious,
        "by": by,
        "best_q": {t: float(sim.q[:, j].min()) for j, t in enumerate(targets)},
        "control_false_matches": int((control.q.min(axis=1) < q_threshold).sum()),
        "q_threshold": q_threshold,
    }
