"""The registry of optional training rules (``base.py`` says what a rule is), in the order the
trainer calls them at an evaluation, and the ``annealing`` config block they extend.

A new rule is a module in this folder and one line in :data:`RULES`: its config block
(``annealing.<name>``) joins :class:`AnnealingConfig` from its ``Settings``.
"""

from __future__ import annotations

import dataclasses

from ...config import bounded
from ...sparsity.annealing import AnnealingSettings
from .base import TrainingRule
from .channel_edit import ChannelEdit
from .rollback import Rollback

#: The rules, in the order they are called: a rule that holds the model back (a step on
#: probation) comes before those that edit it.
RULES: tuple[type[TrainingRule], ...] = (Rollback, ChannelEdit)


def _with_rule_blocks(base: type) -> type:
    """``base`` (Algorithm 1's settings) with one optional block per rule, off (None) unless
    a preset, a file or ``--set`` gives it."""
    blocks = [(rule.name, rule.Settings | None, bounded(None, optional=True, settable=True))
              for rule in RULES]  # fmt: skip
    return dataclasses.make_dataclass("AnnealingConfig", blocks, bases=(base,),
                                      namespace={"__module__": __name__})  # fmt: skip


#: The ``annealing`` block of a run's config: Algorithm 1's constants, then each rule's block.
AnnealingConfig = _with_rule_blocks(AnnealingSettings)


def build_rules(annealing, model, task) -> list[TrainingRule]:
    """The rules whose blocks ``annealing`` (an :data:`AnnealingConfig`) turns on, each
    checked against ``model`` and ``task`` (a ConfigError before training when one cannot
    act on them)."""
    rules = []
    for rule in RULES:
        settings = getattr(annealing, rule.name)
        if settings is not None:
            rules.append(rule(settings))
            rules[-1].check(model, task)
    return rules
