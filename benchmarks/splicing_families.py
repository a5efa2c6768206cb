"""The splicing benchmark's family measurements: what the issue's floors ask of the families.

Each Sparling model of the benchmark is exported as a user's run is (``export_run_motifs``:
PWMs, names against the splicing reference, families, positional enrichment on the test
block, into ``RUN/motifs``), and its ``motifs.json`` is read into the figures the benchmark
reports: families among the learned channels, redundant learned channels (near-copies),
branch-point-like families (significant enrichment 15-40 nt upstream of acceptors) and
families enriched away from the sites (beyond 300 nt of every site, or in exons or introns);
and issue 57's: composition-labelled families and their share of the summed effect, families
enriched 18-45 nt upstream of acceptors against the intron-matched null, and the strongest
preferred spacing between two different families.
"""

from __future__ import annotations

from pathlib import Path

from sparling_genomics.evaluate.composition import refine_label
from sparling_genomics.evaluate.intron_null import enriched_bins
from sparling_genomics.evaluate.positions import positional_summary, significant_bins
from sparling_genomics.export.motif_summary import read_motifs_summary
from sparling_genomics.rundir import motifs_dir
from sparling_genomics.runners.export import export_run_motifs

Q = 0.05  # significance of a positional bin (Benjamini-Hochberg q, as the export's summary)
#: "15-40 nt upstream of acceptors": the bins that overlap it, ending at or before -15 nt
#: (the [-15, 0) bin holds the AG and the polypyrimidine tract, the core's signal).
BRANCH_RANGE = (-40, -15)
#: The within-intron control: plant introns are short (chr1 median ~100 nt), so any
#: intronic signal is enriched upstream of acceptors; a branch point is enriched at
#: BRANCH_RANGE *more than* farther upstream in the same introns (on chr1 `CT[AG]A[CT]` is
#: 2.7x more frequent at -15..-30 than at -45..-60).
CONTROL_RANGE = (-90, -45)
MIN_RATIO = 1.5  # observed / expected of a bin, and branch-range over control-range ratio
#: "Away from the sites": enriched in exons or introns (or beyond the binned range) by at
#: least AWAY_RATIO, and not a site motif: below SITE_RATIO in the bins that touch a site
#: ([-15, 0) and [0, 15) nt of every class).
AWAY_RATIO = 1.2
SITE_RATIO = 2.0
#: Issue 57's branch-point window against the intron-matched null (nt from acceptors).
INTRON_BRANCH = (-45, -18)


def export_or_read(run: Path) -> dict:
    """``RUN/motifs/motifs.json``: read when an earlier benchmark run exported it, else exported
    now (the export's whole output, as the ``export`` verb writes it)."""
    summary = read_motifs_summary(motifs_dir(run), missing_ok=True)
    return summary if summary is not None else export_run_motifs(run)


def branch_point_like(block: dict) -> bool:
    """A family's positions block is enriched (q < Q, ratio >= MIN_RATIO) in a bin upstream of
    acceptors that overlaps BRANCH_RANGE and ends at or before its upper end, and that bin's
    ratio is at least MIN_RATIO x the mean ratio of the CONTROL_RANGE bins."""
    acceptor = block.get("classes", {}).get("acceptor")
    if acceptor is None:
        return False
    edges = block["bin_edges"]
    control = [r or 0.0 for b, r in enumerate(acceptor["ratio"])
               if edges[b] >= CONTROL_RANGE[0] and edges[b + 1] <= CONTROL_RANGE[1]]  # fmt: skip
    baseline = sum(control) / len(control) if control else 1.0
    lo, hi = BRANCH_RANGE
    return any(
        b.get("class") == "acceptor" and "lo" in b and lo < b["hi"] <= hi
        and b["ratio"] >= MIN_RATIO and b["ratio"] >= MIN_RATIO * baseline
        for b in significant_bins(block, Q)
    )  # fmt: skip


def at_sites(block: dict) -> float:
    """A family's largest observed / expected in the bins that touch a labelled site."""
    edges = block["bin_edges"]
    near = [b for b in range(len(edges) - 1) if edges[b] >= -15 and edges[b + 1] <= 15]
    return max((c["ratio"][b] or 0.0 for c in block["classes"].values() for b in near),
               default=0.0)  # fmt: skip


def away_from_sites(block: dict) -> list[str]:
    """Where a family is enriched away from the sites: 'beyond <class>' (more sites than
    expected beyond the positional range of that class) or a region ('exon', 'intron');
    nothing for a site motif (:func:`at_sites` >= SITE_RATIO)."""
    if at_sites(block) >= SITE_RATIO:
        return []
    out = []
    for b in significant_bins(block, Q):
        if b["ratio"] < AWAY_RATIO:
            continue
        if b.get("beyond"):
            out.append(f"beyond {b['class']}")
        elif "region" in b:
            out.append(b["region"])
    return out


