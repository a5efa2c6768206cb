"""Checkpoints: atomic ``torch.save`` with a content digest, and loading that never executes code.

Loading uses ``torch.load(weights_only=True)``, which only rebuilds tensors and plain
containers, so a tampered file cannot run code. ``torch.load`` does not notice changed tensor
bytes (a flipped byte loads as a slightly different weight), so every checkpoint carries a
SHA-256 of its contents (keys, dtypes, shapes, tensor bytes, plain values), checked on load.
A truncated, foreign or modified file is refused with a ``CheckpointError`` naming it.
"""

from __future__ import annotations

import hashlib
import pickle
from pathlib import Path

import torch

from ..config import to_dict
from ..errors import CheckpointError
from ..io import atomic_write
from .legacy import rule_states_before_plugins
from .run_config import check_recorded_config

FORMAT = "sparling-genomics-checkpoint-2"


def payload_digest(payload) -> str:
    """SHA-256 of a checkpoint payload's contents, independent of how torch serialises it."""
    h = hashlib.sha256()
    _update(h, payload)
    return h.hexdigest()


def _update(h, value) -> None:
    if isinstance(value, torch.Tensor):
        t = value.detach().cpu().contiguous()
        h.update(f"T{t.dtype}{tuple(t.shape)}".encode())
        h.update(t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b"")
    elif isinstance(value, dict):
        h.update(f"D{len(value)}".encode())
        for key in sorted(value, key=repr):
            h.update(f"K{key!r}".encode())
            _update(h, value[key])
    elif isinstance(value, list | tuple):
        h.update(f"L{type(value).__name__}{len(value)}".encode())
        for item in value:
            _update(h, item)
    else:
        h.update(f"V{type(value).__name__}:{value!r}".encode())


def save_checkpoint(path: Path, payload: dict) -> None:
    """Write ``payload`` (plus the format tag and digest) to ``path`` atomically."""
    body = {"format": FORMAT, **payload}
    body["digest"] = payload_digest(body)
    atomic_write(Path(path), lambda h: torch.save(body, h), mode="wb")


def load_checkpoint(path: Path, map_location: str | torch.device = "cpu") -> dict:
    """Read a checkpoint written by :func:`save_checkpoint`; refuse anything else."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"{path}: checkpoint not found")
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError:
        raise CheckpointError(
            f"{path}: refused: it holds Python objects other than tensors and plain values, "
            "and loading them could run code (not a sparling-genomics checkpoint)"
        ) from None
    except Exception as exc:  # torch raises many types for bad files
        text = str(exc).strip()
        reason = text.splitlines()[0] if text else type(exc).__name__
        if "zip archive" in reason or "central directory" in reason:
            reason = "not a complete torch zip archive"
        raise CheckpointError(
            f"{path}: not a readable checkpoint (truncated, corrupt or not ours): {reason[:120]}"
        ) from None
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise CheckpointError(f"{path}: not a sparling-genomics checkpoint (format tag missing)")
    digest = payload.pop("digest", None)
    if digest != payload_digest(payload):
        raise CheckpointError(
            f"{path}: checkpoint contents do not match its digest (modified or corrupt); "
            "retrain or restore the file"
        )
    if str(map_location) != "cpu":
        payload = _to_device(payload, map_location)
    return payload


def _to_device(value, device):
    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, dict):
        return {k: _to_device(v, device) for k, v in value.items()}
    if isinstance(value, list):
        return [_to_device(v, device) for v in value]
    return value


def checkpoint_payload(trainer) -> dict:
    """What ``last.pt`` holds of a trainer: what :func:`restore_trainer` puts back."""
    return {
        "config": to_dict(trainer.config),
        "model": trainer.model.state_dict(),
        "optimizer": trainer.optimizer.state_dict(),
        "annealer": trainer.annealer.state_dict(),
        "trainer": trainer.state.state_dict(),
        "rules": {rule.name: rule.state_dict() for rule in trainer.rules},
        "torch_rng": torch.get_rng_state(),
        "task": trainer.task.training_state(),
        "best_model": trainer.best_state,
        "accepted_model": trainer.accepted_state,
        **({} if trainer.core_optimizer is None
           else {"core_optimizer": trainer.core_optimizer.state_dict()}),
    }  # fmt: skip


def restore_trainer(trainer, path: Path) -> None:
    """Continue a killed run: load its ``last.pt`` into ``trainer`` (weights, optimizers,
    annealer, each rule's state, loop state, the task's training state, torch RNG, the kept
    best/accepted weights)."""
    payload = load_checkpoint(path, map_location=trainer.device)
    check_recorded_config(trainer.config, payload.get("config", {}), Path(path), resume=True)
    try:
        trainer.model.load_state_dict(payload["model"])
        trainer.optimizer.load_state_dict(payload["optimizer"])
        trainer.annealer.load_state_dict(payload["annealer"])
        trainer.task.load_training_state(payload.get("task", {}))
        trainer.state.load_state_dict(payload["trainer"])
        torch.set_rng_state(payload["torch_rng"].cpu())
        trainer.best_state = payload.get("best_model")
        trainer.accepted_state = payload.get("accepted_model")
        states = payload["rules"] if "rules" in payload else rule_states_before_plugins(payload)
        for rule in trainer.rules:
            if rule.name in states:
                rule.load_state_dict(states[rule.name])
        if trainer.core_optimizer is not None:
            trainer.core_optimizer.load_state_dict(payload["core_optimizer"])
    except (KeyError, RuntimeError, ValueError, TypeError) as exc:
        raise CheckpointError(f"{path}: checkpoint does not fit this model ({exc})"[:300]) from None
    trainer.model.set_density(trainer.annealer.density)
    if trainer.model.core is not None and trainer.model.core.frozen:
        trainer.model.core.freeze()
