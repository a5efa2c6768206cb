"""MotifModel1D's strands: the merged logits and which strand each position read."""

import numpy as np
import pytest
import torch

from sparling_genomics.genome.sequence import one_hot
from sparling_genomics.models.motif import MotifModel1D
from sparling_genomics.models.sparling import SparlingModel, halo_of
from sparling_genomics.sparsity.layer import SpatialSparsity


def _dna(seed: int, shape: tuple[int, int]) -> torch.Tensor:
    codes = np.random.default_rng(seed).integers(0, 4, shape).astype(np.uint8)
    return torch.from_numpy(one_hot(codes))


@pytest.mark.parametrize("block_size", [1, 2])
def test_forward_with_strand_names_the_strand_of_the_merged_logits(block_size):
    torch.manual_seed(0)
    g = MotifModel1D(4, hidden=8, first_kernel=9, residual_units=1, block_size=block_size).eval()
    x = _dna(0, (3, 200))
    z, strand = g.forward_with_strand(x)
    assert torch.equal(z, g(x))
    assert torch.equal(strand.to(torch.int8), g.strand_of_max(x))
    assert strand.shape == (3, 4 // block_size, 200) and strand.any() and not strand.all()
    one = MotifModel1D(4, hidden=8, first_kernel=9, residual_units=1, reverse_complement=False)
    assert one.forward_with_strand(x)[1] is None


def test_sparling_model_hands_the_strands_to_the_strand_rule():
    torch.manual_seed(1)
    g = MotifModel1D(2, hidden=8, first_kernel=9, residual_units=1).eval()
    sparse = SpatialSparsity(2, 0.005, peak_window=2, peak_below=0.01, strand_window=6).eval()
    sparse.thresholds.fill_(-10.0)  # every peak is a site
    model = SparlingModel(g, sparse, torch.nn.Identity()).eval()
    x = _dna(1, (4, 300))
    with torch.no_grad():
        z, strand = g.forward_with_strand(x)
        assert torch.equal(model.motifs(x), sparse(z, strand))
        assert (sparse(z) > 0).sum() > (sparse(z, strand) > 0).sum()  # the rule drops some
    sparse.strand_window = 0
    assert halo_of(model) + 6 == halo_of(SparlingModel(g, SpatialSparsity(
        2, 0.005, peak_window=2, peak_below=0.01, strand_window=6), torch.nn.Identity()))


def test_the_strand_rule_is_refused_for_a_model_that_reads_one_strand():
    from sparling_genomics.errors import ConfigError

    g = MotifModel1D(2, hidden=8, first_kernel=9, residual_units=1, reverse_complement=False)
    with pytest.raises(ConfigError, match="reads both strands"):
        SparlingModel(g, SpatialSparsity(2, 0.01, strand_window=4), torch.nn.Identity())
