import json

import h5py
import numpy as np
import pytest

from sparling_genomics.errors import InputError
from sparling_genomics.evaluate.topology import correlations, find_events
from sparling_genomics.rundir import series_checkpoints
from sparling_genomics.runners.diagnose import diagnose_run
from tests.conftest import run_steps


@pytest.fixture(scope="module")
def modular_run(tmp_path_factory):
    """A tiny modular-addition run with its checkpoint series (steps 0, 8, 16)."""
    run = tmp_path_factory.mktemp("modular") / "run"
    return run_steps([("train", "--task", "modular_addition", "--preset", "tiny", "--out", run,
                       "--no-progress")], run)  # fmt: skip


def test_diagnose_writes_a_time_series_diagrams_figures_and_a_report_section(modular_run, cli):
    result = cli("diagnose", "--model", modular_run)
    assert result.returncode == 0, result.stderr
    out = modular_run / "diagnostics"
    summary = json.loads((out / "diagnostics.json").read_text())
    steps = [int(p.stem.split("-")[1]) for p in series_checkpoints(modular_run)]
    assert [r["step"] for r in summary["series"]] == steps == [0, 8, 16]
    assert summary["layer"] == "embedding" and summary["cyclic"]
    for row in summary["series"]:
        assert row["points"] == 13 and row["dimension"] == 16  # p token embeddings
        assert set(row["accuracy"]) == {"train", "val", "test"}
        assert row["h1_max"] >= 0 and row["h0_total"] > 0 and len(row["fourier_top5"]) == 5
    with h5py.File(out / "diagrams.h5") as h5:
        assert set(h5) == {f"step-{s:08d}" for s in steps}
        assert np.isclose(h5["step-00000016/spectrum"][:].sum(), 1.0)
        assert h5["step-00000016/h0"].shape[1] == 2
    assert (out / "measures.png").stat().st_size > 1000
    assert (out / "persistence.png").stat().st_size > 1000
    report = modular_run / "report.html"
    assert cli("report", "--model", modular_run, "--out", report).returncode == 0
    assert "Training diagnostics" in report.read_text() and "layer <b>embedding</b>" in (
        report.read_text())


def test_a_rerun_reuses_diagnosed_checkpoints_unless_the_settings_change(
    modular_run, tmp_path, monkeypatch
):
    import sparling_genomics.runners.diagnose as rd

    first = diagnose_run(modular_run, tmp_path / "d")
    assert len(list((tmp_path / "d" / ".checkpoints").glob("step-*.npz"))) == 3

    def boom(*args, **kwargs):
        raise AssertionError("recomputed a cached checkpoint")

    monkeypatch.setattr(rd, "_diagnose_checkpoint", boom)
    again = diagnose_run(modular_run, tmp_path / "d")
    assert again["series"] == first["series"] and again["events"] == first["events"]
    with pytest.raises(AssertionError, match="recomputed"):
        diagnose_run(modular_run, tmp_path / "d", max_points=5)  # other settings: recomputed


def test_a_module_layer_reads_its_activations_on_the_fixed_sample(modular_run, tmp_path):
    summary = diagnose_run(modular_run, tmp_path / "d", layer="g.blocks.0", sample=20)
    # The first block's output: one point per token of each of 20 val pairs (2 per pair).
    assert all(r["raw_points"] == 40 for r in summary["series"])
    assert all(r["dimension"] == 16 for r in summary["series"])


def test_bad_layer_and_missing_series_are_one_line_errors(modular_run, tmp_path):
    with pytest.raises(InputError, match="--layer 'blocks.7' is not a layer of this model"):
        diagnose_run(modular_run, tmp_path / "x", layer="blocks.7")
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "config.yaml").write_text((modular_run / "config.yaml").read_text())
    with pytest.raises(InputError, match="no checkpoint series"):
        diagnose_run(bare)
    assert not (bare / "diagnostics").exists() and not (tmp_path / "x").exists()


def _row(step, test, h1, train=1.0):
    return {"step": step, "h1_max": h1, "h0_total": 10 - h1, "accuracy": {"train": train,
            "test": test}}  # fmt: skip


def test_events_find_the_fit_the_jump_and_the_h1_rise():
    series = [_row(0, 0.0, 0.1, train=0.1), _row(500, 0.01, 0.11), _row(1000, 0.02, 0.12),
              _row(1500, 0.9, 0.5), _row(2000, 1.0, 0.55)]  # fmt: skip
    e = find_events(series, "test")
    assert (e["train_fit_step"], e["test_jump_step"], e["h1_rise_step"]) == (500, 1500, 1500)
    assert e["h1_max_before_jump"] == pytest.approx(np.mean([0.1, 0.11, 0.12]))
    assert e["h1_max_after_jump"] == pytest.approx(np.mean([0.5, 0.55]))
    rho = correlations(series, "test")
    assert rho["h1_max"]["rho"] == pytest.approx(1.0)
    assert rho["h0_total"]["rho"] == pytest.approx(-1.0)
    flat = [_row(s, 0.05, 0.1 + s / 1e4) for s in (0, 500, 1000)]
    assert find_events(flat, "test")["test_jump_step"] is None  # no generalisation: no jump
