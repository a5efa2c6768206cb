import dataclasses

import pytest
import torch

from sparling_genomics.sparsity.annealing import SparsityAnnealer
from sparling_genomics.train import trainer as trainer_module
from sparling_genomics.train.checkpoint import restore_trainer
from sparling_genomics.train.rules.rollback import Rollback, RollbackSettings
from sparling_genomics.train.run_config import resolve_config
from sparling_genomics.train.trainer import Trainer, _snapshot, train

from ..test_trainer import read_log, resumes_exactly, same_weights


def _rule(samples=100, tolerance=0.02, retries=2, limit=4):
    return Rollback(RollbackSettings(samples=samples, tolerance=tolerance, retries=retries,
                                     limit=limit))  # fmt: skip


def _optimizer():
    layer = torch.nn.Linear(2, 1)
    return layer, torch.optim.Adam(layer.parameters())


def test_off_unless_its_block_is_given(tmp_path):
    assert resolve_config("digit_circle", "tiny").annealing.rollback is None
    (tmp_path / "run").mkdir()
    trainer = Trainer(_tiny(), tmp_path / "run", progress=False)
    assert not any(isinstance(rule, Rollback) for rule in trainer.rules)
    trainer = Trainer(_tiny(samples=320), tmp_path / "run", progress=False)
    assert [rule.name for rule in trainer.rules] == ["rollback"]


def test_a_recovered_step_ends_its_rule():
    rule = _rule()
    layer, optimizer = _optimizer()
    rule.begin(_snapshot(layer), optimizer, 0.90, 0.5, 1000)
    assert rule.verdict(1050, 0.85) == "waiting"
    assert rule.verdict(1080, 0.881) == "recovered"  # within 0.02 of 0.90
    assert rule.settled and rule.verdict(5000, 0.0) is None
    assert rule.state.rollbacks == 0


def test_an_unrecovered_step_is_retaken_at_half_its_log_size_then_stands():
    rule = _rule(samples=100, retries=2)
    annealer = SparsityAnnealer(start_density=0.5, stop_density=0.01, multiplier=0.75)
    layer, optimizer = _optimizer()
    decision = annealer.update(1000, 1.0)  # clears the bar 1.0 - 0: a step
    assert decision.tightened and annealer.density == pytest.approx(0.375)
    rule.begin(_snapshot(layer), optimizer, 1.0, decision.density_before, 1000)
    assert rule.verdict(1099, 0.5) == "waiting"  # 99 samples: not yet
    assert rule.verdict(1100, 0.5) == "rollback"
    assert rule.retake(annealer, 1100) == pytest.approx(0.5 * 0.75**0.5)
    assert annealer.bar == 1.0 and annealer.last_samples == 1100
    assert rule.verdict(1150, 0.5) == "waiting"  # the window counts from the retake
    assert rule.verdict(1200, 0.5) == "rollback"
    assert rule.retake(annealer, 1200) == pytest.approx(0.5 * 0.75**0.25)
    assert rule.verdict(1300, 0.5) == "gave_up"  # two retakes: the step stands
    assert rule.settled
    assert rule.state.rollbacks == 2 and rule.state.given_up == 1
    summary = rule.summary()
    assert [row[0] for row in summary["retaken"]] == [1100, 1200]
    assert summary["steps_given_up"] == 1


def test_the_reference_is_the_mean_of_the_last_evaluations_at_the_density_left():
    """A step taken at a lucky evaluation is measured against the level the run held before
    it, not against that evaluation; Algorithm 1's bar after a retake is still the step's."""
    rule = _rule(samples=100)
    annealer = SparsityAnnealer(start_density=0.5, stop_density=0.01, multiplier=0.75,
                                initial_bar=0.9)  # fmt: skip
    layer, optimizer = _optimizer()
    for accuracy in (0.50, 0.80, 0.84):  # 0.50 falls out of the window of three
        rule.observe(accuracy, 0.5)
    rule.observe(0.92, 0.5)  # this one takes the step
    decision = annealer.update(1000, 0.92)
    assert decision.tightened
    rule.begin(_snapshot(layer), optimizer, 0.92, decision.density_before, 1000)
    assert rule.state.reference == pytest.approx((0.80 + 0.84 + 0.92) / 3)
    rule.observe(0.82, annealer.density)  # a new density: a new window
    assert rule.state.recent == [0.82]
    assert rule.verdict(1050, 0.82) == "waiting"  # 0.8533 - 0.02 = 0.8333
    assert rule.verdict(1100, 0.80) == "rollback"
    rule.retake(annealer, 1100)
    assert annealer.bar == 0.92
    assert rule.verdict(1150, 0.834) == "recovered"


def test_a_step_from_a_density_never_evaluated_is_measured_against_its_own_accuracy():
    rule = _rule()
    layer, optimizer = _optimizer()
    rule.observe(0.7, 0.375)
    rule.begin(_snapshot(layer), optimizer, 0.9, 0.5, 1000)
    assert rule.state.reference == 0.9


