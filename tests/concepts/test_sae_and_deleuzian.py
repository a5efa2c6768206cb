import numpy as np
import pytest

from sparling_genomics.concepts.base import FitSettings
from sparling_genomics.concepts.deleuzian import fit_deleuzian, skewness, weighted_kmeans
from sparling_genomics.concepts.sae import fit_topk_sae


@pytest.fixture(scope="module")
def atoms():
    """Rows that are sparse non-negative sums of 5 known directions in 16-D (1-2 per row)."""
    rng = np.random.default_rng(0)
    truth = rng.standard_normal((5, 16))
    truth /= np.linalg.norm(truth, axis=1, keepdims=True)
    n = 4000
    codes = np.zeros((n, 5))
    for i in range(n):
        on = rng.choice(5, rng.integers(1, 3), replace=False)
        codes[i, on] = rng.uniform(0.5, 2.0, len(on))
    x = codes @ truth + 0.01 * rng.standard_normal((n, 16))
    return x.astype(np.float32), truth, codes


def _best_cosines(directions: np.ndarray, truth: np.ndarray) -> np.ndarray:
    d = directions / np.linalg.norm(directions, axis=1, keepdims=True)
    return np.abs(truth @ d.T).max(1)


def test_topk_sae_finds_every_planted_direction(atoms):
    x, truth, _ = atoms
    concepts = fit_topk_sae(x, 10, 2, FitSettings(steps=800, batch_size=256))
    assert _best_cosines(concepts.blocks[:, 0], truth).min() >= 0.9
    act = concepts.activate(x[:100])
    assert ((act > 0).sum(1) <= 2).all()


def test_deleuzian_concepts_point_along_the_planted_differences(atoms):
    x, truth, codes = atoms
    concepts = fit_deleuzian(x, 8, pairs=6000, seed=0)
    # Differences of sparse rows are mostly +-one atom: each atom has a concept near it.
    assert _best_cosines(concepts.blocks[:, 0], truth).min() >= 0.8
    # A concept's activation (projection) tracks its atom's code.
    act = concepts.activate(x)
    assert act.shape == (len(x), 8)


def test_deleuzian_is_deterministic_under_a_seed(atoms):
    x = atoms[0]
    a, b = fit_deleuzian(x, 4, pairs=1000, seed=3), fit_deleuzian(x, 4, pairs=1000, seed=3)
    assert np.array_equal(a.blocks, b.blocks)


def test_skewness_sign_and_weighted_kmeans_on_two_clusters():
    rng = np.random.default_rng(1)
    right = rng.exponential(size=(2000, 1))
    assert skewness(right)[0] > 1 and skewness(-right)[0] < -1
    pts = np.concatenate([rng.normal(0, 0.1, (50, 2)), rng.normal(5, 0.1, (50, 2))])
    centres = weighted_kmeans(pts, np.ones(100), 2, rng)
    assert sorted(np.round(centres[:, 0]).tolist()) == [0.0, 5.0]


def test_a_deleuzian_activation_is_the_signed_projection(atoms):
    x = atoms[0]
    concepts = fit_deleuzian(x, 4, pairs=1000, seed=0)
    act = concepts.activate(x)
    assert (act < 0).any()  # the concept's negative side is not a site
    assert np.allclose(act, concepts.codes(x)[:, :, 0])
