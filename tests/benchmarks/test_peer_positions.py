"""The peers' coordinates: a site at a known genome position lands on our label, both strands."""

import numpy as np
import pytest
import torch

from benchmarks.peer_positions import (
    class_columns,
    labelled_stretches,
    peer_site_scores,
    window_runs,
)
from sparling_genomics.errors import InputError
from sparling_genomics.evaluate.site_metrics import site_metrics

N_CODE = 4
T, C, G = 3, 1, 2


class MarkNet(torch.nn.Module):
    """A peer whose donor probability is 1 where the oriented base at the centre of its
    context is G: a G on the plus strand, a C on the minus strand."""

    context = 6

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        g = x[:, G, 3:-3]
        return torch.stack([1 - g, torch.zeros_like(g), g], dim=1)  # none, acceptor, donor


def genome(length=1000, plus_g=(123, 977), minus_c=(456,)):
    codes = np.full(length, T, dtype=np.uint8)
    codes[list(plus_g)] = G
    codes[list(minus_c)] = C

    def fetch(seqid, start, end):
        out = np.full(end - start, N_CODE, dtype=np.uint8)
        lo, hi = max(start, 0), min(end, length)
        out[lo - start : hi - start] = codes[lo:hi]
        return out

    return fetch


@pytest.mark.parametrize("chunk", [5000, 64, 7])
def test_sites_on_both_strands_land_on_their_labels(chunk):
    window = 100
    seqids = ["chr1"] * 4
    strands = np.array([1, 1, -1, 1])
    starts = np.array([100, 200, 400, 950])  # two touching windows, one minus, one past the end
    labels = np.zeros((4, window), dtype=np.int8)
    labels[3, 50:] = -1  # beyond the sequence: not labelled
    donor = 1  # our order: none, donor, acceptor
    labels[0, 123 - 100] = donor  # plus: index = position - start
    labels[2, 400 + window - 1 - 456] = donor  # minus: index = start + window - 1 - position
    labels[3, 977 - 950] = donor
    scores, kept = peer_site_scores(MarkNet(), genome(), seqids, strands, starts, labels,
                                    ["none", "donor", "acceptor"], chunk=chunk)  # fmt: skip
    assert len(kept) == 4 * window - 50
    assert np.array_equal(scores[:, 1] == 1, kept == donor)  # exactly the labelled sites
    assert not scores[:, 2].any()
    metrics = site_metrics(scores, kept, ["none", "donor", "acceptor"])
    assert metrics["donor"]["topk"] == 1.0


@pytest.mark.parametrize("strand", [1, -1])
def test_windows_far_apart_score_the_same_in_one_run_or_two(strand):
    labels = np.zeros((2, 100), dtype=np.int8)
    args = (MarkNet(), genome(), ["chr1", "chr1"], np.array([strand, strand]),
            np.array([100, 900]), labels, ["none", "donor", "acceptor"])  # fmt: skip
    apart, _ = peer_site_scores(*args, join=0)
    together, _ = peer_site_scores(*args, join=1000)
    assert np.array_equal(apart, together) and apart[:, 1].sum() == (2 if strand == 1 else 0)


def test_a_site_on_the_other_strand_is_not_seen():
    labels = np.zeros((1, 100), dtype=np.int8)
    labels[0, 456 - 400] = 1  # the C at 456 is a G only on the minus strand
    scores, _ = peer_site_scores(MarkNet(), genome(), ["chr1"], np.array([1]), np.array([400]),
                                 labels, ["none", "donor", "acceptor"])  # fmt: skip
    assert not scores[:, 1].any()


def test_touching_windows_share_a_run_and_strands_do_not():
    runs = window_runs(["a", "a", "a", "b"], np.array([1, 1, -1, 1]),
                       np.array([0, 100, 100, 0]), 100)  # fmt: skip
    assert [(r.seqid, r.strand, r.lo, r.hi, len(r.windows)) for r in runs] == [
        ("a", -1, 100, 200, 1), ("a", 1, 0, 200, 2), ("b", 1, 0, 100, 1)]
    apart = window_runs(["a", "a"], np.array([1, 1]), np.array([0, 150]), 100, join=50)
    assert [(r.lo, r.hi, len(r.windows)) for r in apart] == [(0, 250, 2)]
    assert len(window_runs(["a", "a"], np.array([1, 1]), np.array([0, 151]), 100, join=50)) == 2


def test_a_class_the_peers_lack_is_refused():
    assert class_columns(["none", "donor", "acceptor"]) == [0, 2, 1]
    with pytest.raises(InputError, match="tss"):
        class_columns(["none", "donor", "tss"])


class SeesFlankNet(torch.nn.Module):
    """Donor probability 1 at every output whose context's last base is a real base (not N):
    it tells genome flanks from N padding."""

    context = 6

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        real = x[:, :, 6:].sum(dim=1)
        return torch.stack([1 - real, torch.zeros_like(real), real], dim=1)


@pytest.mark.parametrize("strand", [1, -1])
def test_transcript_context_reads_each_stretch_alone_with_n_beyond(strand):
    labels = np.zeros((3, 100), dtype=np.int8)
    labels[1, 60:] = -1  # the middle window's end is not labelled: two stretches
    seqids, strands = ["chr1"] * 3, np.array([strand] * 3)
    starts = np.array([100, 200, 300])
    args = (genome(), seqids, strands, starts, labels, ["none", "donor", "acceptor"])
    scores, kept = peer_site_scores(MarkNet(), *args, context="transcript")
    assert len(kept) == 300 - 40 and (kept == 0).all()
    # The same sites as with the genome around them: MarkNet reads the centre base only.
    genome_scores, _ = peer_site_scores(MarkNet(), *args)
    assert np.array_equal(np.sort(scores[:, 1]), np.sort(genome_scores[:, 1]))
    # The last 3 outputs of each stretch (oriented) see N beyond it; with the genome, none do.
    flank, _ = peer_site_scores(SeesFlankNet(), *args, context="transcript")
    assert flank[:, 1].sum() == len(kept) - 2 * 3
    genome_flank, _ = peer_site_scores(SeesFlankNet(), *args)
    assert genome_flank[:, 1].sum() == len(kept)


def test_labelled_stretches_are_in_transcript_orientation():
    labels = np.full((2, 10), -1, dtype=np.int8)
    labels[0, 2:10] = np.arange(8) % 3
    labels[1, 0:3] = 2
    stretches = labelled_stretches(["a", "a"], np.array([-1, -1]), np.array([10, 0]), labels)
    assert [(r.lo, r.hi) for r, _ in stretches] == [(7, 18)]  # minus: window 1 lies after
    # Transcript orientation on minus: window 0 (the higher positions) first.
    assert list(stretches[0][1]) == [*labels[0, 2:10], *labels[1, 0:3]]
