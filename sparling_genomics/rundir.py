"""The run directory: its fixed file names, and reading and writing each of its files.

A training run lives in one folder::

    RUN/config.yaml          the resolved config (every default written out)
    RUN/train_log.jsonl      one JSON record per evaluation
    RUN/checkpoints/last.pt  the latest state (what ``--resume`` continues from)
    RUN/checkpoints/final.pt the weights the run keeps
    RUN/checkpoints/series/  step-NNNNNNNN.pt: weights kept every ``train.keep_checkpoints_every``
    RUN/diagnostics/         ``diagnose``'s time series (``diagnostics.json``) and figures
    RUN/metrics.json         test metrics, written when training finishes (``write_metrics``)
    RUN/inputs.json          the fingerprints of the inputs it was trained from (its dataset)
    RUN/motifs/              ``export``'s motifs (``motifs.json``, ``motifs.meme``, logos)
    RUN/motifs/families/     their families (the same files, plus ``sites.tsv.gz``)

Every module that reads or writes one of these goes through the names here. This module sits
at the bottom of the package (beside ``io`` and ``errors``): it knows files, not tasks or
models; checkpoint contents are ``train.checkpoint``'s, and ``motifs.json`` is read and
written by ``export.motif_summary``, beside the motif files it summarises.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from .errors import RunDirectoryError
from .io import write_json_atomic, write_text_atomic

CONFIG_NAME = "config.yaml"
LOG_NAME = "train_log.jsonl"
METRICS_NAME = "metrics.json"
INPUTS_NAME = "inputs.json"  # the fingerprints of a run's inputs (train/provenance.py)
CHECKPOINT_DIR = "checkpoints"
LAST_CHECKPOINT = "last.pt"
FINAL_CHECKPOINT = "final.pt"
SERIES_DIR = "series"  # RUN/checkpoints/series/: the kept checkpoint series
DIAGNOSTICS_DIR = "diagnostics"
DIAGNOSTICS_SUMMARY = "diagnostics.json"
MOTIFS_DIR = "motifs"
MOTIFS_SUMMARY = "motifs.json"
MOTIFS_MEME = "motifs.meme"
FAMILIES_DIR = "families"  # RUN/motifs/families/: the motif families' files
FAMILY_SITES = "sites.tsv.gz"  # the families' merged sites, in FAMILIES_DIR
SCAN_SUMMARY = "scan.json"  # in the folder ``scan`` writes its tracks to
VARIANTS_SUMMARY = "variants.json"  # in the folder ``variants`` writes its tables to
CONCEPTS_DIR = "concepts"  # RUN/concepts/: concepts extracted after training
CONCEPTS_SUMMARY = "concepts.json"
REPORT_NAME = "report.html"
# Log fields that depend on the clock rather than on the computation.
TIMING_FIELDS = ("elapsed",)
# metrics.json's keys, in the file's order (every finished run's file has had them so).
METRICS_KEYS = (
    "task", "preset", "seed", "e2e", "sites", "motif", "perturbation", "density",
    "measured_density", "true_density", "density_ratio", "samples_seen", "plateau_restarts",
    "wall_seconds", "annealing", "stopped_by", "identifiability", "device", "machine",
    "test_samples",
)  # fmt: skip
# Those the test split's evaluation gives (``Evaluation.to_json``; its ``samples`` is
# ``test_samples`` here); a block it leaves out is null in the file. The rest are the run's.
METRICS_EVALUATION_KEYS = (
    "e2e", "sites", "motif", "perturbation", "measured_density", "identifiability",
    "test_samples",
)  # fmt: skip
METRICS_RUN_KEYS = tuple(k for k in METRICS_KEYS if k not in METRICS_EVALUATION_KEYS)


def config_path(run: Path) -> Path:
    """``RUN/config.yaml``."""
    return Path(run) / CONFIG_NAME


def log_path(run: Path) -> Path:
    """``RUN/train_log.jsonl``."""
    return Path(run) / LOG_NAME


def metrics_path(run: Path) -> Path:
    """``RUN/metrics.json``."""
    return Path(run) / METRICS_NAME


def inputs_path(run: Path) -> Path:
    """``RUN/inputs.json``: the fingerprints of the inputs the run was trained from."""
    return Path(run) / INPUTS_NAME


def checkpoint_path(run: Path, name: str = LAST_CHECKPOINT) -> Path:
    """``RUN/checkpoints/NAME`` (``last.pt`` unless named)."""
    return Path(run) / CHECKPOINT_DIR / name


def series_checkpoint_path(run: Path, step: int) -> Path:
    """``RUN/checkpoints/series/step-NNNNNNNN.pt``: the weights kept at training step ``step``."""
    return Path(run) / CHECKPOINT_DIR / SERIES_DIR / f"step-{step:08d}.pt"


def series_checkpoints(run: Path) -> list[Path]:
    """The kept checkpoint series of ``run``, in step order (empty when none was kept)."""
    folder = Path(run) / CHECKPOINT_DIR / SERIES_DIR
    return sorted(folder.glob("step-*.pt")) if folder.is_dir() else []


def diagnostics_dir(run: Path) -> Path:
    """``RUN/diagnostics``: where ``diagnose`` writes a run's time series by default."""
    return Path(run) / DIAGNOSTICS_DIR


def report_path(run: Path) -> Path:
    """``RUN/report.html``: where ``report`` writes a run's page by default."""
    return Path(run) / REPORT_NAME


def concepts_dir(run: Path) -> Path:
    """``RUN/concepts``: where ``concepts`` writes a run's post-hoc concepts by default."""
    return Path(run) / CONCEPTS_DIR


