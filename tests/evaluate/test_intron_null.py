"""The intron-matched null: a motif placed at -30 nt from acceptors is enriched there against
other positions of the same introns; one placed anywhere in introns is not, though the window
null calls it enriched upstream of acceptors."""

import numpy as np

from sparling_genomics.evaluate.intron_null import enriched_bins, intron_matched_enrichment
from sparling_genomics.evaluate.positions import (
    BEYOND,
    PositionalContext,
    PositionSettings,
    nearest_signed_distance,
    positional_enrichment,
)
from sparling_genomics.genome.regions import REGIONS

SETTINGS = PositionSettings(max_distance=150, bin_width=15)


def _genes(seed=0, windows=40, width=2000):
    """Windows of exon (80 nt) / intron (70-160 nt) stretches between intergenic ends."""
    rng = np.random.default_rng(seed)
    region = np.zeros((windows, width), np.int8)
    acceptors, introns = [], []
    for w in range(windows):
        p, found = 100, []
        region[w, p : p + 80] = REGIONS.index("exon")
        p += 80
        while p + 400 < width:
            n = int(rng.integers(70, 161))
            region[w, p : p + n] = REGIONS.index("intron")
            found.append((p, p + n))
            p += n
            region[w, p : p + 80] = REGIONS.index("exon")
            p += 80
        introns.append(found)
        acceptors.append([end for _, end in found])  # the first exon base after the intron
    donors = [[start - 1 for start, _ in found] for found in introns]
    distance = np.full((windows, 2, width), BEYOND, np.int32)
    for w in range(windows):
        for c, sites in enumerate((acceptors[w], donors[w])):
            d = nearest_signed_distance(np.arange(width), np.asarray(sites))
            distance[w, c] = np.where(np.abs(d) <= SETTINGS.max_distance, d, BEYOND)
    context = PositionalContext(["acceptor", "donor"], distance, np.ones((windows, width), bool),
                                region, SETTINGS.max_distance)  # fmt: skip
    return context, introns, rng


def test_a_branch_point_motif_is_enriched_against_its_own_introns():
    context, introns, _ = _genes()
    window = np.array([w for w, found in enumerate(introns) for _ in found])
    position = np.array([end - 30 for found in introns for _, end in found])
    block = intron_matched_enrichment(context, window, position, SETTINGS)
    assert block["available"] and block["n_sites"] == len(window)
    hits = enriched_bins(block, "acceptor", -45, -18)
    assert [(lo, hi) for lo, hi, _, _ in hits] == [(-30, -15)] and hits[0][2] > 3


def test_a_motif_anywhere_in_introns_is_not_but_the_window_null_says_it_is():
    context, introns, rng = _genes(seed=1)
    window, position = [], []
    for w, found in enumerate(introns):
        for start, end in found:
            window += [w] * 3
            position += rng.integers(start, end, 3).tolist()
    window, position = np.array(window), np.array(position)
    block = intron_matched_enrichment(context, window, position, SETTINGS)
    assert enriched_bins(block, "acceptor", -150, 0) == []
    assert enriched_bins(block, "donor", 0, 150) == []
    loose = positional_enrichment(context, window, position, SETTINGS)["classes"]["acceptor"]
    edges = loose["q"]
    assert min(edges[:10]) < 0.05  # the window null: "enriched upstream of acceptors"


def test_the_summary_names_the_enriched_window_or_says_there_is_none():
    from sparling_genomics.evaluate.intron_null import intron_summary

    context, introns, _ = _genes()
    window = np.array([w for w, found in enumerate(introns) for _ in found])
    position = np.array([end - 30 for found in introns for _, end in found])
    text = intron_summary(intron_matched_enrichment(context, window, position, SETTINGS))
    assert "sites inside introns" in text and "16-30 nt upstream of acceptors" in text
    none = intron_summary(intron_matched_enrichment(context, window[:0], position[:0], SETTINGS))
    assert none == "no sites inside introns"
