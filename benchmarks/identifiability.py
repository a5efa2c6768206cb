"""The identifiability check over benchmark runs (issue 24): every run directory under the
given folders, its verdict, the conditions that fail and the figures behind them.

A run trained since the check landed carries the block in its ``metrics.json``; an older run
is rescored from its final weights where they are on disk (``train.loading.rescore_stale``)
and listed as not checked where they are not (benchmarks keep their metrics in git, not
their weights). Nothing is retrained.

BENCHMARKS.md's section holds the counts; the table of every run and each verdict is a
generated section of ``docs/bench-runs.md`` (the audit, one row per saved run).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from sparling_genomics.evaluate.identifiability import IDLE_SHARE, idle_channels
from sparling_genomics.rundir import (
    FINAL_CHECKPOINT,
    METRICS_NAME,
    checkpoint_path,
    config_path,
    metrics_path,
)

from .report import machine_description, machine_line, pct, publish, update_section
from .sections import github_anchor


def run_dirs(folders: list[Path]) -> list[Path]:
    """Finished runs (a ``metrics.json`` beside a ``config.yaml``) under ``folders``, sorted."""
    found = set()
    for folder in folders:
        for path in Path(folder).rglob(METRICS_NAME):
            if config_path(path.parent).is_file():
                found.add(path.parent)
    return sorted(found)


def check_run(run: Path) -> dict:
    """One row: the run's verdict (rescored from its final weights when its metrics predate
    the check), or ``checked: False`` where they predate it and the weights are gone."""
    from sparling_genomics.train.loading import rescore_stale

    metrics = json.loads(metrics_path(run).read_text())
    seconds = None
    if "identifiability" not in metrics and checkpoint_path(run, FINAL_CHECKPOINT).is_file():
        started = time.monotonic()
        metrics = rescore_stale(run, metrics)
        seconds = round(time.monotonic() - started, 1)
    block = metrics.get("identifiability")
    row = {"run": str(run), "task": metrics.get("task"), "seed": metrics.get("seed"),
           "checked": block is not None, "rescore_seconds": seconds}  # fmt: skip
    if block is None:
        return row
    conditions = block.get("conditions") or {}
    nec = conditions.get("necessity") or {}
    channels = block.get("channels") or {}
    return {
        **row,
        "status": block["status"],
        "verdict": block["verdict"],
        "density_ratio": (conditions.get("density") or {}).get("ratio"),
        "error": (conditions.get("end_to_end") or {}).get("error"),
        "min_alpha": nec.get("min_alpha"),
        "unnecessary": nec.get("unnecessary"),
        "dead": channels.get("dead"),
        # From the stored alphas: runs checked before idle channels were named have them too.
        "idle": idle_channels(channels.get("alpha") or {}),
        "density_spread": channels.get("density_spread"),
    }


#: The section of the per-run table, in ``docs/bench-runs.md`` (BENCHMARKS.md keeps the counts).
RUNS_SECTION = "identifiability-runs"
RUNS_TITLE = "Identifiability of every saved run"
TITLE = "Identifiability of the benchmark runs (issue 24)"
#: The start of a new ``docs/bench-runs.md`` (one that does not exist yet: in a test).
RUNS_HEADER = "# `bench_runs/`: the saved benchmark runs\n"


def runs_document(benchmarks_md: Path) -> Path:
    """Where the per-run table goes: ``docs/bench-runs.md`` beside ``benchmarks_md``."""
    return Path(benchmarks_md).parent / "docs" / "bench-runs.md"


def run_identifiability_benchmark(
    folders: list[Path],
    out: Path,
    *,
    benchmarks_md: Path = Path("BENCHMARKS.md"),
    runs_md: Path | None = None,
) -> Path:
    """Check every run under ``folders``; write ``out`` (JSON), the BENCHMARKS.md section (the
    counts) and the table of every run in ``runs_md`` (default: :func:`runs_document`)."""
    rows = [check_run(run) for run in run_dirs(folders)]
    result = {
        "benchmark": "identifiability",
        "folders": [str(f) for f in folders],
        "machine": machine_description(),
        "runs": rows,
        "counts": {status: sum(r.get("status") == status for r in rows)
                   for status in ("met", "fails", "unknown", "not_applicable")}
        | {"not_checked": sum(not r["checked"] for r in rows)},  # fmt: skip
    }
    benchmarks_md = Path(benchmarks_md)
    runs_md = Path(runs_md) if runs_md else runs_document(benchmarks_md)
    runs_md.parent.mkdir(parents=True, exist_ok=True)
    to_runs = _link(runs_md, benchmarks_md.parent, RUNS_TITLE)
    path = publish(result, Path(out), benchmarks_md, "identifiability",
                   _markdown(result, folders, Path(out), to_runs))  # fmt: skip
    update_section(runs_md, RUNS_SECTION, runs_markdown(
        result, folders, Path(out), _link(benchmarks_md, runs_md.parent, TITLE)),
        header=RUNS_HEADER, tidy=False)  # fmt: skip
    return path


def _link(target: Path, start: Path, heading: str) -> str:
    """A relative Markdown link from a document in ``start`` to ``heading`` of ``target``."""
    relative = Path(os.path.relpath(Path(target).resolve(), Path(start).resolve())).as_posix()
    return f"[{relative}, \"{heading}\"]({relative}#{github_anchor(heading, {})})"


def _fmt(value, spec: str = ".2f") -> str:
    return "-" if value is None else format(value, spec)


def _command(folders: list[Path], out: Path) -> str:
    return (f"`python -m benchmarks identifiability --out {out} "
            + " ".join(f"--runs {f}" for f in folders) + "`")  # fmt: skip


def _markdown(result: dict, folders: list[Path], out: Path, to_runs: str) -> str:
    """The BENCHMARKS.md section: the check, the counts, and where the per-run table is."""
    counts = result["counts"]
    lines = [
        f"## {TITLE}",
        "",
        f"Machine: {machine_line(result['machine'])}",
        "",
        f"Command: {_command(folders, out)}. JSON: `{out}`.",
        "",
        "Every finished run under those folders: the verdict of the identifiability check "
        "(`evaluate/identifiability.py`: locality, measured density within 1.5x of the true "
        "density, end-to-end error <= 10%, every channel of the layer h reads necessary -- "
        "zeroing it changes the output on some of 512 test inputs, 64 windows for splicing). "
        "Runs trained since the "
        "check carry it in `metrics.json`; older runs are rescored from their final weights "
        "where those are on disk, and are listed as not checked where they are not.",
        "",
        f"Met {counts['met']}, fails {counts['fails']}, not checkable {counts['unknown']}, "
        f"no sparse layer {counts['not_applicable']}, not checked {counts['not_checked']}.",
        "",
        f"Each run's verdict and the figures behind it: {to_runs}.",
    ]
    return "\n".join(lines)


def runs_markdown(result: dict, folders: list[Path], out: Path, to_summary: str) -> str:
    """The section of ``docs/bench-runs.md``: one row per run, then each verdict."""
    lines = [
        f"## {RUNS_TITLE}",
        "",
        f"Written by {_command(folders, out)} (JSON: `{out}`; "
        f"{result['machine']['date']}); the check and the counts: {to_summary}. Idle: "
        f"channels needed on some inputs but with alpha under {IDLE_SHARE:g}x the median "
        "channel's (a warning, not a condition of the theorem; on the planted task the mark "
        "of a motif lost while another channel carries two).",
        "",
        "| run | task | seed | status | density / true | E2E error | smallest alpha "
        "| never needed | dead | idle | density spread |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in result["runs"]:
        if not r["checked"]:
            lines.append(f"| `{r['run']}` | {r['task']} | {r['seed']} | not checked "
                         "(weights not on disk) | | | | | | | |")  # fmt: skip
            continue
        lines.append(
            f"| `{r['run']}` | {r['task']} | {r['seed']} | {r['status']} "
            f"| {_fmt(r.get('density_ratio'))} | {pct(r.get('error'))} "
            f"| {_fmt(r.get('min_alpha'), '.3f')} | {', '.join(r.get('unnecessary') or []) or '-'}"
            f" | {', '.join(r.get('dead') or []) or '-'} | {', '.join(r.get('idle') or []) or '-'}"
            f" | {_fmt(r.get('density_spread'), '.1f')} |"
        )
    verdicts = [r for r in result["runs"] if r.get("verdict")]
    if verdicts:
        lines += ["", "Verdicts:", ""]
        lines += [f"- `{r['run']}`: {r['verdict']}" for r in verdicts]
    return "\n".join(lines)
