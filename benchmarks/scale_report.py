"""The scale benchmark's section of BENCHMARKS.md, from ``bench_scale.json``: every step's time
and peak memory at every size, the growth between sizes and the floors."""

from __future__ import annotations

from pathlib import Path

from .report import machine_line
from .scale_growth import (
    FLAT_RATIO,
    LINEAR_RATIO,
    LINEAR_SHARE,
    REFERENCE_SIZES,
    growth,
    judged_floors,
    measured_sizes,
)
from .scale_steps import BF16_STEP, REPO, STEPS

# Steps whose work grows with the genome, and those whose work is fixed by design.
GROWING = ("dataset", "scan")
FIXED = {"train": "fixed sample budget", "export": "fixed test windows",
         "variants": "fixed SNV count", "report": "summaries"}  # fmt: skip


def _cell(r: dict | None) -> str:
    return "-" if r is None else f"{r['seconds']:,.1f} s, {r['peak_rss_gb']:.2f} GB"


def _scan_rate(entry: dict) -> str:
    """The whole scan's bases a second, and its model pass's (from ``scan.json``)."""
    scan = entry["steps"].get("scan")
    if scan is None:
        return "-"
    text = f"{entry['bases'] / scan['seconds'] / 1e6:.2f} Mb/s"
    model = (scan.get("summary") or {}).get("scan_seconds")
    if model:
        text += f" ({entry['bases'] / model / 1e6:.2f} Mb/s)"
    return text


def _verdict(met: bool | None, final: bool) -> str:
    if met is None:
        return "not measured yet"
    word = "**met**" if met else "**not met**"
    return word if final else f"{word} (provisional)"


def render_markdown(result: dict, json_path: Path) -> str:
    """The BENCHMARKS.md section of ``result`` (sizes measured so far, and which are not)."""
    sizes = measured_sizes(result)
    labels = [k for k, _ in sizes]
    if Path(json_path).resolve().is_relative_to(REPO):  # as the repository names it
        json_path = Path(json_path).resolve().relative_to(REPO)
    lines = [
        "## Scale: every verb on 100 Mb, 300 Mb and 1 Gb genomes built from real sequence",
        "",
        f"Machine: {machine_line(result['machine'])}",
        "",
        f"Command: `{result['command']}`. JSON: `{json_path}`. Genomes: "
        "`scripts/make_scale_genome.py` (copies of the bundled TAIR10 chr1 and A. arenosa "
        "chr1-2 with their GFF3, and of two unannotated assemblies as gene-free sequence; ~1% "
        "substitutions per copy). Each step is one `sparling-genomics` process; peak memory is "
        "its own max RSS (read by a small launcher process, see `benchmarks/scale.py`). "
        "`train` has the same sample budget at every size ("
        + ", ".join(f"`{s}`" for s in result["settings"]["train"])
        + f"); `variants` scores {result['settings']['variants']:,} random SNVs at every size.",
    ]
    missing = [k for k in result.get("requested", []) if k not in labels]
    missing += [k for k in REFERENCE_SIZES if k not in labels and k not in missing]
    partial = [(k, [s for s in STEPS if s not in v["steps"]]) for k, v in sizes
               if len(v["steps"]) < len(STEPS)]  # fmt: skip
    notes = []
    if missing:
        notes.append("not measured yet: " + ", ".join(missing))
    if partial:
        notes.append("; ".join(f"{k} lacks {', '.join(s)}" for k, s in partial))
    failed = [(k, v["failed"]) for k, v in result.get("sizes", {}).items() if v.get("failed")]
    notes += [f"{k}: `{f['step']}` failed (exit {f['exit_code']}, log `{f['log']}`)"
              for k, f in failed]  # fmt: skip
    if notes:
        lines += ["", "**Missing:** " + "; ".join(notes) + ". Rerun the command: finished "
                  "steps are kept."]  # fmt: skip
    if not sizes:
        return "\n".join(lines)
    cpus = sorted({s.get("cpu") for _, v in sizes for s in v["steps"].values()} - {None})
    if len(cpus) > 1:
        lines += ["", "Steps ran on more than one CPU: " + "; ".join(cpus) + "."]
    lines += ["", "| step | " + " | ".join(labels) + " |", "|---|" + "---|" * len(labels)]
    lines.append("| genome | " + " | ".join(
        f"{v['bases']:,} bases, {v.get('genome', {}).get('sequences', '-')} sequence(s), "
        f"{100 * v.get('genome', {}).get('annotated_bases', 0) / v['bases']:.0f}% annotated, "
        f"{v.get('genome', {}).get('genes', 0):,} genes" for _, v in sizes) + " |")  # fmt: skip
    for step in STEPS:
        lines.append(f"| `{step}` | " + " | ".join(_cell(v["steps"].get(step))
                                                     for _, v in sizes) + " |")  # fmt: skip
    lines.append("| `scan` rate (model pass alone) | " + " | ".join(
        _scan_rate(v) for _, v in sizes) + " |")  # fmt: skip
    for k, v in sizes:
        fast = v.get(BF16_STEP)
        if fast:
            agree = fast["agreement"]
            lines += ["", f"`scan --precision bfloat16` at {k}: {_cell(fast)}, "
                      f"{fast['bases'] / fast['seconds'] / 1e6:.2f} Mb/s whole "
                      f"(float32: {_scan_rate(v)}); {agree['bfloat16_sites']:,} sites against "
                      f"float32's {agree['float32_sites']:,}, {agree['shared']:,} shared "
                      f"(Jaccard {agree['jaccard']:.4f})."]  # fmt: skip
    rows = growth(result)
    if rows:
        lines += ["", f"Growth (larger size / smaller): time per base <= {LINEAR_RATIO} is "
                  f"within {LINEAR_SHARE} of linear (or better); memory <= {FLAT_RATIO} is "
                  "flat. Expected: "
                  + ", ".join(f"`{s}` grows with the genome" for s in GROWING) + "; "
                  + ", ".join(f"`{s}` {why}" for s, why in FIXED.items()) + ".", "",
                  "| step | sizes | bases x | time x | time per base x | within "
                  f"{LINEAR_SHARE} of linear | peak memory x |",
                  "|---|---|---|---|---|---|---|"]  # fmt: skip
        for g in rows:
            lines.append(f"| `{g['step']}` | {g['from']} -> {g['to']} | {g['size_ratio']:.2f} | "
                         f"{g['time_ratio']:.2f} | {g['per_base_ratio']:.2f} | "
                         f"{'yes' if g['within_linear'] else '**no**'} | "
                         f"{g['memory_ratio']:.2f} |")  # fmt: skip
    lines += ["", "Floors (issue 55; provisional until both 100 Mb and 1 Gb are measured):", "",
              "| floor | measured | verdict |", "|---|---|---|"]
    for f in judged_floors(result):
        lines.append(f"| {f['floor']} | {f['value']} | {_verdict(f['met'], f['final'])} |")
    return "\n".join(lines)
