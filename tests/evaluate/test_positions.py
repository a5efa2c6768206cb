"""Positional enrichment: a planted case, a uniform case, the matched null, the tiny dataset."""

import numpy as np
import pytest

from sparling_genomics.evaluate.positions import (
    BEYOND,
    PositionalContext,
    PositionSettings,
    build_positional_context,
    matched_null_positions,
    nearest_signed_distance,
    positional_enrichment,
)
from sparling_genomics.genome.dataset import SiteDataset


def _context(n_windows=40, width=1000, seed=0, regions=True):
    """Synthetic windows, each with acceptors every ~250 nt and a donor between."""
    rng = np.random.default_rng(seed)
    acc = np.full((n_windows, width), BEYOND, dtype=np.int64)
    don = np.full((n_windows, width), BEYOND, dtype=np.int64)
    positions = np.arange(width)
    acceptors = []
    for w in range(n_windows):
        a = np.sort(rng.choice(np.arange(60, width - 60, 250), 3, replace=False)) + rng.integers(
            0, 20
        )
        acceptors.append(a)
        acc[w] = nearest_signed_distance(positions, a)
        don[w] = nearest_signed_distance(positions, a + 120)
    distance = np.stack([acc, don], axis=1)
    distance = np.where(np.abs(distance) <= 300, distance, BEYOND).astype(np.int32)
    region = np.zeros((n_windows, width), dtype=np.int8) + 1  # all exon ...
    region[:, : width // 2] = 2  # ... but the first half intron
    ctx = PositionalContext(["acceptor", "donor"], distance, np.ones((n_windows, width), bool),
                            region if regions else None, 300)  # fmt: skip
    return ctx, acceptors


def test_planted_sites_20_nt_upstream_of_acceptors_are_enriched_there_only():
    ctx, acceptors = _context()
    window = np.concatenate([[w] * len(a) for w, a in enumerate(acceptors)])
    position = np.concatenate(acceptors) - 20
    block = positional_enrichment(ctx, window, position)
    acc = block["classes"]["acceptor"]
    edges = block["bin_edges"]
    target = edges.index(-30)  # the bin [-30, -15) holds d = -20
    assert acc["observed"][target] == len(position)
    assert acc["q"][target] < 1e-6 and acc["ratio"][target] > 10
    others = [b for b in range(len(acc["q"])) if b != target]
    assert all(acc["q"][b] >= 0.05 for b in others)
    assert block["summary"].startswith("enriched 15-30 nt upstream of acceptors")


def test_uniform_sites_show_no_enrichment():
    ctx, _ = _context()
    rng = np.random.default_rng(1)
    window = rng.integers(0, 40, 3000)
    position = rng.integers(0, 1000, 3000)
    block = positional_enrichment(ctx, window, position)
    qs = [q for c in block["classes"].values() for q in c["q"]]
    assert min(qs) >= 0.05
    assert block["summary"] == "no positional enrichment"
    assert block["regions"]["intron"]["expected_share"] == pytest.approx(0.5, abs=0.01)


def test_matched_null_keeps_count_and_windows_and_its_mean_is_the_expectation():
    ctx, _ = _context()
    ctx.scorable[:, :100] = False  # unlabelled flank: never drawn
    rng = np.random.default_rng(2)
    window = rng.integers(0, 10, 500)  # sites on only 10 of the 40 windows
    position = rng.integers(100, 1000, 500)
    nw, npos = matched_null_positions(ctx, window, rng)
    assert len(npos) == len(position) and np.array_equal(nw, window)
    assert ctx.scorable[nw, npos].all()
    block = positional_enrichment(ctx, window, position)
    expected = np.array(block["classes"]["acceptor"]["expected"])
    draws = [positional_enrichment(ctx, *matched_null_positions(ctx, window, rng))
             for _ in range(30)]  # fmt: skip
    mean = np.mean([d["classes"]["acceptor"]["observed"] for d in draws], axis=0)
    assert np.abs(mean - expected).max() < 6
    beyond = block["classes"]["acceptor"]["beyond"]["expected"]
    assert expected.sum() + beyond == pytest.approx(500, abs=0.1)


def test_settings_change_bins_and_region_share_unavailable_without_regions():
    ctx, acceptors = _context(regions=False)
    block = positional_enrichment(ctx, [0, 1], [acceptors[0][0], acceptors[1][0]],
                                  PositionSettings(max_distance=100, bin_width=10))  # fmt: skip
    assert block["bin_edges"][0] == -100 and block["bin_edges"][-1] == 101
    assert block["regions"] == {"available": False}


def test_context_from_tiny_dataset_has_acceptor_at_distance_zero(tiny_dataset):
    data = SiteDataset(tiny_dataset)
    index = data.indices("test")
    ctx = build_positional_context(data, index, "test")
    y = data.labels(index)
    acc = data.classes[1:].index("acceptor")
    w, p = np.nonzero(y == data.classes.index("acceptor"))
    assert len(w) and (ctx.distance[w, acc, p] == 0).all()
    assert ctx.region is not None
    # Acceptors are the first base of an exon.
    assert (ctx.region[w, p] == 1).all()
    # Donors are the last exon base: the next base (transcript orientation) is intronic,
    # except where another gene's exon overlaps the intron on the same strand.
    dw, dp = np.nonzero(y == data.classes.index("donor"))
    inside = dp + 1 < data.window
    assert (ctx.region[dw[inside], dp[inside] + 1] == 2).mean() > 0.95
    assert (ctx.region[dw, dp] == 1).all()


def test_enrichment_by_motif_takes_any_grouping_of_sites():
    from sparling_genomics.evaluate.positions import enrichment_by_motif

    ctx, acceptors = _context()
    planted = np.stack([np.zeros(3, int), acceptors[0] - 20], axis=1)
    family = np.concatenate([planted, np.stack([np.ones(3, int), acceptors[1] - 20], axis=1)])
    blocks = enrichment_by_motif(ctx, {"channel": planted, "family": family})
    assert blocks["channel"]["n_sites"] == 3 and blocks["family"]["n_sites"] == 6


def test_significant_bins_list_the_planted_bin_and_the_region():
    from sparling_genomics.evaluate.positions import significant_bins

    ctx, acceptors = _context()
    window = np.concatenate([[w] * len(a) for w, a in enumerate(acceptors)])
    position = np.concatenate(acceptors) - 20
    rows = significant_bins(positional_enrichment(ctx, window, position))
    best = {k: rows[0][k] for k in ("class", "lo", "hi")}
    assert best == {"class": "acceptor", "lo": -30, "hi": -15}
    assert not any(r.get("class") == "acceptor" and r.get("lo", 0) >= 0 for r in rows)
