"""Every saved run under bench_runs/ still loads and reports from its committed text evidence.

bench_runs/ keeps text only (docs/bench-runs.md): config.yaml, metrics.json, train_log.jsonl
and the motif files; reports, logos and figures are regenerated, weights are never committed.
So each run is copied without them and its report is rebuilt from the copy, as
`sparling-genomics report --model RUN` builds it. The folder also keeps to a size budget, each
top-level entry has a row in docs/bench-runs.md's index, and every archived run's log is
thinned (`tests/benchmarks/thin_logs.py`) to what its full log in git history gives.
"""

import json
import re
import shutil
import subprocess

import numpy as np
import pytest
import yaml

from sparling_genomics.config import dump_yaml
from sparling_genomics.export.motif_summary import read_motifs_summary
from sparling_genomics.report.page import build_report
from sparling_genomics.train.run_config import load_saved_config
from tests.benchmarks.thin_logs import MANIFEST, kept_records, run_names, thinned_text
from tests.conftest import REPO

BENCH_RUNS = REPO / "bench_runs"
RUNS = sorted(
    p.parent for p in BENCH_RUNS.rglob("config.yaml") if (p.parent / "metrics.json").is_file()
)
#: What the curation rule leaves out of git (see .gitignore): never read by a report.
NOT_COMMITTED = ("checkpoints", "*.html", "*.png", "*.svg", "*.pt", "*.h5")
#: Everything committed under bench_runs/ together, in bytes (docs/bench-runs.md, "The size
#: budget").
SIZE_BUDGET = 12_000_000


def _text_evidence(run, tmp_path):
    copy = tmp_path / run.name
    shutil.copytree(run, copy, ignore=shutil.ignore_patterns(*NOT_COMMITTED))
    return copy


def test_the_saved_runs_are_found():
    names = {r.relative_to(BENCH_RUNS).as_posix() for r in RUNS}
    assert "planted/sparling_seed0" in names and "splicing_before_core/sparling" in names
    assert any(n.startswith("archive/") for n in names)
    assert not any("attempt" in n for n in names if not n.startswith("archive/"))


#: The saved run whose report draws its logos for real; the others' reports get a stand-in
#: for each logo and metaplot (logomaker takes ~0.5 s a logo, a metaplot ~1 s, 45 of them in
#: a splicing run's report, and the drawing is the same code for every run: the tiny runs'
#: reports draw both, tests/export/test_reference_motifs.py), its motif's PWM or positions
#: block checked first.
DRAWN = {BENCH_RUNS / "planted" / "sparling_seed0"}


def _stand_in_logo(motif) -> bytes:
    probs = np.asarray(motif.probs)
    assert probs.ndim == 2 and probs.shape[1] == 4 and np.allclose(probs.sum(1), 1, atol=1e-2)
    return b"\x89PNG stand-in"


def _stand_in_metaplot(block: dict, title: str = "") -> bytes | None:
    edges = block["bin_edges"]
    for c in (block.get("classes") or {}).values():
        assert len(c["observed"]) == len(c["expected"]) == len(c["q"]) == len(edges) - 1
    return b"\x89PNG stand-in" if block.get("classes") else None


@pytest.mark.parametrize("run", RUNS, ids=lambda r: r.relative_to(BENCH_RUNS).as_posix())
def test_saved_run_loads_and_reports(run, tmp_path, monkeypatch):
    if run not in DRAWN:
        monkeypatch.setattr("sparling_genomics.report.html.logo_png", _stand_in_logo)
        monkeypatch.setattr("sparling_genomics.report.sections.positional_metaplot",
                            _stand_in_metaplot)  # fmt: skip
    copy = _text_evidence(run, tmp_path)
    resolved = yaml.safe_load(dump_yaml(load_saved_config(copy / "config.yaml")))
    metrics = json.loads((copy / "metrics.json").read_text())
    assert resolved["task"] == metrics["task"] and resolved["seed"] == metrics["seed"]
    page = build_report(copy)
    assert "<h2>Test metrics</h2>" in page and "<img class=figure" in page  # annealing curve
    exported = read_motifs_summary(copy / "motifs", missing_ok=True)
    if exported is not None:  # logos redrawn from the MEME files: none is missing
        families = (exported.get("families") or {}).get("families") or []
        logos = len(exported["motifs"]) + len(families)  # each motif's and each family's
        drawn = page.count("<img class=logo") + page.count("<img class=family-logo")
        assert drawn == logos and "no logo" not in page


