"""UCSC ``.2bit`` files from a genome: the sequence an assembly hub (and igv.js) shows.

No package on PyPI writes 2bit (py2bit, twobitreader and pytwobit only read it) and kent's
``faToTwoBit`` is not a Python dependency, so the format is written here with numpy:
a 16-byte header (signature ``0x1A412743``, version, sequence count, 0), an index (name
length, name, offset of the record), then one record per sequence: its length, its N blocks
(starts, sizes), its mask blocks, a reserved 0 and the bases packed 4 to a byte (T=0, C=1,
A=2, G=3, first base in the high bits; N is packed as T and restored from the N blocks).
Everything is little-endian (readers byte-swap by the signature). Version 0 has 32-bit
offsets; a file that would pass 4 GiB is written as version 1 (64-bit index offsets, as
kent's ``faToTwoBit -long``). The tests read our files with Biopython's independent 2bit
reader (``Bio.SeqIO`` format ``twobit``, version 0 only).

What a 2bit cannot keep: IUPAC ambiguity codes become N (the genome reader already reads
them as N), and there are no mask blocks because :class:`~sparling_genomics.genome.fasta.
Genome` upper-cases soft-masked bases.

Memory: each sequence is read ``WINDOW`` bases at a time; its packed bases (a quarter of its
length) are held until its N blocks, which precede them in the file, are known.
"""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..io import atomic_path

SIGNATURE = 0x1A412743
WINDOW = 1 << 22  # bases read at a time; a multiple of 4, so windows pack to whole bytes
_TO_TWOBIT = np.array([2, 1, 3, 0, 0], dtype=np.uint8)  # our codes A, C, G, T, N -> 2bit
_V0_LIMIT = 0xFFFFFFFF - (1 << 28)  # keep 256 MiB of room for N blocks under a 32-bit offset


def write_twobit(path: Path, genome) -> Path:
    """Write every sequence of ``genome`` (a ``Genome``: ``lengths`` and ``fetch``), in its
    order, as a 2bit file at ``path`` (atomically); returns ``path``."""
    path = Path(path)
    names = list(genome.lengths)
    encoded = [name.encode("utf-8") for name in names]
    for name, raw in zip(names, encoded):
        if not 0 < len(raw) <= 255:
            raise InputError(f"{name[:60]!r}: a 2bit file holds names of 1-255 bytes only")
        if genome.lengths[name] > 0xFFFFFFFF:
            raise InputError(f"{name}: {genome.lengths[name]:,} bases is more than a 2bit "
                             "record holds (4 Gb)")  # fmt: skip
    bound = 16 + sum(len(raw) + 9 for raw in encoded)
    bound += sum(16 + (length + 3) // 4 for length in genome.lengths.values())
    version = 0 if bound <= _V0_LIMIT else 1
    offset_format = "<I" if version == 0 else "<Q"
    with atomic_path(path) as tmp, open(tmp, "wb") as handle:
        handle.write(struct.pack("<4I", SIGNATURE, version, len(names), 0))
        index_at = handle.tell()
        placeholder = struct.pack(offset_format, 0)
        for raw in encoded:
            handle.write(bytes([len(raw)]) + raw + placeholder)
        offsets = []
        for name in names:
            offsets.append(handle.tell())
            starts, sizes, packed = _pack(genome, name)
            handle.write(struct.pack("<2I", genome.lengths[name], len(starts)))
            handle.write(starts.astype("<u4").tobytes() + sizes.astype("<u4").tobytes())
            handle.write(struct.pack("<2I", 0, 0))  # no mask blocks; reserved
            for piece in packed:
                handle.write(piece)
        if version == 0 and offsets and offsets[-1] > 0xFFFFFFFF:
            raise InputError(f"{path}: more N blocks than a 2bit file's 32-bit offsets allow")
        handle.seek(index_at)
        for raw, offset in zip(encoded, offsets):
            handle.write(bytes([len(raw)]) + raw + struct.pack(offset_format, offset))
    return path


def _pack(genome, name: str) -> tuple[np.ndarray, np.ndarray, list[bytes]]:
    """(N-block starts, N-block sizes, packed bases in pieces) of one sequence."""
    length = genome.lengths[name]
    starts: list[np.ndarray] = []
    ends: list[np.ndarray] = []
    packed: list[bytes] = []
    for lo in range(0, length, WINDOW):
        codes = genome.fetch(name, lo, min(lo + WINDOW, length))
        run_starts, run_ends = n_runs(codes)
        run_starts, run_ends = run_starts + lo, run_ends + lo
        if len(run_starts) and ends and len(ends[-1]) and ends[-1][-1] == run_starts[0]:
            ends[-1] = ends[-1].copy()
            ends[-1][-1] = run_ends[0]  # a run of N across the window border is one block
            run_starts, run_ends = run_starts[1:], run_ends[1:]
        starts.append(run_starts)
        ends.append(run_ends)
        packed.append(pack_bases(codes))
    start = np.concatenate(starts) if starts else np.zeros(0, np.int64)
    end = np.concatenate(ends) if ends else np.zeros(0, np.int64)
    return start, end - start, packed


def n_runs(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(starts, ends) of the runs of N (any code but A/C/G/T) in ``codes``, half-open."""
    is_n = (np.asarray(codes) > 3).astype(np.int8)
    step = np.diff(np.concatenate([[0], is_n, [0]]).astype(np.int8))
    return np.flatnonzero(step == 1).astype(np.int64), np.flatnonzero(step == -1).astype(np.int64)


def pack_bases(codes: np.ndarray) -> bytes:
    """Codes packed 4 bases a byte in 2bit's order (the last byte padded with T)."""
    values = _TO_TWOBIT[np.minimum(np.asarray(codes, dtype=np.uint8), 4)]
    pad = (-len(values)) % 4
    if pad:
        values = np.concatenate([values, np.zeros(pad, np.uint8)])
    quads = values.reshape(-1, 4)
    return (quads[:, 0] << 6 | quads[:, 1] << 4 | quads[:, 2] << 2 | quads[:, 3]).tobytes()
