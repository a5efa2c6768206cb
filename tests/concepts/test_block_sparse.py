import numpy as np
import pytest

from sparling_genomics.concepts.base import FitSettings
from sparling_genomics.concepts.block_sparse import (
    VARIANTS,
    fit_block_sparse,
    joint_codes,
    keep_top_blocks,
)
from sparling_genomics.concepts.manifolds import superposition
from sparling_genomics.concepts.measures import recovery_r2

FAST = FitSettings(steps=1500, batch_size=256, seed=0, resample_every=100)


@pytest.fixture(scope="module")
def tiny():
    # A circle, a sphere and a torus embedded in 24-D, one of them in each row.
    return superposition(2000, dim=24, kinds=("circle", "sphere", "torus"), active=1,
                         noise=0.01, seed=3)  # fmt: skip


def test_keep_top_blocks_keeps_the_largest_norms():
    import torch

    z = torch.tensor([[[3.0, 0.0], [0.0, 1.0], [1.0, 1.0]]])
    kept = keep_top_blocks(z, 2)
    assert kept[0, 1].abs().sum() == 0 and kept[0, 0, 0] == 3.0 and kept[0, 2].abs().sum() > 0


@pytest.mark.parametrize("variant", VARIANTS)
def test_each_variant_recovers_every_manifold_of_a_tiny_superposition(tiny, variant):
    # One block of 4 per manifold: each manifold must come back whole in one block.
    concepts = fit_block_sparse(tiny.x, variant, 3, 4, 1, FAST)
    r2 = recovery_r2(concepts, tiny.x, tiny.parts)
    assert concepts.blocks.shape == (3, 4, 24)
    assert r2.min() >= 0.85, r2


def test_grassmannian_blocks_are_orthonormal(tiny):
    concepts = fit_block_sparse(tiny.x, "grassmannian", 6, 3, 1, FitSettings(steps=60))
    gram = np.einsum("cbf,cgf->cbg", concepts.blocks, concepts.blocks)
    assert np.allclose(gram, np.eye(3)[None].repeat(6, 0), atol=1e-4)


def test_same_seed_same_blocks_and_another_seed_differs(tiny):
    a = fit_block_sparse(tiny.x, "vanilla", 6, 2, 1, FitSettings(steps=40, seed=1))
    b = fit_block_sparse(tiny.x, "vanilla", 6, 2, 1, FitSettings(steps=40, seed=1))
    c = fit_block_sparse(tiny.x, "vanilla", 6, 2, 1, FitSettings(steps=40, seed=2))
    assert np.array_equal(a.blocks, b.blocks)
    assert not np.array_equal(a.blocks, c.blocks)


def test_a_block_size_one_concept_is_a_direction_with_a_norm_activation(tiny):
    concepts = fit_block_sparse(tiny.x, "vanilla", 5, 1, 2, FitSettings(steps=30))
    act = concepts.activate(tiny.x[:50])
    assert act.shape == (50, 5) and (act >= 0).all()
    assert ((act > 0).sum(1) <= 2).all()


@pytest.fixture(scope="module")
def overlapping():
    # Six manifolds in 48-D, two in each row, twice as many blocks as manifolds: a block's
    # tied projection also takes in the other manifold's share of its subspace, and the
    # warm start's spare blocks overlap the used ones.
    return superposition(3000, dim=48, kinds=("circle", "sphere", "torus") * 2, active=2,
                         noise=0.01, seed=3)  # fmt: skip


@pytest.mark.parametrize("variant", VARIANTS)
def test_each_variant_separates_manifolds_that_share_rows(overlapping, variant):
    settings = FitSettings(steps=1500, batch_size=512, seed=0, resample_every=100)
    concepts = fit_block_sparse(overlapping.x, variant, 12, 4, 2, settings)
    r2 = recovery_r2(concepts, overlapping.x, overlapping.parts)
    assert r2.min() >= 0.85, r2


def test_the_group_lasso_penalty_reaches_blocks_under_the_threshold():
    import torch

    from sparling_genomics.concepts.block_sparse import GroupLassoBSF

    model = GroupLassoBSF(torch.eye(4).reshape(2, 2, 4), 1)
    x = torch.tensor([[2.0, 0.0, 0.05, 0.0]])  # block 0 far above, block 1 under it
    z = model.codes(x)
    assert z[0, 1].abs().sum() == 0
    model.penalty(z).backward()
    assert model.encoder.grad[1].abs().sum() > 0  # pushed further down, not left to grow


