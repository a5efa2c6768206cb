import pytest
import torch

from sparling_genomics.errors import CheckpointError
from sparling_genomics.rundir import series_checkpoint_path, series_checkpoints
from sparling_genomics.train.checkpoint import save_checkpoint
from sparling_genomics.train.run_config import resolve_config
from sparling_genomics.train.series import load_series_checkpoint
from sparling_genomics.train.settings import make_optimizer
from sparling_genomics.train.trainer import train


def test_a_run_keeps_a_checkpoint_at_the_start_and_every_n_samples(tmp_path):
    config = resolve_config("planted", "tiny", overrides=[
        {"train": {"keep_checkpoints_every": 320, "threads": 1}}])  # fmt: skip
    train(config, tmp_path / "run", progress=False)
    paths = series_checkpoints(tmp_path / "run")
    # tiny planted: batch 16, an evaluation every 160 samples, 640 + 160 final samples.
    assert [p.name for p in paths] == ["step-00000000.pt", "step-00000020.pt",
                                       "step-00000040.pt"]  # fmt: skip
    first, last = load_series_checkpoint(paths[0]), load_series_checkpoint(paths[-1])
    assert first["samples"] == 0 and first["record"] == {}
    assert last["samples"] == 640 and "val_exact_match" in last["record"]
    assert last["density"] == pytest.approx(last["record"]["density"])
    assert not torch.equal(first["model"]["g.stem.weight"], last["model"]["g.stem.weight"])


def test_no_series_unless_asked(tmp_path):
    config = resolve_config("planted", "tiny", overrides=[{"train": {"threads": 1}}])
    train(config, tmp_path / "run", progress=False)
    assert series_checkpoints(tmp_path / "run") == []


def test_a_file_that_is_not_a_series_checkpoint_is_refused(tmp_path):
    path = series_checkpoint_path(tmp_path, 3)
    save_checkpoint(path, {"weights": torch.zeros(2)})
    with pytest.raises(CheckpointError, match="not a checkpoint of a run's series"):
        load_series_checkpoint(path)


def test_make_optimizer_builds_adamw_with_the_seed_settings():
    t = resolve_config("modular_addition", "tiny").train
    opt = make_optimizer([torch.nn.Parameter(torch.zeros(3))], t)
    group = opt.param_groups[0]
    assert isinstance(opt, torch.optim.AdamW)
    assert group["weight_decay"] == 0.1 and group["betas"] == (0.9, 0.98)
    assert group["eps"] == 1e-6
    plain = make_optimizer([torch.nn.Parameter(torch.zeros(3))], resolve_config(
        "planted", "tiny").train)  # fmt: skip
    assert type(plain) is torch.optim.Adam and plain.param_groups[0]["weight_decay"] == 0
