"""Planted-motif benchmark: Sparling on several seeds, plus the paper's two ablations.

* ``sparling``: annealed, per-channel thresholds (the method), one run per seed.
* ``fixed_density``: no annealing, density fixed at the target from the first step, given the
  same number of training samples as the Sparling run of the first seed.
* ``global_threshold``: annealed, but one threshold shared by every channel.
* ``draw<N>`` (``--draws``): the method on a motif set no preset was tuned on -- 6-8 JASPAR
  plant motifs from distinct families and classes (``genome.jaspar.draw_motif_set`` with seed
  N; N % 3 = 0, 1, 2 draws 6, 7, 8 motifs), up to 5 sites in 300 bp, seed 0 of training.

Every run is a normal ``train`` run directory under ``OUT``; the benchmark reads their
``metrics.json`` files, writes ``OUT/bench_planted.json`` and updates BENCHMARKS.md.
"""

from __future__ import annotations

import statistics
from pathlib import Path

from sparling_genomics.train.run_config import resolve_config

from .floors import PLANTED_EXACT_MATCH
from .report import (
    machine_description,
    machine_line,
    machines_line,
    pct,
    publish,
    run_or_resume,
)

FIELDS = ("exact_match", "edit_error", "fne", "fpe", "ce")


def _flat(metrics: dict) -> dict:
    motif = metrics.get("motif") or {}
    return {
        "exact_match": metrics["e2e"]["exact_match"],
        "edit_error": metrics["e2e"]["edit_error"],
        "fne": motif.get("fne"),
        "fpe": motif.get("fpe"),
        "ce": motif.get("ce"),
        "ce_many_to_one": motif.get("ce_many_to_one"),
        "density": metrics["density"],
        "true_density": metrics["true_density"],
        "density_ratio": metrics["density_ratio"],
        "samples_seen": metrics["samples_seen"],
        "wall_seconds": metrics["wall_seconds"],
        "annealing_complete": metrics["annealing"]["complete"],
        "annealing_steps": metrics["annealing"]["steps"],
        # Steps taken back and retaken smaller (train/rules/rollback.py); None: the rule was
        # off.
        "rollbacks": (metrics["annealing"].get("rollback") or {}).get("rollbacks"),
        # Motifs split into idle ones (train/rules/channel_edit.py; "split" in runs saved
        # before it): [samples, source, target, their alphas, density] each; None: off.
        "splits": (metrics["annealing"].get("channel_edit")
                   or metrics["annealing"].get("split") or {}).get("log"),  # fmt: skip
        "stopped_by": metrics["stopped_by"],
        "identifiability": (metrics.get("identifiability") or {}).get("status"),
        "identifiability_verdict": (metrics.get("identifiability") or {}).get("verdict"),
        "trained_on": (metrics.get("machine") or {}).get("cpu"),  # None: not recorded
    }


#: A draw's set-up beside its motifs: the issue's harder windows.
DRAW_DATA = {"length": 300, "max_instances": 5}


def oracle_exact_match(config, cache: dict) -> float:
    """Test exact match of the PWM-scan oracle (``tasks.planted_oracle``) on ``config``'s
    data: the task's own ceiling for a motif reader, the same for every seed."""
    from sparling_genomics.tasks.planted_oracle import oracle_exact_match as scan
    from sparling_genomics.tasks.registry import task_class

    key = repr(sorted(vars(config.data).items()))
    if key not in cache:
        cache[key] = scan(task_class("planted")(config, seed=0), "test")
    return cache[key]


def draw_motifs(draw: int) -> list[str]:
    """The motif set of draw ``draw``: 6, 7 or 8 motifs (by ``draw % 3``)."""
    from sparling_genomics.genome.jaspar import draw_motif_set

    return draw_motif_set((6, 7, 8)[draw % 3], seed=draw)


