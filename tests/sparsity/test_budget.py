import pytest
import torch

from sparling_genomics.errors import ConfigError
from sparling_genomics.sparsity.budget import budget_thresholds, check_share_range
from sparling_genomics.sparsity.layer import SpatialSparsity, upper_quantile


def _sorted_top(values: torch.Tensor, keep: int) -> torch.Tensor:
    return torch.topk(values, keep, dim=1).values


def test_equal_shares_are_the_per_channel_quantiles():
    values = torch.randn(4, 5000, generator=torch.Generator().manual_seed(0))
    top = _sorted_top(values, 200)
    got = budget_thresholds(top, 5000, 0.01, (1.0, 1.0))
    torch.testing.assert_close(got, upper_quantile(values, 50))


def test_a_frequent_signal_takes_a_larger_share_within_its_bound():
    g = torch.Generator().manual_seed(1)
    values = torch.randn(4, 10_000, generator=g)
    values[0, :400] += 6.0  # channel 0 fires strongly at 4% of positions
    density, share = 0.01, (0.25, 3.0)
    top = _sorted_top(values, 1000)
    t = budget_thresholds(top, 10_000, density, share)
    counts = (values > t[:, None]).sum(dim=1)
    assert int(counts.sum()) == pytest.approx(density * 10_000 * 4, abs=4)  # the budget
    assert int(counts[0]) == 300  # capped at 3 x 100 (it would take 400)
    assert all(25 <= int(c) <= 300 for c in counts)  # every share within its bounds
    assert int(counts[1:].sum()) == 100  # the other three share what is left


def test_every_channel_keeps_its_lower_share():
    g = torch.Generator().manual_seed(2)
    values = torch.randn(3, 10_000, generator=g)
    values[1:] -= 10.0  # channels 1 and 2 are always weaker than channel 0
    t = budget_thresholds(_sorted_top(values, 1000), 10_000, 0.01, (0.5, 4.0))
    counts = (values > t[:, None]).sum(dim=1).tolist()
    assert counts == [200, 50, 50]


@pytest.mark.parametrize("bad", [[2.0, 3.0], [0.5, 0.9], [-0.1, 2.0], "wide", [1.0]])
def test_bad_share_range_is_a_config_error(bad):
    with pytest.raises(ConfigError, match="model.sparse.share_range"):
        check_share_range(bad)


def test_the_layer_spends_the_shared_budget_unevenly_across_channels():
    torch.manual_seed(0)
    layer = SpatialSparsity(3, 0.02, share_range=(0.25, 4.0), min_hits=10)
    layer.train()
    x = torch.randn(16, 3, 500)
    x[:, 0, ::20] += 8.0  # channel 0: a strong signal at 5% of positions
    for _ in range(30):
        layer(x)
    layer.eval()
    out = layer(x)
    per_channel = (out > 0).float().mean(dim=(0, 2))
    assert float(per_channel.mean()) == pytest.approx(0.02, rel=0.1)
    assert float(per_channel[0]) == pytest.approx(0.05, rel=0.1)  # within its 4x bound
    assert float(per_channel[1:].min()) >= 0.005 * 0.9  # each keeps >= 0.25x
    plain = SpatialSparsity(3, 0.02, min_hits=10)
    plain.train()
    for _ in range(30):
        plain(x)
    plain.eval()
    assert float((plain(x) > 0).float().mean(dim=(0, 2))[0]) == pytest.approx(0.02, rel=0.2)
