"""The paper-domain benchmark: a tiny run publishes JSON, report and a BENCHMARKS.md section."""

import json

import pytest

from benchmarks.paper_domains import PAPER, default_section, run_paper_domain_benchmark
from sparling_genomics.errors import ConfigError


def test_only_the_cpu_preset_as_shipped_writes_the_records_section():
    assert default_section("digit_circle", "cpu", None) == "paper-digit_circle"
    assert default_section("digit_circle", "cpu", []) == "paper-digit_circle"
    sets = [{"annealing": {"split_push": True}}, {"train": {"final_samples": 240000}}]
    assert default_section("latex_ocr", "cpu", sets) == (
        "paper-latex_ocr annealing.split_push=True train.final_samples=240000")
    assert default_section("audio_sequence", "tiny", None) == "paper-audio_sequence preset=tiny"


def test_tiny_digit_circle_benchmark_publishes_its_figures(tmp_path):
    md = tmp_path / "BENCHMARKS.md"
    path = run_paper_domain_benchmark(
        "digit_circle", tmp_path / "out", preset="tiny", benchmarks_md=md
    )
    result = json.loads(path.read_text())
    assert result["paper_9_seed_mean"] == PAPER["digit_circle"]
    assert set(result["floors_met"]) == {"fne", "fpe", "ce", "edit_error", "perturbation",
                                         "perturbation_single_channel"}
    assert (tmp_path / "out" / "digit_circle_seed0" / "report.html").is_file()
    text = md.read_text()
    # Another preset than cpu never replaces the record's section: it gets one of its own.
    assert "<!-- bench:paper-digit_circle preset=tiny:start -->" in text and "| E2EE |" in text
    assert "<!-- bench:paper-digit_circle:start -->" not in text
    assert "python -m benchmarks paper-domain --task digit_circle" in text
    assert "--section" not in text  # its default section: nothing to name
    assert "trained on all torch threads with batch prefetching" in text  # tiny preset
    assert "another CPU" not in text and "not recorded" not in text  # trained here
    # A second call reuses the finished run (a killed benchmark resumes, never retrains).
    before = (tmp_path / "out" / "digit_circle_seed0" / "metrics.json").read_bytes()
    run_paper_domain_benchmark("digit_circle", tmp_path / "out", preset="tiny", benchmarks_md=md)
    after = (tmp_path / "out" / "digit_circle_seed0" / "metrics.json").read_bytes()
    assert before == after
    # A run scored under the old perturbation rule (one channel moved, no single-channel
    # figure) is rescored from its final weights, not retrained; the old block is kept.
    path = tmp_path / "out" / "digit_circle_seed0" / "metrics.json"
    metrics = json.loads(before)
    current = metrics["perturbation"]
    stale = {k: v for k, v in current.items() if k != "consistency_single_channel"}
    stale["consistency"] = current["consistency_single_channel"]
    # A run from before the identifiability check gets it from the same weights too, and
    # one from before channel glyphs its glyphs.
    older = {k: v for k, v in metrics.items() if k != "identifiability"}
    older["motif"] = {k: v for k, v in metrics["motif"].items() if k != "glyphs"}
    path.write_text(json.dumps({**older, "perturbation": stale}))
    run_paper_domain_benchmark("digit_circle", tmp_path / "out", preset="tiny", benchmarks_md=md)
    rescored = json.loads(path.read_text())
    assert rescored["identifiability"] == metrics["identifiability"]
    assert rescored["motif"] == metrics["motif"]
    assert rescored["perturbation"] == current
    assert rescored["perturbation_before_rescore"] == stale
    assert rescored["samples_seen"] == metrics["samples_seen"]


