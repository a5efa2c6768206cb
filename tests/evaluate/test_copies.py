"""Near-copy channels: PWM similarity over offsets and strands, site overlap, groups."""

import numpy as np

from sparling_genomics.evaluate.copies import near_copies, pwm_similarity, reverse_complement_pwm


def _pwm(consensus, strength=0.85):
    rows = []
    for base in consensus:
        row = np.full(4, (1 - strength) / 3)
        row["ACGT".index(base)] = strength
        rows.append(row)
    return np.array(rows)


GT = _pwm("AGGTAAGT")
AG = _pwm("TTTGCAGG")


def test_copies_shifted_and_reverse_complement_copies_are_similar_distinct_motifs_are_not():
    assert pwm_similarity(GT, GT) > 0.99
    assert pwm_similarity(GT, _pwm("CAGGTAAGTC")) > 0.99  # the same motif, wider
    assert pwm_similarity(GT, reverse_complement_pwm(GT)) > 0.99
    assert pwm_similarity(GT, AG) < 0.5


def test_near_copies_count_channels_beyond_the_first_of_each_group():
    pwms = {0: GT, 1: _pwm("CAGGTAAGTC"), 2: AG, 3: reverse_complement_pwm(GT), 4: _pwm("ACACGTGA")}
    result = near_copies(pwms)
    assert result["groups"] == [[0, 1, 3]] and result["copies"] == 2
    assert result["copy_fraction"] == 2 / 5


def test_channels_whose_sites_coincide_are_copies_whatever_their_pwms():
    pwms = {0: GT, 1: AG, 2: _pwm("ACACGTGA")}
    sites = {
        0: (np.array([0, 0, 1]), np.array([10, 50, 7])),
        1: (np.array([0, 0, 1]), np.array([12, 49, 30])),  # two of three within 2 nt
        2: (np.array([0, 1]), np.array([10, 7])),  # other windows' positions do not count
    }
    sites[2] = (np.array([1, 0]), np.array([10, 90]))
    result = near_copies(pwms, sites)
    assert result["groups"] == [[0, 1]] and result["pairs"][0]["overlap"] > 0.6
    assert near_copies(pwms, sites, overlap=0.9)["copies"] == 0
