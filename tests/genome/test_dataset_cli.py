"""The `dataset` verb: references, bad input as one line + exit 2, nothing half-written."""

import json

from tests.conftest import TINY_FASTA, TINY_GFF


def test_dataset_verb_on_the_tiny_reference(cli, tmp_path):
    out = tmp_path / "d.h5"
    result = cli(
        "dataset",
        "--reference",
        "tiny",
        "--out",
        out,
        "--labels",
        "acceptor,donor,tss,polya,start_codon,stop_codon",
    )
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout[: result.stdout.rindex("}") + 1])
    assert set(summary["sites"]) == {
        "acceptor",
        "donor",
        "tss",
        "polya",
        "start_codon",
        "stop_codon",
    }
    assert summary["sites"]["tss"] == summary["transcripts"]
    again = cli("dataset", "--reference", "tiny", "--out", out)
    assert again.returncode == 2 and "exists already" in again.stderr


def _one_line_error(result, *needles):
    assert result.returncode == 2, (result.returncode, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    for needle in needles:
        assert needle in lines[0], lines[0]


def test_bad_inputs(cli, tmp_path):
    out = tmp_path / "out.h5"
    fasta = tmp_path / "other.fa"
    fasta.write_text(">chrX\n" + "ACGT" * 100 + "\n")
    _one_line_error(
        cli("dataset", "--fasta", fasta, "--gff", TINY_GFF, "--out", out),
        str(TINY_GFF),
        "'NC_003070.9' is not in the FASTA",
    )
    gff = tmp_path / "orphan.gff3"
    gff.write_text("NC_003070.9\t.\texon\t10\t20\t.\t+\t.\tID=e1\n")
    _one_line_error(
        cli("dataset", "--fasta", TINY_FASTA, "--gff", gff, "--out", out), f"{gff}:1:", "no Parent"
    )
    outside = tmp_path / "outside.gff3"
    outside.write_text("NC_003070.9\t.\tgene\t299990\t300100\t.\t+\t.\tID=g\n")
    _one_line_error(
        cli("dataset", "--fasta", TINY_FASTA, "--gff", outside, "--out", out),
        f"{outside}:1:",
        "beyond the end of NC_003070.9",
    )
    empty = tmp_path / "empty.bed"
    empty.write_text("")
    _one_line_error(
        cli("dataset", "--fasta", TINY_FASTA, "--bed", empty, "--out", out),
        str(empty),
        "no records",
    )
    unknown = tmp_path / "unknown.bed"
    unknown.write_text("chr1\t5\t6\tpeak\n")
    _one_line_error(
        cli("dataset", "--fasta", TINY_FASTA, "--bed", unknown, "--out", out),
        f"{unknown}:1:",
        "'chr1' is not in the FASTA",
    )
    _one_line_error(cli("dataset", "--reference", "nope", "--out", out), "unknown reference")
    assert not out.exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out.h5")]


def test_killed_dataset_build_leaves_no_output_and_reruns(tmp_path):
    """SIGKILL the chr1 build while it writes: no out.h5 (only a temp a re-run removes)."""
    import os
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "d.h5"
    env = dict(os.environ, OMP_NUM_THREADS="1")
    cmd = [sys.executable, "-m", "sparling_genomics.cli", "dataset", "--reference",
           "tair10-chr1", "--out", str(out)]  # fmt: skip
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.time() + 120
    while time.time() < deadline and not any(p.name.startswith(".d.h5.tmp-") for p in
                                             tmp_path.iterdir()):  # fmt: skip
        time.sleep(0.02)
    time.sleep(0.5)
    proc.send_signal(signal.SIGKILL)
    assert proc.wait() == -signal.SIGKILL
    assert not out.exists(), "the build finished before it could be killed"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".d.h5.tmp-")]
    rerun = subprocess.run([*cmd[:3], "dataset", "--reference", "tiny", "--out", str(out)],
                           env=env, capture_output=True, text=True)  # fmt: skip
    assert rerun.returncode == 0, rerun.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["d.h5"]
