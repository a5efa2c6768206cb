import numpy as np

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