def test_after_its_limit_of_rollbacks_a_run_watches_no_step():
    rule = _rule(samples=100, retries=2, limit=1)
    annealer = SparsityAnnealer(start_density=0.5, stop_density=0.01, multiplier=0.75)
    layer, optimizer = _optimizer()
    annealer.update(1000, 1.0)
    rule.begin(_snapshot(layer), optimizer, 1.0, 0.5, 1000)
    assert rule.verdict(1100, 0.5) == "rollback"
    rule.retake(annealer, 1100)
    assert rule.spent
    assert rule.verdict(1200, 0.5) == "gave_up"  # retries left, but the limit is spent
    rule.begin(_snapshot(layer), optimizer, 0.9, annealer.density, 1300)
    assert rule.settled and rule.verdict(10_000, 0.0) is None
    summary = rule.summary()
    assert summary["rollbacks"] == 1 and summary["limit"] == 1 and summary["limit_reached"]


def test_the_step_that_ends_annealing_is_not_watched(tmp_path, monkeypatch):
    """The final phase is that step's recovery: accuracy 0.9 when it is taken, 0.5 after,
    and the run stays in the final phase with no probation and no rollback."""
    real = trainer_module.evaluate_model
    calls = []

    def scripted(model, task, split, **kwargs):
        result = real(model, task, split, **kwargs)
        calls.append(0.9 if not calls else 0.5)
        return dataclasses.replace(result, e2e={**result.e2e, task.accuracy_metric: calls[-1]})

    monkeypatch.setattr(trainer_module, "evaluate_model", scripted)
    # One step from 0.5 (0.375) ends annealing: another would pass under 0.3.
    config = _tiny(samples=320, start_density=0.5, stop_density=0.3)
    metrics = train(config, tmp_path / "run", progress=False)
    log = read_log(tmp_path / "run")
    assert log[0]["tightened"] and log[1]["phase"] == "final"
    assert not any("rollback" in r for r in log)
    assert metrics["annealing"]["rollback"]["rollbacks"] == 0
    assert metrics["annealing"]["complete"] is True


def _tiny(samples=None, **annealing):
    """The tiny planted run, with the rule's block (``samples`` between looks) or none."""
    rule = {"rollback": {"samples": samples} if samples else None, "channel_edit": None}
    return resolve_config("planted", "tiny", overrides=[
        {"data": {"background": "iid"}, "annealing": {**annealing, **rule}},
        {"train": {"max_samples": 2400, "final_samples": 800}},
    ])  # fmt: skip


def test_a_step_never_recovered_from_is_taken_back_and_retaken_smaller(tmp_path, monkeypatch):
    """Validation accuracy 0.9 at the first evaluation (a step), 0.5 after: the step is taken
    back after rollback_samples with the weights and optimizer from before it, retaken at
    m ** 0.5 and m ** 0.25, then stands; no step is taken while it is on rule."""
    real = trainer_module.evaluate_model
    calls = []

    def scripted(model, task, split, **kwargs):
        result = real(model, task, split, **kwargs)
        accuracy = 0.9 if not calls else 0.5
        calls.append(accuracy)
        return dataclasses.replace(result, e2e={**result.e2e, task.accuracy_metric: accuracy})

    monkeypatch.setattr(trainer_module, "evaluate_model", scripted)
    restored = []
    review = Rollback.review

    def watched(self, context):
        anchor = self.state.anchor
        before = None if anchor is None else {k: v.clone() for k, v in anchor["model"].items()
                                              if torch.is_tensor(v)}  # fmt: skip
        answer = review(self, context)
        if answer.restored:
            now = context.model.state_dict()
            restored.append(all(torch.equal(now[k].cpu(), before[k]) for k, _ in
                                context.model.named_parameters()))  # fmt: skip
        return answer

    monkeypatch.setattr(Rollback, "review", watched)
    config = _tiny(samples=320)
    metrics = train(config, tmp_path / "run", progress=False)
    log = read_log(tmp_path / "run")
    assert log[0]["tightened"] and log[0]["samples"] == 160
    rolled = [r for r in log if r.get("rollback", {}).get("verdict") == "rolled_back"]
    assert [(r["samples"], r["rollback"]["retake"]) for r in rolled] == [(480, 1), (800, 2)]
    assert restored == [True, True]
    densities = [next(r["density"] for r in log if r["samples"] > x["samples"]) for x in rolled]
    assert densities == pytest.approx([0.5 * 0.75**0.5, 0.5 * 0.75**0.25])
    on_probation = [r for r in log if r.get("rollback") == {"verdict": "waiting"}]
    assert on_probation and not any(r["tightened"] for r in on_probation)
    after = next(r for r in log if "rollback" in r and r["samples"] >= 1120)
    assert after["rollback"] == {"verdict": "gave_up"}
    rollback = metrics["annealing"]["rollback"]
    assert rollback["rollbacks"] == 2 and rollback["steps_given_up"] == 1


