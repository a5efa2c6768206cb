import numpy as np
import pytest
import torch
from torch import nn

from sparling_genomics.export.motifs import collect_sites, merge_sites, site_windows
from sparling_genomics.genome.sequence import encode, one_hot


def test_site_windows_are_centred_and_zero_padded():
    x = one_hot(encode("ACGTACGTAC"))[None]
    w = site_windows(x, np.array([0, 5]), 5)
    assert w.shape == (2, 4, 5)
    assert w[0, :, :2].sum() == 0  # beyond the left end
    assert "".join("ACGT"[i] for i in w[1].argmax(0)) == "TACGT"  # positions 3..7


class _Fixed(nn.Module):
    """A 'model' whose motif layer is a given tensor."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def motifs(self, x):
        return self.m


def test_collect_sites_respects_offset_and_mask():
    m = torch.zeros(2, 2, 10)
    m[0, 0, 1] = 1.0  # inside the left context: not counted
    m[0, 0, 4] = 2.0
    m[1, 1, 6] = 3.0  # masked out
    m[1, 0, 7] = 0.5
    valid = np.ones((2, 6), dtype=bool)
    valid[1, 4] = False  # input position 2 + 4 = 6
    sites = collect_sites(_Fixed(m), torch.zeros(2, 4, 10), offset=2, valid=valid)
    assert sites[0].window == [0, 1] and sites[0].position == [4, 7]
    assert sites[0].score == pytest.approx([2.0, 0.5]) and len(sites[1]) == 0
    both = merge_sites(
        [
            sites,
            collect_sites(_Fixed(m), torch.zeros(2, 4, 10), offset=2, valid=valid, first_window=2),
        ]
    )
    assert both[0].window == [0, 1, 2, 3]
