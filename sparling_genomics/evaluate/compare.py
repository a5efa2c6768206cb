"""Sparling beside its non-sparse baseline: both runs' test metrics and their ratios."""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import RunDirectoryError

_KEPT = ("e2e", "motif", "density", "measured_density", "samples_seen", "wall_seconds",
         "stopped_by", "device")  # fmt: skip


def _metrics(run: Path) -> dict:
    path = Path(run) / "metrics.json"
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise RunDirectoryError(f"{path}: missing (training not finished?)") from None
    except json.JSONDecodeError as exc:
        raise RunDirectoryError(f"{path}: not valid JSON ({exc.msg})") from None


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
        result["ratio"] = {
            key: value / theirs["e2e"][key]
            for key, value in ours["e2e"].items()
            if isinstance(value, float) and isinstance(theirs["e2e"].get(key), float)
            and theirs["e2e"][key]
        }  # fmt: skip
    return result
