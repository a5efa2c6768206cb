"""Grammar: a family planted 20 nt downstream of another is found at +20 (and the reverse
pair at -20); an unrelated family and a family with itself show no preferred spacing."""

import numpy as np

from sparling_genomics.evaluate.grammar import spacing_enrichment


def _sites():
    rng = np.random.default_rng(0)
    windows, length = 60, 1000
    scorable = np.ones((windows, length), bool)
    scorable[:, :50] = False  # unscorable ends count in neither observed nor expected
    a, b, c = [], [], []
    for w in range(windows):
        for p in rng.choice(np.arange(60, 900), 6, replace=False):
            a.append((w, p))
            b.append((w, p + 20))
        c += [(w, int(p)) for p in rng.integers(50, 1000, 8)]
    return scorable, {"A": np.array(a), "B": np.array(b), "C": np.array(c)}


def test_a_planted_spacing_is_found_and_nothing_else():
    scorable, sites = _sites()
    out = spacing_enrichment(scorable, sites, {"A": 6, "B": 6, "C": 6})
    top = out["enriched"][0]
    assert (top["a"], top["b"], top["spacing"]) == ("A", "B", [20, 24])
    assert top["observed"] >= len(sites["A"]) and top["ratio"] > 20 and not top["overlap"]
    found = {(r["a"], r["b"], tuple(r["spacing"])) for r in out["enriched"]}
    assert ("B", "A", (-20, -16)) in found
    assert not any("C" in (r["a"], r["b"]) for r in out["enriched"])
    assert not any(r["a"] == r["b"] for r in out["enriched"])


def test_the_null_expectation_matches_a_shuffle():
    """The exact expectation equals the mean of many shuffles of B's positions."""
    scorable, sites = _sites()
    small = {"A": sites["A"][:40], "C": sites["C"][:60]}
    exact = next(p for p in spacing_enrichment(scorable, small)["pairs"]
                 if (p["a"], p["b"]) == ("A", "C"))  # fmt: skip
    rng = np.random.default_rng(1)
    total = np.zeros(len(exact["expected"]))
    draws = 300
    for _ in range(draws):
        moved = small["C"].copy()
        for w in np.unique(moved[:, 0]):
            pick = moved[:, 0] == w
            moved[pick, 1] = rng.choice(np.flatnonzero(scorable[w]), pick.sum())
        shuffled = spacing_enrichment(scorable, {"A": small["A"], "C": moved})["pairs"]
        total += next(p for p in shuffled if (p["a"], p["b"]) == ("A", "C"))["observed"]
    assert np.allclose(total / draws, exact["expected"], atol=0.6)


def test_windows_taken_a_chunk_at_a_time_give_the_same_counts(monkeypatch):
    from sparling_genomics.evaluate import grammar

    scorable, sites = _sites()
    whole = spacing_enrichment(scorable, sites)
    monkeypatch.setattr(grammar, "CHUNK", 7)
    chunked = spacing_enrichment(scorable, sites)
    for x, y in zip(whole["pairs"], chunked["pairs"]):
        assert x["observed"] == y["observed"] and np.allclose(x["expected"], y["expected"])
