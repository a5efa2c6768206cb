import math

import pytest
import torch

from sparling_genomics.errors import ConfigError
from sparling_genomics.sparsity.layer import (
    SpatialSparsity,
    check_density,
    competition_winners,
    local_max,
    upper_quantile,
)

SCALE = torch.tensor([1.0, 3.0, 0.5, 10.0])
SHIFT = torch.tensor([0.0, 5.0, -2.0, 1.0])


def _data(generator, dims, n, length):
    shape = (n, 4, length) if dims == 1 else (n, 4, length // 50, 50)
    view = (1, 4) + (1,) * dims
    return torch.randn(shape, generator=generator) * SCALE.view(view) + SHIFT.view(view)


@pytest.mark.parametrize("dims", [1, 2])
@pytest.mark.parametrize("density", [0.5, 0.1, 1e-2, 1e-3, 1e-4])
def test_density_on_fresh_data_matches_target(dims, density):
    gen = torch.Generator().manual_seed(1)
    layer = SpatialSparsity(4, density)
    for _ in range(100):
        layer(_data(gen, dims, 32, 2000))
    layer.eval()
    fresh = torch.Generator().manual_seed(2)
    with torch.no_grad():
        active = sum(
            (layer(_data(fresh, dims, 500, 2000)) > 0).transpose(0, 1).reshape(4, -1).sum(1)
            for _ in range(4)
        )
    per_channel = active.double() / (4 * 500 * 2000)
    ratio = per_channel / density
    assert torch.all((ratio > 0.85) & (ratio < 1.15)), ratio


def test_eval_mode_freezes_thresholds():
    layer = SpatialSparsity(4, 0.01)
    layer(torch.randn(8, 4, 1000))
    frozen = layer.thresholds.clone()
    layer.eval()
    layer(torch.randn(8, 4, 1000) * 5)
    assert torch.equal(layer.thresholds, frozen)


def test_first_estimate_is_warm_not_ema_from_zero():
    # One batch is enough to be near the target: the reference EMA starts at 0 and is not.
    layer = SpatialSparsity(1, 0.01)
    x = torch.randn(16, 1, 5000)
    y = layer(x)
    assert abs(float((y > 0).float().mean()) - 0.01) < 0.002
    expected = torch.quantile(layer.normalize(x).flatten(), 0.99)
    assert float(layer.thresholds[0]) == pytest.approx(float(expected), abs=0.02)


def test_density_change_restarts_estimate():
    layer = SpatialSparsity(2, 0.1)
    layer(torch.randn(8, 2, 1000))
    low = layer.thresholds.clone()
    layer.density = 0.001
    layer(torch.randn(8, 2, 4000))  # 32 expected hits: enough for one estimate
    assert torch.all(layer.thresholds > low + 1.0)  # jumped, not crawled by EMA


def test_accumulates_until_min_hits():
    layer = SpatialSparsity(1, 1e-4, min_hits=10)
    for _ in range(4):  # 4 x 20k = 80k elements: 8 expected hits, not enough
        layer(torch.randn(1, 1, 20_000))
    assert float(layer.thresholds[0]) == 0.0
    assert layer.get_extra_state()["pending_elements"] == 80_000
    layer(torch.randn(1, 1, 20_000))  # 100k elements: 10 hits, estimate taken
    assert float(layer.thresholds[0]) > 3.0
    assert layer.get_extra_state()["pending_elements"] == 0


def test_accumulated_quantile_equals_quantile_of_union():
    torch.manual_seed(0)
    chunks = [torch.randn(1, 3, 10_000) for _ in range(10)]
    layer = SpatialSparsity(3, 1e-4, min_hits=10)
    layer.running_mean.zero_()
    layer.eval()  # normalise with fixed stats so the values are the raw inputs
    for chunk in chunks:
        layer._observe(layer.normalize(chunk))
    union = torch.cat([c.transpose(0, 1).reshape(3, -1) for c in chunks], dim=1)
    expected = upper_quantile(union / math.sqrt(1 + 1e-5), 10)
    assert torch.allclose(layer.thresholds, expected)


def test_extra_state_round_trip():
    layer = SpatialSparsity(2, 1e-4)
    layer(torch.randn(2, 2, 1000))
    state = layer.state_dict()
    other = SpatialSparsity(2, 0.5)
    other.load_state_dict(state)
    assert other.density == pytest.approx(1e-4)
    assert other.get_extra_state()["pending_elements"] == 2000
    assert torch.equal(other.get_extra_state()["pending"][0], layer.get_extra_state()["pending"][0])


def test_global_threshold_shares_one_threshold():
    layer = SpatialSparsity(4, 0.01, per_channel=False, affine=True)
    with torch.no_grad():
        layer.weight.copy_(torch.tensor([1.0, 1.0, 2.0, 0.2]))
    x = torch.randn(16, 4, 2000)
    y = layer(x)
    assert layer.thresholds.shape == (1,)
    assert float((y > 0).float().mean()) == pytest.approx(0.01, rel=0.05)
    per_channel = (y > 0).float().transpose(0, 1).reshape(4, -1).mean(1)
    assert per_channel[2] > 3 * per_channel[0] and per_channel[3] == 0


def test_thresholds_get_no_gradient_and_input_does():
    layer = SpatialSparsity(3, 0.1, affine=True)
    x = torch.randn(4, 3, 100, requires_grad=True)
    layer(x).sum().backward()
    assert not layer.thresholds.requires_grad
    assert x.grad is not None and x.grad.abs().sum() > 0
    assert layer.weight.grad is not None


def test_upper_quantile_leaves_exact_hits():
    values = torch.randn(3, 1000)
    for hits in (0, 1, 7, 400):
        t = upper_quantile(values, hits)
        assert torch.all((values > t[:, None]).sum(1) == hits)


@pytest.mark.parametrize("bad", [0, 1, -0.1, 1.5, float("nan"), "x"])
def test_impossible_density_is_refused(bad):
    with pytest.raises(ConfigError):
        check_density(bad)
    with pytest.raises(ConfigError):
        SpatialSparsity(2, bad)


def test_wrong_channel_count_is_refused():
    with pytest.raises(ValueError, match="expects"):
        SpatialSparsity(3, 0.1)(torch.randn(2, 4, 10))


@pytest.mark.parametrize("dims", [1, 2])
def test_peak_window_keeps_one_activation_per_peak(dims):
    layer = SpatialSparsity(2, 1e-3, peak_window=3)
    gen = torch.Generator().manual_seed(0)
    for _ in range(40):
        layer(_data(gen, dims, 16, 2000)[:, :2])
    layer.eval()
    y = layer(_data(gen, dims, 64, 2000)[:, :2])
    assert float((y > 0).float().mean()) == pytest.approx(1e-3, rel=0.15)
    active = (y > 0).float()
    # No two active positions of a channel within the window of each other.
    # No two active positions of a channel within ±3 of each other: summing the active
    # indicator over each 7-wide window finds at most one.
    if dims == 1:
        window_sum = torch.nn.functional.avg_pool1d(active, 7, stride=1, padding=3) * 7
    else:
        window_sum = torch.nn.functional.avg_pool2d(active, 7, stride=1, padding=3) * 49
    assert torch.all(window_sum[active > 0].round() == 1)


def test_peak_window_when_density_exceeds_peak_fraction():
    # Only ~1/7 of positions are peaks: at density 0.5 every peak is active, finitely.
    layer = SpatialSparsity(2, 0.5, peak_window=3)
    y = layer(torch.randn(8, 2, 1000))
    assert torch.isfinite(y).all() and torch.isfinite(layer.thresholds).all()
    assert 0.08 < float((y > 0).float().mean()) < 0.2


@pytest.mark.parametrize("peak_window", [0, 3])
def test_active_sites_equal_the_dense_forward(peak_window):
    torch.manual_seed(0)
    layer = SpatialSparsity(5, 0.01, peak_window=peak_window, peak_below=0.02)
    for _ in range(30):
        layer(torch.randn(8, 5, 3000))
    layer.eval()
    x = torch.randn(1, 5, 5000)
    dense = layer(x)[0]
    channel, position = torch.nonzero(dense > 0, as_tuple=True)
    c, p, v = layer.active_sites(x)
    order = torch.argsort(c * 10_000 + p)
    assert len(channel) > 50
    assert torch.equal(c[order], channel) and torch.equal(p[order], position)
    assert torch.equal(v[order], dense[channel, position])


def _twins(compete_window, density=1e-3, **options):
    torch.manual_seed(0)
    layer = SpatialSparsity(4, density, peak_window=2, peak_below=0.01,
                            compete_window=compete_window, **options)  # fmt: skip
    z = torch.randn(8, 1, 3000)
    # Channels 0 and 1 are exact copies; 2 is 1 shifted by one position; 3 is its own.
    x = torch.cat([z, z, torch.roll(z, 1, -1), torch.randn(8, 1, 3000)], dim=1)
    for _ in range(5):
        layer(x)
    layer.eval()
    return layer, x


def _cofiring(a, b, within=2):
    near = torch.nn.functional.max_pool1d((b > 0).float(), 2 * within + 1, 1, within) > 0
    return int(((a > 0) & near).sum())


def test_competing_channels_never_fire_within_the_window_of_each_other():
    layer, x = _twins(compete_window=2)
    with torch.no_grad():
        out = layer(x)
    fired = (out > 0).sum(dim=(0, 2))
    assert torch.all(fired > 0)
    for a in range(4):
        for b in range(4):
            if a != b:
                assert _cofiring(out[:, a : a + 1], out[:, b : b + 1]) == 0, (a, b)
    # The copies lose every contest to the original (ties go to the lower channel), so they
    # are left its next-best sites: nothing the original fires at.
    top = out[:, 0][out[:, 0] > 0].min() + layer.thresholds[0]
    z = layer.normalize(x)
    assert torch.all(z[:, 1][out[:, 1] > 0] <= top)


def test_without_competition_copies_fire_together_and_the_layer_is_unchanged():
    off, x = _twins(compete_window=0)
    plain = SpatialSparsity(4, 1e-3, peak_window=2, peak_below=0.01)
    torch.manual_seed(0)
    with torch.no_grad():
        a = off(x)
    plain.load_state_dict(off.state_dict())
    plain.eval()
    with torch.no_grad():
        assert torch.equal(plain(x), a)
    assert _cofiring(a[:, 0:1], a[:, 1:2]) == int((a[:, 0] > 0).sum()) > 0


def test_competition_waits_for_the_sparse_phase_and_scan_agrees_with_forward():
    dense = SpatialSparsity(4, 0.1, peak_window=2, peak_below=0.01, compete_window=2)
    assert not dense.competing()
    layer, x = _twins(compete_window=2, density=5e-3)
    assert layer.competing()
    with torch.no_grad():
        out = layer(x[:1])
        channel, position, value = layer.active_sites(x[:1])
    got = torch.zeros_like(out)
    got[0, channel, position] = value
    assert torch.allclose(got, out)


def _winners_by_definition(values, window):
    """The rule written out: a channel wins where its value beats every lower channel's
    values within +-window strictly and every higher channel's at least equally."""
    local = local_max(values, window, "test")
    out = torch.zeros_like(values, dtype=torch.bool)
    for c in range(values.shape[1]):
        lower = local[:, :c].amax(1) if c else torch.full_like(local[:, 0], float("-inf"))
        higher = (local[:, c + 1 :].amax(1) if c + 1 < values.shape[1]
                  else torch.full_like(local[:, 0], float("-inf")))  # fmt: skip
        out[:, c] = (values[:, c] > lower) & (values[:, c] >= higher)
    return out


def test_competition_winners_match_the_rule_with_ties_and_non_candidates():
    torch.manual_seed(0)
    for trial in range(200):
        channels = [1, 2, 3, 7][trial % 4]
        x = torch.randint(-2, 3, (2, channels, 30)).float()  # many ties
        x[torch.rand_like(x) < 0.4] = float("-inf")  # not candidates
        if trial % 5 == 0:
            x = x.view(2, channels, 5, 6)  # 2-D maps
        for window in (0, 1, 3):
            assert torch.equal(competition_winners(x, window), _winners_by_definition(x, window))


def _mirrored(strand_window, density=1e-3):
    """One channel, one site read on both strands: the forward peak at 10, the reverse peak
    (slightly larger) at 18, beyond the peak window; a lone forward peak at 60."""
    layer = SpatialSparsity(1, density, peak_window=3, peak_below=0.01,
                            strand_window=strand_window)  # fmt: skip
    layer.eval()
    layer.thresholds.fill_(1.0)
    x = torch.zeros(1, 1, 80)
    x[0, 0, 10], x[0, 0, 18], x[0, 0, 60] = 3.0, 3.5, 2.0
    strand = torch.zeros(1, 1, 80, dtype=torch.bool)
    strand[0, 0, 18] = True
    return layer, x, strand


def test_strand_rule_keeps_one_site_of_a_palindrome_and_lone_peaks():
    layer, x, strand = _mirrored(strand_window=10)
    out = layer(x, strand)[0, 0]
    assert torch.nonzero(out).flatten().tolist() == [18, 60]  # the larger strand's peak
    assert torch.nonzero(layer(x)[0, 0]).flatten().tolist() == [10, 18, 60]  # no strands
    off, x, strand = _mirrored(strand_window=0)
    assert torch.nonzero(off(x, strand)[0, 0]).flatten().tolist() == [10, 18, 60]
    near, x, strand = _mirrored(strand_window=7)  # 8 apart: out of reach
    assert torch.nonzero(near(x, strand)[0, 0]).flatten().tolist() == [10, 18, 60]
    dense, x, strand = _mirrored(strand_window=10, density=0.05)  # waits like the peak rule
    assert not dense.strand_aware() and torch.equal(dense(x, strand), dense(x))


def test_strand_winners_ties_go_to_the_forward_strand():
    from sparling_genomics.sparsity.rules import strand_winners

    inf = float("-inf")
    forward = torch.tensor([[[2.0, inf, inf, inf, 1.0]]])
    reverse = torch.tensor([[[inf, 2.0, inf, inf, inf]]])
    keep_f, keep_r = strand_winners(forward, reverse, 2)
    assert keep_f.flatten().tolist() == [True, False, False, False, True]
    assert keep_r.flatten().tolist() == [False, False, False, False, False]
    with pytest.raises(ConfigError):
        SpatialSparsity(2, 0.01, strand_window=-1)
