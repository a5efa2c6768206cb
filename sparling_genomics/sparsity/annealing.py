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

A deadline (``finish_by_samples`` N; None or 0: none) makes a run's schedule end by a
sample count whatever accuracy does: by ``s`` samples into an initialisation at least
``floor(K * s / N)`` of the K density steps have been taken; an evaluation that finds
annealing behind takes one step whatever the bar (a *forced* step, counted apart). Algorithm 1
alone decides while it keeps ahead of that line. No preset uses it: on the planted default set
at N = 450k it forced steps while one seed's accuracy sat at 0.63 and left two channels dead
(``bench_runs/archive/planted_i24``).

A *late* bar (``late_bar_decay_per_sample``; None: off, no preset sets it) falls at its own
rate once the density is within ``late_within`` (4) x the stop density. The paper's bar falls
0.2% per 20k samples all the way, 50x slower than the CPU presets', and a bar that falls fast
near the true density takes the last steps while accuracy is still low (DigitCircle, runs
with a 160-320k-sample final phase: the last step taken at validation exact match 0.84-0.90
in the runs that ended at E2EE 1.4-2.2%, at 0.73-0.76 in those that ended at 2.7-3.1%).
Measured once, at half the rate, on a DigitCircle seed whose path the run without it
repeated exactly up to that point: the last two steps were taken at 0.91 and 0.82 instead
of 0.82 and 0.73, and the run ended worse (test E2EE 9.8% against 2.7%: a digit split over
four channels while the model waited 40k samples at 1.4x the true density;
``docs/paper-domains.md``, attempt 23).

A *held* evaluation (the task is not yet its final task: a curriculum still growing) moves
the bar as usual but never tightens, and the deadline counts from the last held one. A
*paused* one (a step on probation, ``train/rollback.py``) moves the bar and never tightens;
the deadline goes on.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Literal

from ..config import bounded, restore_fields
from ..errors import ConfigError
from .layer import check_density

DEFAULT_LATE_WITHIN = 4.0  # x the stop density: where the late bar's rate starts


