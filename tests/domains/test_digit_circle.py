"""DigitCircle data: deterministic from a seed, and the truth boxes hold what is drawn."""

import math

import numpy as np
import pytest

from sparling_genomics.domains.digit_circle import (
    DigitCircleSpec,
    digit_glyphs,
    generate_batch,
    generate_sample,
)
from sparling_genomics.errors import ConfigError


def test_same_seed_same_batch_other_seed_other_batch():
    a, b = generate_batch(3, 7, 4), generate_batch(3, 7, 4)
    c = generate_batch(3, 8, 4)
    for x, y in zip(a, b):
        assert np.array_equal(x.image, y.image) and x.digits == y.digits and x.boxes == y.boxes
    assert any(not np.array_equal(x.image, z.image) for x, z in zip(a, c))


def test_glyphs_are_distinct_and_twelve_pixels_tall():
    glyphs = digit_glyphs()
    assert all(g.shape[0] == 12 and 4 <= g.shape[1] <= 10 for g in glyphs)
    assert all(g.any(0).all() and g.any(1).all() for g in glyphs)  # cropped to the ink
    flat = {g.tobytes() + bytes(g.shape) for g in glyphs}
    assert len(flat) == 10


@pytest.mark.parametrize("seed", range(5))
def test_boxes_hold_their_glyph_and_the_background_is_noise(seed):
    spec = DigitCircleSpec(noise_after=0.0)
    rng = np.random.default_rng(seed)
    glyphs = digit_glyphs()
    outside_ink, outside = 0, 0
    for _ in range(20):
        s = generate_sample(rng, spec)
        assert 3 <= len(s.digits) <= 6 and len(set(s.digits)) == len(s.digits)
        assert sorted(s.digits) == sorted(d for d, *_ in s.boxes)
        mask = np.zeros_like(s.image, bool)
        for digit, r0, r1, c0, c1 in s.boxes:
            assert 0 <= r0 < r1 <= 100 and 0 <= c0 < c1 <= 100
            assert np.array_equal(s.image[r0:r1, c0:c1], glyphs[digit])
            assert not mask[r0:r1, c0:c1].any(), "boxes overlap"
            mask[r0:r1, c0:c1] = True
        outside_ink += int(s.image[~mask].sum())
        outside += int((~mask).sum())
    assert abs(outside_ink / outside - 0.125) < 0.01


def test_output_is_counter_clockwise_from_the_smallest_digit():
    rng = np.random.default_rng(0)
    for _ in range(50):
        s = generate_sample(rng)
        centre = 49.5
        angle = {}
        for digit, r0, r1, c0, c1 in s.boxes:
            y, x = (r0 + r1 - 1) / 2, (c0 + c1 - 1) / 2
            angle[digit] = math.atan2(centre - y, x - centre) % (2 * math.pi)  # y up
        ccw = sorted(angle, key=angle.get)
        start = ccw.index(min(ccw))
        assert s.digits == ccw[start:] + ccw[:start]


def test_noise_after_flips_pixels_everywhere():
    quiet = generate_sample(np.random.default_rng(1), DigitCircleSpec(noise_after=0.0))
    noisy = generate_sample(np.random.default_rng(1), DigitCircleSpec())
    flipped = (quiet.image != noisy.image).mean()
    assert 0.03 < flipped < 0.07 and quiet.boxes == noisy.boxes


def test_impossible_spec_is_refused():
    with pytest.raises(ConfigError, match="do not fit"):
        DigitCircleSpec(max_radius=45).check()
    with pytest.raises(ConfigError, match="digits per image"):
        DigitCircleSpec(min_digits=7, max_digits=6).check()


def test_canonical_ring_rotates_to_the_smallest_and_drops_seam_repeats():
    from sparling_genomics.domains.digit_circle import canonical_ring

    assert canonical_ring([7, 2, 9, 4]) == [2, 9, 4, 7]
    assert canonical_ring([4, 7, 2, 9, 4]) == [2, 9, 4, 7]  # 4 read at both ends of the sweep
    assert canonical_ring([]) == []