def test_a_logo_with_no_pwm_is_marked_missing_not_a_crash(tmp_path):
    copy = _text_evidence(BENCH_RUNS / "planted" / "sparling_seed0", tmp_path)
    (copy / "motifs" / "motifs.meme").unlink()
    motifs = read_motifs_summary(copy / "motifs")["motifs"]
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


def _gitignore_regex(pattern: str) -> re.Pattern:
    """A .gitignore pattern as a regex over a path relative to the repository (``**/``: any
    folders, ``*`` and ``?`` within one name; a pattern without ``/`` matches a name anywhere)."""
    anchored = "/" in pattern.rstrip("/")
    parts = re.split(r"(\*\*/|\*|\?)", pattern.strip("/"))
    glob = {"**/": "(?:.*/)?", "*": "[^/]*", "?": "[^/]"}
    body = "".join(glob.get(part, re.escape(part)) for part in parts)
    return re.compile(body if anchored else f"(?:.*/)?{body}")


def _committed_files() -> list:
    """The files under bench_runs/ that git tracks; outside a git checkout, the files there
    that .gitignore does not leave out (its bench_runs/ rules and its rules for any folder)."""
    listed = subprocess.run(["git", "ls-files", "-z", "bench_runs"], cwd=REPO, capture_output=True)
    if listed.returncode == 0 and listed.stdout:
        return [REPO / p for p in listed.stdout.decode().split("\0") if (REPO / p).is_file()]
    rules = [line.strip() for line in (REPO / ".gitignore").read_text().splitlines()]
    rules = [r for r in rules if r and not r.startswith(("#", "!"))]
    rules = [r for r in rules if r.startswith("bench_runs/") or "/" not in r.rstrip("/")]
    files = [(_gitignore_regex(r), r.endswith("/")) for r in rules]

    def ignored(path) -> bool:
        rel = path.relative_to(REPO).as_posix()
        folders = ["/".join(rel.split("/")[:i]) for i in range(1, rel.count("/") + 1)]
        return any(rx.fullmatch(f) for rx, folder in files for f in (folders if folder else [rel]))

    return [p for p in sorted(BENCH_RUNS.rglob("*")) if p.is_file() and not ignored(p)]


def _indexed_names() -> set[str]:
    """What the first column of docs/bench-runs.md's "What each folder is" tables names (the
    backquoted names before any parenthesis), relative to bench_runs/."""
    text = (REPO / "docs" / "bench-runs.md").read_text()
    section = text.split("## What each folder is", 1)[1].split("\n## ", 1)[0]
    names = set()
    for row in section.splitlines():
        if row.startswith("| `"):
            cell = row.split("|")[1].split("(")[0]
            names.update(name.rstrip("/") for name in re.findall(r"`([^`]+)`", cell))
    return names


def test_the_gitignore_rules_read_outside_git_as_git_reads_them():
    rx = _gitignore_regex("bench_runs/**/*.html")
    assert rx.fullmatch("bench_runs/planted/seed0/report.html")
    assert rx.fullmatch("bench_runs/report.html") and not rx.fullmatch("bench_runs/a/b.json")
    assert _gitignore_regex("*.fai").fullmatch("bench_runs/scale/100M/genome/genome.fa.fai")
    assert _gitignore_regex("bench_runs/**/checkpoints/").fullmatch("bench_runs/a/b/checkpoints")


