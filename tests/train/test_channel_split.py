import pytest
import torch

from sparling_genomics.errors import ConfigError
from sparling_genomics.models.heads import CTCSequenceHead1D
from sparling_genomics.sparsity.annealing import AnnealingSettings
from sparling_genomics.train import channel_split
from sparling_genomics.train.channel_split import IdleSplit, pick_split
from sparling_genomics.train.run_config import resolve_config
from sparling_genomics.train.trainer import Trainer, train

from .test_trainer import read_log, resumes_exactly


def test_pick_split_takes_the_busiest_motif_into_an_idle_or_dead_one():
    assert pick_split([0.3, 0.4, 0.05, 0.35]) == (1, 2)  # 0.05 < 0.2 x median 0.325
    assert pick_split([0.3, 0.4, 0.0, 0.35]) == (1, 2)  # a dead motif too
    assert pick_split([0.3, 0.4, 0.07, 0.35]) is None  # 0.07 >= 0.065
    assert pick_split([0.4, 0.0]) is None  # fewer than three motifs
    assert pick_split([0.0, 0.0, 0.0, 0.4]) is None  # median 0: nothing to compare with


def test_the_rule_is_off_unless_set_and_looks_every_w_samples_within_its_density():
    assert not IdleSplit.from_settings(AnnealingSettings()).due(10**6, 1e-3, 1e-3)
    rule = IdleSplit.from_settings(AnnealingSettings(split_samples=100, split_limit=1))
    assert rule.within == 8.0
    assert not rule.due(500, 0.0081, 0.001)  # above 8 x the stop density
    assert rule.due(500, 0.008, 0.001)
    rule.since = 500
    assert not rule.due(599, 0.002, 0.001) and rule.due(600, 0.002, 0.001)
    rule.splits = 1
    assert not rule.due(10**6, 0.002, 0.001)  # its limit spent
    rule.push = True
    assert rule.due(10**6, 0.002, 0.001)  # tidying goes on after the split limit
    rule.until = 0.5
    assert rule.due(10**6, 0.002, 0.001, 0.49) and not rule.due(10**6, 0.002, 0.001, 0.5)
    assert not rule.due(10**6, None, 0.001)  # no sparse layer


