import json

import pytest

from sparling_genomics import rundir
from sparling_genomics.errors import RunDirectoryError


def test_the_names_make_the_layout(tmp_path):
    rundir.create_run_directory(tmp_path / "run", "task: planted\n")
    run = tmp_path / "run"
    assert (run / "config.yaml").read_text() == "task: planted\n"
    assert (run / "checkpoints").is_dir()
    assert rundir.checkpoint_path(run) == run / "checkpoints" / "last.pt"
    assert rundir.checkpoint_path(run, rundir.FINAL_CHECKPOINT) == run / "checkpoints" / "final.pt"
    assert rundir.metrics_path(run) == run / "metrics.json"
    assert rundir.log_path(run) == run / "train_log.jsonl"
    assert rundir.motifs_dir(run) == run / "motifs"


def test_metrics_round_trip_and_errors(tmp_path):
    with pytest.raises(RunDirectoryError, match=r"metrics.json: missing \(not finished\)"):
        rundir.read_metrics(tmp_path, "not finished")
    rundir.write_metrics(tmp_path, {"b": 1, "a": [0.5, None]})
    assert rundir.read_metrics(tmp_path) == {"b": 1, "a": [0.5, None]}
    (tmp_path / "metrics.json").write_text('{"b": ')
    with pytest.raises(RunDirectoryError, match="not valid JSON"):
        rundir.read_metrics(tmp_path)


def test_log_appends_reads_and_truncates_after_a_kill(tmp_path):
    with pytest.raises(RunDirectoryError, match="no train_log.jsonl"):
        rundir.read_log(tmp_path)
    for samples in (8, 16, 24):
        rundir.append_log(tmp_path, {"samples": samples, "elapsed": 0.1})
    with open(rundir.log_path(tmp_path), "a") as handle:
        handle.write('{"samples": 3')  # torn by a kill
    assert [r["samples"] for r in rundir.read_log(tmp_path)] == [8, 16, 24]
    rundir.truncate_log(tmp_path, 16)
    lines = rundir.log_path(tmp_path).read_text().splitlines()
    assert [json.loads(line)["samples"] for line in lines] == [8, 16]


def test_require_finished_says_what_is_missing(tmp_path):
    with pytest.raises(RunDirectoryError, match="not a run directory \\(no config.yaml\\)"):
        rundir.require_finished(tmp_path)
    rundir.create_run_directory(tmp_path, "task: planted\n")
    with pytest.raises(RunDirectoryError, match="has no checkpoints/final.pt"):
        rundir.require_finished(tmp_path)
    final = rundir.checkpoint_path(tmp_path, rundir.FINAL_CHECKPOINT)
    final.write_bytes(b"")
    assert rundir.require_finished(tmp_path) == final
