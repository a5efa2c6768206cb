"""Typed errors that library code raises and the CLI turns into one-line messages.

Library code never calls ``sys.exit``; it raises one of these with a message a user can act
on (which file or option, what is wrong, what to do). ``cli/main.py`` prints ``error: <message>``
and exits with code 2.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class SparlingError(Exception):
    """Base class of every error the user can fix (exit code 2)."""


class ConfigError(SparlingError):
    """An option, preset, task or config value is unknown or out of range."""


class InputError(SparlingError):
    """An input file is missing, malformed or inconsistent."""


class OutputError(SparlingError):
    """An output cannot be written where it was asked (a read-only folder or file system)."""


class RunDirectoryError(SparlingError):
    """A run directory exists already, is incomplete, or cannot be resumed."""


class CheckpointError(SparlingError):
    """A checkpoint is missing, truncated, tampered with, or from another model."""


def close_match(word: str, choices: Iterable[str]) -> str | None:
    """The choice most like ``word`` (``difflib``'s close matches), or None: for the "did you
    mean" of a one-line error about an unknown name or key."""
    found = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1)
    return found[0] if found else None
