"""`scan` on a tiny planted run: BED9, bigBed, bigWig and browser files, one-line errors, a
killed scan, a scattered scan; its genome: the one the run was trained on, never a bundled
default."""

import json
import re

import numpy as np
import pytest

from sparling_genomics.export.motif_summary import read_motifs_summary
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


def _bed(planted_tiny):
    rows = [line.split("\t") for line in (planted_tiny.tracks / "motif_sites.bed").read_text()
            .splitlines()]  # fmt: skip
    assert rows, "the scan found no sites"
    return rows


def test_scan_bed9_is_valid_sorted_and_in_sequence_coordinates(planted_tiny):
    import pybedtools

    rows = _bed(planted_tiny)
    summary = read_motifs_summary(planted_tiny.run / "motifs")
    colours = {}
    for row in rows:
        assert len(row) == 9
        chrom, start, end, name, score, strand, ts, te, rgb = row
        start, end, ts, te, score = int(start), int(end), int(ts), int(te), int(score)
        assert chrom == planted_tiny.seqid  # the FASTA's name, exactly
        assert 0 <= start < end <= planted_tiny.length
        assert 0 <= score <= 1000 and strand in "+-"
        assert (start <= ts < te <= end and te == ts + 1) or ts == te == start
        motif = name.split(":")[0]
        assert colours.setdefault(motif, rgb) == rgb  # one colour per motif
        assert re.fullmatch(r"\d+,\d+,\d+", rgb)
    # Sites are named family/motif; named motifs carry their JASPAR name after a colon.
    for m in summary["motifs"]:
        label = f"{m['family']}/{m['id']}"
        names = {r[3] for r in rows if r[3].split(":")[0] == label}
        if names and m["name"]:
            assert names == {f"{label}:{m['name'].replace(' ', '_')}"}
    families = {f["id"] for f in summary["families"]["families"]}
    assert {r[3].split(":")[0].split("/")[0] for r in rows} <= families
    # bedtools' own sort leaves the order (chromosome, start) unchanged.
    genome = planted_tiny.base / "genome.txt"
    genome.write_text(f"{planted_tiny.seqid}\t{planted_tiny.length}\n")
    resorted = pybedtools.BedTool(str(planted_tiny.tracks / "motif_sites.bed")).sort(g=str(genome))
    assert [(f.chrom, f.start) for f in resorted] == [(r[0], int(r[1])) for r in rows]
    track = (planted_tiny.tracks / "motif_sites.bed.track").read_text()
    assert track.startswith("track name=") and 'itemRgb="On"' in track


def test_bigbed_and_bigwig_hold_the_scanned_sites(planted_tiny):
    import pybigtools

    rows = _bed(planted_tiny)
    bb = pybigtools.open(str(planted_tiny.tracks / "motif_sites.bb"))
    assert bb.chroms() == {planted_tiny.seqid: planted_tiny.length}
    entries = list(bb.records(planted_tiny.seqid, 0, planted_tiny.length))
    assert len(entries) == len(rows)
    assert [(e[0], e[1]) for e in entries] == [(int(r[1]), int(r[2])) for r in rows]
    scan = json.loads((planted_tiny.tracks / "scan.json").read_text())
    wigs = [f for f in scan["files"] if f.endswith(".bw")]
    assert wigs
    for name in wigs:
        bw = pybigtools.open(str(planted_tiny.tracks / name))
        values = bw.values(planted_tiny.seqid, 0, planted_tiny.length, fillna=None)
        motif = name[: -len(".bw")]
        thick = [int(r[6]) for r in rows if r[3].split(":")[0] == motif and r[6] != r[7]]
        # Each site's base has a positive activation in its motif's track.
        assert all(values[p] > 0 for p in thick)
        assert np.nanmax(values) > 0


@pytest.mark.parametrize(
    "content, message",
    [("", "holds no sequences"), ("just some text\n", "")],
)
def test_scan_of_a_fasta_without_sequences_is_one_line_error(cli, planted_tiny, tmp_path,
                                                             content, message):  # fmt: skip
    fasta = tmp_path / "empty.fa"
    fasta.write_text(content)
    out = tmp_path / "tracks"
    result = cli("scan", "--model", planted_tiny.run, "--fasta", fasta, "--out", out)
    assert result.returncode == 2, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and str(fasta) in result.stderr
    assert message in result.stderr
    assert not out.exists()