def family_figures(summary: dict) -> dict:
    """The benchmark's family figures from one run's ``motifs.json`` summary."""
    motifs = {m["id"]: m for m in summary["motifs"]}
    learned_ids = {i for i, m in motifs.items() if not m.get("core")}
    block = summary.get("families") or {}
    families = []
    for f in block.get("families", []):
        members = [m["id"] for m in f["members"]]
        learned = [m for m in members if m in learned_ids]
        positions = f.get("positions")
        families.append({
            "id": f["id"],
            "consensus": f["consensus"],
            "learned_members": len(learned),
            "core_members": len(members) - len(learned),
            "nsites": f["nsites"],
            "name": f.get("name"),
            "best_match": (f.get("best_match") or {}).get("target_id"),
            "branch_point_like": bool(positions) and branch_point_like(positions),
            "away_from_sites": away_from_sites(positions) if positions else [],
            "at_sites_ratio": round(at_sites(positions), 2) if positions else None,
            "where": positional_summary(positions, Q) if positions else None,
        })  # fmt: skip
    effects = {f["id"]: f.get("effect") or {} for f in block.get("families", [])}
    composition = [f["id"] for f in block.get("families", [])  # exports before "short word"
                   if refine_label((f.get("composition") or {}).get("label"), f.get("bits"),
                                   f.get("width")) == "composition"]  # fmt: skip
    in_branch = [f["id"] for f in block.get("families", [])
                 if enriched_bins(f.get("intron_positions") or {}, "acceptor",
                                  *INTRON_BRANCH, Q)]  # fmt: skip
    spacing = [p for p in (block.get("grammar") or {}).get("enriched", [])
               if p["a"] != p["b"] and not p["overlap"]]  # fmt: skip
    top = max(spacing, key=lambda p: p["ratio"], default=None)
    redundant = [i for i in (block.get("near_copies") or {}).get("redundant", [])
                 if i in learned_ids]  # fmt: skip
    with_learned = [f for f in families if f["learned_members"]]
    control = summary.get("shuffled_control") or {}
    return {
        "learned_channels": len(learned_ids),
        "learned_families": len(with_learned),
        "redundant_learned": len(redundant),
        "redundant_fraction": round(len(redundant) / len(learned_ids), 4) if learned_ids else None,
        "branch_point_like": [f["id"] for f in with_learned if f["branch_point_like"]],
        "away_from_sites": [f["id"] for f in with_learned if f["away_from_sites"]],
        "named": sum(1 for m in summary["motifs"] if m.get("name")),
        "shuffled_named": control.get("false_matches"),
        "shuffled_motifs": control.get("motifs"),
        "composition_families": composition,
        "composition_effect_share": round(sum(effects[i].get("share") or 0.0
                                              for i in composition), 4),  # fmt: skip
        "intron_branch_families": in_branch,
        "top_spacing": None if top is None else {k: top[k] for k in
                                                 ("a", "b", "spacing", "ratio", "q")},
        "families": families,
    }


def families_markdown(figures: dict[str, dict]) -> list[str]:
    """Markdown lines: one row per Sparling model, then the main model's families."""
    lines = [
        "",
        "Motif families (the `export` verb's families and positional enrichment on the test "
        f"block; enriched: q < {Q}, ratio >= {MIN_RATIO} for the branch-point range "
        f"{-BRANCH_RANGE[1]}-{-BRANCH_RANGE[0]} nt upstream of acceptors, and >= {MIN_RATIO}x "
        f"the ratio {-CONTROL_RANGE[1]}-{-CONTROL_RANGE[0]} nt upstream in the same introns; "
        f"away from sites: exon or intron share (or beyond 300 nt) >= {AWAY_RATIO}x expected "
        f"and < {SITE_RATIO}x expected within 15 nt of every site class):",
        "",
        "| model | families with learned channels | redundant learned channels "
        "| branch-point-like | enriched away from sites | named / shuffled named |",
        "|---|---|---|---|---|---|",
    ]
    for name, f in figures.items():
        lines.append(
            f"| {name} | {f['learned_families']} | {f['redundant_learned']} of "
            f"{f['learned_channels']} ({f['redundant_fraction'] or 0:.0%}) | "
            f"{', '.join(f['branch_point_like']) or 'none'} | "
            f"{', '.join(f['away_from_sites']) or 'none'} | {f['named']} / "
            f"{f['shuffled_named']} of {f['shuffled_motifs']} |"
        )
    main = figures.get("sparling")
    if main:
        lines += [
            "",
            "| family (Sparling) | consensus | learned + core channels | sites | best match "
            "| where |",
            "|---|---|---|---|---|---|",
        ]
        for f in main["families"]:
            lines.append(
                f"| {f['id']} | `{f['consensus']}` | {f['learned_members']} + "
                f"{f['core_members']} | {f['nsites']} | {f['name'] or f['best_match'] or '-'} "
                f"(named: {'yes' if f['name'] else 'no'}) | {f['where'] or '-'} |"
            )
    return lines
