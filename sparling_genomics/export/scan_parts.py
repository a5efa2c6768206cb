"""A scattered scan's part files, ``OUT/parts/part-I-of-N.npz``: what each records of where it
came from, and the checks a gather makes before it reads any.

A part holds the sites of its pieces (``export.scan.plan_pieces``) and, in ``meta``: its own
index and the total (``part``, ``parts``), the ``chunk`` and ``precision`` it was scanned
with, the model's fingerprint (``model``: the digest of the run's final checkpoint,
``train/provenance.py``), the FASTA's sequence names and lengths (``genome``) and a content
fingerprint of the bases it scanned (``bases``: SHA-256 over its pieces' base codes, hashed
from the arrays the scan read, so the genome is not read twice).

A gather refuses, in one line naming the part file and what differs, a part that is missing,
not a part, in another part's place (copied or renamed: it records another index), scanned
with another chunk size or precision, by another model, or from another FASTA: other names
or lengths, or other bases under the same names and lengths (a hard-masked beside a
soft-masked assembly). The bases are checked by reading the gather's FASTA once, in windows,
after every cheaper check has passed.
"""

from __future__ import annotations

import json
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..genome.fasta import Genome
from ..genome.fingerprint import codes_digest
from ..io import atomic_path
from ..progress import Counter
from .scan import Piece, SiteTable, plan_pieces, scan_pieces
from .site_store import SiteStore

PARTS_DIR = "parts"  # OUT/parts/part-I-of-N.npz: a scattered scan's jobs
FIELDS = ("position", "channel", "strand", "score")
DTYPES = (np.int64, np.int16, np.int8, np.float32)
WINDOW = 1 << 22  # bases read at a time when a gather fingerprints its FASTA
SHOWN = 12  # hex digits of a fingerprint shown in a message


@dataclass(frozen=True)
class PartOrigin:
    """What every part of one scan shares: the model's fingerprint, the FASTA, the chunk size
    and the precision."""

    model: str
    genome: Genome
    chunk: int
    precision: str


def part_path(out: Path, part: int, parts: int) -> Path:
    """``OUT/parts/part-I-of-N.npz``: job ``part`` (1-based) of a scan scattered ``parts``
    ways."""
    return Path(out) / PARTS_DIR / f"part-{part:04d}-of-{parts:04d}.npz"


def genome_key(genome: Genome) -> str:
    """The sequences and lengths a part was scanned from, as text."""
    return json.dumps(list(genome.lengths.items()))


def bases_fingerprint(pieces: list[Piece], digests: dict[Piece, str]) -> str:
    """A part's content fingerprint: the digests of its pieces' bases, in the pieces' order."""
    return codes_digest(np.frombuffer(digests[p].encode(), np.uint8) for p in pieces)


def scan_part(model, origin: PartOrigin, out: Path, part: tuple[int, int], device) -> dict:
    """Scan job ``part = (i, n)`` of ``origin.genome`` and keep its sites and provenance in
    ``OUT/parts/`` (atomically); returns what the part holds, for the verb to print."""
    index, parts = part
    pieces = plan_pieces(origin.genome.lengths, parts, origin.chunk)[index - 1]
    digests: dict[Piece, str] = {}
    began = time.perf_counter()
    bases = sum(p.end - p.start for p in pieces)
    with Counter(f"scan part {index}/{parts}", total=bases, unit="bp") as counter:
        tables = scan_pieces(model, origin.genome, pieces, chunk=origin.chunk, device=device,
                             progress=counter.update, precision=origin.precision,
                             seen=lambda piece, codes: digests.__setitem__(
                                 piece, codes_digest([codes])))  # fmt: skip
    seconds = time.perf_counter() - began
    path = part_path(out, index, parts)
    path.parent.mkdir(parents=True, exist_ok=True)
    meta = {"part": index, "parts": parts, "chunk": origin.chunk, "precision": origin.precision,
            "model": origin.model, "genome": genome_key(origin.genome),
            "bases": bases_fingerprint(pieces, digests), "seconds": seconds}  # fmt: skip
    with atomic_path(path) as tmp, open(tmp, "wb") as handle:
        np.savez(handle, seqid=np.array([t.seqid for t in tables], dtype=str),
                 count=np.array([len(t) for t in tables], np.int64),
                 **{f: _joined(tables, f, d) for f, d in zip(FIELDS, DTYPES)},
                 meta=np.array(json.dumps(meta)))  # fmt: skip
    return {"part": index, "parts": parts, "pieces": len(pieces), "bases": int(bases),
            "sites": int(sum(len(t) for t in tables)), "seconds": round(seconds, 2),
            "model": origin.model, "file": str(path)}  # fmt: skip


def _joined(tables: list[SiteTable], field: str, dtype) -> np.ndarray:
    arrays = [getattr(t, field) for t in tables]
    return np.concatenate(arrays).astype(dtype) if arrays else np.zeros(0, dtype)


