"""A run's model fingerprint and the dataset it records: what is made from a run, or loads it,
refuses other weights and a dataset that changed under it, in one line."""

import json
import shutil
from pathlib import Path

import pytest
import torch

from sparling_genomics.errors import InputError
from sparling_genomics.genome.dataset import DatasetSpec, build_dataset
from sparling_genomics.genome.fingerprint import dataset_fingerprint
from sparling_genomics.rundir import checkpoint_path, config_path, inputs_path
from sparling_genomics.train.checkpoint import save_checkpoint
from sparling_genomics.train.loading import evaluate_run, load_run
from sparling_genomics.train.provenance import (
    check_run_inputs,
    check_same_model,
    record_run_inputs,
    run_fingerprint,
)
from sparling_genomics.train.run_config import resolve_config
from sparling_genomics.train.trainer import Trainer, train
from tests.conftest import TINY_FASTA, TINY_GFF


def test_the_model_fingerprint_is_of_the_weights_and_the_model_config_only(tmp_path):
    run = tmp_path / "run"
    config_path(run).parent.mkdir(parents=True)
    config_path(run).write_text("task: planted\n")
    final = checkpoint_path(run, "final.pt")
    final.parent.mkdir()
    config = {"task": "planted", "model": {"hidden": 8}, "data": {"dataset": "/a/d.h5"}}
    save_checkpoint(final, {"model": {"w": torch.arange(10.0)}, "config": config,
                            "trainer": {"elapsed_seconds": 1.0}})  # fmt: skip
    fingerprint = run_fingerprint(run)
    # Another wall clock (a run killed and resumed) or another path: the same model.
    save_checkpoint(final, {"model": {"w": torch.arange(10.0)},
                            "config": config | {"data": {"dataset": "/b/d.h5"}},
                            "trainer": {"elapsed_seconds": 2.0}})  # fmt: skip
    assert run_fingerprint(run) == fingerprint
    # Other weights, or another architecture: another model.
    save_checkpoint(final, {"model": {"w": torch.arange(10.0) + 1}, "config": config})
    assert run_fingerprint(run) != fingerprint
    save_checkpoint(final, {"model": {"w": torch.arange(10.0)},
                            "config": config | {"model": {"hidden": 9}}})  # fmt: skip
    assert run_fingerprint(run) != fingerprint


def test_an_output_of_other_weights_is_refused_and_an_old_one_passes(tmp_path):
    check_same_model(None, Path("run"), "a" * 64, Path("m.json"), "export again")
    check_same_model("a" * 64, Path("run"), "a" * 64, Path("m.json"), "export again")
    with pytest.raises(InputError) as refused:
        check_same_model("b" * 64, Path("run"), "a" * 64, Path("m.json"), "export again")
    assert str(refused.value) == ("m.json: made from other weights than run's (model "
                                  "fingerprint bbbbbbbbbbbb, the run's aaaaaaaaaaaa); export "
                                  "again")  # fmt: skip


def _point_at(run: Path, dataset: Path) -> None:
    """Edit the run's config so its data.dataset is ``dataset``."""
    lines = [f"  dataset: {dataset}" if line.startswith("  dataset: ") else line
             for line in config_path(run).read_text().splitlines()]  # fmt: skip
    config_path(run).write_text("\n".join(lines) + "\n")


@pytest.fixture(scope="module")
def site_run(splicing_tiny, tiny_dataset, tmp_path_factory):
    """A copy of the tiny splicing run reading its own copy of its dataset, and another
    dataset of the same genome (another split)."""
    base = tmp_path_factory.mktemp("provenance")
    run, own, other = base / "run", base / "own.h5", base / "other.h5"
    shutil.copytree(splicing_tiny, run)
    shutil.copy(tiny_dataset, own)
    _point_at(run, own)
    build_dataset(other, TINY_FASTA, annotation=TINY_GFF, spec=DatasetSpec(test_fraction=0.3))
    return run, own, other


def test_a_trained_run_records_its_datasets_fingerprint(site_run, tiny_dataset):
    run, own, _ = site_run
    recorded = json.loads(inputs_path(run).read_text())
    assert recorded == {"data.dataset": dataset_fingerprint(tiny_dataset)}
    check_run_inputs(run)  # the same content, at another path: the run's own dataset
    record_run_inputs(run)  # never rewritten
    assert json.loads(inputs_path(run).read_text()) == recorded


def test_a_dataset_changed_under_a_run_is_refused_where_the_run_is_loaded(site_run, tmp_path):
    run, own, other = site_run
    changed = shutil.copytree(run, tmp_path / "run")
    replaced = tmp_path / "own.h5"
    shutil.copy(other, replaced)  # rebuilt in place with another split
    _point_at(changed, replaced)
    for load in (lambda: check_run_inputs(changed), lambda: load_run(changed),
                 lambda: evaluate_run(changed)):  # fmt: skip
        with pytest.raises(InputError) as refused:
            load()
        message = str(refused.value)
        assert message.startswith(f"{replaced}: not the dataset run {changed} was trained on "
                                  "(content fingerprint sha256:")  # fmt: skip
        assert "rebuild it as it was or retrain" in message and "\n" not in message
    with pytest.raises(InputError, match="not the dataset run"):
        load_run(run, dataset=other)  # given as the run's own dataset, moved: checked too
    load_run(changed, dataset=own)  # the run's own dataset, moved: accepted
    scored = evaluate_run(changed, dataset=other)  # other data to score: not the run's
    assert scored["dataset"] == str(other)


def test_a_run_without_a_record_loads_as_before(site_run, tmp_path):
    run, _, other = site_run
    old = shutil.copytree(run, tmp_path / "old")
    inputs_path(old).unlink()  # trained before runs recorded their dataset
    _point_at(old, other)
    check_run_inputs(old)
    record_run_inputs(old)  # recorded from now on
    assert json.loads(inputs_path(old).read_text()) == {
        "data.dataset": dataset_fingerprint(other)}  # fmt: skip


def test_a_new_run_records_its_dataset_as_its_folder_is_made(tmp_path, tiny_dataset, monkeypatch):
    """Written by the trainer with config.yaml, so a first attempt killed outright has it."""
    config = resolve_config("splicing", "tiny", overrides=[
        {"data": {"dataset": str(tiny_dataset)}, "train": {"core_samples": 16}}])  # fmt: skip
    started = []

    def killed(self):
        started.append(json.loads(inputs_path(self.out).read_text()))
        raise KeyboardInterrupt

    monkeypatch.setattr(Trainer, "run", killed)
    with pytest.raises(KeyboardInterrupt):
        train(config, tmp_path / "run", progress=False)
    assert started == [{"data.dataset": dataset_fingerprint(tiny_dataset)}]