@dataclass
class AnnealingSettings:
    """The ``annealing`` block of a run's config (Algorithm 1's constants)."""

    enabled: bool = True
    start_density: float = bounded(0.5, above=0, max=1)
    # A density, or 'auto': the task's true motif density.
    stop_density: float | Literal["auto"] = bounded("auto", above=0, max=1)
    multiplier: float = bounded(0.75, above=0, max=1)
    initial_bar: float = bounded(1.0, min=0, max=1)
    bar_decay_per_sample: float = bounded(5e-6, min=0)
    # The bar's fall per sample once the density is within late_within (None: 4) x the stop
    # density; None (not in the config, settable in any task): bar_decay_per_sample all along.
    late_bar_decay_per_sample: float | None = bounded(None, min=0, optional=True, settable=True)
    late_within: float | None = bounded(None, min=1, optional=True, settable=True)
    # Samples by which annealing must be done; None (not in the config) or 0: no deadline,
    # Algorithm 1 alone.
    finish_by_samples: int | None = bounded(None, min=0, optional=True, settable=True)
    # Take back a step the model has not recovered from (train/rollback.py): samples to wait
    # (None, not in the config, or 0: off), the accuracy drop that counts as recovered (None:
    # 0.02), the retries at a smaller step (None: 2) and the rollbacks per run after which
    # no step is watched (None: 4). Settable in any task.
    rollback_samples: int | None = bounded(None, min=0, optional=True, settable=True)
    rollback_tolerance: float | None = bounded(None, min=0, max=1, optional=True, settable=True)
    rollback_retries: int | None = bounded(None, min=0, optional=True, settable=True)
    rollback_limit: int | None = bounded(None, min=0, optional=True, settable=True)
    # Split the busiest motif into an idle one (train/channel_split.py): samples a split gets
    # before the next check (None or 0: off), the density (x the stop density) below which
    # checks run (None: 8), the splits per run (None: 2) and whether a step due to be taken
    # back (train/rollback.py) is kept when a split answers it (None: no). Settable in any task.
    split_samples: int | None = bounded(None, min=0, optional=True, settable=True)
    split_within: float | None = bounded(None, min=1, optional=True, settable=True)
    split_limit: int | None = bounded(None, min=0, optional=True, settable=True)
    split_on_rollback: bool | None = bounded(None, optional=True, settable=True)
    # Which motif a split copies: the most needed (None: "busiest"), or one whose firings form
    # two clusters ("two_patterns"; no split without one).
    split_source: Literal["busiest", "two_patterns"] | None = bounded(None, optional=True,
                                                                      settable=True)
    # At each look, also push a motif off a second pattern another motif owns (split_push),
    # and merge a motif into another whose main pattern it repeats (split_merge); None: no.
    # Looks go on after the split limit while either is on.
    split_push: bool | None = bounded(None, optional=True, settable=True)
    split_merge: bool | None = bounded(None, optional=True, settable=True)
    # The share of the final phase after which the rule looks no more (None: 1, to the end).
    split_until: float | None = bounded(None, min=0, max=1, optional=True, settable=True)
    # Re-initialise wasted motifs, near-copies and never-needed ones (train/channel_resample.py):
    # samples between looks (None or 0: off), the density (x the stop density) below which
    # looks start (None: 8), the share of the final phase after which they end (None: 0.5)
    # and the motifs re-initialised per run (None: half the learned ones), and how a fresh
    # motif's filter is drawn (None: "random", ReDo; "missed": from g's features where the
    # model errs, site tasks), and whether near-copies are re-initialised (None: yes; no: only
    # never-needed motifs, copies left to the channel competition). Settable in any task.
    resample_samples: int | None = bounded(None, min=0, optional=True, settable=True)
    resample_within: float | None = bounded(None, min=1, optional=True, settable=True)
    resample_until: float | None = bounded(None, min=0, max=1, optional=True, settable=True)
    resample_limit: int | None = bounded(None, min=0, optional=True, settable=True)
    resample_init: Literal["random", "missed"] | None = bounded(None, optional=True,
                                                                settable=True)
    resample_copies: bool | None = bounded(None, optional=True, settable=True)

    def late_bar(self) -> dict:
        """The late bar's arguments of :class:`SparsityAnnealer` (a negative rate: off)."""
        rate = self.late_bar_decay_per_sample
        return {"late_bar_decay_per_sample": -1.0 if rate is None else float(rate),
                "late_within": DEFAULT_LATE_WITHIN if self.late_within is None
                else float(self.late_within)}  # fmt: skip

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
    forced: bool = False

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
    finish_by_samples: int = 0
    late_bar_decay_per_sample: float = -1.0  # negative: off
    late_within: float = DEFAULT_LATE_WITHIN
    # Samples at which this initialisation started (the deadline counts from here) and the
    # steps the deadline took.
    origin: int = 0
    forced_steps: int = 0

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
        if self.finish_by_samples < 0:
            raise ConfigError("finish_by_samples must not be negative")
        if self.late_within < 1:
            raise ConfigError(f"annealing late_within must be at least 1, got {self.late_within}")
        if self.density < 0:
            self.density = self.start_density
        if self.bar < 0:
            self.bar = min(max(self.initial_bar, 0.0), 1.0)

    @property
    def done(self) -> bool:
        """True once another step would take the density below the stop density."""
        return self.density * self.multiplier < self.stop_density

    @property
    def total_steps(self) -> int:
        """Density steps from the start density until annealing is done."""
        steps, density = 0, self.start_density
        while density * self.multiplier >= self.stop_density:  # the rule of ``done``
            density *= self.multiplier
            steps += 1
        return steps

    def bar_decay(self, density: float) -> float:
        """The bar's fall per sample at ``density``: the late rate within ``late_within`` x
        the stop density, when one is set."""
        late = density <= self.late_within * self.stop_density * (1 + 1e-9)
        if late and self.late_bar_decay_per_sample >= 0:
            return self.late_bar_decay_per_sample
        return self.bar_decay_per_sample

    def steps_due(self, samples: int) -> int:
        """Steps the deadline asks for by ``samples`` (0 without a deadline)."""
        if self.finish_by_samples <= 0:
            return 0
        share = min(1.0, max(0, samples - self.origin) / self.finish_by_samples)
        return math.floor(self.total_steps * share + 1e-9)

    def update(
        self, samples: int, accuracy: float, *, hold: bool = False, pause: bool = False
    ) -> AnnealingDecision:
        """Apply one evaluation at ``samples`` training samples seen with ``accuracy``
        (``hold``: move the bar only, the deadline counting from here; ``pause``: move the bar
        only, the deadline going on)."""
        if samples < self.last_samples:
            raise ValueError(f"samples went backwards: {samples} < {self.last_samples}")
        before = self.density
        self.bar -= self.bar_decay(before) * (samples - self.last_samples)
        self.bar = min(max(self.bar, 0.0), 1.0)
        self.last_samples = samples
        forced = False
        if hold:
            self.origin = samples
        elif pause:
            pass
        elif not self.done and accuracy > self.bar:
            self.density = before * self.multiplier
            self.steps += 1
        elif not self.done and self.steps < self.steps_due(samples):
            self.density = before * self.multiplier
            self.steps += 1
            self.forced_steps += 1
            forced = True
        self.bar = max(self.bar, accuracy)
        return AnnealingDecision(samples, accuracy, self.bar, before, self.density, forced)

    def state_dict(self) -> dict:
        return asdict(self)

    def load_state_dict(self, state: dict) -> None:
        restore_fields(self, state, "annealer")
