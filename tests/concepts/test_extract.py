import numpy as np
import pytest

from sparling_genomics.concepts.base import Concepts, FitSettings, Scaling
from sparling_genomics.concepts.extract import METHODS, extract
from sparling_genomics.concepts.manifolds import superposition
from sparling_genomics.concepts.mdl import choose_block_and_k, description_length
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
    dl = {row["block"]: row["bits_per_row"] for row in choice["candidates"]
          if row["stage"] == "scout"}  # fmt: skip
    assert chosen >= 2 and dl[1] > dl[chosen] and dl[8] > dl[chosen], choice["candidates"]


def _oracle(s, k: int) -> Concepts:
    """The true circles of ``s`` as 2-blocks (least-squares codes, each row's k largest kept)."""
    scaling = Scaling.of(s.x)
    parts = [(p - scaling.mean / len(s.kinds)) / scaling.scale for p in s.parts.transpose(1, 0, 2)]
    blocks = np.stack([np.linalg.svd(p[np.abs(p).sum(1) > 0], full_matrices=False)[2][:2]
                       for p in parts]).astype(np.float32)  # fmt: skip
    flat = blocks.reshape(-1, blocks.shape[2])

    def encode(z: np.ndarray) -> np.ndarray:
        codes = np.linalg.lstsq(flat.T, z.T, rcond=None)[0].T.reshape(len(z), *blocks.shape[:2])
        keep = np.argsort(-np.linalg.norm(codes, axis=2), axis=1)[:, :k]
        mask = np.zeros(codes.shape[:2], bool)
        np.put_along_axis(mask, keep, True, axis=1)
        return codes * mask[:, :, None]

    return Concepts("oracle", blocks, scaling, encode)


def test_description_length_is_shortest_at_the_true_k():
    # Three of six circles per row, fitted by the true circles: keeping fewer blocks leaves
    # a residual, keeping more sends empty blocks; k = 3 (a candidate now) is shortest.
    s = superposition(4000, dim=24, kinds=("circle",) * 6, active=3, noise=0.005, seed=2)
    bits = {k: description_length(_oracle(s, k), s.x)["bits_per_row"] for k in (2, 3, 4, 6)}
    assert min(bits, key=bits.get) == 3, bits


def test_mdl_choice_refits_its_finalists_in_full_and_returns_the_shortest():
    s = superposition(600, dim=8, kinds=("circle", "circle"), active=1, seed=0)
    calls = []

    def fit(b, k, settings):
        calls.append((b, k, settings.steps))
        return extract(s.x, "bsf_vanilla", 2, block=b, k=k, settings=settings)

    best, table = choose_block_and_k(s.x, fit, 2, FitSettings(steps=200), blocks=(1, 2),
                                     ks=(1, 2), finalists=3)  # fmt: skip
    scouts = [r for r in table if r["stage"] == "scout"]
    full = [r for r in table if r["stage"] == "full"]
    assert len(scouts) == 4 and len(full) == 3 and [c[2] for c in calls] == [50] * 4 + [200] * 3
    ranked = sorted(scouts, key=lambda r: r["bits_per_row"])
    per_block = [min((r for r in scouts if r["block"] == b), key=lambda r: r["bits_per_row"])
                 for b in (1, 2)]  # fmt: skip
    finals = [(r["block"], r["k"]) for r in full]
    assert all((r["block"], r["k"]) in finals for r in per_block)  # every size's best k
    assert set(finals) <= {(r["block"], r["k"]) for r in per_block + ranked[:3]}
    winner = min(full, key=lambda r: r["bits_per_row"])
    assert (best.block, best.info["k"]) == (winner["block"], winner["k"])
    assert description_length(best, s.x)["bits_per_row"] == winner["bits_per_row"]


def test_block_coordinates_cost_what_their_spread_needs_in_any_basis():
    # The same fit with one block's basis rotated and rescaled (codes counter-transformed)
    # describes the data in the same number of bits; a block's unused direction is cheap.
    s = superposition(2000, dim=8, kinds=("circle", "circle"), active=1, noise=0.0, seed=0)
    c = extract(s.x, "bsf_vanilla", 2, block=4, k=1, settings=FitSettings(steps=300))
    before = description_length(c, s.x)
    turn = np.linalg.qr(np.random.default_rng(0).standard_normal((4, 4)))[0] * 3.0
    blocks = c.blocks.copy()
    blocks[0] = np.linalg.inv(turn) @ blocks[0]
    encode = c.encode
    c.blocks = blocks
    c.encode = lambda z: np.einsum("ncb,cba->nca", encode(z), np.stack([turn, np.eye(4)]))
    after = description_length(c, s.x)
    assert after["codes"] == pytest.approx(before["codes"], rel=1e-3)
    assert after["residual"] == pytest.approx(before["residual"], rel=1e-3)


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
