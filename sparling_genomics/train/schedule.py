"""The trainer's schedule rules: the learning rate of each step (warm-up ramp, then the
phase's rate: constant, or a half cosine in the final phase) and when to give up an
initialisation that sits on a plateau (``train.plateau_*``).

Two guards for the start of a run, both off by default: ``warmup_samples`` ramps the learning
rate up linearly over an initialisation's first samples, and ``plateau_restart_samples``
gives up an initialisation that has shown no sign of learning the task by then (best
validation accuracy below ``plateau_accuracy``, no annealing step yet) and starts again from
a new one, at most ``plateau_max_restarts`` times. Why: whether a DigitCircle run leaves its
dense-phase plateau is down to chance; one seed in three sat on it for 200k samples
(``docs/paper-domains.md``).
"""

from __future__ import annotations

import math

from .settings import TrainSettings


def step_lr(
    t: TrainSettings,
    *,
    phase: str,
    seen: int,
    since_final: int,
    batch_size: int,
    annealing: bool,
    sparse: bool,
) -> float:
    """The learning rate of the next step: the warm-up ramp over an initialisation's first
    ``warmup_samples`` (``seen`` counts from its start), then the phase's rate."""
    lr = final_lr(t, since_final, annealing=annealing, sparse=sparse) if phase == "final" else t.lr
    if t.warmup_samples > 0 and seen < t.warmup_samples:
        lr *= min(1.0, (seen + batch_size) / t.warmup_samples)
    return lr


def final_lr(t: TrainSettings, since_final: int, *, annealing: bool, sparse: bool) -> float:
    """Learning rate of the final phase, ``since_final`` samples into it: constant, or a
    half cosine down to 5% over ``final_samples`` (``baseline_samples`` for a model without
    a sparse layer, which spends its whole run in this phase)."""
    lr = t.lr * (t.final_lr_scale if annealing else 1.0)
    if t.final_lr_schedule == "cosine":
        length = t.final_samples if sparse or t.baseline_samples is None else t.baseline_samples
        progress = since_final / max(1, length)
        lr *= 0.05 + 0.95 * 0.5 * (1.0 + math.cos(math.pi * min(1.0, progress)))
    return lr


def on_plateau(
    t: TrainSettings, *, phase: str, annealing_steps: int, restarts: int, seen: int, best: float
) -> bool:
    """True when an initialisation should be given up: no annealing step yet,
    ``plateau_restart_samples`` seen since it started (``seen``), restarts left, and its best
    validation accuracy still below ``plateau_accuracy``."""
    after = t.plateau_restart_samples
    return (
        after > 0
        and phase == "anneal"
        and annealing_steps == 0
        and restarts < t.plateau_max_restarts
        and seen >= after
        and best < t.plateau_accuracy
    )
