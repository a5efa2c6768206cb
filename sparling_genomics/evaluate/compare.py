"""Sparling beside its non-sparse baseline: both runs' test metrics and their ratios."""

from __future__ import annotations

from pathlib import Path

from ..errors import RunDirectoryError
from ..rundir import read_metrics

_KEPT = ("e2e", "motif", "density", "measured_density", "samples_seen", "wall_seconds",
         "stopped_by", "device")  # fmt: skip


def _metrics(run: Path) -> dict:
    return read_metrics(run, "training not finished?")


def metric_ratios(ours: dict, theirs: dict) -> dict[str, float]:
    """Sparling / baseline for every end-to-end metric both have (baseline non-zero)."""
    return {
        key: value / theirs[key]
        for key, value in ours.items()
        if isinstance(value, float) and isinstance(theirs.get(key), float) and theirs[key]
    }


def compare_runs(sparling: Path, baseline: Path | None = None) -> dict:
    """``{'task', 'sparling': {...}, 'baseline': {...}, 'ratio': {metric: s / b}}``."""
    ours = _metrics(sparling)
    result = {
        "task": ours.get("task"),
        "sparling": {"run": str(sparling), **{k: ours.get(k) for k in _KEPT}},
    }
    if baseline is not None:
        theirs = _metrics(baseline)
        if theirs.get("task") != ours.get("task"):
            raise RunDirectoryError(
                f"{baseline}: task {theirs.get('task')!r} is not {ours.get('task')!r}"
            )
        result["baseline"] = {"run": str(baseline), **{k: theirs.get(k) for k in _KEPT}}
        result["ratio"] = metric_ratios(ours["e2e"], theirs["e2e"])
    return result
