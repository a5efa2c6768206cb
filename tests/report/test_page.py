"""`report` on a tiny planted run (exported and scanned): self-contained, families first,
seed stability, one-line errors."""

import html
import json
import re

from sparling_genomics.export.motif_summary import read_motifs_summary


def test_report_is_self_contained_and_names_every_motif(planted_tiny):
    text = planted_tiny.report.read_text()
    summary = read_motifs_summary(planted_tiny.run / "motifs")
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


def test_report_of_an_unfinished_run_is_one_line_error(cli, tmp_path):
    (tmp_path / "config.yaml").write_text("task: planted\n")
    result = cli("report", "--model", tmp_path, "--out", tmp_path / "r.html")
    assert result.returncode == 2 and "metrics.json" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "r.html").exists()


def test_report_leads_with_families_and_shows_seed_stability(planted_tiny, cli, tmp_path):
    page = planted_tiny.report.read_text()
    assert page.index("<h2>Motif families</h2>") < page.index("<h2>Motifs</h2>")
    # Top-down: the families before the checks and the training curves; the per-channel
    # tables below them, collapsed.
    assert page.index("<h2>Motif families</h2>") < page.index("Identifiability check")
    assert page.index("<h2>Motif families</h2>") < page.index("<h2>Training</h2>")
    assert "<details><summary>Per-channel table and positions</summary>" in page
    # One seed: said first, not hidden.
    assert page.index("Reproducibility was not measured") < page.index("<h2>Motif families</h2>")
    table = tmp_path / "stability.json"
    # The run against itself: every family recurs (a smoke test of the verb and the section).
    result = cli("stability", "--model", planted_tiny.run, "--model", planted_tiny.run,
                 "--out", table)  # fmt: skip
    assert result.returncode == 0, result.stderr
    stability = json.loads(table.read_text())
    assert stability["fraction_reproduced"] == 1.0
    report = tmp_path / "report.html"
    result = cli("report", "--model", planted_tiny.run, "--stability", table, "--out", report)
    assert result.returncode == 0, result.stderr
    page = report.read_text()
    assert "not measured" not in page
    # The consensus first: every family in 2 of 2 seeds, a logo from each seed's run.
    first = page.index("<h2>Families across seeds</h2>")
    assert first < page.index("<h2>Motif families</h2>") < page.index("<h2>Seed stability</h2>")
    groups = stability["consensus"]["groups"]
    assert groups and all(g["recurs"] == "2 of 2" for g in groups)
    consensus = page[first : page.index("<h2>Motif families</h2>")]
    members = sum(len(ids) for g in groups for ids in g["members"].values())
    assert consensus.count("<img class=seed-logo") == members and "no logo" not in consensus
    assert page.index("<h2>Seed stability</h2>") < page.index("<h2>Motifs</h2>")
