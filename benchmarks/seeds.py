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
from sparling_genomics.evaluate.composition import WORD_BITS, WORD_COLUMNS
from sparling_genomics.rundir import config_path, read_metrics
from sparling_genomics.runners.stability import seed_stability

from .floors import (
    SEEDS_EFFECT_REPRODUCED,
    SEEDS_FAMILY_SHARE,
    SEEDS_NEAR_COPY_SHARE,
    SEEDS_NEVER_NEEDED,
)
from .report import machine_description, machine_line, publish
from .splicing_families import INTRON_BRANCH, export_or_read, family_figures

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


def waste_figures(metrics: dict, summary: dict) -> dict:
    """A run's wasted capacity: near-copies as a share of all its channels (the export's
    ``evaluate/copies.py`` figure), the learned channels that never change the output on its
    identifiability check's test inputs (alpha 0) and the largest family's share of the
    learned channels (``metrics``: ``metrics.json``; ``summary``: ``motifs.json``)."""
    motifs = [m for m in summary["motifs"] if not m.get("core")]
    learned = {m["id"] for m in motifs}
    labels = {str(m.get("channel", m["id"])) for m in motifs}  # the identifiability check's
    necessity = (((metrics.get("identifiability") or {}).get("conditions") or {})
                 .get("necessity") or {})  # fmt: skip
    unnecessary = necessity.get("unnecessary")
    never = None if unnecessary is None else sum(1 for c in unnecessary if str(c) in labels)
    families = (summary.get("families") or {}).get("families", [])
    biggest = max((sum(1 for m in f["members"] if m["id"] in learned) for f in families),
                  default=0)  # fmt: skip
    copies = (summary.get("families") or {}).get("near_copies") or {}
    return {"near_copy_fraction": copies.get("fraction"), "never_needed": never,
            "never_needed_inputs": necessity.get("inputs"),
            "largest_family_share": round(biggest / len(learned), 4) if learned else None}


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
        summary = export_or_read(run)
        figures = family_figures(summary)
        families = figures.pop("families")
        learned = {f["id"]: f["learned_members"] for f in families}
        figures["consensus"] = {f["id"]: f["consensus"] for f in families}
        figures["composition_channels"] = {f: learned.get(f, 0)
                                           for f in figures["composition_families"]}
        seeds.append({"run": str(run), "seed": metrics.get("seed"), "mean_topk": round(topk, 4),
                      "ratio": round(topk / base, 4) if base else None,
                      "density": metrics.get("density"),
                      "train_minutes": round(metrics["wall_seconds"] / 60, 1)
                      if metrics.get("wall_seconds") else None, **figures,
                      **waste_figures(metrics, summary)})  # fmt: skip
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
                   _markdown(result, runs, Path(out), baseline, name))  # fmt: skip


