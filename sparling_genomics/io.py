"""Atomic file writes: write to a temporary name in the same folder, then rename.

A crash or kill therefore never leaves a half-written output that a re-run would trust.
"""

from __future__ import annotations

import codecs
import errno
import glob
import gzip
import json
import os
import re
import socket
import tempfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from .errors import InputError, OutputError, SparlingError


def require_file(path: Path | str, what: str) -> Path:
    """``path`` if it is a regular file; else an ``InputError`` saying what it is instead
    (missing, a folder, or a device or pipe such as ``/dev/null`` or ``<(zcat x)``, which the
    readers cannot index or reread)."""
    path = Path(path)
    if path.is_file():
        return path
    if not path.exists():
        raise InputError(f"{path}: {what} not found")
    if path.is_dir():
        raise InputError(f"{path}: {what} expected, but this is a folder")
    raise InputError(f"{path}: {what} expected, but this is not a regular file (a device or "
                     "pipe); give a file on disk")  # fmt: skip


def is_gzip(path: Path) -> bool:
    """Whether ``path`` is gzip (or bgzip) data, by its magic bytes, not its name."""
    with open(path, "rb") as handle:
        return handle.read(2) == b"\x1f\x8b"


def open_text(path: Path, errors: str | None = None) -> IO[str]:
    """``path`` opened as UTF-8 text, gunzipped when it is gzip or bgzip (whatever its name).
    A UTF-8 byte-order mark at the start (what some editors save as "UTF-8") is dropped, so
    a file with one reads as the same file without it."""
    if is_gzip(path):
        return gzip.open(path, "rt", encoding="utf-8-sig", errors=errors)
    return open(path, encoding="utf-8-sig", errors=errors)


#: What reading a text file through :func:`open_text` may raise: the file's own errors, a gzip
#: cut short or corrupted (EOFError, zlib.error; a bad CRC is an OSError), bytes that are not
#: UTF-8. A reader turns them into its one-line "cannot read" error.
READ_ERRORS = (OSError, EOFError, zlib.error, UnicodeDecodeError)


def starts_with_bom(path: Path) -> bool:
    """Whether ``path``'s text (gunzipped when it is gzip or bgzip) starts with a UTF-8
    byte-order mark."""
    with gzip.open(path, "rb") if is_gzip(path) else open(path, "rb") as handle:
        return handle.read(len(codecs.BOM_UTF8)) == codecs.BOM_UTF8


#: The errors that say a path may not be written (or read) by this user, whatever the code.
_DENIED = {errno.EACCES: "permission denied", errno.EPERM: "operation not permitted",
           errno.EROFS: "read-only file system"}  # fmt: skip


def check_writable(path: Path | str) -> None:
    """An ``OutputError`` naming the folder that would have to be written to make ``path``
    (``path`` itself if it is a folder, else its nearest existing parent) when this user
    cannot write there: checked before any work, the same line a write would end with."""
    folder = _nearest_folder(Path(path))
    if folder is not None and not os.access(folder, os.W_OK | os.X_OK):
        read_only = os.statvfs(folder).f_flag & os.ST_RDONLY
        raise _cannot_write(folder, _DENIED[errno.EROFS if read_only else errno.EACCES])


def denied_error(exc: OSError) -> SparlingError | None:
    """The one-line error of an ``OSError`` that says a path may not be touched (EACCES,
    EPERM, EROFS): an ``OutputError`` naming the folder that cannot be written (the nearest
    existing folder of the path being made) or the file, an ``InputError`` naming a file or
    folder that cannot be read; None for any other error, or one without a path."""
    if exc.errno not in _DENIED or not exc.filename:
        return None
    path, why = Path(os.fsdecode(exc.filename)), _DENIED[exc.errno]
    if os.path.exists(path) and not os.access(path, os.R_OK):
        kind = "folder" if os.path.isdir(path) else "file"
        return InputError(f"{_shown(path)}: cannot read this {kind} ({why})")
    if os.path.isfile(path):
        return OutputError(f"{_shown(path)}: cannot write this file ({why})")
    return _cannot_write(_nearest_folder(path) or path, why)


def _nearest_folder(path: Path) -> Path | None:
    # os.path.isdir, not Path.is_dir: False (not an error) under a folder that cannot be read
    return next((p for p in (path, *path.parents) if os.path.isdir(p)), None)


def _cannot_write(folder: Path, why: str) -> OutputError:
    return OutputError(f"{_shown(folder)}: cannot write in this folder ({why}); write the "
                       "output elsewhere or make the folder writable")  # fmt: skip


