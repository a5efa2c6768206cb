"""GFF3 parsing and site labels, checked against GFF lines read by hand (reference/tiny)."""

import pytest

from sparling_genomics.errors import InputError
from sparling_genomics.genome.annotation import read_annotation
from sparling_genomics.genome.fasta import Genome
from sparling_genomics.genome.labels import intron_dinucleotide, transcript_sites
from sparling_genomics.genome.sequence import decode
from tests.conftest import TINY_FASTA, TINY_GFF


@pytest.fixture(scope="module")
def genome():
    return Genome(TINY_FASTA)


@pytest.fixture(scope="module")
def annotation(genome):
    return read_annotation(TINY_GFF, genome.lengths)


def test_plus_strand_gene_sites_match_hand_read_lines(annotation, genome):
    # NAC001 / AT1G01010, rna-NM_099983.2, exons (1-based, inclusive):
    # 3631-3913 3996-4276 4486-4605 4706-5095 5174-5326 5439-5899, strand +.
    t = annotation.transcripts["rna-NM_099983.2"]
    assert t.strand == "+" and t.exons[0] == (3630, 3913)
    sites = transcript_sites(t, ("donor", "acceptor"))
    donors = sorted(s.position for s in sites if s.kind == "donor")
    acceptors = sorted(s.position for s in sites if s.kind == "acceptor")
    # Donor = last exon base (1-based 3913 -> 0-based 3912); acceptor = next exon's first.
    assert donors == [3912, 4275, 4604, 5094, 5325]
    assert acceptors == [3995, 4485, 4705, 5173, 5438]
    assert all(intron_dinucleotide(s, genome) == "GT" for s in sites if s.kind == "donor")
    assert all(intron_dinucleotide(s, genome) == "AG" for s in sites if s.kind == "acceptor")


def test_minus_strand_gene_sites_match_hand_read_lines(annotation, genome):
    # ARV1 / AT1G01020, rna-NM_001331242.1, strand -, first exons in transcript order:
    # 8594-9130, 8417-8464, 8236-8325 (1-based). The first intron is 8465-8593: on the minus
    # strand the donor is exon 1's lowest base (8594) and the acceptor exon 2's highest (8464).
    t = annotation.transcripts["rna-NM_001331242.1"]
    assert t.strand == "-"
    sites = transcript_sites(t, ("donor", "acceptor", "tss", "polya"))
    donors = {s.position for s in sites if s.kind == "donor"}
    acceptors = {s.position for s in sites if s.kind == "acceptor"}
    assert 8593 in donors and 8463 in acceptors
    assert 8416 in donors and 8324 in acceptors
    # Genome (+) bases at the intron's ends read AC...CT: GT...AG on the minus strand.
    assert decode(genome.fetch("NC_003070.9", 8591, 8593)) == "AC"
    assert decode(genome.fetch("NC_003070.9", 8464, 8466)) == "CT"
    assert [s.position for s in sites if s.kind == "tss"] == [9129]
    assert intron_dinucleotide(next(s for s in sites if s.position == 8593), genome) == "GT"
    assert intron_dinucleotide(next(s for s in sites if s.position == 8463), genome) == "AG"


def test_start_and_stop_codons(annotation, genome):
    from sparling_genomics.genome.sequence import reverse_complement_codes

    for tid in ("rna-NM_099983.2", "rna-NM_001331242.1"):
        t = annotation.transcripts[tid]
        sites = transcript_sites(t, ("start_codon", "stop_codon"))
        for s in sites:
            lo = s.position if t.strand == "+" else s.position - 2
            codon = genome.fetch(t.seqid, lo, lo + 3)
            if t.strand == "-":
                codon = reverse_complement_codes(codon)
            if s.kind == "start_codon":
                assert decode(codon) == "ATG"
            else:
                assert decode(codon) in ("TAA", "TAG", "TGA")


def test_longest_transcript_per_gene(annotation):
    selected = annotation.selected("longest")
    assert len({t.gene for t in selected}) == len(selected)
    arv1 = [t for t in annotation.transcripts.values() if t.gene == "gene-AT1G01020"]
    chosen = next(t for t in selected if t.gene == "gene-AT1G01020")
    assert chosen.exon_length == max(t.exon_length for t in arv1)
    assert len(annotation.selected("all")) > len(selected)


def _write(path, lines):
    path.write_text("##gff-version 3\n" + "".join("\t".join(c) + "\n" for c in lines))
    return path


GENE = ["chrA", ".", "gene", "1", "50", ".", "+", ".", "ID=g1;gene_biotype=protein_coding"]
MRNA = ["chrA", ".", "mRNA", "1", "50", ".", "+", ".", "ID=t1;Parent=g1"]


