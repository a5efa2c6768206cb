"""The variants verb end to end on a tiny splicing run: every record comes back, annotated;
per-allele rows on the right strands; batching changes nothing; nothing half-written."""

import gzip
import json

import pytest

from sparling_genomics.errors import InputError
from sparling_genomics.genome.fasta import Genome
from sparling_genomics.genome.sequence import decode
from sparling_genomics.runners.variants import score_vcf
from tests.conftest import TINY_FASTA, retrain_in_place

CHROM = "NC_003070.9"


def _base(pos: int, n: int = 1) -> str:
    return decode(Genome(TINY_FASTA).fetch(CHROM, pos - 1, pos - 1 + n))


@pytest.fixture(scope="module")
def vcf(tmp_path_factory):
    """Six records: an intron's first base (a + gene's donor GT), an intergenic SNV, a minus
    gene's SNV with a symbolic second ALT, an insertion, a 3-bp deletion, and ALT '.'."""
    path = tmp_path_factory.mktemp("vcf") / "calls.vcf"
    g = _base(3914)
    rows = [
        (1000, _base(1000), "T" if _base(1000) != "T" else "G"),
        (3914, g, "A" if g != "A" else "C"),
        (3950, _base(3950), _base(3950) + "TT"),
        (4000, _base(4000, 4), _base(4000)),
        (8000, _base(8000), ("C" if _base(8000) != "C" else "A") + ",<DEL>"),
        (9000, _base(9000), "."),
    ]
    lines = ["##fileformat=VCFv4.2", f"##contig=<ID={CHROM},length=300000>",
             "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO"]  # fmt: skip
    lines += [f"{CHROM}\t{p}\tv{i}\t{r}\t{a}\t50\tPASS\tDP=7" for i, (p, r, a) in enumerate(rows)]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_every_record_is_annotated_or_counted(splicing_tiny, vcf, tmp_path):
    out = tmp_path / "out"
    summary = score_vcf(splicing_tiny, vcf, out, distance=20)
    assert summary["counts"] == {"records": 6, "alleles": 7, "scored": 5, "scored_strands": 6}
    assert summary["skipped"]["symbolic"]["alleles"] == 1
    assert summary["skipped"]["no_alt"]["alleles"] == 1
    assert summary["vcf_indexed"] and (out / "variants.vcf.gz.tbi").is_file()
    assert json.loads((out / "variants.json").read_text())["counts"] == summary["counts"]
    text = gzip.decompress((out / "variants.vcf.gz").read_bytes()).decode().splitlines()
    assert sum(line.startswith("##INFO=<ID=SPARLING,") for line in text) == 1
    assert "DS_AG|DS_AL|DS_DG|DS_DL|DP_AG|DP_AL|DP_DG|DP_DL" in text[text.index(
        next(t for t in text if t.startswith("##INFO=<ID=SPARLING,")))]  # fmt: skip
    records = [line.split("\t") for line in text if not line.startswith("#")]
    assert [r[2] for r in records] == [f"v{i}" for i in range(6)]
    info = {r[2]: r[7] for r in records}
    assert info["v5"] == "DP=7"  # nothing to score: unchanged
    entries = info["v0"].split(";")[1].removeprefix("SPARLING=").split(",")
    assert [e.split("|")[1] for e in entries] == ["+", "-"]  # intergenic: both strands
    assert info["v1"].split("SPARLING=")[1].split("|")[1:3] == ["+", "gene-AT1G01010"]
    assert info["v4"].split("SPARLING=")[1].split("|")[1] == "-"  # a minus-strand gene
    rows = (out / "variant_scores.tsv").read_text().splitlines()
    assert len(rows) == 1 + 6 and rows[0].startswith("chrom\tpos\tid\tref\talt\tstrand\tgenes")
    for row in rows[1:]:
        fields = dict(zip(rows[0].split("\t"), row.split("\t")))
        deltas = [float(fields[k]) for k in ("DS_AG", "DS_AL", "DS_DG", "DS_DL")]
        assert all(0 <= d <= 1 for d in deltas)
        assert float(fields["max_delta"]) == max(deltas)
        assert all(-20 <= int(fields[k]) <= 20 for k in ("DP_AG", "DP_AL", "DP_DG", "DP_DL"))
    changes = (out / "motif_changes.tsv").read_text().splitlines()
    assert changes[0].split("\t")[6:8] == ["family", "motif"]
    assert all(c.split("\t")[6].startswith("sparling_f") for c in changes[1:])


