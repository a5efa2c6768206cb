"""Paper-domain benchmark: ``cpu``-preset runs (one per seed) of DigitCircle, LaTeX-OCR or
AudioMNISTSequence, their test metrics and their mean beside the Sparling paper's 9-seed means.

Each run is a normal ``train`` run directory (``OUT/<task>_seed<S>``; a killed benchmark
resumes it, a finished one is reused); the benchmark also writes each run's HTML report
(with the Figure-4 plot of FNE/FPE/CE/E2EE against density over the annealing run),
``OUT/bench_<task>.json`` and its BENCHMARKS.md section. The paper's figures are quoted from
its results (``PAPER`` below; not measured here); the ratio column is ours / paper's.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from sparling_genomics.config import load_yaml
from sparling_genomics.report.page import write_report
from sparling_genomics.rundir import config_path, report_path
from sparling_genomics.train.run_config import resolve_config

from .floors import PAPER_PERTURBATION, paper_error_floors
from .report import (
    machine_description,
    machine_line,
    machines_line,
    pct,
    publish,
    run_or_resume,
)

#: The paper's means over 9 seeds (FNE, FPE, CE, E2EE) and its perturbation consistency.
PAPER = {
    "digit_circle": {"fne": 0.0042, "fpe": 0.0148, "ce": 0.0116, "edit_error": 0.0074,
                     "perturbation": 0.993},
    "latex_ocr": {"fne": 0.142, "fpe": 0.0053, "ce": 0.0250, "edit_error": 0.0098,
                  "perturbation": 0.861},
    "audio_sequence": {"fne": 0.0446, "fpe": 0.0, "ce": 0.0547, "edit_error": 0.0865,
                       "perturbation": 0.934},
}  # fmt: skip
TITLES = {
    "digit_circle": "DigitCircle",
    "latex_ocr": "LaTeX-OCR",
    "audio_sequence": "AudioMNISTSequence",
}


def run_paper_domain_benchmark(
    task: str,
    out: Path,
    *,
    preset: str = "cpu",
    seeds: Sequence[int] = (0,),
    overrides: list[dict] | None = None,
    benchmarks_md: Path = Path("BENCHMARKS.md"),
    section: str | None = None,
) -> Path:
    """Train ``task`` once per seed and publish the figures in BENCHMARKS.md section
    ``section`` (default: :func:`default_section`); returns the JSON path.

    With several seeds the floors are judged on the mean over seeds (the paper reports
    9-seed means) and every seed's own figures are published beside it.
    """
    if task not in PAPER:
        raise ValueError(f"not a paper domain: {task!r} (choose from {', '.join(PAPER)})")
    seeds = list(dict.fromkeys(int(s) for s in seeds))
    if not seeds:
        raise ValueError("the benchmark needs at least one seed")
    # Every seed's config first: a bad key fails before anything is written.
    base = list(overrides or [])
    configs = {seed: resolve_config(task, preset, overrides=base + [{"seed": seed}])
               for seed in seeds}  # fmt: skip
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    runs = []
    for seed, config in configs.items():
        run_dir = out / f"{task}_seed{seed}"
        metrics = run_or_resume(run_dir, config)
        report = write_report(run_dir, report_path(run_dir))
        runs.append({"seed": seed, "run": str(run_dir), "report": str(report),
                     "ours": _figures(metrics), "training": _training(run_dir)})  # fmt: skip
    ours = _mean_figures([r["ours"] for r in runs])
    for r in runs:
        r["floors_met"] = _floors_met(task, r["ours"])
    floors_met = _floors_met(task, ours)
    result = {
        "benchmark": f"paper_{task}",
        "task": task,
        "preset": preset,
        "seeds": seeds,
        "machine": machine_description(),
        "runs": runs,
        "ours": ours,
        "paper_9_seed_mean": PAPER[task],
        "floors_met": floors_met,
        "section": section or default_section(task, preset, overrides),
    }
    body = _markdown(result, out, preset, overrides)
    return publish(result, out / f"bench_{task}.json", benchmarks_md, result["section"], body)


def default_section(task: str, preset: str, overrides: list[dict] | None) -> str:
    """``paper-<task>``, the record's section, for the cpu preset as shipped; a run on another
    preset or with overrides gets a section named by them, so it never replaces the record."""
    variant = ([] if preset == "cpu" else [f"preset={preset}"]) + _flat_sets(overrides or [])
    return " ".join([f"paper-{task}", *variant])


def _floors_met(task: str, figures: dict) -> dict[str, bool]:
    """Which floors ``figures`` meet. A floor counts only once annealing has reached the true
    density (in every run, for a mean): a dense layer misses no motif (FNE 0 at density 0.5)
    and says nothing about the method."""
    complete = bool(figures["annealing_complete"])
    met = {k: complete and figures.get(k) is not None and figures[k] <= v
           for k, v in paper_error_floors(task).items()}  # fmt: skip
    for key, floor in PAPER_PERTURBATION.get(task, {}).items():
        met[key] = complete and figures.get(key) is not None and figures[key] >= floor
    return met


#: Table rows: figure key -> label.
LABELS = {
    "fne": "FNE",
    "fpe": "FPE",
    "ce": "CE",
    "edit_error": "E2EE",
    "perturbation": "perturbation consistency",
    "perturbation_single_channel": "perturbation consistency, winning channel only",
}

#: Figures averaged over seeds (the rest are per run only).
MEANED = ("fne", "fpe", "ce", "edit_error", "exact_match", "perturbation",
          "perturbation_single_channel")  # fmt: skip


def _figures(metrics: dict) -> dict:
    """One run's benchmark figures from its ``metrics.json``."""
    motif = metrics.get("motif") or {}
    perturbation = metrics.get("perturbation") or {}
    return {
        "fne": motif.get("fne"),
        "fpe": motif.get("fpe"),
        "ce": motif.get("ce"),
        "ce_matching": motif.get("ce_matching"),
        "edit_error": metrics["e2e"]["edit_error"],
        "exact_match": metrics["e2e"]["exact_match"],
        "perturbation": perturbation.get("consistency"),
        "perturbation_single_channel": perturbation.get("consistency_single_channel"),
        "perturbations": perturbation.get("perturbations"),
        "density": metrics["density"],
        "true_density": metrics["true_density"],
        "samples_seen": metrics["samples_seen"],
        "wall_seconds": metrics["wall_seconds"],
        "annealing_complete": metrics["annealing"]["complete"],
        "annealing_steps": metrics["annealing"]["steps"],
        "stopped_by": metrics["stopped_by"],
        "plateau_restarts": metrics.get("plateau_restarts", 0),
        "identifiability": (metrics.get("identifiability") or {}).get("verdict"),
        "trained_on": (metrics.get("machine") or {}).get("cpu"),  # None: not recorded
    }


