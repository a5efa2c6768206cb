"""Pipeline benchmark: time and peak memory of every rule of a finished Snakemake run.

Reads the ``benchmark:`` files Snakemake wrote (``timings/**/<rule>.tsv``: seconds,
max RSS, ...) and the run's combined ``metrics.json`` files, writes ``bench_pipeline.json`` and
the BENCHMARKS.md section. The wall-clock time of the whole run is measured by the caller
(``--wall-seconds``) because rules may overlap.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from sparling_genomics.rundir import METRICS_NAME

from .floors import PIPELINE_MINUTES
from .report import machine_description, machine_line, publish

DEFAULT_TITLE = "The pipeline, default config (TAIR10 chr1), 2 CPU cores"


def read_rule_benchmarks(folder: Path) -> list[dict]:
    rows = []
    for path in sorted(Path(folder).rglob("*.tsv")):
        with open(path) as handle:
            for record in csv.DictReader(handle, delimiter="\t"):
                rows.append({
                    "job": str(path.relative_to(folder).with_suffix("")),
                    "seconds": float(record["s"]),
                    "max_rss_mb": float(record["max_rss"]) if record["max_rss"] != "-" else None,
                })  # fmt: skip
    return rows


def rule_table(rules: list[dict]) -> list[str]:
    """The Markdown table of :func:`read_rule_benchmarks`' rows: job, seconds, peak RSS."""
    lines = ["| job | seconds | peak RSS (MB) |", "|---|---|---|"]
    for row in rules:
        rss = "-" if row["max_rss_mb"] is None else f"{row['max_rss_mb']:.0f}"
        lines.append(f"| {row['job']} | {row['seconds']:.1f} | {rss} |")
    return lines


def run_pipeline_benchmark(
    workdir: Path,
    out: Path,
    *,
    wall_seconds: float,
    command: str,
    benchmarks_md: Path = Path("BENCHMARKS.md"),
    section: str = "pipeline",
    title: str = DEFAULT_TITLE,
) -> Path:
    """Write ``bench_pipeline.json`` of the finished run in ``workdir`` into ``out`` and its
    BENCHMARKS.md ``section`` (``title`` its heading): the rules' time and memory, each
    genome's split and each job's metrics."""
    workdir, out = Path(workdir), Path(out)
    rules = read_rule_benchmarks(workdir / "timings")
    metrics = {
        str(p.parent.relative_to(workdir / "results")): json.loads(p.read_text())
        for p in sorted((workdir / "results").glob(f"*/*/seed*/{METRICS_NAME}"))
    }
    result = {
        "benchmark": "pipeline",
        "machine": machine_description(),
        "command": command,
        "title": title,
        "wall_seconds": wall_seconds,
        "splits": dataset_splits(workdir / "results"),
        "rules": rules,
        "metrics": {k: {"sparling": v["sparling"]["e2e"], "baseline": (v.get("baseline") or {})
                        .get("e2e"), "ratio": v.get("ratio")} for k, v in metrics.items()},
    }  # fmt: skip
    out.mkdir(parents=True, exist_ok=True)
    path = out / "bench_pipeline.json"
    return publish(result, path, benchmarks_md, section, _markdown(result, path))


def dataset_splits(results: Path) -> dict[str, str]:
    """Per genome of a finished run (``results/<genome>/dataset.h5``), its dataset's split
    in one line (``genome.splits.describe_split``)."""
    from sparling_genomics.genome.dataset import SiteDataset
    from sparling_genomics.genome.splits import describe_split

    return {path.parent.name: describe_split(SiteDataset(path).summary)
            for path in sorted(Path(results).glob("*/dataset.h5"))}


def _markdown(r: dict, path: Path) -> str:
    lines = [
        f"## {r.get('title') or DEFAULT_TITLE}",
        "",
        f"Machine: {machine_line(r['machine'])}",
        "",
        f"Command: `{r['command']}`. JSON: `{path}`. Floor: <= {PIPELINE_MINUTES} minutes.",
        "",
        f"Whole run, wall clock: **{r['wall_seconds'] / 60:.1f} min**.",
        "",
        *[f"Split of `{genome}`: {text}." for genome, text in (r.get("splits") or {}).items()],
        *([""] if r.get("splits") else []),
        *rule_table(r["rules"]),
    ]
    for name, m in r["metrics"].items():
        s, b, ratio = m["sparling"], m["baseline"] or {}, m["ratio"] or {}
        lines += ["", f"{name}: mean top-k Sparling **{s['mean_topk']:.3f}**, baseline "
                  f"**{b.get('mean_topk', float('nan')):.3f}**, ratio "
                  f"**{ratio.get('mean_topk', float('nan')):.3f}**."]  # fmt: skip
    return "\n".join(lines)
