"""The shared trainer: every task trains through :func:`train`.

Phases: ``core`` (only for a model with a supplied site core, ``models/core.py``: the core
alone is fitted to the labels for ``core_samples`` / ``core_seconds``, then frozen; logged
as records with ``phase: core`` and ``core_samples``), ``anneal`` (Algorithm 1 lowers the
density each time validation accuracy clears the bar) until the density falls below the stop
density, then ``final`` (``final_samples`` more samples at that density with the learning
rate scaled by ``final_lr_scale`` and, with ``final_lr_schedule: cosine``, decayed along a
half cosine to 5% over ``final_samples``; the weights with the best validation accuracy in
this phase are kept). With ``annealing.finish_by_samples`` annealing is also held to a
sample deadline (``sparsity/annealing.py``: an evaluation behind the line takes a forced
step). With ``annealing.rollback_samples`` a step the model has not recovered from within
that many samples is taken back and retaken smaller (``rollback.py``). Without annealing the
density is fixed at the stop density from the start and the whole budget is the final phase;
a model without a sparse layer (a baseline) trains until its budget ends.

The learning-rate schedule and the two start-of-run guards (warm-up, plateau restarts) are
rules of ``schedule.py``. A restart keeps the batch stream, budget and clock going.

The run directory (``rundir``)::

    RUN/config.yaml  RUN/train_log.jsonl  RUN/checkpoints/{last,final}.pt  RUN/metrics.json

``metrics.json`` holds the test split's scores (``evaluate.evaluation.score_model``; its
``Evaluation.to_json``), the identifiability check among them, and the run's own fields, such
as ``stopped_by``: schedule, max_samples or max_seconds. ``rundir.metrics_record`` lays them
out and ``rundir.write_metrics``, the file's one writer, writes it.

A checkpoint holds the model, optimizer, annealer, the trainer's counters and the torch
RNG; training batches are a pure function of (seed, batch index). So ``resume`` after a kill
continues exactly: the log and weights equal those of an uninterrupted run.
"""

from __future__ import annotations

import copy
import time
from pathlib import Path

import torch

from ..config import RunConfig, dump_yaml
from ..evaluate.evaluation import evaluate_model, score_model
from ..rundir import (
    FINAL_CHECKPOINT,
    LAST_CHECKPOINT,
    append_log,
    checkpoint_path,
    config_path,
    create_run_directory,
    metrics_record,
    prepare_run_directory,
    truncate_log,
    write_metrics,
)
from ..sparsity.annealing import SparsityAnnealer
from ..sparsity.cofiring import cofiring_term
from ..tasks.registry import task_class
from .channel_resample import WastedResample
from .channel_split import IdleSplit
from .checkpoint import checkpoint_payload, restore_trainer, save_checkpoint
from .core_phase import train_core
from .device import machine_description, pick_device
from .prefetch import BatchPrefetcher
from .progress import Progress
from .rollback import StepProbation
from .run_config import load_saved_config, recorded_config
from .schedule import on_plateau, step_lr
from .series import keep_checkpoint
from .settings import make_optimizer


