"""Motif files: MEME minimal, JASPAR, TRANSFAC and HOMER.

JASPAR and TRANSFAC are written by Biopython (``Bio.motifs``). MEME and HOMER have their own
small writers because Biopython cannot write either, and ``memelite.io.write_meme`` always
writes a uniform background and ``nsites= 1``; ours writes the background measured on the data
and each motif's real site count, with single spaces so that Biopython's ``minimal`` reader
and ``memelite.io.read_meme`` both read it back. A discovered motif has no E-value, so its
``letter-probability matrix`` line has no ``E=`` (optional in MEME's minimal format; readers
take 0); older files with ``E= 0`` still read.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..genome.pwm import consensus
from ..genome.sequence import ALPHABET
from ..io import require_file, write_text_atomic


@dataclass
class ExportedMotif:
    """One motif: probabilities ``(width, 4)`` (A, C, G, T), its site count and names."""

    id: str
    probs: np.ndarray
    nsites: int
    name: str = ""  # alt name: a significant JASPAR match, else the consensus
    channel: int = -1
    offset: int = 0  # first position kept by trimming, within the channel's site window
    family: str = ""  # the id of its motif family (export/families.py), once clustered
    evalue: float | None = None  # MEME's E=, only where a statistic gives one
    effect: float | None = None  # a family's effect on the prediction (evaluate.family_effect)
    group: str = ""  # its family's consensus family across seeds (export/consensus.py), if any

    @property
    def consensus(self) -> str:
        return consensus(self.probs)

    @property
    def width(self) -> int:
        return int(self.probs.shape[0])


def _check_unique(motifs: list[ExportedMotif]) -> None:
    ids = [m.id for m in motifs]
    if len(set(ids)) != len(ids):
        raise InputError(f"motif ids must be unique, got {ids}")


def meme_text(motifs: list[ExportedMotif], background: np.ndarray | None = None) -> str:
    """MEME minimal format (version 4), both strands, with a background line; ``E=`` only for
    a motif that carries an E-value (MEME allows leaving it out; "E= 0" would claim one)."""
    _check_unique(motifs)
    bg = np.full(4, 0.25) if background is None else np.asarray(background, dtype=float)
    bg = bg / bg.sum()
    lines = [
        "MEME version 4",
        "",
        f"ALPHABET= {ALPHABET}",
        "",
        "strands: + -",
        "",
        "Background letter frequencies",
        " ".join(f"{b} {p:.6f}" for b, p in zip(ALPHABET, bg)),
        "",
    ]
    for m in motifs:
        name = (m.name or m.consensus).replace(" ", "_")
        stats = f"alength= 4 w= {m.width} nsites= {int(m.nsites)}"
        if m.evalue is not None:
            stats += f" E= {m.evalue:.1e}"
        lines += [f"MOTIF {m.id} {name}", f"letter-probability matrix: {stats}"]
        lines += [" ".join(f"{p:.6f}" for p in row / row.sum()) for row in m.probs]
        lines.append("")
    return "\n".join(lines)


def _bio_motif(m: ExportedMotif):
    from Bio import motifs as bio_motifs

    counts = m.probs * max(int(m.nsites), 1)
    motif = bio_motifs.Motif(
        alphabet=ALPHABET, counts={b: counts[:, i].tolist() for i, b in enumerate(ALPHABET)}
    )
    motif.matrix_id = m.id
    motif.name = (m.name or m.consensus).replace(" ", "_")
    return motif


def jaspar_text(motifs: list[ExportedMotif]) -> str:
    """JASPAR PFM format (counts = probabilities x sites), via Biopython."""
    from Bio import motifs as bio_motifs

    _check_unique(motifs)
    return bio_motifs.write([_bio_motif(m) for m in motifs], "jaspar")


def transfac_text(motifs: list[ExportedMotif]) -> str:
    """TRANSFAC format, via Biopython."""
    from Bio import motifs as bio_motifs

    _check_unique(motifs)
    return bio_motifs.write([_bio_motif(m) for m in motifs], "transfac")


def homer_threshold(probs: np.ndarray, fraction: float = 0.6) -> float:
    """A HOMER detection threshold: ``fraction`` of the best possible log-odds score
    (natural log against a uniform background, as HOMER scores)."""
    p = np.clip(probs, 1e-3, 1.0)
    best = float(np.log(p.max(axis=1) / 0.25).sum())
    return round(fraction * best, 3)


def homer_text(motifs: list[ExportedMotif], fraction: float = 0.6) -> str:
    """HOMER ``.motif``: ``>consensus<TAB>name<TAB>log-odds threshold`` then A C G T rows."""
    _check_unique(motifs)
    lines = []
    for m in motifs:
        name = f"{m.id}/{(m.name or m.consensus).replace(' ', '_')}"
        lines.append(f">{m.consensus.upper()}\t{name}\t{homer_threshold(m.probs, fraction)}")
        lines += ["\t".join(f"{p:.4f}" for p in row / row.sum()) for row in m.probs]
    return "\n".join(lines) + "\n"


def write_motif_files(
    folder: Path, motifs: list[ExportedMotif], background: np.ndarray | None = None
) -> dict[str, Path]:
    """``motifs.meme``, ``.jaspar``, ``.transfac``, ``.homer`` in ``folder`` (atomic)."""
    folder = Path(folder)
    paths = {
        "meme": folder / "motifs.meme",
        "jaspar": folder / "motifs.jaspar",
        "transfac": folder / "motifs.transfac",
        "homer": folder / "motifs.homer",
    }
    texts = {
        "meme": meme_text(motifs, background),
        "jaspar": jaspar_text(motifs),
        "transfac": transfac_text(motifs),
        "homer": homer_text(motifs),
    }
    for key, path in paths.items():
        write_text_atomic(path, texts[key])
    return paths


def read_meme_motifs(path: Path) -> dict[str, np.ndarray]:
    """Motifs of a MEME file as ``{'id alt': (width, 4) probabilities}``; one-line errors."""
    from memelite.io import read_meme

    path = Path(path)
    require_file(path, "motif file")
    try:
        found = read_meme(str(path))
    except (ValueError, AttributeError, IndexError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: not a readable MEME motif file ({exc})"[:300]) from None
    if not found:
        raise InputError(f"{path}: no motifs (expected MEME format with MOTIF lines)")
    out = {}
    for key, pwm in found.items():
        probs = np.asarray(pwm, dtype=float).T
        if (
            not np.all(np.isfinite(probs))
            or np.any(probs < 0)
            or not np.allclose(probs.sum(axis=1), 1.0, atol=0.02)
        ):
            raise InputError(f"{path}: motif {key!r} rows are not probabilities summing to 1")
        out[key] = probs
    return out