def check_parts(out: Path, parts: int, origin: PartOrigin) -> float:
    """Check the ``parts`` part files in ``OUT/parts/`` against ``origin`` (one-line
    :class:`InputError` for the first that does not belong; nothing is read of a part's
    sites); returns the seconds the jobs scanned for."""
    seconds, plan = 0.0, None
    metas = []
    for index in range(1, parts + 1):
        path = part_path(out, index, parts)
        meta = _read_meta(path, index, parts)
        _check_meta(path, meta, index, parts, origin)
        metas.append((path, meta))
        seconds += float(meta["seconds"])
    for index, (path, meta) in enumerate(metas, 1):
        plan = plan or plan_pieces(origin.genome.lengths, parts, origin.chunk)
        if meta["bases"] != _fasta_bases(origin.genome, plan[index - 1]):
            raise InputError(
                f"{path}: scanned from other bases than {origin.genome.path}'s under the same "
                f"sequence names and lengths ({_span(plan[index - 1])}; e.g. a hard-masked "
                "beside a soft-masked assembly); scan the parts again from this FASTA"
            )
    return seconds


def _read_meta(path: Path, index: int, parts: int) -> dict:
    if not path.is_file():
        raise InputError(f"{path}: missing; scan it first (scan --part {index}/{parts})")
    try:
        with np.load(path) as z:
            meta = json.loads(str(z["meta"]))
        if not isinstance(meta, dict):
            raise ValueError("meta is not a record")
    except (OSError, EOFError, ValueError, KeyError, zipfile.BadZipFile) as exc:
        raise InputError(f"{path}: not a scan part (unreadable: {type(exc).__name__}); scan "
                         f"it again (scan --part {index}/{parts})") from None  # fmt: skip
    return meta


def _check_meta(path: Path, meta: dict, index: int, parts: int, origin: PartOrigin) -> None:
    """The one-line error for a part whose record does not fit this gather, else nothing."""
    again = f"scan it again (scan --part {index}/{parts})"
    if (meta.get("part"), meta.get("parts")) != (index, parts):
        raise InputError(f"{path}: holds part {meta.get('part')} of {meta.get('parts')}, not "
                         f"{index} of {parts} (a part copied or renamed); {again}")
    if not meta.get("model") or not meta.get("bases"):
        raise InputError(f"{path}: records neither the model nor the bases it was scanned "
                         f"from (made before parts did); {again}")  # fmt: skip
    if meta.get("genome") != genome_key(origin.genome):
        raise InputError(f"{path}: scanned from a FASTA with other sequence names or lengths "
                         f"than {origin.genome.path}; scan the parts again from this FASTA")
    if meta.get("chunk") != origin.chunk:
        raise InputError(f"{path}: scanned with --chunk {meta.get('chunk')}, this gather has "
                         f"{origin.chunk}; give the same chunk")  # fmt: skip
    if meta.get("precision", "float32") != origin.precision:
        raise InputError(f"{path}: scanned with --precision {meta['precision']}, "
                         f"this gather has {origin.precision}; give the same precision")
    if meta["model"] != origin.model:
        raise InputError(f"{path}: scanned by another model (fingerprint "
                         f"{meta['model'][:SHOWN]}, this run's {origin.model[:SHOWN]}); "
                         f"{again} with this run")  # fmt: skip


def _fasta_bases(genome: Genome, pieces: list[Piece]) -> str:
    """:func:`bases_fingerprint` of ``pieces`` as ``genome`` holds them now, read in windows."""

    def windows(piece: Piece):
        for lo in range(piece.start, piece.end, WINDOW):
            yield genome.fetch(piece.seqid, lo, min(lo + WINDOW, piece.end))

    return bases_fingerprint(pieces, {p: codes_digest(windows(p)) for p in pieces})


def _span(pieces: list[Piece]) -> str:
    """The stretch a part covers, for a message: 'chr1:1-150000' or 'chr1:1-... to chr3:...'."""
    first, last = pieces[0], pieces[-1]
    text = f"{first.seqid}:{first.start + 1}-{first.end}"
    return text if len(pieces) == 1 else f"{text} to {last.seqid}:{last.start + 1}-{last.end}"


def gather_parts(out: Path, parts: int, store: SiteStore) -> None:
    """The sites of the (checked) ``parts`` part files into ``store``, one part in memory at
    a time."""
    for index in range(1, parts + 1):
        with np.load(part_path(out, index, parts)) as z:
            arrays = {k: z[k] for k in FIELDS}
            ends = np.cumsum(z["count"])
            for seqid, end, count in zip(z["seqid"], ends, z["count"]):
                pick = slice(int(end - count), int(end))
                store.add(SiteTable(str(seqid), *(arrays[k][pick] for k in FIELDS)))
