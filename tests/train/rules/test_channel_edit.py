import dataclasses

import numpy as np
import pytest
import torch

from sparling_genomics.errors import ConfigError
from sparling_genomics.models import split as model_split
from sparling_genomics.models.heads import CTCSequenceHead1D
from sparling_genomics.train.rules import channel_edit
from sparling_genomics.train.rules.channel_edit import (
    ChannelEdit,
    ChannelEditSettings,
    pick_split,
)
from sparling_genomics.train.run_config import resolve_config
from sparling_genomics.train.trainer import Trainer, train

from ..test_trainer import read_log, resumes_exactly


def test_pick_split_takes_the_busiest_motif_into_an_idle_or_dead_one():
    assert pick_split([0.3, 0.4, 0.05, 0.35]) == (1, 2)  # 0.05 < 0.2 x median 0.325
    assert pick_split([0.3, 0.4, 0.0, 0.35]) == (1, 2)  # a dead motif too
    assert pick_split([0.3, 0.4, 0.07, 0.35]) is None  # 0.07 >= 0.065
    assert pick_split([0.4, 0.0]) is None  # fewer than three motifs
    assert pick_split([0.0, 0.0, 0.0, 0.4]) is None  # median 0: nothing to compare with


def test_the_rule_looks_every_w_samples_within_its_density():
    assert resolve_config("planted", "tiny", overrides=[
        {"annealing": {"channel_edit": None}}]).annealing.channel_edit is None  # fmt: skip
    rule = ChannelEdit(ChannelEditSettings(samples=100, max_splits=1))
    assert rule.settings.within == 8.0
    assert not rule.due(500, 0.0081, 0.001)  # above 8 x the stop density
    assert rule.due(500, 0.008, 0.001)
    rule.state.since = 500
    assert not rule.due(599, 0.002, 0.001) and rule.due(600, 0.002, 0.001)
    rule.state.splits = 1
    assert not rule.due(10**6, 0.002, 0.001)  # its limit spent
    rule.settings.push = True
    assert rule.due(10**6, 0.002, 0.001)  # tidying goes on after the split limit
    rule.settings.until = 0.5
    assert rule.due(10**6, 0.002, 0.001, 0.49) and not rule.due(10**6, 0.002, 0.001, 0.5)
    assert not rule.due(10**6, None, 0.001)  # no sparse layer


def _tiny(samples=None, **block):
    """The tiny planted run with the rule looking every ``samples`` (none: no block)."""
    edit = {"samples": samples, "within": 1000, **block} if samples else None
    return resolve_config("planted", "tiny", overrides=[
        {"data": {"background": "iid"}, "annealing": {"channel_edit": edit, "rollback": None}},
        {"train": {"max_samples": 2400, "final_samples": 800}},
    ])  # fmt: skip


def _scripted_necessity(monkeypatch, idle=2):
    """Motif ``idle`` never needed, the others equally: the rule sees an idle motif every
    time it looks (and its source is the first of the busiest, motif 0)."""
    looks = []

    def necessity(model, task, split, **kwargs):
        looks.append(split)
        alpha = [0.0 if c == idle else 0.3 for c in range(model.learned)]
        return {"channels": [str(c) for c in range(model.learned)], "alpha": alpha}

    monkeypatch.setattr(channel_edit, "channel_necessity", necessity)
    return looks


def test_a_run_splits_its_busiest_motif_into_an_idle_one(tmp_path, monkeypatch):
    looks = _scripted_necessity(monkeypatch)
    copies = []
    apply = channel_edit.apply_split

    def watched(model, source, target, **kwargs):
        apply(model, source, target, **kwargs)
        w = model.g.out.weight.detach()
        b = model.block_size
        copies.append(torch.allclose(w[target * b:(target + 1) * b], w[source * b:(source + 1) * b],
                                     rtol=0.3, atol=1e-4))  # fmt: skip

    monkeypatch.setattr(channel_edit, "apply_split", watched)
    metrics = train(_tiny(320, max_splits=2), tmp_path / "run", progress=False)
    log = [(r["samples"], r["channel_edit"]["split"]) for r in read_log(tmp_path / "run")
           if "channel_edit" in r]  # fmt: skip
    splits = [(samples, split["source"], split["target"]) for samples, split in log]
    assert splits == [(160, 0, 2), (480, 0, 2)]  # every 320 samples, then its limit
    assert len(looks) == 2 and copies == [True, True]
    summary = metrics["annealing"]["channel_edit"]
    assert summary["splits"] == 2 and [e[:3] for e in summary["log"]] == [[160, 0, 2], [480, 0, 2]]


