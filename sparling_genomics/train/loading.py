"""A finished run: load its saved config, task and model with the final weights; score it (the
``evaluate`` verb); bring an older run's perturbation and identifiability blocks up to the
current rules."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn

from ..config import RunConfig, load_yaml, merge
from ..errors import CheckpointError, ConfigError, InputError
from ..evaluate.evaluation import score_model
from ..genome.dataset_source import source_file
from ..io import recorded_candidates
from ..rundir import config_path, metrics_path, read_metrics, require_finished, write_metrics
from ..tasks.base import Task
from ..tasks.registry import task_class
from .checkpoint import load_checkpoint
from .device import pick_device
from .provenance import check_run_inputs
from .run_config import check_recorded_config, load_saved_config, recorded_paths


@dataclass(frozen=True)
class LoadedRun:
    """A run directory in memory: its folder, its saved config, the task that config builds,
    the model (on ``device``) and the device."""

    path: Path
    config: RunConfig
    task: Task
    model: nn.Module
    device: torch.device


def build_run(run: Path, *, device: str | None = None, overrides: list[dict] | None = None,
              dataset: Path | None = None) -> LoadedRun:  # fmt: skip
    """The run directory ``run`` in memory, the model as its saved config builds it, on the
    device, with fresh weights (a caller loads the checkpoint it wants).

    ``dataset``: the run's own dataset where it has moved (``--dataset``); ``overrides`` are
    other data to score on. An input file the run records that is not where the record
    points is a one-line error naming it, where it was looked for and the option to give;
    the run's own dataset whose content changed since it was trained, another
    (``train/provenance.py``)."""
    path = config_path(run)
    config = load_saved_config(path, use="evaluate")
    cls = task_class(config.task)
    if dataset is not None:
        if "data.dataset" not in cls.path_keys:
            raise ConfigError(f"--dataset: a {config.task} run reads no dataset")
        config = merge(config, {"data": {"dataset": str(dataset)}})
    given = {"data.dataset"} if dataset is not None else set()
    for override in overrides or []:
        given |= {f"{k}.{kk}" for k, v in override.items() if isinstance(v, dict) for kk in v}
    _check_recorded_files(run, config, given)
    if not overrides:  # the run's own dataset (moved or not): the one it was trained on
        check_run_inputs(run, config)
    config = cls.trained_config(config, other_data=bool(overrides))
    for override in overrides or []:
        config = merge(config, override)
    torch_device = pick_device(device or config.device)
    task = cls(config, config.seed)
    return LoadedRun(Path(run), config, task, task.build_model().to(torch_device), torch_device)


def _check_recorded_files(run: Path, config, given: set[str]) -> None:
    """A one-line :class:`InputError` for the first input file the run records that is not
    there (and that no option gives instead)."""
    raw = load_yaml(config_path(run))
    for key, value in recorded_paths(config).items():
        if key in given or Path(value).exists():
            continue
        text = str(_dig(raw, key) or value)
        looked = ", ".join(str(c) for c in recorded_candidates(text, run))
        fix = ("give --dataset PATH" if key == "data.dataset" else
               f"put it back there, or edit {key} in {config_path(run)}")  # fmt: skip
        raise InputError(f"{run}: {key} {text} is not there (looked for {looked}); {fix}")


def _dig(mapping: dict, key: str):
    for part in key.split("."):
        mapping = mapping.get(part) if isinstance(mapping, dict) else None
    return mapping


def load_run(run: Path, *, device: str | None = None, overrides: list[dict] | None = None,
             dataset: Path | None = None) -> LoadedRun:  # fmt: skip
    """The run directory ``run`` in memory, with its final weights, in eval mode.

    ``overrides`` are merged over the saved config (e.g. another dataset to score on);
    ``dataset``: the run's own dataset where it has moved (see :func:`build_run`).
    """
    run = Path(run)
    final = require_finished(run)
    loaded = build_run(run, device=device, overrides=overrides, dataset=dataset)
    payload = load_checkpoint(final, map_location=loaded.device)
    # config.yaml edited after training (keys that keep the tensor shapes load silently)
    check_recorded_config(load_saved_config(config_path(run)), payload.get("config", {}), final,
                          resume=False)  # fmt: skip
    try:
        loaded.model.load_state_dict(payload["model"])
    except (KeyError, RuntimeError) as exc:
        raise CheckpointError(
            f"{final}: checkpoint does not fit this model ({exc})"[:300]
        ) from None
    loaded.model.eval()
    return loaded


def evaluate_run(
    run: Path, *, split: str = "test", dataset: Path | None = None, device: str | None = None
) -> dict:
    """Metrics of run ``run``'s final weights on ``split`` (of ``dataset`` if given), as the
    ``evaluate`` verb writes them."""
    overrides = [{"data": {"dataset": str(dataset)}}] if dataset is not None else []
    loaded = load_run(run, device=device, overrides=overrides)
    config, task = loaded.config, loaded.task
    if split not in task.eval_splits:
        raise ConfigError(
            f"--split {split}: the {config.task} task scores {', '.join(task.eval_splits)}"
        )
    batch_size = config.train.eval_batch_size
    complete = None
    if dataset is None and metrics_path(run).is_file():  # the run's own annealing record
        complete = _annealing_complete(read_metrics(run))
    result = score_model(loaded.model, task, split, batch_size=batch_size, device=loaded.device,
                         annealing_complete=complete)  # fmt: skip
    return {
        "run": str(run),
        "task": config.task,
        "split": split,
        "dataset": getattr(config.data, "dataset", None),
        "density": loaded.model.density,
        **result.to_json(),
    }


def metrics_are_stale(metrics: dict) -> bool:
    """Whether a run's ``metrics.json`` predates a current rule: perturbation consistency
    scored before 2026-11-30 (only the cell's winning channel moved; no
    ``consistency_single_channel``), no identifiability block (before 2026-12-02), or an
    image or spectrogram task's motif block without its channel glyphs (before 2026-12-06)."""
    return (_old_perturbation(metrics.get("perturbation")) or "identifiability" not in metrics
            or _missing_glyphs(metrics))  # fmt: skip


