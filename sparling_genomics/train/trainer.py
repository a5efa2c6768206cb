"""The shared trainer: every task trains through :func:`train`.

Phases: ``core`` (only for a model with a supplied site core, ``models/core.py``: the core
alone is fitted to the labels for ``core_samples`` / ``core_seconds``, then frozen; logged
as records with ``phase: core`` and ``core_samples``), ``anneal`` (Algorithm 1 lowers the
density each time validation accuracy clears the bar) until the density falls below the stop
density, then ``final`` (``final_samples`` more samples at that density with the learning
rate scaled by ``final_lr_scale`` and, with ``final_lr_schedule: cosine``, decayed along a
half cosine to 5% over ``final_samples``; the weights with the best validation accuracy in
this phase are kept). Without annealing the density is fixed at the stop density from the
start and the whole budget is the final phase; a model without a sparse layer (a baseline)
trains until its budget ends.

At each evaluation Algorithm 1 (``sparsity/annealing.py``) decides whether to tighten the
density, and the optional training rules whose blocks the config turns on (``rules/``: taking
a step back, editing channels) act around that decision; the trainer calls them in the
registry's order and never names one.

The learning-rate schedule and the two start-of-run guards (warm-up, plateau restarts) are
rules of ``schedule.py``. A restart keeps the batch stream, budget and clock going.

The run directory (``rundir``)::

    RUN/config.yaml  RUN/train_log.jsonl  RUN/checkpoints/{last,final}.pt  RUN/metrics.json

``metrics.json`` holds the test split's scores (``evaluate.evaluation.score_model``; its
``Evaluation.to_json``), the identifiability check among them, and the run's own fields, such
as ``stopped_by``: schedule, max_samples or max_seconds. ``rundir.metrics_record`` lays them
out and ``rundir.write_metrics``, the file's one writer, writes it.

A checkpoint holds the model, optimizer, annealer, each rule's state, the trainer's counters
(``state.py``) and the torch RNG; training batches are a pure function of (seed, batch
index). So ``resume`` after a kill continues exactly: the log and weights equal those of an
uninterrupted run.
"""

from __future__ import annotations

