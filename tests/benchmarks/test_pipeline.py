"""The pipeline benchmark: rule timings, each genome's split and the jobs' metrics of a
finished run, into its own BENCHMARKS.md section."""

import json
import shutil

from benchmarks.pipeline import run_pipeline_benchmark


def test_a_finished_run_gives_its_rules_split_and_metrics_in_the_named_section(tmp_path,
                                                                             tiny_dataset):
    work = tmp_path / "work"
    (work / "timings" / "tiny").mkdir(parents=True)
    (work / "timings" / "tiny" / "dataset.tsv").write_text(
        "s\th:m:s\tmax_rss\n12.5\t0:00:12\t300.0\n")
    shutil.copy(tiny_dataset, (work / "results" / "tiny").mkdir(parents=True) or
                work / "results" / "tiny" / "dataset.h5")  # fmt: skip
    job = work / "results" / "splicing" / "tiny" / "seed0"
    job.mkdir(parents=True)
    (job / "metrics.json").write_text(json.dumps({
        "sparling": {"e2e": {"mean_topk": 0.5}}, "baseline": {"e2e": {"mean_topk": 0.6}},
        "ratio": {"mean_topk": 0.8333}}))  # fmt: skip
    md = tmp_path / "BENCHMARKS.md"
    path = run_pipeline_benchmark(work, tmp_path / "out", wall_seconds=600.0, command="cmd",
                                  benchmarks_md=md, section="pipeline composite",
                                  title="The pipeline on a composite genome")  # fmt: skip
    saved = json.loads(path.read_text())
    assert saved["rules"] == [{"job": "tiny/dataset", "seconds": 12.5, "max_rss_mb": 300.0}]
    assert saved["splits"]["tiny"].startswith(("per-sequence blocks", "whole held-out"))
    text = md.read_text()
    assert "<!-- bench:pipeline composite:start -->" in text
    assert "## The pipeline on a composite genome" in text and "10.0 min" in text
    assert f"Split of `tiny`: {saved['splits']['tiny']}." in text
    assert "ratio **0.833**" in text