@pytest.mark.parametrize(
    "lines,message",
    [
        (
            [GENE, MRNA, ["chrB", ".", "exon", "1", "10", ".", "+", ".", "Parent=t1"]],
            ":4: sequence 'chrB' is not in the FASTA",
        ),
        (
            [GENE, MRNA, ["chrA", ".", "exon", "90", "120", ".", "+", ".", "Parent=t1"]],
            ":4: exon ends at 120, beyond the end of chrA (length 100)",
        ),
        (
            [GENE, MRNA, ["chrA", ".", "exon", "1", "10", ".", "+", ".", "ID=e1"]],
            ":4: exon has no Parent attribute",
        ),
        (
            [GENE, MRNA, ["chrA", ".", "exon", "1", "10", ".", "+", ".", "Parent=t9"]],
            ":4: exon has Parent 't9', which no feature defines",
        ),
        ([GENE, ["chrA", ".", "mRNA", "1", "x"]], ":3: expected 9 tab-separated columns"),
        (
            [GENE, MRNA, ["chrA", ".", "exon", "1", "10", ".", "x", ".", "Parent=t1"]],
            ":4: strand 'x' is not '+', '-', '.' or '?' (column 7)",
        ),
        (
            [GENE, MRNA, ["chrA", ".", "CDS", "1", "10", ".", "+", "5", "Parent=t1"]],
            ":4: phase '5' is not 0, 1, 2 or '.' (column 8)",
        ),
        (
            [GENE, MRNA, ["chrA", ".", "exon", "1", "10", "high", "+", ".", "Parent=t1"]],
            ":4: score 'high' is not a number or '.' (column 6)",
        ),
    ],
)
def test_bad_annotation_names_file_and_line(tmp_path, lines, message):
    path = _write(tmp_path / "bad.gff3", lines)
    with pytest.raises(InputError) as err:
        read_annotation(path, {"chrA": 100})
    assert str(err.value).startswith(str(path)) and message in str(err.value)


def test_scores_strands_and_phases_in_their_domain_pass(tmp_path):
    lines = [
        ["chrA", ".", "region", "1", "100", "12.5", "?", ".", "ID=r1"],
        GENE,
        MRNA,
        ["chrA", ".", "exon", "1", "50", "0.98", "+", ".", "Parent=t1"],
        ["chrA", ".", "CDS", "5", "40", ".", "+", "2", "Parent=t1"],
    ]
    annotation = read_annotation(_write(tmp_path / "ok.gff3", lines), {"chrA": 100})
    assert [t.strand for t in annotation.transcripts.values()] == ["+"]


def test_gtf_gives_the_same_sites(tmp_path):
    gff = _write(
        tmp_path / "a.gff3",
        [
            GENE,
            MRNA,
            ["chrA", ".", "exon", "1", "10", ".", "+", ".", "Parent=t1"],
            ["chrA", ".", "exon", "21", "50", ".", "+", ".", "Parent=t1"],
        ],
    )
    gtf = tmp_path / "a.gtf"
    gtf.write_text(
        "".join(
            f'chrA\t.\texon\t{s}\t{e}\t.\t+\t.\tgene_id "g1"; transcript_id "t1";\n'
            for s, e in ((1, 10), (21, 50))
        )
    )
    a = read_annotation(gff, {"chrA": 100}).selected()[0]
    b = read_annotation(gtf, {"chrA": 100}).selected()[0]
    assert a.exons == b.exons == [(0, 10), (20, 50)]
    kinds = ("donor", "acceptor")
    assert [s.position for s in transcript_sites(a, kinds)] == [9, 20]
    assert [s.position for s in transcript_sites(b, kinds)] == [9, 20]


def test_exons_repeated_under_the_gene_are_counted_apart_and_change_no_site(tmp_path):
    """EMBL-submitted GFF3 (A. arenosa's) lists a gene's exons under the gene as well as under
    its mRNA: the transcript's exons alone make its sites, and the skip says where they were."""
    exons = [["chrA", ".", "exon", s, e, ".", "+", ".", "Parent=t1"] for s, e in (("1", "10"),
                                                                                  ("21", "50"))]
    under_gene = [[*line[:8], "Parent=g1"] for line in exons]
    plain = read_annotation(_write(tmp_path / "a.gff3", [GENE, MRNA, *exons]), {"chrA": 100})
    embl = read_annotation(_write(tmp_path / "b.gff3", [GENE, MRNA, *exons, *under_gene]),
                           {"chrA": 100})  # fmt: skip
    assert [t.exons for t in embl.transcripts.values()] == [
        t.exons for t in plain.transcripts.values()
    ]
    assert embl.skipped["exon directly under a gene"] == 2
    assert "exon of non-coding transcript" not in embl.skipped
