"""A FASTA's ``.fai`` index, checked against the file it indexes, and reading bases through it.

pyfaidx (and samtools) rebuild an index only when the FASTA is newer than it. A FASTA replaced
at the same path by a file with an older modification time (``wget -N``, ``cp -p``,
``rsync -a``, ``tar x`` keep the source's) leaves a stale index that reads the wrong bases,
fewer sequences or past a record's end. So every index is checked against the file, whatever
the times say, before anything is read through it: each record's header line (``>`` and its
name) sits just before the record's first base, its first line ends where the index says,
and the bytes between one record's last base and the next header (or the end of the file)
are line ends only -- which pins every record's length, the number of records and the file's
size. A few bytes read per record; nothing of the sequences.

Bases are read through the index from a memory map (whole lines viewed as rows, the line-end
columns cut off), without pyfaidx's string slicing and upper-casing.
"""

from __future__ import annotations

import mmap
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import InputError

_GAP_LIMIT = 1 << 16  # more line-end bytes than this between records: not this file's index


@dataclass(frozen=True)
class FaiRecord:
    """One line of a ``.fai``: a sequence's name, bases, first base's byte offset, bases a
    line and bytes a line (with its line end)."""

    name: str
    length: int
    offset: int
    line_bases: int
    line_bytes: int

    def byte_of(self, base: int) -> int:
        """The file offset of base ``base`` (0-based) of this record."""
        return self.offset + base // self.line_bases * self.line_bytes + base % self.line_bases

    def end(self) -> int:
        """The file offset just past this record's last base (its offset when it is empty)."""
        return self.byte_of(self.length - 1) + 1 if self.length else self.offset


def fai_path(fasta: Path) -> Path:
    """``FASTA.fai``, where samtools and pyfaidx keep a FASTA's index."""
    return Path(f"{fasta}.fai")


def read_fai(path: Path) -> list[FaiRecord] | None:
    """The records of the index file ``path``; None when it is not a readable ``.fai``."""
    try:
        lines = Path(path).read_text().splitlines()
        rows = [line.split("\t") for line in lines if line]
        records = [FaiRecord(r[0], int(r[1]), int(r[2]), int(r[3]), int(r[4])) for r in rows]
    except (OSError, UnicodeDecodeError, ValueError, IndexError):
        return None
    bad = any(r.length < 0 or r.offset < 1 or (r.length and not 0 < r.line_bases < r.line_bytes)
              for r in records)  # fmt: skip
    return None if bad or not records else records


def index_mismatch(fasta: Path, records: list[FaiRecord] | None) -> str | None:
    """Why ``records`` do not index the file ``fasta`` as it is now (one clause naming the
    first record that does not fit), or None when they do."""
    if records is None:
        return "not a readable index"
    with open(fasta, "rb") as handle:
        size = handle.seek(0, 2)
        if size == 0:
            return "the FASTA is empty"
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            last_end = 0
            for i, record in enumerate(records):
                end = record.end()
                if end > size:
                    return (f"{record.name!r} would end at byte {end:,}, past the end of the "
                            f"file ({size:,} bytes)")  # fmt: skip
                head = data.rfind(b"\n", 0, record.offset - 1) + 1
                words = data[head : record.offset].split()
                if (data[head : head + 1] != b">" or words[:1] != [b">" + record.name.encode()]
                        or data[record.offset - 1 : record.offset] != b"\n"):  # fmt: skip
                    return f"no header '>{record.name}' where the index puts it (record {i + 1})"
                wrap = record.offset + record.line_bases
                if record.length > record.line_bases and data[wrap : wrap + 1] not in b"\r\n":
                    return f"{record.name!r} has no line end where the index says"
                if i and not _line_ends(data, last_end, head):
                    return f"{records[i - 1].name!r} does not end where the index says"
                last_end = end
            if not _line_ends(data, last_end, size):
                return (f"the file goes on after {records[-1].name!r}, the index's last "
                        f"of {len(records)} sequences")  # fmt: skip
    return None


def _line_ends(data, start: int, stop: int) -> bool:
    """Whether bytes [start, stop) of ``data`` are line ends only (blank lines included)."""
    return 0 <= stop - start <= _GAP_LIMIT and not data[start:stop].strip(b"\r\n")


def drop_stale_index(fasta: Path) -> None:
    """Remove ``FASTA.fai`` when it does not index ``fasta`` as it is now (its builder then
    makes a new one); a one-line :class:`InputError` naming it and what differs when it cannot
    be removed (a folder we may not write), since every tool beside us would read it too."""
    fai = fai_path(fasta)
    if not fai.is_file():
        return
    reason = index_mismatch(fasta, read_fai(fai))
    if reason is None:
        return
    try:
        fai.unlink()
    except OSError as exc:
        raise InputError(f"{fai}: stale index of {fasta} ({reason}), and it cannot be rebuilt "
                         f"here ({exc.strerror}); delete it or run `samtools faidx "
                         f"{fasta}`") from None  # fmt: skip


class IndexedFasta:
    """Bases of a FASTA read through its checked ``.fai``, from a memory map."""

    def __init__(self, fasta: Path, records: list[FaiRecord]) -> None:
        self.path = Path(fasta)
        self.records = {r.name: r for r in records}
        with open(self.path, "rb") as handle:
            self._data = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)

    def raw(self, name: str, start: int, end: int) -> np.ndarray:
        """The bytes of bases [start, end) of ``name`` (0 <= start <= end <= its length), line
        ends dropped: whole lines viewed as rows, their line-end columns cut off."""
        record = self.records[name]
        if end <= start:
            return np.zeros(0, np.uint8)
        first, last = start // record.line_bases, (end - 1) // record.line_bases
        begin = record.offset + first * record.line_bytes
        rows = last - first + 1
        count = min(rows * record.line_bytes, len(self._data) - begin)
        lines = np.frombuffer(self._data, np.uint8, count, begin)
        if count < rows * record.line_bytes:  # the file's last line, without its line end
            lines = np.concatenate([lines, np.zeros(rows * record.line_bytes - count, np.uint8)])
        bases = lines.reshape(rows, record.line_bytes)[:, : record.line_bases].reshape(-1)
        skip = start - first * record.line_bases
        return bases[skip : skip + end - start]