def run_planted_benchmark(
    out: Path,
    seeds: list[int],
    *,
    preset: str = "cpu",
    ablations: bool = True,
    draws: list[int] | None = None,
    benchmarks_md: Path = Path("BENCHMARKS.md"),
    overrides: list[dict] | None = None,
    block_sizes: list[int] | None = None,
    sets: list[str] | None = None,
) -> Path:
    """``sets``: the ``KEY=VALUE`` overrides behind ``overrides``, as typed: a run with any is
    a variant of the benchmark, published in a BENCHMARKS.md section of its own."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    overrides = list(overrides or [])
    runs: dict[str, list[dict]] = {"sparling": []}
    oracles: dict[str, float] = {}

    def row(name: str, config, **extra) -> dict:
        return {**extra, **_flat(run_or_resume(out / name, config)),
                "oracle_exact_match": oracle_exact_match(config, oracles)}  # fmt: skip

    for seed in seeds:
        config = resolve_config("planted", preset, overrides=overrides + [{"seed": seed}])
        runs["sparling"].append(row(f"sparling_seed{seed}", config, seed=seed))
    if ablations:
        budget = runs["sparling"][0]["samples_seen"]
        fixed = resolve_config(
            "planted",
            preset,
            overrides=overrides
            + [
                {"seed": seeds[0]},
                {"annealing": {"enabled": False}},
                {"train": {"max_samples": budget, "final_samples": budget}},
            ],
        )
        runs["fixed_density"] = [row(f"fixed_density_seed{seeds[0]}", fixed, seed=seeds[0])]
        global_threshold = resolve_config(
            "planted",
            preset,
            overrides=overrides
            + [{"seed": seeds[0]}, {"model": {"sparse": {"per_channel": False}}}],
        )
        runs["global_threshold"] = [
            row(f"global_threshold_seed{seeds[0]}", global_threshold, seed=seeds[0])
        ]
    for size in block_sizes or []:  # the motif-block variant, on every seed
        runs[f"block{size}"] = []
        for seed in seeds:
            blocks = resolve_config(
                "planted",
                preset,
                overrides=overrides + [{"seed": seed}, {"model": {"sparse": {"block_size": size}}}],
            )
            runs[f"block{size}"].append(row(f"block{size}_seed{seed}", blocks, seed=seed))
    for draw in draws or []:
        motifs = draw_motifs(draw)
        data = {"data": {**DRAW_DATA, "motifs": motifs}}
        config = resolve_config("planted", preset, overrides=overrides + [{"seed": 0}, data])
        runs[f"draw{draw}"] = [row(f"draw{draw}_seed0", config, seed=0, motifs=motifs)]
    machine = machine_description()
    summary = {
        name: {
            f: statistics.mean(r[f] for r in rows if r[f] is not None)
            for f in FIELDS + ("density_ratio", "wall_seconds", "samples_seen")
            if any(r[f] is not None for r in rows)
        }
        for name, rows in runs.items()
    }
    result = {
        "benchmark": "planted",
        "preset": preset,
        "seeds": seeds,
        "draws": list(draws or []),
        "block_sizes": list(block_sizes or []),
        "sets": list(sets or []),
        "machine": machine,
        "runs": runs,
        "mean": summary,
    }
    section = "planted" + "".join(f" {s}" for s in sets or [])
    return publish(result, out / "bench_planted.json", benchmarks_md, section,
                   _markdown(result, out, preset, seeds))  # fmt: skip


def _markdown(result: dict, out: Path, preset: str, seeds: list[int]) -> str:
    seeds_arg = ",".join(map(str, seeds))
    draws = result.get("draws") or []
    sizes = result.get("block_sizes") or []
    runs = result["runs"]
    extra = (" --no-ablations" if "fixed_density" not in runs else "") + (
        f" --draws {','.join(map(str, draws))}" if draws else "") + (
        f" --block-size {','.join(map(str, sizes))}" if sizes else "")  # fmt: skip
    sets = result.get("sets") or []
    extra += "".join(f" --set {s}" for s in sets)
    lines = [
        "## Planted motifs (issues 2, 24)" + (
            f", with {', '.join(f'`{s}`' for s in sets)}" if sets else ""),  # fmt: skip
        "",
        f"Machine: {machine_line(result['machine'])}",
        "",
    ]
    elsewhere = machines_line([(f"{name} seed {r['seed']}", r.get("trained_on"))
                               for name, rows in runs.items() for r in rows],
                              result["machine"]["cpu"])  # fmt: skip
    lines += [elsewhere, ""] if elsewhere else []
    lines += [
        f"Command: `python -m benchmarks planted --out {out} --seeds {seeds_arg} "
        f"--preset {preset}{extra}` (each run is `sparling-genomics train --task planted "
        f"--preset {preset} --seed S`; a draw adds `--set data.motifs=[...] --set "
        f"data.length=300 --set data.max_instances=5`; blockB adds `--set "
        f"model.sparse.block_size=B`). JSON: `{out}/bench_planted.json`.",
        "",
        "Test set: 2,000 held-out samples (background from the last 10% of TAIR10 chr1). "
        f"Floors: exact match >= {PLANTED_EXACT_MATCH:.0%} on every seed and every draw, "
        "FNE/FPE/CE <= 5% "
        "(issue 24; issue 2 asked 10%), density within 2x of the true density. Oracle: the "
        "exact match of the planted PWMs themselves scanned over the same test set "
        "(`tasks/planted_oracle.py`: both strands, the planting cutoff, overlaps resolved by "
        "log-odds, calls closer than the planting gap dropped), the ceiling for a reader of "
        "these motifs; below 100% where the set's motifs share k-mers.",
        "",
        "| run | seed | exact match | oracle | exact / oracle | E2EE | FNE | FPE | CE (1:1) "
        "| CE (many:1) "
        "| density | density / true | steps (rolled back; split) | stopped by "
        "| identifiability "
        "| samples | minutes |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, rows in runs.items():
        for r in rows:
            ratio = "-" if r["density_ratio"] is None else f"{r['density_ratio']:.2f}"
            parts = [f"{r['rollbacks']} rolled back"] if r.get("rollbacks") is not None else []
            parts += [f"{len(r['splits'])} split"] if r.get("splits") is not None else []
            steps = f"{r.get('annealing_steps', '-')}" + (f" ({'; '.join(parts)})" if parts else "")
            oracle = r.get("oracle_exact_match")
            share = "-" if not oracle else f"{r['exact_match'] / oracle:.3f}"
            lines.append(
                f"| {name} | {r['seed']} | {pct(r['exact_match'])} | {pct(oracle)} | {share} "
                f"| {pct(r['edit_error'])} "
                f"| {pct(r['fne'])} | {pct(r['fpe'])} | {pct(r['ce'])} "
                f"| {pct(r['ce_many_to_one'])} | {r['density']:.3g} | {ratio} | {steps} "
                f"| {r.get('stopped_by')} | {r.get('identifiability') or 'not checked'} "
                f"| {r['samples_seen']:,} | {r['wall_seconds'] / 60:.1f} |"
            )
    for name, rows in runs.items():
        if name.startswith("draw"):
            lines.append("")
            lines.append(f"- {name}: {', '.join(rows[0]['motifs'])}.")
    splits = [(name, r) for name, rows in runs.items() for r in rows if r.get("splits")]
    if splits:
        lines += ["", "Motifs split into idle ones (`train/rules/channel_edit.py`; motif, alpha):",
                  ""]  # fmt: skip
        lines += [f"- {name} seed {r['seed']}: " + "; ".join(_split_text(e) for e in r["splits"])
                  for name, r in splits]  # fmt: skip
    verdicts = [(name, r) for name, rows in runs.items() for r in rows
                if r.get("identifiability_verdict")]  # fmt: skip
    if verdicts:
        lines += ["", "Identifiability verdicts:", ""]
        lines += [f"- {name} seed {r['seed']}: {r['identifiability_verdict']}"
                  for name, r in verdicts]  # fmt: skip
    mean = result["mean"]
    ablations = [name for name in mean if name != "sparling" and not name.startswith("draw")]
    heading = (
        "Means, and each ablation beside Sparling (ratio of errors: ablation / Sparling):"
        if ablations
        else "Means over each run's seeds:"
    )
    lines += ["", heading, ""]
    lines.append("| run | exact match | FNE | FPE | CE |")
    lines.append("|---|---|---|---|---|")
    for name, m in mean.items():
        lines.append(
            f"| {name} | {pct(m.get('exact_match'))} | {pct(m.get('fne'))} "
            f"| {pct(m.get('fpe'))} | {pct(m.get('ce'))} |"
        )
    base = mean["sparling"]
    for name in ablations:
        m = mean[name]
        base_err = 1 - base["exact_match"]
        ratio = (1 - m["exact_match"]) / base_err if base_err > 0 else float("inf")
        lines.append("")
        lines.append(
            f"- {name}: end-to-end error {pct(1 - m['exact_match'])} vs Sparling "
            f"{pct(base_err)} ({ratio:.1f}x)."
        )
    return "\n".join(lines)


def _split_text(entry: list) -> str:
    """One split of a run's log: where, which motif into which, their alphas, the density."""
    samples, source, target, alpha_source, alpha_target, density, *_ = entry
    return (f"{source} ({alpha_source:.1%}) into {target} ({alpha_target:.1%}) at "
            f"{samples // 1000}k samples, density {density:.3g}")  # fmt: skip
