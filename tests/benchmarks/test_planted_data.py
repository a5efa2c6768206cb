"""The planted batch-time benchmark: both scans timed on the default set and a draw, their
disagreements only the conv's knife-edge rejections, a BENCHMARKS.md section written."""

import json

from benchmarks.planted_data import run_planted_data_benchmark


def test_both_scans_are_timed_and_agree_but_at_the_cutoff(tmp_path):
    md = tmp_path / "BENCHMARKS.md"
    result = run_planted_data_benchmark(tmp_path / "data.json", benchmarks_md=md, draws=[1],
                                        batches=1, threads=1, windows=3000)  # fmt: skip
    assert json.loads((tmp_path / "data.json").read_text()) == json.loads(json.dumps(result))
    assert [r["set"] for r in result["rows"]] == ["default", "draw1"]
    for row in result["rows"]:
        assert row["conv_ms"] > 0 and row["gather_ms"] > 0
        assert row["disagree"] == row["disagree_conv_only"]
        assert 0 < row["rejected"] < 1 and row["windows"] > 2900
    text = md.read_text()
    assert "<!-- bench:planted-data:start -->" in text and "| draw1 | 7 | 300 |" in text
