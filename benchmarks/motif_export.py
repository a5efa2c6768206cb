"""Motif-export benchmark on the planted task: are the planted JASPAR motifs named back?

For each Sparling run of a planted benchmark folder (``sparling_seed<S>``, trained here if
missing), ``export`` names the motifs with Tomtom against the JASPAR release the task planted
from; :func:`~sparling_genomics.evaluate.motif_recovery.planted_recovery` then checks that
every planted motif is the best match (q < 0.01) of some exported motif and that no
column-shuffled control reaches q < 0.05.
"""

from __future__ import annotations

import time
from pathlib import Path

import yaml

from sparling_genomics.evaluate.motif_recovery import planted_recovery
from sparling_genomics.rundir import config_path
from sparling_genomics.train.run_config import resolve_config

from .report import machine_description, machine_line, publish, run_or_resume


def run_motif_export_benchmark(
    out: Path,
    seeds: list[int],
    *,
    preset: str = "cpu",
    benchmarks_md: Path = Path("BENCHMARKS.md"),
) -> Path:
    from sparling_genomics.runners.export import export_run_motifs

    out = Path(out)
    rows = []
    for seed in seeds:
        run = out / f"sparling_seed{seed}"
        config = resolve_config("planted", preset, overrides=[{"seed": seed}])
        metrics = run_or_resume(run, config)
        began = time.perf_counter()
        summary = export_run_motifs(run)
        seconds = time.perf_counter() - began
        planted = yaml.safe_load(config_path(run).read_text())["data"]["motifs"]
        recovery = planted_recovery(
            summary,
            planted,
            channel_to_symbol=(metrics.get("motif") or {}).get("channel_to_symbol"),
        )
        rows.append({"seed": seed, "run": str(run), "export_seconds": round(seconds, 2),
                     "exact_match": metrics["e2e"]["exact_match"],
                     "jaspar": summary["jaspar"], **recovery})  # fmt: skip
    result = {"benchmark": "motif-export", "machine": machine_description(), "runs": rows}
    return publish(result, out / "bench_motif_export.json", benchmarks_md, "motif-export",
                   _markdown(result, out, seeds, preset))  # fmt: skip


def _q(value) -> str:
    return "-" if value is None else f"{value:.1e}"


def _markdown(result: dict, out: Path, seeds: list[int], preset: str) -> str:
    seeds_arg = ",".join(map(str, seeds))
    lines = [
        "## Motif export on the planted task: planted JASPAR motifs named back",
        "",
        f"Machine: {machine_line(result['machine'])}",
        "",
        f"Command: `python -m benchmarks motif-export --out {out} --seeds {seeds_arg} "
        f"--preset {preset}` (exports the runs of `python -m benchmarks planted`). JSON: "
        f"`{out}/bench_motif_export.json`.",
        "",
        "Pass: every planted motif is the Tomtom best match (q < 0.01) of some exported motif,"
        " and no column-shuffled control motif gets q < 0.05.",
        "",
        "| seed | planted recovered | shuffled controls at q < 0.05 | pass | export s |",
        "|---|---|---|---|---|",
    ]
    for r in result["runs"]:
        lines.append(
            f"| {r['seed']} | {r['recovered']} / {r['planted']} | "
            f"{r['control_false_matches']} / {r['control_motifs']} | "
            f"{'yes' if r['passed'] else 'no'} | {r['export_seconds']:.1f} |"
        )
    lines += ["", "Per planted motif (best match of the channel the motif metrics matched to it):",
              "", "| seed | planted | recovered by (q) | its channel's best match (q) |",
              "|---|---|---|---|"]  # fmt: skip
    for r in result["runs"]:
        for matrix_id, v in r["per_motif"].items():
            by = ", ".join(v["by"]) or "-"
            lines.append(
                f"| {r['seed']} | {matrix_id} | {by} ({_q(v['q_value'])}) | "
                f"{v['mapped_best_match'] or '-'} {v['mapped_best_name'] or ''} "
                f"({_q(v['mapped_best_q'])}) |"
            )
    return "\n".join(lines)
