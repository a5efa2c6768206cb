"""The planted benchmark: seeds, the motif-block variant and a random motif draw (tiny
preset), each row with its stop reason, density steps (those taken back, splits) and
identifiability status."""

import json

from benchmarks.planted import _markdown, draw_motifs, run_planted_benchmark


def test_seeds_and_a_draw_each_get_a_row_with_their_identifiability(tmp_path):
    md = tmp_path / "BENCHMARKS.md"
    fast = [{"annealing": {"bar_decay_per_sample": 0.01}}]  # steps in a tiny run
    path = run_planted_benchmark(tmp_path / "out", [0], preset="tiny", ablations=False,
                                 draws=[1], benchmarks_md=md, overrides=fast,
                                 block_sizes=[1])  # fmt: skip
    result = json.loads(path.read_text())
    assert set(result["runs"]) == {"sparling", "block1", "draw1"}
    assert "block_size: 1" in (tmp_path / "out" / "block1_seed0" / "config.yaml").read_text()
    assert "block_size: 2" in (tmp_path / "out" / "sparling_seed0" / "config.yaml").read_text()
    draw = result["runs"]["draw1"][0]
    assert draw["motifs"] == draw_motifs(1) and len(draw["motifs"]) == 7
    config = (tmp_path / "out" / "draw1_seed0" / "config.yaml").read_text()
    assert "length: 300" in config and "max_instances: 5" in config
    for rows in result["runs"].values():
        assert rows[0]["identifiability"] in {"met", "fails", "unknown"}
        assert rows[0]["stopped_by"] and rows[0]["rollbacks"] is not None
        assert 0.5 < rows[0]["oracle_exact_match"] <= 1.0
        assert rows[0]["trained_on"] == result["machine"]["cpu"]  # each run names its host
    # The oracle reads the data, not the model: one figure for runs on the same data.
    assert result["runs"]["block1"][0]["oracle_exact_match"] == (
        result["runs"]["sparling"][0]["oracle_exact_match"])  # fmt: skip
    text = md.read_text()
    assert "--no-ablations --draws 1 --block-size 1" in text and "| draw1 | 0 |" in text
    assert "| exact match | oracle | exact / oracle |" in text
    assert "| block1 | 0 |" in text and "- block1: end-to-end error" in text
    assert "Means, and each ablation beside Sparling" in text  # block1 is set beside it
    assert draw["identifiability_verdict"] in text
    assert "another CPU" not in text and "not recorded" not in text  # all trained here
    assert len({len(draw_motifs(d)) for d in (1, 2, 3)}) == 3  # 7, 8, 6 motifs
    # The planted presets split idle motifs (train/rules/channel_edit.py): each row lists its
    # splits.
    assert all(isinstance(rows[0]["splits"], list) for rows in result["runs"].values())
    result["runs"]["draw1"][0]["splits"] = [[180_000, 5, 1, 0.436, 0.0, 0.0169]]
    text = _markdown(result, tmp_path / "out", "tiny", [0])
    assert " rolled back; 1 split) |" in text
    assert "- draw1 seed 0: 5 (43.6%) into 1 (0.0%) at 180k samples, density 0.0169" in text


def test_a_run_with_overrides_is_a_variant_with_its_own_section(tmp_path):
    md = tmp_path / "BENCHMARKS.md"
    run_planted_benchmark(tmp_path / "plain", [0], preset="tiny", ablations=False,
                          benchmarks_md=md)  # fmt: skip
    strand = [{"model": {"sparse": {"strand_window": 4}}}]
    run_planted_benchmark(tmp_path / "strand", [0], preset="tiny", ablations=False,
                          benchmarks_md=md, overrides=strand,
                          sets=["model.sparse.strand_window=4"])  # fmt: skip
    text = md.read_text()
    assert "<!-- bench:planted:start -->" in text
    assert "<!-- bench:planted model.sparse.strand_window=4:start -->" in text
    assert "## Planted motifs (issues 2, 24), with `model.sparse.strand_window=4`" in text
    assert "--no-ablations --set model.sparse.strand_window=4`" in text
    assert "Means over each run's seeds:" in text and "each ablation beside" not in text
    config = (tmp_path / "strand" / "sparling_seed0" / "config.yaml").read_text()
    assert "strand_window: 4" in config
