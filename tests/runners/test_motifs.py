"""`export`, `scan` and `report` on a tiny planted run: files, names, tracks, report."""

import html
import json
import re

import numpy as np
import pytest


def test_export_writes_every_format_and_a_summary(planted_tiny):
    out = planted_tiny.run / "motifs"
    summary = json.loads((out / "motifs.json").read_text())
    names = {"motifs.meme", "motifs.jaspar", "motifs.transfac", "motifs.homer", "tomtom.tsv",
             "motifs.json", "logos"}  # fmt: skip
    assert names <= {p.name for p in out.iterdir()}
    ids = [m["id"] for m in summary["motifs"]]
    assert len(ids) + len(summary["silent_channels"]) == 6
    for m in summary["motifs"]:
        assert (out / "logos" / f"{m['id']}.png").is_file()
        assert 0 < m["best_match"]["p_value"] <= 1
        assert m["name"] is None or m["best_match"]["q_value"] < 0.05
    assert 0.0 <= summary["shuffled_control"]["false_match_rate"] <= 1.0


def _bed(planted_tiny):
    rows = [line.split("\t") for line in (planted_tiny.tracks / "motif_sites.bed").read_text()
            .splitlines()]  # fmt: skip
    assert rows, "the scan found no sites"
    return rows


def test_scan_bed9_is_valid_sorted_and_in_sequence_coordinates(planted_tiny):
    import pybedtools

    rows = _bed(planted_tiny)
    summary = json.loads((planted_tiny.run / "motifs" / "motifs.json").read_text())
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


def test_report_is_self_contained_and_names_every_motif(planted_tiny):
    text = planted_tiny.report.read_text()
    summary = json.loads((planted_tiny.run / "motifs" / "motifs.json").read_text())
    for m in summary["motifs"]:
        assert m["id"] in text and m["consensus"] in text
    sources = re.findall(r'src="([^"]+)"', text)
    assert len(sources) >= len(summary["motifs"]) + 2  # logos + annealing + motif errors
    assert all(s.startswith("data:image/png;base64,") for s in sources)
    assert "http://" not in text and "https://" not in text
    assert "Motif errors against density" in text or "motif errors against density" in text
    assert "Genome scan" in text
    # The identifiability verdict, as the run's metrics hold it.
    verdict = json.loads((planted_tiny.run / "metrics.json").read_text())["identifiability"]
    assert "<h2>Identifiability</h2>" in text and html.escape(verdict["verdict"]) in text


def test_missing_checkpoint_is_one_line_error(cli, tmp_path):
    (tmp_path / "config.yaml").write_text("task: planted\n")
    result = cli("export", "--model", tmp_path)
    assert result.returncode == 2 and "has no checkpoints/final.pt" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


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


def test_report_of_an_unfinished_run_is_one_line_error(cli, tmp_path):
    (tmp_path / "config.yaml").write_text("task: planted\n")
    result = cli("report", "--model", tmp_path, "--out", tmp_path / "r.html")
    assert result.returncode == 2 and "metrics.json" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "r.html").exists()


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


def test_export_clusters_the_motifs_into_families(planted_tiny):
    from sparling_genomics.export.formats import read_meme_motifs

    out = planted_tiny.run / "motifs"
    summary = json.loads((out / "motifs.json").read_text())
    block = summary["families"]
    members = [m["id"] for f in block["families"] for m in f["members"]]
    assert sorted(members) == sorted(m["id"] for m in summary["motifs"])  # each in one family
    for f in block["families"]:
        assert all(m["family"] == f["id"] for m in summary["motifs"] if m["id"] in
                   {x["id"] for x in f["members"]})  # fmt: skip
        assert 0 < f["nsites"] <= f["member_sites"]  # merged sites: de-duplicated
        assert (out / "families" / "logos" / f"{f['id']}.png").is_file()
    meme = read_meme_motifs(out / block["files"]["meme"])
    assert [k.split()[0] for k in meme] == [f["id"] for f in block["families"]]
    assert {"jaspar", "transfac", "homer", "sites", "tomtom"} <= set(block["files"])
    assert 0.0 <= block["near_copies"]["fraction"] <= 1.0


def test_report_leads_with_families_and_shows_seed_stability(planted_tiny, cli, tmp_path):
    page = planted_tiny.report.read_text()
    assert page.index("<h2>Motif families</h2>") < page.index("<h2>Motifs</h2>")
    # Top-down: the families before the checks and the training curves; the per-channel
    # tables below them, collapsed.
    assert page.index("<h2>Motif families</h2>") < page.index("Identifiability check")
    assert page.index("<h2>Motif families</h2>") < page.index("<h2>Training</h2>")
    assert "<details><summary>Per-channel table and positions</summary>" in page
    assert "Not measured for this run" in page  # one seed: said, not hidden
    table = tmp_path / "stability.json"
    # The run against itself: every family recurs (a smoke test of the verb and the section).
    result = cli("stability", "--model", planted_tiny.run, "--model", planted_tiny.run,
                 "--out", table)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert json.loads(table.read_text())["fraction_reproduced"] == 1.0
    report = tmp_path / "report.html"
    result = cli("report", "--model", planted_tiny.run, "--stability", table, "--out", report)
    assert result.returncode == 0, result.stderr
    page = report.read_text()
    assert "<h2>Seed stability</h2>" in page and "Not measured" not in page
    assert page.index("<h2>Seed stability</h2>") < page.index("<h2>Motifs</h2>")


def test_core_channels_are_exported_marked_and_named_for_their_class(cli, tiny_dataset, tmp_path):
    run = tmp_path / "run"
    trained = cli("train", "--task", "splicing", "--preset", "tiny", "--dataset", tiny_dataset,
                  "--out", run, "--no-progress", "--set", "train.core_samples=2000")  # fmt: skip
    assert trained.returncode == 0, trained.stderr
    exported = cli("export", "--model", run, "--min-sites", "1")
    assert exported.returncode == 0, exported.stderr
    summary = json.loads((run / "motifs" / "motifs.json").read_text())
    marked = {m["channel"]: m["core"] for m in summary["motifs"] if m["core"]}
    assert marked == {8: "acceptor", 9: "donor"}  # after the 8 learned channels
    meme = (run / "motifs" / "motifs.meme").read_text()
    assert "MOTIF sparling_c08 core_acceptor" in meme and "MOTIF sparling_c09 core_donor" in meme


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
