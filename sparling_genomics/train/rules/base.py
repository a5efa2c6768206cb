"""The interface every optional training rule implements, and what it is handed.

Algorithm 1 (``sparsity/annealing.py``) decides at each evaluation whether to tighten the
density. A *training rule* acts at the same evaluations: it may hold Algorithm 1 back, put an
earlier model back, or edit the model's channels. Each rule is one class with its own config
block under ``annealing`` (its ``Settings`` dataclass: on while the block is present, off
while it is ``null``, which keeps it out of ``config.yaml``), its own state for checkpoints
(``state_dict``) and its own summary for ``metrics.json``. The trainer calls the rules of the
registry (``rules/registry.py``) in order and never names one, so a new rule is its module
and one line in the registry. In the spirit of the original Sparling code's update-rule base
class and registry.

At each evaluation the trainer calls, for each rule in order:

1. :meth:`TrainingRule.review`, before Algorithm 1 decides: the rule may ask for no step at
   this evaluation (``hold``), or put back an earlier model (``restored``: the trainer then
   makes no decision and calls no rule's :meth:`after` this time);
2. :meth:`TrainingRule.after`, once Algorithm 1 has decided (``context.step``: the density
   step it just took, or None) and the new density is set.

A rule hands back its additions to the evaluation's log record, which the trainer files under
the rule's name. A rule that is waiting on the model (``settled`` False: a step on probation)
tells the later rules, through ``context.settled``, to leave the model alone.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar

import torch

from ...config import restore_fields
from ...sparsity.annealing import AnnealingDecision, SparsityAnnealer


@dataclass(frozen=True)
class RuleContext:
    """What a rule is handed at an evaluation (the objects in it are the trainer's own)."""

    samples: int  # training samples seen
    phase: str  # "anneal" or "final"
    accuracy: float  # validation accuracy at this evaluation
    density: float | None  # the model's density now (None: no sparse layer)
    stop_density: float
    final_share: float  # share of the final phase passed (0 while annealing)
    model: torch.nn.Module
    optimizer: torch.optim.Optimizer
    annealer: SparsityAnnealer
    task: Any  # tasks.base.Task
    device: torch.device
    seed: int
    eval_batch_size: int
    settled: bool = True  # no earlier rule is waiting on the model
    step: AnnealingDecision | None = None  # the step Algorithm 1 just took (after)
    before_step: dict | None = None  # CPU weights from before that step (after)


@dataclass
class Review:
    """What a rule asks of the trainer before Algorithm 1 decides."""

    record: dict = field(default_factory=dict)  # the log record's additions
    hold: bool = False  # no density step at this evaluation
    restored: bool = False  # the rule put an earlier model back


class TrainingRule:
    """One optional training rule: ``name`` is its config block (``annealing.<name>``), its log
    key and its ``metrics.json`` key; ``Settings`` the block's dataclass, ``State`` what it
    keeps between evaluations (saved in checkpoints)."""

    name: ClassVar[str]
    Settings: ClassVar[type]
    State: ClassVar[type]

    def __init__(self, settings) -> None:
        self.settings = settings
        self.state = self.State()

    def check(self, model, task) -> None:
        """Raise a ConfigError before training when the rule cannot act on ``model``."""

    @property
    def settled(self) -> bool:
        """False while the rule waits to see whether the model recovers (later rules then
        leave the model alone)."""
        return True

    def review(self, context: RuleContext) -> Review:
        """Before Algorithm 1 decides at this evaluation."""
        return Review()

    def after(self, context: RuleContext) -> dict:
        """After Algorithm 1 decided (and outside annealing); the log record's additions."""
        return {}

    def state_dict(self) -> dict:
        return dataclasses.asdict(self.state)

    def load_state_dict(self, state: dict) -> None:
        restore_fields(self.state, state, self.name)

    def summary(self) -> dict:
        """What ``metrics.json`` reports under ``annealing.<name>``: the block and the
        state."""
        return {**dataclasses.asdict(self.settings), **self.state_dict()}
