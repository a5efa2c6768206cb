"""Run configuration machinery: typed config dataclasses merged from presets, files, ``--set``.

A :class:`RunConfig` holds the task's ``data`` and ``model`` dataclasses (``tasks/<name>.py``),
the ``train`` settings (``train/settings.py``) and ``annealing`` (``sparsity/annealing.py``).
``train.run_config.resolve_config`` builds it as task defaults <- preset <- user files <-
``--set``, each a nested mapping merged field by field (:func:`merge`): coerced by the field's
type annotation, checked against the range in its metadata (:func:`bounded`); an unknown key
(with the closest known key at its level as a "did you mean"), a wrong type or an out-of-range
value is a :class:`ConfigError` naming the key's path.
``RUN/config.yaml`` lists the fields in order; an ``optional`` field left at None is not in
that task's config (e.g. ``train.baseline_samples`` outside splicing). An optional field that
is also ``settable`` (an opt-in option of a shared block, e.g. ``model.sparse.compete_window``)
is left out the same way while None, but ``--set`` may still give it a value in any task.
An optional field whose type is a dataclass (``RollbackSettings | None``) is a block that is
off while None: a mapping turns it on with its own defaults (``annealing.rollback: {}``, or
``--set annealing.rollback.samples=20000``), ``null`` turns it off again.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import math
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from .errors import ConfigError, close_match

_PLAIN = {bool: "true or false", str: "a string", type(None): "null"}


@dataclass(kw_only=True)
class RunConfig:
    """One run's whole config; ``data`` and ``model`` are the task's own dataclasses."""

    task: str
    seed: int = field(default=0, metadata={"min": 0})
    device: str = "auto"
    data: Any
    model: Any
    train: Any  # train.settings.TrainSettings
    annealing: Any  # sparsity.annealing.AnnealingSettings
    preset: str = "cpu"


def _fields(obj: Any, every: bool = False, settable: bool = False) -> dict[str, dataclasses.Field]:
    """The config keys of dataclass ``obj`` (optional fields left at None excluded, but with
    ``settable`` those a user may still set: the opt-in options every task shares)."""
    return {
        f.name: f
        for f in dataclasses.fields(obj)
        if every
        or not (f.metadata.get("optional") and getattr(obj, f.name) is None)
        or (settable and f.metadata.get("settable"))
    }


def merge(obj: Any, override: dict, where: str = "", *, every: bool = False) -> Any:
    """A copy of config dataclass ``obj`` with the nested mapping ``override`` merged in
    (``every``: a task's defaults, which may also set the optional fields)."""
    if not isinstance(override, dict):
        raise ConfigError(f"config key {where!r} must be a mapping, got {override!r}")
    known = _fields(obj, every, settable=True)
    hints = typing.get_type_hints(type(obj))
    changes = {}
    for key, value in override.items():
        path = f"{where}.{key}" if where else str(key)
        if key not in known:
            names = ", ".join(sorted(map(str, known)))
            match = close_match(str(key), known)
            if match and where:
                match = f"{where}.{match}"  # the full dotted key, as the user spells it
            hint = f"; did you mean {match!r}?" if match else ""
            raise ConfigError(f"unknown config key {path!r}{hint} (known here: {names})")
        current = getattr(obj, key)
        block = block_type(hints[key])
        if block is not None and value is None:
            changes[key] = None  # an optional block turned off
        elif dataclasses.is_dataclass(current):
            changes[key] = merge(current, value, path, every=every)
        elif block is not None:
            changes[key] = merge(block(), value, path, every=every)  # turned on: its defaults
        else:
            changes[key] = _check_range(path, known[key], _coerce(path, hints[key], value))
    return dataclasses.replace(copy.deepcopy(obj), **changes)


def block_type(kind: Any) -> type | None:
    """The dataclass of an optional block field (``Settings | None``), else None."""
    if typing.get_origin(kind) not in (typing.Union, types.UnionType):
        return None
    options = [a for a in typing.get_args(kind) if a is not type(None)]
    if len(options) == 1 and dataclasses.is_dataclass(options[0]):
        return options[0]
    return None


def _coerce(path: str, kind: Any, value: Any) -> Any:
    """``value`` as type ``kind`` (YAML and ``--set`` strings accepted for numbers)."""
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin in (typing.Union, types.UnionType):
        errors = []
        for option in args:
            try:
                return _coerce(path, option, value)
            except ConfigError as exc:
                errors.append(str(exc).split(" must be ", 1)[-1].split(", got ")[0])
        raise ConfigError(f"config key {path!r} must be {' or '.join(errors)}, got {value!r}")
    if origin is Literal:
        if value in args:
            return value
        choices = " or ".join(repr(a) for a in args)
        raise ConfigError(f"config key {path!r} must be {choices}, got {value!r}")
    if origin is list:
        if not isinstance(value, list):
            raise ConfigError(f"config key {path!r} must be a list, got {value!r}")
        return [_coerce(f"{path}[{i}]", args[0], v) for i, v in enumerate(value)]
    if kind in _PLAIN:
        if type(value) is kind:
            return value
        raise ConfigError(f"config key {path!r} must be {_PLAIN[kind]}, got {value!r}")
    if kind in (int, float):
        number = value
        if isinstance(value, str):
            with contextlib.suppress(ValueError):
                number = float(value)  # YAML reads 1e3 (no dot) as a string
            with contextlib.suppress(ValueError):
                number = int(value)  # exact for large whole numbers
        is_number = isinstance(number, (int, float)) and not isinstance(number, bool)
        if is_number and not math.isfinite(number):
            raise ConfigError(f"config key {path!r} must be a finite number, got {value!r}")
        if is_number and (kind is float or float(number).is_integer()):
            return kind(number)
        what = "a whole number" if is_number else "a number"
        raise ConfigError(f"config key {path!r} must be {what}, got {value!r}")
    raise ConfigError(f"config key {path!r} has a type the config cannot read: {kind}")


def _check_range(path: str, spec: dataclasses.Field, value: Any) -> Any:
    """``value`` inside the range the field's metadata gives (numbers, and each number of a
    list; a list's length with ``min_items``)."""
    meta = spec.metadata
    if isinstance(value, list):
        if len(value) < meta.get("min_items", 0):
            raise ConfigError(f"config key {path!r} must hold at least {meta['min_items']} "
                              f"item(s), got {value!r}")  # fmt: skip
        for i, item in enumerate(value):
            _check_range(f"{path}[{i}]", spec, item)
        return value
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return value
    if "min" in meta and value < meta["min"]:
        what = "not be negative" if meta["min"] == 0 else f"be at least {meta['min']}"
        raise ConfigError(f"config key {path!r} must {what}, got {value!r}")
    if "above" in meta and value <= meta["above"]:
        raise ConfigError(f"config key {path!r} must be above {meta['above']}, got {value!r}")
    if "max" in meta and value > meta["max"]:
        raise ConfigError(f"config key {path!r} must be at most {meta['max']}, got {value!r}")
    return value


def bounded(default: Any = dataclasses.MISSING, **limits: Any) -> Any:
    """A dataclass field with a range (``min=``, ``above=``, ``max=``; a list's
    ``min_items=``) checked on merge, and optionally a ``help=`` line for generated docs."""
    if isinstance(default, (list, dict)):
        return field(default_factory=lambda: type(default)(default), metadata=limits)
    return field(default=default, metadata=limits)


def to_dict(obj: Any) -> dict:
    """The nested mapping of config dataclass ``obj``, keys in config order."""
    values = {name: getattr(obj, name) for name in _fields(obj)}
    return {k: to_dict(v) if dataclasses.is_dataclass(v) else v for k, v in values.items()}


def restore_fields(obj: Any, state: dict, what: str) -> None:
    """Put back the fields of dataclass ``obj`` from ``state`` (its ``asdict``, from a
    checkpoint); a ConfigError naming ``what`` for a key ``obj`` does not have."""
    for key, value in state.items():
        if not hasattr(obj, key):
            raise ConfigError(f"unknown {what} state key {key!r}")
        setattr(obj, key, value)


def parse_override(text: str) -> dict:
    """``a.b.c=value`` (value parsed as YAML) -> ``{'a': {'b': {'c': value}}}``."""
    if "=" not in text:
        raise ConfigError(f"--set expects KEY=VALUE, got {text!r}")
    key, _, raw = text.partition("=")
    try:
        value = yaml.safe_load(raw) if raw.strip() else ""
    except yaml.YAMLError:
        shown = key.strip() if key.strip().isprintable() else "KEY"
        raise ConfigError(f"--set {text!r}: the value is not valid YAML (quote a string: "
                          f"{shown}='...')") from None  # fmt: skip
    out: dict = {}
    node = out
    *parents, last = key.strip().split(".")
    for part in parents:
        node = node.setdefault(part, {})
    node[last] = value
    return out


def load_yaml(path: Path) -> dict:
    """A YAML mapping from ``path`` (safe loader; read as bytes, so YAML's own reader picks
    the encoding, drops a byte-order mark and refuses bytes that are not text)."""
    try:
        data = yaml.safe_load(Path(path).read_bytes())
    except FileNotFoundError:
        raise ConfigError(f"{path}: config file not found") from None
    except IsADirectoryError:
        raise ConfigError(f"{path}: config file expected, but this is a folder") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark else ""
        raise ConfigError(f"{path}:{where} is not valid YAML") from None
    if not isinstance(data, dict | None):
        raise ConfigError(f"{path}: a config file must hold a mapping of keys")
    return data or {}


def dump_yaml(config: RunConfig) -> str:
    """``config`` as the YAML text of ``RUN/config.yaml``."""
    return yaml.safe_dump(to_dict(config), sort_keys=False)
