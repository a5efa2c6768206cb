"""The verbs that train and score a model: ``train``, ``evaluate``, ``compare``."""

from __future__ import annotations

from pathlib import Path

import click

from .options import device_option, model_option, threads_option
from .paths import OUT_FILE


def overrides_of(seed, device, sets) -> list[dict]:
    from ..config import parse_override

    overrides = [parse_override(text) for text in sets]
    if seed is not None:
        overrides.append({"seed": seed})
    if device is not None:
        overrides.append({"device": device})
    return overrides


@click.command()
@click.option(
    "--task",
    help="Task to train: planted, splicing, digit_circle, latex_ocr, audio_sequence, or any "
    "other name in tasks/registry.py (an unknown name lists them).",
)
@click.option("--preset", default="cpu", show_default=True,
              help="Preset: cpu, paper, tiny (splicing also long: a 2,000-nt context).")
@click.option("--out", required=True, type=click.Path(path_type=Path), help="Run directory.")
@click.option("--seed", type=int, help="Seed of every random choice.")
@device_option()
@threads_option()
@click.option(
    "--config",
    "config_files",
    multiple=True,
    type=click.Path(path_type=Path),
    help="YAML config file(s) over the preset.",
)
@click.option("--set", "sets", multiple=True, help="Override one key: a.b=value (repeatable).")
@click.option(
    "--dataset",
    "dataset_path",
    type=click.Path(path_type=Path),
    help="Dataset (.h5) for the splicing task (same as --set data.dataset=PATH).",
)
@click.option("--baseline", is_flag=True,
              help="Train without the sparse layer (the non-sparse baseline; splicing, planted).")
@click.option("--resume", is_flag=True, help="Continue the killed run in --out.")
@click.option("--resume-if-same", is_flag=True,
              help="Continue --out when it holds a killed run of this same config (a finished "
              "one is kept as it is); a run of another config is moved aside to "
              "OUT.replaced-N (a retried cluster job's habit).")  # fmt: skip
@click.option(
    "--no-progress", is_flag=True,
    help="No progress report (by default a bar on a terminal, else a plain line every 30 s).",
)  # fmt: skip
def train(
    task,
    preset,
    out,
    seed,
    device,
    config_files,
    sets,
    dataset_path,
    baseline,
    resume,
    resume_if_same,
    no_progress,
) -> None:
    """Train a Sparling model; writes the run directory OUT."""
    from ..errors import ConfigError
    from ..io import check_writable
    from ..train.progress import summary_line
    from ..train.retry import train_or_resume
    from ..train.run_config import resolve_config
    from ..train.trainer import train as run_training

    if resume and resume_if_same:
        raise ConfigError("give --resume or --resume-if-same, not both")
    check_writable(out)  # a read-only folder: one line before any work, as for the other verbs
    if resume:
        if task or config_files or sets or seed is not None:
            raise ConfigError("--resume continues OUT with its saved config; drop other options")
        metrics = run_training({}, out, resume=True, progress=not no_progress)
    else:
        if not task:
            raise ConfigError("--task is required (e.g. --task planted)")
        overrides = overrides_of(seed, device, sets)
        if dataset_path is not None:
            overrides.append({"data": {"dataset": str(dataset_path)}})
        if baseline:
            overrides.append({"model": {"sparse_layer": False}})
        config = resolve_config(task, preset, files=list(config_files), overrides=overrides)
        start = train_or_resume if resume_if_same else run_training
        metrics = start(config, out, progress=not no_progress)
    click.echo(summary_line(metrics))


@click.command()
@model_option()
@click.option("--split", type=click.Choice(["val", "test", "all"]), default="test",
              show_default=True, help="'all': every window of the dataset (site tasks).")
@click.option("--dataset", "dataset_path", type=click.Path(path_type=Path),
              help="Score on this dataset instead of the run's own (splicing); its classes "
              "are matched to the run's by name.")  # fmt: skip
@click.option("--out", type=OUT_FILE, help="Write the metrics JSON here.")
@device_option()
@threads_option()
def evaluate(run, split, dataset_path, out, device) -> None:
    """Score a trained model on a split; prints (and optionally writes) metrics JSON."""
    import json

    from ..io import write_json_atomic
    from ..train.loading import evaluate_run

    metrics = evaluate_run(run, split=split, dataset=dataset_path, device=device)
    if out is not None:
        write_json_atomic(out, metrics)
    click.echo(json.dumps(metrics, indent=2))


@click.command()
@model_option()
@click.option("--baseline", type=click.Path(path_type=Path), help="The baseline's run directory.")
@click.option("--out", required=True, type=OUT_FILE, help="JSON file.")
def compare(run, baseline, out) -> None:
    """Test metrics of a Sparling run beside its non-sparse baseline (and their ratios)."""
    from ..evaluate.compare import compare_runs
    from ..io import write_json_atomic

    result = compare_runs(run, baseline)
    write_json_atomic(out, result)
    for key, value in (result.get("ratio") or {}).items():
        click.echo(f"{key}: Sparling / baseline = {value:.3f}")
