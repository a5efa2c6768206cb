"""The planted-recovery check: best match at q < 0.01, shuffled controls below q 0.05."""

from sparling_genomics.evaluate.motif_recovery import planted_recovery


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
