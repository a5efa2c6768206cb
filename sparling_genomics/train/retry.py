"""Training a run that a scheduler may retry: continue the killed attempt, or start over
without losing what the earlier attempt finished.

A cluster job that is killed (a node lost, a time limit hit) is submitted again with the same
command; ``train --out RUN`` would refuse the folder the first attempt left. Continuing it
from its last checkpoint is right only when it is a run of the very same config: a changed
config (Snakemake reruns a job whose parameters changed) must start afresh.

Nothing is touched before the new attempt's inputs are checked (the task, its dataset, the
device: everything a :class:`~.trainer.Trainer` needs), so a retry with a missing dataset, a
file of the wrong kind or a device that is not there fails in one line with the folder as it
was. A finished run is never deleted: of the same config it is the answer (nothing is
trained again); of another config (or on a dataset whose content changed since) it is moved
aside to ``RUN.replaced-N``, as is a killed run of another config that left a checkpoint.
Only an attempt killed before its first checkpoint (its ``config.yaml`` and a partial log, no
weights) is removed.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from ..config import RunConfig, dump_yaml
from ..errors import ConfigError, InputError, RunDirectoryError
from ..rundir import LAST_CHECKPOINT, checkpoint_path, config_path, metrics_path, read_metrics
from .provenance import check_run_inputs
from .run_config import load_saved_config, recorded_config
from .trainer import Trainer, train


def train_or_resume(config: RunConfig, out: Path, *, progress: bool = True) -> dict:
    """Train ``config`` into ``out``; continue the run there when it is a killed run of this
    very config, and return its metrics when it is a finished one (see the module)."""
    out = Path(out)
    if not out.exists() or (out.is_dir() and not any(out.iterdir())):
        return train(config, out, progress=progress)
    if not config_path(out).is_file():
        raise RunDirectoryError(f"{out}: exists and is not a run folder (no "
                                f"{config_path(out).name}); choose another --out")  # fmt: skip
    Trainer(config, out, progress=False)  # the inputs, checked before the folder is touched
    same = _same_config(config, out)
    finished = metrics_path(out).is_file()
    if same and finished:
        return read_metrics(out)
    if same and checkpoint_path(out, LAST_CHECKPOINT).is_file():
        return train(config, out, resume=True, progress=progress)
    if finished or checkpoint_path(out, LAST_CHECKPOINT).is_file():
        aside = set_aside(out)
        print(f"{out}: holds a run of another config; moved to {aside}", file=sys.stderr)
    else:  # killed before its first checkpoint: nothing finished to keep
        shutil.rmtree(out)
    return train(config, out, progress=progress)


def _same_config(config: RunConfig, out: Path) -> bool:
    """Whether run folder ``out`` was started with ``config`` (its saved config, read as
    today's code reads it, written as this run would write it) on inputs of the content it
    recorded (``provenance.check_run_inputs``)."""
    try:
        saved = load_saved_config(config_path(out))
        check_run_inputs(out, saved)
    except (ConfigError, InputError):
        return False  # unreadable, of a key this code does not know, or on other inputs
    return dump_yaml(recorded_config(saved, out)) == dump_yaml(recorded_config(config, out))


def set_aside(run: Path) -> Path:
    """Rename run folder ``run`` to the first free ``RUN.replaced-N`` beside it; the new
    path."""
    n = 1
    while (aside := run.with_name(f"{run.name}.replaced-{n}")).exists():
        n += 1
    run.rename(aside)
    return aside
