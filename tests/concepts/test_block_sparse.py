import numpy as np
import pytest

from sparling_genomics.concepts.base import FitSettings
from sparling_genomics.concepts.block_sparse import VARIANTS, fit_block_sparse, keep_top_blocks
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
