import numpy as np
import pytest

from sparling_genomics.export.formats import ExportedMotif
from sparling_genomics.export.naming import (
    benjamini_hochberg,
    load_jaspar_collection,
    name_motifs,
    tomtom_tsv,
)


def test_benjamini_hochberg_hand_case():
    p = np.array([0.01, 0.04, 0.03, 0.2])
    # sorted 0.01 0.03 0.04 0.2 -> x4/rank: 0.04 0.06 0.0533 0.2 -> monotone: .04 .0533 .0533 .2
    assert np.allclose(benjamini_hochberg(p), [0.04, 0.05333333, 0.05333333, 0.2])


@pytest.fixture(scope="module")
def plants():
    return load_jaspar_collection("JASPAR2024", "CORE", "plants")


def test_known_motifs_are_named_and_shuffled_copies_are_not(plants):
    rng = np.random.default_rng(0)
    wanted = ["MA1350.1", "MA1313.2", "MA1285.2"]
    by_id = {m.matrix_id: m for m in plants}
    queries = []
    for i, mid in enumerate(wanted):
        noisy = by_id[mid].probs * 0.9 + 0.1 * rng.dirichlet(np.ones(4), size=len(by_id[mid].probs))
        queries.append(ExportedMotif(f"q{i}", noisy, nsites=50))
    # A random motif (informative columns in no known arrangement) must stay unnamed.
    queries.append(ExportedMotif("random", rng.dirichlet(np.ones(4) * 0.3, size=10), nsites=50))
    result = name_motifs(queries, plants)
    for i, mid in enumerate(wanted):
        best = result["best"][f"q{i}"]
        assert 0 < best.p_value <= 1 and best.q_value < 0.01
        assert result["named"][f"q{i}"] is not None
        # The source motif is a significant match (close relatives, e.g. the WRKY W-boxes,
        # can rank first: they are near-identical).
        assert any(m.query == f"q{i}" and m.target_id == mid and m.q_value < 0.01
                   for m in result["matches"])  # fmt: skip
    assert result["named"]["random"] is None
    assert result["control"]["false_matches"] == 0
    table = tomtom_tsv(result).splitlines()
    assert table[0].split("\t")[:7] == ["Query_ID", "Target_ID", "Target_name", "Optimal_offset",
                                        "p-value", "E-value", "q-value"]  # fmt: skip
    assert sum(line.split("\t")[-2] == "1" for line in table[1:]) == len(queries)