def test_a_run_without_the_rule_never_looks(tmp_path, monkeypatch):
    looks = _scripted_necessity(monkeypatch)
    metrics = train(_tiny(), tmp_path / "run", progress=False)
    assert looks == [] and "channel_edit" not in metrics["annealing"]
    assert not any("channel_edit" in r for r in read_log(tmp_path / "run"))


def test_no_look_while_another_rule_waits_on_the_model(tmp_path, monkeypatch):
    looks = _scripted_necessity(monkeypatch)
    (tmp_path / "run").mkdir()
    config = _tiny(320)
    config.annealing.rollback = resolve_config("planted", "cpu").annealing.rollback
    trainer = Trainer(config, tmp_path / "run", progress=False)
    rollback, edit = trainer.rules
    rollback.state.anchor = {"model": {}, "optimizer": {}}  # a step on probation
    context = dataclasses.replace(trainer._context(0.5), settled=rollback.settled)
    assert not context.settled and edit.after(context) == {} and looks == []
    assert edit.after(dataclasses.replace(context, settled=True)) and looks == ["val"]


def test_a_run_killed_after_a_split_resumes_exactly(tmp_path, monkeypatch):
    _scripted_necessity(monkeypatch)
    config = _tiny(320, max_splits=2)
    assert resumes_exactly(config, tmp_path, monkeypatch, kill_at=320, logged="channel_edit")


def test_a_model_that_cannot_split_fails_before_the_run(tmp_path, monkeypatch):
    monkeypatch.setattr(CTCSequenceHead1D, "split_edits", None)
    (tmp_path / "run").mkdir()
    with pytest.raises(ConfigError, match="head that can share its inputs"):
        Trainer(_tiny(320), tmp_path / "run", progress=False)
    Trainer(_tiny(), tmp_path / "run", progress=False)  # off: no check


def _scripted_clusters(monkeypatch, two_way: set[int], looks: list):
    """Motifs in ``two_way`` fire in two clusters pointing two ways (cosine 0.5 for motif 1,
    0.7 for others), the rest in one."""

    def clusters(model, task, split, **kwargs):
        looks.append(split)
        hidden = model.g.out.weight.shape[1]
        centres = torch.zeros(2, hidden).numpy()
        centres[0, 0], centres[1, 1] = 1.0, 1.0
        return [{"firings": 50, "cos": (0.5 if c == 1 else 0.7) if c in two_way else 1.0,
                 "minor": 0.3, "centres": centres} for c in range(model.learned)]  # fmt: skip

    monkeypatch.setattr(channel_edit, "firing_clusters", clusters)


def test_two_patterns_splits_only_a_motif_that_fires_two_ways(tmp_path, monkeypatch):
    """``split_source: two_patterns``: an idle motif alone is no reason to split; a motif whose
    firings form two clusters is copied into the idle one (the most distinct first), and the
    copies' g filters are moved apart along the line between the clusters."""
    _scripted_necessity(monkeypatch, idle=2)
    looks: list = []
    _scripted_clusters(monkeypatch, set(), looks)
    metrics = train(_tiny(320, source="two_patterns"), tmp_path / "none", progress=False)
    assert looks and metrics["annealing"]["channel_edit"]["splits"] == 0

    looks.clear()
    _scripted_clusters(monkeypatch, {1, 3}, looks)
    aimed = []
    move = channel_edit.move_filters

    def watched(model, motif, toward, away, step):
        w = model.g.out.weight.detach().reshape(model.g.out.weight.shape[0], -1).clone()
        move(model, motif, toward, away, step)
        after = model.g.out.weight.detach().reshape(w.shape)
        line = torch.as_tensor(toward - away, dtype=w.dtype)
        aimed.append((motif, all(float((after[c] - w[c]) @ line) > 0
                                 for c in model.motif_groups()[motif])))  # fmt: skip

    monkeypatch.setattr(channel_edit, "move_filters", watched)
    metrics = train(_tiny(320, source="two_patterns", max_splits=1), tmp_path / "two",
                    progress=False)  # fmt: skip
    log = [r["channel_edit"]["split"] for r in read_log(tmp_path / "two") if "channel_edit" in r]
    assert [(s["source"], s["target"], s["cos"]) for s in log] == [(1, 2, 0.5)]
    # The source moved towards its first (larger) cluster, the copy towards the second.
    assert [m for m, _ in aimed] == [1, 2] and all(ok for _, ok in aimed)
    assert metrics["annealing"]["channel_edit"]["source"] == "two_patterns"


