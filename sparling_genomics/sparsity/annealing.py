"""Adaptive sparsity annealing (the Sparling paper's Algorithm 1).

An accuracy bar ``T`` starts at ``initial_bar`` (1.0), is kept in ``[0, 1]`` and falls by
``bar_decay_per_sample`` for every training sample seen. At each evaluation, if validation
accuracy exceeds ``T`` the density is multiplied by ``multiplier`` (0.75); ``T`` is then
raised to the accuracy when that is higher. So the density only tightens once the model has
recovered to (nearly) the best accuracy it has shown. Annealing is done once one more step
would take the density below ``stop_density``: the final density is the smallest
``start * multiplier**k`` that is still at or above the stop density, as in the paper (its
DigitCircle runs end at 0.5 * 0.75**32 = 5.0e-5 for a target of 4.49e-5). Stopping *below* the
true motif density would leave fewer activations than motifs, so some motifs would be
missed by construction.

A *held* evaluation moves the bar as usual but never tightens: the task is not yet its final
task (a curriculum still growing), or a training rule waits on the model (a step on
probation, ``train/rules/rollback.py``).

Algorithm 1 is the one rule every run has; the optional ones that act at the same evaluations
(taking a step back, editing channels) are plug-ins of ``train/rules/``, each with its own
config block under ``annealing``. A deadline and a slower late bar were tried here and removed
(docs/method.md, "Tried and removed").
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Literal

from ..config import bounded, restore_fields
from ..errors import ConfigError
from .layer import check_density


@dataclass
class AnnealingSettings:
    """Algorithm 1's constants: the ``annealing`` block of a run's config but for the training
    rules' blocks (``train/rules/``)."""

    enabled: bool = True
    start_density: float = bounded(0.5, above=0, max=1)
    # A density, or 'auto': the task's true motif density.
    stop_density: float | Literal["auto"] = bounded("auto", above=0, max=1)
    multiplier: float = bounded(0.75, above=0, max=1)
    initial_bar: float = bounded(1.0, min=0, max=1)
    bar_decay_per_sample: float = bounded(5e-6, min=0)

    def stop_density_for(self, true_density: float | None) -> float:
        """The stop density: the number given, or for 'auto' the task's true motif density."""
        if self.stop_density != "auto":
            return check_density(self.stop_density)
        if true_density is None:
            raise ConfigError(
                "annealing.stop_density 'auto' needs a task with a known motif density"
            )
        return check_density(true_density)


@dataclass
class AnnealingDecision:
    """What one evaluation decided."""

    samples: int
    accuracy: float
    bar: float
    density_before: float
    density_after: float

    @property
    def tightened(self) -> bool:
        return self.density_after < self.density_before


@dataclass
class SparsityAnnealer:
    """State and rule of Algorithm 1; ``state_dict``/``load_state_dict`` for checkpoints."""

    start_density: float = 0.5
    stop_density: float = 1e-3
    multiplier: float = 0.75
    initial_bar: float = 1.0
    bar_decay_per_sample: float = 1e-7
    density: float = field(default=-1.0)
    bar: float = field(default=-1.0)
    last_samples: int = 0
    steps: int = 0

    def __post_init__(self) -> None:
        self.start_density = check_density(self.start_density)
        self.stop_density = check_density(self.stop_density)
        if not 0.0 < self.multiplier < 1.0:
            raise ConfigError(f"annealing multiplier must lie in (0, 1), got {self.multiplier}")
        if self.stop_density > self.start_density:
            raise ConfigError(
                f"stop density {self.stop_density:g} is above start density "
                f"{self.start_density:g}: nothing to anneal"
            )
        if self.bar_decay_per_sample < 0:
            raise ConfigError("bar_decay_per_sample must not be negative")
        if self.density < 0:
            self.density = self.start_density
        if self.bar < 0:
            self.bar = min(max(self.initial_bar, 0.0), 1.0)

    @property
    def done(self) -> bool:
        """True once another step would take the density below the stop density."""
        return self.density * self.multiplier < self.stop_density

    def update(self, samples: int, accuracy: float, *, hold: bool = False) -> AnnealingDecision:
        """Apply one evaluation at ``samples`` training samples seen with ``accuracy``
        (``hold``: move the bar only)."""
        if samples < self.last_samples:
            raise ValueError(f"samples went backwards: {samples} < {self.last_samples}")
        before = self.density
        self.bar -= self.bar_decay_per_sample * (samples - self.last_samples)
        self.bar = min(max(self.bar, 0.0), 1.0)
        self.last_samples = samples
        if not hold and not self.done and accuracy > self.bar:
            self.density = before * self.multiplier
            self.steps += 1
        self.bar = max(self.bar, accuracy)
        return AnnealingDecision(samples, accuracy, self.bar, before, self.density)

    def state_dict(self) -> dict:
        return asdict(self)

    def load_state_dict(self, state: dict) -> None:
        restore_fields(self, drop_retired_state(state), "annealer")


#: Annealer state keys of the removed deadline and late bar, with the value each had while
#: off: a checkpoint written before their removal holds them.
RETIRED_STATE = {"finish_by_samples": 0, "late_bar_decay_per_sample": -1.0, "forced_steps": 0}


def drop_retired_state(state: dict) -> dict:
    """``state`` without the removed deadline's and late bar's keys; a checkpoint of a run
    that used either is refused in one line (it cannot go on as it was trained)."""
    for key, off in RETIRED_STATE.items():
        if key in state and state[key] != off:
            raise ConfigError(f"annealer state: {key}={state[key]!r} is a removed setting "
                              "(docs/method.md, 'Tried and removed'); this run cannot be resumed")
    gone = {*RETIRED_STATE, "late_within", "origin"}
    return {k: v for k, v in state.items() if k not in gone}
