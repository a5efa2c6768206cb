"""The paper-domain benchmark: a tiny run publishes JSON, report and a BENCHMARKS.md section."""

import json

from sparling_genomics.bench.paper_domains import PAPER, run_paper_domain_benchmark


def test_tiny_digit_circle_benchmark_publishes_its_figures(tmp_path):
    md = tmp_path / "BENCHMARKS.md"
    path = run_paper_domain_benchmark(
        "digit_circle", tmp_path / "out", preset="tiny", benchmarks_md=md
    )
    result = json.loads(path.read_text())
    assert result["paper_9_seed_mean"] == PAPER["digit_circle"]
    assert set(result["floors_met"]) == {"fne", "fpe", "ce", "edit_error", "perturbation"}
    assert (tmp_path / "out" / "digit_circle_seed0" / "report.html").is_file()
    text = md.read_text()
    assert "<!-- bench:paper-digit_circle:start -->" in text and "| E2EE |" in text
    assert "bench paper-domain --task digit_circle" in text
    # A second call reuses the finished run (a killed benchmark resumes, never retrains).
    before = (tmp_path / "out" / "digit_circle_seed0" / "metrics.json").read_bytes()
    run_paper_domain_benchmark("digit_circle", tmp_path / "out", preset="tiny", benchmarks_md=md)
    after = (tmp_path / "out" / "digit_circle_seed0" / "metrics.json").read_bytes()
    assert before == after
