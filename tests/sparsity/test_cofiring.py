import pytest
import torch

from sparling_genomics.sparsity.cofiring import cofiring_penalty, cofiring_term
from sparling_genomics.sparsity.settings import SparseSettings


def test_penalty_is_zero_for_channels_apart_and_counts_pairs_within_the_window():
    x = torch.zeros(1, 3, 20)
    x[0, 0, 2] = 1.0
    x[0, 1, 10] = 2.0
    assert cofiring_penalty(x, 2) == 0.0  # 8 apart, window 2
    x[0, 2, 11] = 2.0  # channel 2 next to channel 1: on together in positions 9-12
    p = float(cofiring_penalty(x, 2))
    # local maxima over their batch means (5/20, 10/20, 10/20): each channel 4 on its window;
    # channel 0 alone over 0-4 (5 x 16), channels 1 and 2 at 8-13 (1 alone at 8, both
    # (4 + 4)^2 = 64 at 9-12, 2 alone at 13): pairs 4 x 32 = 128 of 80 + 16 + 256 + 16 = 368
    assert p == pytest.approx(128 / 368)
    assert float(cofiring_penalty(3.0 * x, 2)) == pytest.approx(p)  # scale-free
    loud = x.clone()
    loud[0, 2] *= 100.0  # one channel louder: no lower
    assert float(cofiring_penalty(loud, 2)) == pytest.approx(p)
    assert cofiring_penalty(torch.zeros(2, 4, 5, 5), 1) == 0.0  # nothing on: nothing to pay


def test_penalty_gradient_moves_a_channel_off_the_place_it_shares():
    x = torch.zeros(1, 2, 8, 8)
    x[0, 0, 3, 3], x[0, 1, 3, 4] = 2.0, 0.5  # on together
    x[0, 0, 7, 0], x[0, 1, 0, 7] = 2.0, 0.5  # each alone elsewhere
    x.requires_grad_(True)
    cofiring_penalty(x, 1).backward()
    assert x.grad[0, 1, 3, 4] > 0 and x.grad[0, 0, 3, 3] > 0  # descent: down where shared ...
    assert x.grad[0, 1, 0, 7] < 0 and x.grad[0, 0, 7, 0] < 0  # ... and up where alone


def test_term_is_off_unless_weighted():
    outputs = {"motifs": torch.ones(1, 2, 4)}
    assert cofiring_term(outputs, SparseSettings()) == 0.0
    assert cofiring_term(outputs, None) == 0.0
    on = SparseSettings(peak_window=0, cofire_weight=2.0)
    assert float(cofiring_term(outputs, on)) == pytest.approx(2 * 0.5)  # 2 channels: P = 1/2
    wide = SparseSettings(peak_window=0, cofire_weight=1.0, cofire_window=1)
    apart = torch.zeros(1, 2, 4)
    apart[0, 0, 0], apart[0, 1, 2] = 1.0, 1.0
    assert float(cofiring_term({"motifs": apart}, wide)) > 0  # the window sees them together
    assert float(cofiring_term({"motifs": apart}, on)) == 0.0  # window 0: apart


def test_tiny_run_trains_with_the_penalty(tmp_path):
    from sparling_genomics.train.run_config import resolve_config
    from sparling_genomics.train.trainer import train

    config = resolve_config("planted", "tiny", overrides=[
        {"data": {"background": "iid"}, "model": {"sparse": {"cofire_weight": 1.0}}}])  # fmt: skip
    metrics = train(config, tmp_path / "run", progress=False)
    assert 0.0 <= metrics["e2e"]["edit_error"] <= 1.0
