"""``--out`` paths of the verbs: a folder or a file, checked when the command line is parsed.

A path of the other kind (an existing file where a folder is written, a folder where a file
is), a path under an existing file, or one in a folder this user cannot write (read-only, or
on a read-only file system) is a one-line error (exit 2) before any work, instead of an
``os`` error once the results are written.
"""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import InputError
from ..io import check_writable


def check_output_path(path: Path, *, folder: bool) -> Path:
    """``path`` when it can be written as a folder (``folder``) or a file; an InputError
    naming it otherwise, an OutputError naming the folder this user cannot write."""
    path = Path(path)
    if folder and path.exists() and not path.is_dir():
        raise InputError(f"{path}: exists and is not a folder; --out names the output folder")
    if not folder and path.is_dir():
        raise InputError(f"{path}: is a folder; --out names the output file")
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise InputError(f"{path}: {parent} is a file, not a folder")
            break
    check_writable(path if folder else path.parent)
    return path


class OutputPath(click.ParamType):
    """A click type for ``--out``: a folder or a file (:func:`check_output_path`)."""

    name = "path"

    def __init__(self, *, folder: bool) -> None:
        self.folder = folder

    def convert(self, value, param, ctx) -> Path:
        return check_output_path(Path(value), folder=self.folder)


OUT_FOLDER = OutputPath(folder=True)
OUT_FILE = OutputPath(folder=False)
