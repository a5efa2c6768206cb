"""`scan`'s genome: the one the run was trained on, never a bundled default."""

import json

from tests.conftest import TINY_FASTA, TINY_GFF, retrain_in_place, train_tiny_splicing_run

OTHER = "otherchr1"


def _relabelled(folder):
    """The tiny reference with its sequence renamed: another genome, as far as names go."""
    seqid = TINY_FASTA.read_text().split(None, 1)[0][1:]
    fasta, gff = folder / "other.fa", folder / "other.gff3"
    fasta.write_text(TINY_FASTA.read_text().replace(f">{seqid}", f">{OTHER}", 1))
    lines = [OTHER + line[len(seqid):] if line.startswith(seqid + "\t") else line
             for line in TINY_GFF.read_text().splitlines()]  # fmt: skip
    gff.write_text("\n".join(lines) + "\n")
    return fasta, gff


def test_scan_without_fasta_scans_the_genome_the_run_was_trained_on(cli, tmp_path):
    from sparling_genomics.genome.dataset import build_dataset

    fasta, gff = _relabelled(tmp_path)
    dataset = tmp_path / "other.h5"
    build_dataset(dataset, fasta, annotation=gff)
    run = train_tiny_splicing_run(tmp_path / "run", dataset)
    out = tmp_path / "tracks"
    result = cli("scan", "--model", run, "--out", out, "--no-bigwig")
    assert result.returncode == 0, result.stderr
    summary = json.loads((out / "scan.json").read_text())
    assert summary["fasta"] == str(fasta)
    chroms = {line.split("\t")[0] for line in (out / "motif_sites.bed").read_text().splitlines()
              if line and not line.startswith(("track", "#"))}  # fmt: skip
    assert chroms == {OTHER}


def test_scan_of_a_run_without_a_genome_asks_for_one(cli, planted_tiny, tmp_path):
    result = cli("scan", "--model", planted_tiny.run, "--out", tmp_path / "t")
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "records no genome" in lines[0] and "--fasta" in lines[0], lines
    assert not (tmp_path / "t").exists()


def test_a_scattered_scan_gathers_into_the_same_files(cli, planted_tiny, tmp_path):
    """The tiny reference scanned whole and in 3 jobs (cut inside its one sequence, at
    chunk multiples): byte-identical BED and bigBed."""
    whole, scattered = tmp_path / "whole", tmp_path / "scattered"
    common = ("--model", planted_tiny.run, "--fasta", TINY_FASTA, "--chunk", "40000",
              "--no-bigwig")  # fmt: skip
    result = cli("scan", *common, "--out", whole)
    assert result.returncode == 0, result.stderr
    for index in (3, 1, 2):  # in any order
        result = cli("scan", *common, "--out", scattered, "--part", f"{index}/3")
        assert result.returncode == 0, result.stderr
        assert json.loads(result.stdout)["part"] == index
    assert not (scattered / "scan.json").exists()
    result = cli("scan", *common, "--out", scattered, "--gather", "3")
    assert result.returncode == 0, result.stderr
    for name in ("motif_sites.bed", "motif_sites.bb", "motif_sites.track.bed"):
        assert (scattered / name).read_bytes() == (whole / name).read_bytes(), name
    assert json.loads((scattered / "scan.json").read_text())["parts"] == 3


def test_a_gather_with_a_part_missing_or_bad_options_is_one_line(cli, planted_tiny, tmp_path):
    common = ("--model", planted_tiny.run, "--fasta", TINY_FASTA, "--out", tmp_path / "o")
    for args, message in ((("--gather", "2"), "part-0001-of-0002.npz: missing"),
                          (("--part", "3/2"), "--part '3/2': I must be between 1 and N"),
                          (("--part", "x"), "--part 'x': give I/N"),
                          (("--part", "1/2", "--gather", "2"), "--part or --gather, not both"),
                          (("--chunk", "0"), "0 is not in the range x>=1")):  # fmt: skip
        result = cli("scan", *common, *args)
        assert result.returncode == 2, args
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and message in lines[0], lines
    assert not (tmp_path / "o" / "scan.json").exists()


def test_a_fasta_replaced_under_an_older_time_is_scanned_whole(planted_tiny, tmp_path):
    """A FASTA replaced at the same path by one with more sequences and an older modification
    time (`cp -p`, `rsync -a`), beside the .fai the first scan made: every sequence is
    scanned (the stale index gave the first one only, exit 0)."""
    import os

    from sparling_genomics.runners.tracks import scan_run_to_tracks

    fasta = tmp_path / "genome.fa"
    first = planted_tiny.fasta.read_text().rstrip("\n") + "\n"
    fasta.write_text(first)
    common = {"chunk": 5000, "bigwig": False}
    assert scan_run_to_tracks(planted_tiny.run, fasta, tmp_path / "a", **common)["sequences"] == 1
    assert (tmp_path / "genome.fa.fai").is_file()
    fasta.write_text(first + first.replace(f">{planted_tiny.seqid}", ">second", 1))
    os.utime(fasta, (1_000_000_000, 1_000_000_000))
    summary = scan_run_to_tracks(planted_tiny.run, fasta, tmp_path / "b", **common)
    assert summary["sequences"] == 2 and summary["bases"] == 2 * planted_tiny.length
    chroms = {line.split("\t")[0] for line in (tmp_path / "b" / "motif_sites.bed").read_text()
              .splitlines()}  # fmt: skip
    assert chroms == {planted_tiny.seqid, "second"}


def test_a_scan_of_motifs_exported_from_other_weights_is_refused(planted_tiny, tmp_path):
    import shutil

    import pytest

    from sparling_genomics.errors import InputError
    from sparling_genomics.runners.tracks import scan_run_to_tracks

    run = retrain_in_place(shutil.copytree(planted_tiny.run, tmp_path / "run"))
    with pytest.raises(InputError) as refused:
        scan_run_to_tracks(run, planted_tiny.fasta, tmp_path / "t")
    assert str(refused.value).startswith(f"{run}/motifs/motifs.json: made from other weights "
                                         f"than {run}'s (model fingerprint ")  # fmt: skip
    assert not (tmp_path / "t").exists()
