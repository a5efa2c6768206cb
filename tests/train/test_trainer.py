import json
import os
import signal
import subprocess
import sys
import time

import pytest
import torch

from sparling_genomics.errors import CheckpointError, ConfigError, RunDirectoryError
from sparling_genomics.rundir import (
    METRICS_KEYS,
    METRICS_RUN_KEYS,
    TIMING_FIELDS,
    metrics_path,
    metrics_record,
)
from sparling_genomics.train import trainer as trainer_module
from sparling_genomics.train.checkpoint import load_checkpoint
from sparling_genomics.train.run_config import resolve_config
from sparling_genomics.train.trainer import BatchPrefetcher, Trainer, train

from ..conftest import REPO


def tiny(**train_overrides):
    overrides = [{"data": {"background": "iid"}}]
    if train_overrides:
        overrides.append({"train": train_overrides})
    return resolve_config("planted", "tiny", overrides=overrides)


def same_weights(a, b):
    """Equal state dicts (tensors bit for bit; extra states by value)."""
    assert a.keys() == b.keys()
    for key in a:
        if torch.is_tensor(a[key]):
            assert torch.equal(a[key], b[key]), key
        else:
            assert str(a[key]) == str(b[key]), key
    return True


def read_log(run):
    records = [json.loads(line) for line in (run / "train_log.jsonl").read_text().splitlines()]
    for record in records:
        for field in TIMING_FIELDS:
            record.pop(field, None)
    return records


def resumes_exactly(config, tmp_path, monkeypatch, *, kill_at: int, logged: str) -> bool:
    """Train ``config`` whole, then again killed at its first evaluation at ``kill_at`` samples
    or later (by then a record must hold ``logged``) and resumed from last.pt: True when the
    two runs' logs and final weights are the same (an assertion fails otherwise)."""
    torch.set_num_threads(1)
    train(config, tmp_path / "whole", progress=False)
    log = Trainer._log

    def dies(self, record):
        log(self, record)
        if record["samples"] >= kill_at:
            raise KeyboardInterrupt

    monkeypatch.setattr(Trainer, "_log", dies)
    with pytest.raises(KeyboardInterrupt):
        train(config, tmp_path / "killed", progress=False)
    monkeypatch.setattr(Trainer, "_log", log)
    assert any(logged in r for r in read_log(tmp_path / "killed"))
    train(config, tmp_path / "killed", resume=True, progress=False)
    assert read_log(tmp_path / "killed") == read_log(tmp_path / "whole")
    a = load_checkpoint(tmp_path / "killed" / "checkpoints" / "final.pt")["model"]
    b = load_checkpoint(tmp_path / "whole" / "checkpoints" / "final.pt")["model"]
    return same_weights(a, b)


def test_tiny_run_writes_the_run_directory(tmp_path):
    run = tmp_path / "run"
    metrics = train(tiny(), run, progress=False)
    for name in (
        "config.yaml",
        "train_log.jsonl",
        "metrics.json",
        "checkpoints/last.pt",
        "checkpoints/final.pt",
    ):
        assert (run / name).is_file(), name
    saved = json.loads((run / "metrics.json").read_text())
    assert saved == json.loads(json.dumps(metrics))
    for key in ("exact_match", "edit_error"):
        assert 0.0 <= saved["e2e"][key] <= 1.0
    for key in ("fne", "fpe", "ce"):
        assert 0.0 <= saved["motif"][key] <= 1.0
    assert saved["samples_seen"] >= 640 and saved["wall_seconds"] > 0
    assert 0 < saved["density"] <= 0.5
    assert len(read_log(run)) >= 4


