import gzip

import numpy as np
import pytest
from Bio import bgzf

from sparling_genomics.errors import InputError
from sparling_genomics.genome.fasta import Genome
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


def test_not_a_fasta(tmp_path):
    path = tmp_path / "x.fa"
    path.write_text("hello\n")
    with pytest.raises(InputError, match="not a FASTA file"):
        Genome(path)
    with pytest.raises(InputError, match="not found"):
        Genome(tmp_path / "missing.fa")
