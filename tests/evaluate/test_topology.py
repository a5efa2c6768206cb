import numpy as np
import pytest

from sparling_genomics.evaluate.topology import (
    fourier_spectrum,
    measure_cloud,
    prepare_cloud,
    top_frequencies,
    twonn_dimension,
)


def _circle(n=120, dim=16, noise=0.02, seed=0):
    rng = np.random.default_rng(seed)
    t = rng.uniform(0, 2 * np.pi, n)
    basis = np.linalg.qr(rng.normal(size=(dim, 2)))[0].T  # two orthonormal directions
    return np.c_[np.cos(t), np.sin(t)] @ basis + noise * rng.normal(size=(n, dim))


def test_a_sampled_circle_has_one_dominant_h1_bar_and_a_gaussian_blob_none():
    circle = measure_cloud(_circle())
    blob = measure_cloud(np.random.default_rng(1).normal(size=(120, 16)))
    bars = circle.diagrams["h1"][:, 1] - circle.diagrams["h1"][:, 0]
    assert np.sum(bars > 0.5 * bars.max()) == 1  # one long-lived loop
    assert circle.h1_dominance is None or circle.h1_dominance > 10  # None: the only bar
    assert circle.h1_max > 1.0  # a loop of the cloud's own size (unit RMS radius)
    assert blob.h1_dominance < 2 and blob.h1_max < 0.3 * circle.h1_max
    # H0 of the circle: short bars only (one connected curve); the blob's gaps are wider.
    assert circle.h0_max < blob.h0_max


@pytest.mark.parametrize("true_dim", [1, 2, 5])
def test_twonn_recovers_the_dimension_of_a_flat_manifold(true_dim):
    rng = np.random.default_rng(true_dim)
    latent = rng.uniform(size=(600, true_dim))
    basis = np.linalg.qr(rng.normal(size=(20, true_dim)))[0].T
    glob, local = twonn_dimension(prepare_cloud(latent @ basis))
    assert glob == pytest.approx(true_dim, rel=0.2)
    assert local == pytest.approx(true_dim, rel=0.3)


def test_prepare_cloud_drops_duplicates_caps_points_and_normalises():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(50, 3)) * 7 + 3
    cloud = prepare_cloud(np.r_[x, x[:10]], max_points=40, seed=5)
    assert cloud.shape == (40, 3)
    assert np.allclose(cloud.mean(0), 0) and np.isclose(np.sqrt((cloud**2).sum(1).mean()), 1)
    assert np.array_equal(cloud, prepare_cloud(np.r_[x, x[:10]], max_points=40, seed=5))
    assert not np.array_equal(cloud, prepare_cloud(np.r_[x, x[:10]], max_points=40, seed=6))


def test_scale_does_not_change_the_measures():
    a, b = measure_cloud(_circle()), measure_cloud(_circle() * 50)
    assert a.h1_max == pytest.approx(b.h1_max, rel=1e-4)
    assert a.h0_total == pytest.approx(b.h0_total, rel=1e-4)


def test_too_few_distinct_points_give_no_measures():
    m = measure_cloud(np.ones((30, 4)))  # one distinct point (a silent layer)
    assert m.points == 1 and m.h1_max is None and m.twonn is None and m.h0_total is None
    assert m.as_dict()["h1_dominance"] is None


def test_fourier_spectrum_finds_the_frequency_of_a_circular_embedding():
    p, k = 113, 7
    angle = 2 * np.pi * k * np.arange(p) / p
    rng = np.random.default_rng(0)
    embedding = np.c_[np.cos(angle), np.sin(angle)] @ rng.normal(size=(2, 32))
    spectrum = fourier_spectrum(embedding)
    assert spectrum.sum() == pytest.approx(1.0) and len(spectrum) == p // 2 + 1
    top, share = top_frequencies(spectrum)
    assert top[0] == k and share == pytest.approx(1.0)
    noise = fourier_spectrum(rng.normal(size=(p, 32)))
    assert top_frequencies(noise)[1] < 0.3  # no frequency stands out in random embeddings
