"""BENCHMARKS.md's fixed order and summary table (``benchmarks/summary.py``): sections in
SECTION_ORDER with their prose, summary rows from made-up JSON, the real file already tidy; the
identifiability benchmark's table of every run in docs/bench-runs.md. Text and JSON only."""

import json
import re

from benchmarks.headlines import measured_on
from benchmarks.report import HEADER, update_section
from benchmarks.sections import (
    SECTION_ORDER,
    SUMMARY_END,
    SUMMARY_START,
    base_name,
    github_anchor,
    split_sections,
)
from benchmarks.summary import tidy_text
from sparling_genomics.rundir import config_path, metrics_path
from tests.conftest import REPO

MACHINE = {"cpu": "CPU", "cores": 2, "torch_threads": 2, "memory_gb": 8, "python": "3.11",
           "torch": "2", "cuda": None}  # fmt: skip


def _section(name: str, body: str) -> str:
    return f"<!-- bench:{name}:start -->\n{body}\n<!-- bench:{name}:end -->"


def _rows(text: str) -> dict[str, list[str]]:
    """The summary's rows by their section's link text (or name): [figure, floor, verdict,
    date]."""
    block = text.split(SUMMARY_START, 1)[1].split(SUMMARY_END, 1)[0]
    rows = {}
    for line in block.splitlines()[7:]:
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        label = re.sub(r"^\[(.*)\]\(#.*\)$", r"\1", cells[0]).strip("`")
        rows[label] = cells[1:]
    return rows


def test_sections_come_out_in_the_fixed_order_with_their_prose():
    text = "\n\n".join([
        HEADER.rstrip(),
        _section("concepts", "## Concepts"), "Notes on concepts.",
        _section("planted model.hidden=64", "## Planted, wider"), "Why wider.",
        _section("a-new-one", "## New"),
        _section("pipeline", "## Pipeline"),
        _section("planted", "## Planted"), "Planted notes,\n\nin two paragraphs.",
        _section("variants, longer run", "## Variants, longer"),
        _section("planted model.sparse.block_size=1", "## Planted, blocks"),
        _section("variants", "## Variants"), "### A heading in the notes\n\nAbout variants.",
    ]) + "\n"  # fmt: skip
    tidied = tidy_text(text, REPO)
    _, sections = split_sections(tidied)
    assert [s.name for s in sections] == [
        "pipeline", "variants", "variants, longer run", "planted", "planted model.hidden=64",
        "planted model.sparse.block_size=1", "concepts", "a-new-one"]  # fmt: skip
    prose = {s.name: s.prose.strip() for s in sections}
    assert prose["concepts"] == "Notes on concepts."
    assert prose["planted model.hidden=64"] == "Why wider."
    assert prose["planted"] == "Planted notes,\n\nin two paragraphs."
    assert prose["variants"] == "### A heading in the notes\n\nAbout variants."
    assert prose["pipeline"] == prose["a-new-one"] == ""
    # the header, then the summary, then the sections
    assert tidied.startswith(HEADER.rstrip() + "\n\n" + SUMMARY_START)
    assert tidied.index(SUMMARY_END) < tidied.index("<!-- bench:pipeline:start -->")
    assert list(_rows(tidied)) == ["Pipeline", "Variants", "Variants, longer", "Planted",
                                   "Planted, wider", "Planted, blocks", "Concepts", "New"]
    assert tidy_text(tidied, REPO) == tidied  # tidy is a fixed point


def test_a_new_section_is_put_in_its_place_and_the_summary_follows(tmp_path):
    md = tmp_path / "BENCHMARKS.md"
    update_section(md, "concepts", "## Concepts")
    update_section(md, "pipeline", "## Pipeline")
    update_section(md, "planted", "## Planted")
    update_section(md, "pipeline composite", "## Pipeline, composite")
    names = [s.name for s in split_sections(md.read_text())[1]]
    assert names == ["pipeline", "pipeline composite", "planted", "concepts"]
    assert md.read_text().count(SUMMARY_START) == 1
    assert list(_rows(md.read_text())) == ["Pipeline", "Pipeline, composite", "Planted",
                                           "Concepts"]  # fmt: skip


def test_variants_and_unknown_names():
    assert base_name("planted") == "planted"
    assert base_name("planted model.hidden=64") == "planted"
    assert base_name("planted-data") == "planted-data"
    assert base_name("variants, longer run") == "variants"
    assert base_name("pipeline composite") == "pipeline"
    assert base_name("plantedx") is None and base_name("scale-up") is None
    assert len(set(SECTION_ORDER)) == len(SECTION_ORDER)


def test_github_anchors():
    seen = {}
    assert github_anchor("Planted motifs (issues 2, 24), with `model.hidden=64`", seen) == (
        "planted-motifs-issues-2-24-with-modelhidden64")
    assert github_anchor("Sparse layer speed (forward + backward)", seen) == (
        "sparse-layer-speed-forward--backward")
    assert github_anchor("Concepts after training vs Sparling's motifs", seen) == (
        "concepts-after-training-vs-sparlings-motifs")
    assert github_anchor("Sparse layer speed (forward + backward)", seen) == (
        "sparse-layer-speed-forward--backward-1")