def _shown(path: Path) -> str:
    """``path`` relative to the working folder where it lies under it (as a user types it),
    else as it is."""
    try:
        here = Path.cwd()
    except OSError:  # the working folder was removed
        return str(path)
    inside = path.is_absolute() and path.is_relative_to(here)
    return str(path.relative_to(here)) if inside else str(path)


@contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """A temp path beside ``path`` (same extension: some writers, e.g. pybigtools, go by
    it) that becomes ``path`` when the block ends without error, and is removed otherwise.
    For writers that take a file name (h5py, pybigtools, bedtools).

    The temp name holds the host and process id; temp files of the same target left by a
    killed process on this host (SIGKILL skips the clean-up) are removed first.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_temps(path)
    fd, name = tempfile.mkstemp(prefix=f"{_temp_prefix(path)}{_HOST}-{os.getpid()}-",
                                suffix=path.suffix, dir=path.parent)  # fmt: skip
    os.close(fd)
    tmp = Path(name)
    try:
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give the usual file mode
        yield tmp
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


_HOST = socket.gethostname().replace("-", "_") or "host"


def _temp_prefix(path: Path) -> str:
    return f".{path.name}.tmp-"


def _remove_stale_temps(path: Path) -> None:
    prefix = _temp_prefix(path)
    for old in path.parent.glob(glob.escape(prefix) + "*"):
        host, _, rest = old.name[len(prefix) :].partition("-")
        pid = rest.split("-", 1)[0]
        if host == _HOST and pid.isdigit() and not _alive(int(pid)):
            old.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def atomic_write(path: Path, write: Callable[[IO], Any], mode: str = "w") -> None:
    """Call ``write(handle)`` on a temp file beside ``path``, fsync, then rename onto it."""
    with atomic_path(path) as tmp, open(tmp, mode) as handle:
        write(handle)
        handle.flush()
        os.fsync(handle.fileno())


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_text_atomic(path: Path, text: str) -> None:
    atomic_write(path, lambda h: h.write(text))


#: An array of numbers that ``json.dumps(indent=...)`` spread over lines (a raw newline is
#: never inside a JSON string, so a match is always structure, not text).
_NUMBER_ARRAY = re.compile(r"\[\n[\s0-9eE.,+-]*\]")


def json_text(data: Any) -> str:
    """``data`` as indented JSON with each array of numbers on one line: a matrix, PWM or
    histogram reads as rows instead of one number a line (``motifs.json`` is half the size).
    ``json.load`` gives back the same value."""
    text = json.dumps(data, indent=2, sort_keys=False)
    return _NUMBER_ARRAY.sub(lambda m: "[" + " ".join(m.group(0)[1:-1].split()) + "]", text)


def write_json_atomic(path: Path, data: Any) -> None:
    atomic_write(path, lambda h: h.write(json_text(data)))


_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")


def safe_child(folder: Path, name: str, suffix: str = "") -> Path:
    """``folder / (name + suffix)``, refusing a name that could leave ``folder``.

    Names that become file names (motif ids, run and genome names) may come from files a
    user did not write (an edited ``motifs.json``); only one plain path component is allowed.
    """
    if not isinstance(name, str) or not _SAFE_NAME.match(name) or ".." in name:
        raise InputError(
            f"{name!r} cannot be a file name in {folder} (letters, digits, '_', '-', '.', '+' "
            "only, starting with a letter or digit)"
        )
    return Path(folder) / f"{name}{suffix}"


def record_path(path: Path | str, base: Path | str) -> str:
    """How a file that a run or dataset in folder ``base`` reads is written into it, so that
    the record travels: relative to ``base`` when both lie under the current working folder
    (a project's results tree, which is moved, shared or copied as one), absolute otherwise
    (a file elsewhere on the machine stays where it is when the results move)."""
    here = Path.cwd().resolve()
    target, folder = Path(path).resolve(), Path(base).resolve()
    if target.is_relative_to(here) and folder.is_relative_to(here):
        return os.path.relpath(target, folder)
    return str(target)


def recorded_candidates(text: str, base: Path | str) -> list[Path]:
    """Where a path recorded in a file of folder ``base`` may be, in the order to try: an
    absolute path as it is; a relative one against ``base`` (how :func:`record_path` writes
    it), then against the working folder (how records were written before)."""
    path = Path(text)
    if path.is_absolute():
        return [path]
    candidates = [Path(os.path.normpath(Path(base) / path)), path]
    return [c for i, c in enumerate(candidates) if c not in candidates[:i]]


def resolve_recorded(text: str, base: Path | str) -> Path:
    """The first of :func:`recorded_candidates` that exists (the first one when none does, so
    an error names where the record points)."""
    candidates = recorded_candidates(text, base)
    return next((c for c in candidates if c.exists()), candidates[0])
