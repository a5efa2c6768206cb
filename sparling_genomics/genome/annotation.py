"""GFF3 (and GTF) annotation -> protein-coding transcripts with exons and CDS.

A small streaming parser rather than ``gffutils``: gffutils first builds an SQLite database
of the whole file (longer than the 2-minute budget of a dataset build on a chromosome), and
we need only gene -> mRNA -> exon/CDS links plus the *line number* of every feature, so that
bad input is reported as ``file:line: what is wrong``. Coordinates come out 0-based,
half-open (GFF is 1-based, inclusive).

Protein-coding transcripts are features of type ``mRNA`` (and ``transcript`` features whose
``transcript_biotype``/``biotype`` is ``protein_coding``) whose parent gene, when it states a
biotype, is protein-coding. Exons and CDS lines attach to their ``Parent``; features of other
types are counted as skipped. Every line's score, strand and phase columns are checked against
their domains whatever its type (a value outside them is a shifted or broken line).

Memory stays small on a large genome (a 1.1 GB GFF3 of 2.4M features at the 1 Gb scale
genome): exon and CDS lines wait for their transcripts in compact arrays (:class:`_Parts`,
~33 bytes a line instead of a ~170-byte tuple), and the IDs of leaf features (exons, CDS,
introns, UTRs), which nothing is the parent of, are not kept; a Parent that names none of the
kept IDs is looked up in the file again before it is called undefined.
"""

from __future__ import annotations

import re
from array import array
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote

from ..errors import InputError
from ..io import READ_ERRORS, open_text, require_file
from .chromosomes import SequenceNames

CODING_TYPES = {"mRNA"}
# Features nothing is the parent of: their IDs are not kept (a Parent naming one is found by
# a second look at the file, :func:`_ids_in_file`).
LEAF_TYPES = {"exon", "CDS", "intron", "five_prime_UTR", "three_prime_UTR", "start_codon",
              "stop_codon"}  # fmt: skip
BIOTYPE_KEYS = ("gene_biotype", "biotype", "transcript_biotype", "gene_type")


@dataclass
class Transcript:
    """One transcript; intervals are 0-based half-open genome coordinates, sorted."""

    id: str
    gene: str
    seqid: str
    strand: str
    start: int
    end: int
    line: int
    exons: list[tuple[int, int]] = field(default_factory=list)
    cds: list[tuple[int, int]] = field(default_factory=list)

    @property
    def exon_length(self) -> int:
        return sum(e - s for s, e in self.exons)


@dataclass
class Annotation:
    """Protein-coding transcripts by gene, plus what was skipped and why."""

    path: Path
    transcripts: dict[str, Transcript]
    genes: dict[str, list[str]]
    skipped: Counter
    format: str = "gff3"  # or "gtf" (CDS lines exclude the stop codon)

    def selected(self, mode: str = "longest") -> list[Transcript]:
        """Transcripts with exons: the longest (by exon length) per gene, or ``all``."""
        if mode not in ("longest", "all"):
            raise InputError(f"transcript selection must be 'longest' or 'all', got {mode!r}")
        out = []
        for ids in self.genes.values():
            with_exons = [self.transcripts[t] for t in ids if self.transcripts[t].exons]
            if not with_exons:
                continue
            if mode == "all":
                out.extend(with_exons)
            else:
                out.append(max(with_exons, key=lambda t: t.exon_length))  # first on ties
        return sorted(out, key=lambda t: (t.seqid, t.start, t.end, t.id))


def _attributes_gff3(text: str) -> dict[str, str]:
    out = {}
    for part in text.strip().strip(";").split(";"):
        if "=" in part:
            key, _, value = part.partition("=")
            out[key.strip()] = unquote(value.strip())
    return out


def _attributes_gtf(text: str) -> dict[str, str]:
    out = {}
    for part in text.strip().strip(";").split(";"):
        part = part.strip()
        if not part:
            continue
        key, _, value = part.partition(" ")
        out.setdefault(key, value.strip().strip('"'))
    return out


def annotation_format(path: Path) -> str:
    """``gtf`` or ``gff3``, from the attribute column of the first feature line (not the
    file name: GTF files named ``.gff`` are common)."""
    with open_text(path) as handle:
        for number, raw in enumerate(handle):
            if number > 10_000 or raw.startswith("##FASTA"):
                break
            if raw.startswith("#") or not raw.strip():
                continue
            cols = raw.rstrip("\n\r").split("\t")
            if len(cols) == 9:
                return "gtf" if _GTF_ATTRIBUTE.search(cols[8]) else "gff3"
    return "gff3"


_GTF_ATTRIBUTE = re.compile(r'(^|;)\s*[A-Za-z_]\w*\s+"')


