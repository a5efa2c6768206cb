"""The scan-regression benchmark: its children's timing, its pair-by-pair ratios, its section
and summary row, and its refusal of a folder that is not a checkout."""

import pytest
from click.testing import CliRunner

from benchmarks.cli import main
from benchmarks.headlines import SUMMARIES, worst_scan_ratio
from benchmarks.scan_regression import OURS, _child, _figures, _markdown

MACHINE = {"cpu": "x", "cores": 2, "torch_threads": 2, "memory_gb": 1, "cuda": None,
           "python": "3.11", "torch": "2", "date": "2026-12-07"}  # fmt: skip


def _result(ratio_whole: float, same: bool = True) -> dict:
    figures = {"before_seconds": 10.0, "ours_seconds": 10.0 * ratio_whole, "ratio": ratio_whole,
               "ratio_range": [ratio_whole, ratio_whole]}  # fmt: skip
    steady = {"before_seconds": 5.0, "ours_seconds": 5.0, "ratio": 1.0, "ratio_range": [1, 1]}
    ref = {"bases": 1000, "whole": figures, "scattered": steady, "gather": steady,
           "peak_rss_gb": {"before": 1.0, "ours": 1.0},
           "same_sites": {"whole_vs_before": same, "gathered_vs_whole": True}}  # fmt: skip
    return {"benchmark": "scan-regression", "before": {"path": "/b", "commit": "abc1234"},
            "ours": {"commit": "def5678"}, "repeats": 3, "parts": 3, "floor_ratio": 1.02,
            "references": {"tiny": ref}, "machine": MACHINE}  # fmt: skip


def test_ratios_are_taken_pair_by_pair():
    times = {"before": [{"s": 10.0}, {"s": 20.0}, {"s": 10.0}],
             "ours": [{"s": 11.0}, {"s": 20.0}, {"s": 9.0}]}  # fmt: skip
    f = _figures(times, "s")
    assert f["before_seconds"] == 10.0 and f["ours_seconds"] == 11.0
    assert f["ratio"] == 1.0 and f["ratio_range"] == [0.9, 1.1]


def test_section_and_summary_judge_the_worst_ratio_and_the_sites():
    assert worst_scan_ratio(_result(1.05)) == 1.05
    text = _markdown(_result(1.01), "RUN", "OUT")
    assert "abc1234" in text and "**1.010**" in text and ": met." in text
    assert SUMMARIES["scan-regression"]([_result(1.01)], "scan-regression").met is True
    assert SUMMARIES["scan-regression"]([_result(1.05)], "scan-regression").met is False
    changed = SUMMARIES["scan-regression"]([_result(1.0, same=False)], "scan-regression")
    assert changed.met is False and "same sites: no" in changed.figure


def test_a_child_reports_its_time_and_memory_and_a_failure_its_output(tmp_path):
    seconds, rss = _child(OURS, ["--help"], tmp_path / "log")
    assert seconds > 0 and 0 < rss < 8
    with pytest.raises(RuntimeError, match="no-such-verb"):
        _child(OURS, ["no-such-verb"], tmp_path / "log")


def test_a_folder_that_is_not_a_checkout_is_refused(tmp_path):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "config.yaml").write_text("seed: 0\n")
    args = ["scan-regression", "--model", str(tmp_path / "run"), "--before", str(tmp_path),
            "--out", str(tmp_path / "o")]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2 and "not a checkout" in result.output
    assert not (tmp_path / "o").exists()
