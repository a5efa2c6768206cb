"""Seed benchmark: one splicing setting trained with several seeds, side by side.

Per seed (each an exported run of the same config but its seed): test mean top-k and its
ratio to a baseline run, learned density, the family figures of the splicing benchmark
(``splicing_families.family_figures``: families with learned channels, redundant learned
channels, branch-point-like and away-from-site families), then the seed-stability table of
the ``stability`` verb (which families recur in every seed, Tomtom q < 0.01). The runs'
configs must match but for the seed and the output paths (checked), so the figures are one
setting's spread, not a mix.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import yaml

from sparling_genomics.errors import InputError
from sparling_genomics.rundir import config_path, read_metrics
from sparling_genomics.runners.stability import seed_stability

from .report import machine_description, machine_line, publish
from .splicing_families import export_or_read, family_figures

#: Keys that may differ between the seeds' configs: the seed, where things are, the device,
#: threads and the wall-clock cap (a Sparling run stops when its schedule ends, before it).
FREE = {"seed", "out", "device", "data.dataset", "train.max_seconds", "train.threads"}


def _flat(node: dict, where: str = "") -> dict:
    out = {}
    for key, value in node.items():
        path = f"{where}{key}"
        out.update(_flat(value, path + ".") if isinstance(value, dict) else {path: value})
    return out


def _setting(run: Path) -> dict:
    config = _flat(yaml.safe_load(config_path(run).read_text()))
    return {k: v for k, v in config.items() if k not in FREE}


#: Issue 57: >= 80% of the summed family effect carried by families that recur in every seed.
EFFECT_FLOOR = 0.8


def run_seeds_benchmark(runs: list[Path], out: Path, *, baseline: Path | None = None,
                        name: str = "splicing-seeds",
                        benchmarks_md: Path = Path("BENCHMARKS.md")) -> Path:  # fmt: skip
    runs = [Path(r) for r in runs]
    if len(runs) < 2:
        raise InputError("the seed benchmark needs at least 2 runs")
    first = _setting(runs[0])
    for run in runs[1:]:
        other = _setting(run)
        differ = sorted(k for k in set(first) | set(other) if first.get(k) != other.get(k))
        if differ:
            raise InputError(f"{run}: its config differs from {runs[0]}'s beyond the seed: "
                             f"{', '.join(differ[:5])}")  # fmt: skip
    base = None
    if baseline is not None:
        base = read_metrics(Path(baseline))["e2e"]["mean_topk"]
    seeds = []
    for run in runs:
        metrics = read_metrics(run)
        topk = metrics["e2e"]["mean_topk"]
        figures = family_figures(export_or_read(run))
        figures.pop("families")
        seeds.append({"run": str(run), "seed": metrics.get("seed"), "mean_topk": round(topk, 4),
                      "ratio": round(topk / base, 4) if base else None,
                      "density": metrics.get("density"), **figures})  # fmt: skip
    stability = seed_stability(runs)
    topks = np.array([s["mean_topk"] for s in seeds])
    result = {
        "benchmark": "seeds", "machine": machine_description(), "baseline": str(baseline),
        "baseline_mean_topk": base, "seeds": seeds,
        "mean_topk": {"mean": round(float(topks.mean()), 4), "min": round(float(topks.min()), 4),
                      "sd": round(float(topks.std(ddof=1)), 4)},
        "ratio_mean": round(float(topks.mean()) / base, 4) if base else None,
        "stability": {k: stability.get(k) for k in ("q_threshold", "seeds",
                                                     "fraction_reproduced", "effect_reproduced")},
    }  # fmt: skip
    return publish(result, Path(out) / "bench_seeds.json", benchmarks_md, name,
                   _markdown(result, runs, Path(out), baseline))  # fmt: skip


def _markdown(r: dict, runs: list[Path], out: Path, baseline: Path | None) -> str:
    models = " ".join(f"--model {run}" for run in runs)
    base = f" --baseline {baseline}" if baseline else ""
    lines = [
        "## Splicing over seeds: one setting, its spread and which families recur",
        "",
        f"Machine: {machine_line(r['machine'])}",
        "",
        f"Command: `python -m benchmarks seeds {models}{base} --out {out}`. JSON: "
        f"`{out}/bench_seeds.json`. The runs' configs are the same but for the seed.",
        "",
        "| run | seed | mean top-k | / baseline | families with learned channels | redundant "
        "learned | branch-point-like | away from sites | named / shuffled named |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for s in r["seeds"]:
        lines.append(
            f"| `{s['run']}` | {s['seed']} | {s['mean_topk']:.3f} | "
            f"{'-' if s['ratio'] is None else format(s['ratio'], '.3f')} | "
            f"{s['learned_families']} | "
            f"{s['redundant_learned']} of {s['learned_channels']} | "
            f"{len(s['branch_point_like'])} | {len(s['away_from_sites'])} | "
            f"{s['named']} / {s['shuffled_named']} of {s['shuffled_motifs']} |"
        )
    m = r["mean_topk"]
    st = r["stability"]
    per = ", ".join(f"{s['seed']} {s['recurring']} of {s['families']}" for s in st["seeds"])
    lines += [
        "",
        f"Mean top-k over seeds: **{m['mean']:.3f}** (sd {m['sd']:.3f}, lowest {m['min']:.3f})"
        + (
            f"; / baseline ({r['baseline_mean_topk']:.3f}): **{r['ratio_mean']:.3f}**."
            if r["ratio_mean"]
            else "."
        ),  # fmt: skip
        "",
        f"Seed stability (families whose representative matches one in every other seed at "
        f"Tomtom q < {st['q_threshold']}): {per}; fraction reproduced "
        f"**{st['fraction_reproduced']}**"
        + ("." if st.get("effect_reproduced") is None else
           f"; share of the summed family effect carried by families in every seed "
           f"**{st['effect_reproduced']}** (floor: >= {EFFECT_FLOOR}).")  # fmt: skip
    ]
    return "\n".join(lines)
