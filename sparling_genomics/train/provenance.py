"""Where a run and what is made from it came from, so that a job fed another job's output
refuses, in one line, a piece that does not belong instead of mixing it in.

- A run's **model fingerprint** is the SHA-256 digest (``train/checkpoint.py``) of what
  defines its model: the final weights and the config's ``task`` and ``model`` blocks. Not
  the training state (wall clocks; a run killed and resumed is the same model as one never
  killed) nor paths (a run trained or moved elsewhere is the same model). ``export``
  records it in ``motifs.json``, ``scan`` in each part and in ``scan.json``, ``variants`` in
  ``variants.json``; ``scan`` and ``variants`` refuse motifs exported from other weights,
  ``scan --gather`` a part scanned by another model, and ``report`` motifs, a scan or
  variant effects of another model.
- ``RUN/inputs.json`` records the fingerprint of the dataset (``data.dataset``) the run was
  trained on (``genome/fingerprint.py``), written by the trainer as it makes the run's folder
  (a run from before the record gets one when it is resumed). Loading the run (``train
  --resume``, ``evaluate``, ``export``, ``scan``, ``variants``, ...) refuses that dataset when
  its content has changed since -- also when it is given with ``--dataset`` as the run's own
  dataset, moved; ``train --resume-if-same`` takes a run on a changed dataset for a run of
  another config. Other data to score (``evaluate --dataset``) is not the run's and is not
  checked. Runs trained before the record have none and load as before.
"""

from __future__ import annotations

from pathlib import Path

import torch

from ..errors import CheckpointError, InputError, SparlingError
from ..genome.fingerprint import dataset_fingerprint
from ..io import write_json_atomic
from ..rundir import (
    FINAL_CHECKPOINT,
    checkpoint_path,
    config_path,
    inputs_path,
    read_run_json,
    require_finished,
)
from .checkpoint import payload_digest
from .run_config import load_saved_config, recorded_paths

FINGERPRINTED = ("data.dataset",)  # the inputs whose content a run records
SHOWN = 12  # hex digits of a fingerprint shown in a message


def run_fingerprint(run: Path) -> str:
    """The model fingerprint of finished run ``run``: the digest of its final weights and its
    config's ``task`` and ``model`` blocks (the file is memory-mapped, only the weights are
    read)."""
    final = require_finished(run)
    try:
        payload = torch.load(final, map_location="cpu", weights_only=True, mmap=True)
    except Exception as exc:  # torch raises many types for bad files
        raise CheckpointError(f"{final}: not a readable checkpoint ({exc})"[:300]) from None
    if not isinstance(payload, dict) or not isinstance(payload.get("model"), dict):
        raise CheckpointError(f"{final}: not a sparling-genomics checkpoint (no model weights)")
    config = payload.get("config") if isinstance(payload.get("config"), dict) else {}
    return payload_digest({"model": payload["model"],
                           "config": {key: config.get(key) for key in ("task", "model")}})


def check_same_model(recorded: str | None, run: Path, fingerprint: str, made: Path,
                     fix: str) -> None:  # fmt: skip
    """A one-line :class:`InputError` when ``made`` (an output that records the model it came
    from as ``recorded``) came from other weights than run ``run``'s; outputs made before
    the record (``recorded`` None) pass."""
    if recorded is not None and recorded != fingerprint:
        raise InputError(f"{made}: made from other weights than {run}'s (model fingerprint "
                         f"{recorded[:SHOWN]}, the run's {fingerprint[:SHOWN]}); {fix}")


def check_outputs_of(run: Path, outputs: dict[Path, dict | None]) -> None:
    """:func:`check_same_model` for each output (its file: its JSON summary, None when not
    given) that records its model, against finished run ``run``'s; a run kept without its
    checkpoints (text only) has no fingerprint to compare and passes."""
    run = Path(run)
    if not checkpoint_path(run, FINAL_CHECKPOINT).is_file():
        return
    fingerprint = None
    for path, record in outputs.items():
        if isinstance(record, dict) and record.get("model"):
            fingerprint = fingerprint or run_fingerprint(run)
            check_same_model(record["model"], run, fingerprint, path,
                             "give this run's own, or make them again from it")  # fmt: skip


def _input_files(config) -> dict[str, Path]:
    paths = recorded_paths(config)
    return {key: Path(paths[key]) for key in FINGERPRINTED if key in paths}


def record_run_inputs(run: Path) -> None:
    """Write ``RUN/inputs.json`` (the fingerprint of each input the run's saved config names)
    where the run folder exists and has none: a run's record is never rewritten, it keeps the
    inputs the run started from. Nothing is recorded where the config or an input does not
    load (its loader says why, where it is needed)."""
    run = Path(run)
    if inputs_path(run).exists() or not config_path(run).is_file():
        return
    found = {}
    try:
        for key, path in _input_files(load_saved_config(config_path(run))).items():
            if path.is_file():
                found[key] = dataset_fingerprint(path)
    except SparlingError:  # a config or dataset that does not load: its loader says why
        return
    if found:
        write_json_atomic(inputs_path(run), found)


def check_run_inputs(run: Path, config=None) -> None:
    """A one-line :class:`InputError` when an input run ``run`` recorded the fingerprint of
    (``RUN/inputs.json``) has other content now; ``config``: the run's config as loaded (its
    saved one by default). No record, or a file that is not there: nothing to compare."""
    run = Path(run)
    record_file = inputs_path(run)
    if not record_file.is_file():
        return
    recorded = read_run_json(record_file, "written when the run was trained")
    if config is None:
        config = load_saved_config(config_path(run))
    for key, path in _input_files(config).items():
        if key not in recorded or not path.is_file():
            continue
        now = dataset_fingerprint(path)
        if now != recorded[key]:
            raise InputError(
                f"{path}: not the dataset run {run} was trained on (content fingerprint "
                f"{_short(now)}, {record_file} records {_short(recorded[key])}); rebuild it as "
                "it was or retrain (`evaluate --dataset` scores other data)"
            )


def _short(fingerprint: str) -> str:
    kind, _, digest = str(fingerprint).rpartition(":")
    return f"{kind}:{digest[:SHOWN]}" if kind else digest[:SHOWN]
