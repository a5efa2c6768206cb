"""Motif blocks: a block of channels is kept or dropped whole by its norm, at the block density;
its output is the group soft-threshold; the 1-D model keeps one strand per block; the model
reports one activation per block; a planted run with blocks trains, scores and exports K motifs;
tasks without blocks refuse the option."""

import json

import pytest
import torch

from sparling_genomics.errors import ConfigError
from sparling_genomics.evaluate.perturbation import _move
from sparling_genomics.models.motif import MotifModel1D
from sparling_genomics.models.sparling import SparlingModel
from sparling_genomics.runners.export import export_run_motifs
from sparling_genomics.sparsity.blocks import (
    block_channels,
    block_norms,
    check_block_size,
    layer_channels,
    spread_blocks,
)
from sparling_genomics.sparsity.layer import SpatialSparsity
from sparling_genomics.tasks.registry import task_class
from sparling_genomics.train.run_config import resolve_config
from sparling_genomics.train.trainer import train


def test_block_helpers():
    x = torch.tensor([[[3.0], [4.0], [1.0], [0.0]]])  # (1, 4, 1): blocks of 2
    assert torch.allclose(block_norms(x, 2)[0, :, 0], torch.tensor([5.0, 1.0]))
    assert torch.equal(block_norms(x, 1), x)
    assert spread_blocks(torch.tensor([[[1.0], [2.0]]]), 2)[0, :, 0].tolist() == [1, 1, 2, 2]
    assert block_channels(2, 3) == [6, 7, 8] and layer_channels(4, None) == 4
    assert layer_channels(4, 3) == 12
    with pytest.raises(ConfigError, match="do not split into blocks of 3"):
        check_block_size(8, 3)
    with pytest.raises(ConfigError, match="whole number >= 1"):
        check_block_size(8, 0)


def _layer(block=2, motifs=3, density=0.05, peak=0):
    layer = SpatialSparsity(motifs * block, density, block_size=block, min_hits=1,
                            peak_window=peak)  # fmt: skip
    return layer


def test_blocks_are_kept_or_dropped_whole_at_the_block_density():
    torch.manual_seed(0)
    layer = _layer()
    for _ in range(30):  # warm the thresholds
        layer(torch.randn(16, 6, 200))
    layer.eval()
    y = layer(torch.randn(64, 6, 200))
    norms = block_norms(y, 2)
    on = norms > 0
    channel_on = (y != 0).reshape(64, 3, 2, 200).transpose(2, 3)  # (N, K, L, b)
    # A block is either wholly silent or on (a kept block's channels are never cut apart).
    assert not channel_on[~on].any()
    assert channel_on[on].all()
    density = on.float().mean(dim=(0, 2))
    assert torch.all((density > 0.03) & (density < 0.08)), density
    assert layer.thresholds.shape == (3,)


def test_block_output_is_the_group_soft_threshold():
    torch.manual_seed(1)
    layer = _layer(density=0.2)
    x = torch.randn(8, 6, 50)
    for _ in range(5):
        layer(x)
    layer.eval()
    z = layer.normalize(x)
    n = block_norms(z, 2)
    t = layer.thresholds.view(1, -1, 1)
    y = layer(x)
    assert torch.allclose(block_norms(y, 2), torch.relu(n - t), atol=1e-5)
    # The kept vector points where z points.
    kept = (n > t).repeat_interleave(2, dim=1)
    cosine = (y * z).reshape(8, 3, 2, 50).sum(2) / (block_norms(y, 2) * n).clamp_min(1e-9)
    assert torch.allclose(cosine[n > t], torch.ones(int((n > t).sum())), atol=1e-4)
    assert torch.equal(y[~kept], torch.zeros_like(y[~kept]))


def test_gradient_reaches_every_channel_of_a_kept_block():
    layer = _layer(density=0.2)
    x = torch.randn(4, 6, 40, requires_grad=True)
    layer(x).sum().backward()
    assert torch.isfinite(x.grad).all()
    assert (x.grad.reshape(4, 3, 2, 40).abs().sum(2) > 0).any(dim=(0, 2)).all()