class Trainer:
    """One training run of one task in one run directory."""

    def __init__(self, config: RunConfig, out: Path, *, progress: bool = True) -> None:
        self.config = config
        self.out = Path(out)
        self.progress = progress
        self.device = pick_device(config.device)
        # ``train.threads`` limits the training steps (leaving a core to the batch-making
        # thread); evaluation uses every thread torch would.
        self.eval_threads = torch.get_num_threads()
        self.train_threads = config.train.threads or self.eval_threads
        torch.set_num_threads(self.train_threads)
        self.task = task_class(config.task)(config, config.seed)
        self.stop_density = config.annealing.stop_density_for(self.task.true_density())
        self._initialise(restarts=0)
        # The co-firing penalty's settings (sparsity/cofiring.py); none without a sparse layer.
        sparse = self.model.sparse is not None
        self.cofiring = getattr(config.model, "sparse", None) if sparse else None
        self.state = {
            "step": 0,
            "samples": 0,
            "next_eval": config.train.eval_every,
            "phase": "core" if self._core_untrained() else self._main_phase(),
            "final_start": 0,
            "elapsed": 0.0,
            "best_final_accuracy": -1.0,
            "loss_sum": 0.0,
            "loss_count": 0,
            # Plateau restarts: how many, and the samples and best validation accuracy of
            # the current initialisation.
            "restarts": 0,
            "init_start": 0,
            "init_best": 0.0,
            # The core phase: its batches (the stream from index 0), samples and seconds.
            "core_step": 0,
            "core_samples": 0,
            "core_elapsed": 0.0,
            # The checkpoint series (train.keep_checkpoints_every): samples of the next one.
            "next_keep": 0,
        }
        self.best_state: dict | None = None
        self.accepted_state: dict | None = None

    def _initialise(self, restarts: int) -> None:
        """A fresh model (the run's seed, or a new one per plateau restart), annealer at its
        start density, and optimizer."""
        seed = self.config.seed
        torch.manual_seed(seed if restarts == 0 else seed + 1_000_003 * restarts)
        self.model = self.task.build_model().to(self.device)
        a = self.config.annealing
        # A model without a sparse layer (a baseline) has nothing to anneal: its whole
        # budget is the final phase, and the best validation weights are kept.
        self.annealing = a.enabled and self.model.sparse is not None
        self.annealer = SparsityAnnealer(
            start_density=a.start_density if self.annealing else self.stop_density,
            stop_density=self.stop_density,
            multiplier=a.multiplier,
            initial_bar=a.initial_bar,
            bar_decay_per_sample=a.bar_decay_per_sample, **a.late_bar(),
            finish_by_samples=(a.finish_by_samples or 0) if self.annealing else 0,
        )
        self.probation = StepProbation.from_settings(a)  # rollback.py; off unless set
        self.splitter = IdleSplit.from_settings(a)  # channel_split.py; off unless set
        self.splitter.check_model(self.model)  # fails before a run starts
        self.resampler = WastedResample.from_settings(a)  # channel_resample.py; off unless set
        self.resampler.check_model(self.model, self.task)
        self.model.set_density(self.annealer.density)
        lr = self.config.train.lr
        self.optimizer = make_optimizer(self.model.trainable_parameters(), self.config.train)
        core = self.model.core
        self.core_optimizer = None if core is None else torch.optim.Adam(core.parameters(), lr=lr)

    def _core_untrained(self) -> bool:
        return self.model.core is not None and not self.model.core.frozen

    def _main_phase(self) -> str:
        return "anneal" if self.annealing else "final"

    def _on_plateau(self) -> bool:
        """True when this initialisation should be given up (``schedule.on_plateau``)."""
        s = self.state
        return on_plateau(
            self.config.train,
            phase=s["phase"],
            annealing_steps=self.annealer.steps,
            restarts=s["restarts"],
            seen=s["samples"] - s["init_start"],
            best=s["init_best"],
        )

    def _restart(self) -> None:
        """Start again from a new initialisation. The batch stream, the budget and the clock
        go on (the samples spent on the plateau stay spent); the annealer starts afresh."""
        s = self.state
        s["restarts"] += 1
        s["init_start"] = s["samples"]
        s["init_best"] = 0.0
        core = self.model.core
        core_state = None if core is None else _snapshot(core)
        self._initialise(s["restarts"])
        if core_state is not None:  # the trained, frozen core stays
            self.model.core.load_state_dict(core_state)
            self.model.core.freeze()
        self.annealer.last_samples = s["samples"]  # the bar falls from now on
        self.annealer.origin = s["samples"]  # and the deadline counts from now
        self.accepted_state = None

    # -- checkpoints ---------------------------------------------------------------------
    def save(self, name: str = LAST_CHECKPOINT) -> None:
        save_checkpoint(checkpoint_path(self.out, name), checkpoint_payload(self))

    def keep(self, record: dict | None) -> None:
        """Add the weights to the checkpoint series when due (``series.keep_checkpoint``)."""
        keep_checkpoint(self.out, self.config, self.model, self.state, record)

    # -- the loop ------------------------------------------------------------------------
    def _log(self, record: dict) -> None:
        append_log(self.out, record)

    def _truncate_log(self) -> None:
        """Drop log lines written after the checkpoint we resume from."""
        truncate_log(self.out, self.state["samples"], self.state["core_samples"])

    def _evaluate_and_anneal(self) -> dict:
        t = self.config.train
        torch.set_num_threads(self.eval_threads)
        try:
            result = evaluate_model(
                self.model,
                self.task,
                "val",
                batch_size=t.eval_batch_size,
                device=self.device,
                # Tasks that know their motifs log FNE/FPE/CE at every evaluation: the report's
                # motif-error-against-density figure (the Sparling paper's Figure 4) reads them.
                motif_metrics=t.log_motif_metrics is not False,
            )
        finally:
            torch.set_num_threads(self.train_threads)
        accuracy = result.e2e[self.task.accuracy_metric]
        accuracy = 0.0 if accuracy is None else float(accuracy)
        s = self.state
        record = {
            "step": s["step"],
            "samples": s["samples"],
            "phase": s["phase"],
            "loss": s["loss_sum"] / max(1, s["loss_count"]),
            **{f"val_{k}": v for k, v in result.e2e.items()},
            "density": self.model.density,
            "val_density": result.measured_density,
        }
        for key in ("fne", "fpe", "ce", "spread"):
            if key in (result.motif or {}):
                record[f"val_{key}"] = result.motif[key]
        s["init_best"] = max(s["init_best"], accuracy)
        self.probation.observe(accuracy, self.annealer.density)
        verdict = self.probation.review(s["samples"], accuracy)  # the step on probation
        if verdict is not None:
            record["probation"] = verdict
        if self._on_plateau():
            # An initialisation that never learnt the dense task (a DigitCircle seed sat at
            # exact match 0 for 200k samples): annealing it would only hide the failure.
            self._restart()
            record["restart"] = s["restarts"]
        elif verdict == "rollback":
            self._roll_back(record)
        elif s["phase"] == "anneal":
            hold = not self.task.ready_to_anneal()  # a curriculum still growing
            decision = self.annealer.update(
                s["samples"], accuracy, hold=hold, pause=verdict == "waiting"
            )
            record["bar"] = decision.bar
            if hold:
                record["held"] = True
            record["tightened"] = decision.tightened
            if decision.forced:
                record["forced"] = True
            if decision.tightened and not decision.forced:
                # The weights that cleared the bar, at the density they cleared it with:
                # what a run stopped by its budget before annealing ends returns.
                self.accepted_state = _snapshot(self.model)
                if not self.annealer.done:  # the final phase is the last step's recovery
                    self.probation.begin(self.accepted_state, self.optimizer, accuracy,
                                         decision.density_before, s["samples"])  # fmt: skip
            if decision.tightened:
                self.model.set_density(self.annealer.density)
            if self.annealer.done:
                s["phase"] = "final"
                s["final_start"] = s["samples"]
        elif accuracy > s["best_final_accuracy"]:
            s["best_final_accuracy"] = accuracy
            self.best_state = _snapshot(self.model)
        if "restart" not in record and "rolled_back" not in record:
            record.update(self.splitter.review(self, s["samples"]))  # channel_split.py
            record.update(self.resampler.review(self, s["samples"]))  # channel_resample.py
        if self.model.sparse is not None:
            record["threshold_mean"] = float(self.model.sparse.thresholds.mean())
        s["loss_sum"], s["loss_count"] = 0.0, 0
        return record

    def _roll_back(self, record: dict) -> None:
        """Take the step on probation back and retake it smaller (``rollback.py``), unless a
        split answers it (``channel_split.py``, ``split_on_rollback``): then the step stands."""
        s = self.state
        if split := self.splitter.instead_of_rollback(self, s["samples"]):
            record.update(split)
            return
        anchor = self.probation.anchor
        self.model.load_state_dict(anchor["model"])
        self.optimizer.load_state_dict(copy.deepcopy(anchor["optimizer"]))
        self.model.set_density(self.probation.retake(self.annealer, s["samples"]))
        s["phase"], s["best_final_accuracy"], self.best_state = "anneal", -1.0, None
        record["rolled_back"] = self.probation.retries

    def _set_lr(self, batch_size: int) -> None:
        """The learning rate of the next step (``schedule.step_lr``)."""
        s = self.state
        lr = step_lr(
            self.config.train,
            phase=s["phase"],
            seen=s["samples"] - s["init_start"],  # a plateau restart warms up again
            since_final=s["samples"] - s["final_start"],
            batch_size=batch_size,
            annealing=self.annealing,
            sparse=self.model.sparse is not None,
        )
        for group in self.optimizer.param_groups:
            group["lr"] = lr

    def _finished(self) -> str | None:
        t = self.config.train
        s = self.state
        if (s["phase"] == "final" and self.model.sparse is not None
                and s["samples"] - s["final_start"] >= t.final_samples):  # fmt: skip
            return "schedule"
        if s["samples"] >= t.max_samples:
            return "max_samples"
        if s["elapsed"] >= t.max_seconds:
            return "max_seconds"
        return None

    def train_core(self) -> None:
        """The core phase (``train/core_phase.py``)."""
        train_core(self)

    def run(self) -> dict:
        """Train until the schedule or the budget ends; write final.pt and metrics.json."""
        if self.state["phase"] == "core":
            self.train_core()
        t = self.config.train
        batch_size = t.batch_size
        eval_every = t.eval_every
        checkpoint_every = t.checkpoint_every_seconds
        s = self.state
        progress = Progress(self.progress, s["samples"], max_samples=t.max_samples,
                            max_seconds=t.max_seconds, metric=self.task.accuracy_metric)
        started = time.monotonic() - s["elapsed"]
        last_checkpoint = time.monotonic()
        self.model.train()
        stopped_by = self._finished()
        self.keep(None)  # the series' first checkpoint: the weights before any step
        batches = BatchPrefetcher(self.task, batch_size, enabled=t.prefetch)
        try:
            while stopped_by is None:
                self._set_lr(batch_size)
                batch = batches.get(s["step"]).to(self.device)
                outputs = self.model(batch.x)
                loss = self.task.loss(outputs, batch) + cofiring_term(outputs, self.cofiring)
                self.optimizer.zero_grad(set_to_none=True)
                loss.backward()
                self.optimizer.step()
                s["step"] += 1
                s["samples"] += len(batch)
                s["loss_sum"] += float(loss.detach())
                s["loss_count"] += 1
                s["elapsed"] = time.monotonic() - started
                progress.step(len(batch), s["samples"], s["elapsed"], s["phase"])
                if s["samples"] >= s["next_eval"]:
                    record = self._evaluate_and_anneal()
                    s["next_eval"] += eval_every
                    s["elapsed"] = time.monotonic() - started
                    record["elapsed"] = round(s["elapsed"], 3)
                    self._log({**record, **self.task.training_state()})
                    self.keep(record)
                    progress.evaluated(record, accuracy_of(record, self.task), s["phase"])
                    if time.monotonic() - last_checkpoint >= checkpoint_every:
                        self.save()
                        last_checkpoint = time.monotonic()
                stopped_by = self._finished()
        finally:
            batches.close()
            progress.close()
        return self.finish(stopped_by)

    def finish(self, stopped_by: str) -> dict:
        """Pick the final weights, evaluate on the test split, write final.pt and metrics.

        After a completed schedule: the final phase's best validation weights. When the
        budget ran out during annealing: the last weights that cleared the bar, at the
        density they cleared it with (the run reports annealing as incomplete).
        """
        if self.state["phase"] == "final" and self.best_state is not None:
            self.model.load_state_dict(self.best_state)
        elif self.state["phase"] == "anneal" and self.accepted_state is not None:
            self.model.load_state_dict(self.accepted_state)
        self.save(LAST_CHECKPOINT)
        self.save(FINAL_CHECKPOINT)
        torch.set_num_threads(self.eval_threads)
        # A run back in annealing (runs before the final step went unwatched could roll
        # back out of the final phase) has not completed it, whatever the annealer says.
        complete = self.annealer.done and self.state["phase"] != "anneal"
        result = score_model(
            self.model, self.task, "test", batch_size=self.config.train.eval_batch_size,
            device=self.device, annealing_complete=complete if self.annealing else None,
        )
        true_density = self.task.true_density()
        density = self.model.density
        # The run's own fields; the test scores are the evaluation's JSON, and metrics_record
        # lays both out as metrics.json has them (rundir.METRICS_KEYS).
        run_fields = {
            "task": self.config.task,
            "preset": self.config.preset,
            "seed": self.config.seed,
            "density": density,
            "true_density": true_density,
            "density_ratio": (density / true_density) if density and true_density else None,
            "samples_seen": self.state["samples"],
            "plateau_restarts": self.state["restarts"],
            "wall_seconds": round(self.state["elapsed"], 2),
            "annealing": {
                "enabled": self.annealing,
                "complete": complete,
                "steps": self.annealer.steps,
                "forced_steps": self.annealer.forced_steps,
                "finish_by_samples": self.annealer.finish_by_samples,
                "final_bar": self.annealer.bar,
                "stop_density": self.annealer.stop_density,
                **({"rollback": self.probation.summary()} if self.probation.enabled else {}),
                **({"split": self.splitter.summary()} if self.splitter.enabled else {}),
                **({"resample": self.resampler.summary()} if self.resampler.enabled else {}),
            },
            "stopped_by": stopped_by,
            "device": str(self.device),
            "machine": machine_description(),  # the one that finished the run (device.py)
        }
        metrics = metrics_record(result.to_json(), run_fields)
        write_metrics(self.out, metrics)
        return metrics


def accuracy_of(record: dict, task) -> float:
    """The validation accuracy in a log record (0 when the split has no sites)."""
    value = record.get(f"val_{task.accuracy_metric}")
    return 0.0 if value is None else float(value)


def _snapshot(model) -> dict:
    """A CPU copy of a model's state dict (buffers included: thresholds, density)."""
    return {
        k: v.detach().cpu().clone() if torch.is_tensor(v) else copy.deepcopy(v)
        for k, v in model.state_dict().items()
    }


def train(config: RunConfig, out: Path, *, resume: bool = False, progress: bool = True) -> dict:
    """Train ``config`` into run directory ``out`` (or continue it with ``resume``)."""
    out = Path(out)
    prepare_run_directory(out, resume=resume)
    if resume:
        config = load_saved_config(config_path(out))
        trainer = Trainer(config, out, progress=progress)
        restore_trainer(trainer, checkpoint_path(out, LAST_CHECKPOINT))
        trainer._truncate_log()
        return trainer.run()
    trainer = Trainer(config, out, progress=progress)  # fails before anything is written
    create_run_directory(out, dump_yaml(recorded_config(config, out)))
    return trainer.run()
