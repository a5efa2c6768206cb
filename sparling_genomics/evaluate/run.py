"""Score a finished run on a split (the ``evaluate`` verb)."""

from __future__ import annotations

from pathlib import Path


def evaluate_run(
    run: Path, *, split: str = "test", dataset: Path | None = None, device: str | None = None
) -> dict:
    """Metrics of run ``run``'s final weights on ``split`` (of ``dataset`` if given)."""
    from ..train.loading import load_run

    overrides = [{"data": {"dataset": str(dataset)}}] if dataset is not None else []
    config, task, model, torch_device = load_run(run, device=device, overrides=overrides)
    result = task.evaluate(
        model, split, batch_size=int(config["train"]["eval_batch_size"]), device=torch_device
    )
    return {
        "run": str(run),
        "task": config["task"],
        "split": split,
        "dataset": config.get("data", {}).get("dataset"),
        "density": model.density,
        **result,
    }
