"""The identifiability benchmark: a run's own verdict, an older run rescored from its weights
(same verdict), an older run without weights listed as not checked; JSON, the BENCHMARKS.md
section (counts) and the table of every run in docs/bench-runs.md."""

import json
import shutil

from benchmarks.identifiability import run_identifiability_benchmark
from tests.conftest import run_cli


def test_every_run_gets_its_verdict_or_is_listed_as_not_checked(tmp_path):
    runs = tmp_path / "runs"
    fresh = runs / "fresh"
    result = run_cli("train", "--task", "planted", "--preset", "tiny", "--out", fresh,
                     "--no-progress")  # fmt: skip
    assert result.returncode == 0, result.stderr
    metrics = json.loads((fresh / "metrics.json").read_text())
    older = {k: v for k, v in metrics.items() if k != "identifiability"}
    # The same run as it was before the check: rescored from its final weights.
    shutil.copytree(fresh, runs / "older")
    (runs / "older" / "metrics.json").write_text(json.dumps(older))
    # And without its weights (a benchmark's run whose checkpoints were not kept).
    gone = runs / "nested" / "gone"
    gone.mkdir(parents=True)
    shutil.copy(fresh / "config.yaml", gone / "config.yaml")
    (gone / "metrics.json").write_text(json.dumps(older))

    md = tmp_path / "BENCHMARKS.md"
    path = run_identifiability_benchmark([runs], tmp_path / "idf.json", benchmarks_md=md)
    result = json.loads(path.read_text())
    rows = {r["run"].rsplit("/", 1)[-1]: r for r in result["runs"]}
    assert set(rows) == {"fresh", "older", "gone"}
    assert rows["fresh"]["verdict"] == metrics["identifiability"]["verdict"]
    assert rows["older"]["verdict"] == rows["fresh"]["verdict"]
    assert rows["older"]["rescore_seconds"] is not None
    assert json.loads((runs / "older" / "metrics.json").read_text())["identifiability"] == (
        metrics["identifiability"])  # fmt: skip
    assert rows["fresh"]["idle"] == metrics["identifiability"]["channels"]["idle"]
    assert rows["gone"]["checked"] is False and "status" not in rows["gone"]
    assert result["counts"]["not_checked"] == 1
    assert sum(result["counts"].values()) == 3
    text = md.read_text()
    assert "<!-- bench:identifiability:start -->" in text and "not checked 1." in text
    # The table of every run and the verdicts: a section of docs/bench-runs.md beside it.
    assert "| dead | idle | density spread |" not in text
    assert "(docs/bench-runs.md#identifiability-of-every-saved-run)" in text
    runs_md = (tmp_path / "docs" / "bench-runs.md").read_text()
    assert "<!-- bench:identifiability-runs:start -->" in runs_md
    assert "| dead | idle | density spread |" in runs_md and "not checked (weights" in runs_md
    assert metrics["identifiability"]["verdict"] in runs_md
