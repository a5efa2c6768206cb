import numpy as np
import pytest

from sparling_genomics.concepts.base import FitSettings
from sparling_genomics.concepts.extract import METHODS, extract
from sparling_genomics.concepts.manifolds import superposition
from sparling_genomics.concepts.mdl import description_length
from sparling_genomics.concepts.measures import mppc, probe_loss
from sparling_genomics.errors import ConfigError, InputError


def test_bad_activations_and_counts_are_one_line_errors():
    x = np.random.default_rng(0).standard_normal((20, 4)).astype(np.float32)
    with pytest.raises(InputError, match="no activations"):
        extract(np.zeros((0, 4), np.float32), "sae", 2, k=1)
    with pytest.raises(InputError, match="constant"):
        extract(np.ones((10, 4), np.float32), "deleuzian", 2)
    with pytest.raises(InputError, match="NaN"):
        extract(np.full((10, 4), np.nan, np.float32), "sae", 2, k=1)
    with pytest.raises(ConfigError, match="k=5"):
        extract(x, "sae", 3, k=5)
    with pytest.raises(ConfigError, match="30 concepts from 20"):
        extract(x, "bsf_vanilla", 30, block=1, k=1)
    with pytest.raises(ConfigError, match="block size 8"):
        extract(x, "bsf_vanilla", 3, block=8, k=1)
    with pytest.raises(ConfigError, match="unknown concept method"):
        extract(x, "pca", 3)


@pytest.mark.parametrize("method", METHODS)
def test_every_method_gives_concepts_in_the_activation_space(method):
    x = superposition(600, dim=8, kinds=("circle", "sphere"), active=1, seed=0).x
    c = extract(x, method, 4, block=2, k=1, settings=FitSettings(steps=20))
    assert c.blocks.shape[0] == 4 and c.blocks.shape[2] == 8
    assert c.activate(x).shape == (600, 4)
    if method != "deleuzian":  # no reconstruction, so no description length
        assert c.info["description_length"]["bits_per_row"] > 0


def test_mdl_prefers_blocks_to_directions_for_circles():
    # Six circles in 16-D, one per row: a single direction cannot carry a circle, so the
    # shortest description uses blocks (a circle needs 2 coordinates).
    s = superposition(3000, dim=16, kinds=("circle",) * 6, active=1, noise=0.005, seed=1)
    c = extract(s.x, "bsf_vanilla", 6, k=1, settings=FitSettings(steps=600, batch_size=256))
    choice = c.info["mdl_choice"]
    chosen = choice["chosen"]["block"]
    dl = {row["block"]: row["bits_per_row"] for row in choice["candidates"]}
    assert chosen >= 2 and dl[1] > dl[chosen] and dl[8] > dl[chosen], choice["candidates"]


def test_description_length_grows_with_the_residual():
    s = superposition(1000, dim=8, kinds=("circle", "circle"), active=1, seed=0)
    good = extract(s.x, "bsf_vanilla", 2, block=2, k=1, settings=FitSettings(steps=400))
    poor = extract(s.x, "bsf_vanilla", 2, block=1, k=1, settings=FitSettings(steps=400))
    assert description_length(good, s.x)["residual"] < description_length(poor, s.x)["residual"]


def test_mppc_is_one_for_the_same_concepts_and_low_for_unrelated_ones():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((500, 4))
    assert mppc(a, a[:, ::-1] * 3) == pytest.approx(1.0)
    assert mppc(a, rng.standard_normal((500, 4))) < 0.3


def test_probe_loss_is_lower_for_informative_features():
    rng = np.random.default_rng(0)
    labels = rng.random((2000, 2)) < 0.3
    informative = labels.astype(float) + 0.1 * rng.standard_normal((2000, 2))
    noise = rng.standard_normal((2000, 2))
    good, bad = probe_loss(informative, labels), probe_loss(noise, labels)
    assert good["probe_loss"] < 0.1 < bad["probe_loss"] and good["labels"] == 2
