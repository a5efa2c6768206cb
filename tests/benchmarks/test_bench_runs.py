"""Every saved run under bench_runs/ still loads and reports from its committed text evidence.

bench_runs/ keeps text only (docs/bench-runs.md): config.yaml, metrics.json, train_log.jsonl
and the motif files; reports, logos and figures are regenerated, weights are never committed.
So each run is copied without them and its report is rebuilt from the copy, as
`sparling-genomics report --model RUN` builds it.
"""

import json
import re
import shutil
import subprocess

import pytest
import yaml

from sparling_genomics.config import dump_yaml
from sparling_genomics.report.page import build_report
from sparling_genomics.train.run_config import load_saved_config
from tests.conftest import REPO

BENCH_RUNS = REPO / "bench_runs"
RUNS = sorted(
    p.parent for p in BENCH_RUNS.rglob("config.yaml") if (p.parent / "metrics.json").is_file()
)
#: What the curation rule leaves out of git (see .gitignore): never read by a report.
NOT_COMMITTED = ("checkpoints", "*.html", "*.png", "*.svg", "*.pt", "*.h5")


def _text_evidence(run, tmp_path):
    copy = tmp_path / run.name
    shutil.copytree(run, copy, ignore=shutil.ignore_patterns(*NOT_COMMITTED))
    return copy


def test_the_saved_runs_are_found():
    names = {r.relative_to(BENCH_RUNS).as_posix() for r in RUNS}
    assert "planted/sparling_seed0" in names and "splicing_before_core/sparling" in names
    assert any(n.startswith("archive/") for n in names)
    assert not any("attempt" in n for n in names if not n.startswith("archive/"))


@pytest.mark.parametrize("run", RUNS, ids=lambda r: r.relative_to(BENCH_RUNS).as_posix())
def test_saved_run_loads_and_reports(run, tmp_path):
    copy = _text_evidence(run, tmp_path)
    resolved = yaml.safe_load(dump_yaml(load_saved_config(copy / "config.yaml")))
    metrics = json.loads((copy / "metrics.json").read_text())
    assert resolved["task"] == metrics["task"] and resolved["seed"] == metrics["seed"]
    page = build_report(copy)
    assert "<h2>Test metrics</h2>" in page and "<img class=figure" in page  # annealing curve
    summary = copy / "motifs" / "motifs.json"
    if summary.is_file():  # logos redrawn from the MEME files: none is missing
        exported = json.loads(summary.read_text())
        families = (exported.get("families") or {}).get("families") or []
        logos = len(exported["motifs"]) + len(families)  # each motif's and each family's
        assert page.count("<img class=logo") == logos and "no logo" not in page


def test_a_logo_with_no_pwm_is_marked_missing_not_a_crash(tmp_path):
    copy = _text_evidence(BENCH_RUNS / "planted" / "sparling_seed0", tmp_path)
    (copy / "motifs" / "motifs.meme").unlink()
    motifs = json.loads((copy / "motifs" / "motifs.json").read_text())["motifs"]
    page = build_report(copy)
    assert page.count("no logo (neither logos/ nor motifs.meme has it)") == len(motifs)


def test_every_bench_runs_path_a_document_names_exists():
    """README, BENCHMARKS.md and docs/ name saved runs by path (the archive moved some)."""
    documents = [REPO / "README.md", REPO / "BENCHMARKS.md", *sorted((REPO / "docs").glob("*.md"))]
    missing = []
    for doc in documents:
        text = doc.read_text()
        for match in re.finditer(r"bench_runs/[\w./-]+", text):
            path = match.group().rstrip("./")
            placeholder = text[match.end() : match.end() + 1] == "<"  # e.g. seed<S>
            if not placeholder and not (REPO / path).exists():
                missing.append(f"{doc.name}: {path}")
    assert not missing


def test_bench_runs_commits_text_evidence_only():
    """The curation rule: no report, PNG, SVG, weights or dataset is tracked under bench_runs/."""
    listed = subprocess.run(["git", "ls-files", "bench_runs"], cwd=REPO, capture_output=True,
                            text=True)  # fmt: skip
    if listed.returncode != 0:
        pytest.skip("not a git checkout")
    tracked = listed.stdout.split()
    assert tracked
    assert not [p for p in tracked if p.endswith((".html", ".png", ".svg", ".pt", ".h5"))]
