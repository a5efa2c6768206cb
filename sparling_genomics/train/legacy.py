"""Runs saved before the training rules had config blocks of their own, and settings removed.

Until 2026-12-07 the rules' settings were flat ``annealing`` keys (``rollback_samples``,
``split_within``, ...); they are now blocks (``annealing.rollback.samples``,
``annealing.channel_edit.within``). A saved ``config.yaml`` (and a checkpoint) is read
through :data:`RENAMED`; a user's file or ``--set`` with an old key gets a one-line error
naming the new one.

Settings that were measured and found to gain nothing were removed (:data:`RETIRED`; each has
a row under "Tried and removed" in docs/method.md). A saved run that had one off loads as if
the key were absent. One that used it keeps its recorded ``config.yaml`` and still loads,
evaluates and exports when the setting only shaped training; it is refused in one line when
it would be resumed, or evaluated where the setting changed what the trained model computes.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from ..errors import ConfigError
from .rules.registry import RULES

#: Flat ``annealing`` keys of before -> (rule block, field). A block was on when its
#: ``*_samples`` key was above 0.
RENAMED = {
    "rollback_samples": ("rollback", "samples"),
    "rollback_tolerance": ("rollback", "tolerance"),
    "rollback_retries": ("rollback", "retries"),
    "rollback_limit": ("rollback", "limit"),
    "split_samples": ("channel_edit", "samples"),
    "split_within": ("channel_edit", "within"),
    "split_limit": ("channel_edit", "max_splits"),
    "split_source": ("channel_edit", "source"),
    "split_push": ("channel_edit", "push"),
    "split_merge": ("channel_edit", "merge"),
    "split_until": ("channel_edit", "until"),
}


@dataclass(frozen=True)
class Retired:
    """A removed setting: its dotted key, the values it had while off, the key it only acted
    through (itself off: this one is inert too), and whether it changed the trained model's
    output (not only how it was trained)."""

    key: str
    off: tuple = (None,)
    needs: str | None = None
    output: bool = False


RETIRED = (
    Retired("annealing.finish_by_samples", off=(None, 0)),
    Retired("annealing.late_bar_decay_per_sample"),
    Retired("annealing.late_within", needs="annealing.late_bar_decay_per_sample"),
    Retired("annealing.split_on_rollback", off=(None, False)),
    Retired("annealing.resample_samples", off=(None, 0)),
    *(Retired(f"annealing.resample_{k}", needs="annealing.resample_samples")
      for k in ("within", "until", "limit", "init", "copies")),  # fmt: skip
    Retired("model.sparse.cofire_weight", off=(None, 0)),
    Retired("model.sparse.cofire_window", needs="model.sparse.cofire_weight"),
    Retired("model.sparse.compete_thresholds", off=(None, "after"),
            needs="model.sparse.compete_window"),  # fmt: skip
    Retired("model.sparse.compete_below", needs="model.sparse.compete_window", output=True),
    Retired("model.sparse.compete_ramp", off=(None, 0), needs="model.sparse.compete_window",
            output=True),  # fmt: skip
)
_BY_KEY = {r.key: r for r in RETIRED}
_OFF = {**{r.key: r.off for r in RETIRED}, "model.sparse.compete_window": (None, 0)}


def _get(mapping: dict, key: str):
    for part in key.split("."):
        mapping = mapping.get(part) if isinstance(mapping, dict) else None
    return mapping


def _pop(mapping: dict, key: str) -> None:
    *parents, last = key.split(".")
    for part in parents:
        mapping = mapping.get(part) if isinstance(mapping, dict) else None
    if isinstance(mapping, dict):
        mapping.pop(last, None)


def _active(saved: dict, key: str) -> bool:
    retired = _BY_KEY.get(key)
    if retired is not None and retired.needs and not _active(saved, retired.needs):
        return False
    return _get(saved, key) not in _OFF.get(key, (None,))


def used_retired(saved: dict) -> list[Retired]:
    """The removed settings a saved config (its YAML mapping) had on."""
    return [r for r in RETIRED if _get(saved, r.key) is not None and _active(saved, r.key)]


def upgrade_saved(saved: dict) -> dict:
    """A saved config's YAML mapping in today's keys: the rules' flat keys as blocks, a rule
    whose block is absent off (``null``: a saved config writes every block that is on, so a
    task's default block must not switch it on), the removed settings dropped
    (:func:`used_retired` says which of them were on)."""
    saved = copy.deepcopy(saved)
    annealing = saved.get("annealing")
    if isinstance(annealing, dict):
        blocks: dict[str, dict] = {}
        for old, (block, name) in RENAMED.items():
            if old in annealing:
                blocks.setdefault(block, {})[name] = annealing.pop(old)
        for block, values in blocks.items():
            if values.get("samples"):  # 0 or null: the rule was off
                annealing[block] = values
        for rule in RULES:
            annealing.setdefault(rule.name, None)
    for retired in RETIRED:
        _pop(saved, retired.key)
    return saved


def refuse_retired(saved: dict, where: str, *, resume: bool) -> None:
    """A one-line ConfigError when run config ``saved`` (from ``where``) used a removed
    setting that matters here: any of them to ``resume`` a run, one that changed the model's
    output to evaluate it."""
    for retired in used_retired(saved):
        if resume or retired.output:
            what = "resumed" if resume else "evaluated as it was trained"
            raise ConfigError(
                f"{where}: this run used {retired.key}={_get(saved, retired.key)!r}, a setting "
                f"since removed (docs/method.md, 'Tried and removed'), so it cannot be {what}"
            )


def refuse_old_keys(override: dict, where: str) -> None:
    """A one-line ConfigError for a renamed or removed key in a user's config file or
    ``--set`` (``where`` names it), naming the key to use instead."""
    annealing = override.get("annealing") if isinstance(override, dict) else None
    for old, (block, name) in RENAMED.items():
        if isinstance(annealing, dict) and old in annealing:
            raise ConfigError(f"{where}: config key 'annealing.{old}' is now "
                              f"'annealing.{block}.{name}'")  # fmt: skip
    for retired in RETIRED:
        if _get(override, retired.key) is not None:
            raise ConfigError(f"{where}: config key {retired.key!r} was removed (docs/method.md, "
                              "'Tried and removed')")  # fmt: skip


#: Checkpoint keys of the rules' state before they were plug-ins: payload key -> (rule,
#: renamed state fields, the settings fields then saved with the state).
_STATE_BEFORE = {
    "rollback": ("rollback", {"retries": "retakes"},
                 {"samples", "tolerance", "max_retries", "limit"}),
    "split": ("channel_edit", {}, {"samples", "within", "limit", "on_rollback", "source", "push",
                                   "merge", "until"}),
}  # fmt: skip


def rule_states_before_plugins(payload: dict) -> dict[str, dict]:
    """Each rule's state from a checkpoint written before the rules were plug-ins (its
    ``rollback`` and ``split`` entries), by rule name."""
    states = {}
    for key, (rule, renamed, settings) in _STATE_BEFORE.items():
        old = payload.get(key)
        if isinstance(old, dict) and old.get("samples"):
            states[rule] = {renamed.get(k, k): v for k, v in old.items() if k not in settings}
    return states
