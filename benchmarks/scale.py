"""Scale benchmark: time and peak memory of every verb on genomes of 100 Mb, 300 Mb and 1 Gb
built from real sequence (issue 55, item 2).

Each size's genome is made by ``scripts/make_scale_genome.py`` beside 100,000 random SNVs
drawn uniformly over it (``scale_genome.py``). Then each step runs as the user runs it, a
``sparling-genomics`` subprocess (``scale_steps.py``): ``dataset`` (the genome and its
GFF3), ``train`` (a fixed sample budget, :data:`TRAIN_SETTINGS`: the same small core and
main-phase samples and the same validation/test windows at every size, annealing off so the
model sits at the default final density from the start and its scan writes as many sites a
base as a fully trained model; its cost is meant to be constant), ``export``, ``scan`` (the
whole genome: BED9, bigBed, bigWigs, browser files), ``variants`` (the 100k SNVs) and
``report``; with ``--bfloat16``, at the smallest size also ``scan --precision bfloat16``
(its rate, and how many of its sites the float32 scan has: ``site_agreement``). Each step's
peak memory is its own, read by a small launcher process (``scale_steps.py`` says why).

Resumable: ``bench_scale.json`` is rewritten (atomically) as soon as a step finishes, with
the BENCHMARKS.md section; a rerun skips finished steps (``--no-resume`` starts over), so a
run killed mid-way continues where it stopped. A step that fails is recorded with its log's
tail and retried by the next run; the rest of its size waits. Growth between sizes and the
issue's floors: ``scale_growth.py``; the section: ``scale_report.py``.
"""

from __future__ import annotations

import shlex
import shutil
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from sparling_genomics.io import write_json_atomic

from .report import machine_description, update_section
from .scale_genome import parse_size, prepare_inputs, size_label
from .scale_report import render_markdown
from .scale_steps import (
    BF16_STEP,
    STEPS,
    SizePaths,
    log_tail,
    measure_command,
    read_json_or_none,
    site_agreement,
    step_command,
    step_details,
)

SECTION = "scale"
JSON_NAME = "bench_scale.json"
# The train step's budget, the same at every size: the core (two local site models) for 1,000
# samples, the main model for 1,500 (its final phase: with annealing off, the whole schedule),
# at the default final density (0.0017, as a fully annealed model: the scan's site count a base
# is a real run's); 100 validation windows at each evaluation, 500 test windows (export reads
# the same 500). The caps in seconds only guard against a stuck run (stopped_by says which).
TRAIN_SETTINGS = (
    "train.core_samples=1000", "train.core_seconds=900", "train.final_samples=1500",
    "train.max_samples=1500", "train.max_seconds=1800", "train.eval_every=500",
    "data.val_windows=100", "data.test_windows=500", "annealing.enabled=false",
)  # fmt: skip


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")


