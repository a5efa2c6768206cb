import numpy as np
import pytest

from sparling_genomics.evaluate.firing_clusters import (
    _clusters,
    firing_clusters,
    repeated_motifs,
    shared_pattern_motifs,
    two_pattern_motifs,
)
from sparling_genomics.train.loading import load_run
from sparling_genomics.train.run_config import resolve_config
from sparling_genomics.train.trainer import train


def test_two_kinds_of_firing_point_two_ways_and_one_kind_does_not():
    rng = np.random.default_rng(0)
    one = np.abs(rng.normal(size=(200, 8))) * 0.1 + np.eye(8)[0] * rng.uniform(1, 3, (200, 1))
    a = np.eye(8)[0] + 0.05 * rng.normal(size=(150, 8))
    b = np.eye(8)[1] + 0.05 * rng.normal(size=(50, 8))
    single, double = _clusters(one, rng, 0), _clusters(np.vstack([a, b]), rng, 0)
    assert single["cos"] > 0.95
    assert double["cos"] < 0.2 and double["minor"] == pytest.approx(0.25, abs=0.02)
    assert double["centres"][0][0] > 0.9  # the larger cluster first
    assert _clusters(one[:3], rng, 0)["cos"] is None


def test_two_pattern_motifs_keeps_distinct_and_large_enough_clusters_most_distinct_first():
    clusters = [
        {"cos": 0.99, "minor": 0.4},  # one motif
        {"cos": 0.8, "minor": 0.3},
        {"cos": 0.6, "minor": 0.05},  # a stray few firings
        {"cos": 0.7, "minor": 0.2},
        {"cos": None, "minor": 0.0},  # too few firings
        {"cos": 0.5, "minor": 0.3},  # idle: skipped
    ]
    assert two_pattern_motifs(clusters, max_cos=0.9, min_share=0.1, skip={5}) == [3, 1]


def test_firing_clusters_measures_every_learned_motif_of_a_trained_model(tmp_path):
    config = resolve_config("digit_circle", "tiny")
    train(config, tmp_path / "run", progress=False)
    loaded = load_run(tmp_path / "run", device="cpu")
    model = loaded.model.train()
    found = firing_clusters(model, loaded.task, "val", batch_size=16, device=loaded.device,
                            samples=32)  # fmt: skip
    assert len(found) == model.learned and model.training
    for k in found:
        assert k["firings"] >= 0 and (k["cos"] is None or -1.0 <= k["cos"] <= 1.0 + 1e-6)
        if k["cos"] is not None:
            assert k["centres"].shape == (2, model.g.out.weight.shape[1])


def test_a_second_pattern_that_another_motif_owns_is_no_reason_to_split():
    e = np.eye(3)
    clusters = [
        {"cos": 0.5, "minor": 0.3, "centres": np.stack([e[0], e[1]])},  # its 2nd: motif 1's
        {"cos": 1.0, "minor": 0.4, "centres": np.stack([e[1], e[1]])},
        {"cos": 0.6, "minor": 0.3, "centres": np.stack([e[0], e[2]])},  # its 2nd: no one's
        {"cos": 1.0, "minor": 0.4, "centres": np.stack([e[2], e[2]])},  # idle: not counted
    ]
    kwargs = {"max_cos": 0.9, "min_share": 0.1, "skip": {3}}
    assert two_pattern_motifs(clusters, **kwargs) == [0, 2]
    assert two_pattern_motifs(clusters, **kwargs, owned_cos=0.95) == [2]
    assert shared_pattern_motifs(clusters, **kwargs, owned_cos=0.95) == [0]  # the rest
    assert shared_pattern_motifs(clusters, **kwargs, owned_cos=0.5) == [0]  # 2's 2nd: idle 3's


def test_firing_clusters_measures_a_model_that_scans_both_strands_in_one_batch(tmp_path):
    config = resolve_config("planted", "tiny", overrides=[{"data": {"background": "iid"}}])
    assert config.model.reverse_complement
    train(config, tmp_path / "run", progress=False)
    loaded = load_run(tmp_path / "run", device="cpu")
    found = firing_clusters(loaded.model, loaded.task, "val", batch_size=16,
                            device=loaded.device, samples=16)  # fmt: skip
    assert len(found) == loaded.model.learned
    assert sum(k["firings"] for k in found) > 0


def test_each_position_takes_the_features_of_the_strand_whose_logit_won():
    from types import SimpleNamespace

    import torch

    from sparling_genomics.evaluate.firing_clusters import _strands

    n, length = 1, 3
    f = torch.arange(2 * n * 2 * length, dtype=torch.float32).reshape(2 * n, 2, 1, length)
    o = torch.zeros(2 * n, 1, 1, length)
    o[1, 0, 0, 0] = 5.0  # the reverse strand wins at its position 0, i.e. forward position 2
    model = SimpleNamespace(g=SimpleNamespace(_reverse_wins=lambda fwd, rev: rev > fwd))
    forward, reverse, wins = _strands(model, f, o, n)
    assert wins[0, 0].tolist() == [False, False, True]
    assert torch.equal(reverse[0, :, 2], f[1, :, 0, 0]) and torch.equal(forward[0], f[0, :, 0])
    single, none, no_wins = _strands(model, f[:1], o[:1], 1)
    assert none is None and no_wins is None and single.shape == (1, 2, length)


def test_repeated_motifs_pairs_each_repeat_with_the_more_needed_motif_once():
    e = np.eye(4)
    k = [{"centres": e[[0, 0]]}, {"centres": e[[1, 1]]}, {"centres": e[[0, 1]]},
         {"centres": None}, {"centres": e[[1, 2]]}, {"centres": e[[0, 3]]}]  # fmt: skip
    alpha = [0.2, 0.4, 0.3, 0.0, 0.1, 0.5]
    # 0, 2 and 5 share a main pattern, 1 and 4 another; one pair per motif a look.
    assert repeated_motifs(k, alpha, same_cos=0.95) == [(0, 2), (4, 1)]
