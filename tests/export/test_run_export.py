"""`export` and `scan` on a tiny planted run: files, names, tracks in genome coordinates."""

import json

import pytest


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    from tests.conftest import run_cli

    run = tmp_path_factory.mktemp("planted") / "run"
    result = run_cli("train", "--task", "planted", "--preset", "tiny", "--out", run,
                     "--no-progress")  # fmt: skip
    assert result.returncode == 0, result.stderr
    return run


def test_export_writes_every_format_and_a_summary(cli, tiny_run):
    result = cli("export", "--model", tiny_run, "--min-sites", "3", "--jaspar-release",
                 "JASPAR2024")  # fmt: skip
    assert result.returncode == 0, result.stderr
    out = tiny_run / "motifs"
    summary = json.loads((out / "motifs.json").read_text())
    names = {"motifs.meme", "motifs.jaspar", "motifs.transfac", "motifs.homer", "tomtom.tsv",
             "motifs.json", "logos"}  # fmt: skip
    assert names <= {p.name for p in out.iterdir()}
    ids = [m["id"] for m in summary["motifs"]]
    assert len(ids) + len(summary["silent_channels"]) == 6
    for m in summary["motifs"]:
        assert (out / "logos" / f"{m['id']}.png").is_file()
        assert 0 < m["best_match"]["p_value"] <= 1
        assert m["name"] is None or m["best_match"]["q_value"] < 0.05
    assert 0.0 <= summary["shuffled_control"]["false_match_rate"] <= 1.0


def test_missing_checkpoint_is_one_line_error(cli, tmp_path):
    (tmp_path / "config.yaml").write_text("task: planted\n")
    result = cli("export", "--model", tmp_path)
    assert result.returncode == 2 and "has no checkpoints/final.pt" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
