"""Seed stability: which motif families of a run recur when it is trained with other seeds.

Each seed's exported family representatives (``RUN/motifs/families/motifs.meme``, made by
``export``) are matched against every other seed's by Tomtom (memelite; both strands, any
offset; the same padded null as the families, ``export/families.py``), q by
Benjamini-Hochberg over the other seed's families. A family *recurs* when it has a match at q
< ``q_threshold`` (0.01) in every other seed; the fraction reproduced is the share of a
seed's families that recur (per seed, and over all seeds' families together).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import yaml

from ..errors import InputError
from ..export.families import tomtom_between
from ..export.formats import ExportedMotif
from ..export.motif_summary import exported_families
from ..io import write_json_atomic
from ..rundir import config_path, motifs_dir

STABILITY_Q = 0.01  # the threshold: a family must recur unmistakably, not by chance


def read_run_families(run: Path) -> tuple[int | None, list[ExportedMotif]]:
    """(seed, family representatives) of an exported run (``export.motif_summary``); one-line
    errors naming the file. Each representative's ``effect`` is its family's effect on the
    prediction (None where the export measured none)."""
    run = Path(run)
    families = exported_families(motifs_dir(run))
    seed = None
    if config_path(run).is_file():
        seed = (yaml.safe_load(config_path(run).read_text()) or {}).get("seed")
    return seed, families


def family_stability(
    seeds: list[tuple[str, list[ExportedMotif]]], *, q_threshold: float = STABILITY_Q
) -> dict:
    """The stability table of ``seeds`` (label, family representatives), >= 2 of them."""
    if not 0 < q_threshold <= 1:
        raise InputError(f"stability q threshold must be in (0, 1], got {q_threshold}")
    if len(seeds) < 2:
        raise InputError(f"seed stability needs at least 2 runs, got {len(seeds)}")
    rows, per_seed = [], []
    for i, (label, families) in enumerate(seeds):
        matches: list[dict] = [{} for _ in families]
        for j, (other, targets) in enumerate(seeds):
            if i == j:
                continue
            if not families or not targets:
                for m in matches:
                    m[other] = None
                continue
            sim = tomtom_between([f.probs for f in families], [t.probs for t in targets])
            for k in range(len(families)):
                best = int(np.argmin(sim.q[k]))
                q = float(sim.q[k, best])
                matches[k][other] = ({"family": targets[best].id, "q_value": q,
                                      "strand": "-" if sim.reverse[k, best] else "+"}
                                     if q < q_threshold else None)  # fmt: skip
        recurring, effect, effect_recurring = 0, 0.0, 0.0
        for f, m in zip(families, matches):
            every = all(v is not None for v in m.values())
            recurring += every
            weight = max(0.0, f.effect or 0.0)
            effect += weight
            effect_recurring += weight * every
            rows.append({"seed": label, "family": f.id, "consensus": f.consensus,
                         "nsites": f.nsites, "name": f.name or None,
                         "effect": f.effect,
                         "in_every_seed": every, "matches": m})  # fmt: skip
        per_seed.append({"seed": label, "families": len(families), "recurring": recurring,
                         "fraction_reproduced": round(recurring / len(families), 4)
                         if families else None,
                         "effect_reproduced": round(effect_recurring / effect, 4)
                         if effect > 0 else None})  # fmt: skip
    total = sum(s["families"] for s in per_seed)
    weighted = [s["effect_reproduced"] for s in per_seed if s["effect_reproduced"] is not None]
    return {
        "q_threshold": q_threshold,
        "seeds": per_seed,
        "fraction_reproduced": round(sum(s["recurring"] for s in per_seed) / total, 4)
        if total else None,
        # The share of the summed family effect carried by families found in every seed
        # (the mean over seeds; None where no run measured effects).
        "effect_reproduced": round(float(np.mean(weighted)), 4) if weighted else None,
        "table": rows,
    }  # fmt: skip


def seed_stability(
    runs: list[Path], out: Path | None = None, *, q_threshold: float = STABILITY_Q
) -> dict:
    """:func:`family_stability` of exported runs (the same setting, one seed each); written
    as JSON to ``out`` when given."""
    seeds, labels = [], set()
    for run in runs:
        seed, families = read_run_families(run)
        label = f"seed{seed}" if seed is not None else Path(run).name
        if label in labels:
            label = str(run)
        labels.add(label)
        seeds.append((label, families))
    result = {"runs": [str(r) for r in runs], **family_stability(seeds, q_threshold=q_threshold)}
    if out is not None:
        write_json_atomic(Path(out), result)
    return result
