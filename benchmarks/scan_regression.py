"""Scan and gather beside an earlier checkout: what a change to the scan costs in time.

Ours: this checkout's ``scan`` verb as a user runs it, in a child process: the whole scan, and
the cluster's way (``--part i/N`` for each i, then ``--gather N``). The comparison: the same
commands from an earlier checkout (``--before``, e.g. ``git worktree add /tmp/before
bdb41ed``), with that checkout first on ``PYTHONPATH``. Both scan the same weights: the run
folder is copied once for each checkout and exported by that checkout's own ``export``
(untimed), since an export records what its checkout knows. The two take turns (before, ours;
then ours, before; ...) so the machine's drift falls on both, and the ratio is taken pair by
pair (ours / before: below 1 ours is faster). Each child's peak RSS comes from ``wait4``. The
sites must not change: each BED9 is compared byte for byte with the earlier checkout's, and a
gathered scan's with the whole scan's.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from sparling_genomics.genome.fasta import Genome
from sparling_genomics.genome.references import load_reference
from sparling_genomics.rundir import config_path, motifs_dir
from sparling_genomics.train.run_config import load_saved_config, recorded_paths

from .floors import SCAN_REGRESSION_RATIO
from .headlines import worst_scan_ratio
from .report import machine_description, machine_line, publish

CHECKOUTS = ("before", "ours")
BED = "motif_sites.bed"
OURS = Path(__file__).resolve().parents[1]


def _child(tree: Path, args: list[str], log: Path) -> tuple[float, float]:
    """Run ``python -m sparling_genomics ARGS`` from checkout ``tree``; its wall seconds and
    peak RSS (GB). A failure raises with the end of its output."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    with open(log, "ab") as sink:
        began = time.perf_counter()
        child = subprocess.Popen([sys.executable, "-m", "sparling_genomics", *args],
                                 stdout=sink, stderr=sink, env=env, cwd=tree)  # fmt: skip
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - began
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        tail = log.read_text(errors="replace")[-1500:]
        raise RuntimeError(f"{tree}: sparling-genomics {' '.join(args)} failed:\n{tail}")
    return seconds, usage.ru_maxrss / 1024**2


def _dataset_args(run: Path) -> list[str]:
    """``--dataset PATH`` of the run's own dataset, found as loading the run finds it (a path
    relative to the run does not hold for its copies); none where it records none or it is
    not there."""
    recorded = recorded_paths(load_saved_config(config_path(run))).get("data.dataset")
    if not recorded or not Path(recorded).is_file():
        return []
    return ["--dataset", str(Path(recorded).resolve())]


def _prepare(run: Path, out: Path, before: Path) -> dict[str, Path]:
    """One copy of ``run`` per checkout, each exported by that checkout (reused when done)."""
    models = {}
    for name, tree in zip(CHECKOUTS, (before, OURS)):
        model = out / "models" / name
        if not motifs_dir(model).is_dir():
            shutil.rmtree(model, ignore_errors=True)
            skip = shutil.ignore_patterns(motifs_dir(run).name, "*.replaced-*")
            shutil.copytree(run, model, ignore=skip)
            _child(tree, ["export", "--model", str(model), *_dataset_args(run)],
                   out / f"export_{name}.log")  # fmt: skip
        models[name] = model
    return models


def _scan_args(model: Path, reference: str, scan: Path, dataset: list[str]) -> list[str]:
    return ["scan", "--model", str(model), "--reference", reference, "--out", str(scan),
            *dataset]  # fmt: skip


def _whole(tree: Path, model: Path, reference: str, scan: Path, log: Path,
           dataset: list[str]) -> dict:  # fmt: skip
    shutil.rmtree(scan, ignore_errors=True)
    seconds, rss = _child(tree, _scan_args(model, reference, scan, dataset), log)
    return {"seconds": seconds, "peak_rss_gb": rss}


def _scattered(tree: Path, model: Path, reference: str, scan: Path, parts: int,
               log: Path, dataset: list[str]) -> dict:  # fmt: skip
    shutil.rmtree(scan, ignore_errors=True)
    common = _scan_args(model, reference, scan, dataset)
    part_seconds, rss = [], []
    for i in range(1, parts + 1):
        seconds, peak = _child(tree, [*common, "--part", f"{i}/{parts}"], log)
        part_seconds.append(seconds)
        rss.append(peak)
    gather, peak = _child(tree, [*common, "--gather", str(parts)], log)
    return {"parts_seconds": sum(part_seconds), "gather_seconds": gather,
            "seconds": sum(part_seconds) + gather, "peak_rss_gb": max(rss + [peak])}  # fmt: skip


def _same(a: Path, b: Path) -> bool:
    return (a / BED).read_bytes() == (b / BED).read_bytes()


def _figures(times: dict[str, list[dict]], key: str) -> dict:
    """Median seconds of each checkout and the median of the pair-by-pair ratios."""
    before = [t[key] for t in times["before"]]
    ours = [t[key] for t in times["ours"]]
    return {
        "before_seconds": round(statistics.median(before), 3),
        "ours_seconds": round(statistics.median(ours), 3),
        "ratio": round(statistics.median(o / b for o, b in zip(ours, before)), 4),
        "ratio_range": [round(min(o / b for o, b in zip(ours, before)), 4),
                        round(max(o / b for o, b in zip(ours, before)), 4)],  # fmt: skip
    }


