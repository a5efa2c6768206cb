"""Names for discovered motifs: Tomtom (memelite) against a JASPAR collection from pyjaspar.

Statistics, as Tomtom reports them: a p-value per (motif, database motif) pair, E = p x the
number of database motifs, and q-values by Benjamini-Hochberg over each motif's matches to
the whole database (per query, as Tomtom does: strong matches of other motifs must not make
a weak one look significant). A motif is *named* only if its best match has q <
``q_threshold`` (0.05); otherwise it stays unnamed, whatever its nearest neighbour is. As a
control, every motif is also matched with its columns shuffled (same letters per column,
positions permuted; a seeded shuffle); the fraction of shuffled copies that would have been
named is the false-match rate.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..io import write_text_atomic
from .formats import ExportedMotif

DEFAULT_COLLECTION = {"release": "JASPAR2026", "collection": "CORE", "tax_group": "plants"}


@dataclass(frozen=True)
class DatabaseMotif:
    matrix_id: str
    name: str
    probs: np.ndarray  # (width, 4)


def load_jaspar_collection(
    release: str = "JASPAR2026", collection: str = "CORE", tax_group: str | None = "plants"
) -> list[DatabaseMotif]:
    """Every motif of a JASPAR collection bundled with pyjaspar (no network); read once a
    process (pyjaspar takes seconds a collection; naming and the families both use it)."""
    return list(_jaspar_collection(release, collection, tax_group))


@lru_cache(maxsize=4)
def _jaspar_collection(release: str, collection: str,
                       tax_group: str | None) -> tuple[DatabaseMotif, ...]:  # fmt: skip
    from pyjaspar import jaspardb

    try:
        db = jaspardb(release=release)
    except Exception as exc:  # pyjaspar raises plain Exceptions for unknown releases
        raise InputError(f"unknown JASPAR release {release!r}: {exc}") from None
    kwargs = {"collection": [collection]}
    if tax_group:
        kwargs["tax_group"] = [tax_group]
    records = db.fetch_motifs(**kwargs)
    out = []
    for r in records:
        counts = np.array([r.counts[b] for b in "ACGT"], dtype=float).T + 0.01
        out.append(DatabaseMotif(r.matrix_id, r.name, counts / counts.sum(1, keepdims=True)))
    if not out:
        raise InputError(f"JASPAR {release} {collection} {tax_group or ''}: no motifs")
    return tuple(out)


def benjamini_hochberg(p: np.ndarray) -> np.ndarray:
    """q-values of an array of p-values (any shape), monotone, in [0, 1]."""
    flat = np.asarray(p, dtype=float).ravel()
    n = len(flat)
    order = np.argsort(flat)
    ranked = flat[order] * n / np.arange(1, n + 1)
    q = np.minimum.accumulate(ranked[::-1])[::-1].clip(max=1.0)
    out = np.empty(n)
    out[order] = q
    return out.reshape(np.shape(p))


def shuffle_columns(probs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The motif with its positions (rows of ``(width, 4)``) in a random order."""
    return probs[rng.permutation(len(probs))]


@dataclass
class Match:
    query: str
    target_id: str
    target_name: str
    p_value: float
    e_value: float
    q_value: float
    offset: int
    overlap: int
    orientation: str


def _tomtom(queries: list[np.ndarray], targets: list[DatabaseMotif]):
    from memelite import tomtom

    p, _, offsets, overlaps, strands = tomtom(
        [q.T.astype(np.float64) for q in queries], [t.probs.T.astype(np.float64) for t in targets]
    )
    p = np.asarray(p, dtype=float)
    if not np.all((p > 0) & (p <= 1)):
        # p = 0 can only be numerical underflow; p > 1 or NaN would be a bug upstream.
        if np.any(~np.isfinite(p)) or np.any(p > 1):
            raise RuntimeError("Tomtom returned p-values outside (0, 1]")
        p = np.clip(p, np.finfo(float).tiny, 1.0)
    return p, np.asarray(offsets), np.asarray(overlaps), np.asarray(strands)