def test_batches_give_the_same_scores(splicing_tiny, vcf, tmp_path):
    score_vcf(splicing_tiny, vcf, tmp_path / "one", distance=20, batch=1)
    score_vcf(splicing_tiny, vcf, tmp_path / "many", distance=20, batch=64)
    for name in ("variant_scores.tsv", "motif_changes.tsv"):
        assert (tmp_path / "one" / name).read_text() == (tmp_path / "many" / name).read_text()


def test_a_mismatching_ref_leaves_nothing(splicing_tiny, vcf, tmp_path):
    bad = tmp_path / "bad.vcf"
    lines = vcf.read_text().splitlines()
    ref = lines[-2].split("\t")[3]
    lines[-2] = lines[-2].replace(f"\t{ref}\t", "\tA\t" if ref != "A" else "\tC\t", 1)
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match=r"bad.vcf:8: REF . does not match the FASTA"):
        score_vcf(splicing_tiny, bad, tmp_path / "out")
    assert not (tmp_path / "out").exists()
    summary = score_vcf(splicing_tiny, bad, tmp_path / "out", skip_ref_mismatch=True)
    assert summary["skipped"]["ref_mismatch"]["alleles"] == 2


def test_cli_prints_a_summary_line(cli, splicing_tiny, vcf, tmp_path):
    result = cli("variants", "--model", splicing_tiny, "--vcf", vcf, "--out", tmp_path / "o",
                 "--distance", "10")  # fmt: skip
    assert result.returncode == 0, result.stderr
    last = result.stdout.strip().splitlines()[-1]
    assert last.startswith("scored 5 of 7 alleles (6 records); skipped: no_alt 1, symbolic 1")


def test_report_shows_counts_histogram_and_top_variants(splicing_tiny, vcf, tmp_path):
    from sparling_genomics.report.page import build_report

    score_vcf(splicing_tiny, vcf, tmp_path / "effects", distance=20)
    page = build_report(splicing_tiny, variants=tmp_path / "effects")
    assert "<h2>Which model for a plant genome</h2>" in page  # a splicing run's guidance
    section = page[page.index("<h2>Variant effects</h2>") :]
    assert "6 records, 7 alleles, 5 scored (6 allele-strands" in section
    assert "symbolic 1 (symbolic or breakend ALT" in section
    assert 'alt="delta score histogram"' in section
    assert "by largest delta</h3>" in section and 'alt="sequence before and after"' in section


def test_sigterm_mid_run_cleans_up_and_exits_143(splicing_tiny, tmp_path):
    """SIGTERM (scancel, timeout, Snakemake) runs the verb's clean-up as Ctrl-C does: no temp
    file, no output folder, exit 143; Python's default would leave both."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from tests.conftest import REPO

    bases = _base(1, 201_000)  # one read of the genome, not one per SNV
    rows = [f"{CHROM}\t{p}\t.\t{bases[p - 1]}\t{'A' if bases[p - 1] != 'A' else 'C'}\t.\t.\t."
            for p in range(1000, 201_000, 10)]  # 20,000 SNVs: minutes to score  # fmt: skip
    vcf = tmp_path / "many.vcf"
    vcf.write_text("##fileformat=VCFv4.2\n#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\n"
                   + "\n".join(rows) + "\n")  # fmt: skip
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [sys.executable, "-m", "sparling_genomics.cli", "variants", "--model", splicing_tiny,
         "--vcf", vcf, "--out", out], cwd=REPO, stderr=subprocess.PIPE, text=True,
        env=dict(os.environ, OMP_NUM_THREADS="1"))  # fmt: skip
    deadline = time.monotonic() + 120
    while not list(out.glob(".variant_scores.tsv.tmp-*")) and time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read()
        time.sleep(0.1)
    assert list(out.glob(".variant_scores.tsv.tmp-*")), "the verb never started writing"
    time.sleep(0.5)
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 143 and "terminated (SIGTERM)" in stderr, stderr
    assert not out.exists()  # its temp files and the folder it made: gone


def test_motifs_exported_from_other_weights_are_refused(splicing_tiny, vcf, tmp_path):
    """The run's final weights changed after its export (another training into the same
    folder): its motif labels would name other weights' channels."""
    import shutil

    run = retrain_in_place(shutil.copytree(splicing_tiny, tmp_path / "run"))
    out = tmp_path / "effects"
    with pytest.raises(InputError) as refused:
        score_vcf(run, vcf, out, fasta=TINY_FASTA)
    assert str(refused.value).startswith(f"{run}/motifs/motifs.json: made from other weights "
                                         f"than {run}'s (model fingerprint ")  # fmt: skip
    assert not out.exists()
