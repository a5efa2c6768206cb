"""The scale benchmark's figures across sizes: how each step's time and peak memory grow
with the genome, and issue 55's floors judged on them (at 100 Mb and 1 Gb, or provisionally
at the smallest and largest size measured until both are). The section and the summary table
both read them from here.
"""

from __future__ import annotations

from .floors import (
    SCALE_DATASET_MINUTES,
    SCALE_DATASET_PEAK_GB,
    SCALE_FLAT,
    SCALE_LINEAR,
    SCALE_SCAN_MB_PER_SECOND,
)
from .scale_steps import STEPS

REFERENCE_SIZES = ("100M", "300M", "1G")
#: How the floors' growth limits read in the section: "20%" and "x1.20".
LINEAR_SHARE, LINEAR_RATIO = f"{SCALE_LINEAR - 1:.0%}", f"x{SCALE_LINEAR:.2f}"
FLAT_SHARE, FLAT_RATIO = f"{SCALE_FLAT - 1:.0%}", f"x{SCALE_FLAT:.2f}"
LINEAR_FLOOR = f"every step's time within {LINEAR_SHARE} of linear in genome size"


def measured_sizes(result: dict) -> list[tuple[str, dict]]:
    """(label, entry) of every size with at least one step measured, smallest first."""
    rows = [(k, v) for k, v in result.get("sizes", {}).items() if v.get("steps")]
    return sorted(rows, key=lambda kv: kv[1]["bases"])


def growth(result: dict) -> list[dict]:
    """For each step and each pair of sizes measured (consecutive, and smallest to largest):
    the size, time and peak-memory ratios and time per base (larger / smaller)."""
    rows = []
    for step in STEPS:
        have = [(k, v["bases"], v["steps"][step]) for k, v in measured_sizes(result)
                if step in v["steps"]]  # fmt: skip
        pairs = list(zip(have, have[1:]))
        if len(have) > 2:
            pairs.append((have[0], have[-1]))
        for (a, bases_a, ra), (b, bases_b, rb) in pairs:
            size_ratio = bases_b / bases_a
            time_ratio = rb["seconds"] / max(ra["seconds"], 1e-9)
            per_base = time_ratio / size_ratio
            rows.append({"step": step, "from": a, "to": b, "size_ratio": size_ratio,
                         "time_ratio": time_ratio, "per_base_ratio": per_base,
                         "within_linear": per_base <= SCALE_LINEAR,
                         "memory_ratio": rb["peak_rss_gb"] / max(ra["peak_rss_gb"], 1e-9)})
    return rows


def _ends(result: dict, step: str) -> tuple[tuple[str, dict], tuple[str, dict], bool] | None:
    """(smaller, larger) sizes a floor compares for ``step``: 100M and 1G when both are
    measured (final), else the smallest and largest measured (provisional); None with fewer
    than two."""
    have = [(k, v["steps"][step]) for k, v in measured_sizes(result) if step in v["steps"]]
    if len(have) < 2:
        return None
    named = dict(have)
    if "100M" in named and "1G" in named:
        return ("100M", named["100M"]), ("1G", named["1G"]), True
    return have[0], have[-1], False


def judged_floors(result: dict) -> list[dict]:
    """The issue's floors: each with its measured value and met (True/False; None: not yet
    measured) and whether it is final (judged at the sizes the issue names)."""
    sizes = dict(measured_sizes(result))
    out = []
    gig = sizes.get("1G", {}).get("steps", {}).get("dataset")
    out.append({"floor": f"`dataset` at 1 Gb: <= {SCALE_DATASET_MINUTES} min",
                "value": f"{gig['seconds'] / 60:.1f} min" if gig else "1G not measured",
                "met": None if gig is None else gig["seconds"] <= SCALE_DATASET_MINUTES * 60,
                "final": bool(gig)})
    out.append({"floor": f"`dataset` at 1 Gb: <= {SCALE_DATASET_PEAK_GB} GB peak",
                "value": f"{gig['peak_rss_gb']:.2f} GB" if gig else "1G not measured",
                "met": None if gig is None else gig["peak_rss_gb"] <= SCALE_DATASET_PEAK_GB,
                "final": bool(gig)})
    rates = [(k, v["steps"]["scan"]["bases"] / v["steps"]["scan"]["seconds"] / 1e6)
             for k, v in measured_sizes(result) if "scan" in v["steps"]]  # fmt: skip
    scan_floor = f"`scan` >= {SCALE_SCAN_MB_PER_SECOND} Mb/s (whole scan) at every size"
    out.append({"floor": scan_floor,
                "value": ", ".join(f"{k}: {r:.2f} Mb/s" for k, r in rates) or "not measured",
                "met": all(r >= SCALE_SCAN_MB_PER_SECOND for _, r in rates) if rates else None,
                "final": all(k in dict(rates) for k in REFERENCE_SIZES)})  # fmt: skip
    for step in ("scan", "variants"):
        what = f"`{step}` peak memory flat (within {FLAT_SHARE})"
        ends = _ends(result, step)
        if ends is None:
            out.append({"floor": f"{what}, 100 Mb to 1 Gb", "value": "needs two sizes",
                        "met": None, "final": False})  # fmt: skip
            continue
        (a, ra), (b, rb), final = ends
        ratio = rb["peak_rss_gb"] / max(ra["peak_rss_gb"], 1e-9)
        out.append({"floor": f"{what}, 100 Mb to 1 Gb", "final": final,
                    "met": ratio <= SCALE_FLAT,
                    "value": f"{a} {ra['peak_rss_gb']:.2f} GB -> {b} {rb['peak_rss_gb']:.2f} GB "
                    f"(x{ratio:.2f})"})  # fmt: skip
    ends_rows = [g for g in growth(result) if _is_ends(result, g)]
    if ends_rows:
        slow = [f"{g['step']} x{g['per_base_ratio']:.2f}" for g in ends_rows
                if not g["within_linear"]]  # fmt: skip
        final = all(_ends(result, g["step"])[2] for g in ends_rows)
        out.append({"floor": LINEAR_FLOOR,
                    "value": (f"time per base, smallest to largest size: all <= {LINEAR_RATIO}"
                              if not slow else f"above {LINEAR_RATIO} per base: "
                              + ", ".join(slow)),
                    "met": not slow, "final": final})  # fmt: skip
    else:
        out.append({"floor": LINEAR_FLOOR, "value": "needs two sizes", "met": None, "final": False})
    return out


def _is_ends(result: dict, g: dict) -> bool:
    ends = _ends(result, g["step"])
    return ends is not None and (g["from"], g["to"]) == (ends[0][0], ends[1][0])


