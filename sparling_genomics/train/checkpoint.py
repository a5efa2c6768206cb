"""Checkpoints: atomic ``torch.save``, and loading that never executes code.

Loading uses ``torch.load(weights_only=True)``, which only rebuilds tensors and plain
containers, so a tampered file cannot run code; a truncated or foreign file is refused with
a ``CheckpointError`` naming it.
"""

from __future__ import annotations

from pathlib import Path

import torch

from ..errors import CheckpointError
from ..io import atomic_write

FORMAT = "sparling-genomics-checkpoint-1"


def save_checkpoint(path: Path, payload: dict) -> None:
    """Write ``payload`` (plus the format tag) to ``path`` atomically."""
    atomic_write(Path(path), lambda h: torch.save({"format": FORMAT, **payload}, h), mode="wb")


def load_checkpoint(path: Path, map_location: str | torch.device = "cpu") -> dict:
    """Read a checkpoint written by :func:`save_checkpoint`."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"{path}: checkpoint not found")
    try:
        payload = torch.load(path, map_location=map_location, weights_only=True)
    except Exception as exc:  # torch raises many types for bad files
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise CheckpointError(
            f"{path}: not a readable checkpoint (truncated, corrupt or not ours): {reason[:120]}"
        ) from None
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise CheckpointError(f"{path}: not a sparling-genomics checkpoint")
    return payload
