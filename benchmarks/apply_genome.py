"""Apply benchmark: a trained splicing run on a genome it never saw, through the pipeline key.

Reads a finished Snakemake run whose config has an ``apply:`` entry (e.g. the default config
plus ``pipelines/config/arenosa.yaml``): the applied model's scores on every window of the
other genome (``results/<genome>/applied/<name>/metrics.json``), the same model's scores on
its own genome's held-out test block (the run's ``metrics.json``), its scan of the other
genome and the rules' timings. The comparison is measured here, in the same benchmark: the
run's non-sparse baseline scored on the same windows of the other genome (``evaluate --split
all``), so the table says whether the sparse model loses more than a dense one on the move.
"""

from __future__ import annotations

import json
from pathlib import Path

from sparling_genomics.rundir import METRICS_NAME, SCAN_SUMMARY, metrics_path, read_run_json

from .pipeline import read_rule_benchmarks, rule_table
from .report import machine_description, machine_line, publish

CLASSES = ("donor", "acceptor")
KEYS = ("mean_topk", "donor_topk", "acceptor_topk", "donor_pr_auc", "acceptor_pr_auc")


def applied_folders(workdir: Path) -> list[Path]:
    """Every ``results/<genome>/applied/<name>/`` with its metrics written."""
    return sorted(p.parent for p in (Path(workdir) / "results").glob(f"*/applied/*/{METRICS_NAME}"))


def _e2e(metrics: dict) -> dict:
    return {key: metrics["e2e"].get(key) for key in KEYS}


def _sites(metrics: dict) -> dict:
    return {name: (metrics.get("sites") or {}).get(name, {}).get("sites") for name in CLASSES}


def score_applied(workdir: Path, applied: Path, *, device: str | None = None) -> dict:
    """One applied model: its scores on the other genome and on its own test block, and the
    same two for the run's baseline (scored on the other genome now)."""
    from sparling_genomics.train.loading import evaluate_run

    workdir = Path(workdir).resolve()
    # The pipeline names its evaluate output and its job summary as a run names its metrics.
    other = json.loads((applied / METRICS_NAME).read_text())
    sparling = Path(other["run"])
    sparling = sparling if sparling.is_absolute() else workdir / sparling
    job = sparling.parent
    own = json.loads((job / METRICS_NAME).read_text())
    dataset = Path(other["dataset"])
    dataset = dataset if dataset.is_absolute() else workdir / dataset
    baseline = job / "baseline"
    row = {
        "genome": applied.parent.parent.name,
        "applied": applied.name,
        "job": str(job.relative_to(workdir / "results")),
        "dataset": str(dataset.relative_to(workdir)),
        "sites": _sites(other),
        "positions": (other.get("sites") or {}).get("positions"),
        "sparling": {"own": _e2e(own["sparling"]), "other": _e2e(other)},
        "baseline": None,
        "scan": None,
    }
    if metrics_path(baseline).is_file():
        scored = evaluate_run(baseline, split="all", dataset=dataset, device=device)
        row["baseline"] = {"own": _e2e(own["baseline"]), "other": _e2e(scored)}
    scan = applied / "tracks" / SCAN_SUMMARY
    if scan.is_file():
        s = read_run_json(scan, "made by `scan`")
        row["scan"] = {k: s.get(k) for k in ("sequences", "bases", "motifs", "sites",
                                             "scan_seconds", "total_seconds")}  # fmt: skip
    return row


def run_apply_benchmark(
    workdir: Path,
    out: Path,
    *,
    wall_seconds: float,
    command: str,
    benchmarks_md: Path = Path("BENCHMARKS.md"),
    device: str | None = None,
) -> Path:
    workdir, out = Path(workdir), Path(out)
    folders = applied_folders(workdir)
    if not folders:
        raise SystemExit(f"{workdir}: no results/<genome>/applied/<name>/metrics.json: "
                         "run the pipeline with an apply: entry first")  # fmt: skip
    rules = read_rule_benchmarks(workdir / "timings")
    result = {
        "benchmark": "apply",
        "machine": machine_description(),
        "command": command,
        "wall_seconds": wall_seconds,
        "rules": rules,
        "applied": [score_applied(workdir, f, device=device) for f in folders],
    }
    out.mkdir(parents=True, exist_ok=True)
    path = out / "bench_apply.json"
    return publish(result, path, benchmarks_md, "apply", _markdown(result, path))


def _ratio(a, b) -> str:
    return "-" if a is None or not b else f"{a / b:.3f}"


def _markdown(r: dict, path: Path) -> str:
    lines = [
        "## A trained model on another genome: the pipeline's `apply:` key (issue 23)",
        "",
        f"Machine: {machine_line(r['machine'])}",
        "",
        f"Command: `{r['command']}`, then `python -m benchmarks apply` on its folder. JSON: "
        f"`{path}`. Whole pipeline run (training included), wall clock: "
        f"**{r['wall_seconds'] / 60:.1f} min**.",
        "",
        "Own genome: the run's held-out test block (the last 20% of the chromosome); other "
        "genome: every window of its dataset (`evaluate --split all`), nothing trained on it. "
        "The baseline (the run's non-sparse model) is scored on the other genome by this "
        "benchmark, as the comparison.",
    ]
    for a in r["applied"]:
        lines += ["", f"**{a['job']} applied to {a['genome']}** (`{a['dataset']}`: "
                  f"{a['sites']['donor']:,} donors, {a['sites']['acceptor']:,} acceptors, "
                  f"{a['positions']:,} scored positions):", "",
                  "| model | genome | donor top-k | acceptor top-k | mean top-k | donor PR-AUC "
                  "| acceptor PR-AUC |", "|---|---|---|---|---|---|---|"]  # fmt: skip
        models = [("Sparling", a["sparling"]), ("non-sparse baseline", a["baseline"])]
        for label, scores in models:
            if scores is None:
                continue
            for where in ("own", "other"):
                e = scores[where]
                genome = "own (test block)" if where == "own" else a["genome"]
                lines.append(f"| {label} | {genome} | {e['donor_topk']:.3f} | "
                             f"{e['acceptor_topk']:.3f} | {e['mean_topk']:.3f} | "
                             f"{e['donor_pr_auc']:.3f} | {e['acceptor_pr_auc']:.3f} |")  # fmt: skip
        s = a["sparling"]
        lines += ["", f"Other / own genome, mean top-k: Sparling **"
                  f"{_ratio(s['other']['mean_topk'], s['own']['mean_topk'])}**"]  # fmt: skip
        if a["baseline"] is not None:
            b = a["baseline"]
            lines[-1] += (f", baseline **{_ratio(b['other']['mean_topk'], b['own']['mean_topk'])}"
                          f"**. Sparling / baseline on {a['genome']}: **"
                          f"{_ratio(s['other']['mean_topk'], b['other']['mean_topk'])}** (own "
                          f"genome: {_ratio(s['own']['mean_topk'], b['own']['mean_topk'])}).")
        else:
            lines[-1] += "."
        if a["scan"] is not None:
            c = a["scan"]
            lines += ["", f"Scan of {a['genome']} ({c['sequences']} sequences, {c['bases']:,} "
                      f"bases, both strands): {c['sites']:,} sites of {c['motifs']} motifs in "
                      f"{c['total_seconds']:.1f} s."]  # fmt: skip
    if r["rules"]:
        lines += ["", *rule_table(r["rules"])]
    return "\n".join(lines)