def test_a_checkpoint_keeps_the_step_on_rule(tmp_path):
    config = _tiny(samples=320)
    (tmp_path / "run").mkdir()
    first = Trainer(config, tmp_path / "run", progress=False)
    with torch.no_grad():  # weights of its own, not the ones a new trainer starts from
        for parameter in first.model.parameters():
            parameter.add_(0.5)
    first.rules[0].begin(_snapshot(first.model), first.optimizer, 0.8, 0.5, 160)
    first.save()
    second = Trainer(config, tmp_path / "run", progress=False)
    restore_trainer(second, tmp_path / "run" / "checkpoints" / "last.pt")
    rule = second.rules[0]
    assert not rule.settled and rule.state.reference == 0.8
    assert rule.state.since == 160 and rule.settings.samples == 320
    assert same_weights(rule.state.anchor["model"], first.rules[0].state.anchor["model"])


def test_a_run_killed_on_probation_resumes_exactly(tmp_path, monkeypatch):
    """Interrupted after its first rollback, with a retaken step on probation, a run resumed
    from last.pt writes the log and weights of one never interrupted."""
    real = trainer_module.evaluate_model
    evaluate_and_anneal = Trainer._evaluate_and_anneal
    seen = [0]  # samples at the evaluation: the scripted accuracy is a function of them

    def scripted(model, task, split, **kwargs):
        result = real(model, task, split, **kwargs)
        accuracy = 0.9 if seen[0] <= 160 else 0.5
        return dataclasses.replace(result, e2e={**result.e2e, task.accuracy_metric: accuracy})

    def counted(self):
        seen[0] = self.state.samples
        return evaluate_and_anneal(self)

    monkeypatch.setattr(trainer_module, "evaluate_model", scripted)
    monkeypatch.setattr(Trainer, "_evaluate_and_anneal", counted)
    config = _tiny(samples=320)
    assert resumes_exactly(config, tmp_path, monkeypatch, kill_at=640, logged="rollback")


def test_a_budget_ending_just_after_a_rollback_reports_annealing_incomplete(tmp_path):
    """A run put back into annealing by a rule, with the annealer done, reports annealing as
    incomplete."""
    (tmp_path / "run").mkdir()
    trainer = Trainer(_tiny(samples=320), tmp_path / "run", progress=False)
    trainer.annealer.density = trainer.annealer.stop_density  # done
    trainer.state.phase = "anneal"  # as a rollback leaves it
    assert trainer.annealer.done
    metrics = trainer.finish("max_seconds")
    assert metrics["annealing"]["complete"] is False


#: (samples, logged density, rollback verdict) of a scripted run, as the trainer logged it at
#: bdb41ed, before the rules were plug-ins (then the ``probation`` key; its 'rollback' is
#: today's 'rolled_back').
PATH_BEFORE_PLUGINS = [
    (80, 0.5, None), (160, 0.5, None), (240, 0.375, "waiting"), (320, 0.375, "recovered"),
    (400, 0.28125, "waiting"), (480, 0.28125, "rolled_back"), (560, 0.32476, "recovered"),
    (640, 0.24357, "waiting"), (720, 0.24357, "rolled_back"), (800, 0.28125, "waiting"),
    (880, 0.28125, "rolled_back"), (960, 0.302223, "waiting"), (1040, 0.302223, "gave_up"),
    (1120, 0.226667, "waiting"), (1200, 0.226667, "recovered"), (1280, 0.17, "waiting"),
    (1360, 0.17, "rolled_back"), (1440, 0.196299, "recovered"), (1520, 0.147225, None),
    (1600, 0.110418, None), (1680, 0.0828138, None), (1760, 0.0621104, None),
    (1840, 0.0465828, None), (1920, 0.0349371, None), (2000, 0.0262028, None),
    (2080, 0.0262028, None), (2160, 0.0262028, None), (2240, 0.0262028, None),
    (2320, 0.0262028, None), (2400, 0.0262028, None),
]  # fmt: skip


def test_the_rule_takes_the_path_it_took_before_it_was_a_plugin(tmp_path, monkeypatch):
    """Scripted accuracies (a function of the evaluation's index alone, so the path does not
    depend on the model or the machine): every density and verdict as logged before."""
    real = trainer_module.evaluate_model
    calls = []

    def scripted(model, task, split, **kwargs):
        result = real(model, task, split, **kwargs)
        accuracy = 0.5 + 0.45 * ((len(calls) * 7) % 11) / 10
        calls.append(accuracy)
        return dataclasses.replace(result, e2e={**result.e2e, task.accuracy_metric: accuracy})

    monkeypatch.setattr(trainer_module, "evaluate_model", scripted)
    config = resolve_config("planted", "tiny", overrides=[
        {"data": {"background": "iid"}, "train": {"max_samples": 2400, "final_samples": 800,
                                                  "eval_every": 80},
         "annealing": {"bar_decay_per_sample": 0.004, "stop_density": 0.02, "channel_edit": None,
                       "rollback": {"samples": 160}}}])  # fmt: skip
    metrics = train(config, tmp_path / "run", progress=False)
    path = [(r["samples"], r["density"], r.get("rollback", {}).get("verdict"))
            for r in read_log(tmp_path / "run")]  # fmt: skip
    assert path == PATH_BEFORE_PLUGINS
    assert [row[0] for row in metrics["annealing"]["rollback"]["retaken"]] == [480, 720, 880, 1360]
