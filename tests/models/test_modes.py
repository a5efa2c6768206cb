import pytest
import torch
from torch import nn

from sparling_genomics.models.modes import eval_mode


@pytest.mark.parametrize("training", [True, False])
def test_eval_mode_evaluates_inside_and_restores_the_mode_after(training):
    model = nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3)).train(training)
    with eval_mode(model) as inside:
        assert inside is model
        assert not model.training and not model[1].training
    assert model.training is training and model[1].training is training


def test_eval_mode_restores_the_mode_when_the_block_raises():
    model = nn.BatchNorm1d(3).train()
    with pytest.raises(RuntimeError, match="boom"), eval_mode(model):
        raise RuntimeError("boom")
    assert model.training


def test_batch_statistics_are_not_learnt_inside():
    norm = nn.BatchNorm1d(3).train()
    before = norm.running_mean.clone()
    with eval_mode(norm):
        norm(torch.randn(8, 3) + 5)
    assert torch.equal(norm.running_mean, before)
