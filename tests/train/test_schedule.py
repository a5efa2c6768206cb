import math

import pytest

from sparling_genomics.train.schedule import final_lr, on_plateau, step_lr
from sparling_genomics.train.settings import TrainSettings


def test_warmup_ramps_then_holds_the_phase_rate():
    t = TrainSettings(lr=0.004, warmup_samples=400)
    lr = [step_lr(t, phase="anneal", seen=s, since_final=0, batch_size=100, annealing=True,
                  sparse=True) for s in (0, 100, 300, 5000)]  # fmt: skip
    assert lr == pytest.approx([0.001, 0.002, 0.004, 0.004])


def test_cosine_final_phase_ends_at_five_percent_and_baselines_use_their_length():
    t = TrainSettings(lr=0.002, final_lr_scale=0.5, final_samples=1000,
                      final_lr_schedule="cosine", baseline_samples=4000)  # fmt: skip
    assert final_lr(t, 0, annealing=True, sparse=True) == pytest.approx(0.001)
    assert final_lr(t, 1000, annealing=True, sparse=True) == pytest.approx(0.05 * 0.001)
    # No sparse layer: no annealing scale, and the cosine runs over baseline_samples.
    half = 0.002 * (0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * 0.25)))
    assert final_lr(t, 1000, annealing=False, sparse=False) == pytest.approx(half)
    constant = TrainSettings(lr=0.002, final_lr_scale=0.5)
    assert final_lr(constant, 10**6, annealing=True, sparse=True) == pytest.approx(0.001)


def test_plateau_rule_needs_every_condition():
    t = TrainSettings(plateau_restart_samples=100, plateau_accuracy=0.5, plateau_max_restarts=1)
    stuck = dict(phase="anneal", annealing_steps=0, restarts=0, seen=100, best=0.1)
    assert on_plateau(t, **stuck)
    for change in ({"phase": "final"}, {"annealing_steps": 1}, {"restarts": 1}, {"seen": 99},
                   {"best": 0.5}):  # fmt: skip
        assert not on_plateau(t, **{**stuck, **change})
    assert not on_plateau(TrainSettings(), **stuck)  # off by default
