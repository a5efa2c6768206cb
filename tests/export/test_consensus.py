"""Consensus families across seeds on hand-made families: recurrence k of n, shifted and
reverse-complement copies, one family split over two, no chaining, the match by planted sites
beside the logo match, one seed not measured, runs of another setting refused."""

import numpy as np
import pytest

from sparling_genomics.errors import ConfigError, InputError
from sparling_genomics.export.consensus import (
    NOT_MEASURED,
    SeedFamilies,
    check_same_setting,
    consensus_families,
    consensus_groups,
    consensus_settings,
    other_windows,
    shared_sites,
)
from sparling_genomics.export.families import reverse_complement
from sparling_genomics.export.formats import ExportedMotif
from tests.export.test_families import LONG, OTHER, pwm

SINGLE = ["ATATCGCGTAGCAA", "CCTTGAGTCAAGGA", "GTGTACACTTCAGC"]  # one of its own per seed


def family(k: int, probs: np.ndarray, effect: float | None = None, nsites: int = 100):
    return ExportedMotif(f"sparling_f{k:02d}", probs, nsites, effect=effect)


def three_seeds() -> list[SeedFamilies]:
    """LONG in every seed (seed 1: split in two halves; seed 2: shifted, other strand), OTHER
    in every seed (seed 2: shifted by one), and one family of its own per seed."""
    return [
        SeedFamilies("seed0", [family(0, pwm(LONG), 3.0), family(1, pwm(OTHER), 1.0),
                               family(2, pwm(SINGLE[0]), 1.0)]),  # fmt: skip
        SeedFamilies("seed1", [family(0, pwm(LONG[:8]), 2.0), family(1, pwm(LONG[6:]), 1.0),
                               family(2, pwm(OTHER), 1.0), family(3, pwm(SINGLE[1]), 1.0)]),
        SeedFamilies("seed2", [family(0, reverse_complement(pwm(LONG[2:13])), 3.0),
                               family(1, pwm(OTHER[1:]), 1.0), family(2, pwm(SINGLE[2]), 1.0)]),
    ]  # fmt: skip


@pytest.fixture(scope="module")
def consensus() -> dict:
    return consensus_families(three_seeds())


def members(group: dict) -> dict:
    return {seed: set(ids) for seed, ids in group["members"].items()}


def test_a_family_in_every_seed_is_3_of_3_even_split_shifted_or_on_the_other_strand(consensus):
    assert consensus["measured"] and consensus["seeds"] == ["seed0", "seed1", "seed2"]
    long, other = consensus["groups"]
    # Seed 1 holds the signal as two families: one group, both of them in it.
    assert members(long) == {"seed0": {"sparling_f00"}, "seed1": {"sparling_f00", "sparling_f01"},
                             "seed2": {"sparling_f00"}}  # fmt: skip
    assert long["recurs"] == "3 of 3" and long["seeds"] == long["of"] == 3
    assert long["label"] == LONG and long["lead"] == {"seed": "seed0", "family": "sparling_f00"}
    assert long["effect"]["per_seed"] == {"seed0": 3.0, "seed1": 3.0, "seed2": 3.0}
    assert long["effect"]["mean"] == 3.0 and long["effect"]["sd"] == 0.0
    assert members(other) == {"seed0": {"sparling_f01"}, "seed1": {"sparling_f02"},
                              "seed2": {"sparling_f01"}}  # fmt: skip
    rows = {(r["seed"], r["family"]): r for r in consensus["families"]}
    reverse = rows["seed2", "sparling_f00"]["matches"]["seed0"]["logo"]
    assert reverse[0]["family"] == "sparling_f00" and reverse[0]["strand"] == "-"
    assert reverse[0]["q_value"] < 0.01


def test_a_family_in_one_seed_is_1_of_3_and_listed_apart(consensus):
    apart = consensus["not_reproduced"]
    assert [g["recurs"] for g in apart] == ["1 of 3"] * 3
    assert sorted(g["label"] for g in apart) == sorted(SINGLE)
    assert all(g["seeds"] > 1 for g in consensus["groups"])
    rows = {(r["seed"], r["family"]): r for r in consensus["families"]}
    single = rows["seed0", "sparling_f02"]
    assert single["recurs_by_logo"] is False and single["group"] in {g["id"] for g in apart}
    assert single["matches"]["seed1"]["logo"] == [] and single["matches"]["seed1"]["best_q"] > 0.01


def test_headline_figures_weigh_families_by_effect(consensus):
    by_logo = consensus["by_logo"]
    # Every seed: all but its own single family recur; the single one carries 1 of 5 (seed 0:
    # 3 + 1 + 1), 1 of 5 (seed 1: 2 + 1 + 1 + 1) and 1 of 5 (seed 2).
    assert by_logo["families"] == 10 and by_logo["recurring"] == 7
    assert by_logo["effect_reproduced_per_seed"] == {"seed0": 0.8, "seed1": 0.8, "seed2": 0.8}
    assert by_logo["effect_reproduced"] == 0.8 and by_logo["fraction_recurring"] == 0.7
    assert consensus["by_group"]["recurring"] == 7
    assert consensus["by_sites"] is None  # no sites given: not measured, not zero


