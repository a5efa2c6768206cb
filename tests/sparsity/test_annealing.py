import pytest

from sparling_genomics.errors import ConfigError
from sparling_genomics.sparsity.annealing import SparsityAnnealer


def test_algorithm_one_decisions_worked_by_hand():
    a = SparsityAnnealer(
        start_density=0.5,
        stop_density=0.1,
        multiplier=0.5,
        initial_bar=1.0,
        bar_decay_per_sample=0.001,
    )
    # 100 samples: bar 1.0 - 0.1 = 0.9; accuracy 0.8 is not above: no change, bar stays 0.9.
    d = a.update(100, 0.8)
    assert (d.tightened, a.density, a.bar) == (False, 0.5, pytest.approx(0.9))
    # 200 samples: bar 0.9 - 0.1 = 0.8; accuracy 0.85 > 0.8: density 0.25, bar raised to 0.85.
    d = a.update(200, 0.85)
    assert (d.tightened, a.density, a.bar) == (True, pytest.approx(0.25), pytest.approx(0.85))
    assert not a.done
    # 250 samples: bar 0.85 - 0.05 = 0.80; accuracy 0.79 not above: no change.
    d = a.update(250, 0.79)
    assert (d.tightened, a.density, a.bar) == (False, pytest.approx(0.25), pytest.approx(0.80))
    # 260 samples: bar 0.79; accuracy 0.95 above: density 0.125; one more step would give
    # 0.0625 < stop 0.1 -> done: the final density stays at or above the stop density.
    d = a.update(260, 0.95)
    assert d.tightened and a.density == pytest.approx(0.125) and a.done
    assert a.bar == pytest.approx(0.95)
    # Once done, the density never moves again.
    a.update(10_000, 1.0)
    assert a.density == pytest.approx(0.125) and a.steps == 2


def test_bar_is_clamped_to_unit_interval():
    a = SparsityAnnealer(
        start_density=0.5, stop_density=0.01, initial_bar=1.5, bar_decay_per_sample=1.0
    )
    assert a.bar == 1.0
    a.update(10, 0.0)
    assert a.bar == 0.0


def test_state_round_trip():
    a = SparsityAnnealer(start_density=0.5, stop_density=0.01, bar_decay_per_sample=1e-3)
    a.update(500, 0.9)
    b = SparsityAnnealer(start_density=0.5, stop_density=0.01)
    b.load_state_dict(a.state_dict())
    assert b.state_dict() == a.state_dict()


def test_samples_must_not_go_backwards():
    a = SparsityAnnealer(start_density=0.5, stop_density=0.01)
    a.update(100, 0.5)
    with pytest.raises(ValueError):
        a.update(50, 0.5)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"start_density": 0.5, "stop_density": 0.6},
        {"start_density": 0.5, "stop_density": 0.1, "multiplier": 1.0},
        {"start_density": 0.0, "stop_density": 0.1},
        {"start_density": 0.5, "stop_density": 0.1, "bar_decay_per_sample": -1},
    ],
)
def test_bad_schedules_are_refused(kwargs):
    with pytest.raises(ConfigError):
        SparsityAnnealer(**kwargs)


def test_done_is_the_last_grid_point_at_or_above_the_stop_density():
    for start, stop, m, steps in [(0.5, 0.1, 0.5, 2), (0.5, 0.125, 0.5, 2),
                                  (0.02, 0.00208, 0.75, 7), (0.5, 0.5, 0.75, 0)]:  # fmt: skip
        a = SparsityAnnealer(start_density=start, stop_density=stop, multiplier=m,
                             bar_decay_per_sample=0.0)  # fmt: skip
        while not a.done:
            a.update(a.last_samples + 1, 2.0)  # accuracy above any bar: a step each time
        assert a.steps == steps and stop <= a.density < stop / m


def test_a_held_evaluation_moves_the_bar_but_never_tightens():
    """While the task is not yet its final task (a growing curriculum), or a training rule
    waits on the model, annealing waits: the bar falls and rises as usual, the density
    stays."""
    a = SparsityAnnealer(start_density=0.5, stop_density=0.03, multiplier=0.5,
                         bar_decay_per_sample=0.001)  # fmt: skip
    d = a.update(500, 0.9, hold=True)  # clears the bar: held
    assert not d.tightened and a.density == 0.5 and a.steps == 0 and a.bar == pytest.approx(0.9)
    d = a.update(600, 0.85)  # bar 0.9 - 0.1 = 0.8 < 0.85: the first step, once released
    assert d.tightened and a.density == 0.25


def test_a_checkpoint_from_before_the_deadline_was_removed_loads_while_it_was_off():
    a = SparsityAnnealer(start_density=0.5, stop_density=0.01)
    old = {**a.state_dict(), "finish_by_samples": 0, "late_bar_decay_per_sample": -1.0,
           "late_within": 4.0, "origin": 0, "forced_steps": 0}  # fmt: skip
    a.load_state_dict(old)
    assert a.state_dict() == SparsityAnnealer(start_density=0.5, stop_density=0.01).state_dict()
    with pytest.raises(ConfigError, match="finish_by_samples=450000 is a removed setting"):
        a.load_state_dict({**old, "finish_by_samples": 450_000})