def test_final_metrics_are_the_test_evaluation_and_the_run_fields_through_rundir(
    tmp_path, monkeypatch
):
    """metrics.json is the test split's ``Evaluation.to_json()`` and the trainer's own fields,
    laid out by ``rundir.metrics_record`` and written once by ``rundir.write_metrics``."""
    scored, written = [], []
    score, write = trainer_module.score_model, trainer_module.write_metrics

    def scores(*args, **kwargs):
        scored.append(score(*args, **kwargs))
        return scored[-1]

    def writes(run, metrics):
        written.append(run)
        write(run, metrics)

    monkeypatch.setattr(trainer_module, "score_model", scores)
    monkeypatch.setattr(trainer_module, "write_metrics", writes)
    run = tmp_path / "run"
    train(tiny(), run, progress=False)
    assert written == [run] and len(scored) == 1
    saved = json.loads(metrics_path(run).read_text())
    assert list(saved) == list(METRICS_KEYS)
    expected = metrics_record(scored[0].to_json(), {k: saved[k] for k in METRICS_RUN_KEYS})
    assert saved == json.loads(json.dumps(expected))


def test_same_seed_same_log_and_weights(tmp_path):
    torch.set_num_threads(1)
    train(tiny(), tmp_path / "a", progress=False)
    train(tiny(), tmp_path / "b", progress=False)
    assert read_log(tmp_path / "a") == read_log(tmp_path / "b")
    wa = load_checkpoint(tmp_path / "a" / "checkpoints" / "final.pt")["model"]
    wb = load_checkpoint(tmp_path / "b" / "checkpoints" / "final.pt")["model"]
    assert same_weights(wa, wb)


def test_prefetching_batches_changes_nothing_but_time(tmp_path):
    torch.set_num_threads(1)
    train(tiny(prefetch=False), tmp_path / "a", progress=False)
    train(tiny(prefetch=True), tmp_path / "b", progress=False)
    assert read_log(tmp_path / "a") == read_log(tmp_path / "b")
    wa = load_checkpoint(tmp_path / "a" / "checkpoints" / "final.pt")["model"]
    wb = load_checkpoint(tmp_path / "b" / "checkpoints" / "final.pt")["model"]
    assert same_weights(wa, wb)


class _CountingTask:
    """Records train_batch calls and fails on one index."""

    def __init__(self, fail_at=None):
        self.calls, self.fail_at = [], fail_at

    def train_batch(self, index, batch_size):
        self.calls.append(index)
        if index == self.fail_at:
            raise ValueError(f"bad batch {index}")
        return (index, batch_size)


def test_prefetcher_serves_each_index_and_raises_the_error_asked_for():
    task = _CountingTask(fail_at=3)
    batches = BatchPrefetcher(task, 8)
    try:
        assert [batches.get(i) for i in range(3)] == [(0, 8), (1, 8), (2, 8)]
        assert batches.get(7) == (7, 8)  # out of order (a resume): made on the spot
        with pytest.raises(ValueError, match="bad batch 3"):
            batches.get(3)
    finally:
        batches.close()
    assert task.calls[:3] == [0, 1, 2] and {3, 7} <= set(task.calls)


def test_existing_run_directory_is_never_overwritten(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "keep.txt").write_text("mine")
    with pytest.raises(RunDirectoryError, match="exists"):
        train(tiny(), run, progress=False)
    assert sorted(p.name for p in run.iterdir()) == ["keep.txt"]


def test_impossible_density_writes_nothing(tmp_path):
    config = tiny()
    config.annealing.stop_density = 2.0
    with pytest.raises(ConfigError, match="density"):
        train(config, tmp_path / "run", progress=False)
    assert not (tmp_path / "run").exists()


def test_corrupt_checkpoint_is_refused(tmp_path):
    run = tmp_path / "run"
    train(tiny(), run, progress=False)
    (run / "metrics.json").unlink()
    path = run / "checkpoints" / "last.pt"
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointError, match="last.pt"):
        train({}, run, resume=True, progress=False)
    path.write_bytes(b"not a checkpoint at all")
    with pytest.raises(CheckpointError, match="last.pt"):
        load_checkpoint(path)


def test_resume_needs_a_checkpoint(tmp_path):
    with pytest.raises(RunDirectoryError, match="nothing to resume"):
        train({}, tmp_path / "none", resume=True, progress=False)


def _cli(args, **popen):
    env = dict(os.environ, OMP_NUM_THREADS="1")
    return subprocess.Popen(
        [sys.executable, "-m", "sparling_genomics.cli", "train", *args],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **popen,
    )