def test_one_seed_says_reproducibility_was_not_measured():
    result = consensus_families(three_seeds()[:1])
    assert result["measured"] is False and result["note"] == NOT_MEASURED
    assert "not measured" in result["note"]
    assert result["groups"] == [] and result["by_logo"] is None
    assert [r["family"] for r in result["families"]] == ["sparling_f00", "sparling_f01",
                                                         "sparling_f02"]  # fmt: skip
    assert all(r["recurs_by_logo"] is None for r in result["families"])


def test_groups_do_not_chain_a_family_that_matches_two_others():
    # Node 1 (seed 1) matches node 0 (seed 0) and node 2 (seed 2); 0 and 2 do not match.
    assert consensus_groups([0, 1, 2], {(0, 1), (1, 2)}, 0.5) == [[0, 1], [2]]
    # A split: seed 1's two families (nodes 1, 2) are never compared with each other.
    assert consensus_groups([0, 1, 1, 2], {(0, 1), (0, 2), (0, 3), (1, 3), (2, 3)}, 0.5) == [
        [0, 1, 2, 3]
    ]


def planted(rng, windows: int = 60, length: int = 200) -> np.ndarray:
    """One planted site per window, at a random place (window, start, strand)."""
    return np.stack([np.arange(windows), rng.integers(20, length - 40, windows),
                     np.ones(windows, int)], axis=1)  # fmt: skip


def test_families_that_fire_at_the_planted_sites_match_by_sites_beside_the_logo():
    sites = planted(np.random.default_rng(0))
    # Two seeds read the planted motif with unrelated logos and trims: seed 1's span starts
    # 2 nt later and is 2 nt longer (they share 3 of the shorter 5 columns).
    everywhere = np.array([[w, p, 1] for w in range(60) for p in range(0, 200, 3)])
    seeds = [
        SeedFamilies("seed0", [family(0, pwm("TGCAG"), 1.0)],
                     sites={"sparling_f00": sites}),  # fmt: skip
        SeedFamilies("seed1", [family(0, pwm("CAGGTAA"), 1.0), family(1, pwm(OTHER), 1.0),
                               family(2, pwm("TTTTTTT"), 1.0)],
                     sites={"sparling_f00": sites + [0, 2, 0],
                            "sparling_f01": sites + [0, 40, 0],
                            "sparling_f02": everywhere}),  # fmt: skip
    ]
    result = consensus_families(seeds)
    rows = {(r["seed"], r["family"]): r for r in result["families"]}
    mine = rows["seed0", "sparling_f00"]
    assert mine["recurs_by_logo"] is False and mine["recurs_by_sites"] is True
    matches = mine["matches"]["seed1"]
    assert matches["logo"] == []
    # The family firing everywhere overlaps the sites too, but no more than its sites moved
    # to other windows do: it is no match; the one 40 nt away shares nothing.
    assert [m["family"] for m in matches["sites"]] == ["sparling_f00"]
    assert matches["sites"][0]["overlap"] == 1.0 and matches["sites"][0]["null"] < 0.2
    assert matches["best_overlap"] == 1.0
    assert rows["seed1", "sparling_f01"]["recurs_by_sites"] is False
    assert rows["seed1", "sparling_f02"]["recurs_by_sites"] is False
    # Reported beside the logo verdict, never in its place.
    assert result["by_logo"]["recurring"] == 0 and result["by_sites"]["recurring"] == 2
    assert result["by_sites"]["effect_reproduced_per_seed"] == {"seed0": 1.0, "seed1": 0.3333}


def test_shared_sites_need_half_the_shorter_span():
    a = np.array([[0, 100, 1], [1, 50, 1]])
    assert shared_sites(a, 6, a + [0, 3, 0], 8, 0.5) == 1.0  # 3 of 6 columns shared
    assert shared_sites(a, 6, a + [0, 4, 0], 8, 0.5) == 0.0  # 2 of 6
    assert shared_sites(a, 6, a - [0, 5, 0], 8, 0.5) == 1.0  # 3 of 6, on the left
    elsewhere = np.array([[0, 100, 1], [5, 50, 1]])  # window 1's site is in another window
    assert shared_sites(a, 6, elsewhere, 6, 0.5) == 0.5
    moved = other_windows(np.array([[2, 10, 1], [5, 20, 1], [5, 30, 1]]))
    assert moved.tolist() == [[5, 10, 1], [2, 20, 1], [2, 30, 1]]


def test_runs_of_another_setting_are_refused_in_one_line_naming_the_run():
    same = {"task": "splicing", "dataset": "sha256:aa", "channels": 32, "split": "test"}
    check_same_setting([("a", same), ("b", dict(same))])
    for key, value, words in (("task", "planted", "another task"),
                              ("dataset", "sha256:bb", "another dataset (genome)"),
                              ("channels", 16, "another motif channel count")):  # fmt: skip
        with pytest.raises(InputError) as caught:
            check_same_setting([("a", same), ("b", dict(same)), ("c", {**same, key: value})])
        message = str(caught.value)
        assert message.startswith(f"c: {words} than a") and "\n" not in message
    with pytest.raises(InputError, match=r"data.length differ"):
        check_same_setting([("a", {**same, "dataset": {"length": 200, "motifs": ["x"]}}),
                            ("b", {**same, "dataset": {"length": 400, "motifs": ["x"]}})])


def test_settings_are_checked_and_labels_must_differ():
    with pytest.raises(ConfigError, match="consensus.q_threshold"):
        consensus_settings(q_threshold=2.0)
    seeds = three_seeds()[:2]
    seeds[1].label = "seed0"
    with pytest.raises(InputError, match="unique"):
        consensus_families(seeds)
