import torch

from sparling_genomics.tasks.base import first_eval_batches
from sparling_genomics.tasks.registry import task_class
from sparling_genomics.train.run_config import resolve_config


def test_first_eval_batches_are_the_splits_first_inputs_cut_to_the_count():
    task = task_class("planted")(resolve_config("planted", "tiny"), seed=0)
    whole = list(task.eval_batches("val", 8))
    first = list(first_eval_batches(task, "val", 8, 13))
    assert [len(b) for b in first] == [8, 5]
    assert torch.equal(torch.cat([b.x for b in first]), torch.cat([b.x for b in whole])[:13])
    assert first[1].targets == whole[1].targets[:5] and first[1].cells == whole[1].cells[:5]
    assert list(first_eval_batches(task, "val", 8, 0)) == []
    assert sum(len(b) for b in first_eval_batches(task, "val", 8, 10**6)) == sum(map(len, whole))
