"""A retried training job (``train --resume-if-same``): it continues a killed run of the same
config, and never deletes finished work, whatever way it fails or differs."""

import hashlib
import shutil

import pytest
import torch

from sparling_genomics.errors import ConfigError, InputError, RunDirectoryError
from sparling_genomics.genome.dataset import DatasetSpec, build_dataset
from sparling_genomics.train.retry import train_or_resume
from sparling_genomics.train.run_config import resolve_config
from sparling_genomics.train.trainer import Trainer, train

from ..conftest import TINY_FASTA, TINY_GFF
from .test_trainer import read_log, tiny


def _contents(run) -> dict:
    """Every file of a folder: relative path -> SHA-256 of its bytes."""
    return {str(p.relative_to(run)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(run.rglob("*")) if p.is_file()}  # fmt: skip


def test_a_killed_run_of_the_same_config_continues_and_another_config_moves_it_aside(
    tmp_path, monkeypatch
):
    """The same config continues the killed run (the log of an unbroken run); once finished,
    a retry of it trains nothing; another config moves it aside whole; a folder that is not
    a run is refused and kept."""
    torch.set_num_threads(1)
    config = tiny()
    train(config, tmp_path / "whole", progress=False)
    log = Trainer._log

    def dies(self, record):
        log(self, record)
        if record["samples"] >= 320:
            raise KeyboardInterrupt

    monkeypatch.setattr(Trainer, "_log", dies)
    with pytest.raises(KeyboardInterrupt):
        train_or_resume(config, tmp_path / "killed", progress=False)
    monkeypatch.setattr(Trainer, "_log", log)
    train_or_resume(config, tmp_path / "killed", progress=False)
    assert read_log(tmp_path / "killed") == read_log(tmp_path / "whole")

    finished = _contents(tmp_path / "killed")
    again = train_or_resume(config, tmp_path / "killed", progress=False)  # done already
    assert _contents(tmp_path / "killed") == finished
    assert again["samples_seen"] == read_log(tmp_path / "whole")[-1]["samples"]

    other = tiny(lr=0.5 * config.train.lr)
    train_or_resume(other, tmp_path / "killed", progress=False)  # finished, other config
    assert f"lr: {0.5 * config.train.lr}" in (tmp_path / "killed" / "config.yaml").read_text()
    assert _contents(tmp_path / "killed.replaced-1") == finished

    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "keep.txt").write_text("mine")
    with pytest.raises(RunDirectoryError, match="not a run folder"):
        train_or_resume(config, mine, progress=False)
    assert [p.name for p in mine.iterdir()] == ["keep.txt"]


@pytest.fixture(scope="module")
def finished_splicing(tmp_path_factory, tiny_dataset):
    """A finished tiny splicing run (it reads a dataset), with its config."""
    config = resolve_config("splicing", "tiny", overrides=[
        {"data": {"dataset": str(tiny_dataset)}, "train": {"core_samples": 16}}])  # fmt: skip
    run = tmp_path_factory.mktemp("retry") / "run"
    train(config, run, progress=False)
    return config, run


@pytest.mark.parametrize("way_in,error,message", [
    ({"data": {"dataset": "gone.h5"}}, (InputError, ConfigError), "gone.h5"),
    ({"data": {"dataset": str(TINY_FASTA)}}, (InputError, ConfigError), "tiny.fa"),
    ({"device": "cuda"}, ConfigError, "cuda"),
])  # fmt: skip
def test_a_retry_whose_inputs_are_wrong_fails_with_the_finished_run_intact(
    finished_splicing, way_in, error, message
):
    """A dataset that is not there, a FASTA given as the dataset, a device that is not there:
    one typed error naming it, and the finished run's every file as it was."""
    if way_in.get("device") == "cuda" and torch.cuda.is_available():
        pytest.skip("a CUDA device is here")
    config, run = finished_splicing
    before = _contents(run)
    same = {"data": {"dataset": config.data.dataset}, "train": {"core_samples": 16}}
    retried = resolve_config("splicing", "tiny", overrides=[same, way_in])
    with pytest.raises(error, match=message):
        train_or_resume(retried, run, progress=False)
    assert _contents(run) == before and not list(run.parent.glob("run.replaced-*"))


def test_a_killed_attempt_without_a_checkpoint_of_another_config_is_replaced(tmp_path):
    """Killed before its first checkpoint (config.yaml alone): nothing finished to keep."""
    run = tmp_path / "run"
    config = tiny()
    (tmp_path / "old").mkdir()
    train(tiny(lr=0.5 * config.train.lr), tmp_path / "old", progress=False)
    run.mkdir()
    (run / "config.yaml").write_text((tmp_path / "old" / "config.yaml").read_text())
    train_or_resume(config, run, progress=False)
    assert (run / "metrics.json").is_file() and not list(tmp_path.glob("run.replaced-*"))


def test_a_retry_on_a_dataset_rebuilt_under_the_run_moves_the_run_aside(tmp_path, tiny_dataset):
    """The same config on a dataset whose content changed since is another run: the old one is
    kept whole beside the new one (not continued, not deleted)."""
    dataset = tmp_path / "own.h5"
    shutil.copy(tiny_dataset, dataset)
    config = resolve_config("splicing", "tiny", overrides=[
        {"data": {"dataset": str(dataset)}, "train": {"core_samples": 16}}])  # fmt: skip
    run = tmp_path / "run"
    train(config, run, progress=False)
    before = _contents(run)
    build_dataset(dataset.with_suffix(".new.h5"), TINY_FASTA, annotation=TINY_GFF,
                  spec=DatasetSpec(test_fraction=0.3))  # fmt: skip
    dataset.with_suffix(".new.h5").replace(dataset)  # rebuilt in place with another split
    train_or_resume(config, run, progress=False)
    assert _contents(tmp_path / "run.replaced-1") == before
    assert (run / "metrics.json").is_file() and _contents(run) != before
