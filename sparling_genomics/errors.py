"""Typed errors that library code raises and the CLI turns into one-line messages.

Library code never calls ``sys.exit``; it raises one of these with a message a user can act
on (which file or option, what is wrong, what to do). ``cli.py`` prints ``error: <message>``
and exits with code 2.
"""


class SparlingError(Exception):
    """Base class of every error the user can fix (exit code 2)."""


class ConfigError(SparlingError):
    """An option, preset, task or config value is unknown or out of range."""


class InputError(SparlingError):
    """An input file is missing, malformed or inconsistent."""


class RunDirectoryError(SparlingError):
    """A run directory exists already, is incomplete, or cannot be resumed."""


class CheckpointError(SparlingError):
    """A checkpoint is missing, truncated, tampered with, or from another model."""
