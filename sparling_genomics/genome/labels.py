"""Labelled sites: from transcripts (donor, acceptor, tss, polya, start/stop codon) or a BED.

Conventions (SpliceAI's, Jaganathan et al. 2019): a site is one base, given as a 0-based genome
coordinate on the transcript's strand.

* ``donor``: last base of an exon that is followed by an intron;
* ``acceptor``: first base of an exon that follows an intron;
* ``tss`` / ``polya``: first / last base of the transcript;
* ``start_codon``: first base of the CDS; ``stop_codon``: first base of the stop codon, taken
  as the last three CDS bases (GFF3 CDS features include the stop codon; in GTF they do not,
  and the stop codon then follows the CDS).

A donor is canonical when the intron starts with GT, an acceptor when the intron ends with AG
(on the transcript's strand).

Class names, not codes, identify classes across files: :func:`class_mapping` maps one
dataset's codes onto a model's class order.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..io import READ_ERRORS, open_text, require_file
from .annotation import Transcript, is_score
from .chromosomes import SequenceNames
from .sequence import decode, reverse_complement_codes

SITE_KINDS = ("acceptor", "donor", "tss", "polya", "start_codon", "stop_codon")
DEFAULT_KINDS = ("acceptor", "donor")


@dataclass(frozen=True)
class Site:
    seqid: str
    position: int  # 0-based genome coordinate
    strand: str
    kind: str


def transcript_sites(t: Transcript, kinds, *, gtf: bool = False) -> list[Site]:
    """The sites of ``kinds`` in one transcript."""
    out: list[Site] = []
    plus = t.strand == "+"
    exons = t.exons
    for (_, e0), (s1, _) in zip(exons, exons[1:]):
        # Intron = [e0, s1) in genome coordinates.
        if "donor" in kinds:
            out.append(Site(t.seqid, e0 - 1 if plus else s1, t.strand, "donor"))
        if "acceptor" in kinds:
            out.append(Site(t.seqid, s1 if plus else e0 - 1, t.strand, "acceptor"))
    if exons:
        if "tss" in kinds:
            out.append(Site(t.seqid, exons[0][0] if plus else exons[-1][1] - 1, t.strand, "tss"))
        if "polya" in kinds:
            out.append(Site(t.seqid, exons[-1][1] - 1 if plus else exons[0][0], t.strand, "polya"))
    if t.cds:
        lo, hi = t.cds[0][0], t.cds[-1][1]
        if "start_codon" in kinds:
            out.append(Site(t.seqid, lo if plus else hi - 1, t.strand, "start_codon"))
        if "stop_codon" in kinds:
            # GTF CDS lines exclude the stop codon; GFF3 CDS lines include it.
            stop_gtf, stop_gff3 = (hi, hi - 3) if plus else (lo - 1, lo + 2)
            pos = stop_gtf if gtf else stop_gff3
            out.append(Site(t.seqid, pos, t.strand, "stop_codon"))
    return out


def intron_dinucleotide(site: Site, genome) -> str:
    """The two intron bases next to a donor (its first two) or acceptor (its last two)."""
    p = site.position
    if site.kind == "donor":
        lo = p + 1 if site.strand == "+" else p - 2
    elif site.kind == "acceptor":
        lo = p - 2 if site.strand == "+" else p + 1
    else:
        raise ValueError(f"{site.kind} has no intron dinucleotide")
    codes = genome.fetch(site.seqid, lo, lo + 2)
    if site.strand == "-":
        codes = reverse_complement_codes(codes)
    return decode(codes)


def count_non_canonical(sites: list[Site], genome) -> Counter:
    """Donors without GT and acceptors without AG."""
    out: Counter = Counter()
    expected = {"donor": "GT", "acceptor": "AG"}
    for site in sites:
        if site.kind in expected and intron_dinucleotide(site, genome) != expected[site.kind]:
            out[site.kind] += 1
    return out


@dataclass(frozen=True)
class BedRecord:
    seqid: str
    start: int
    end: int
    name: str
    strand: str  # '+', '-' or '.'
    line: int


def read_bed(path: Path, lengths: SequenceNames | dict[str, int]) -> list[BedRecord]:
    """Labelled sites or regions from a BED file (class = name column, 4th).

    Accepted: ``track``/``browser``/``#`` lines, one header line (``chrom start end name``),
    tab- or space-separated columns, Windows line endings, gzip. Intervals are 0-based,
    half-open: ``start >= end`` is refused with a hint when it looks 1-based. A score (column
    5) that is not a number and a strand (column 6) other than ``+``, ``-`` or ``.`` are
    refused; columns from the 7th on are not read (BED12's, or a BED6+ format's own).
    """
    path = Path(path)
    require_file(path, "BED file")
    names = SequenceNames.of(lengths)
    records = []
    try:
        with open_text(path) as handle:
            for number, raw in enumerate(handle, start=1):
                record = _bed_record(path, number, raw, names, first=not records)
                if record is not None:
                    records.append(record)
    except READ_ERRORS as exc:
        raise InputError(f"{path}: cannot read BED ({exc})"[:300]) from None
    if not records:
        raise InputError(f"{path}: BED file holds no records")
    return records


def _bed_record(path: Path, number: int, raw: str, names: SequenceNames, *, first: bool):
    if not raw.strip() or raw.startswith(("#", "track", "browser")):
        return None
    line = raw.rstrip("\n\r")
    cols = line.split("\t") if "\t" in line else line.split()
    if len(cols) < 4:
        raise InputError(
            f"{path}:{number}: a labelled BED needs at least 4 columns "
            f"(chrom start end name), got {len(cols)}"
        )
    try:
        start, end = int(cols[1]), int(cols[2])
    except ValueError:
        if first and not any(ch.isdigit() for ch in cols[1] + cols[2]):
            return None  # a header line such as 'chrom start end name'
        raise InputError(
            f"{path}:{number}: start/end must be integers, got {cols[1]!r}, {cols[2]!r}"
        ) from None
    if start < 0:
        raise InputError(f"{path}:{number}: negative start {start}")
    if end <= start:
        hint = (
            f" -- BED is 0-based, half-open: one base at 1-based position {end} is "
            f"'{end - 1}<TAB>{end}'"
            if end == start
            else " -- start is after end: are the columns swapped?"
        )
        raise InputError(f"{path}:{number}: empty or reversed interval {start}-{end}{hint}")
    chrom = names.locate(f"{path}:{number}", path, cols[0], end, feature="interval")
    if chrom is None:
        return None  # a sequence the FASTA lacks, skipped on request
    name = cols[3].strip()
    if not name:
        raise InputError(f"{path}:{number}: empty name (class) column")
    if len(cols) > 4 and not is_score(cols[4].strip()):
        raise InputError(f"{path}:{number}: score {cols[4][:20]!r} is not a number (BED column 5; "
                         "'.' or 0 when there is none)")  # fmt: skip
    strand = cols[5].strip() if len(cols) > 5 else "."
    if strand not in ("+", "-", "."):
        raise InputError(f"{path}:{number}: strand {cols[5][:20]!r} is not '+', '-' or '.' "
                         "(BED column 6)")  # fmt: skip
    return BedRecord(chrom, start, end, name, strand, number)


def positions_array(sites: list[Site]) -> np.ndarray:
    return np.array([s.position for s in sites], dtype=np.int64)


def class_mapping(path: Path, file_classes: list[str], order: list[str]) -> np.ndarray | None:
    """Lookup ``file code -> code in order`` (``order``: a model's classes), matched by name;
    None when the orders agree. Any class in one list and not in the other is an error that
    names both lists: a model cannot score, or be scored on, a class it does not have."""
    if list(order) == list(file_classes):
        return None
    if order[:1] != ["none"] or sorted(order) != sorted(file_classes):
        raise InputError(
            f"{path}: its site classes ({', '.join(file_classes[1:])}) are not the model's "
            f"({', '.join(order[1:])}); rebuild the dataset with --labels "
            f"{','.join(order[1:])}"
        )
    return np.array([order.index(name) for name in file_classes], dtype=np.int64)