def measure_reference(models: dict[str, Path], before: Path, reference: str, out: Path, *,
                      repeats: int, parts: int, dataset: list[str]) -> dict:  # fmt: skip
    """Whole and scattered scans of ``reference`` by each checkout, ``repeats`` times in
    turns; their figures and whether the sites are the same."""
    trees = dict(zip(CHECKOUTS, (before, OURS)))
    whole = {name: [] for name in CHECKOUTS}
    scattered = {name: [] for name in CHECKOUTS}
    log = out / f"scan_{reference}.log"
    for repeat in range(repeats):
        order = CHECKOUTS if repeat % 2 == 0 else CHECKOUTS[::-1]
        for name in order:
            scans = out / "scans" / reference / name
            whole[name].append(_whole(trees[name], models[name], reference, scans / "whole",
                                      log, dataset))  # fmt: skip
            scattered[name].append(_scattered(trees[name], models[name], reference,
                                              scans / "scattered", parts, log,
                                              dataset))  # fmt: skip
    scans = out / "scans" / reference
    same = {
        "whole_vs_before": _same(scans / "ours" / "whole", scans / "before" / "whole"),
        "gathered_vs_whole": _same(scans / "ours" / "scattered", scans / "ours" / "whole"),
    }
    return {
        "bases": sum(Genome(load_reference(reference).fasta).lengths.values()),
        "whole": _figures(whole, "seconds"),
        "scattered": _figures(scattered, "seconds"),
        "gather": _figures(scattered, "gather_seconds"),
        "peak_rss_gb": {name: round(max(t["peak_rss_gb"] for t in whole[name] + scattered[name]),
                                    3) for name in CHECKOUTS},  # fmt: skip
        "same_sites": same,
        "runs": {"whole": whole, "scattered": scattered},
    }


def _commit(tree: Path) -> str:
    try:
        done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=tree, check=True,
                              capture_output=True, text=True)  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return done.stdout.strip()


def run_scan_regression_benchmark(run: Path, out: Path, *, before: Path,
                                  references: tuple[str, ...] = ("tiny", "tair10-chr1"),
                                  repeats: int = 5, parts: int = 3,
                                  benchmarks_md: Path = Path("BENCHMARKS.md")) -> Path:  # fmt: skip
    """Time ``scan`` (whole; ``parts`` parts + gather) of each reference by this checkout
    and by ``before``, ``repeats`` times each in turns, on ``run``'s weights."""
    shown_run, shown_out, before = Path(run), Path(out), Path(before).resolve()
    if not (before / "sparling_genomics" / "__main__.py").is_file():
        raise ValueError(f"{before}: not a checkout of sparling-genomics (no "
                         "sparling_genomics/__main__.py)")  # fmt: skip
    run, out = shown_run.resolve(), shown_out.resolve()  # the children run in their checkout
    out.mkdir(parents=True, exist_ok=True)
    models = _prepare(run, out, before)
    dataset = _dataset_args(run)
    measured = {ref: measure_reference(models, before, ref, out, repeats=repeats, parts=parts,
                                       dataset=dataset) for ref in references}  # fmt: skip
    shutil.rmtree(out / "scans", ignore_errors=True)
    shutil.rmtree(out / "models", ignore_errors=True)
    for log in out.glob("*.log"):  # a failure's log stays (with its message)
        log.unlink()
    run, out = shown_run, shown_out
    result = {
        "benchmark": "scan-regression",
        "run": str(run),
        "machine": machine_description(),
        "before": {"path": str(before), "commit": _commit(before)},
        "ours": {"commit": _commit(OURS)},
        "repeats": repeats,
        "parts": parts,
        "references": measured,
        "floor_ratio": SCAN_REGRESSION_RATIO,
    }
    return publish(result, out / "bench_scan_regression.json", benchmarks_md,
                   "scan-regression", _markdown(result, run, out))  # fmt: skip


def _markdown(r: dict, run: Path, out: Path) -> str:
    before = r["before"]
    lines = [
        f"## Scan and gather beside an earlier checkout ({before['commit']})",
        "",
        f"Machine: {machine_line(r['machine'])}",
        "",
        f"Command: `python -m benchmarks scan-regression --model {run} --before "
        f"{before['path']} --out {out}` (ours: {r['ours']['commit']}). JSON: "
        f"`{out}/bench_scan_regression.json`. Each checkout exports its own copy of the same "
        f"weights; `scan` runs as a child process, whole and as {r['parts']} `--part` jobs + "
        f"`--gather`, {r['repeats']} times each, the two checkouts in turns. Floor (issue 75): "
        f"ours within {100 * (r['floor_ratio'] - 1):.0f}% of the earlier checkout's time.",
        "",
        "| reference | bases | way | before s | ours s | ours / before (median; range) | "
        "same sites |",
        "|---|---|---|---|---|---|---|",
    ]
    for ref, m in r["references"].items():
        same = m["same_sites"]
        for way, label in (("whole", "whole `scan`"),
                           ("scattered", f"{r['parts']} parts + gather"),
                           ("gather", "the gather alone")):  # fmt: skip
            f = m[way]
            check = {"whole": same["whole_vs_before"],
                     "scattered": same["gathered_vs_whole"]}.get(way)  # fmt: skip
            mark = "-" if check is None else "yes" if check else "NO"
            lines.append(
                f"| {ref} | {m['bases']:,} | {label} | {f['before_seconds']:.2f} | "
                f"{f['ours_seconds']:.2f} | **{f['ratio']:.3f}** ({f['ratio_range'][0]:.3f}-"
                f"{f['ratio_range'][1]:.3f}) | {mark} |"
            )
    worst = worst_scan_ratio(r)
    lines += [
        "",
        f"Worst median ratio (whole or parts + gather): **{worst:.3f}**; floor <= "
        f"{r['floor_ratio']}: {'met' if worst <= r['floor_ratio'] else 'not met'}. Same sites: "
        "the whole scan's BED9 against the earlier checkout's, the gathered BED9 against the "
        "whole scan's (byte for byte).",
    ]
    return "\n".join(lines)
