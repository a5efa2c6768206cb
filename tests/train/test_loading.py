"""A finished run loaded back as one named object: its folder, config, task, model with the
final weights (in eval mode) and device."""

import dataclasses

import pytest
import torch

from sparling_genomics.rundir import FINAL_CHECKPOINT, checkpoint_path
from sparling_genomics.train.checkpoint import load_checkpoint
from sparling_genomics.train.loading import LoadedRun, build_run, load_run
from sparling_genomics.train.run_config import resolve_config
from sparling_genomics.train.trainer import train


@pytest.fixture(scope="module")
def modular_run(tmp_path_factory):
    run = tmp_path_factory.mktemp("loading") / "run"
    train(resolve_config("modular_addition", "tiny"), run, progress=False)
    return run


def test_load_run_gives_the_run_by_name_with_its_final_weights(modular_run):
    loaded = load_run(modular_run, device="cpu")
    assert isinstance(loaded, LoadedRun) and loaded.path == modular_run
    assert loaded.config.task == "modular_addition" and loaded.device == torch.device("cpu")
    assert loaded.task.config == loaded.config and not loaded.model.training
    final = load_checkpoint(checkpoint_path(modular_run, FINAL_CHECKPOINT))["model"]
    weights = loaded.model.state_dict()
    assert weights.keys() == final.keys()
    assert all(torch.equal(weights[k], final[k]) for k in final)
    with pytest.raises(dataclasses.FrozenInstanceError):
        loaded.model = None


def test_build_run_gives_the_same_run_with_fresh_weights(modular_run):
    built = build_run(modular_run, device="cpu")
    loaded = load_run(modular_run, device="cpu")
    assert isinstance(built, LoadedRun) and built.path == modular_run
    assert built.config == loaded.config
    fresh, final = built.model.state_dict(), loaded.model.state_dict()
    assert any(not torch.equal(fresh[k], final[k]) for k in final)