def test_no_floor_counts_before_annealing_reaches_the_true_density(tmp_path, monkeypatch):
    import benchmarks.paper_domains as bench

    def metrics(complete):
        return {
            "motif": {"fne": 0.0, "fpe": 0.01, "ce": 0.02, "ce_matching": "one_to_one"},
            "e2e": {"edit_error": 0.01, "exact_match": 0.95},
            "perturbation": {"consistency": 0.99, "consistency_single_channel": 0.97,
                             "perturbations": 100},
            "density": 0.5 if not complete else 2e-4,
            "true_density": 1.8e-4,
            "samples_seen": 1000,
            "wall_seconds": 60.0,
            "annealing": {"complete": complete, "steps": 27 if complete else 0},
            "stopped_by": "max_seconds",
        }

    monkeypatch.setattr(bench, "write_report", lambda run, path: path)
    for complete in (True, False):
        monkeypatch.setattr(bench, "run_or_resume", lambda run, config, c=complete: metrics(c))
        md = tmp_path / f"B{complete}.md"
        path = bench.run_paper_domain_benchmark(
            "digit_circle", tmp_path / f"out{complete}", preset="tiny", benchmarks_md=md
        )
        met = json.loads(path.read_text())["floors_met"]
        assert all(met.values()) if complete else not any(met.values())
        assert ("no floor counts as met" in md.read_text()) is not complete


def test_several_seeds_are_judged_on_their_mean_and_each_is_published(tmp_path, monkeypatch):
    import benchmarks.paper_domains as bench

    def metrics(seed):
        return {
            "motif": {
                "fne": 0.02 * (seed + 1),
                "fpe": 0.0,
                "ce": 0.01,
                "ce_matching": "one_to_one",
            },
            "e2e": {"edit_error": (0.04, 0.01)[seed], "exact_match": 0.5},
            "perturbation": {"consistency": 0.95, "consistency_single_channel": 0.96,
                             "perturbations": 100},
            "density": 2e-4,
            "true_density": 1.8e-4,
            "samples_seen": 1000 + seed,
            "wall_seconds": 60.0,
            "annealing": {"complete": True, "steps": 27},
            "stopped_by": "schedule",
            **({"machine": {"cpu": "Another CPU"}} if seed else {}),  # seed 0: not recorded
        }

    monkeypatch.setattr(bench, "write_report", lambda run, path: path)
    monkeypatch.setattr(bench, "run_or_resume", lambda run, config: metrics(config.seed))
    md = tmp_path / "B.md"
    path = bench.run_paper_domain_benchmark(
        "digit_circle", tmp_path / "out", preset="tiny", seeds=[0, 1, 0], benchmarks_md=md
    )
    result = json.loads(path.read_text())
    assert result["seeds"] == [0, 1] and [r["seed"] for r in result["runs"]] == [0, 1]
    assert abs(result["ours"]["edit_error"] - 0.025) < 1e-12  # seed 0 alone would miss 3%
    assert abs(result["ours"]["fne"] - 0.03) < 1e-12
    assert result["floors_met"]["edit_error"] and all(result["floors_met"].values())
    text = md.read_text()
    assert "--seeds 0,1`" in text and "| seed 0 | seed 1 |" in text
    assert "| E2EE | 4.00% | 1.00% | 2.50% |" in text
    assert "Seeds that miss a floor on their own: seed 0 (E2EE)." in text
    assert "restarted" not in text
    assert "Runs trained on another CPU: seed 1 on Another CPU." in text
    assert "Machine not recorded for seed 0 " in text
    assert [r["floors_met"]["edit_error"] for r in result["runs"]] == [False, True]
    # One run that did not finish annealing voids every floor of the mean.
    monkeypatch.setattr(
        bench, "run_or_resume",
        lambda run, config: {**metrics(config.seed),
                             "annealing": {"complete": config.seed == 0, "steps": 3}},
    )  # fmt: skip
    path = bench.run_paper_domain_benchmark(
        "digit_circle", tmp_path / "out2", preset="tiny", seeds=[0, 1], benchmarks_md=md
    )
    assert not any(json.loads(path.read_text())["floors_met"].values())
    assert "in every run, so no floor counts as met" in md.read_text()


