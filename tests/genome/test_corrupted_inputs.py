"""Property-based tests of the genome readers against broken files: FASTA, GFF3/GTF, BED,
VCF and chromosome alias files are generated clean, then broken (``tests/corruption.py``: a
byte-order mark, CRLF line ends, gzip, cut short, bytes that are not text, columns swapped,
a gzip cut or with a byte flipped, empty). Each must read as the clean file, or be refused
with a typed one-line error naming the file -- never an unexpected exception (exit 1) and
never a silently different reading of what the mark, line ends or gzip wrap."""

import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from sparling_genomics.genome.annotation import read_annotation
from sparling_genomics.genome.chromosomes import SequenceNames, read_aliases
from sparling_genomics.genome.fasta import Genome
from sparling_genomics.genome.labels import read_bed
from sparling_genomics.genome.sequence import encode
from sparling_genomics.genome.vcf import VcfReader
from tests.corruption import FAST, Refused, broken, check_broken, read_or_refuse

LENGTHS = {"chr1": 6000, "chr2": 3000}


def _both(clean: bytes, bad: bytes, name: str, read):
    """The clean file's reading (it must read) and the broken one's, or its refusal."""
    return _read(clean, name, read), _read(bad, name, lambda p: read_or_refuse(read, p))


def _read(data: bytes, name: str, read):
    """``read`` of a file ``name`` holding ``data`` (in a folder of its own)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp, name)
        path.write_bytes(data)
        return read(path)


# --- FASTA -------------------------------------------------------------------------------

fasta_records = st.dictionaries(
    st.from_regex(r"[A-Za-z][A-Za-z0-9_.]{0,7}", fullmatch=True),
    st.text("ACGTNacgt", min_size=1, max_size=300), min_size=1, max_size=4)  # fmt: skip


def fasta_text(records: dict[str, str], width: int, described: bool) -> bytes:
    lines = []
    for name, seq in records.items():
        lines.append(f">{name}" + (f" sequence {name}" if described else ""))
        lines += [seq[i : i + width] for i in range(0, len(seq), width)]
    return ("\n".join(lines) + "\n").encode()


def read_fasta(path: Path) -> list[tuple[str, bytes]]:
    genome = Genome(path)
    return [(name, genome.sequence(name).tobytes()) for name in genome.lengths]


@FAST
@given(fasta_records, st.integers(5, 80), st.booleans(), st.data())
def test_a_broken_fasta_reads_as_the_clean_one_or_is_refused(records, width, described, data):
    """Indexed by pyfaidx or read whole, a FASTA with a byte-order mark, CRLF ends or gzip is
    the clean one, base for base; cut short, each sequence read is a start of the clean one's
    (pyfaidx's offsets never shifted by a byte)."""
    clean = fasta_text(records, width, described)
    how, bad = data.draw(broken(clean))
    want, got = _both(clean, bad, "genome.fa", read_fasta)
    check_broken(how, got, want)
    if how == "cut" and not isinstance(got, Refused):
        whole = dict(want)
        for name, codes in got:
            assert name not in whole or whole[name].startswith(codes), name


# --- GFF3 / GTF ----------------------------------------------------------------------------


@st.composite
def transcripts(draw):
    """(seqid, strand, exons): 1-based inclusive, sorted, apart."""
    seqid = draw(st.sampled_from(sorted(LENGTHS)))
    ends = sorted(draw(st.lists(st.integers(1, LENGTHS[seqid]), min_size=2, max_size=8,
                                unique=True)))  # fmt: skip
    exons = [(ends[i], ends[i + 1]) for i in range(0, len(ends) - 1, 2)]
    return seqid, draw(st.sampled_from("+-")), exons


def gff3_text(genes) -> bytes:
    lines = ["##gff-version 3"]
    for i, (seqid, strand, exons) in enumerate(genes):
        span = f"{seqid}\t.\t{{}}\t{exons[0][0]}\t{exons[-1][1]}\t.\t{strand}\t.\t"
        lines += [span.format("gene") + f"ID=g{i};gene_biotype=protein_coding",
                  span.format("mRNA") + f"ID=t{i};Parent=g{i}"]  # fmt: skip
        lines += [f"{seqid}\t.\texon\t{s}\t{e}\t.\t{strand}\t.\tParent=t{i}" for s, e in exons]
        lines += [f"{seqid}\t.\tCDS\t{s}\t{e}\t.\t{strand}\t0\tParent=t{i}" for s, e in exons[:1]]
    return ("\n".join(lines) + "\n").encode()


def gtf_text(genes) -> bytes:
    lines = []
    for i, (seqid, strand, exons) in enumerate(genes):
        ids = f'gene_id "g{i}"; transcript_id "t{i}";'
        lines.append(f"{seqid}\t.\ttranscript\t{exons[0][0]}\t{exons[-1][1]}\t.\t{strand}\t.\t{ids}")
        lines += [f"{seqid}\t.\texon\t{s}\t{e}\t.\t{strand}\t.\t{ids}" for s, e in exons]
    return ("\n".join(lines) + "\n").encode()


def read_gff(path: Path):
    found = read_annotation(path, SequenceNames.of(LENGTHS))
    return (found.format, dict(found.skipped), sorted(found.genes.items()),
            sorted((t.id, t.gene, t.seqid, t.strand, t.start, t.end, t.line, tuple(t.exons),
                    tuple(t.cds)) for t in found.transcripts.values()))  # fmt: skip


@FAST
@given(st.lists(transcripts(), min_size=1, max_size=4), st.booleans(), st.data())
def test_a_broken_gff3_or_gtf_reads_as_the_clean_one_or_is_refused(genes, gtf, data):
    clean = gtf_text(genes) if gtf else gff3_text(genes)
    how, bad = data.draw(broken(clean))
    want, got = _both(clean, bad, "genes.gtf" if gtf else "genes.gff3", read_gff)
    check_broken(how, got, want)


@FAST
@given(st.lists(transcripts(), min_size=1, max_size=4), st.booleans(), st.data())
def test_a_feature_with_start_and_end_swapped_is_refused(genes, gtf, data):
    lines = (gtf_text(genes) if gtf else gff3_text(genes)).decode().splitlines()
    i = data.draw(st.sampled_from([i for i, line in enumerate(lines) if "\t" in line]))
    cols = lines[i].split("\t")
    cols[3], cols[4] = cols[4], cols[3]
    lines[i] = "\t".join(cols)
    got = _read(("\n".join(lines) + "\n").encode(), "genes.gff3",
                lambda p: read_or_refuse(read_gff, p))  # fmt: skip
    assert isinstance(got, Refused) and f"genes.gff3:{i + 1}: bad coordinates" in got.message


# --- BED -----------------------------------------------------------------------------------


@st.composite
def bed_rows(draw):
    seqid = draw(st.sampled_from(sorted(LENGTHS)))
    start = draw(st.integers(0, LENGTHS[seqid] - 1))
    end = draw(st.integers(start + 1, LENGTHS[seqid]))
    name = draw(st.sampled_from(["donor", "acceptor", "site"]))
    return seqid, start, end, name, draw(st.sampled_from(["0", ".", "950"])), draw(
        st.sampled_from("+-."))


def bed_text(rows, header: bool) -> bytes:
    lines = ['track name="sites"', "# mine"] if header else []
    lines += ["\t".join(map(str, row)) for row in rows]
    return ("\n".join(lines) + "\n").encode()


def read_sites(path: Path):
    return [(r.seqid, r.start, r.end, r.name, r.strand, r.line)
            for r in read_bed(path, LENGTHS)]  # fmt: skip


@FAST
@given(st.lists(bed_rows(), min_size=1, max_size=6), st.booleans(), st.data())
def test_a_broken_bed_reads_as_the_clean_one_or_is_refused(rows, header, data):
    clean = bed_text(rows, header)
    how, bad = data.draw(broken(clean))
    want, got = _both(clean, bad, "sites.bed", read_sites)
    check_broken(how, got, want)


@FAST
@given(st.lists(bed_rows(), min_size=1, max_size=6), st.data())
def test_a_bed_interval_with_start_and_end_swapped_is_refused(rows, data):
    i = data.draw(st.integers(0, len(rows) - 1))
    seqid, start, end, *rest = rows[i]
    rows = [*rows[:i], (seqid, end, start, *rest), *rows[i + 1 :]]
    got = _read(bed_text(rows, False), "sites.bed", lambda p: read_or_refuse(read_sites, p))
    assert isinstance(got, Refused) and f"sites.bed:{i + 1}: empty or reversed" in got.message


# --- VCF -----------------------------------------------------------------------------------

GENOME = "".join("ACGT"[(i * 7 + i // 5) % 4] for i in range(400))
CODES = encode(GENOME)


@st.composite
def vcf_rows(draw):
    pos = draw(st.integers(1, len(GENOME) - 3))
    ref = GENOME[pos - 1 : pos - 1 + draw(st.integers(1, 3))]
    alt = draw(st.sampled_from([b for b in "ACGT" if b != ref[0]] + [ref + "A", "<DEL>"]))
    rid = draw(st.sampled_from([".", f"rs{pos}"]))
    qual = draw(st.sampled_from([".", "30", "12.5"]))
    return f"chr1\t{pos}\t{rid}\t{ref}\t{alt}\t{qual}\tPASS\t."


def vcf_text(rows) -> bytes:
    head = ["##fileformat=VCFv4.2", f"##contig=<ID=chr1,length={len(GENOME)}>",
            "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO"]  # fmt: skip
    return ("\n".join(head + rows) + "\n").encode()


def read_vcf(path: Path):
    reader = VcfReader(path, SequenceNames.of({"chr1": len(GENOME)}),
                       lambda seqid, start, end: CODES[start:end])  # fmt: skip
    try:
        records = [(r.line, tuple(r.columns), r.seqid, r.pos, r.ref,
                    tuple((a.alt, a.skip) for a in r.alleles)) for r in reader.records()]
    finally:
        reader.close()
    return records, dict(reader.counts)


@FAST
@given(st.lists(vcf_rows(), min_size=1, max_size=5), st.data())
def test_a_broken_vcf_reads_as_the_clean_one_or_is_refused(rows, data):
    clean = vcf_text(rows)
    how, bad = data.draw(broken(clean))
    want, got = _both(clean, bad, "calls.vcf", read_vcf)
    check_broken(how, got, want)


# --- chromosome aliases --------------------------------------------------------------------


@FAST
@given(st.dictionaries(st.from_regex(r"[A-Za-z0-9_]{1,6}", fullmatch=True),
                       st.sampled_from(sorted(LENGTHS)), min_size=1, max_size=4),
       st.data())  # fmt: skip
def test_a_broken_alias_file_reads_as_the_clean_one_or_is_refused(aliases, data):
    aliases = {k: v for k, v in aliases.items() if k not in LENGTHS} or {"one": "chr1"}
    clean = "".join(f"{alias}\t{name}\n" for alias, name in aliases.items()).encode()
    how, bad = data.draw(broken(clean))
    want, got = _both(clean, bad, "aliases.txt", lambda p: read_aliases(p, LENGTHS))
    check_broken(how, got, want)