def _kill_after_log_lines(args, out, lines: int, poll: float):
    """Start a training run into ``out`` and SIGKILL it once its log has ``lines`` records."""
    proc = _cli([*args, "--out", str(out)])
    log = out / "train_log.jsonl"
    deadline = time.time() + 120
    while time.time() < deadline:
        if log.exists() and len(log.read_text().splitlines()) >= lines:
            break
        time.sleep(poll)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)


def test_sigkill_then_resume_equals_uninterrupted_run(tmp_path):
    """Kill a run with SIGKILL after its first checkpoints; the resumed run's log and final
    weights equal those of a run that was never interrupted."""
    args = [
        "--task",
        "planted",
        "--preset",
        "tiny",
        "--seed",
        "5",
        "--no-progress",
        "--set",
        "data.background=iid",
        "--set",
        "train.max_samples=4000",
        "--set",
        "train.final_samples=4000",
        "--set",
        "train.warmup_samples=3000",  # the ramp too must resume exactly
        # ... and a plateau restart at the 2nd evaluation, before the kill (after 3 lines)
        "--set",
        "train.plateau_restart_samples=320",
        "--set",
        "train.plateau_accuracy=1.01",
        "--set",
        "train.plateau_max_restarts=1",
    ]
    whole = _cli([*args, "--out", str(tmp_path / "whole")])
    assert whole.wait(timeout=300) == 0, whole.stderr.read()

    killed = tmp_path / "killed"
    _kill_after_log_lines(args, killed, 3, poll=0.05)
    assert not (killed / "metrics.json").exists(), "run finished before it could be killed"
    resumed = _cli(["--resume", "--no-progress", "--out", str(killed)])
    assert resumed.wait(timeout=300) == 0, resumed.stderr.read()

    assert read_log(killed) == read_log(tmp_path / "whole")
    assert sum("restart" in r for r in read_log(killed)) == 1
    a = load_checkpoint(killed / "checkpoints" / "final.pt")["model"]
    b = load_checkpoint(tmp_path / "whole" / "checkpoints" / "final.pt")["model"]
    assert same_weights(a, b)
    ma = json.loads((killed / "metrics.json").read_text())
    mb = json.loads((tmp_path / "whole" / "metrics.json").read_text())
    for m in (ma, mb):
        m.pop("wall_seconds")
        m["machine"].pop("date")  # the minute each run finished: may differ
    assert ma == mb


def test_sigkill_in_the_core_phase_then_resume_equals_uninterrupted_run(tmp_path, tiny_dataset):
    """A splicing run killed while its site core trains resumes in the core phase; its log
    (core records included, none doubled) and final weights equal an uninterrupted run's."""
    args = ["--task", "splicing", "--preset", "tiny", "--dataset", str(tiny_dataset),
            "--no-progress", "--set", "train.core_samples=2400"]  # fmt: skip
    whole = _cli([*args, "--out", str(tmp_path / "whole")])
    assert whole.wait(timeout=300) == 0, whole.stderr.read()

    killed = tmp_path / "killed"
    _kill_after_log_lines(args, killed, 5, poll=0.02)
    last = load_checkpoint(killed / "checkpoints" / "last.pt")
    assert last["trainer"]["phase"] == "core", "the kill missed the core phase"
    resumed = _cli(["--resume", "--no-progress", "--out", str(killed)])
    assert resumed.wait(timeout=300) == 0, resumed.stderr.read()

    records = read_log(killed)
    assert records == read_log(tmp_path / "whole")
    assert sum("core_val_mean_topk" in r for r in records) == 1
    a = load_checkpoint(killed / "checkpoints" / "final.pt")["model"]
    b = load_checkpoint(tmp_path / "whole" / "checkpoints" / "final.pt")["model"]
    assert same_weights(a, b)


