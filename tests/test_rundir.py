import ast
import json
from pathlib import Path

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


def test_log_records_keep_six_significant_digits(tmp_path):
    rundir.append_log(tmp_path, {"samples": 2000, "loss": 20.748375190734862, "tightened": False,
                                 "density": 0.00015873963570667976, "bar": 0.99,
                                 "per_channel": [0.1234567891, None], "lr": {"g": 1 / 3}})
    (record,) = rundir.read_log(tmp_path)
    assert record == {"samples": 2000, "loss": 20.7484, "tightened": False, "density": 0.00015874,
                      "bar": 0.99, "per_channel": [0.123457, None], "lr": {"g": 0.333333}}


def test_require_finished_says_what_is_missing(tmp_path):
    with pytest.raises(RunDirectoryError, match="not a run directory \\(no config.yaml\\)"):
        rundir.require_finished(tmp_path)
    rundir.create_run_directory(tmp_path, "task: planted\n")
    with pytest.raises(RunDirectoryError, match="has no checkpoints/final.pt"):
        rundir.require_finished(tmp_path)
    final = rundir.checkpoint_path(tmp_path, rundir.FINAL_CHECKPOINT)
    final.write_bytes(b"")
    assert rundir.require_finished(tmp_path) == final


def test_metrics_record_lays_an_evaluation_and_the_run_fields_out_in_the_files_order():
    evaluation = {"e2e": {"exact_match": 1.0}, "measured_density": 0.1, "samples": 4,
                  "motif": {"fne": 0.0}, "identifiability": {"verdict": "identifiable"}}
    fields = {key: key.upper() for key in rundir.METRICS_RUN_KEYS}
    record = rundir.metrics_record(evaluation, fields)
    assert list(record) == list(rundir.METRICS_KEYS)
    assert record["test_samples"] == 4 and "samples" not in record
    assert record["sites"] is None and record["perturbation"] is None  # left out: null
    assert record["motif"] == {"fne": 0.0} and record["stopped_by"] == "STOPPED_BY"
    assert set(rundir.METRICS_EVALUATION_KEYS) | set(rundir.METRICS_RUN_KEYS) == set(
        rundir.METRICS_KEYS
    )
    with pytest.raises(ValueError, match=r"unknown keys \['extra'\]"):
        rundir.metrics_record({**evaluation, "extra": 1}, fields)
    with pytest.raises(ValueError, match=r"missing run fields \['seed'\]"):
        rundir.metrics_record(evaluation, {k: v for k, v in fields.items() if k != "seed"})


# Calls that write a file; ``open`` only with a writing mode.
WRITING_CALLS = {"write_json_atomic", "write_text_atomic", "atomic_path", "write_text",
                 "write_bytes", "dump"}  # fmt: skip


def _names_metrics(node: ast.AST) -> bool:
    """Whether ``node``'s subtree names RUN/metrics.json (METRICS_NAME, metrics_path(...) or
    the literal)."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and sub.id in ("METRICS_NAME", "metrics_path"):
            return True
        if isinstance(sub, ast.Attribute) and sub.attr in ("METRICS_NAME", "metrics_path"):
            return True
        if isinstance(sub, ast.Constant) and sub.value == rundir.METRICS_NAME:
            return True
    return False


def _writes(call: ast.Call) -> bool:
    func = call.func
    name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
    if name == "open":
        modes = list(call.args[1:2]) + [k.value for k in call.keywords if k.arg == "mode"]
        return any(isinstance(m, ast.Constant) and set(str(m.value)) & set("wax") for m in modes)
    return name in WRITING_CALLS


def test_rundir_alone_writes_metrics_json():
    """metrics.json has one writer (``rundir.write_metrics``): no other module of the package
    hands RUN/metrics.json to a call that writes a file."""
    package = Path(rundir.__file__).parent
    found = []
    for path in sorted(package.rglob("*.py")):
        if path == Path(rundir.__file__):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and _writes(node) and _names_metrics(node):
                found.append(f"{path.relative_to(package)}:{node.lineno}")
    assert not found, found
    planted = ast.parse("write_json_atomic(metrics_path(run), {})\n"
                        "(run / METRICS_NAME).write_text('{}')\n"
                        "open(run / 'metrics.json', 'w')\nopen(metrics_path(run))")  # fmt: skip
    calls = [n for n in ast.walk(planted) if isinstance(n, ast.Call) and _writes(n)]
    assert len([c for c in calls if _names_metrics(c)]) == 3  # the read is not a write