def test_bench_runs_fits_its_size_budget():
    """bench_runs/ is cloned with the code: its committed files stay within SIZE_BUDGET. A run
    that would break it makes room by moving superseded runs to the archive, whose logs are
    thinned, or out of the tree (docs/bench-runs.md, "The size budget"), not by raising the
    budget."""
    files = _committed_files()
    sizes = sorted((p.stat().st_size, p.relative_to(REPO).as_posix()) for p in files)[::-1]
    total = sum(size for size, _ in sizes)
    archived = sum(size for size, path in sizes if path.startswith("bench_runs/archive/"))
    biggest = ", ".join(f"{path} ({size:,})" for size, path in sizes[:5])
    assert files and total <= SIZE_BUDGET, (
        f"{total:,} bytes > {SIZE_BUDGET:,} ({archived:,} in archive/); biggest: {biggest}"
    )


def test_every_top_level_entry_of_bench_runs_is_named_in_the_index():
    """A folder at the top of bench_runs/ says what it holds and has a row in the index of
    docs/bench-runs.md (earlier attempts go under archive/); every row names what is there."""
    names = _indexed_names()
    top = {p.relative_to(BENCH_RUNS).parts[0] for p in _committed_files()}
    assert not sorted(top - names - {"archive"})  # a new folder: name it and add its row
    assert not sorted(name for name in names if not any(BENCH_RUNS.glob(name)))  # a stale row


def test_a_thinned_log_keeps_the_records_that_carry_evidence():
    records = [{"samples": 1000 * i, "phase": "anneal", "density": 0.5, "val_exact_match": 0.5}
               for i in range(30)]  # fmt: skip
    records[3]["probation"] = records[4]["probation"] = "waiting"  # on at 3, off again at 5
    records[7]["tightened"] = True
    for record in records[7:]:
        record["density"] = 0.25
    records[12]["split"] = {"source": 0, "target": 1}
    records[15]["val_exact_match"] = 0.9  # the annealing phase's best
    for record in records[20:]:
        record["phase"] = "final"
    records[25]["val_exact_match"] = 0.8  # the final phase's best
    kept = kept_records(records, every=10, pinned=[17000])  # a document quotes 17k
    assert kept == [0, 3, 5, 7, 10, 12, 15, 17, 19, 20, 25, 29]
    records.insert(2, {"phase": "core", "core_samples": 64})  # no sample count: kept
    assert 2 in kept_records(records, every=10)


def test_documents_name_an_archived_run_by_its_folder_or_attempt():
    archive = BENCH_RUNS / "archive"
    attempt = archive / "paper_domains" / "digit_circle_attempt9_x" / "digit_circle_seed0"
    assert run_names(attempt) == {"digit_circle_attempt9_x", "attempt 9"}
    assert run_names(archive / "planted_i24h" / "draw2_seed0") == {"planted_i24h"}


def _thinned_runs() -> dict:
    return json.loads(MANIFEST.read_text())["runs"]


def test_every_archived_log_is_thinned():
    """A run moved to the archive has its log thinned (docs/bench-runs.md, "Thinned training
    logs"), and the manifest counts what each thinned log holds."""
    archive = BENCH_RUNS / "archive"
    logs = {p.parent.relative_to(archive).as_posix(): p for p in archive.rglob("train_log.jsonl")}
    runs = _thinned_runs()
    assert sorted(logs) == sorted(runs)
    assert {run: logs[run].read_text().count("\n") for run in runs} == {
        run: entry["kept"] for run, entry in runs.items()
    }


def test_each_thinned_log_is_its_full_log_thinned_again():
    """Thinning the full log that git history keeps gives the committed log byte for byte."""
    for run, entry in _thinned_runs().items():
        path = f"bench_runs/archive/{run}/train_log.jsonl"
        full = subprocess.run(["git", "show", f"{entry['full_log']}:{path}"], cwd=REPO,
                              capture_output=True, text=True)  # fmt: skip
        if full.returncode != 0:
            pytest.skip("the full logs are not in this checkout's git history")
        assert full.stdout.count("\n") == entry["records"], run
        thinned = thinned_text(full.stdout, entry["every"], entry["pinned_samples"])
        assert thinned == (REPO / path).read_text(), run