def test_scan_with_an_unparsable_motif_file_is_one_line_error(cli, planted_tiny, tmp_path):
    import shutil

    motifs = tmp_path / "motifs"
    shutil.copytree(planted_tiny.run / "motifs", motifs)
    (motifs / "motifs.meme").write_text("MEME version 4\n\nMOTIF x\nletter-probability matrix\n"
                                        "0.5 0.5 nonsense\n")  # fmt: skip
    out = tmp_path / "tracks"
    result = cli("scan", "--model", planted_tiny.run, "--fasta", planted_tiny.fasta,
                 "--motifs", motifs, "--out", out)  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "motifs.meme" in result.stderr
    assert not out.exists()


def test_killed_scan_leaves_only_whole_files_and_a_rerun_redoes_it(planted_tiny, tmp_path):
    """SIGKILL a scan after its first output file: scan.json (the completion mark) is absent,
    every file present is whole, and a re-run gives the uninterrupted run's outputs."""
    import os
    import signal
    import subprocess
    import sys
    import time

    text = planted_tiny.fasta.read_text().splitlines()
    big = tmp_path / "big.fa"
    body = "\n".join(text[1:])
    big.write_text("".join(f">copy{i}\n{body}\n" for i in range(40)))
    out = tmp_path / "tracks"
    cmd = [sys.executable, "-m", "sparling_genomics.cli", "scan", "--model", str(planted_tiny.run),
           "--fasta", str(big), "--out", str(out)]  # fmt: skip
    env = dict(os.environ, OMP_NUM_THREADS="1")
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.time() + 120
    while time.time() < deadline and not (out / "motif_sites.bed").exists():
        time.sleep(0.005)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert not (out / "scan.json").exists(), "the scan finished before it could be killed"
    bed = out / "motif_sites.bed"
    if bed.exists():
        rows = [line.split("\t") for line in bed.read_text().splitlines()]
        assert all(len(r) == 9 for r in rows)
    again = subprocess.run(cmd, env=env, capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    whole = tmp_path / "whole"
    done = subprocess.run([*cmd[:-1], str(whole)], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert bed.read_bytes() == (whole / "motif_sites.bed").read_bytes()
    assert sorted(p.name for p in out.iterdir()) == sorted(p.name for p in whole.iterdir())


def test_scan_writes_browser_files_naming_its_own_tracks(planted_tiny):
    """scan.json lists the BED with its track line, the IGV session, igv.json and the hub;
    each names files that exist; the report links them relative to itself."""
    import xml.etree.ElementTree as ET

    from tests.export.test_browser import _check_hub

    tracks = planted_tiny.tracks
    scan = json.loads((tracks / "scan.json").read_text())
    browser = scan["browser"]
    assert all((tracks / f).is_file() for f in scan["files"])
    for key in ("track_bed", "igv_session", "igv_config", "hub"):
        assert browser[key] in scan["files"]
    assert f"hub/{browser['hub_genome']}.2bit" in scan["files"]
    with_line = (tracks / browser["track_bed"]).read_text()
    assert with_line == ((tracks / "motif_sites.bed.track").read_text()
                         + (tracks / "motif_sites.bed").read_text())  # fmt: skip
    wigs = [f for f in scan["files"] if f.endswith(".bw")]
    session = ET.parse(tracks / browser["igv_session"]).getroot()
    assert session.get("genome") == str(planted_tiny.fasta.resolve())  # indexed, outside OUT
    assert [r.get("path") for r in session.iter("Resource")] == ["motif_sites.bb", *wigs]
    config = json.loads((tracks / browser["igv_config"]).read_text())
    assert (tracks / config["reference"]["twoBitURL"]).is_file()
    assert [t["url"] for t in config["tracks"]] == ["motif_sites.bb", *wigs]
    _, genome, stanzas = _check_hub(tracks / "hub")
    assert genome["genome"] == browser["hub_genome"] == "piece"
    assert [s["bigDataUrl"] for s in stanzas if "bigDataUrl" in s] == [
        f"../{f}" for f in ["motif_sites.bb", *wigs]]  # fmt: skip
    report = planted_tiny.report.read_text()
    for file in (browser["igv_session"], browser["igv_config"], browser["hub"]):
        assert f'href="tracks/{file}"' in report


def test_export_and_scan_record_the_model_they_came_from(planted_tiny):
    from sparling_genomics.train.provenance import run_fingerprint

    fingerprint = run_fingerprint(planted_tiny.run)
    assert json.loads((planted_tiny.run / "motifs" / "motifs.json").read_text())["model"] \
        == fingerprint  # fmt: skip
    assert json.loads((planted_tiny.tracks / "scan.json").read_text())["model"] == fingerprint


def test_report_refuses_a_scan_of_another_model(planted_tiny, tmp_path):
    import shutil

    from sparling_genomics.errors import InputError
    from sparling_genomics.report.page import build_report
    from sparling_genomics.train.provenance import run_fingerprint
    from tests.conftest import retrain_in_place

    run = retrain_in_place(shutil.copytree(planted_tiny.run, tmp_path / "run"))
    with pytest.raises(InputError, match=r"motifs/motifs.json: made from other weights"):
        build_report(run)  # its motifs: the weights before
    summary = run / "motifs" / "motifs.json"
    summary.write_text(json.dumps({**json.loads(summary.read_text()),
                                   "model": run_fingerprint(run)}))  # exported again
    build_report(run)
    with pytest.raises(InputError) as refused:
        build_report(run, scan_dir=planted_tiny.tracks)  # the scan of the other weights
    assert str(refused.value).startswith(f"{planted_tiny.tracks}/scan.json: made from other "
                                         f"weights than {run}'s")  # fmt: skip


def test_a_fasta_replaced_under_an_older_time_is_scanned_whole(planted_tiny, tmp_path):
    """A FASTA replaced at the same path by one with more sequences and an older modification
    time (`cp -p`, `rsync -a`), beside the .fai the first scan made: every sequence is
    scanned (the stale index gave the first one only, exit 0)."""
    import os

    from sparling_genomics.runners.scan import scan_run_to_tracks

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
    from sparling_genomics.runners.scan import scan_run_to_tracks

    run = retrain_in_place(shutil.copytree(planted_tiny.run, tmp_path / "run"))
    with pytest.raises(InputError) as refused:
        scan_run_to_tracks(run, planted_tiny.fasta, tmp_path / "t")
    assert str(refused.value).startswith(f"{run}/motifs/motifs.json: made from other weights "
                                         f"than {run}'s (model fingerprint ")  # fmt: skip
    assert not (tmp_path / "t").exists()


def test_sites_carry_their_consensus_family_across_seeds(cli, planted_tiny, tmp_path):
    """`scan --stability`: each BED name starts with its family's consensus family (the run
    against itself: every family in 2 of 2), one colour per consensus family, the map in
    scan.json; a JSON that does not hold the run, or measured nothing, is one line."""
    table = tmp_path / "stability.json"
    result = cli("stability", "--model", planted_tiny.run, "--model", planted_tiny.run,
                 "--out", table)  # fmt: skip
    assert result.returncode == 0, result.stderr
    rows = json.loads(table.read_text())["consensus"]["families"]
    group = {r["family"]: r["group"] for r in rows if r["seed"] == rows[0]["seed"]}
    out = tmp_path / "tracks"
    result = cli("scan", "--model", planted_tiny.run, "--fasta", planted_tiny.fasta, "--out", out,
                 "--no-bigwig", "--stability", table)  # fmt: skip
    assert result.returncode == 0, result.stderr
    bed = [line.split("\t") for line in (out / "motif_sites.bed").read_text().splitlines()]
    assert bed
    colours: dict[str, set] = {}
    for row in bed:
        consensus, family, motif = row[3].split(":")[0].split("/")
        assert group[family] == consensus and re.fullmatch(r"c\d\d", consensus)
        colours.setdefault(consensus, set()).add(row[8])
    assert all(len(c) == 1 for c in colours.values())
    summary = json.loads((out / "scan.json").read_text())
    assert set(summary["consensus"].values()) <= set(group.values())
    # Without it: the names of before, the same sites.
    plain = [line.split("\t") for line in
             (planted_tiny.tracks / "motif_sites.bed").read_text().splitlines()]  # fmt: skip
    assert [r[3].split("/", 1)[1] for r in bed] == [r[3] for r in plain]
    assert [r[:3] + r[4:8] for r in bed] == [r[:3] + r[4:8] for r in plain]
    one = tmp_path / "one.json"
    assert cli("stability", "--model", planted_tiny.run, "--out", one).returncode == 0
    other = json.loads(table.read_text())
    other["runs"] = [str(tmp_path / "elsewhere"), str(tmp_path / "elsewhere2")]
    stranger = tmp_path / "stranger.json"
    stranger.write_text(json.dumps(other))
    for bad, message in ((one, "no consensus across seeds"), (stranger, "is not one of its runs")):
        result = cli("scan", "--model", planted_tiny.run, "--fasta", planted_tiny.fasta,
                     "--out", tmp_path / "t2", "--no-bigwig", "--stability", bad)  # fmt: skip
        assert result.returncode == 2 and message in result.stderr and str(bad) in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1 and not (tmp_path / "t2").exists()