def _write(path, result):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result))
    return path


def test_summary_rows_from_made_up_json(tmp_path):
    machine = MACHINE | {"date": "2026-01-02 03:04 UTC"}
    _write(tmp_path / "runs/pipe/bench_pipeline.json",
           {"benchmark": "pipeline", "machine": machine, "wall_seconds": 3000.0})
    _write(tmp_path / "runs/scan/bench_scan.json",
           {"benchmark": "scan", "machine": machine, "bases": 30_000_000,
            "ours": {"total_seconds": 75.0}})
    _write(tmp_path / "runs/sparse_layer.json",  # no ``benchmark`` field: by its file name
           {"machine": MACHINE | {"date": "2025-12-31 23:00 UTC"},
            "rows": [{"speedup": 2.5}, {"speedup": 4.0}]})
    _write(tmp_path / "runs/planted/bench_planted.json", {
        "benchmark": "planted", "machine": machine,
        "runs": {"sparling": [{"seed": 0, "exact_match": 0.97}, {"seed": 1, "exact_match": 0.95}],
                 "fixed_density": [{"seed": 0, "exact_match": 0.10}],  # an ablation: not judged
                 "draw1": [{"seed": 0, "exact_match": 0.91}]}})  # fmt: skip
    _write(tmp_path / "runs/low/bench_planted.json", {
        "benchmark": "planted", "machine": machine,
        "runs": {"sparling": [{"seed": 0, "exact_match": 0.97}],
                 "draw2": [{"seed": 0, "exact_match": 0.85}]}})  # fmt: skip
    _write(tmp_path / "runs/paper/bench_digit_circle.json", {
        "benchmark": "paper_digit_circle", "task": "digit_circle", "machine": machine,
        "seeds": [0, 1], "ours": {"fne": 0.01, "fpe": 0.02, "ce": 0.03, "edit_error": 0.05},
        "floors_met": {"fne": True, "fpe": True, "ce": True, "edit_error": False}})
    _write(tmp_path / "runs/odd/bench_scan.json", {"benchmark": "scan", "ours": {}})
    # no machine: the newest date anywhere in it
    _write(tmp_path / "runs/apply/bench_apply.json", {
        "benchmark": "apply", "steps": [{"finished": "2026-03-01 10:00 UTC"},
                                        {"finished": "2026-03-04 09:00 UTC"}],
        "applied": [{"genome": "other", "sparling": {"own": {"mean_topk": 0.8},
                                                      "other": {"mean_topk": 0.6}}}]})  # fmt: skip
    text = "\n\n".join([
        HEADER.rstrip(),
        _section("pipeline", "## Pipeline\n\nJSON: `runs/pipe/bench_pipeline.json`."),
        _section("scan", "## Scan\n\nJSON: `runs/scan/bench_scan.json`."),
        _section("sparse-layer", "## Sparse\n\nCommand: `... --out runs/sparse_layer.json`"),
        _section("planted", "## Planted\n\nJSON: `runs/planted/bench_planted.json`."),
        _section("planted x=1", "## Planted low\n\nJSON: `runs/low/bench_planted.json`."),
        _section("paper-digit_circle", "## Digits\n\nJSON: `runs/paper/bench_digit_circle.json`."),
        _section("scan-load", "## Gone\n\nJSON: `runs/gone/bench_scan_load.json`."),
        _section("scan odd", "## Odd\n\nJSON: `runs/odd/bench_scan.json`."),
        _section("apply", "## Apply\n\nJSON: `runs/apply/bench_apply.json`."),
    ]) + "\n"  # fmt: skip
    rows = _rows(tidy_text(text, tmp_path))
    assert rows["Pipeline"] == ["50.0 min wall clock", "<= 60 min", "met", "2026-01-02"]
    assert rows["Scan"] == ["75.0 s, whole `scan` of 30.0 Mb", "<= 60 s", "not met",
                            "2026-01-02"]  # fmt: skip
    assert rows["Sparse"] == ["2.50-4.00x faster than `sparling`'s layer (2 shapes)", "no floor",
                              "no floor", "2025-12-31"]  # fmt: skip
    assert rows["Planted"][0] == "lowest exact match 91.00% (draw1; 2 seeds, 1 draw)"
    assert rows["Planted"][2] == "met"
    assert rows["Planted low"][:3] == ["lowest exact match 85.00% (draw2; 1 seed, 1 draw)",
                                       ">= 90% exact match on every seed and draw", "not met"]
    assert rows["Digits"][0] == "FNE 1.00%, FPE 2.00%, CE 3.00%, E2EE 5.00% (mean of 2 seeds)"
    assert rows["Digits"][1:3] == ["FNE, FPE, CE <= 10%; E2EE <= 3%", "not met (3 of 4 met)"]
    assert rows["Gone"] == ["see section", "-", "-", "-"]  # its JSON is not there
    assert rows["Odd"] == ["see section", "-", "-", "-"]  # a JSON of another shape
    assert rows["Apply"] == ["other: other / own genome mean top-k, Sparling 0.750", "no floor",
                             "no floor", "2026-03-04"]  # fmt: skip


