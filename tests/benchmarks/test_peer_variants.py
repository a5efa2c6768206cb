"""SpliceAI's delta rule with a peer network: gains, losses, strands, indels."""

import numpy as np
import torch

from benchmarks.peer_variants import align_alt, allele_windows, peer_variant_scores

T, C, G = 3, 1, 2


class MarkNet(torch.nn.Module):
    """Donor probability 1 where the oriented base at the centre of its context is G."""

    context = 10

    def forward(self, x):
        g = x[:, G, 5:-5]
        return torch.stack([1 - g, torch.zeros_like(g), g], dim=1)


def fetcher(codes):
    def fetch(seqid, start, end):
        out = np.full(end - start, 4, dtype=np.uint8)
        lo, hi = max(start, 0), min(end, len(codes))
        out[lo - start : hi - start] = codes[lo:hi]
        return out
    return fetch


def test_gain_and_loss_on_each_strand():
    codes = np.full(400, T, dtype=np.uint8)
    codes[200] = G  # a donor for the plus strand
    codes[300] = C  # a donor for the minus strand
    scores = peer_variant_scores(MarkNet(), fetcher(codes), [
        ("s", 100, "T", "G", 1),   # creates a plus donor
        ("s", 200, "G", "A", 1),   # destroys it
        ("s", 200, "G", "A", -1),  # the minus strand never saw it
        ("s", 300, "C", "T", -1),  # destroys the minus donor
        ("s", 120, "T", "C", -1),  # creates a minus donor
        ("s", 195, "TTTTTG", "T", 1),  # a deletion removing the G 20 nt away at most
        ("s", 150, "TTTTT", "CC", 1),  # REF and ALT both long and unequal: not placed
    ], distance=10, batch=3)  # fmt: skip
    ds = {i: s for i, s in enumerate(scores)}
    assert ds[0] == (0.0, 0.0, 1.0, 0.0)
    assert ds[1] == (0.0, 0.0, 0.0, 1.0)
    assert ds[2] == (0.0, 0.0, 0.0, 0.0)
    assert ds[3] == (0.0, 0.0, 0.0, 1.0)
    assert ds[4] == (0.0, 0.0, 1.0, 0.0)
    assert ds[5][3] == 1.0
    assert ds[6] is None


def test_indels_are_aligned_as_spliceai_does():
    distance, cov = 2, 5
    y = np.arange(4 * 3, dtype=float).reshape(4, 3)  # a 1-base-longer REF's deletion output
    aligned = align_alt(y, 2, 1, distance)
    assert aligned.shape == (cov, 3)
    assert (aligned[cov // 2 + 1] == 0).all()
    y = np.arange(7 * 3, dtype=float).reshape(7, 3)  # an insertion of 3 bases (ALT 3 long)
    aligned = align_alt(y, 1, 3, distance)
    assert aligned.shape == (cov, 3)
    assert (aligned[cov // 2] == y[2:5].max(axis=0)).all()


class SeesFlankNet(torch.nn.Module):
    """Donor probability = the share of real (not N) bases in its context."""

    context = 10

    def forward(self, x):
        windows = x.sum(dim=1).unfold(1, 11, 1).mean(dim=2)
        return torch.stack([1 - windows, torch.zeros_like(windows), windows], dim=1)


def test_transcript_bounds_put_n_beyond_the_transcript_and_skip_alleles_outside():
    from benchmarks.peer_comparison import transcript_bounds
    from benchmarks.peer_positions import Run

    codes = np.full(400, T, dtype=np.uint8)
    stretches = [(Run("s", 1, 100, 200), None), (Run("s", -1, 150, 300), None)]
    alleles = [("s", 110, "T", "G", 1), ("s", 250, "T", "G", 1), ("s", 250, "T", "G", -1),
               ("s", 199, "T", "G", 1), ("s", 200, "T", "G", 1)]  # fmt: skip
    bounds = transcript_bounds(alleles, stretches)
    assert bounds == [(100, 200), None, (150, 300), (100, 200), None]
    # An allele 10 bases inside its transcript: its window reaches 15 bases beyond the start.
    ref_genome, _ = allele_windows(fetcher(codes), "s", 110, "T", "G", 1, 10, 10)
    ref_n, _ = allele_windows(fetcher(codes), "s", 110, "T", "G", 1, 10, 10, bounds=(100, 200))
    assert (ref_genome < 4).all() and (ref_n[:5] == 4).all() and (ref_n[5:] < 4).all()
    scores = peer_variant_scores(SeesFlankNet(), fetcher(codes), alleles, distance=10,
                                 bounds=bounds)  # fmt: skip
    assert scores[1] is None and scores[4] is None and scores[0] == (0.0, 0.0, 0.0, 0.0)
