"""docs/architecture.md's smallest task is real: one module plus one registry line, and it
trains, evaluates and reports like the built-in tasks."""

import importlib
import re
import sys

import pytest

from sparling_genomics import tasks
from sparling_genomics.errors import ConfigError
from sparling_genomics.report.page import write_report
from sparling_genomics.rundir import config_path, metrics_path
from sparling_genomics.tasks.registry import TASKS
from sparling_genomics.train.loading import evaluate_run
from sparling_genomics.train.run_config import resolve_config
from sparling_genomics.train.trainer import train
from tests.conftest import REPO

DOC = REPO / "docs" / "architecture.md"


@pytest.fixture
def two_kmers(tmp_path, monkeypatch):
    """The page's task module, saved into the tasks package and registered."""
    section = DOC.read_text().split("## Adding a task", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    package_dir = tmp_path / "tasks_extra"
    package_dir.mkdir()
    (package_dir / "two_kmers.py").write_text(code)
    monkeypatch.setattr(tasks, "__path__", [*tasks.__path__, str(package_dir)])
    module = importlib.import_module("sparling_genomics.tasks.two_kmers")
    monkeypatch.setitem(TASKS, "two_kmers", module.TwoKmersTask)
    yield module
    sys.modules.pop("sparling_genomics.tasks.two_kmers", None)


def test_the_documented_task_trains_evaluates_and_reports(two_kmers, tmp_path):
    run = tmp_path / "run"
    config = resolve_config("two_kmers", "tiny")
    assert config.annealing.stop_density == 0.01 and config.model.motif_channels == 2
    metrics = train(config, run, progress=False)
    assert metrics["task"] == "two_kmers" and metrics["samples_seen"] == 64
    assert set(metrics["e2e"]) == {"exact_match", "edit_error"}
    assert config_path(run).is_file() and metrics_path(run).is_file()
    again = evaluate_run(run, split="test")
    assert again["e2e"] == metrics["e2e"]
    assert "two_kmers" in write_report(run, tmp_path / "report.html").read_text()


def test_the_documented_task_s_config_is_checked_like_any_other(two_kmers):
    with pytest.raises(ConfigError, match="data.length"):
        resolve_config("two_kmers", "tiny", overrides=[{"data": {"length": 10}}])
