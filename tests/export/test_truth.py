"""Recovery judged against the planted PWMs themselves: copies on either strand count, an
unrelated motif is spurious, and no exported motif recovers nothing."""

import numpy as np

from sparling_genomics.export.truth import truth_recovery


def _pwm(consensus: str, strength: float = 0.91) -> np.ndarray:
    rest = (1 - strength) / 3
    probs = np.full((len(consensus), 4), rest)
    for i, base in enumerate(consensus):
        probs[i, "ACGT".index(base)] = strength
    return probs


def _revcomp(probs: np.ndarray) -> np.ndarray:
    return probs[::-1, ::-1].copy()


def test_truth_recovery_counts_copies_on_either_strand_and_flags_an_unrelated_motif():
    planted = {"P1": _pwm("TGACGTCATG"), "P2": _pwm("CCAATTGGAAC"), "P3": _pwm("GGGCTATAAA")}
    exported = {
        "e0": _pwm("TGACGTCATG", 0.8),  # P1, weaker
        "e1": _revcomp(_pwm("CCAATTGGAAC")),  # P2 on the other strand
        "e2": _pwm("ACACACACAC"),  # nothing planted
    }
    found = truth_recovery(exported, planted)
    assert found["recovered"] == ["P1", "P2"] and found["recovered_count"] == 2
    assert found["by"] == {"P1": ["e0"], "P2": ["e1"]}
    assert found["spurious"] == 1 and found["exported"] == 3
    assert found["best_q"]["P3"] >= 0.01 > found["best_q"]["P1"]
    assert found["control_false_matches"] == 0


def test_truth_recovery_without_exported_motifs_recovers_nothing():
    found = truth_recovery({}, {"P1": _pwm("TGACGTCATG")})
    assert found["recovered_count"] == 0 and found["spurious"] == 0
