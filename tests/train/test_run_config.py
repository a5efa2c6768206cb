"""A run's saved config records its input files so that the run travels: relative to the run
inside the working folder, absolute outside; read back from the run's folder wherever the
reader stands; old records (relative to the working folder) still read."""

from pathlib import Path

from sparling_genomics.config import dump_yaml
from sparling_genomics.train.run_config import load_saved_config, recorded_config, resolve_config


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
