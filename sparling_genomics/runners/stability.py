"""Seed stability: which motif families of a run recur when it is trained with other seeds.

Reads each seed's exported families (``RUN/motifs/families/``: representatives, effects,
composition labels, merged sites), checks that the runs are one setting (task, dataset,
motif channels, exported split; one line naming the run that differs) and builds the
consensus of ``export/consensus.py``: each family's matches in every other seed by logo
(Tomtom on representatives, q < 0.01) and by sites, the consensus groups (k of n seeds) and
the headline figures. The JSON keeps the table it had before the consensus (``seeds``,
``fraction_reproduced``, ``effect_reproduced``, ``table``: the logo verdict, per family its
best match in each other seed), which the report and the seed benchmark read; the consensus
is its ``consensus`` block. One run: reproducibility not measured, said in the JSON.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import yaml

from ..errors import RunDirectoryError, SparlingError
from ..export.consensus import (
    ConsensusSettings,
    SeedFamilies,
    check_same_setting,
    consensus_families,
    consensus_settings,
)
from ..export.formats import ExportedMotif
from ..export.motif_summary import exported_families, exported_family_sites, read_motifs_summary
from ..genome.fingerprint import dataset_fingerprint
from ..io import resolve_recorded, write_json_atomic
from ..rundir import config_path, inputs_path, motifs_dir, read_run_json

STABILITY_Q = 0.01  # the threshold: a family must recur unmistakably, not by chance


def read_seed(run: Path, label: str) -> SeedFamilies:
    """Run ``run``'s exported families as :class:`SeedFamilies` named ``label``: their
    representatives (each one's ``effect``: its family's effect, or None), merged sites and
    composition labels; one-line errors naming the file."""
    folder = motifs_dir(run)
    families = exported_families(folder)
    block = read_motifs_summary(folder)["families"]
    composition = {f["id"]: (f.get("composition") or {}).get("label")
                   for f in block.get("families", [])}  # fmt: skip
    return SeedFamilies(label, families, exported_family_sites(folder), composition)


def _config(run: Path) -> dict:
    """``RUN/config.yaml`` as saved ({} where there is none); a torn one is one line."""
    path = config_path(run)
    if not path.is_file():
        return {}
    try:
        config = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as exc:
        raise RunDirectoryError(f"{path}: not valid YAML ({str(exc).splitlines()[0]})") from None
    if not isinstance(config, dict):
        raise RunDirectoryError(f"{path}: not a run config (a mapping)")
    return config


def run_setting(run: Path) -> dict:
    """What makes exported runs one setting: ``task``, ``channels`` (the exported motif
    channels, silent ones included), ``split`` (the windows the sites are on), and the
    dataset: ``fingerprint`` (recorded in ``RUN/inputs.json``, else the dataset file's own
    where it is there), ``path`` (``data.dataset`` resolved) or, for a task that makes its
    data (planted), the ``data`` block itself."""
    run = Path(run)
    config = _config(run)
    summary = read_motifs_summary(motifs_dir(run))
    data = dict(config.get("data") or {})
    dataset = data.pop("dataset", None)
    recorded = (read_run_json(inputs_path(run), "written when the run was trained")
                if inputs_path(run).is_file() else {})  # fmt: skip
    path = resolve_recorded(dataset, run).resolve() if dataset else None
    fingerprint = recorded.get("data.dataset")
    if fingerprint is None and path is not None and path.is_file():
        with contextlib.suppress(SparlingError):  # unreadable: compared by path instead
            fingerprint = dataset_fingerprint(path)
    return {
        "task": config.get("task"),
        "channels": len(summary["motifs"]) + len(summary.get("silent_channels") or []),
        "split": summary.get("split"),
        "fingerprint": fingerprint,
        "path": None if path is None else str(path),
        "data": data,
    }  # fmt: skip


def check_one_setting(runs: list[Path], settings: list[dict]) -> None:
    """One-line error naming the first run of another task, dataset (genome), motif channel
    count or split than the first run. Datasets compare by fingerprint where every run has
    one, else by path where every run names one, else by the ``data`` block."""
    for key in ("fingerprint", "path", "data"):
        if all(s[key] is not None for s in settings):
            break
    check_same_setting([(str(run), {**{k: s[k] for k in ("task", "channels", "split")},
                                    "dataset": s[key]})
                        for run, s in zip(runs, settings)])  # fmt: skip


def pairwise_table(consensus: dict, seeds: list[SeedFamilies], q_threshold: float) -> dict:
    """The table before the consensus, from it: per seed its families and how many recur in
    every other seed by logo, the fraction reproduced, the share of the summed family effect
    they carry; per family its best logo match in each other seed (None: none at q <
    ``q_threshold``). Figures are None for one seed (not measured)."""
    rows = consensus["families"]
    measured = consensus["measured"]
    per_seed = []
    for s in seeds:
        mine = [r for r in rows if r["seed"] == s.label]
        recurring = sum(bool(r["recurs_by_logo"]) for r in mine) if measured else None
        share = (consensus["by_logo"]["effect_reproduced_per_seed"][s.label]
                 if measured else None)  # fmt: skip
        per_seed.append({"seed": s.label, "families": len(mine), "recurring": recurring,
                         "fraction_reproduced": round(recurring / len(mine), 4)
                         if mine and measured else None,
                         "effect_reproduced": share})  # fmt: skip
    table = [{"seed": r["seed"], "family": r["family"], "consensus": r["consensus"],
              "nsites": r["nsites"], "name": r["name"], "effect": r["effect"],
              "in_every_seed": r["recurs_by_logo"],
              "matches": {other: m["logo"][0] if m["logo"] else None
                          for other, m in r["matches"].items()}}
             for r in rows]  # fmt: skip
    logo = consensus["by_logo"] or {}
    return {"q_threshold": q_threshold, "seeds": per_seed,
            "fraction_reproduced": logo.get("fraction_recurring"),
            "effect_reproduced": logo.get("effect_reproduced"), "table": table}  # fmt: skip


def family_stability(
    seeds: list[SeedFamilies] | list[tuple[str, list[ExportedMotif]]],
    *,
    q_threshold: float = STABILITY_Q,
    settings: ConsensusSettings | None = None,
) -> dict:
    """The stability table and the consensus (``consensus``) of ``seeds``: SeedFamilies, or
    (label, family representatives) pairs (no sites). ``q_threshold`` sets the consensus's
    unless ``settings`` are given."""
    seeds = [s if isinstance(s, SeedFamilies) else SeedFamilies(*s) for s in seeds]
    settings = settings or consensus_settings(q_threshold=q_threshold)
    consensus = consensus_families(seeds, settings)
    return {**pairwise_table(consensus, seeds, settings.q_threshold), "consensus": consensus}


def seed_labels(runs: list[Path]) -> list[str]:
    """``seed<N>`` from each run's config, else the folder's name; a repeated label: the
    run's path (and its place in ``runs`` where that repeats too)."""
    labels: list[str] = []
    for i, run in enumerate(runs):
        seed = _config(run).get("seed")
        label = f"seed{seed}" if seed is not None else Path(run).name
        label = str(run) if label in labels else label
        labels.append(f"{label} ({i + 1})" if label in labels else label)
    return labels


def seed_stability(
    runs: list[Path],
    out: Path | None = None,
    *,
    q_threshold: float = STABILITY_Q,
    settings: ConsensusSettings | None = None,
) -> dict:
    """:func:`family_stability` of exported runs (one setting, one seed each; checked);
    written as JSON to ``out`` when given."""
    runs = [Path(r) for r in runs]
    seeds = [read_seed(run, label) for run, label in zip(runs, seed_labels(runs))]
    check_one_setting(runs, [run_setting(run) for run in runs])
    result = {"runs": [str(r) for r in runs],
              **family_stability(seeds, q_threshold=q_threshold, settings=settings)}
    result = json.loads(json.dumps(result))  # what the file holds (tuples as lists)
    if out is not None:
        write_json_atomic(Path(out), result)
    return result
