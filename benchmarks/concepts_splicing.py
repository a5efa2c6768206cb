"""The concepts benchmark's splicing part (issue 21): the extractors on a real genome.

``python -m benchmarks concepts --out bench_runs/concepts_i21 --parts splicing``

On TAIR10 chr1 (the ``splicing`` benchmark's dataset: annotated donors and acceptors, test
block the last 20% of the chromosome) a Sparling run and the same network without the sparse
layer, both the splicing ``cpu`` preset, seed 0, under the preset's one wall-clock budget.
Sparling's channels are exported by ``export`` (PWMs, names against the splicing reference,
families, positional enrichment); the non-sparse run's ``hidden`` layer goes to every
extractor and to ISM + TF-MoDISco-lite through ``concepts``, which names, clusters and places
their motifs the same way. Per method: motifs, families, whether a family is named the
annotated donor or acceptor, branch-point-like families and families enriched away from the
sites (``splicing_families``' rules, the splicing benchmark's), names against shuffled
controls, time."""

from __future__ import annotations

import json
import time
from pathlib import Path

from sparling_genomics.export.motif_summary import motifs_summary_path
from sparling_genomics.io import write_json_atomic
from sparling_genomics.rundir import motifs_dir, read_metrics
from sparling_genomics.train.run_config import resolve_config

from .report import concepts_code, run_or_resume
from .splicing import build_dataset_measured
from .splicing_families import export_or_read, family_figures

REFERENCE = "tair10-chr1"
MODELS = {"sparling": {}, "baseline": {"model": {"sparse_layer": False}}}
#: ISM (tangermeme, fastISM) takes ~5.5 s per 1,400-nt window of the splicing network on 2
#: cores, so 200 windows (~600 annotated sites, ~18 min) rather than the planted sets' 500.
MODISCO_WINDOWS = 200
SHOWN_FAMILIES = 6  # per method in the families table (largest first)


def splicing_runs(out: Path) -> dict[str, Path]:
    """The Sparling and non-sparse splicing runs (trained now unless finished earlier) on the
    dataset built into ``out`` (once)."""
    dataset = out / "splicing_dataset.h5"
    if not dataset.exists():
        build = build_dataset_measured(dataset, REFERENCE)
        write_json_atomic(out / "splicing_dataset_build.json", build)
    runs = {}
    for name, sets in MODELS.items():
        overrides = [{"seed": 0, "data": {"dataset": str(dataset)}}, sets]
        config = resolve_config("splicing", "cpu", overrides=overrides)
        runs[name] = out / f"splicing_{name}"
        run_or_resume(runs[name], config)
    return runs


def _named(families: list[dict], word: str) -> list[str]:
    return [f["id"] for f in families
            if f["learned_members"] and word in (f.get("name") or "")]  # fmt: skip


def earlier_export_seconds(out: Path) -> float | None:
    """The seconds Sparling's export took when an earlier run of this part made it (the
    export is then read, in no time), else None."""
    earlier = Path(out) / "bench_concepts_splicing.json"
    sparling = motifs_summary_path(motifs_dir(Path(out) / "splicing_sparling"))
    if not (earlier.exists() and sparling.exists()):
        return None
    seconds = json.loads(earlier.read_text())["methods"]["sparling"]["seconds"]
    return seconds if seconds >= 1.0 else None


def method_figures(summary: dict, seconds: float) -> dict:
    """One method's row: ``family_figures`` of its motifs.json-shaped summary, plus which
    families are named the annotated donor, acceptor and branch point."""
    figures = family_figures(summary)
    families = figures["families"]
    return {
        "exported": len(summary["motifs"]),
        "silent": len(summary.get("silent_concepts") or []),
        **{k: figures[k] for k in ("learned_families", "redundant_learned", "branch_point_like",
                                   "away_from_sites", "named", "shuffled_named",
                                   "shuffled_motifs")},
        "donor_families": _named(families, "donor"),
        "acceptor_families": _named(families, "acceptor"),
        "branch_point_named": _named(families, "branchpoint"),
        "families": [{k: f[k] for k in ("id", "consensus", "nsites", "name", "best_match",
                                        "learned_members", "core_members", "where")}
                     for f in families],
        "seconds": round(seconds, 1),
    }  # fmt: skip