import copy
import dataclasses
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
from ..tasks.registry import task_class
from .checkpoint import checkpoint_payload, restore_trainer, save_checkpoint
from .core_phase import train_core
from .device import machine_description, pick_device
from .prefetch import BatchPrefetcher
from .progress import Progress
from .provenance import check_run_inputs, record_run_inputs
from .rules.base import RuleContext
from .rules.registry import build_rules
from .run_config import load_saved_config, recorded_config
from .schedule import on_plateau, step_lr
from .series import keep_checkpoint
from .settings import make_optimizer
from .state import TrainerState


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
        core = self._core_untrained()
        self.state = TrainerState(next_eval=config.train.eval_every,
                                  phase="core" if core else self._main_phase())  # fmt: skip
        self.best_state: dict | None = None
        self.accepted_state: dict | None = None

    def _initialise(self, restarts: int) -> None:
        """A fresh model (the run's seed, or a new one per plateau restart), annealer at its
        start density, training rules, and optimizer."""
        seed = self.config.seed
        torch.manual_seed(seed if restarts == 0 else seed + 1_000_003 * restarts)
        self.model = self.task.build_model().to(self.device)
        a = self.config.annealing
        # A model without a sparse layer (a baseline) has nothing to anneal: its whole
        # budget is the final phase, and the best validation weights are kept.
        sparse = self.model.sparse is not None
        self.annealing = a.enabled and sparse
        self.annealer = SparsityAnnealer(
            start_density=a.start_density if self.annealing else self.stop_density,
            stop_density=self.stop_density,
            multiplier=a.multiplier,
            initial_bar=a.initial_bar,
            bar_decay_per_sample=a.bar_decay_per_sample,
        )
        # The optional rules act on the sparse layer's annealing (fails before a run starts).
        self.rules = build_rules(a, self.model, self.task) if sparse else []
        self.model.set_density(self.annealer.density)
        lr = self.config.train.lr
        self.optimizer = make_optimizer(self.model.trainable_parameters(), self.config.train)
        core = self.model.core
        self.core_optimizer = None if core is None else torch.optim.Adam(core.parameters(), lr=lr)

    def _core_untrained(self) -> bool:
        return self.model.core is not None and not self.model.core.frozen

    def _main_phase(self) -> str:
        return "anneal" if self.annealing else "final"

    def _restart(self) -> None:
        """Start again from a new initialisation. The batch stream, the budget and the clock
        go on (the samples spent on the plateau stay spent); the annealer starts afresh."""
        s = self.state
        s.restarts += 1
        s.init_start = s.samples
        s.init_best = 0.0
        core = self.model.core
        core_state = None if core is None else _snapshot(core)
        self._initialise(s.restarts)
        if core_state is not None:  # the trained, frozen core stays
            self.model.core.load_state_dict(core_state)
            self.model.core.freeze()
        self.annealer.last_samples = s.samples  # the bar falls from now on
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
        truncate_log(self.out, self.state.samples, self.state.core_samples)

    def _validate(self) -> tuple[dict, float]:
        """The validation split's scores as a log record, and the accuracy annealing reads."""
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
        s = self.state
        record = {
            "step": s.step,
            "samples": s.samples,
            "phase": s.phase,
            "loss": s.take_loss(),
            **{f"val_{k}": v for k, v in result.e2e.items()},
            "density": self.model.density,
            "val_density": result.measured_density,
        }
        for key in ("fne", "fpe", "ce", "spread"):
            if key in (result.motif or {}):
                record[f"val_{key}"] = result.motif[key]
        return record, 0.0 if accuracy is None else float(accuracy)

    def _context(self, accuracy: float) -> RuleContext:
        s, t = self.state, self.config.train
        return RuleContext(
            samples=s.samples, phase=s.phase, accuracy=accuracy, density=self.model.density,
            stop_density=self.stop_density, final_share=s.final_share(t.final_samples),
            model=self.model, optimizer=self.optimizer, annealer=self.annealer, task=self.task,
            device=self.device, seed=self.config.seed, eval_batch_size=t.eval_batch_size,
        )  # fmt: skip

    def _evaluate_and_anneal(self) -> dict:
        """One evaluation: the scores, then the rules and Algorithm 1's decision."""
        record, accuracy = self._validate()
        s = self.state
        s.init_best = max(s.init_best, accuracy)
        if on_plateau(self.config.train, phase=s.phase, annealing_steps=self.annealer.steps,
                      restarts=s.restarts, seen=s.seen, best=s.init_best):  # fmt: skip
            # An initialisation that never learnt the dense task (a DigitCircle seed sat at
            # exact match 0 for 200k samples): annealing it would only hide the failure.
            self._restart()
            record["restart"] = s.restarts
            return self._close(record)
        context = self._context(accuracy)
        hold = False
        for rule in self.rules:
            review = rule.review(self._settled(context))
            _file(record, rule.name, review.record)
            hold = hold or review.hold
            if review.restored:  # an earlier model is back: annealing again, no best weights
                s.phase, s.best_final_accuracy, self.best_state = "anneal", -1.0, None
                return self._close(record)
        decision = None
        if s.phase == "anneal":
            decision = self._anneal(record, accuracy, hold=hold)
        elif accuracy > s.best_final_accuracy:
            s.best_final_accuracy = accuracy
            self.best_state = _snapshot(self.model)
        stepped = decision is not None and decision.tightened
        context = dataclasses.replace(
            context, density=self.model.density, phase=s.phase, step=decision,
            final_share=s.final_share(self.config.train.final_samples),
            before_step=self.accepted_state if stepped else None,
        )  # fmt: skip
        for rule in self.rules:
            _file(record, rule.name, rule.after(self._settled(context)))
        return self._close(record)

    def _settled(self, context: RuleContext) -> RuleContext:
        """``context`` as the next rule sees it: settled while no rule waits on the model."""
        return dataclasses.replace(context, settled=all(r.settled for r in self.rules))

    def _anneal(self, record: dict, accuracy: float, *, hold: bool):
        """Algorithm 1's decision at this evaluation (``hold``: a rule asks for no step)."""
        s = self.state
        held = not self.task.ready_to_anneal()  # a curriculum still growing
        decision = self.annealer.update(s.samples, accuracy, hold=held or hold)
        record["bar"] = decision.bar
        if held:
            record["held"] = True
        record["tightened"] = decision.tightened
        if decision.tightened:
            # The weights that cleared the bar, at the density they cleared it with: what a
            # run stopped by its budget before annealing ends returns.
            self.accepted_state = _snapshot(self.model)
            self.model.set_density(self.annealer.density)
        if self.annealer.done:
            s.phase = "final"
            s.final_start = s.samples
        return decision

    def _close(self, record: dict) -> dict:
        if self.model.sparse is not None:
            record["threshold_mean"] = float(self.model.sparse.thresholds.mean())
        return record

    def _set_lr(self, batch_size: int) -> None:
        """The learning rate of the next step (``schedule.step_lr``)."""
        s = self.state
        lr = step_lr(
            self.config.train,
            phase=s.phase,
            seen=s.seen,  # a plateau restart warms up again
            since_final=s.samples - s.final_start,
            batch_size=batch_size,
            annealing=self.annealing,
            sparse=self.model.sparse is not None,
        )
        for group in self.optimizer.param_groups:
            group["lr"] = lr

    def _finished(self) -> str | None:
        t = self.config.train
        s = self.state
        if (s.phase == "final" and self.model.sparse is not None
                and s.samples - s.final_start >= t.final_samples):  # fmt: skip
            return "schedule"
        if s.samples >= t.max_samples:
            return "max_samples"
        if s.elapsed >= t.max_seconds:
            return "max_seconds"
        return None

    def run(self) -> dict:
        """Train until the schedule or the budget ends; write final.pt and metrics.json."""
        if self.state.phase == "core":
            train_core(self)
        t = self.config.train
        s = self.state
        progress = Progress(self.progress, s.samples, max_samples=t.max_samples,
                            max_seconds=t.max_seconds, metric=self.task.accuracy_metric)
        started = time.monotonic() - s.elapsed
        last_checkpoint = time.monotonic()
        self.model.train()
        stopped_by = self._finished()
        self.keep(None)  # the series' first checkpoint: the weights before any step
        batches = BatchPrefetcher(self.task, t.batch_size, enabled=t.prefetch)
        try:
            while stopped_by is None:
                self._set_lr(t.batch_size)
                batch = batches.get(s.step).to(self.device)
                loss = self.task.loss(self.model(batch.x), batch)
                self.optimizer.zero_grad(set_to_none=True)
                loss.backward()
                self.optimizer.step()
                s.step += 1
                s.samples += len(batch)
                s.loss_sum += float(loss.detach())
                s.loss_count += 1
                s.elapsed = time.monotonic() - started
                progress.step(len(batch), s.samples, s.elapsed, s.phase)
                if s.samples >= s.next_eval:
                    record = self._evaluate_and_anneal()
                    s.next_eval += t.eval_every
                    s.elapsed = time.monotonic() - started
                    record["elapsed"] = round(s.elapsed, 3)
                    self._log({**record, **self.task.training_state()})
                    self.keep(record)
                    progress.evaluated(record, accuracy_of(record, self.task), s.phase)
                    if time.monotonic() - last_checkpoint >= t.checkpoint_every_seconds:
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
        s = self.state
        if s.phase == "final" and self.best_state is not None:
            self.model.load_state_dict(self.best_state)
        elif s.phase == "anneal" and self.accepted_state is not None:
            self.model.load_state_dict(self.accepted_state)
        self.save(LAST_CHECKPOINT)
        self.save(FINAL_CHECKPOINT)
        torch.set_num_threads(self.eval_threads)
        # A run back in annealing (a rule put an earlier model back) has not completed it,
        # whatever the annealer says.
        complete = self.annealer.done and s.phase != "anneal"
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
            "samples_seen": s.samples,
            "plateau_restarts": s.restarts,
            "wall_seconds": round(s.elapsed, 2),
            "annealing": {
                "enabled": self.annealing,
                "complete": complete,
                "steps": self.annealer.steps,
                "final_bar": self.annealer.bar,
                "stop_density": self.annealer.stop_density,
                **{rule.name: rule.summary() for rule in self.rules},
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


def _file(record: dict, name: str, additions: dict) -> None:
    """File a rule's additions to a log record under the rule's name (nothing when none)."""
    if additions:
        record[name] = additions


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
        config = load_saved_config(config_path(out), use="resume")
        check_run_inputs(out, config)  # the dataset it was trained on, unchanged
        trainer = Trainer(config, out, progress=progress)
        restore_trainer(trainer, checkpoint_path(out, LAST_CHECKPOINT))
        record_run_inputs(out)  # a run from before the record: recorded from here on
        trainer._truncate_log()
        return trainer.run()
    trainer = Trainer(config, out, progress=progress)  # fails before anything is written
    create_run_directory(out, dump_yaml(recorded_config(config, out)))
    record_run_inputs(out)
    return trainer.run()