def test_unused_warm_start_blocks_restart_outside_the_used_span():
    import torch

    from sparling_genomics.concepts.block_sparse import VanillaBSF, spare_unused_blocks

    g = torch.Generator().manual_seed(0)
    init = torch.randn(4, 2, 10, generator=g)
    start = VanillaBSF(init, 1)
    with torch.no_grad():
        start.encoder[2:] = 0.0  # blocks 2 and 3: never the largest, never picked
        start.enc_bias[2:] = 0.0
    blocks = spare_unused_blocks(start, torch.randn(200, 10, generator=g), g, 1e-3)
    used = blocks[:2].reshape(-1, 10)
    assert torch.allclose(blocks[2:].reshape(-1, 10) @ used.T, torch.zeros(4, 4), atol=1e-5)
    # The used blocks keep their spans (orthonormalised).
    for c in range(2):
        q = torch.linalg.qr(init[c].T)[0]
        assert torch.allclose(q @ (q.T @ blocks[c].T), blocks[c].T, atol=1e-5)
    gram = torch.einsum("cbf,cgf->cbg", blocks, blocks)
    assert torch.allclose(gram, torch.eye(2).expand(4, 2, 2), atol=1e-5)


def test_group_lasso_does_not_run_away_on_activations_without_sparse_structure():
    # Correlated Gaussian rows, 7 blocks and k 1 (as a real layer's dense activations): the
    # encoder must not outgrow the penalty with the threshold chasing it (at lambda 0.01
    # the FVU went from the warm start's 0.61 to 94).
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((4000, 32)) @ rng.standard_normal((32, 32))).astype(np.float32)
    concepts = fit_block_sparse(x, "group_lasso", 7, 2, 1, FitSettings(steps=1500, batch_size=256))
    assert concepts.info["fvu"] <= concepts.info["warm_start"]["fvu"] + 0.15


def test_joint_codes_are_exact_in_overlapping_blocks_and_zero_elsewhere():
    import torch

    # Two blocks that share a direction (not orthogonal to each other) and a third unkept:
    # each block's own projection of the row would be wrong; the joint solve is exact.
    g = torch.Generator().manual_seed(0)
    basis = torch.linalg.qr(torch.randn(8, 4, generator=g))[0].T  # 4 orthonormal rows
    shared = (basis[1] + basis[2]) / 2**0.5  # block 1 leans into block 0's plane
    blocks = torch.stack([basis[[0, 1]], torch.stack([shared, basis[3]]),
                          torch.linalg.qr(torch.randn(8, 2, generator=g))[0].T])  # fmt: skip
    truth = torch.tensor([[[1.0, -2.0], [0.5, 3.0], [0.0, 0.0]]])
    row = (truth[0, :, :, None] * blocks).sum((0, 1))[None]
    keep = torch.tensor([[True, True, False]])
    z = joint_codes(row, blocks, keep)
    assert torch.allclose(z, truth, atol=1e-3)
    separate = torch.einsum("nf,cbf->ncb", row, blocks)[:, :2]
    assert not torch.allclose(separate, truth[:, :2], atol=0.1)
    # Rows keeping fewer blocks than others: the padding solves to zero.
    two = joint_codes(torch.cat([row, row]), blocks, torch.tensor([[True, True, False],
                                                                   [False, False, True]]))
    assert torch.allclose(two[0], truth[0], atol=1e-3) and two[1, :2].abs().sum() == 0


def test_grassmannian_read_out_undoes_the_tied_projections_crosstalk(overlapping):
    concepts = fit_block_sparse(overlapping.x, "grassmannian", 12, 4, 2, FAST)
    assert concepts.info["fvu"] < concepts.info["tied_fvu"]


def test_the_relaxed_group_lasso_keeps_the_support_and_lowers_the_error(tiny):
    concepts = fit_block_sparse(tiny.x, "group_lasso", 3, 4, 1, FAST)
    assert concepts.info["fvu"] < concepts.info["shrunk_fvu"]
    active = np.linalg.norm(concepts.codes(tiny.x), axis=2) > 0
    assert abs(active.sum(1).mean() - concepts.info["active"]) < 1e-3
    assert (active.sum(1) >= 1).mean() > 0.95


def test_relax_keeps_each_rows_support_while_it_moves_the_bias(tiny):
    import torch

    from sparling_genomics.concepts.base import Scaling, orthonormal_blocks, train_autoencoder
    from sparling_genomics.concepts.block_sparse import GroupLassoBSF, joint_codes, relax

    x = Scaling.of(tiny.x).apply(tiny.x)
    init = orthonormal_blocks(torch.randn(3, 4, 24, generator=torch.Generator().manual_seed(0)))
    model = GroupLassoBSF(init, 1)
    train_autoencoder(model, x, FitSettings(steps=300, batch_size=256, resample_every=0))
    data = torch.from_numpy(x)
    with torch.no_grad():
        before = model.codes(data).norm(dim=2) > 0
        bias = model.bias.clone()
        relax(model, data)
        after = model.codes(data)
    assert not torch.allclose(model.bias, bias)  # the refit moved the bias ...
    assert torch.equal(after.norm(dim=2) > 0, before)  # ... and the support is the same
    # The read-out is the least-squares fit on that support.
    assert torch.allclose(after, joint_codes(data - model.bias, model.decoder, before))
    # Chunked and whole solves agree (more rows than one chunk).
    many = torch.cat([data] * 5)
    assert torch.allclose(joint_codes(many, model.decoder, torch.cat([before] * 5))[:2000],
                          joint_codes(data, model.decoder, before), atol=1e-5)