def test_budget_end_mid_annealing_returns_last_accepted_weights(tmp_path):
    from sparling_genomics.train.trainer import Trainer, _snapshot

    run = tmp_path / "run"
    run.mkdir()
    trainer = Trainer(tiny(), run, progress=False)
    trainer.model.set_density(0.25)
    accepted = _snapshot(trainer.model)
    trainer.accepted_state = accepted
    trainer.model.set_density(0.1)  # a later tightening that never recovered
    with torch.no_grad():
        for p in trainer.model.parameters():
            p.add_(1.0)
    metrics = trainer.finish("max_seconds")
    assert metrics["density"] == pytest.approx(0.25)
    assert metrics["stopped_by"] == "max_seconds" and not metrics["annealing"]["complete"]
    final = load_checkpoint(run / "checkpoints" / "final.pt")["model"]
    assert same_weights(final, accepted)


def test_learning_rate_warms_up_then_follows_the_phase(tmp_path):
    from sparling_genomics.train.trainer import Trainer

    config = tiny(lr=0.004, warmup_samples=400, final_lr_scale=0.5, final_lr_schedule="constant")
    trainer = Trainer(config, tmp_path / "run", progress=False)

    def lr_at(samples, phase="anneal"):
        trainer.state.samples, trainer.state.phase = samples, phase
        trainer._set_lr(100)
        return [group["lr"] for group in trainer.optimizer.param_groups]

    assert lr_at(0) == [pytest.approx(0.001)]  # first step: 100 of 400 samples
    assert lr_at(200) == [pytest.approx(0.003)]
    assert lr_at(300) == lr_at(5000) == [pytest.approx(0.004)]
    trainer.state.final_start = 5000
    assert lr_at(6000, "final") == [pytest.approx(0.002)]  # constant final phase: lr x scale
    no_ramp = Trainer(tiny(lr=0.004), tmp_path / "other", progress=False)
    no_ramp._set_lr(100)
    assert [group["lr"] for group in no_ramp.optimizer.param_groups] == [0.004]


@pytest.mark.parametrize(
    "setting, message",
    [
        ({"warmup_samples": -1}, "'train.warmup_samples' must not be negative"),
        ({"plateau_restart_samples": -5}, "'train.plateau_restart_samples' must not be negative"),
        ({"final_lr_schedule": "linear"}, "final_lr_schedule' must be 'constant' or 'cosine'"),
    ],
)
def test_bad_learning_rate_schedule_writes_nothing(tmp_path, setting, message):
    with pytest.raises(ConfigError, match=message):
        train(tiny(**setting), tmp_path / "run", progress=False)
    assert not (tmp_path / "run").exists()


def test_a_run_that_never_learns_restarts_from_a_new_initialisation(tmp_path):
    """With an accuracy it cannot reach, the plateau rule fires after the given samples,
    at most plateau_max_restarts times; the restarted model is a new initialisation and
    annealing starts again from its start density. Two such runs are identical."""
    config = tiny(plateau_restart_samples=320, plateau_accuracy=1.01, plateau_max_restarts=1)
    torch.set_num_threads(1)
    metrics = train(config, tmp_path / "a", progress=False)
    log = read_log(tmp_path / "a")
    restarts = [r for r in log if "restart" in r]
    assert [r["samples"] for r in restarts] == [320] and restarts[0]["restart"] == 1
    assert "bar" not in restarts[0]  # no annealing decision on the given-up initialisation
    assert metrics["plateau_restarts"] == 1
    after = next(r for r in log if r["samples"] > 320)
    assert after["density"] == config.annealing.start_density
    train(config, tmp_path / "b", progress=False)
    assert read_log(tmp_path / "b") == log
    from sparling_genomics.train.trainer import Trainer

    trainer = Trainer(config, tmp_path / "d", progress=False)
    a = {k: v.clone() if torch.is_tensor(v) else v for k, v in trainer.model.state_dict().items()}
    trainer._initialise(restarts=1)
    b = trainer.model.state_dict()
    assert any(torch.is_tensor(a[k]) and not torch.equal(a[k], b[k]) for k in a)
    plain = train(tiny(), tmp_path / "c", progress=False)
    assert plain["plateau_restarts"] == 0
    assert not any("restart" in r for r in read_log(tmp_path / "c"))
