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
