import numpy as np
import torch

from sparling_genomics.genome.sequence import one_hot
from sparling_genomics.tasks.planted_oracle import oracle_calls, oracle_exact_match
from sparling_genomics.tasks.registry import task_class
from sparling_genomics.train.run_config import resolve_config

ARF4, IDD11 = "MA1697.2", "MA2104.1"  # ACGACAAG inside AAAACGACAAAA


def _task(motifs=None):
    overrides = [{"data": {"motifs": motifs}}] if motifs else []
    return task_class("planted")(resolve_config("planted", "tiny", overrides=overrides), seed=0)


def _x(*sequences: str):
    codes = np.array([["ACGT".index(b) for b in s] for s in sequences], dtype=np.uint8)
    return torch.from_numpy(one_hot(codes))


def test_oracle_reads_the_default_set_almost_perfectly():
    task = _task()
    assert oracle_exact_match(task, "val") >= 0.97


def test_the_longer_motif_wins_the_site_that_holds_the_shorter_one():
    task = _task([ARF4, IDD11])
    background = "C" * 40
    assert oracle_calls(task, _x(background + "AAAACGACAAAA" + background)) == [[1]]
    assert oracle_calls(task, _x(background + "CACGACAAGC" + background)) == [[0]]


def test_calls_are_read_in_order_on_both_strands_and_too_close_ones_dropped():
    task = _task([ARF4, IDD11])
    rc_idd11 = "TTTTGTCGTTTT"
    spaced = "C" * 20 + rc_idd11 + "C" * 20 + "ACGACAAG" + "C" * 20
    assert oracle_calls(task, _x(spaced)) == [[1, 0]]
    # An ARF4 site 2 bases after the IDD11 site: closer than min_gap, the weaker call goes.
    close = "C" * 20 + "AAAACGACAAAA" + "CC" + "ACGACAAG" + "C" * 30
    assert task.min_gap > 2
    assert oracle_calls(task, _x(close)) == [[1]]


def test_oracle_is_below_perfect_where_motifs_share_kmers():
    # Draw 3's motifs: ARF4, IDD11, NAC68 and TINY share CGACA / ACAAG.
    task = _task(["MA1220.2", ARF4, "MA2051.2", IDD11])
    assert 0.5 < oracle_exact_match(task, "val") < 0.995
