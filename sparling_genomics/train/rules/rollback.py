"""Taking back a density step the model has not recovered from (``annealing.rollback``).

Algorithm 1 never undoes a step, and near the true motif density one step can cost a motif for
good. With this rule every step Algorithm 1 takes, but the one that ends annealing (the final
phase is its recovery), puts the run *on probation*: no further step is taken until validation
accuracy comes back to within ``tolerance`` of the step's reference, the mean of the last (up
to three) evaluations at the density it left, the one that took it included. When
``samples`` training samples pass without that, the model and optimizer are put back as they
were before the step and the step is taken again at half its size in log density (multiplier
``m ** 0.5``, then ``m ** 0.25``), up to ``retries`` times; after that the step stands. After
``limit`` rollbacks in a run no further step is put on probation. The batch stream, budget and
clock go on: the samples spent on a failed step stay spent.

What it was measured to do, and the forms tried before this one: docs/method.md ("A density
step the model does not recover from is taken back") and its runs under
``bench_runs/archive/planted_i24h`` and ``planted_i24i``.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

from ...config import bounded
from .base import Review, RuleContext, TrainingRule

WINDOW = 3  # evaluations at the density a step leaves that make its reference


@dataclass
class RollbackSettings:
    """The ``annealing.rollback`` block."""

    samples: int = bounded(50_000, min=1, help="samples a step gets to recover in")
    tolerance: float = bounded(0.02, min=0, max=1,
                               help="the accuracy drop that counts as recovered")  # fmt: skip
    retries: int = bounded(2, min=0, help="retakes of a step at a smaller size")
    limit: int = bounded(4, min=0, help="rollbacks a run, after which no step is watched")


@dataclass
class RollbackState:
    """The step under watch (none when ``anchor`` is None) and what the rule has done.

    ``anchor`` holds the model and optimizer state dicts from before the step, ``reference``
    the mean accuracy of the last evaluations at the density it left (``recent``, up to
    ``WINDOW``), ``bar`` Algorithm 1's bar right after it, ``density_before`` the density it
    left, ``since`` the samples when it was (last) taken and ``retakes`` how often it has been
    taken again."""

    anchor: dict | None = None
    reference: float = 0.0
    bar: float = 0.0
    recent: list = field(default_factory=list)  # accuracies at ``recent_density``
    recent_density: float = -1.0
    density_before: float = 0.0
    since: int = 0
    retakes: int = 0
    rollbacks: int = 0  # over the whole run
    given_up: int = 0  # steps that stood after ``retries`` retakes
    log: list = field(default_factory=list)  # (samples, density_before, density_after)


class Rollback(TrainingRule):
    """See the module docstring."""

    name = "rollback"
    Settings = RollbackSettings
    State = RollbackState

    @property
    def settled(self) -> bool:
        return self.state.anchor is None

    @property
    def spent(self) -> bool:
        """The run has taken ``limit`` steps back: no further step is watched."""
        return self.state.rollbacks >= self.settings.limit

    def review(self, context: RuleContext) -> Review:
        self.observe(context.accuracy, context.annealer.density)
        verdict = self.verdict(context.samples, context.accuracy)
        if verdict is None:
            return Review()
        if verdict == "rollback":
            anchor = self.state.anchor
            context.model.load_state_dict(anchor["model"])
            context.optimizer.load_state_dict(copy.deepcopy(anchor["optimizer"]))
            context.model.set_density(self.retake(context.annealer, context.samples))
            return Review({"verdict": "rolled_back", "retake": self.state.retakes},
                          restored=True)  # fmt: skip
        return Review({"verdict": verdict}, hold=verdict == "waiting")

    def after(self, context: RuleContext) -> dict:
        step = context.step
        if step is not None and step.tightened and not context.annealer.done:
            self.begin(context.before_step, context.optimizer, context.accuracy,
                       step.density_before, context.samples)  # fmt: skip
        return {}

    def observe(self, accuracy: float, density: float) -> None:
        """Note an evaluation's accuracy at the density it ran at (every evaluation, before
        :meth:`verdict`): the last ``WINDOW`` at one density make a step's reference."""
        s = self.state
        if density != s.recent_density:
            s.recent, s.recent_density = [], float(density)
        s.recent = [*s.recent, float(accuracy)][-WINDOW:]

    def begin(self, model_state: dict, optimizer, accuracy: float, density_before: float,
              samples: int) -> None:  # fmt: skip
        """Watch the step just taken from ``density_before`` at ``accuracy`` (the bar after
        it); ``model_state`` is a CPU snapshot of the weights before it. Not once the run has
        spent its ``limit`` of rollbacks."""
        if self.spent:
            return
        s = self.state
        s.anchor = {"model": model_state, "optimizer": copy.deepcopy(optimizer.state_dict())}
        seen = s.recent if s.recent_density == density_before and s.recent else []
        s.reference = sum(seen) / len(seen) if seen else float(accuracy)
        s.bar = float(accuracy)
        s.density_before = float(density_before)
        s.since = samples
        s.retakes = 0

    def verdict(self, samples: int, accuracy: float) -> str | None:
        """None (nothing on probation), 'recovered' (the probation ends), 'waiting' (no
        further step yet), 'rollback' (take the step back and retake it smaller:
        :meth:`retake`) or 'gave_up' (retaken ``retries`` times, or the run's ``limit`` of
        rollbacks spent: it stands)."""
        s = self.state
        if s.anchor is None:
            return None
        if accuracy >= s.reference - self.settings.tolerance:
            s.anchor = None
            return "recovered"
        if samples - s.since < self.settings.samples:
            return "waiting"
        if s.retakes >= self.settings.retries or self.spent:
            s.given_up += 1
            s.anchor = None
            return "gave_up"
        return "rollback"

    def retake(self, annealer, samples: int) -> float:
        """Put the annealer back before the step and take it again at half its log size;
        the new density. The caller restores the anchor's model and optimizer."""
        s = self.state
        s.retakes += 1
        s.rollbacks += 1
        multiplier = annealer.multiplier ** (0.5**s.retakes)
        density = s.density_before * multiplier  # above the first try's: above the stop
        s.log.append([samples, s.density_before, density])
        annealer.density = density
        annealer.bar = s.bar  # as right after the step
        annealer.last_samples = samples
        s.since = samples
        return density

    def summary(self) -> dict:
        s = self.state
        return {**self.settings.__dict__, "rollbacks": s.rollbacks, "limit_reached": self.spent,
                "steps_given_up": s.given_up, "retaken": s.log}  # fmt: skip
