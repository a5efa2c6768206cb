"""Training a run that a scheduler may retry: continue the killed attempt, or start over.

A cluster job that is killed (a node lost, a time limit hit) is submitted again with the same
command; ``train --out RUN`` would refuse the folder the first attempt left. Continuing it
from its last checkpoint is right only when it is a run of the very same config: a changed
config (Snakemake reruns a job whose parameters changed) must start afresh.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from ..config import RunConfig, dump_yaml
from ..errors import RunDirectoryError
from ..rundir import LAST_CHECKPOINT, checkpoint_path, config_path, metrics_path
from .run_config import recorded_config
from .trainer import train


def train_or_resume(config: RunConfig, out: Path, *, progress: bool = True) -> dict:
    """Train ``config`` into ``out``, continuing the run there when it is a killed run of
    this very config (its ``config.yaml`` reads the same, a last checkpoint, no metrics):
    what a retried cluster job wants. Another run there (another config, finished, or
    killed before its first checkpoint) is removed and trained afresh; a folder that is not
    a run folder is refused."""
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        if not config_path(out).is_file():
            raise RunDirectoryError(f"{out}: exists and is not a run folder (no "
                                    f"{config_path(out).name}); choose another --out")
        same = config_path(out).read_text() == dump_yaml(recorded_config(config, out))
        if (same and checkpoint_path(out, LAST_CHECKPOINT).is_file()
                and not metrics_path(out).is_file()):  # fmt: skip
            return train(config, out, resume=True, progress=progress)
        shutil.rmtree(out)
    return train(config, out, progress=progress)