def read_annotation(
    path: Path, lengths: SequenceNames | dict[str, int] | None = None
) -> Annotation:
    """Parse a GFF3 or GTF file (gzip allowed; the format is sniffed) into protein-coding
    transcripts. Lines may come in any order; a ``##FASTA`` section ends the features.

    ``lengths`` (FASTA sequence name -> length, or :class:`SequenceNames` with aliases)
    turns on the checks that every feature lies on a known sequence and inside it; seqids
    are then reported under the FASTA's names.
    """
    path = Path(path)
    require_file(path, "annotation file")
    names = SequenceNames.of(lengths) if lengths is not None else None
    try:
        gtf = annotation_format(path) == "gtf"
    except READ_ERRORS as exc:
        raise InputError(f"{path}: cannot read annotation ({exc})"[:300]) from None
    genes_biotype: dict[str, str | None] = {}
    transcripts: dict[str, Transcript] = {}
    parts = _Parts()  # (kind, parent, start, end, line) of each exon and CDS line
    all_ids: set[str] = set()
    skipped: Counter = Counter()
    n_features = 0
    try:
        handle = open_text(path)
        with handle:
            for number, raw in enumerate(handle, start=1):
                if raw.startswith("##FASTA"):
                    break
                if not raw.strip() or raw.startswith("#"):
                    continue
                cols = raw.rstrip("\n\r").split("\t")
                if len(cols) != 9:
                    raise InputError(
                        f"{path}:{number}: expected 9 tab-separated columns, got {len(cols)}"
                    )
                seqid, _, kind, start_s, end_s, score, strand, phase, attr_text = cols
                _check_columns(f"{path}:{number}", score, strand, phase)
                try:
                    start, end = int(start_s) - 1, int(end_s)
                except ValueError:
                    raise InputError(
                        f"{path}:{number}: start/end must be integers, got {start_s!r}, {end_s!r}"
                    ) from None
                if start < 0 or end <= start:
                    raise InputError(
                        f"{path}:{number}: bad coordinates {start_s}..{end_s} "
                        "(1-based, start <= end)"
                    )
                if names is not None:
                    seqid = names.locate(f"{path}:{number}", path, seqid, end, feature=kind)
                    if seqid is None:
                        continue  # a sequence the FASTA lacks, skipped on request
                    cols[0] = seqid
                n_features += 1
                attrs = _attributes_gtf(attr_text) if gtf else _attributes_gff3(attr_text)
                if gtf:
                    _gtf_feature(
                        kind,
                        attrs,
                        cols,
                        start,
                        end,
                        number,
                        path,
                        genes_biotype,
                        transcripts,
                        parts,
                        all_ids,
                        skipped,
                    )
                    continue
                fid = attrs.get("ID")
                if fid and kind not in LEAF_TYPES:
                    all_ids.add(fid)
                biotype = next((attrs[k] for k in BIOTYPE_KEYS if k in attrs), None)
                if kind in ("gene", "pseudogene"):
                    genes_biotype[fid or f"line{number}"] = (
                        biotype if kind == "gene" else "pseudogene"
                    )
                elif kind in CODING_TYPES or (kind == "transcript" and biotype == "protein_coding"):
                    if strand not in "+-" or not strand:
                        raise InputError(f"{path}:{number}: transcript strand must be + or -")
                    tid = fid or f"line{number}"
                    transcripts[tid] = Transcript(
                        tid,
                        attrs.get("Parent", tid).split(",")[0],
                        seqid,
                        strand,
                        start,
                        end,
                        number,
                    )
                elif kind in ("exon", "CDS"):
                    parent = attrs.get("Parent")
                    if not parent:
                        raise InputError(f"{path}:{number}: {kind} has no Parent attribute")
                    for p in parent.split(","):
                        parts.append((kind, p, start, end, number))
                else:
                    skipped[kind] += 1
    except READ_ERRORS as exc:
        raise InputError(f"{path}: cannot read annotation ({exc})"[:300]) from None
    if n_features == 0:
        raise InputError(f"{path}: annotation holds no features")
    annotation = _link(path, genes_biotype, transcripts, parts, all_ids, skipped)
    annotation.format = "gtf" if gtf else "gff3"
    return annotation


def is_score(text: str) -> bool:
    """A GFF or BED score column: '.' or any number. BED's is UCSC's 0-1000, but tools write
    counts and floats there, and no reader here uses it; words are a broken line."""
    if text == ".":
        return True
    try:
        float(text)
    except ValueError:
        return False
    return True


def _check_columns(at: str, score: str, strand: str, phase: str) -> None:
    """Columns 6-8 of any feature in their GFF3/GTF domains: score '.' or a number, strand
    '+', '-', '.' or '?', phase '.', 0, 1 or 2 (unused here, but a value outside them means
    a shifted or broken line)."""
    if not is_score(score):
        raise InputError(f"{at}: score {score[:20]!r} is not a number or '.' (column 6)")
    if strand not in ("+", "-", ".", "?"):
        raise InputError(f"{at}: strand {strand[:20]!r} is not '+', '-', '.' or '?' (column 7)")
    if phase not in (".", "0", "1", "2"):
        raise InputError(f"{at}: phase {phase[:20]!r} is not 0, 1, 2 or '.' (column 8)")


