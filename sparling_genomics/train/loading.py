"""Load a finished run: its saved config, task and model with the final weights."""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import CheckpointError, RunDirectoryError
from ..tasks import task_class
from .checkpoint import load_checkpoint
from .device import pick_device


def load_run(run: Path, *, device: str | None = None, overrides: list[dict] | None = None):
    """(config, task, model on device, device) of the run directory ``run``.

    ``overrides`` are merged over the saved config (e.g. another dataset to score on).
    """
    from ..config import merge
    from .trainer import _saved_config

    run = Path(run)
    if not (run / "config.yaml").is_file():
        raise RunDirectoryError(f"{run}: not a run directory (no config.yaml)")
    final = run / "checkpoints" / "final.pt"
    if not final.is_file():
        raise RunDirectoryError(f"{run}: has no checkpoints/final.pt (training not finished?)")
    config = _saved_config(run / "config.yaml")
    for override in overrides or []:
        config = merge(config, override)
    torch_device = pick_device(device or config.device)
    task = task_class(config.task)(config, config.seed)
    model = task.build_model().to(torch_device)
    payload = load_checkpoint(final, map_location=torch_device)
    try:
        model.load_state_dict(payload["model"])
    except (KeyError, RuntimeError) as exc:
        raise CheckpointError(
            f"{final}: checkpoint does not fit this model ({exc})"[:300]
        ) from None
    model.eval()
    return config, task, model, torch_device


def read_run_json(path: Path, what: str) -> dict:
    """A JSON file of a run (metrics, motifs, scan summary); a missing or torn file is a
    one-line :class:`RunDirectoryError` saying what should have written it."""
    path = Path(path)
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise RunDirectoryError(f"{path}: missing ({what})") from None
    except json.JSONDecodeError as exc:
        raise RunDirectoryError(f"{path}: not valid JSON ({exc.msg}, line {exc.lineno})") from None