def _missing_glyphs(metrics: dict) -> bool:
    motif = metrics.get("motif")
    if not isinstance(motif, dict) or "glyphs" in motif:
        return False
    return not task_class(metrics["task"]).exports_motifs  # DNA motifs are exported PWMs


def _old_perturbation(block) -> bool:
    """A perturbation block scored under the rule before 2026-11-30."""
    return isinstance(block, dict) and "consistency_single_channel" not in block


def _annealing_complete(metrics: dict) -> bool | None:
    """Whether a run's annealing finished, from its metrics (None: not recorded)."""
    return (metrics.get("annealing") or {}).get("complete")


def rescore_stale(run: Path, metrics: dict) -> dict:
    """``metrics`` with its test-split perturbation and identifiability blocks (and an image
    task's channel glyphs) recomputed from the run's final weights under the current rules;
    written back atomically.

    The perturbation picks are seeded as before, so ``consistency_single_channel``
    reproduces an old figure; a replaced perturbation block is kept under
    ``perturbation_before_rescore``."""
    loaded = load_run(run)
    result = score_model(loaded.model, loaded.task, "test", device=loaded.device,
                         batch_size=loaded.config.train.eval_batch_size,
                         annealing_complete=_annealing_complete(metrics))  # fmt: skip
    metrics = dict(metrics)
    if _old_perturbation(metrics.get("perturbation")):
        metrics["perturbation_before_rescore"] = metrics["perturbation"]
    metrics["perturbation"] = result.perturbation
    metrics["identifiability"] = result.identifiability
    if result.motif and "glyphs" in result.motif:
        metrics["motif"] = {**(metrics.get("motif") or {}), "glyphs": result.motif["glyphs"]}
    write_metrics(run, metrics)
    return metrics


def recorded_sources(run: Path, task, fasta=None, gff=None, *, annotation: bool = True,
                     ) -> tuple[Path, Path | None]:  # fmt: skip
    """(FASTA, annotation or None) a verb reads for run ``run``: the given ones, else those
    the run's dataset was built from (the annotation only when ``annotation``), found as the
    dataset records them (``genome/dataset_source.py``). A one-line :class:`InputError` when
    the run records no genome (a task without a genome dataset) or a recorded file is gone,
    naming the option that gives it: a verb never falls back to another genome."""
    data = getattr(task, "data", None)
    source = (getattr(data, "source", None) or {}) if data is not None else {}
    if fasta:
        fasta = Path(fasta)
    elif source.get("fasta"):
        fasta = source_file(source, "fasta", data.path)
        if not fasta.is_file():
            raise InputError(f"{fasta}: the genome run {run} was trained on is not there "
                             f"(recorded in {data.path}); give --fasta")  # fmt: skip
    else:
        raise InputError(f"{run}: the run records no genome (its task reads no genome "
                         "dataset); give --fasta")  # fmt: skip
    if gff or not annotation:
        return fasta, Path(gff) if gff else None
    recorded = source_file(source, "annotation", data.path) if data is not None else None
    if recorded and not recorded.is_file():
        raise InputError(f"{recorded}: the annotation run {run} was trained on is not there "
                         f"(recorded in {data.path}); give --gff")  # fmt: skip
    return fasta, recorded
