import gzip

import numpy as np
import pytest
from Bio import bgzf

from sparling_genomics.errors import InputError
from sparling_genomics.genome.fasta import Genome, fasta_bases
from sparling_genomics.genome.sequence import decode

TEXT = ">chrA first\nACGTNNacgt\nAAAA\n>chrB\nGGGCCC\n"


@pytest.mark.parametrize("kind", ["plain", "gzip", "bgzip"])
def test_plain_gzip_and_bgzip_read_the_same(tmp_path, kind):
    path = tmp_path / ("g.fa" if kind == "plain" else "g.fa.gz")
    if kind == "plain":
        path.write_text(TEXT)
    elif kind == "gzip":
        path.write_bytes(gzip.compress(TEXT.encode()))
    else:
        with bgzf.BgzfWriter(str(path), "wb") as handle:
            handle.write(TEXT.encode())
    genome = Genome(path)
    assert genome.lengths == {"chrA": 14, "chrB": 6}
    assert decode(genome.sequence("chrA")) == "ACGTNNACGTAAAA"
    # Outside the sequence: N padding on both sides.
    assert decode(genome.fetch("chrB", -2, 8)) == "NNGGGCCCNN"
    assert np.array_equal(genome.fetch("chrA", 3, 5), np.array([3, 4], dtype=np.uint8))
    assert fasta_bases(path) == 20  # what the pipeline plans a scattered scan from


def test_fasta_bases_of_a_gzipped_fasta_with_ragged_lines_and_whitespace(tmp_path):
    path = tmp_path / "g.fa.gz"
    path.write_bytes(gzip.compress(b">a x\r\nAC GT\r\nA\n\n>b\nNNN\tN\n"))
    assert fasta_bases(path) == sum(Genome(path).lengths.values()) == 9
    (tmp_path / "broken.fa.gz").write_bytes(path.read_bytes()[:-6])
    with pytest.raises(InputError, match="broken.fa.gz: cannot read FASTA"):
        fasta_bases(tmp_path / "broken.fa.gz")


def test_not_a_fasta(tmp_path):
    path = tmp_path / "x.fa"
    path.write_text("hello\n")
    with pytest.raises(InputError, match="not a FASTA file"):
        Genome(path)
    with pytest.raises(InputError, match="not found"):
        Genome(tmp_path / "missing.fa")


def test_a_letter_that_is_no_nucleotide_code_is_refused_where_it_is_read(tmp_path):
    lines = [">chr1", "ACGT" * 15, "ACGT" * 3 + "12" + "ACGT" * 11 + "GT", "ACGT" * 15]
    plain = tmp_path / "g.fa"
    plain.write_text("\n".join(lines) + "\n")
    genome = Genome(plain)  # indexed (regular lines): checked as windows are read
    assert decode(genome.fetch("chr1", 0, 60)) == "ACGT" * 15
    with pytest.raises(InputError, match=r"g.fa: position 73 of '1' in sequence 'chr1' is not"):
        genome.fetch("chr1", 50, 100)
    packed = tmp_path / "g.fa.gz"  # read whole: checked at once, with its line
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    with pytest.raises(InputError, match=r"g.fa.gz:3: '1' in sequence 'chr1' is not"):
        Genome(packed)


def test_iupac_codes_gaps_uracil_and_soft_masking_pass(tmp_path):
    path = tmp_path / "g.fa.gz"
    path.write_bytes(gzip.compress(b">chr1\nACGTRYKMSWBDHVN-.uacgt\r\nACGT \n"))
    assert decode(Genome(path).fetch("chr1", 0, 26)) == "ACGT" + "N" * 14 + "ACGT" * 2
