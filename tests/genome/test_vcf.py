"""The VCF reader: alleles split and either scored or counted; every bad field refused with
``file:line`` and what is wrong."""

import gzip

import numpy as np
import pytest

from sparling_genomics.errors import InputError
from sparling_genomics.genome.chromosomes import SequenceNames
from sparling_genomics.genome.sequence import decode, encode
from sparling_genomics.genome.vcf import VcfReader

SEQ = "ACGTACGTAC" * 10  # chr1, 100 bases
HEAD = "##fileformat=VCFv4.2\n##contig=<ID=chr1,length=100>\n" \
       "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\n"  # fmt: skip


def fetch(seqid, start, end):
    out = np.full(end - start, 4, np.uint8)
    lo, hi = max(start, 0), min(end, len(SEQ))
    out[lo - start : hi - start] = encode(SEQ[lo:hi])
    return out


def read(tmp_path, body, *, name="calls.vcf", skip_unknown=False, skip_ref_mismatch=False):
    path = tmp_path / name
    text = (HEAD + body).encode()
    path.write_bytes(gzip.compress(text) if name.endswith(".gz") else text)
    names = SequenceNames({"chr1": 100}, skip_unknown=skip_unknown)
    reader = VcfReader(path, names, fetch, skip_ref_mismatch=skip_ref_mismatch)
    return list(reader.records()), reader.counts


def test_alleles_are_split_scored_or_counted(tmp_path):
    body = ("chr1\t1\tv1\tA\tG,T\t.\t.\t.\n"
            "chr1\t3\tv2\tG\t<DEL>,*,GTT\t.\t.\t.\n"
            "chr1\t5\tv3\tA\t.\t.\t.\t.\n"
            f"chr1\t2\tv4\tC\tC{'A' * 60}\t.\t.\t.\n")  # fmt: skip
    records, counts = read(tmp_path, body, name="calls.vcf.gz")
    assert [r.pos for r in records] == [0, 2, 4, 1]
    assert [(a.alt, a.skip) for a in records[0].alleles] == [("G", None), ("T", None)]
    assert [a.skip for a in records[1].alleles] == ["symbolic", "symbolic", None]
    assert records[2].alleles == [] and records[3].alleles[0].skip == "too_long"
    assert counts == {"records": 4, "alleles": 7, "scored": 3, "symbolic": 2, "no_alt": 1,
                      "too_long": 1}  # fmt: skip
    assert records[0].columns[:5] == ["chr1", "1", "v1", "A", "G,T"]


@pytest.mark.parametrize("line,words", [
    ("chr1\t0\t.\tA\tG\t.\t.\t.", "calls.vcf:4: POS 0 is not a position"),
    ("chr1\t1\t.\tQ\tG\t.\t.\t.", "calls.vcf:4: REF 'Q' is not a DNA allele"),
    ("chr1\t1\t.\tA\tGZ\t.\t.\t.", "calls.vcf:4: ALT 'GZ' is not an allele"),
    ("chr1\tabc\t.\tA\tG\t.\t.\t.", "calls.vcf:4: not a VCF record"),
    ("chr1\t1\t.\tC\tG\t.\t.\t.", "calls.vcf:4: REF C does not match the FASTA at chr1:1 (A)"),
    ("chr1\t99\t.\tACGT\tA\t.\t.\t.", "calls.vcf:4: REF ends at 102, beyond the end of chr1"),
    ("chrZ\t1\t.\tA\tG\t.\t.\t.", "calls.vcf:4: sequence 'chrZ' is not in the FASTA"),
    ("chr1\t1\tmy id\tA\tG\t.\t.\t.", "calls.vcf:4: ID 'my id' holds whitespace"),
    ("chr1\t1\t.\tA\tG\tabc\t.\t.", "calls.vcf:4: QUAL 'abc' is not a Phred quality"),
    ("chr1\t1\t.\tA\tG\t-5\t.\t.", "calls.vcf:4: QUAL '-5' is not a Phred quality"),
    ("chr1\t1\t.\tA\tG\t12x\t.\t.", "calls.vcf:4: QUAL '12x' is not a Phred quality"),
])  # fmt: skip
def test_bad_fields_are_refused_with_file_and_line(tmp_path, line, words):
    with pytest.raises(InputError, match=words.replace("(", r"\(").replace(")", r"\)")):
        read(tmp_path, line + "\n")


def test_mismatches_and_unknown_sequences_are_counted_when_asked(tmp_path):
    body = "chr1\t1\t.\tC\tG\t.\t.\t.\nchrZ\t1\t.\tA\tG,T\t.\t.\t.\nchr1\t2\t.\tC\tT\t.\t.\t.\n"
    records, counts = read(tmp_path, body, skip_unknown=True, skip_ref_mismatch=True)
    assert counts["ref_mismatch"] == 1 and counts["unknown_sequence"] == 2
    assert counts["scored"] == 1 and records[1].seqid is None


def test_not_a_vcf_empty_and_without_records(tmp_path):
    names = SequenceNames({"chr1": 100})
    for content, words in [(b"", "empty file, not a VCF"), (b"hello\n", "not a VCF file"),
                           (HEAD.encode(), "the VCF holds no variant records")]:  # fmt: skip
        path = tmp_path / "x.vcf"
        path.write_bytes(content)
        with pytest.raises(InputError, match=words):
            list(VcfReader(path, names, fetch).records())
    assert decode(fetch("chr1", 98, 102)) == "ACNN"


def test_quality_and_ids_in_their_domain_pass_and_a_bad_one_is_found_by_its_line(tmp_path):
    body = ("chr1\t1\trs1;rs2\tA\tG\t30.5\tPASS\tDP=3\n"
            "chr1\t2\t.\tC\tT\t0\t.\t.\r\n"
            "chr1\t3\t.\tG\tA\t.\t.\t.\n")  # fmt: skip
    records, counts = read(tmp_path, body, name="calls.vcf.gz")
    assert counts["scored"] == 3 and records[0].columns[2] == "rs1;rs2"
    with pytest.raises(InputError, match="calls.vcf:5: QUAL 'high'"):
        read(tmp_path, "chr1\t1\t.\tA\tG\t9\t.\t.\nchr1\t2\t.\tC\tT\thigh\t.\t.\n")
