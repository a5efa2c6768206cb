"""A finished run: load its saved config, task and model with the final weights; score it (the
``evaluate`` verb); bring an older run's perturbation and identifiability blocks up to the
current rules."""

from __future__ import annotations

from pathlib import Path

from ..config import merge
from ..errors import CheckpointError, ConfigError, InputError
from ..evaluate.evaluation import score_model
from ..rundir import config_path, metrics_path, read_metrics, require_finished, write_metrics
from ..tasks.registry import task_class
from .checkpoint import load_checkpoint
from .device import pick_device
from .run_config import load_saved_config


def build_run(run: Path, *, device: str | None = None, overrides: list[dict] | None = None):
    """(config, task, model on device, device) of the run directory ``run``, the model as its
    saved config builds it, with fresh weights (a caller loads the checkpoint it wants)."""
    config = load_saved_config(config_path(run))
    config = task_class(config.task).trained_config(config, other_data=bool(overrides))
    for override in overrides or []:
        config = merge(config, override)
    torch_device = pick_device(device or config.device)
    task = task_class(config.task)(config, config.seed)
    return config, task, task.build_model().to(torch_device), torch_device


def load_run(run: Path, *, device: str | None = None, overrides: list[dict] | None = None):
    """(config, task, model on device, device) of the run directory ``run``.

    ``overrides`` are merged over the saved config (e.g. another dataset to score on).
    """
    run = Path(run)
    final = require_finished(run)
    config, task, model, torch_device = build_run(run, device=device, overrides=overrides)
    payload = load_checkpoint(final, map_location=torch_device)
    try:
        model.load_state_dict(payload["model"])
    except (KeyError, RuntimeError) as exc:
        raise CheckpointError(
            f"{final}: checkpoint does not fit this model ({exc})"[:300]
        ) from None
    model.eval()
    return config, task, model, torch_device


def evaluate_run(
    run: Path, *, split: str = "test", dataset: Path | None = None, device: str | None = None
) -> dict:
    """Metrics of run ``run``'s final weights on ``split`` (of ``dataset`` if given), as the
    ``evaluate`` verb writes them."""
    overrides = [{"data": {"dataset": str(dataset)}}] if dataset is not None else []
    config, task, model, torch_device = load_run(run, device=device, overrides=overrides)
    if split not in task.eval_splits:
        raise ConfigError(
            f"--split {split}: the {config.task} task scores {', '.join(task.eval_splits)}"
        )
    batch_size = config.train.eval_batch_size
    complete = None
    if dataset is None and metrics_path(run).is_file():  # the run's own annealing record
        complete = _annealing_complete(read_metrics(run))
    result = score_model(model, task, split, batch_size=batch_size, device=torch_device,
                         annealing_complete=complete)  # fmt: skip
    return {
        "run": str(run),
        "task": config.task,
        "split": split,
        "dataset": getattr(config.data, "dataset", None),
        "density": model.density,
        **result.to_json(),
    }


def metrics_are_stale(metrics: dict) -> bool:
    """Whether a run's ``metrics.json`` predates a current rule: perturbation consistency
    scored before 2026-11-30 (only the cell's winning channel moved; no
    ``consistency_single_channel``), or no identifiability block (before 2026-12-02)."""
    return _old_perturbation(metrics.get("perturbation")) or "identifiability" not in metrics


def _old_perturbation(block) -> bool:
    """A perturbation block scored under the rule before 2026-11-30."""
    return isinstance(block, dict) and "consistency_single_channel" not in block


def _annealing_complete(metrics: dict) -> bool | None:
    """Whether a run's annealing finished, from its metrics (None: not recorded)."""
    return (metrics.get("annealing") or {}).get("complete")


def rescore_stale(run: Path, metrics: dict) -> dict:
    """``metrics`` with its test-split perturbation and identifiability blocks recomputed
    from the run's final weights under the current rules; written back atomically.

    The perturbation picks are seeded as before, so ``consistency_single_channel``
    reproduces an old figure; a replaced perturbation block is kept under
    ``perturbation_before_rescore``."""
    config, task, model, torch_device = load_run(run)
    batch_size = config.train.eval_batch_size
    result = score_model(model, task, "test", batch_size=batch_size, device=torch_device,
                         annealing_complete=_annealing_complete(metrics))  # fmt: skip
    metrics = dict(metrics)
    if _old_perturbation(metrics.get("perturbation")):
        metrics["perturbation_before_rescore"] = metrics["perturbation"]
    metrics["perturbation"] = result.perturbation
    metrics["identifiability"] = result.identifiability
    write_metrics(run, metrics)
    return metrics


def recorded_sources(run: Path, task, fasta=None, gff=None, *, annotation: bool = True,
                     ) -> tuple[Path, Path | None]:  # fmt: skip
    """(FASTA, annotation or None) a verb reads for run ``run``: the given ones, else those
    the run's dataset was built from (the annotation only when ``annotation``). A one-line
    :class:`InputError` when the run records no genome (a task without a genome dataset) or a
    recorded file is gone, naming the option that gives it: a verb never falls back to
    another genome."""
    data = getattr(task, "data", None)
    source = (getattr(data, "source", None) or {}) if data is not None else {}
    if fasta:
        fasta = Path(fasta)
    elif source.get("fasta"):
        fasta = Path(source["fasta"])
        if not fasta.is_file():
            raise InputError(f"{fasta}: the genome run {run} was trained on is gone; give --fasta")
    else:
        raise InputError(f"{run}: the run records no genome (its task reads no genome "
                         "dataset); give --fasta")  # fmt: skip
    if gff or not annotation:
        return fasta, Path(gff) if gff else None
    recorded = source.get("annotation")
    if recorded and not Path(recorded).is_file():
        raise InputError(f"{recorded}: the annotation run {run} was trained on is gone; "
                         "give --gff")  # fmt: skip
    return fasta, Path(recorded) if recorded else None