def test_a_plateau_restart_is_named_in_the_run_line(tmp_path, monkeypatch):
    import benchmarks.paper_domains as bench

    metrics = {
        "motif": {"fne": 0.0, "fpe": 0.0, "ce": 0.0, "ce_matching": "one_to_one"},
        "e2e": {"edit_error": 0.01, "exact_match": 0.95},
        "perturbation": {"consistency": 0.99, "perturbations": 100},
        "density": 2e-4,
        "true_density": 1.8e-4,
        "samples_seen": 1000,
        "wall_seconds": 60.0,
        "annealing": {"complete": True, "steps": 27},
        "stopped_by": "schedule",
        "plateau_restarts": 1,
    }
    monkeypatch.setattr(bench, "write_report", lambda run, path: path)
    monkeypatch.setattr(bench, "run_or_resume", lambda run, config: metrics)
    md = tmp_path / "B.md"
    bench.run_paper_domain_benchmark(
        "digit_circle", tmp_path / "out", preset="tiny", benchmarks_md=md
    )
    assert "; restarted 1 time from a new initialisation" in md.read_text()


def test_digit_circle_floors_are_issue_24s_and_a_named_section_keeps_the_default(
    tmp_path, monkeypatch
):
    import benchmarks.paper_domains as bench

    def metrics(single):
        return {
            "motif": {"fne": 0.05, "fpe": 0.0, "ce": 0.02, "ce_matching": "one_to_one"},
            "e2e": {"edit_error": 0.05, "exact_match": 0.9},
            "perturbation": {"consistency": 0.99, "consistency_single_channel": single,
                             "perturbations": 100},
            "density": 2e-4, "true_density": 1.8e-4, "samples_seen": 1000,
            "wall_seconds": 60.0, "annealing": {"complete": True, "steps": 27},
            "stopped_by": "schedule",
        }  # fmt: skip

    monkeypatch.setattr(bench, "write_report", lambda run, path: path)
    monkeypatch.setattr(bench, "run_or_resume", lambda run, config: metrics(0.90))
    md = tmp_path / "B.md"
    path = bench.run_paper_domain_benchmark(
        "digit_circle", tmp_path / "out", preset="tiny", benchmarks_md=md
    )
    met = json.loads(path.read_text())["floors_met"]
    # E2EE 5% meets issue 5's 10% but not issue 24's 3%; the winning-channel rule needs 95%.
    assert met == {"fne": True, "fpe": True, "ce": True, "edit_error": False,
                   "perturbation": True, "perturbation_single_channel": False}  # fmt: skip
    text = md.read_text()
    assert "| E2EE | 5.00% | 0.74% | 6.76 | <= 3.00% | NO |" in text
    single = "| perturbation consistency, winning channel only | 90.00% | - | - | >= 95.00% | NO |"
    assert single in text
    # Audio keeps the 10% floors and has no perturbation floor.
    path = bench.run_paper_domain_benchmark(
        "audio_sequence", tmp_path / "audio", preset="tiny", benchmarks_md=md
    )
    met = json.loads(path.read_text())["floors_met"]
    assert met == {"fne": True, "fpe": True, "ce": True, "edit_error": True}
    # A named section is written beside the default one, and its command names it.
    bench.run_paper_domain_benchmark(
        "digit_circle", tmp_path / "out11", preset="tiny", benchmarks_md=md,
        section="paper-digit_circle 11 channels",
    )  # fmt: skip
    text = md.read_text()
    assert "<!-- bench:paper-digit_circle preset=tiny:start -->" in text
    assert "<!-- bench:paper-digit_circle 11 channels:start -->" in text
    assert "--section 'paper-digit_circle 11 channels'`" in text


def test_a_bad_override_fails_before_the_out_folder_is_made(tmp_path):
    with pytest.raises(ConfigError, match="split_until"):
        run_paper_domain_benchmark("digit_circle", tmp_path / "out", preset="tiny",
                                   overrides=[{"annealing": {"split_until": 2}}],
                                   benchmarks_md=tmp_path / "B.md")  # fmt: skip
    assert not (tmp_path / "out").exists() and not (tmp_path / "B.md").exists()
