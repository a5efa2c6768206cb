"""The trainer's settings (the ``train`` block of a run's config) and the optimizer they name.

Defaults are the values most tasks share; each task sets what differs (``Task.defaults``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch

from ..config import bounded


@dataclass
class TrainSettings:
    """Batch size, learning-rate schedule, budget, evaluation and checkpoint cadence."""

    batch_size: int = bounded(16, min=1)
    lr: float = bounded(0.002, above=0)
    # The optimizer: Adam (the paper's), or AdamW (decoupled weight decay: modular addition,
    # seed 004's grokking set-up); its weight decay, second-moment decay and epsilon.
    optimizer: Literal["adam", "adamw"] = "adam"
    weight_decay: float = bounded(0.0, min=0)
    adam_beta2: float = bounded(0.999, min=0, max=0.999999)
    adam_eps: float = bounded(1e-8, above=0)
    max_samples: int = bounded(2_000_000, min=0)
    max_seconds: float = bounded(1620.0, min=0)
    eval_every: int = bounded(2_000, min=1)
    eval_batch_size: int = bounded(250, min=1)
    # Samples of the final phase (after annealing), at final_lr_scale x lr.
    final_samples: int = bounded(100_000, min=0)
    final_lr_scale: float = bounded(0.3, above=0)
    final_lr_schedule: Literal["constant", "cosine"] = "constant"
    # The trainer's start-of-run guards, off unless a task turns them on.
    # Linear learning-rate ramp over an initialisation's first samples.
    warmup_samples: int = bounded(0, min=0)
    # Give up an initialisation that has not learnt the task (best validation accuracy below
    # plateau_accuracy) after this many samples, before any annealing step, and start again
    # from a new one, at most plateau_max_restarts times (0: never).
    plateau_restart_samples: int = bounded(0, min=0)
    plateau_accuracy: float = bounded(0.05, min=0)
    plateau_max_restarts: int = bounded(2, min=0)
    # The cosine's length for a model without a sparse layer (None: final_samples); only
    # tasks with a baseline (splicing) have the key.
    baseline_samples: int | None = bounded(None, min=1, optional=True)
    # FNE/FPE/CE at every evaluation (the report's figure); None: a task without motif truth
    # (splicing) has no such key.
    log_motif_metrics: bool | None = bounded(True, optional=True)
    # The core phase (tasks whose model has a supplied site core, models/core.py): the core is
    # trained on the labels alone for this many samples or seconds, whichever ends first, then
    # frozen; its time does not count against max_seconds. None: a task without a core.
    core_samples: int | None = bounded(None, min=0, optional=True)
    core_seconds: float | None = bounded(None, min=0, optional=True)
    checkpoint_every_seconds: float = bounded(120.0, min=0)
    # Keep the weights every this many samples (0: never), at the first evaluation at or
    # after each multiple and at the start, in RUN/checkpoints/series/: the checkpoint
    # series the ``diagnose`` verb reads.
    keep_checkpoints_every: int = bounded(0, min=0)
    threads: int = bounded(0, min=0)  # 0: torch's default
    # Make the next training batch on a thread while this one trains. Off where not
    # measured: with two torch threads the extra thread can slow a step (audio: 86 -> 73
    # samples/s); on for digit_circle (+7%) and audio (one torch thread: +19%).
    prefetch: bool = False


def make_optimizer(parameters, t: TrainSettings) -> torch.optim.Optimizer:
    """``train.optimizer`` over ``parameters``: Adam or AdamW with the block's settings."""
    kind = torch.optim.AdamW if t.optimizer == "adamw" else torch.optim.Adam
    return kind(parameters, lr=t.lr, betas=(0.9, t.adam_beta2), eps=t.adam_eps,
                weight_decay=t.weight_decay)  # fmt: skip
