"""Did export recover the planted motifs? Tomtom names checked against the known truth.

A planted JASPAR motif counts as recovered when it is the Tomtom *best* match, at q below
``q_named`` (0.01), of some exported motif. The shuffled control (column-shuffled copies of
every exported motif, matched the same way) passes when none of them reaches q < ``q_control``
(0.05). The channel the motif metrics matched to each planted motif is reported beside it, with
that channel's best match, so a near-duplicate database motif winning is visible as such.

:func:`truth_recovery` asks the question of a head-to-head instead: were the planted motifs
*found*, whatever JASPAR calls them? Each exported motif is compared by Tomtom with the planted
PWMs themselves (the way TF-MoDISco's own benchmarks compare patterns with the ground truth),
since a planted TCP9 found as a PWM whose best database match is its sibling TCP8 (the two
differ by less than the sites can tell) was recovered, not missed.
"""

from __future__ import annotations

import numpy as np


def planted_recovery(
    summary: dict,
    planted: list[str],
    *,
    channel_to_symbol: dict[str, str] | None = None,
    q_named: float = 0.01,
    q_control: float = 0.05,
) -> dict:
    """Recovery of ``planted`` (JASPAR matrix ids) by the motifs of a ``motifs.json`` summary."""
    by_channel = {str(m["channel"]): m for m in summary["motifs"]}
    symbol_channel = {s: c for c, s in (channel_to_symbol or {}).items()}
    per_motif = {}
    for matrix_id in planted:
        hits = [
            m
            for m in summary["motifs"]
            if (m.get("best_match") or {}).get("target_id") == matrix_id
            and m["best_match"]["q_value"] < q_named
        ]
        channel = symbol_channel.get(matrix_id)
        mapped = by_channel.get(channel) if channel is not None else None
        best = (mapped or {}).get("best_match") or {}
        per_motif[matrix_id] = {
            "recovered": bool(hits),
            "by": [m["id"] for m in hits],
            "q_value": min((m["best_match"]["q_value"] for m in hits), default=None),
            "mapped_motif": mapped["id"] if mapped else None,
            "mapped_best_match": best.get("target_id"),
            "mapped_best_name": best.get("target_name"),
            "mapped_best_q": best.get("q_value"),
        }
    control_q = (summary.get("shuffled_control") or {}).get("best_q") or []
    false_matches = sum(1 for q in control_q if q < q_control)
    recovered = sum(1 for v in per_motif.values() if v["recovered"])
    return {
        "planted": len(planted),
        "recovered": recovered,
        "control_motifs": len(control_q),
        "control_false_matches": false_matches,
        "q_named": q_named,
        "q_control": q_control,
        "passed": recovered == len(planted) and false_matches == 0,
        "per_motif": per_motif,
    }


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
    from ..export.families import tomtom_between
    from ..export.naming import shuffle_columns

    ids, targets = list(exported), list(planted)
    if not ids or not targets:
        return {"planted": len(targets), "exported": len(ids), "recovered": [],
                "recovered_count": 0, "spurious": len(ids), "by": {},
                "control_false_matches": 0, "q_threshold": q_threshold}  # fmt: skip
    probs = [np.asarray(exported[i], float) for i in ids]
    sim = tomtom_between(probs, [np.asarray(planted[t], float) for t in targets])
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
    control = tomtom_between(shuffled, [np.asarray(planted[t], float) for t in targets])
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
