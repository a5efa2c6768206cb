"""The splicing task on the tiny reference: batches, models, a tiny end-to-end train."""

import json

import numpy as np
import pytest
import torch

from sparling_genomics.errors import ConfigError
from sparling_genomics.tasks.splicing import SplicingTask
from sparling_genomics.train.run_config import resolve_config


def _task(dataset, **model):
    config = resolve_config(
        "splicing", "tiny", overrides=[{"data": {"dataset": str(dataset)}, "model": model}]
    )
    return SplicingTask(config, seed=0)


def test_batches_are_deterministic_and_cover_each_epoch(tiny_dataset):
    task = _task(tiny_dataset)
    a, b = task.train_batch(3, 4), task.train_batch(3, 4)
    assert torch.equal(a.x, b.x) and torch.equal(a.y, b.y)
    assert a.x.shape == (4, 4, 1400) and a.y.shape == (4, 1000)
    n = len(task.train_index)
    seen = torch.cat([task.train_batch(i, 1).x.sum(dim=(1, 2)) for i in range(n)])
    total = torch.stack(
        [torch.from_numpy(task.data.read(np.array([i]))[0]).sum() for i in task.train_index]
    )
    assert sorted(seen.tolist()) == sorted(total.tolist())  # one epoch = every window once


def test_sparling_and_baseline_share_the_network(tiny_dataset):
    task = _task(tiny_dataset)
    sparse, plain = task.build_model(sparse=True), task.build_model(sparse=False)
    assert sparse.sparse is not None and plain.sparse is None
    assert sparse.g.receptive_field <= 31
    names = {k for k in sparse.state_dict() if not k.startswith("sparse.")}
    assert names == set(plain.state_dict())
    out = plain(task.train_batch(0, 2).x)
    assert out["logits"].shape == (2, 3, 1000)


def test_default_model_is_the_issue_architecture(tiny_dataset):
    config = resolve_config("splicing", "cpu", overrides=[{"data": {"dataset": str(tiny_dataset)}}])
    model = SplicingTask(config, 0).build_model()
    assert model.g.receptive_field == 31 and model.g.motifs == 32
    assert model.h.receptive_field == 401  # SpliceAI-400


def test_missing_dataset_is_a_config_error():
    config = resolve_config("splicing", "tiny")
    with pytest.raises(ConfigError, match="data.dataset is empty"):
        SplicingTask(config, 0)


def _train_tiny(cli, dataset, run, *extra):
    result = cli("train", "--task", "splicing", "--preset", "tiny", "--dataset", dataset,
                 "--out", run, "--no-progress", *extra)  # fmt: skip
    assert result.returncode == 0, result.stderr


def test_tiny_end_to_end_train_and_evaluate(cli, tiny_dataset, tmp_path):
    run = tmp_path / "run"
    _train_tiny(cli, tiny_dataset, run)
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["task"] == "splicing"
    for name in ("acceptor", "donor"):
        site = metrics["sites"][name]
        assert site["sites"] > 0 and 0.0 <= site["topk"] <= 1.0 and 0 < site["pr_auc"] <= 1
    assert metrics["e2e"]["mean_topk"] == pytest.approx(
        (metrics["sites"]["acceptor"]["topk"] + metrics["sites"]["donor"]["topk"]) / 2
    )
    log = [json.loads(line) for line in (run / "train_log.jsonl").read_text().splitlines()]
    assert all("val_mean_topk" in r and "val_donor_pr_auc" in r for r in log)
    evaluated = cli("evaluate", "--model", run, "--out", tmp_path / "m.json")
    assert evaluated.returncode == 0, evaluated.stderr
    again = json.loads((tmp_path / "m.json").read_text())
    assert again["e2e"] == pytest.approx(metrics["e2e"])


def test_baseline_trains_without_annealing(cli, tiny_dataset, tmp_path):
    run = tmp_path / "base"
    _train_tiny(cli, tiny_dataset, run, "--baseline")
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["density"] is None and metrics["annealing"]["enabled"] is False
    assert metrics["stopped_by"] == "max_samples"
    assert all(r["phase"] == "final" for r in map(json.loads, (run / "train_log.jsonl").open()))


def test_evaluate_without_checkpoint_is_one_line_error(cli, tmp_path):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "config.yaml").write_text("task: splicing\n")
    result = cli("evaluate", "--model", tmp_path / "run")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"error: {tmp_path / 'run'}: has no checkpoints/final.pt (training not finished?)"
    ]