def _gtf_feature(
    kind, attrs, cols, start, end, number, path, genes_biotype, transcripts, parts, all_ids, skipped
) -> None:
    """GTF: transcripts and genes are implied by gene_id/transcript_id on each line."""
    gid, tid = attrs.get("gene_id"), attrs.get("transcript_id")
    biotype = next((attrs[k] for k in BIOTYPE_KEYS if k in attrs), None)
    if kind == "gene" and gid:
        genes_biotype[gid] = biotype
        return
    if kind not in ("exon", "CDS", "transcript"):
        skipped[kind] += 1
        return
    if not tid or not gid:
        raise InputError(f"{path}:{number}: {kind} has no transcript_id/gene_id")
    all_ids.add(tid)
    strand = cols[6]
    if strand not in ("+", "-"):
        raise InputError(f"{path}:{number}: strand must be + or -")
    t = transcripts.get(tid)
    if t is None:
        t = transcripts[tid] = Transcript(tid, gid, cols[0], strand, start, end, number)
    t.start, t.end = min(t.start, start), max(t.end, end)
    if kind == "transcript":
        if biotype and biotype != "protein_coding":
            transcripts.pop(tid)
            skipped["transcript"] += 1
        return
    parts.append((kind, tid, start, end, number))


class _Parts:
    """Exon and CDS lines waiting for their transcripts, held compactly (a large annotation
    has millions): the kind as one byte, the parent as one shared string per transcript, the
    start, end and line number in an int64 array."""

    def __init__(self) -> None:
        self.cds = bytearray()
        self.parent: list[str] = []
        self.numbers = array("q")
        self._shared: dict[str, str] = {}

    def append(self, part: tuple[str, str, int, int, int]) -> None:
        kind, parent, start, end, number = part
        self.cds.append(kind == "CDS")
        self.parent.append(self._shared.setdefault(parent, parent))
        self.numbers.extend((start, end, number))

    def __iter__(self):
        n = self.numbers
        for i, parent in enumerate(self.parent):
            yield "CDS" if self.cds[i] else "exon", parent, n[3 * i], n[3 * i + 1], n[3 * i + 2]


def _ids_in_file(path: Path, wanted: set[str]) -> set[str]:
    """Which of ``wanted`` a GFF3 feature's ID names (the leaf features' IDs are not kept
    while parsing; this second look runs only when a Parent names none of the kept ones)."""
    found = set()
    with open_text(path) as handle:
        for raw in handle:
            if raw.startswith("##FASTA"):
                break
            cols = raw.rstrip("\n\r").split("\t")
            if len(cols) == 9 and not raw.startswith("#"):
                fid = _attributes_gff3(cols[8]).get("ID")
                if fid in wanted:
                    found.add(fid)
    return found


def _link(path, genes_biotype, transcripts, parts, all_ids, skipped) -> Annotation:
    genes: dict[str, list[str]] = {}
    unknown = {parent for _, parent, *_ in parts if parent not in transcripts
               and parent not in all_ids}  # fmt: skip
    if unknown:  # a leaf feature's ID (not kept) or no feature's
        all_ids = all_ids | _ids_in_file(path, unknown)
    for tid, t in list(transcripts.items()):
        biotype = genes_biotype.get(t.gene)
        if biotype is not None and biotype != "protein_coding":
            del transcripts[tid]
            skipped["mRNA of non-coding gene"] += 1
            continue
    for kind, parent, start, end, number in parts:
        t = transcripts.get(parent)
        if t is None:
            if parent not in all_ids:
                raise InputError(
                    f"{path}:{number}: {kind} has Parent {parent!r}, which no feature defines"
                )
            # EMBL-submitted GFF3 repeats a gene's exons under the gene itself as well
            # as under its mRNA (A. arenosa, GCA_905216605.1): those are not lost sites.
            if parent in genes_biotype:
                skipped[f"{kind} directly under a gene"] += 1
            else:
                skipped[f"{kind} of non-coding transcript"] += 1
            continue
        (t.exons if kind == "exon" else t.cds).append((start, end))
    for t in transcripts.values():
        t.exons.sort()
        t.cds.sort()
        if t.exons:
            t.start = min(t.start, t.exons[0][0])
            t.end = max(t.end, t.exons[-1][1])
        else:
            skipped["transcript without exons"] += 1
        genes.setdefault(t.gene, []).append(t.id)
    return Annotation(path, transcripts, genes, skipped)
