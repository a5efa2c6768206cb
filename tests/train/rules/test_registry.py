"""The rule registry: every rule plugs in the same way, its block and state round-trip, and
the docs' table of blocks is the code's."""

import dataclasses
import re

import pytest
import torch

from sparling_genomics.config import dump_yaml, to_dict
from sparling_genomics.train.checkpoint import restore_trainer
from sparling_genomics.train.legacy import rule_states_before_plugins
from sparling_genomics.train.rules.base import TrainingRule
from sparling_genomics.train.rules.registry import RULES, AnnealingConfig
from sparling_genomics.train.run_config import load_saved_config, resolve_config
from sparling_genomics.train.trainer import Trainer

from ...conftest import REPO

NAMES = [rule.name for rule in RULES]


def _on(name: str):
    """The tiny planted config with only rule ``name``'s block on, at its defaults (the
    planted presets' blocks turned off first)."""
    off = {rule.name: None for rule in RULES}
    return resolve_config("planted", "tiny", overrides=[
        {"data": {"background": "iid"}, "annealing": off}, {"annealing": {name: {}}}])  # fmt: skip


def test_each_rule_has_one_name_a_block_and_a_state():
    assert len(set(NAMES)) == len(NAMES)
    fields = {f.name for f in dataclasses.fields(AnnealingConfig)}
    for rule in RULES:
        assert issubclass(rule, TrainingRule) and rule.name in fields
        assert dataclasses.is_dataclass(rule.Settings) and dataclasses.is_dataclass(rule.State)
        for field in dataclasses.fields(rule.Settings):  # each key: its default and its help
            assert field.default is not dataclasses.MISSING and field.metadata.get("help")
    assert AnnealingConfig().rollback is None  # off unless given


@pytest.mark.parametrize("name", NAMES)
def test_a_rule_block_round_trips_through_config_yaml(name, tmp_path):
    config = _on(name)
    block = to_dict(getattr(config.annealing, name))
    assert block == dataclasses.asdict(next(r for r in RULES if r.name == name).Settings())
    others = [r.name for r in RULES if r.name != name]
    assert not any(other in to_dict(config.annealing) for other in others)
    saved = tmp_path / "config.yaml"
    saved.write_text(dump_yaml(config))
    assert to_dict(load_saved_config(saved)) == to_dict(config)


@pytest.mark.parametrize("name", NAMES)
def test_a_rule_state_round_trips_through_a_checkpoint(name, tmp_path):
    """Every field of a rule's state set to a value of its own comes back on resume."""
    config = _on(name)
    (tmp_path / "run").mkdir()
    first = Trainer(config, tmp_path / "run", progress=False)
    (rule,) = first.rules
    for i, field in enumerate(dataclasses.fields(rule.state)):
        value = getattr(rule.state, field.name)
        if isinstance(value, bool):
            setattr(rule.state, field.name, not value)
        elif isinstance(value, int | float):
            setattr(rule.state, field.name, type(value)(value + i + 1))
        elif isinstance(value, list):
            setattr(rule.state, field.name, [[i, 0.5]])
        else:  # an optional snapshot: the model's weights
            setattr(rule.state, field.name, {"model": {"w": torch.arange(3.0) + i}})
    first.save()
    second = Trainer(config, tmp_path / "run", progress=False)
    restore_trainer(second, tmp_path / "run" / "checkpoints" / "last.pt")
    assert str(second.rules[0].state_dict()) == str(rule.state_dict())
    assert second.rules[0].state_dict().keys() == rule.state_dict().keys()


def test_a_checkpoint_from_before_the_plugins_gives_each_rule_its_state():
    old = {"rollback": {"samples": 50_000, "tolerance": 0.02, "max_retries": 2, "limit": 4,
                        "anchor": None, "retries": 1, "rollbacks": 3, "log": [[1, 0.5, 0.4]]},
           "split": {"samples": 0, "splits": 0},
           "resample": {"samples": 0, "done": 0}}  # fmt: skip
    assert rule_states_before_plugins(old) == {
        "rollback": {"anchor": None, "retakes": 1, "rollbacks": 3, "log": [[1, 0.5, 0.4]]}}


def test_the_docs_table_of_rule_blocks_is_the_code():
    """docs/training-rules.md lists every key of every block with its default and help."""
    text = (REPO / "docs" / "training-rules.md").read_text()
    table = re.search(r"<!-- rule-blocks:start -->\n(.*?)<!-- rule-blocks:end -->", text,
                      re.S).group(1)  # fmt: skip
    rows = ["| key | default | meaning |", "|---|---|---|"]
    for rule in RULES:
        for field in dataclasses.fields(rule.Settings):
            rows.append(f"| `annealing.{rule.name}.{field.name}` | `{field.default}` | "
                        f"{field.metadata['help']} |")  # fmt: skip
    assert table.strip().splitlines() == rows
