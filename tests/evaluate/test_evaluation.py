"""The one evaluation loop: both scoring kinds through ``evaluate_model``, typed results whose
JSON keeps the keys and order that logs and ``metrics.json`` have always had."""

import torch

from sparling_genomics.evaluate.evaluation import Evaluation, evaluate_model, score_model
from sparling_genomics.tasks.registry import task_class
from sparling_genomics.tasks.splicing import SplicingTask
from sparling_genomics.train.run_config import resolve_config


def test_json_keeps_the_keys_and_their_order():
    sequence = Evaluation({"exact_match": 1.0}, 0.1, 4, motif={"fne": 0.0}, perturbation={"p": 1})
    assert list(sequence.to_json()) == ["e2e", "measured_density", "samples", "motif",
                                        "perturbation"]  # fmt: skip
    sites = Evaluation({"mean_topk": None}, None, 2, sites={"positions": 10})
    assert list(sites.to_json()) == ["e2e", "sites", "measured_density", "samples"]
    assert list(Evaluation({}, 0.0, 0).to_json()) == ["e2e", "measured_density", "samples"]


def test_a_sequence_task_is_scored_by_decoding_and_its_motifs():
    config = resolve_config("planted", "tiny")
    task = task_class("planted")(config, seed=0)
    torch.manual_seed(0)
    model = task.build_model()
    model.train()
    result = evaluate_model(model, task, "val", batch_size=16, device=torch.device("cpu"))
    assert model.training  # restored
    assert isinstance(result, Evaluation) and result.sites is None
    assert list(result.e2e) == ["exact_match", "edit_error"]
    assert result.samples == config.data.val_size
    assert 0.0 < result.measured_density <= 1.0
    assert {"fne", "fpe", "ce", "ce_matching", "channel_to_symbol", "per_symbol",
            "false_positives_per_channel"} <= set(result.motif)
    per_symbol = result.motif["per_symbol"]
    assert list(per_symbol) == task.symbols
    assert sum(v["sites"] for v in per_symbol.values()) == result.motif["true_motifs"]


def test_splicing_is_scored_per_position_through_the_same_loop(tiny_dataset):
    overrides = [{"data": {"dataset": str(tiny_dataset)}}]
    config = resolve_config("splicing", "tiny", overrides=overrides)
    task = SplicingTask(config, seed=0)
    cpu = torch.device("cpu")
    torch.manual_seed(0)
    sparse = score_model(task.build_model(sparse=True), task, "val", batch_size=4, device=cpu)
    plain = score_model(task.build_model(sparse=False), task, "val", batch_size=4, device=cpu)
    names = ["mean_topk"] + [f"{s}_{m}" for s in task.symbols for m in ("topk", "pr_auc")]
    for result in (sparse, plain):
        assert list(result.e2e) == names and result.motif is None and result.perturbation is None
        assert result.samples == len(task._eval_index["val"])
        assert result.sites["positions"] > 0
    assert sparse.measured_density is not None and plain.measured_density is None