def _training(run_dir: Path) -> dict:
    """How the run trained, from its saved config (the machine line describes the process
    that publishes, which may differ): torch threads (0: all) and batch prefetching."""
    path = config_path(run_dir)
    if not path.is_file():
        return {}
    train = load_yaml(path).get("train", {})
    return {"threads": int(train.get("threads", 0)), "prefetch": bool(train.get("prefetch"))}


def _training_words(training: dict) -> str:
    """'; trained on N torch threads (with batch prefetching)' for a run's summary line."""
    if not training:
        return ""
    n = training["threads"]
    words = f"{n} torch thread{'s' if n > 1 else ''}" if n else "all torch threads"
    return f"; trained on {words}" + (" with batch prefetching" if training["prefetch"] else "")


def _restart_words(figures: dict) -> str:
    """'; restarted N times from a new initialisation ...' when the plateau rule fired."""
    n = figures.get("plateau_restarts") or 0
    if not n:
        return ""
    return (
        f"; restarted {n} time{'s' if n > 1 else ''} from a new initialisation (no sign of "
        "learning the dense task by `train.plateau_restart_samples`; those samples count)"
    )


def _mean_figures(per_seed: list[dict]) -> dict:
    """The mean of the error figures over seeds (None if any seed lacks one); annealing
    counts as complete only if it completed in every run."""
    mean = {}
    for key in MEANED:
        values = [f[key] for f in per_seed]
        mean[key] = None if any(v is None for v in values) else sum(values) / len(values)
    mean["ce_matching"] = per_seed[0]["ce_matching"]
    mean["annealing_complete"] = all(f["annealing_complete"] for f in per_seed)
    return mean