def test_the_date_of_a_measurement():
    assert measured_on({"machine": {"date": "2026-12-05 13:26 UTC"}, "x": "2027-01-01"}) == (
        "2026-12-05")
    assert measured_on({"date": "2026-02-03T04:05"}) == "2026-02-03"
    assert measured_on({"sizes": {"1G": {"finished": "2026-12-07 01:00 UTC"},
                                  "1M": {"finished": "2026-12-06 01:00 UTC"}}}) == "2026-12-07"
    assert measured_on({"rows": [1, 2]}) is None


def test_the_real_benchmarks_md_is_tidy_and_opens_with_its_summary():
    """Rerun ``python -m benchmarks tidy`` and commit if this fails after a JSON changed."""
    text = (REPO / "BENCHMARKS.md").read_text()
    assert tidy_text(text, REPO) == text
    header, rest = text.split(SUMMARY_START, 1)
    assert header.startswith("# Benchmarks") and "<!-- bench:" not in header
    _, sections = split_sections(text)
    assert len(_rows(text)) == len(sections) > 10
    anchors, seen = set(), {}
    for line in text.splitlines():
        if re.match(r"#{1,6} ", line):
            anchors.add(github_anchor(line.lstrip("#").strip(), seen))
    assert set(re.findall(r"\]\(#([^)]+)\)", rest)) <= anchors  # every link finds its heading


def test_the_documents_links_into_benchmarks_md_find_their_headings():
    seen, anchors = {}, set()
    for line in (REPO / "BENCHMARKS.md").read_text().splitlines():
        if re.match(r"#{1,6} ", line):
            anchors.add(github_anchor(line.lstrip("#").strip(), seen))
    documents = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    missing = [f"{doc.name}: {a}" for doc in documents
               for a in re.findall(r"BENCHMARKS\.md#([\w-]+)", doc.read_text())
               if a not in anchors]  # fmt: skip
    assert not missing


def test_identifiability_writes_its_counts_to_benchmarks_md_and_its_table_to_docs(tmp_path):
    from benchmarks.identifiability import RUNS_SECTION, run_identifiability_benchmark

    run = tmp_path / "runs" / "one"
    run.mkdir(parents=True)
    config_path(run).write_text("task: planted\n")
    verdict = "conditions met: motif errors are bounded by the end-to-end error (3.0%)"
    block = {"status": "met", "verdict": verdict,
             "conditions": {"density": {"ratio": 1.02}, "end_to_end": {"error": 0.03},
                            "necessity": {"min_alpha": 0.3, "unnecessary": []}},
             "channels": {"dead": [], "alpha": {"0": 0.5, "1": 0.4}, "density_spread": 1.2}}
    metrics_path(run).write_text(json.dumps({"task": "planted", "seed": 0,
                                             "identifiability": block}))  # fmt: skip
    md = tmp_path / "BENCHMARKS.md"
    update_section(md, "planted", "## Planted")
    out = run_identifiability_benchmark([tmp_path / "runs"], tmp_path / "idf.json",
                                        benchmarks_md=md)  # fmt: skip
    assert json.loads(out.read_text())["counts"]["met"] == 1
    text = md.read_text()
    docs = (tmp_path / "docs" / "bench-runs.md").read_text()
    assert "Met 1, fails 0" in text and "| dead | idle |" not in text and verdict not in text
    assert "(docs/bench-runs.md#identifiability-of-every-saved-run)" in text
    assert f"<!-- bench:{RUNS_SECTION}:start -->" in docs and "| dead | idle |" in docs
    assert f"| `{run}` | planted | 0 | met |" in docs and verdict in docs
    assert "(../BENCHMARKS.md#identifiability-of-the-benchmark-runs-issue-24)" in docs
    assert SUMMARY_START not in docs  # another document: no summary, no reordering
    assert _rows(text)["Identifiability of the benchmark runs (issue 24)"][0] == (
        "1 run: met 1, fails 0, no sparse layer 0, not checked 0")
    # a rerun replaces the docs section and keeps what else the page holds
    (tmp_path / "docs" / "bench-runs.md").write_text("# Runs\n\nHand-written.\n\n" + docs)
    run_identifiability_benchmark([tmp_path / "runs"], tmp_path / "idf.json", benchmarks_md=md)
    again = (tmp_path / "docs" / "bench-runs.md").read_text()
    assert again.startswith("# Runs\n\nHand-written.") and again.count(RUNS_SECTION) == 2
