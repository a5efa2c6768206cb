"""JASPAR motifs from the SQLite databases that ``pyjaspar`` ships (no network)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ConfigError
from .pwm import information_content


@dataclass(frozen=True)
class Motif:
    """A position probability matrix ``pwm`` of shape (4, W), rows A, C, G, T."""

    matrix_id: str
    name: str
    pwm: np.ndarray

    @property
    def width(self) -> int:
        return self.pwm.shape[1]

    @property
    def consensus(self) -> str:
        return "".join("ACGT"[i] for i in self.pwm.argmax(0))

    def information(self) -> np.ndarray:
        """Information content (bits) of each column."""
        return information_content(self.pwm.T)


def load_jaspar_motifs(
    matrix_ids: list[str], release: str = "JASPAR2024", pseudocount: float = 0.01
) -> list[Motif]:
    """Fetch motifs by ID from a bundled JASPAR release; counts become probabilities."""
    from pyjaspar import jaspardb

    try:
        db = jaspardb(release=release)
    except Exception as exc:  # pyjaspar raises plain Exceptions for unknown releases
        raise ConfigError(f"unknown JASPAR release {release!r}: {exc}") from None
    motifs = []
    for matrix_id in matrix_ids:
        record = db.fetch_motif_by_id(matrix_id)
        if record is None:
            raise ConfigError(f"JASPAR motif {matrix_id!r} is not in {release}")
        counts = np.array([record.counts[b] for b in "ACGT"], dtype=np.float64)
        counts = counts + pseudocount * counts.sum(0, keepdims=True).clip(min=1)
        motifs.append(Motif(matrix_id, record.name, counts / counts.sum(0, keepdims=True)))
    return motifs


def draw_motif_set(
    count: int,
    *,
    seed: int,
    release: str = "JASPAR2024",
    tax_group: str = "plants",
    min_width: int = 8,
    max_width: int = 16,
    min_bits: float = 8.0,
) -> list[str]:
    """``count`` JASPAR matrix IDs (latest versions, CORE, ``tax_group``) drawn at random with
    ``seed``, one per TF family and structural class (JASPAR's ``tf_family`` labels split some
    families, e.g. two MYB labels, which the class joins; motifs without either are not
    drawn), ``min_width`` to
    ``max_width`` columns and at least ``min_bits`` bits of information: a motif set a user
    could plant (``data.motifs``) that no preset was tuned on."""
    from pyjaspar import jaspardb

    try:
        db = jaspardb(release=release)
    except Exception as exc:  # pyjaspar raises plain Exceptions for unknown releases
        raise ConfigError(f"unknown JASPAR release {release!r}: {exc}") from None
    records = db.fetch_motifs(collection="CORE", tax_group=[tax_group], all_versions=False)
    pool = []
    for record in sorted(records, key=lambda r: r.matrix_id):
        families = tuple(record.tf_family or ()) + tuple(record.tf_class or ())
        sized = min_width <= record.length <= max_width
        if not record.tf_family or not record.tf_class or not sized:
            continue
        counts = np.array([record.counts[b] for b in "ACGT"], dtype=np.float64)
        if information_content((counts / counts.sum(0, keepdims=True)).T).sum() < min_bits:
            continue
        pool.append((record.matrix_id, families))
    rng = np.random.default_rng(seed)
    chosen: list[str] = []
    used: set[str] = set()
    for i in rng.permutation(len(pool)):
        matrix_id, families = pool[i]
        if used.isdisjoint(families):
            chosen.append(matrix_id)
            used.update(families)
        if len(chosen) == count:
            return chosen
    raise ConfigError(
        f"{release} {tax_group}: only {len(chosen)} motifs of distinct families with "
        f"{min_width}-{max_width} columns, not {count}"
    )