def name_motifs(
    motifs: list[ExportedMotif],
    targets: list[DatabaseMotif],
    *,
    q_threshold: float = 0.05,
    top: int = 5,
    seed: int = 0,
    decoys: list[DatabaseMotif] | None = None,
) -> dict:
    """Tomtom every motif (and a column-shuffled copy) against ``targets``.

    ``decoys``: motifs compared as well, so that Tomtom's null (built from the target
    columns) and the per-query Benjamini-Hochberg count see a database-sized set (a reference
    of a few dozen consensus motifs gives unreliable p-values), but that never name a motif:
    the best match and the name come from ``targets`` only.

    Returns ``{'matches': [Match...] (top per motif), 'best': {id: Match|None},
    'named': {id: 'MA... NAME' | None}, 'control': {...}}``.
    """
    if not motifs:
        return {"matches": [], "best": {}, "named": {}, "control": {"motifs": 0}}
    nameable = len(targets)
    targets = list(targets) + list(decoys or [])
    p, offsets, overlaps, strands = _tomtom([m.probs for m in motifs], targets)
    q = np.stack([benjamini_hochberg(row) for row in p])
    e = p * len(targets)
    matches, best, named = [], {}, {}
    for i, m in enumerate(motifs):
        order = np.argsort(p[i, :nameable])[:top]
        rows = [
            Match(
                m.id,
                targets[j].matrix_id,
                targets[j].name,
                float(p[i, j]),
                float(e[i, j]),
                float(q[i, j]),
                int(offsets[i, j]),
                int(overlaps[i, j]),
                "-" if int(strands[i, j]) else "+",
            )  # fmt: skip
            for j in order
        ]
        matches += rows
        best[m.id] = rows[0]
        named[m.id] = (
            f"{rows[0].target_id} {rows[0].target_name}" if rows[0].q_value < q_threshold else None
        )
    rng = np.random.default_rng(seed)
    shuffled = [shuffle_columns(m.probs, rng) for m in motifs]
    cp, *_ = _tomtom(shuffled, targets)
    cq = np.stack([benjamini_hochberg(row) for row in cp])[:, :nameable]
    false_named = int((cq.min(axis=1) < q_threshold).sum())
    control = {
        "motifs": len(motifs),
        "named_at_q": q_threshold,
        "false_matches": false_named,
        "false_match_rate": false_named / len(motifs),
        "best_q": [float(v) for v in cq.min(axis=1)],
    }
    return {"matches": matches, "best": best, "named": named, "control": control}


def tomtom_tsv(result: dict) -> str:
    """The matches as a TSV table (Tomtom's columns), with the best match per motif flagged."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter="\t", lineterminator="\n")
    writer.writerow(["Query_ID", "Target_ID", "Target_name", "Optimal_offset", "p-value",
                     "E-value", "q-value", "Overlap", "Orientation", "Best", "Named"])  # fmt: skip
    for m in result["matches"]:
        is_best = result["best"][m.query] is m
        writer.writerow([
            m.query, m.target_id, m.target_name, m.offset, f"{m.p_value:.3e}",
            f"{m.e_value:.3e}", f"{m.q_value:.3e}", m.overlap, m.orientation,
            int(is_best), int(is_best and result["named"][m.query] is not None),
        ])  # fmt: skip
    return buffer.getvalue()


def write_tomtom(path: Path, result: dict) -> None:
    write_text_atomic(Path(path), tomtom_tsv(result))


def jaspar_targets(config, jaspar: dict | None):
    """The JASPAR collection (a planted run's release unless the caller names one) and its
    motifs."""
    # A run that planted JASPAR motifs is named against the release it planted from.
    collection = dict(DEFAULT_COLLECTION)
    planted_release = getattr(config.data, "jaspar_release", None)
    if planted_release:
        collection["release"] = planted_release
    for key, value in (jaspar or {}).items():
        if value is not None or key == "tax_group":  # tax_group None: every group
            collection[key] = value
    targets = load_jaspar_collection(
        collection["release"], collection["collection"], collection["tax_group"]
    )
    return collection, targets


def match_dict(match) -> dict | None:
    """A Tomtom match as the plain dict motifs.json holds (None when there is none)."""
    if match is None:
        return None
    return {
        "target_id": match.target_id,
        "target_name": match.target_name,
        "p_value": match.p_value,
        "e_value": match.e_value,
        "q_value": match.q_value,
    }