def _markdown(r: dict, runs: list[Path], out: Path, baseline: Path | None,
              name: str = "splicing-seeds") -> str:  # fmt: skip
    models = " ".join(f"--model {run}" for run in runs)
    base = f" --baseline {baseline}" if baseline else ""
    section = "" if name == "splicing-seeds" else f" --section '{name}'"
    setting = name.removeprefix("splicing-seeds").strip()
    title = "" if name == "splicing-seeds" else f", with `{setting or name}`"
    lines = [
        f"## Splicing over seeds{title}: one setting, its spread and which families recur",
        "",
        f"Machine: {machine_line(r['machine'])}",
        "",
        f"Command: `python -m benchmarks seeds {models}{base} --out {out}{section}`. JSON: "
        f"`{out}/bench_seeds.json`. The runs' configs are the same but for the seed.",
        "",
        "| run | seed | mean top-k | / baseline | families with learned channels | redundant "
        "learned | near-copies | never needed | largest family | branch-point-like | away "
        "from sites | named / shuffled named | train minutes |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for s in r["seeds"]:
        lines.append(
            f"| `{s['run']}` | {s['seed']} | {s['mean_topk']:.3f} | "
            f"{'-' if s['ratio'] is None else format(s['ratio'], '.3f')} | "
            f"{s['learned_families']} | "
            f"{s['redundant_learned']} of {s['learned_channels']} | "
            f"{_share(s.get('near_copy_fraction'))} | {_count(s.get('never_needed'))} | "
            f"{_share(s.get('largest_family_share'))} | "
            f"{len(s['branch_point_like'])} | {len(s['away_from_sites'])} | "
            f"{s['named']} / {s['shuffled_named']} of {s['shuffled_motifs']} | "
            f"{_count(s.get('train_minutes'))} |"
        )
    m = r["mean_topk"]
    st = r["stability"]

    def verdict(key: str, floor: float) -> str:
        return floor_verdict(r["seeds"], key, floor)

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
           f"**{st['effect_reproduced']}** (floor: >= {SEEDS_EFFECT_REPRODUCED})."),  # fmt: skip
        "",
        "Per seed, what the families read (`motifs.json`): families labelled *composition* "
        "(fire at least half as often on dinucleotide-shuffled windows, with a representative "
        f"of fewer than {WORD_COLUMNS} columns or under {WORD_BITS} bits a column), "
        "their learned channels and share of the summed family effect; families enriched "
        f"{-INTRON_BRANCH[1]}-{-INTRON_BRANCH[0]} nt upstream of acceptors against the "
        "intron-matched null (q < 0.05); the strongest preferred spacing between two different "
        "families (not overlapping):",
        "",
        "| seed | composition families (learned channels) | their effect share | "
        f"enriched {-INTRON_BRANCH[1]}-{-INTRON_BRANCH[0]} nt upstream of acceptors vs "
        "intron null | strongest spacing |",
        "|---|---|---|---|---|",
        *[family_row(s) for s in r["seeds"]],
        "",
        f"Floors on every seed (issue 57): near-copies <= {SEEDS_NEAR_COPY_SHARE:.0%} of the "
        f"channels ({verdict('near_copy_fraction', SEEDS_NEAR_COPY_SHARE)}), learned channels "
        "that never change the "
        f"output on the identifiability check's test inputs <= {SEEDS_NEVER_NEEDED} "
        f"({verdict('never_needed', SEEDS_NEVER_NEEDED)}), no family over "
        f"{SEEDS_FAMILY_SHARE:.0%} of the learned channels "
        f"({verdict('largest_family_share', SEEDS_FAMILY_SHARE)}).",
    ]
    return "\n".join(lines)


def family_row(s: dict) -> str:
    """One seed's row of the families table (a seed measured before these figures: dashes)."""
    if "composition_families" not in s:
        return f"| {s['seed']} | - | - | - | - |"
    consensus = s.get("consensus", {})

    def named(family: str) -> str:
        return f"`{consensus[family]}`" if family in consensus else family

    comp = ", ".join(f"{named(f)} ({s['composition_channels'].get(f, 0)})"
                     for f in s["composition_families"]) or "none"  # fmt: skip
    top = s.get("top_spacing")
    spacing = "none" if top is None else (
        f"{named(top['b'])} {top['spacing'][0]}..{top['spacing'][1]} nt from "
        f"{named(top['a'])} (x{top['ratio']:.1f})")  # fmt: skip
    branch = ", ".join(named(f) for f in s["intron_branch_families"]) or "none"
    return (f"| {s['seed']} | {comp} | {_share(s['composition_effect_share'])} | {branch} | "
            f"{spacing} |")


def _share(value) -> str:
    return "-" if value is None else f"{value:.0%}"


def _count(value) -> str:
    return "-" if value is None else str(value)


def floor_verdict(seeds: list[dict], key: str, floor: float) -> str:
    """'met' when every seed's ``key`` is at most ``floor``, else which seeds miss it."""
    values = [(s["seed"], s.get(key)) for s in seeds]
    if any(v is None for _, v in values):
        return "not measured on every seed"
    missed = [f"seed {seed}" for seed, v in values if v > floor]
    return "met" if not missed else "missed on " + ", ".join(missed)
