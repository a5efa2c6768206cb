import pytest

from sparling_genomics.config import parse_override, resolve_config
from sparling_genomics.errors import ConfigError


def test_defaults_and_preset_resolve():
    config = resolve_config("planted", "tiny")
    assert config["task"] == "planted" and config["preset"] == "tiny"
    assert config["train"]["batch_size"] == 16
    assert config["annealing"]["stop_density"] == "auto"


def test_overrides_apply_and_coerce():
    config = resolve_config(
        "planted", "cpu", overrides=[parse_override("train.lr=0.01"), parse_override("seed=3")]
    )
    assert config["train"]["lr"] == 0.01 and config["seed"] == 3
    config = resolve_config(
        "planted", "cpu", overrides=[parse_override("annealing.stop_density=1e-3")]
    )
    assert config["annealing"]["stop_density"] == 1e-3


@pytest.mark.parametrize(
    "override,message",
    [
        ("train.lrr=1", "unknown config key 'train.lrr'"),
        ("train.lr=fast", "must be a number"),
        ("model.reverse_complement=3", "must be true or false"),
        ("train.batch_size=true", "must be a number"),
        ("annealing.stop_density=low", "must be a number or 'auto'"),
        ("data=5", "must be a mapping"),
        ("data.motifs=MA0573.2", "must be a list"),
    ],
)
def test_bad_overrides_are_refused(override, message):
    with pytest.raises(ConfigError, match=message):
        resolve_config("planted", "cpu", overrides=[parse_override(override)])


def test_unknown_task_and_preset():
    with pytest.raises(ConfigError, match="unknown task 'nope'"):
        resolve_config("nope")
    with pytest.raises(ConfigError, match="unknown preset 'huge'"):
        resolve_config("planted", "huge")


def test_config_file(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("train:\n  batch_size: 8\n")
    assert resolve_config("planted", "cpu", files=[path])["train"]["batch_size"] == 8
    path.write_text("train: [unclosed\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        resolve_config("planted", "cpu", files=[path])
    with pytest.raises(ConfigError, match="not found"):
        resolve_config("planted", "cpu", files=[tmp_path / "missing.yaml"])
