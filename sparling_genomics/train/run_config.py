"""A run's whole config: the task's defaults and preset, then user files and ``--set``.

Here, in the train layer, because a run's config joins what each task owns (its ``data`` and
``model`` dataclasses, what it sets in the shared blocks, its presets; ``tasks``) with the
trainer's settings (``train.settings``), Algorithm 1's (``sparsity.annealing``) and the
training rules' blocks (``train.rules``); the merging and checking itself is ``config``'s.
Runs saved before today's keys are read through ``train.legacy``.
"""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path
from typing import Literal

from ..config import RunConfig, load_yaml, merge, to_dict
from ..errors import ConfigError, close_match
from ..io import record_path, resolve_recorded
from ..tasks.registry import task_class
from .legacy import refuse_old_keys, refuse_retired, upgrade_saved
from .rules.registry import RULES, AnnealingConfig
from .settings import TrainSettings


def default_config(name: str) -> RunConfig:
    """Task ``name``'s config before any preset: its data and model dataclasses, the shared
    train and annealing settings with what the task sets in them."""
    cls = task_class(name)
    config = RunConfig(
        task=name,
        data=cls.data_config(),
        model=cls.model_config(),
        train=TrainSettings(),
        annealing=AnnealingConfig(),
    )
    return merge(config, cls.defaults, every=True)


def resolve_config(
    task: str,
    preset: str = "cpu",
    *,
    files: list[Path] | None = None,
    overrides: list[dict] | None = None,
) -> RunConfig:
    """The full config of ``task`` with ``preset``, files and overrides applied in order."""

    presets = task_class(task).presets
    if preset not in presets:
        near = close_match(preset, presets)
        hint = f" (did you mean {near!r}?)" if near else ""
        raise ConfigError(f"unknown preset {preset!r} for task {task!r}{hint}; choose from: "
                          f"{', '.join(presets)}")  # fmt: skip
    config = dataclasses.replace(merge(default_config(task), presets[preset]), preset=preset)
    for path in files or []:
        user = load_yaml(path)
        user.pop("preset", None)
        if user.get("task", task) != task:
            raise ConfigError(f"{path}: config is for task {user['task']!r}, not {task!r}")
        refuse_old_keys(user, str(path))
        config = merge(config, user)
    for override in overrides or []:
        refuse_old_keys(override, "--set")
        config = merge(config, override)
    return config


def load_saved_config(path: Path, *, use: Literal["read", "evaluate", "resume"] = "read",
                      ) -> RunConfig:  # fmt: skip
    """A run's saved ``config.yaml``, checked against the current defaults of its task (keys
    added since it was saved take the values it was trained with: ``saved_run_defaults``;
    keys renamed or removed since are read through ``legacy.upgrade_saved``). A removed
    setting the run used is refused in one line when it matters to the ``use``
    (``legacy.refuse_retired``). The files it names (the task's ``path_keys``) are found from
    the run's folder: relative to it as :func:`recorded_config` writes them, else as an older
    run recorded them (relative to the working folder), whatever the folder it is read from."""
    raw = load_yaml(path)
    if use != "read":
        refuse_retired(raw, str(path), resume=use == "resume")
    saved = upgrade_saved(raw)
    task = saved.pop("task", None)
    if not task:
        raise ConfigError(f"{path}: no 'task' key; not a run configuration")
    preset = saved.pop("preset", "cpu")
    legacy = getattr(task_class(task), "saved_run_defaults", {})
    config = resolve_config(task, preset, overrides=[legacy, saved])
    for key, text in recorded_paths(config).items():
        _set_key(config, key, str(resolve_recorded(text, Path(path).parent)))
    return config


def recorded_paths(config: RunConfig) -> dict[str, str]:
    """The input files ``config`` names: ``{key: path}`` of its task's ``path_keys`` that
    are set."""
    found = {}
    for key in task_class(config.task).path_keys:
        value = _get_key(config, key)
        if value:
            found[key] = str(value)
    return found


def recorded_config(config: RunConfig, run: Path) -> RunConfig:
    """``config`` as run folder ``run`` saves it: each input file (``path_keys``) recorded
    by :func:`io.record_path`, relative to the run where both lie under the working folder
    (a results tree that moves as one), absolute otherwise."""
    saved = copy.deepcopy(config)
    for key, text in recorded_paths(config).items():
        _set_key(saved, key, record_path(text, run))
    return saved


def _get_key(config: RunConfig, key: str):
    obj = config
    for part in key.split("."):
        obj = getattr(obj, part)
    return obj


def _set_key(config: RunConfig, key: str, value) -> None:
    *parents, last = key.split(".")
    obj = config
    for part in parents:
        obj = getattr(obj, part)
    setattr(obj, last, value)


#: Keys a user may edit in a killed run's ``config.yaml`` before ``--resume``: its budget and
#: how it uses the machine (e.g. a longer ``train.max_seconds`` for a run a cap stopped).
RESUME_EDITS = ("device", "preset", "train.max_samples", "train.max_seconds",
                "train.checkpoint_every_seconds", "train.threads", "train.prefetch",
                "train.eval_batch_size")  # fmt: skip
#: The blocks of a config that decide what a trained model computes (the rest shaped how it
#: was trained: evaluating its weights does not read them).
MODEL_BLOCKS = ("task", "data", "model")


def check_recorded_config(config: RunConfig, recorded: dict, where: Path, *,
                          resume: bool) -> None:  # fmt: skip
    """A one-line ConfigError when run config ``config`` (its ``config.yaml``, as loaded)
    differs from ``recorded``, the config its checkpoint ``where`` was written with, in a key
    that matters: to ``resume`` any key but :data:`RESUME_EDITS`, to evaluate the keys of
    :data:`MODEL_BLOCKS`. Input file paths (a moved dataset) and keys only one side has (a
    key added since an old checkpoint was written) are not compared."""
    skip = set(task_class(config.task).path_keys) | (set(RESUME_EDITS) if resume else set())
    now = dict(_leaves(to_dict(config)))
    then = dict(_leaves(upgrade_saved(recorded)))
    blocks = tuple(f"annealing.{rule.name}." for rule in RULES)  # off: absent, not unknown
    for key in [*now, *(k for k in then if k not in now and k.startswith(blocks))]:
        if key in skip or (key not in then and not key.startswith(blocks)):
            continue
        if not resume and key.split(".")[0] not in MODEL_BLOCKS:
            continue
        value, was = now.get(key, "off"), then.get(key, "off")
        if value != was:
            raise ConfigError(
                f"{where.parent.parent / 'config.yaml'}: {key} is {value!r} but the run was "
                f"trained with {was!r} (recorded in {where.name}); put it back, or train a new "
                "run"
            )


def _leaves(node: dict, where: str = ""):
    for key, value in node.items():
        path = f"{where}.{key}" if where else str(key)
        if isinstance(value, dict):
            yield from _leaves(value, path)
        else:
            yield path, value
