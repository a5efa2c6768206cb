"""Did export recover the planted motifs? Tomtom names checked against the known truth.

A planted JASPAR motif counts as recovered when it is the Tomtom *best* match, at q below
``q_named`` (0.01), of some exported motif. The shuffled control (column-shuffled copies of
every exported motif, matched the same way) passes when none of them reaches q < ``q_control``
(0.05). The channel the motif metrics matched to each planted motif is reported beside it, with
that channel's best match, so a near-duplicate database motif winning is visible as such.
"""

from __future__ import annotations


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