def test_active_sites_are_the_forward_pass_block_norms():
    torch.manual_seed(2)
    layer = _layer(density=0.02, peak=2)
    layer.peak_below = 1.0
    for _ in range(20):
        layer(torch.randn(8, 6, 300))
    layer.eval()
    x = torch.randn(1, 6, 300)
    dense = block_norms(layer(x), 2)[0]
    channel, position, value = layer.active_sites(x)
    sparse = torch.zeros_like(dense)
    sparse[channel, position] = value
    assert len(channel) > 0 and torch.allclose(sparse, dense, atol=1e-5)


def test_one_dimensional_model_keeps_one_strand_per_block():
    torch.manual_seed(3)
    g = MotifModel1D(6, hidden=8, first_kernel=5, residual_units=1, block_size=2)
    g.eval()
    x = torch.nn.functional.one_hot(torch.randint(0, 4, (2, 60)), 4).transpose(1, 2).float()
    merged = g(x)
    forward = g.scan(x)
    reverse = torch.flip(g.scan(torch.flip(x, dims=(1, 2))), dims=(-1,))
    reverse_wins = g.strand_of_max(x).bool()  # (N, 3, L): per block
    assert reverse_wins.shape == (2, 3, 60) and reverse_wins.any() and not reverse_wins.all()
    expect = torch.where(reverse_wins.repeat_interleave(2, dim=1), reverse, forward)
    assert torch.allclose(merged, expect, atol=1e-6)
    # Channel-wise max would mix strands inside a block somewhere: the block rule does not.
    assert not torch.allclose(merged, torch.maximum(forward, reverse))


class _Head(torch.nn.Module):
    def forward(self, m):
        return m.sum(dim=1, keepdim=True)


def test_model_reports_one_activation_per_block():
    g = MotifModel1D(6, hidden=8, first_kernel=5, residual_units=1, block_size=2)
    model = SparlingModel(g, _layer(density=0.3), _Head())
    x = torch.nn.functional.one_hot(torch.randint(0, 4, (3, 50)), 4).transpose(1, 2).float()
    out = model(x)
    assert out["layer"].shape == (3, 6, 50) and out["motifs"].shape == (3, 3, 50)
    assert torch.allclose(out["motifs"], block_norms(out["layer"], 2))
    assert model.learned == 3 and model.channels == 3 and model.block_size == 2
    assert model.motif_groups() == [[0, 1], [2, 3], [4, 5]]


def test_a_perturbation_moves_whole_blocks():
    layer = torch.zeros(6, 10)
    layer[0:2, 4] = torch.tensor([3.0, 4.0])  # motif 0 on at position 4, norm 5
    layer[4:6, 4] = torch.tensor([0.0, 1.0])  # motif 2 weaker there
    moved = _move(layer, (slice(2, 7),), [0], 2, [[0, 1], [2, 3], [4, 5]])
    assert moved[0:2].abs().sum() == 0
    assert moved[4:6, 4].tolist() == [3.0, 4.0]  # the stronger block replaces the weaker


def test_planted_run_with_blocks_scores_k_motifs(tmp_path):
    config = resolve_config(
        "planted",
        "tiny",
        overrides=[{"data": {"background": "iid"}}, {"model": {"sparse": {"block_size": 2}}}],
    )
    metrics = train(config, tmp_path / "run", progress=False)
    task = task_class("planted")(config, 0)
    k = len(task.motifs)
    model = task.build_model()
    assert model.g.motifs == 2 * k and model.learned == k
    assert 0.0 <= metrics["motif"]["fne"] <= 1.0
    saved = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert sorted(saved["identifiability"]["channels"]["alpha"]) == [str(c) for c in range(k)]
    assert "block_size: 2" in (tmp_path / "run" / "config.yaml").read_text()
    summary = export_run_motifs(tmp_path / "run", min_sites=1)
    channels = {m["channel"] for m in summary["motifs"]} | set(summary.get("silent", []))
    assert channels and max(channels) < k  # one exported motif per block, never a channel


def test_tasks_without_blocks_refuse_them():
    config = resolve_config(
        "digit_circle", "tiny", overrides=[{"model": {"sparse": {"block_size": 2}}}]
    )
    with pytest.raises(ConfigError, match="motif blocks are built for the planted and splicing"):
        task_class("digit_circle")(config, 0).build_model()
