"""Variant effects: the SpliceAI coordinate rule, and deltas worked out by hand for a 1-bp
insertion and a 3-bp deletion on both strands, with a toy site model whose sites are known."""

import numpy as np
import pytest
import torch
from torch import nn

from sparling_genomics.evaluate.variant_effects import (
    Allele,
    alt_to_ref,
    motif_changes,
    score_alleles,
)
from sparling_genomics.genome.sequence import encode

CLASSES = ["none", "acceptor", "donor"]
CONTEXT = 20


class _G(nn.Module):
    receptive_field = 3


class ToySites(nn.Module):
    """Donor at a G followed by T, acceptor at a G preceded by A (transcript orientation):
    probability ~1 there and ~0 elsewhere; crops ``CONTEXT // 2`` per side like the head."""

    def __init__(self) -> None:
        super().__init__()
        self.g = _G()
        self.sparse = None
        self.core = None
        self.anchor = nn.Parameter(torch.zeros(1))

    def forward(self, x):
        a, g, t = x[:, 0], x[:, 2], x[:, 3]
        nxt_t = torch.nn.functional.pad(t[:, 1:], (0, 1))
        prev_a = torch.nn.functional.pad(a[:, :-1], (1, 0))
        donor = 20 * g * nxt_t - 10
        acceptor = 20 * g * prev_a - 10
        logits = torch.stack([torch.zeros_like(donor), acceptor, donor], 1)
        half = CONTEXT // 2
        return {"logits": logits[..., half:-half]}


def _genome(seq: str):
    codes = encode(seq)

    def fetch(seqid, start, end):
        out = np.full(end - start, 4, np.uint8)
        lo, hi = max(start, 0), min(end, len(codes))
        if hi > lo:
            out[lo - start : hi - start] = codes[lo:hi]
        return out

    return fetch


def _score(seq, allele, distance=10):
    return score_alleles(ToySites(), _genome(seq), [allele], CLASSES, context=CONTEXT,
                         distance=distance)[0].deltas  # fmt: skip


FILL = "C" * 40  # no G: no site anywhere but where a case puts one


def test_alt_to_ref_follows_spliceai_for_snvs_insertions_and_deletions():
    d = 3
    values = np.arange(1, 12, dtype=float)[None]  # alt positions POS-3 .. POS+7
    assert alt_to_ref(values, 1, 1, d).tolist() == [[1, 2, 3, 4, 5, 6, 7]]
    # 1 REF base, 3 ALT bases: POS takes the max over the ALT bases, the rest shift by 2.
    assert alt_to_ref(values, 1, 3, d).tolist() == [[1, 2, 3, 6, 7, 8, 9]]
    # 3-bp deletion (REF 4 bases, ALT 1): POS maps to POS, the 3 deleted bases score 0.
    assert alt_to_ref(values, 4, 1, d).tolist() == [[1, 2, 3, 4, 0, 0, 0]]
    assert alt_to_ref(values, 2, 1, d).tolist() == [[1, 2, 3, 4, 0, 5, 6]]


def test_one_bp_insertion_destroys_a_plus_strand_donor_at_pos():
    seq = FILL + "GT" + FILL  # the donor G at 0-based 40
    d = _score(seq, Allele("s", 40, "G", "GA", 1))  # G -> GA splits G|T
    gain, loss, gain_at, loss_at = d["donor"]
    assert loss == pytest.approx(1.0, abs=1e-3) and loss_at == 0
    assert gain < 1e-3
    assert d["acceptor"][0] < 1e-3 and d["acceptor"][1] < 1e-3


def test_three_bp_deletion_creates_a_plus_strand_acceptor_four_bases_downstream():
    seq = FILL + "ACCCG" + FILL  # deleting CCC after the A (at 40) puts A next to G (at 44)
    d = _score(seq, Allele("s", 40, "ACCC", "A", 1))
    gain, loss, gain_at, _ = d["acceptor"]
    assert gain == pytest.approx(1.0, abs=1e-3) and gain_at == 4  # the G, in REF coordinates
    assert loss < 1e-3 and d["donor"][0] < 1e-3


def test_one_bp_insertion_destroys_a_minus_strand_donor():
    # Minus strand: "AC" on plus reads GT; the donor G is the plus C at 41.
    seq = FILL + "AC" + FILL
    d = _score(seq, Allele("s", 40, "A", "AT", -1))  # plus A|C -> ATC: minus reads G A T
    gain, loss, _, loss_at = d["donor"]
    assert loss == pytest.approx(1.0, abs=1e-3) and loss_at == 1
    # The same allele scored on the plus strand sees no site at all.
    assert max(_score(seq, Allele("s", 40, "A", "AT", 1))["donor"][:2]) < 1e-3


def test_three_bp_deletion_creates_a_minus_strand_acceptor_at_pos():
    # Plus C GGG T: deleting GGG makes plus "CT", which the minus strand reads AG; its G is
    # the plus C at POS.
    seq = FILL + "CGGGT" + FILL
    d = _score(seq, Allele("s", 40, "CGGG", "C", -1))
    gain, _, gain_at, _ = d["acceptor"]
    assert gain == pytest.approx(1.0, abs=1e-3) and gain_at == 0


def test_snv_far_from_any_site_changes_nothing():
    seq = FILL + "GT" + FILL
    d = _score(seq, Allele("s", 10, "C", "A", 1), distance=5)
    assert all(max(v[:2]) < 1e-3 for v in d.values())


def test_motif_changes_map_sites_through_an_insertion():
    ref = np.zeros((2, 30))
    ref[0, 12] = 1.0  # channel 0 two bases after POS (10)
    ref[1, 8] = 2.0  # channel 1 two bases before
    alt = np.zeros((2, 32))
    alt[0, 14] = 1.0  # the same site, shifted by the 2-bp insertion
    alt[1, 11] = 0.5  # a site inside the inserted bases
    changes = motif_changes(ref, alt, r=1, a=3, centre=10, reach=6)
    got = [(c.channel, c.offset, c.effect) for c in changes]
    assert got == [(1, -2, "destroyed"), (1, 0, "created")]