def _markdown(result: dict, out: Path, preset: str, overrides) -> str:
    task, ours, paper = result["task"], result["ours"], result["paper_9_seed_mean"]
    runs, seeds = result["runs"], result["seeds"]
    sets = "".join(f" --set {k}" for k in _flat_sets(overrides or []))
    if result["section"] != default_section(task, preset, overrides):
        sets += f" --section '{result['section']}'"
    seed_args = f" --seeds {','.join(map(str, seeds))}"
    several = len(runs) > 1
    lines = [
        f"## {TITLES[task]} (issues 5, 24)",
        "",
        f"Machine: {machine_line(result['machine'])}",
        "",
    ]
    elsewhere = machines_line([(f"seed {r['seed']}", r["ours"].get("trained_on"))
                               for r in runs], result["machine"]["cpu"])  # fmt: skip
    lines += [elsewhere, ""] if elsewhere else []
    lines += [
        f"Command: `python -m benchmarks paper-domain --task {task} --out {out} "
        f"--preset {preset}{seed_args}{sets}`. JSON: `{out}/bench_{task}.json`; each run's "
        "report (Figure-4 plot: FNE/FPE/CE/E2EE against density) is its `report.html` (not "
        "committed; `sparling-genomics report --model RUN` rebuilds it).",
        "",
    ]
    for r in runs:
        f = r["ours"]
        lines.append(
            f"- Seed {r['seed']} (`{r['run']}`): {f['samples_seen']:,} training samples in "
            f"{f['wall_seconds'] / 60:.1f} min; annealing "
            f"{'complete' if f['annealing_complete'] else 'NOT complete'} "
            f"({f['annealing_steps']} steps, density {f['density']:.3g}, true density "
            f"{f['true_density']:.3g}); stopped by {f['stopped_by']}"
            f"{_training_words(r.get('training', {}))}{_restart_words(f)}; exact match "
            f"{pct(f['exact_match'])}; perturbations tried: {f['perturbations'] or 0}; "
            f"identifiability: {f.get('identifiability') or 'not checked (trained before it)'}."
        )
    lines += ["", f"CE matching: {ours['ce_matching']}."]
    if ours.get("perturbation") is not None:
        lines[-1] += (
            " A perturbation moves the occurrence's activations in every channel that stands "
            "for its symbol (whose most common found symbol it is: the paper code's channel "
            "groups) to the new symbol's channel; the 'winning channel only' row moves just the "
            "channel that won the cell (this benchmark's rule before 2026-11-30)."
        )
    if several:
        missed = [
            f"seed {r['seed']} ({', '.join(LABELS[k] for k, ok in met.items() if not ok)})"
            for r in runs
            if not all((met := r["floors_met"]).values())
        ]
        lines[-1] += (
            f" Floors are judged on the mean over the {len(runs)} seeds, as the paper reports "
            "means; each seed's figures are beside it. Seeds that miss a floor on their own: "
            + ("; ".join(missed) if missed else "none")
            + "."
        )
    lines.append("")
    seed_cols = "".join(f" seed {r['seed']} |" for r in runs) if several else ""
    lines += [
        f"| metric |{seed_cols} ours (cpu preset{', mean' if several else ''}) "
        "| paper (9-seed mean, GPU) | ours / paper | floor | met |",
        "|---|" + "---|" * (len(runs) if several else 0) + "---|---|---|---|---|",
    ]
    ceilings, minimums = paper_error_floors(task), PAPER_PERTURBATION.get(task, {})
    for key, label in LABELS.items():
        mine, theirs = ours.get(key), paper.get(key)
        ratio = "-" if mine is None or not theirs else f"{mine / theirs:.2f}"
        if key in ceilings:
            floor = f"<= {pct(ceilings[key])}"
        elif key in minimums:
            floor = f">= {pct(minimums[key])}"
        else:
            floor = "-"
        met = result["floors_met"].get(key)
        per_seed = "".join(f" {pct(r['ours'].get(key))} |" for r in runs) if several else ""
        lines.append(
            f"| {label} |{per_seed} {pct(mine)} | {pct(theirs)} | {ratio} | {floor} "
            f"| {'-' if met is None else ('yes' if met else 'NO')} |"
        )
    if not ours["annealing_complete"]:
        lines += [
            "",
            "Annealing did not reach the true density"
            + (" in every run" if several else "")
            + ", so no floor counts as met.",
        ]
    return "\n".join(lines)


def _flat_sets(overrides: list[dict], prefix: str = "") -> list[str]:
    out = []
    for override in overrides:
        for key, value in override.items():
            if isinstance(value, dict):
                out += _flat_sets([value], f"{prefix}{key}.")
            else:
                out.append(f"{prefix}{key}={value}")
    return out