def motifs_dir(run: Path) -> Path:
    """``RUN/motifs``: where ``export`` writes a run's motifs by default."""
    return Path(run) / MOTIFS_DIR


def create_run_directory(run: Path, config_text: str) -> None:
    """Make ``RUN`` and ``RUN/checkpoints`` and write the resolved config's text."""
    run = Path(run)
    run.mkdir(parents=True, exist_ok=True)
    (run / CHECKPOINT_DIR).mkdir(exist_ok=True)
    write_text_atomic(config_path(run), config_text)


def require_finished(run: Path) -> Path:
    """``RUN/checkpoints/final.pt`` of a finished run; a one-line :class:`RunDirectoryError`
    when ``run`` has no config (not a run) or no final checkpoint (not finished)."""
    run = Path(run)
    if not config_path(run).is_file():
        raise RunDirectoryError(f"{run}: not a run directory (no {CONFIG_NAME})")
    final = checkpoint_path(run, FINAL_CHECKPOINT)
    if not final.is_file():
        raise RunDirectoryError(
            f"{run}: has no {CHECKPOINT_DIR}/{FINAL_CHECKPOINT} (training not finished?)"
        )
    return final


def read_run_json(path: Path, what: str) -> dict:
    """A JSON file of a run (metrics, motifs, scan summary); a missing or torn file is a
    one-line :class:`RunDirectoryError` saying what should have written it."""
    path = Path(path)
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise RunDirectoryError(f"{path}: missing ({what})") from None
    except json.JSONDecodeError as exc:
        raise RunDirectoryError(f"{path}: not valid JSON ({exc.msg}, line {exc.lineno})") from None


def read_metrics(run: Path, what: str = "written when training finishes") -> dict:
    """``RUN/metrics.json`` (see :func:`read_run_json` for the errors)."""
    return read_run_json(metrics_path(run), what)


def metrics_record(evaluation: dict, run_fields: dict) -> dict:
    """``RUN/metrics.json``'s dict: the test split's evaluation (``Evaluation.to_json()``, a
    plain dict so this module stays below ``evaluate``) and the run's own fields
    (:data:`METRICS_RUN_KEYS`), in the file's key order, so every run's file has one layout.

    A block the evaluation leaves out (no sites, motifs or perturbation) is null, as the file
    has always had it. A key the file does not know, or a run field left out, is a
    ``ValueError``: a new field is added to :data:`METRICS_KEYS` first."""
    scored = {("test_samples" if k == "samples" else k): v for k, v in evaluation.items()}
    unknown = (scored.keys() - set(METRICS_EVALUATION_KEYS)) | (
        run_fields.keys() - set(METRICS_RUN_KEYS)
    )
    missing = set(METRICS_RUN_KEYS) - run_fields.keys()
    if unknown or missing:
        raise ValueError(
            f"{METRICS_NAME}: unknown keys {sorted(unknown)}, missing run fields {sorted(missing)}"
        )
    merged = {**run_fields, **scored}
    return {key: merged.get(key) for key in METRICS_KEYS}


def write_metrics(run: Path, metrics: dict) -> None:
    """Write ``RUN/metrics.json`` atomically (NaN and inf, which JSON lacks, as null).

    The file's one writer: the trainer's final metrics (built by :func:`metrics_record`) and
    a rescore of an old run's blocks (``train.loading.rescore_stale``) both come through here."""
    write_json_atomic(metrics_path(run), _finite(metrics))


def _finite(value):
    """JSON has no NaN/inf: replace them with None."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def prepare_run_directory(out: Path, *, resume: bool) -> None:
    """Refuse to overwrite a run; check a run to resume has what it needs."""
    out = Path(out)
    if resume:
        if not checkpoint_path(out, LAST_CHECKPOINT).is_file():
            raise RunDirectoryError(f"{out}: nothing to resume (no checkpoints/last.pt)")
        if metrics_path(out).is_file():
            raise RunDirectoryError(f"{out}: this run has finished already ({METRICS_NAME} exists)")
        return
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise RunDirectoryError(
            f"{out}: run directory exists and is not empty; choose another --out "
            "or continue it with --resume"
        )


def log_value(value):
    """A log record's value with its floats at 6 significant digits (a loss or a density
    read to 17 digits says nothing more, and saved runs' logs are kept in git)."""
    if isinstance(value, float):
        return float(f"{value:.6g}")
    if isinstance(value, dict):
        return {k: log_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [log_value(v) for v in value]
    return value


def append_log(run: Path, record: dict) -> None:
    """Append one record to ``RUN/train_log.jsonl``."""
    with open(log_path(run), "a") as handle:
        handle.write(json.dumps(log_value(record)) + "\n")


def read_log(run: Path) -> list[dict]:
    """Records of ``RUN/train_log.jsonl`` (a torn last line, from a kill, is skipped)."""
    path = log_path(run)
    if not path.is_file():
        raise RunDirectoryError(f"{path.parent}: no {LOG_NAME} (not a finished run?)")
    records = []
    for line in path.read_text().splitlines():
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return records


def truncate_log(run: Path, samples: int, core_samples: int = 0) -> None:
    """Drop the log lines written after ``samples`` (those after the checkpoint a resumed run
    continues from; core-phase lines: after ``core_samples``) and a torn last line."""
    path = log_path(run)
    if not path.exists():
        return
    keep = []
    for line in path.read_text().splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            break  # a line cut by the kill
        if record.get("samples", 0) > samples or record.get("core_samples", 0) > core_samples:
            break
        keep.append(line)
    write_text_atomic(path, "".join(line + "\n" for line in keep))