def _tiny(**annealing):
    return resolve_config("planted", "tiny", overrides=[
        {"data": {"background": "iid"}, "annealing": {"split_within": 1000, **annealing}},
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

    monkeypatch.setattr(channel_split, "channel_necessity", necessity)
    return looks


def test_a_run_splits_its_busiest_motif_into_an_idle_one(tmp_path, monkeypatch):
    looks = _scripted_necessity(monkeypatch)
    copies = []
    apply = channel_split.apply_split

    def watched(model, source, target, **kwargs):
        apply(model, source, target, **kwargs)
        w = model.g.out.weight.detach()
        b = model.block_size
        copies.append(torch.allclose(w[target * b:(target + 1) * b], w[source * b:(source + 1) * b],
                                     rtol=0.3, atol=1e-4))  # fmt: skip

    monkeypatch.setattr(channel_split, "apply_split", watched)
    metrics = train(_tiny(split_samples=320, split_limit=2), tmp_path / "run", progress=False)
    log = read_log(tmp_path / "run")
    splits = [(r["samples"], r["split"]["source"], r["split"]["target"]) for r in log
              if "split" in r]  # fmt: skip
    assert splits == [(160, 0, 2), (480, 0, 2)]  # every 320 samples, then its limit
    assert len(looks) == 2 and copies == [True, True]
    summary = metrics["annealing"]["split"]
    assert summary["splits"] == 2 and [e[:3] for e in summary["log"]] == [[160, 0, 2], [480, 0, 2]]


def test_a_run_without_the_rule_never_looks(tmp_path, monkeypatch):
    looks = _scripted_necessity(monkeypatch)
    metrics = train(_tiny(split_samples=0), tmp_path / "run", progress=False)
    assert looks == [] and "split" not in metrics["annealing"]
    assert not any("split" in r for r in read_log(tmp_path / "run"))


@pytest.mark.parametrize("on_rollback", [False, True])
def test_a_split_answers_a_rollback_only_when_set_and_the_step_then_stands(
    tmp_path, monkeypatch, on_rollback
):
    looks = _scripted_necessity(monkeypatch)
    (tmp_path / "run").mkdir()
    trainer = Trainer(_tiny(split_samples=320, split_on_rollback=on_rollback),
                      tmp_path / "run", progress=False)  # fmt: skip
    trainer.probation.anchor = {"model": {}, "optimizer": {}}  # a step on probation
    assert trainer.splitter.review(trainer, 160) == {} and looks == []  # no look on probation
    if not on_rollback:
        assert trainer.splitter.instead_of_rollback(trainer, 160) == {} and looks == []
        return
    record = {"probation": "rollback"}
    density = trainer.model.density
    trainer._roll_back(record)  # the trainer's rollback, answered by a split
    assert looks == ["val"] and (record["split"]["source"], record["split"]["target"]) == (0, 2)
    assert record["probation"] == "split" and "rolled_back" not in record
    assert not trainer.probation.active and trainer.model.density == density
    assert trainer.splitter.summary()["on_rollback"] is True
    trainer.probation.anchor = {"model": {}, "optimizer": {}}
    assert trainer.splitter.instead_of_rollback(trainer, 200) == {}  # next look W samples on


def test_a_run_killed_after_a_split_resumes_exactly(tmp_path, monkeypatch):
    _scripted_necessity(monkeypatch)
    config = _tiny(split_samples=320, split_limit=2)
    assert resumes_exactly(config, tmp_path, monkeypatch, kill_at=320, logged="split")


def test_a_model_that_cannot_split_fails_before_the_run(tmp_path, monkeypatch):
    monkeypatch.setattr(CTCSequenceHead1D, "split_edits", None)
    (tmp_path / "run").mkdir()
    with pytest.raises(ConfigError, match="head that can share its inputs"):
        Trainer(_tiny(split_samples=320), tmp_path / "run", progress=False)
    Trainer(_tiny(split_samples=0), tmp_path / "run", progress=False)  # off: no check


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

    monkeypatch.setattr(channel_split, "firing_clusters", clusters)


def test_two_patterns_splits_only_a_motif_that_fires_two_ways(tmp_path, monkeypatch):
    """``split_source: two_patterns``: an idle motif alone is no reason to split; a motif whose
    firings form two clusters is copied into the idle one (the most distinct first), and the
    copies' g filters are moved apart along the line between the clusters."""
    _scripted_necessity(monkeypatch, idle=2)
    looks: list = []
    _scripted_clusters(monkeypatch, set(), looks)
    metrics = train(_tiny(split_samples=320, split_source="two_patterns"), tmp_path / "none",
                    progress=False)  # fmt: skip
    assert looks and metrics["annealing"]["split"]["splits"] == 0

    looks.clear()
    _scripted_clusters(monkeypatch, {1, 3}, looks)
    aimed = []
    aim = channel_split.aim_split

    def watched(model, source, target, centres):
        w = model.g.out.weight.detach().reshape(model.g.out.weight.shape[0], -1).clone()
        aim(model, source, target, centres)
        after = model.g.out.weight.detach().reshape(w.shape)
        line = torch.as_tensor(centres[0] - centres[1], dtype=w.dtype)
        groups = model.motif_groups()
        aimed.append(all(float((after[c] - w[c]) @ line) > 0 for c in groups[source])
                     and all(float((after[c] - w[c]) @ line) < 0 for c in groups[target]))

    monkeypatch.setattr(channel_split, "aim_split", watched)
    metrics = train(_tiny(split_samples=320, split_source="two_patterns", split_limit=1),
                    tmp_path / "two", progress=False)  # fmt: skip
    log = [r["split"] for r in read_log(tmp_path / "two") if "split" in r]
    assert [(s["source"], s["target"], s["cos"]) for s in log] == [(1, 2, 0.5)]
    assert aimed == [True]
    assert metrics["annealing"]["split"]["source"] == "two_patterns"


def test_tidy_merges_a_repeat_and_pushes_a_motif_off_a_pattern_another_owns(
    tmp_path, monkeypatch
):
    """``split_merge`` and ``split_push``: at each look a motif whose main firing cluster
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

    monkeypatch.setattr(channel_split, "firing_clusters", clusters)
    moved, merged = [], []
    push, reinit = channel_split.push_off, channel_split.reinit_motif

    def watched_push(model, motif, centres):
        w = model.g.out.weight.detach().reshape(model.g.out.weight.shape[0], -1).clone()
        push(model, motif, centres)
        after = model.g.out.weight.detach().reshape(w.shape)
        line = torch.as_tensor(centres[0] - centres[1], dtype=w.dtype)
        groups = model.motif_groups()
        changed = [c for c in range(len(w)) if not torch.equal(w[c], after[c])]
        moved.append(changed == list(groups[motif])
                     and all(float((after[c] - w[c]) @ line) > 0 for c in groups[motif]))

    def watched_reinit(model, motif, **kwargs):
        merged.append((motif, kwargs["merge"], kwargs["optimizer"] is not None))
        reinit(model, motif, **kwargs)

    monkeypatch.setattr(channel_split, "push_off", watched_push)
    monkeypatch.setattr(channel_split, "reinit_motif", watched_reinit)
    metrics = train(_tiny(split_samples=320, split_source="two_patterns", split_limit=0,
                          split_push=True, split_merge=True), tmp_path / "tidy",
                    progress=False)  # fmt: skip
    tidied = [r["tidy"] for r in read_log(tmp_path / "tidy") if "tidy" in r]
    assert len(tidied) >= 2  # after the split limit (0) too
    assert all(t == {"merge": [[5, 0]], "push": [3]} for t in tidied)
    assert moved and all(moved) and merged and all(m == (5, 0, True) for m in merged)
    summary = metrics["annealing"]["split"]
    assert summary["splits"] == 0 and summary["push"] and summary["merge"]
    assert len(summary["tidied"]) == len(tidied)

