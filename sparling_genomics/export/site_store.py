"""Site tables spilled to disk as they are scanned, read back one sequence at a time.

A genome scan finds about one site per 9 bases (10.9M sites in 100 Mb, ~15 bytes each): held
in memory until the tracks are written, the tables made a scan's peak memory grow with the
genome (1.35 GB at 100 Mb, 2.75 GB at 1 Gb; BENCHMARKS.md "Scale"). A :class:`SiteStore`
takes each piece's table as soon as it is scanned, appends its four arrays to four flat files
and keeps only an index (sequence, offset, count); the track writers then read one sequence's
sites at a time, so memory holds one sequence's sites, not the genome's.

Tables are read back in the genome's (FASTA) order whatever order they were scanned in (short
sequences are scanned in packs), and the pieces of one sequence (a scan scattered over jobs
cuts long sequences) are joined in the order they were added. Written by hand rather than
with HDF5 or zarr: four appended binary files and ``np.fromfile`` are all it needs, and they
are written and read at disk speed without a chunking layout to tune.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from .scan import SiteTable, join_tables

FIELDS = (("position", np.int64), ("channel", np.int16), ("strand", np.int8),
          ("score", np.float32))  # fmt: skip


class SiteStore:
    """Disk-backed site tables of one scan, in a folder of their own (removed by
    :meth:`close`; a folder left by a killed scan is replaced when the next one opens)."""

    def __init__(self, folder: Path, order: list[str]) -> None:
        self.folder = Path(folder)
        if self.folder.exists():
            shutil.rmtree(self.folder)
        self.folder.mkdir(parents=True)
        self.rank = {seqid: i for i, seqid in enumerate(order)}
        self.index: dict[str, list[tuple[int, int]]] = {}  # seqid -> [(offset, count)]
        self.sites = 0
        # Kept open while the scan appends (closed by close()): not a with-block.
        self._files = {name: open(self.folder / f"{name}.bin", "wb")  # noqa: SIM115
                       for name, _ in FIELDS}  # fmt: skip

    def add(self, table: SiteTable) -> None:
        """Append one piece's sites (after any earlier piece of the same sequence)."""
        for name, dtype in FIELDS:
            self._files[name].write(np.ascontiguousarray(getattr(table, name), dtype).tobytes())
        self.index.setdefault(table.seqid, []).append((self.sites, len(table)))
        self.sites += len(table)

    def __len__(self) -> int:
        """Sequences with a table (with or without sites)."""
        return len(self.index)

    def __iter__(self) -> Iterator[SiteTable]:
        """One table per sequence, in the genome's order, read from disk."""
        for handle in self._files.values():
            handle.flush()
        for seqid in sorted(self.index, key=lambda s: self.rank.get(s, len(self.rank))):
            pieces = [self._read(seqid, offset, count) for offset, count in self.index[seqid]]
            yield pieces[0] if len(pieces) == 1 else join_tables(seqid, pieces)

    def _read(self, seqid: str, offset: int, count: int) -> SiteTable:
        arrays = [np.fromfile(self.folder / f"{name}.bin", dtype=dtype, count=count,
                              offset=offset * np.dtype(dtype).itemsize)
                  for name, dtype in FIELDS]  # fmt: skip
        return SiteTable(seqid, *arrays)

    def close(self) -> None:
        for handle in self._files.values():
            handle.close()
        shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> SiteStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
