import numpy as np
import torch
from hypothesis import given
from hypothesis import strategies as st

from sparling_genomics.genome.sequence import (
    decode,
    encode,
    one_hot,
    reverse_complement_codes,
    reverse_complement_one_hot,
)

dna = st.text(alphabet="ACGTNacgtn", max_size=60)


@given(dna)
def test_reverse_complement_twice_is_identity(seq):
    codes = encode(seq)
    assert np.array_equal(reverse_complement_codes(reverse_complement_codes(codes)), codes)


@given(dna)
def test_encode_decode_round_trip_upper_cases(seq):
    assert decode(encode(seq)) == seq.upper()


@given(dna)
def test_one_hot_rc_matches_code_rc(seq):
    codes = encode(seq)
    x = torch.from_numpy(one_hot(codes))[None]
    via_tensor = reverse_complement_one_hot(x)[0].numpy()
    via_codes = one_hot(reverse_complement_codes(codes))
    assert np.array_equal(via_tensor, via_codes)


def test_worked_example():
    assert decode(reverse_complement_codes(encode("AACGTN"))) == "NACGTT"
    x = one_hot(encode("ANg"))
    assert x.tolist() == [[1, 0, 0], [0, 0, 0], [0, 0, 1], [0, 0, 0]]
