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


def test_total_steps_follow_the_done_rule():
    for start, stop, m in [(0.5, 0.1, 0.5), (0.5, 0.125, 0.5), (0.5, 0.00208, 0.75),
                           (0.02, 0.00208, 0.75), (0.5, 0.5, 0.75)]:  # fmt: skip
        a = SparsityAnnealer(start_density=start, stop_density=stop, multiplier=m,
                             bar_decay_per_sample=0.0)  # fmt: skip
        steps = 0
        while not a.done:
            a.update(a.last_samples + 1, 2.0)  # accuracy above any bar: a step each time
            steps += 1
        assert a.total_steps == steps


def test_a_deadline_forces_the_steps_algorithm_one_does_not_take():
    """Accuracy never clears the bar: without a deadline the density never moves; with
    finish_by_samples 1000 the K = 4 steps are taken on the line floor(K s / 1000), one per
    evaluation, and annealing is done at 1000 samples."""
    kwargs = {"start_density": 0.5, "stop_density": 0.03, "multiplier": 0.5,
              "bar_decay_per_sample": 0.0}  # fmt: skip
    stuck = SparsityAnnealer(**kwargs)
    free = SparsityAnnealer(**kwargs, finish_by_samples=1000)
    assert free.total_steps == 4  # 0.5 -> 0.25 -> 0.125 -> 0.0625 -> 0.03125 (0.0156 < 0.03)
    forced_at = []
    for samples in range(100, 1101, 100):
        stuck.update(samples, 0.0)
        if free.update(samples, 0.0).forced:
            forced_at.append(samples)
    assert stuck.steps == 0 and stuck.density == 0.5
    assert forced_at == [300, 500, 800, 1000] and free.done
    assert free.forced_steps == free.steps == 4 and free.density == pytest.approx(0.03125)


def test_the_deadline_leaves_algorithm_one_alone_while_it_is_ahead():
    a = SparsityAnnealer(start_density=0.5, stop_density=0.03, multiplier=0.5,
                         bar_decay_per_sample=0.0, finish_by_samples=1000)  # fmt: skip
    for samples in (50, 100, 150):
        d = a.update(samples, 2.0)  # clears the bar: Algorithm 1's step
        assert d.tightened and not d.forced
    assert a.steps == 3 and a.forced_steps == 0
    # A new initialisation (plateau restart) counts the deadline from its own start.
    a.origin = 150
    assert a.steps_due(150 + 500) == 2 and a.steps_due(400) == 1


def test_a_held_evaluation_moves_the_bar_but_never_tightens():
    """While the task is not yet its final task (a growing curriculum) annealing waits: the
    bar falls and rises as usual, the density stays, the deadline counts from the hold."""
    a = SparsityAnnealer(start_density=0.5, stop_density=0.03, multiplier=0.5,
                         bar_decay_per_sample=0.001, finish_by_samples=1000)  # fmt: skip
    d = a.update(500, 0.9, hold=True)  # clears the bar and is past a deadline step: held
    assert not d.tightened and not d.forced and a.density == 0.5 and a.steps == 0
    assert a.bar == pytest.approx(0.9) and a.origin == 500 and a.steps_due(500) == 0
    d = a.update(600, 0.85)  # bar 0.9 - 0.1 = 0.8 < 0.85: the first step, once released
    assert d.tightened and not d.forced and a.density == 0.25


def test_paused_annealer_moves_the_bar_and_never_steps():
    annealer = SparsityAnnealer(start_density=0.5, stop_density=0.01, multiplier=0.75,
                                initial_bar=0.5, finish_by_samples=100)  # fmt: skip
    decision = annealer.update(200, 0.9, pause=True)  # clears the bar, past the deadline
    assert not decision.tightened and annealer.bar == 0.9 and annealer.origin == 0


def test_the_late_bar_falls_at_its_own_rate_near_the_stop_density():
    """Within ``late_within`` x the stop density the bar falls at the late rate; above it, and
    without a late rate, at ``bar_decay_per_sample``."""
    a = SparsityAnnealer(start_density=0.4, stop_density=0.01, multiplier=0.5, initial_bar=0.9,
                         bar_decay_per_sample=0.001, late_bar_decay_per_sample=0.0001,
                         late_within=4.0)  # fmt: skip
    a.update(100, 0.0)  # density 0.4 (40x the stop): the early rate, bar 0.9 - 0.1
    assert a.bar == pytest.approx(0.8)
    a.density = 0.04  # exactly 4x the stop density: late
    a.update(200, 0.0)
    assert a.bar == pytest.approx(0.79)
    off = SparsityAnnealer(start_density=0.04, stop_density=0.01, initial_bar=0.9,
                           bar_decay_per_sample=0.001)  # fmt: skip
    off.update(100, 0.0)
    assert off.bar == pytest.approx(0.8)


def test_a_late_within_below_one_is_refused():
    with pytest.raises(ConfigError, match="late_within"):
        SparsityAnnealer(start_density=0.5, stop_density=0.01, late_within=0.5)


def test_the_config_block_gives_the_late_bar_or_none():
    from sparling_genomics.sparsity.annealing import AnnealingSettings

    assert AnnealingSettings().late_bar() == {"late_bar_decay_per_sample": -1.0,
                                              "late_within": 4.0}  # fmt: skip
    late = AnnealingSettings(late_bar_decay_per_sample=2e-6, late_within=2).late_bar()
    assert late == {"late_bar_decay_per_sample": 2e-6, "late_within": 2.0}
