"""A run's saved config records its input files so that the run travels: relative to the run
inside the working folder, absolute outside; read back from the run's folder wherever the
reader stands; old records (relative to the working folder) still read."""

from pathlib import Path

import pytest
import yaml

from sparling_genomics.config import dump_yaml, to_dict
from sparling_genomics.errors import ConfigError
from sparling_genomics.train.loading import load_run
from sparling_genomics.train.run_config import (
    check_recorded_config,
    load_saved_config,
    recorded_config,
    resolve_config,
)
from sparling_genomics.train.trainer import train


def _save(config, run: Path) -> None:
    run.mkdir(parents=True)
    (run / "config.yaml").write_text(dump_yaml(recorded_config(config, run)))


def test_a_dataset_in_the_project_is_recorded_relative_and_read_from_anywhere(
    tmp_path, monkeypatch
):
    project = tmp_path / "project"
    (project / "results").mkdir(parents=True)
    (project / "results" / "ds.h5").write_text("x")
    monkeypatch.chdir(project)
    config = resolve_config("splicing", "tiny", overrides=[{"data": {"dataset": "results/ds.h5"}}])
    _save(config, Path("results/run"))
    assert "dataset: ../ds.h5" in (project / "results" / "run" / "config.yaml").read_text()
    assert config.data.dataset == "results/ds.h5"  # the caller's config is left as it was
    moved = tmp_path / "renamed" / "results"
    moved.parent.mkdir()
    (project / "results").rename(moved)
    monkeypatch.chdir(tmp_path)
    loaded = load_saved_config(moved / "run" / "config.yaml")
    assert Path(loaded.data.dataset).resolve() == (moved / "ds.h5").resolve()


def test_a_dataset_outside_is_recorded_absolute(tmp_path, monkeypatch):
    (tmp_path / "project").mkdir()
    monkeypatch.chdir(tmp_path / "project")
    shared = tmp_path / "shared" / "ds.h5"
    config = resolve_config("splicing", "tiny", overrides=[{"data": {"dataset": str(shared)}}])
    _save(config, Path("run"))
    assert load_saved_config(Path("run/config.yaml")).data.dataset == str(shared)


def test_an_old_run_recorded_relative_to_the_working_folder_still_reads(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "ds.h5").write_text("x")
    config = resolve_config("splicing", "tiny", overrides=[{"data": {"dataset": "results/ds.h5"}}])
    (tmp_path / "results" / "run").mkdir()
    (tmp_path / "results" / "run" / "config.yaml").write_text(dump_yaml(config))  # as before
    loaded = load_saved_config(tmp_path / "results" / "run" / "config.yaml")
    assert loaded.data.dataset == "results/ds.h5"


def test_a_config_edited_after_training_is_refused_where_it_matters():
    """Evaluating reads the model's keys only; resuming every key but the budget's."""
    trained = resolve_config("splicing", "tiny", overrides=[{"data": {"dataset": "a.h5"}}])
    where = Path("run/checkpoints/final.pt")
    edits = {
        "model.head_dilations": ({"model": {"head_dilations": [1, 2]}}, True, True),
        "data.classes": ({"data": {"classes": ["none", "donor", "acceptor"]}}, True, True),
        "train.lr": ({"train": {"lr": 0.5}}, False, True),
        "annealing.rollback.samples": ({"annealing": {"rollback": {}}}, False, True),
        "train.max_seconds": ({"train": {"max_seconds": 9000.0}}, False, False),
        "data.dataset": ({"data": {"dataset": "moved/a.h5"}}, False, False),
    }
    for key, (edit, evaluate, resume) in edits.items():
        edited = resolve_config("splicing", "tiny", overrides=[{"data": {"dataset": "a.h5"}},
                                                               edit])  # fmt: skip
        for refuse, is_resume in ((evaluate, False), (resume, True)):
            if refuse:
                with pytest.raises(ConfigError, match=rf"^run/config.yaml: {key} is .* but the "
                                   "run was trained with .* \\(recorded in final.pt\\)"):
                    check_recorded_config(edited, to_dict(trained), where,
                                          resume=is_resume)  # fmt: skip
            else:
                check_recorded_config(edited, to_dict(trained), where, resume=is_resume)
    # A rule block the run trained with, taken out of config.yaml: refused on resume.
    planted = resolve_config("planted", "tiny")
    off = resolve_config("planted", "tiny", overrides=[{"annealing": {"rollback": None}}])
    with pytest.raises(ConfigError, match="annealing.rollback.samples is 'off'"):
        check_recorded_config(off, to_dict(planted), where, resume=True)


def test_a_finished_run_whose_config_was_edited_loads_only_when_the_model_is_the_same(tmp_path):
    run = tmp_path / "run"
    train(resolve_config("planted", "tiny", overrides=[{"data": {"background": "iid"}}]), run,
          progress=False)  # fmt: skip
    saved = yaml.safe_load((run / "config.yaml").read_text())
    saved["train"]["lr"] = 0.123  # shaped training only
    (run / "config.yaml").write_text(yaml.safe_dump(saved, sort_keys=False))
    load_run(run)
    saved["model"]["sparse"]["peak_window"] = 2  # same tensor shapes, another model
    (run / "config.yaml").write_text(yaml.safe_dump(saved, sort_keys=False))
    with pytest.raises(ConfigError, match="model.sparse.peak_window is 2 but the run was "
                                          "trained with 5"):  # fmt: skip
        load_run(run)
