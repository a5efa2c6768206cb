"""The core phase of a run whose model has a supplied site core (``models/core.py``): the core
alone is fitted to the labels for ``train.core_samples`` / ``train.core_seconds``, then frozen
and its channels' sparse layers calibrated; logged as ``phase: core`` records. Kept apart from
the trainer's main loop (``train/trainer.py``), which calls :func:`train_core` first."""

from __future__ import annotations

import math
import time

import torch

from ..evaluate.evaluation import evaluate_model
from ..models.core import CoreAlone
from .prefetch import BatchPrefetcher
from .progress import Progress

# Training windows the core channels' sparse layers are calibrated on once the core is frozen:
# ~500 expected sites per class at 0.15% density and 1,400 positions a window.
CORE_CALIBRATION_WINDOWS = 256


def train_core(trainer) -> None:
    """The core phase of ``trainer`` (a ``train.trainer.Trainer``): fit the site core alone
    to the labels, then freeze it.

    The core reads the same batch stream as the main phase (from index 0). A checkpoint
    in this phase is never taken at its last step, so the phase's closing record (the
    core alone scored on the validation block) always lies past it and is dropped and
    rewritten on resume, never doubled.
    """
    t = trainer.config.train
    s = trainer.state
    core = trainer.model.core
    samples = t.core_samples or 0
    seconds = math.inf if t.core_seconds is None else t.core_seconds
    progress = Progress(
        trainer.progress,
        s["core_samples"],
        max_samples=samples,
        max_seconds=seconds,
        metric="loss",
        label="core",
    )
    started = time.monotonic() - s["core_elapsed"]
    last_checkpoint = time.monotonic()
    next_log = (s["core_samples"] // t.eval_every + 1) * t.eval_every
    batches = BatchPrefetcher(trainer.task, t.batch_size, enabled=t.prefetch)
    try:
        while s["core_samples"] < samples and s["core_elapsed"] < seconds:
            batch = batches.get(s["core_step"]).to(trainer.device)
            loss = core.loss(core.site_logits(batch.x), batch.y)
            trainer.core_optimizer.zero_grad(set_to_none=True)
            loss.backward()
            trainer.core_optimizer.step()
            s["core_step"] += 1
            s["core_samples"] += len(batch)
            s["loss_sum"] += float(loss.detach())
            s["loss_count"] += 1
            s["core_elapsed"] = time.monotonic() - started
            progress.step(len(batch), s["core_samples"], s["core_elapsed"], "core")
            done = s["core_samples"] >= samples or s["core_elapsed"] >= seconds
            if s["core_samples"] >= next_log and not done:
                next_log += t.eval_every
                trainer._log(core_record(trainer))
                if time.monotonic() - last_checkpoint >= t.checkpoint_every_seconds:
                    trainer.save()
                    last_checkpoint = time.monotonic()
    finally:
        batches.close()
        progress.close()
    core.freeze()
    calibrate_core(trainer)
    record = core_record(trainer)
    torch.set_num_threads(trainer.eval_threads)
    try:
        alone = evaluate_model(CoreAlone(core), trainer.task, "val",
                               batch_size=t.eval_batch_size, device=trainer.device)  # fmt: skip
    finally:
        torch.set_num_threads(trainer.train_threads)
    record.update({f"core_val_{k}": v for k, v in alone.e2e.items()})
    record["core_densities"] = [layer.density for layer in trainer.model.core_sparse]
    record["elapsed"] = round(s["core_elapsed"], 3)
    trainer._log(record)
    s["phase"] = trainer._main_phase()
    trainer.save()


@torch.no_grad()
def calibrate_core(trainer) -> None:
    """Start the core channels' sparse layers from the frozen core's logits on the next
    ``CORE_CALIBRATION_WINDOWS`` training windows (exact BatchNorm statistics and
    thresholds; the main phase then keeps them up to date as usual)."""
    t = trainer.config.train
    logits, seen, index = [], 0, trainer.state["core_step"]
    while seen < CORE_CALIBRATION_WINDOWS:
        batch = trainer.task.train_batch(index, t.batch_size)
        logits.append(trainer.model.core(batch.x.to(trainer.device)))
        seen += len(batch)
        index += 1
    s = torch.cat(logits)
    for i, layer in enumerate(trainer.model.core_sparse):
        layer.calibrate(s[:, i : i + 1])


def core_record(trainer) -> dict:
    s = trainer.state
    record = {
        "phase": "core",
        "core_step": s["core_step"],
        "core_samples": s["core_samples"],
        "core_loss": s["loss_sum"] / max(1, s["loss_count"]),
        "elapsed": round(s["core_elapsed"], 3),
    }
    s["loss_sum"], s["loss_count"] = 0.0, 0
    return record
