import numpy as np
import pytest
import torch

from sparling_genomics.errors import ConfigError
from sparling_genomics.genome.sequence import reverse_complement_codes
from sparling_genomics.genome.site_scan import (
    log_odds,
    relative_scores,
    site_scan_filters,
    stack_relative_matrices,
    windows_with_site,
)
from sparling_genomics.tasks.planted_motifs import SPLITS, place_instances
from sparling_genomics.tasks.registry import task_class
from sparling_genomics.train.run_config import resolve_config


@pytest.fixture(scope="module")
def task():
    config = resolve_config("planted", "tiny")
    return task_class("planted")(config, seed=0)


def test_batches_are_deterministic_in_seed_and_index(task):
    a, b = task.train_batch(3, 8), task.train_batch(3, 8)
    assert torch.equal(a.x, b.x) and a.targets == b.targets
    c = task.train_batch(4, 8)
    assert not torch.equal(a.x, c.x)
    other = task_class("planted")(task.config, seed=1).train_batch(3, 8)
    assert not torch.equal(a.x, other.x)


def test_truth_cells_hold_the_planted_sites_in_order(task):
    batch = task.train_batch(0, 32)
    codes = batch.x.numpy().argmax(1)
    assert np.all(batch.x.numpy().sum(1) == 1)  # no N in planted samples
    for row, targets, cells in zip(codes, batch.targets, batch.cells):
        assert 1 <= len(targets) <= 4
        assert [symbol for _, symbol in cells] == targets
        starts = [s[0].start for s, _ in cells]
        assert starts == sorted(starts)
        stops = [s[0].stop for s, _ in cells]
        assert all(
            stops[i] - task.cell_pad <= starts[i + 1] + task.cell_pad - task.min_gap
            for i in range(len(cells) - 1)
        )
        for (sl,), symbol in cells:
            matrix = task.log_odds_matrices[symbol]
            width = matrix.shape[1]
            lo, hi = sl.start, sl.stop
            window = row[lo:hi]
            best = max(
                relative_scores(window, matrix).max(),
                relative_scores(reverse_complement_codes(window), matrix).max(),
            )
            assert hi - lo >= width
            assert best >= task.min_relative_score


def _best_site_scores(codes, matrices):
    """Reference: each row's best relative score over motifs and strands, one motif at a time
    in float64 (sites wholly inside the row)."""
    best = np.full(len(codes), -np.inf)
    for matrix in matrices:
        for strand in (codes, reverse_complement_codes(codes)):
            best = np.maximum(best, relative_scores(strand, matrix).max(axis=1))
    return best


def test_background_has_no_other_sites(task):
    rng = np.random.default_rng(0)
    backgrounds = task._backgrounds(rng, "train", 64)
    assert (_best_site_scores(backgrounds, task.log_odds_matrices) < task.min_relative_score).all()


def test_site_scan_matches_a_per_motif_scan_on_both_strands(task):
    # Motifs of different widths; rows short enough that sites sit at both ends.
    matrices = task.log_odds_matrices + [log_odds(task.motifs[0])[:, :5]]
    filters = site_scan_filters(stack_relative_matrices(matrices))
    rng = np.random.default_rng(1)
    codes = rng.integers(0, 4, (400, 24)).astype(np.uint8)
    best = _best_site_scores(codes, matrices)
    for cutoff in (0.6, 0.75, 0.85):
        found = windows_with_site(codes, filters, cutoff)
        clear = np.abs(best - cutoff) > 1e-4  # float32 may round the knife-edge either way
        assert (found[clear] == (best[clear] >= cutoff)).all()
        assert found.any() and not found.all()


def test_splits_are_disjoint_blocks():
    assert SPLITS["train"][1] <= SPLITS["val"][0] and SPLITS["val"][1] <= SPLITS["test"][0]


def test_evaluation_sets_are_fixed(task):
    first = [b.x for b in task.eval_batches("val", 32)]
    again = [b.x for b in task.eval_batches("val", 32)]
    assert all(torch.equal(a, b) for a, b in zip(first, again))
    assert sum(len(x) for x in first) == task.config.data.val_size


def test_place_instances_never_overlaps():
    rng = np.random.default_rng(1)
    for _ in range(200):
        widths = list(rng.integers(5, 20, size=rng.integers(1, 5)))
        starts = place_instances(rng, widths, 120, 3)
        for i in range(len(starts) - 1):
            assert starts[i] + widths[i] + 3 <= starts[i + 1]
        assert starts[-1] + widths[-1] <= 120
    with pytest.raises(ConfigError, match="do not fit"):
        place_instances(rng, [50, 50, 50], 100, 1)


def test_true_density(task):
    expected = 2.5 / (6 * task.length)
    assert task.true_density() == pytest.approx(expected)


def test_model_shapes(task):
    model = task.build_model()
    out = model(task.train_batch(0, 4).x)
    assert out["motifs"].shape == (4, 6, task.length)
    assert out["logits"].shape[:2] == (4, 7)


def test_unknown_motif_is_refused():
    config = resolve_config("planted", "tiny", overrides=[{"data": {"motifs": ["MA9999.9"]}}])
    with pytest.raises(ConfigError, match="MA9999.9"):
        task_class("planted")(config, 0)


def test_iid_background_option():
    config = resolve_config("planted", "tiny", overrides=[{"data": {"background": "iid"}}])
    batch = task_class("planted")(config, 0).train_batch(0, 4)
    assert batch.x.shape == (4, 4, 200)
