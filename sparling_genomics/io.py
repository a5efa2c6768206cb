"""Atomic file writes: write to a temporary name in the same folder, then rename.

A crash or kill therefore never leaves a half-written output that a re-run would trust.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any


def atomic_write(path: Path, write: Callable[[IO], Any], mode: str = "w") -> None:
    """Call ``write(handle)`` on a temp file beside ``path``, fsync, then rename onto it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give the usual file mode
        with os.fdopen(fd, mode) as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_text_atomic(path: Path, text: str) -> None:
    atomic_write(path, lambda h: h.write(text))


def write_json_atomic(path: Path, data: Any) -> None:
    atomic_write(path, lambda h: json.dump(data, h, indent=2, sort_keys=False))
