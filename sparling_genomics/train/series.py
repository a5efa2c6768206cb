"""The checkpoint series: a run's weights kept every ``train.keep_checkpoints_every`` samples
(and before the first step), each with the evaluation's log record, for the training
diagnostics (``diagnose``, ``runners/diagnose.py``).

A series checkpoint holds what a reader needs to rebuild the model (config, weights) and to
place it on the training curve (step, samples, phase, density, the log record); not the
optimizer, so it is a fraction of ``last.pt``. Files are ``rundir.series_checkpoint_path``,
written atomically; a resumed run rewrites the ones after its checkpoint with equal contents.
"""

from __future__ import annotations

from pathlib import Path

from ..config import RunConfig, to_dict
from ..errors import CheckpointError
from ..rundir import series_checkpoint_path
from .checkpoint import load_checkpoint, save_checkpoint
from .state import TrainerState


def keep_checkpoint(out: Path, config: RunConfig, model, state: TrainerState,
                    record: dict | None) -> bool:  # fmt: skip
    """Write the series checkpoint of the trainer's ``state`` when one is due: at the start,
    then at the first evaluation at or after each multiple of ``keep_checkpoints_every``."""
    every = config.train.keep_checkpoints_every
    if not every or state.phase == "core" or state.samples < state.next_keep:
        return False
    save_checkpoint(series_checkpoint_path(out, state.step), {
        "config": to_dict(config),
        "model": model.state_dict(),
        "step": state.step,
        "samples": state.samples,
        "phase": state.phase,
        "density": model.density,
        "record": record or {},
    })  # fmt: skip
    state.next_keep = (state.samples // every + 1) * every
    return True


def load_series_checkpoint(path: Path) -> dict:
    """One series checkpoint (CPU tensors); a :class:`CheckpointError` names a file that is
    not one."""
    payload = load_checkpoint(path)
    if not {"model", "step", "samples"} <= set(payload):
        raise CheckpointError(f"{path}: not a checkpoint of a run's series")
    return payload