def test_tidy_merges_a_repeat_and_pushes_a_motif_off_a_pattern_another_owns(
    tmp_path, monkeypatch
):
    """``merge`` and ``push``: at each look a motif whose main firing cluster
    repeats another's is re-initialised into a spare (what h read from it added to the kept,
    more needed one), and a motif whose smaller cluster points the way of another motif's main
    one is moved towards its own main cluster; looks go on after the split limit."""
    _scripted_necessity(monkeypatch, idle=2)

    def clusters(model, task, split, **kwargs):
        hidden = model.g.out.weight.shape[1]
        e = torch.eye(hidden).numpy()
        one = {"firings": 50, "cos": 1.0, "minor": 0.4}
        found = [{**one, "centres": e[[c, c]]} for c in range(model.learned)]
        found[3] = {"firings": 50, "cos": 0.0, "minor": 0.3, "centres": e[[3, 1]]}  # 1's
        found[5] = {**one, "centres": e[[0, 0]]}  # repeats motif 0 (alpha 0.3 both: 5 goes)
        return found

    monkeypatch.setattr(channel_edit, "firing_clusters", clusters)
    moved, merged = [], []
    move, reinit = channel_edit.move_filters, channel_edit.reinit_motif

    def watched_push(model, motif, toward, away, step):
        w = model.g.out.weight.detach().reshape(model.g.out.weight.shape[0], -1).clone()
        move(model, motif, toward, away, step)
        after = model.g.out.weight.detach().reshape(w.shape)
        line = torch.as_tensor(toward - away, dtype=w.dtype)
        groups = model.motif_groups()
        changed = [c for c in range(len(w)) if not torch.equal(w[c], after[c])]
        moved.append(changed == list(groups[motif])
                     and all(float((after[c] - w[c]) @ line) > 0 for c in groups[motif]))

    def watched_reinit(model, motif, **kwargs):
        merged.append((motif, kwargs["merge"], kwargs["optimizer"] is not None))
        reinit(model, motif, **kwargs)

    monkeypatch.setattr(channel_edit, "move_filters", watched_push)
    monkeypatch.setattr(channel_edit, "reinit_motif", watched_reinit)
    metrics = train(_tiny(320, source="two_patterns", max_splits=0, push=True, merge=True),
                    tmp_path / "tidy", progress=False)  # fmt: skip
    tidied = [r["channel_edit"] for r in read_log(tmp_path / "tidy") if "channel_edit" in r]
    assert len(tidied) >= 2  # after the split limit (0) too
    assert all(t == {"merge": [[5, 0]], "push": [3]} for t in tidied)
    assert moved and all(moved) and merged and all(m == (5, 0, True) for m in merged)
    summary = metrics["annealing"]["channel_edit"]
    assert summary["splits"] == 0 and summary["push"] and summary["merge"]
    assert len(summary["tidied"]) == len(tidied)


def test_move_filters_moves_only_the_motif_along_the_line(tmp_path):
    (tmp_path / "run").mkdir()
    model = Trainer(_tiny(320), tmp_path / "run", progress=False).model
    w = model.g.out.weight.detach().clone().flatten(1)
    toward, away = np.zeros(w.shape[1]), np.zeros(w.shape[1])
    toward[0], away[1] = 3.0, 4.0  # the unit line: (0.6, -0.8, 0, ...)
    model_split.move_filters(model, 1, toward, away, 0.2)
    after = model.g.out.weight.detach().flatten(1)
    moved = set(model.motif_groups()[1])
    for c in range(len(w)):
        step = after[c] - w[c]
        if c not in moved:
            assert torch.equal(step, torch.zeros_like(step))
            continue
        line = torch.zeros_like(step)
        line[0], line[1] = 0.6, -0.8
        assert torch.allclose(step, 0.2 * w[c].norm() * line, atol=1e-6)
