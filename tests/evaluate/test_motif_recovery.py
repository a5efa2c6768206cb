"""The planted-recovery checks: best JASPAR match at q < 0.01 with shuffled controls below
q 0.05, and recovery judged against the planted PWMs themselves."""

import numpy as np

from sparling_genomics.evaluate.motif_recovery import planted_recovery, truth_recovery


def _motif(mid, channel, target, q):
    return {"id": mid, "channel": channel,
            "best_match": {"target_id": target, "target_name": target, "q_value": q}}  # fmt: skip


def test_every_planted_motif_named_and_clean_control_passes():
    summary = {
        "motifs": [_motif("m0", 0, "MA1", 1e-9), _motif("m1", 1, "MA2", 1e-3)],
        "shuffled_control": {"best_q": [0.4, 0.9]},
    }
    result = planted_recovery(summary, ["MA1", "MA2"], channel_to_symbol={"0": "MA1", "1": "MA2"})
    assert result["passed"] and result["recovered"] == 2
    assert result["per_motif"]["MA1"]["by"] == ["m0"]


def test_near_duplicate_winner_weak_q_and_a_named_control_each_fail():
    summary = {
        "motifs": [_motif("m0", 0, "MA9", 1e-9), _motif("m1", 1, "MA2", 0.02)],
        "shuffled_control": {"best_q": [0.03, 0.9]},
    }
    result = planted_recovery(summary, ["MA1", "MA2"], channel_to_symbol={"0": "MA1"})
    assert not result["passed"] and result["recovered"] == 0
    assert result["per_motif"]["MA1"]["mapped_best_match"] == "MA9"  # what won instead
    assert result["control_false_matches"] == 1


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
