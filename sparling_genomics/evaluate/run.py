"""Score a finished run on a split (the ``evaluate`` verb), and bring an older run's
perturbation score up to the current rule."""

from __future__ import annotations

from pathlib import Path


def score_model(task, model, split: str, *, batch_size: int, device) -> dict:
    """``task.evaluate`` of ``model`` on ``split`` as a run's record has it: with
    perturbation consistency where the task allows swaps (the trainer's final metrics, the
    ``evaluate`` verb and a rescore all score this way)."""
    extra = {"perturbation": True} if task.swappable_symbols() else {}
    return task.evaluate(model, split, batch_size=batch_size, device=device, **extra)


def evaluate_run(
    run: Path, *, split: str = "test", dataset: Path | None = None, device: str | None = None
) -> dict:
    """Metrics of run ``run``'s final weights on ``split`` (of ``dataset`` if given)."""
    from ..train.loading import load_run

    overrides = [{"data": {"dataset": str(dataset)}}] if dataset is not None else []
    config, task, model, torch_device = load_run(run, device=device, overrides=overrides)
    batch_size = config.train.eval_batch_size
    result = score_model(task, model, split, batch_size=batch_size, device=torch_device)
    return {
        "run": str(run),
        "task": config.task,
        "split": split,
        "dataset": getattr(config.data, "dataset", None),
        "density": model.density,
        **result,
    }


def perturbation_is_stale(metrics: dict) -> bool:
    """Whether a run's ``metrics.json`` scored perturbation consistency under the rule before
    2026-11-30 (only the cell's winning channel moved; no ``consistency_single_channel``)."""
    block = metrics.get("perturbation")
    return isinstance(block, dict) and "consistency_single_channel" not in block


def rescore_perturbation(run: Path, metrics: dict) -> dict:
    """``metrics`` with its test-split perturbation block recomputed from the run's final
    weights under the current rule (``evaluate.perturbation``); written back atomically.

    The picks are seeded as before, so ``consistency_single_channel`` reproduces the old
    figure; the old block is kept under ``perturbation_before_rescore``."""
    from ..io import write_json_atomic
    from ..train.loading import load_run

    config, task, model, torch_device = load_run(run)
    batch_size = config.train.eval_batch_size
    result = score_model(task, model, "test", batch_size=batch_size, device=torch_device)
    metrics = dict(metrics)
    metrics["perturbation_before_rescore"] = metrics.get("perturbation")
    metrics["perturbation"] = result["perturbation"]
    write_json_atomic(Path(run) / "metrics.json", metrics)
    return metrics