def splicing_part(out: Path, steps: int) -> dict:
    from sparling_genomics.runners.concepts import (
        ALL_METHODS,
        ConceptSettings,
        extract_run_concepts,
    )

    out = Path(out)
    runs = splicing_runs(out)
    metrics = {k: read_metrics(r) for k, r in runs.items()}
    earlier = earlier_export_seconds(out)  # before export_or_read writes one
    began = time.perf_counter()
    exported = export_or_read(runs["sparling"])
    methods = {"sparling": method_figures(exported, time.perf_counter() - began)}
    if earlier is not None:  # read, not exported: the earlier export's own time
        methods["sparling"]["seconds"] = earlier
    settings = ConceptSettings(methods=ALL_METHODS, steps=steps, modisco_windows=MODISCO_WINDOWS)
    summary = extract_run_concepts(runs["baseline"], out / "splicing_concepts", settings=settings)
    for method, entry in summary["methods"].items():
        methods[method] = method_figures(entry, entry["seconds"])
    return {
        "reference": REFERENCE,
        "concepts_code": concepts_code(),
        "steps": steps,
        "modisco_windows": MODISCO_WINDOWS,
        "rows": summary["rows"],
        "fit_rows": summary["fit_rows"],
        "training": {k: {"mean_topk": m["e2e"]["mean_topk"], "seconds": m.get("wall_seconds"),
                         "samples": m.get("samples_seen"), "stopped_by": m.get("stopped_by"),
                         "density": m.get("density")}
                     for k, m in metrics.items()},  # fmt: skip
        "methods": methods,
    }


def _ids(ids: list[str]) -> str:
    return ", ".join(i.rsplit("_", 1)[-1] for i in ids) or "-"


def splicing_markdown(part: dict, labels: dict[str, str]) -> list[str]:
    """The part's lines of the concepts section."""
    tr = part["training"]
    sp, base = tr["sparling"], tr["baseline"]
    lines = ["", "### Splicing (TAIR10 chr1)", "",
             f"Sparling and the same network without the sparse layer, splicing `--preset cpu`, "
             f"seed 0, one wall-clock budget each (Sparling: test mean top-k "
             f"{sp['mean_topk']:.3f}, {sp['samples']:,} samples in {sp['seconds']:.0f} s, "
             f"density {sp['density']:.5f}; non-sparse: {base['mean_topk']:.3f}, "
             f"{base['samples']:,} samples in {base['seconds']:.0f} s). Sparling's channels "
             "exported by `export`; the non-sparse run's `hidden` layer "
             f"({part['rows']:,} test rows, extractors fitted on {part['fit_rows']:,}, "
             f"{part['steps']} steps, block and k by MDL) and ISM + TF-MoDISco-lite "
             f"({part['modisco_windows']} test windows) exported by `concepts`. Every method's "
             "motifs are named against the splicing reference (annotated donor and acceptor "
             "PWMs of the training block, the branch point, plant ESE hexamers; JASPAR as "
             "Tomtom's decoys), clustered into families and placed against the annotated "
             "sites of the test block as `export` does it. Branch-point-like and away-from-"
             "sites: the splicing benchmark's rules. Families are named by family number."
             + (f" Extractors: `sparling_genomics/concepts` as of {part['concepts_code']}."
                if part.get("concepts_code") else ""), "",
             "| motifs from | motifs (silent) | families | donor named | acceptor named | "
             "branch point named | branch-point-like | away from sites | redundant motifs "
             "| named / shuffled named | seconds |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for method, r in part["methods"].items():
        lines.append(
            f"| {labels.get(method, method)} | {r['exported']} ({r['silent']}) "
            f"| {r['learned_families']} | {_ids(r['donor_families'])} "
            f"| {_ids(r['acceptor_families'])} | {_ids(r['branch_point_named'])} "
            f"| {_ids(r['branch_point_like'])} | {_ids(r['away_from_sites'])} "
            f"| {r['redundant_learned']} | {r['named']} / {r['shuffled_named']} of "
            f"{r['shuffled_motifs']} | {r['seconds']:.0f} |")  # fmt: skip
    lines += ["", f"Each method's largest families (up to {SHOWN_FAMILIES}; Sparling: learned "
              "channels' families, the supplied core's counted apart):", "",
              "| motifs from | family | consensus | sites | best match (named) | where |",
              "|---|---|---|---|---|---|"]  # fmt: skip
    for method, r in part["methods"].items():
        shown = [f for f in r["families"] if f["learned_members"]][:SHOWN_FAMILIES]
        for f in shown:
            named = "yes" if f.get("name") else "no"
            where = (f.get("where") or "-").split("; ")[:2]
            lines.append(f"| {labels.get(method, method)} | {f['id']} | `{f['consensus']}` "
                         f"| {f['nsites']} | {f.get('best_match') or '-'} ({named}) "
                         f"| {'; '.join(where)} |")  # fmt: skip
    return lines
