"""Training diagnostics of a run (the ``diagnose`` verb): the topology and geometry of one of
its representations at every checkpoint of its series, beside its accuracy.

For each checkpoint in ``RUN/checkpoints/series/`` (kept when the run was trained with
``train.keep_checkpoints_every``): the point cloud of the chosen layer -- the token embedding
matrix (``embedding``), the motif layer ``h`` reads (``motifs``: for a sparse model only its
active positions, one vector of channel values each), ``g``'s output (``g``), or any module
by its name -- measured by ``evaluate/topology.py`` (H0/H1 persistence, TwoNN); for tasks on
residues mod p, the Fourier spectrum of the token embedding; and the model's accuracy on the
task's splits (train where the task offers it, val, test; at most ``max_eval`` examples
each), with the trainer's log record of that step (loss, density).

Writes ``OUT/`` (default ``RUN/diagnostics``): ``diagnostics.json`` (the time series, the
events -- train fit, test jump, H1 rise -- and each measure's Spearman correlation with test
accuracy), ``diagrams.h5`` (every checkpoint's persistence diagrams and spectrum) and the
figures ``measures.png`` and ``persistence.png`` (``report/diagnostics.py``); each
file atomically, ``diagnostics.json`` last, so the report never reads a half-written set.
Each checkpoint's row and diagrams are also kept in ``OUT/.checkpoints/`` as soon as they are
computed, keyed by the settings and the checkpoint file: a killed ``diagnose`` loses no
finished checkpoint, and one rerun while the run trains diagnoses only the new ones.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import h5py
import numpy as np

from ..errors import CheckpointError, InputError
from ..evaluate.activations import check_layer, embedding_module, point_cloud
from ..evaluate.evaluation import evaluate_model
from ..evaluate.topology import (
    correlations,
    find_events,
    fourier_spectrum,
    measure_cloud,
    top_frequencies,
)
from ..io import atomic_path, write_json_atomic
from ..progress import Counter, detail
from ..report.diagnostics import measures_figure, persistence_figure
from ..rundir import DIAGNOSTICS_SUMMARY, config_path, diagnostics_dir, series_checkpoints
from ..train.loading import LoadedRun, build_run
from ..train.series import load_series_checkpoint

CACHE_DIR = ".checkpoints"  # OUT/.checkpoints/step-NNNNNNNN.npz: one diagnosed checkpoint


class _Limited:
    """A task whose ``eval_batches`` stop after ``limit`` examples (the rest delegated)."""

    def __init__(self, task, limit: int) -> None:
        self._task, self._limit = task, limit

    def __getattr__(self, name):
        return getattr(self._task, name)

    def eval_batches(self, split: str, batch_size: int):
        seen = 0
        for batch in self._task.eval_batches(split, min(batch_size, self._limit)):
            if seen >= self._limit:
                return
            seen += len(batch.x)
            yield batch


def accuracies(model, task, splits, *, max_eval: int, batch_size: int, device) -> dict:
    """``{split: accuracy}`` of ``model`` on the first ``max_eval`` examples of each split."""
    limited = _Limited(task, max_eval)
    out = {}
    for split in splits:
        result = evaluate_model(model, limited, split, batch_size=batch_size, device=device,
                                motif_metrics=False)  # fmt: skip
        value = result.e2e.get(task.accuracy_metric)
        out[split] = None if value is None else float(value)
    return out


def _diagnose_checkpoint(path, loaded: LoadedRun, layer, batches, splits, settings):
    """(row, diagrams) of one series checkpoint (its weights loaded into ``loaded``'s model):
    its cloud's measures and its accuracies."""
    model, task, device = loaded.model, loaded.task, loaded.device
    payload = load_series_checkpoint(path)
    try:
        model.load_state_dict(payload["model"])
    except RuntimeError as exc:
        raise CheckpointError(f"{path}: does not fit this run's model ({exc})"[:300]) from None
    if payload.get("density") is not None:
        model.set_density(payload["density"])
    model.eval()
    cloud = point_cloud(model, layer, batches, device)
    measures = measure_cloud(cloud, max_points=settings["max_points"], seed=settings["seed"])
    record = payload.get("record") or {}
    row = {
        "step": int(payload["step"]),
        "samples": int(payload["samples"]),
        "phase": payload.get("phase"),
        "density": payload.get("density"),
        "loss": record.get("loss"),
        "raw_points": int(len(cloud)),
        **measures.as_dict(),
        "accuracy": accuracies(model, task, splits, max_eval=settings["max_eval"],
                               batch_size=task.config.train.eval_batch_size, device=device),
    }  # fmt: skip
    diagrams = dict(measures.diagrams)
    if task.cyclic_tokens and embedding_module(model) is not None:
        spectrum = fourier_spectrum(embedding_module(model).weight.detach().cpu().numpy())
        top, share = top_frequencies(spectrum)
        row.update(fourier_top5=top, fourier_top5_share=share)
        diagrams["spectrum"] = spectrum
    return row, diagrams


def _cache_file(out: Path, path: Path) -> Path:
    return Path(out) / CACHE_DIR / f"{path.stem}.npz"


def _cache_key(path: Path, settings: dict) -> str:
    stat = path.stat()
    return json.dumps({**settings, "checkpoint": [stat.st_size, stat.st_mtime_ns]})


def _cached(out: Path, path: Path, settings: dict) -> tuple[dict, dict] | None:
    """A checkpoint diagnosed before with the same settings (``OUT/.checkpoints/``), so a
    killed or repeated ``diagnose`` (e.g. while the run still trains) redoes only new ones."""
    try:
        with np.load(_cache_file(out, path), allow_pickle=False) as z:
            if str(z["key"]) != _cache_key(path, settings):
                return None
            return json.loads(str(z["row"])), {k: z[k] for k in z.files if k not in ("key", "row")}
    except (OSError, ValueError, KeyError):
        return None


def _keep(out: Path, path: Path, settings: dict, row: dict, diagrams: dict) -> None:
    file = _cache_file(out, path)
    file.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(file) as tmp, open(tmp, "wb") as fh:
        np.savez(fh, key=_cache_key(path, settings), row=json.dumps(row), **diagrams)


def diagnose_run(
    run: Path,
    out: Path | None = None,
    *,
    layer: str | None = None,
    max_points: int = 1000,
    sample: int = 256,
    max_eval: int = 4096,
    device: str | None = None,
    dataset: Path | None = None,
    seed: int = 0,
    diagram_steps: list[int] | None = None,
    log=None,
) -> dict:
    """Diagnose every series checkpoint of ``run`` (see the module docstring); returns the
    ``diagnostics.json`` dict. ``sample``: examples of the val split whose activations make a
    layer's point cloud; ``max_points``: the cloud's cap (a seeded subsample)."""
    run = Path(run)
    if not config_path(run).is_file():
        raise InputError(f"{run}: not a run directory (no {config_path(run).name})")
    loaded = build_run(run, device=device, dataset=dataset)
    task = loaded.task
    layer = layer or task.diagnostic_layer
    check_layer(loaded.model, layer, run)
    paths = series_checkpoints(run)
    if not paths:
        raise InputError(f"{run}: no checkpoint series (checkpoints/series/ is empty); train "
                         "with --set train.keep_checkpoints_every=SAMPLES to keep one")  # fmt: skip
    out = Path(out) if out else diagnostics_dir(run)
    splits = [s for s in ("train", "val", "test") if s in task.eval_splits]
    accuracy = "test" if "test" in splits else splits[-1]
    eval_batch = loaded.config.train.eval_batch_size
    batches = [] if layer == "embedding" else list(
        _Limited(task, sample).eval_batches("val", eval_batch))
    series, diagrams, started = [], {}, time.monotonic()
    settings = {"layer": layer, "max_points": max_points, "sample": sample,
                "max_eval": max_eval, "seed": seed}  # fmt: skip
    counter = Counter("diagnose", total=len(paths), unit="checkpoint")
    for path in paths:
        found = _cached(out, path, settings)
        if found is None:
            found = _diagnose_checkpoint(path, loaded, layer, batches, splits, settings)
            _keep(out, path, settings, *found)
        row, diagrams[f"step-{found[0]['step']:08d}"] = found
        series.append(row)
        counter.update(1)
        line = (f"step {row['step']}: {accuracy} {row['accuracy'][accuracy]}, "
                f"H1 max {row['h1_max']}, TwoNN {row['twonn_local']}")  # fmt: skip
        if log is not None:
            log(line)
        detail(line)
    counter.close()
    summary = {
        "run": str(run),
        "task": loaded.config.task,
        "layer": layer,
        "cyclic": bool(task.cyclic_tokens),
        "settings": {"max_points": max_points, "sample": sample if batches else None,
                     "max_eval": max_eval, "seed": seed,
                     "diagram_steps": list(diagram_steps or [])},  # fmt: skip
        "checkpoints": len(series),
        "seconds": round(time.monotonic() - started, 1),
        "events": find_events(series, accuracy),
        "spearman": correlations(series, accuracy),
        "series": series,
        "files": ["diagnostics.json", "diagrams.h5", "measures.png", "persistence.png"],
    }
    out.mkdir(parents=True, exist_ok=True)
    with atomic_path(out / "diagrams.h5") as tmp, h5py.File(tmp, "w") as h5:
        h5.attrs["layer"] = layer
        for key, arrays in diagrams.items():
            for name, array in arrays.items():
                h5.create_dataset(f"{key}/{name}", data=np.asarray(array, dtype=np.float64))
    for name, png in (("measures.png", measures_figure(summary)),
                      ("persistence.png", persistence_figure(summary, diagrams))):  # fmt: skip
        if png is None:
            summary["files"].remove(name)
            (out / name).unlink(missing_ok=True)
            continue
        with atomic_path(out / name) as tmp:
            tmp.write_bytes(png)
    write_json_atomic(out / DIAGNOSTICS_SUMMARY, summary)
    return summary


def describe(summary: dict) -> str:
    """A few lines for the terminal: checkpoints, events, the strongest correlations."""
    e = summary["events"]
    lines = [
        f"{summary['checkpoints']} checkpoints of layer {summary['layer']} in "
        f"{summary['seconds']} s",
        f"train fit at step {e['train_fit_step']}, {e['accuracy_split']} jump at step "
        f"{e['test_jump_step']}, largest H1 rise at step {e['h1_rise_step']}",
    ]
    for key, value in summary["spearman"].items():
        lines.append(f"Spearman({key}, {e['accuracy_split']} accuracy) = {value['rho']:+.3f}")
    return "\n".join(lines)

