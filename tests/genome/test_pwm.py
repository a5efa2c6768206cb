import numpy as np
import pytest

from sparling_genomics.genome.pwm import (
    consensus,
    has_dinucleotide,
    information_content,
    probability_matrix,
    trim,
)
from sparling_genomics.genome.sequence import encode, one_hot


def test_pwm_information_and_consensus():
    seqs = ["GTAAG"] * 9 + ["GCAAG"]
    windows = np.stack([one_hot(encode(s)) for s in seqs])
    probs = probability_matrix(windows, pseudocount=0.0)
    assert np.allclose(probs.sum(1), 1) and probs[1, 3] == 0.9
    ic = information_content(probs)
    assert abs(ic[0] - 2.0) < 1e-6 and 1.5 < ic[1] < 1.6  # 2 - H(0.9, 0.1) = 1.53
    assert consensus(probs) == "GTAAG"
    assert has_dinucleotide(probs, "GT") and not has_dinucleotide(probs, "GT", min_bits=1.6)
    uniform = np.full((3, 4), 0.25)
    assert consensus(uniform) == "nnn" and trim(uniform) == (0, 3)
    padded = np.vstack([uniform, probs, uniform])
    assert trim(padded) == (3, 8)


def test_trim_against_the_genome_background_drops_composition_only_flanks():
    at_rich = np.array([0.32, 0.18, 0.18, 0.32])
    flank = np.tile([0.42, 0.08, 0.08, 0.42], (3, 1))  # A/T-rich, like the genome around it
    core = np.eye(4)[[2, 3]] * 0.97 + 0.0075  # "GT"
    probs = np.vstack([flank, core, flank])
    assert trim(probs) == (0, 8)  # against uniform, the A/T flanks carry 0.37 bits each
    assert trim(probs, background=at_rich) == (3, 5)


def test_aligned_kl_of_a_pwm_to_itself_is_zero_and_to_another_is_positive():
    from sparling_genomics.genome.pwm import aligned_kl

    rng = np.random.default_rng(0)
    wide = rng.dirichlet(np.ones(4), 31)
    assert aligned_kl(wide, wide) == (pytest.approx(0.0, abs=1e-12), 0)
    # A trimmed piece is found at its own offset, either way round.
    assert aligned_kl(wide[10:17], wide) == (pytest.approx(0.0, abs=1e-12), 10)
    assert aligned_kl(wide, wide[10:17]) == (pytest.approx(0.0, abs=1e-12), -10)
    other = rng.dirichlet(np.ones(4), 7)
    assert aligned_kl(other, wide)[0] > 0.05
