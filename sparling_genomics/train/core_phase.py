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
from ..models.modes import eval_mode
from .prefetch import BatchPrefetcher
from .progress import Progress

# Training windows the core channels' sparse layers are calibrated on once the core is frozen:
# ~500 expected sites per class at 0.15% density and 1,400 positions a window.
CORE_CALIBRATION_WINDOWS = 256
# model.core_site_recall: a core channel's density grows by this factor up to this cap (5%:
# still one position in twenty, under the one-peak-in-eleven the peak rule allows).
CORE_DENSITY_STEP = 1.2
CORE_DENSITY_CAP = 0.05


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
        s.core_samples,
        max_samples=samples,
        max_seconds=seconds,
        metric="loss",
        label="core",
    )
    started = time.monotonic() - s.core_elapsed
    last_checkpoint = time.monotonic()
    next_log = (s.core_samples // t.eval_every + 1) * t.eval_every
    batches = BatchPrefetcher(trainer.task, t.batch_size, enabled=t.prefetch)
    try:
        while s.core_samples < samples and s.core_elapsed < seconds:
            batch = batches.get(s.core_step).to(trainer.device)
            loss = core.loss(core.site_logits(batch.x), batch.y)
            trainer.core_optimizer.zero_grad(set_to_none=True)
            loss.backward()
            trainer.core_optimizer.step()
            s.core_step += 1
            s.core_samples += len(batch)
            s.loss_sum += float(loss.detach())
            s.loss_count += 1
            s.core_elapsed = time.monotonic() - started
            progress.step(len(batch), s.core_samples, s.core_elapsed, "core")
            done = s.core_samples >= samples or s.core_elapsed >= seconds
            if s.core_samples >= next_log and not done:
                next_log += t.eval_every
                trainer._log(core_record(trainer))
                if time.monotonic() - last_checkpoint >= t.checkpoint_every_seconds:
                    trainer.save()
                    last_checkpoint = time.monotonic()
    finally:
        batches.close()
        progress.close()
    core.freeze()
    shares = calibrate_core(trainer)
    record = core_record(trainer)
    torch.set_num_threads(trainer.eval_threads)
    try:
        alone = evaluate_model(CoreAlone(core), trainer.task, "val",
                               batch_size=t.eval_batch_size, device=trainer.device)  # fmt: skip
    finally:
        torch.set_num_threads(trainer.train_threads)
    record.update({f"core_val_{k}": v for k, v in alone.e2e.items()})
    record["core_densities"] = [layer.density for layer in trainer.model.core_sparse]
    record["core_site_shares"] = shares  # of the calibration windows' labelled sites
    record["elapsed"] = round(s.core_elapsed, 3)
    trainer._log(record)
    s.phase = trainer._main_phase()
    trainer.save()


@torch.no_grad()
def calibrate_core(trainer) -> list[float | None]:
    """Start the core channels' sparse layers from the frozen core's logits on the next
    ``CORE_CALIBRATION_WINDOWS`` training windows (exact BatchNorm statistics and
    thresholds; the main phase then keeps them up to date as usual). With
    ``model.core_site_recall`` each channel's density is first raised to reach that share of
    the windows' labelled sites. Returns each channel's share of those sites it fires at
    (None for a class with no site in the windows)."""
    t = trainer.config.train
    logits, labels, seen, index = [], [], 0, trainer.state.core_step
    while seen < CORE_CALIBRATION_WINDOWS:
        batch = trainer.task.train_batch(index, t.batch_size)
        logits.append(trainer.model.core(batch.x.to(trainer.device)))
        labels.append(batch.y.to(trainer.device))
        seen += len(batch)
        index += 1
    s, y = torch.cat(logits), torch.cat(labels)
    recall = trainer.config.model.core_site_recall  # only a splicing model has a core
    shares = []
    for i, layer in enumerate(trainer.model.core_sparse):
        x, sites = s[:, i : i + 1], y == i + 1
        if recall and bool(sites.any()):
            density_for_recall(layer, x, sites, recall)  # leaves the layer calibrated
        else:
            layer.calibrate(x)
        shares.append(site_share(layer, x, sites))
    return shares


def site_share(layer, x: torch.Tensor, sites: torch.Tensor) -> float | None:
    """The share of ``sites`` ((N, L) bool, the output positions; ``x`` (N, 1, L + context)
    carries ``context // 2`` more positions each side) at which ``layer`` fires on ``x``, in
    eval mode (nothing learnt from ``x``)."""
    if not bool(sites.any()):
        return None
    with eval_mode(layer):
        out = layer(x)[:, 0]
    off = (out.shape[-1] - sites.shape[-1]) // 2
    return float((out[:, off : off + sites.shape[-1]][sites] > 0).float().mean())


def density_for_recall(layer, x: torch.Tensor, sites: torch.Tensor, recall: float) -> float:
    """The density (from ``layer``'s, in steps of ``CORE_DENSITY_STEP``, at most
    ``CORE_DENSITY_CAP``) at which ``layer`` calibrated on ``x`` fires at a share ``recall``
    of ``sites``; where none up to the cap does, the last step under the cap. The layer is
    left at that density, calibrated on ``x``."""
    density = layer.density
    while True:
        layer.density = density
        layer.calibrate(x)
        if site_share(layer, x, sites) >= recall or density * CORE_DENSITY_STEP > CORE_DENSITY_CAP:
            return density
        density *= CORE_DENSITY_STEP


def core_record(trainer) -> dict:
    s = trainer.state
    record = {
        "phase": "core",
        "core_step": s.core_step,
        "core_samples": s.core_samples,
        "core_loss": s.take_loss(),
        "elapsed": round(s.core_elapsed, 3),
    }
    return record