def run_scale_benchmark(
    out: Path,
    sizes: list[str],
    *,
    benchmarks_md: Path = Path("BENCHMARKS.md"),
    resume: bool = True,
    variants: int = 100_000,
    seed: int = 0,
    substitution_rate: float = 0.01,
    extra_settings: tuple[str, ...] = (),
    prune: bool = False,
    bfloat16: bool = False,
    command: str | None = None,
    runner: Callable[[list[str], Path], dict] = measure_command,
    prepare: Callable[..., dict] = prepare_inputs,
    log: Callable[[str], None] = print,
) -> Path:
    """Measure every step at every size (skipping those ``bench_scale.json`` has, unless
    ``resume`` is off), and with ``bfloat16`` the smallest size's :data:`BF16_STEP`; the
    JSON path. ``runner`` and ``prepare`` are replaced in tests."""
    out = Path(out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    path = out / JSON_NAME
    train_settings = (*TRAIN_SETTINGS, *extra_settings)
    settings = {"seed": seed, "substitution_rate": substitution_rate, "variants": variants,
                "train": list(train_settings)}  # fmt: skip
    result = read_json_or_none(path) if resume else None
    if result is not None and result.get("settings") != settings:
        raise SystemExit(f"{path}: measured with other settings ({result.get('settings')}); "
                         "rerun with --no-resume, or give another --out")  # fmt: skip
    if result is None:
        result = {"benchmark": "scale", "settings": settings, "sizes": {}}
    result["machine"] = machine_description()
    result["command"] = command or f"python -m benchmarks scale --out {out}"
    labels = [size_label(parse_size(s)) for s in sizes]
    result["requested"] = sorted(set(result.get("requested", [])) | set(labels),
                                 key=parse_size)  # fmt: skip

    def save() -> None:
        write_json_atomic(path, result)
        update_section(benchmarks_md, SECTION, render_markdown(result, path))

    save()
    failed = False
    for label in labels:
        bases = parse_size(label)
        entry = result["sizes"].setdefault(label, {"bases": bases, "steps": {}})
        todo = [s for s in STEPS if s not in entry["steps"]]
        if not todo:
            log(f"{label}: every step measured before (kept)")
            continue
        paths = SizePaths(out / label)
        paths.root.mkdir(parents=True, exist_ok=True)
        log(f"{label}: genome and random SNVs")
        made = prepare(paths, bases, settings, runner=runner)
        entry.update(made)
        if "generate" in made:  # a new genome: nothing measured on the old one stands
            entry["steps"].clear()
        elif "vcf" in made:  # new SNVs: variants (and the report that shows them) again
            entry["steps"].pop("variants", None)
            entry["steps"].pop("report", None)
        todo = [s for s in STEPS if s not in entry["steps"]]
        save()
        for step in todo:
            target = paths.outputs(step)
            if target.is_dir():
                shutil.rmtree(target)
            elif target.exists():
                target.unlink()
            cmd = step_command(step, paths, train_settings)
            log(f"{label}: {step}: {shlex.join(cmd[2:])}")
            measured = runner(cmd, paths.log(step))
            if measured["exit_code"] != 0:
                entry["failed"] = {"step": step, "exit_code": measured["exit_code"],
                                   "log": str(paths.log(step)), "tail": log_tail(paths.log(step)),
                                   "when": _now()}  # fmt: skip
                save()
                log(f"{label}: {step} failed (exit {measured['exit_code']}); see "
                    f"{paths.log(step)}")  # fmt: skip
                failed = True
                break
            entry.pop("failed", None)
            entry["steps"][step] = {**measured, "bases": bases, "finished": _now(),
                                    "cpu": result["machine"]["cpu"],
                                    "summary": step_details(step, paths)}  # fmt: skip
            for later in STEPS[STEPS.index(step) + 1 :]:  # they used what this step replaced
                entry["steps"].pop(later, None)
            if step in STEPS[: STEPS.index("scan") + 1]:
                entry.pop(BF16_STEP, None)
            save()
            log(f"{label}: {step}: {measured['seconds']:.1f} s, "
                f"{measured['peak_rss_gb']:.2f} GB peak")  # fmt: skip
        smallest = label == min(labels, key=parse_size)
        if (bfloat16 and smallest and all(s in entry["steps"] for s in STEPS)
                and BF16_STEP not in entry):  # fmt: skip
            target = paths.outputs(BF16_STEP)
            if target.is_dir():
                shutil.rmtree(target)
            cmd = step_command(BF16_STEP, paths, train_settings)
            log(f"{label}: {BF16_STEP}: {shlex.join(cmd[2:])}")
            measured = runner(cmd, paths.log(BF16_STEP))
            if measured["exit_code"] == 0:
                entry[BF16_STEP] = {**measured, "bases": bases, "finished": _now(),
                                    "summary": step_details(BF16_STEP, paths),
                                    "agreement": site_agreement(
                                        paths.tracks / "motif_sites.bed",
                                        paths.tracks_bf16 / "motif_sites.bed")}  # fmt: skip
                save()
            else:
                log(f"{label}: {BF16_STEP} failed (exit {measured['exit_code']}); see "
                    f"{paths.log(BF16_STEP)}")  # fmt: skip
        if prune and all(s in entry["steps"] for s in STEPS):
            for target in (paths.tracks, paths.tracks_bf16, paths.dataset):
                shutil.rmtree(target) if target.is_dir() else target.unlink(missing_ok=True)
            entry["pruned"] = "tracks and dataset removed after measuring"
            save()
    if failed:
        raise SystemExit(f"a step failed: see {path} and the logs; rerun the same command "
                         "to retry it (finished steps are kept)")  # fmt: skip
    return path


