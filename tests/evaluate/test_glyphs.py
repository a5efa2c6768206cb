import numpy as np

from sparling_genomics.evaluate.glyphs import GlyphAccumulator, glyph_image


def _cross(image: np.ndarray, row: int, col: int) -> None:
    image[row - 2 : row + 3, col] = 1.0
    image[row, col - 2 : col + 3] = 1.0


def test_a_channel_s_glyph_is_the_mean_input_around_where_it_fires():
    """Channel 0 fires on crosses, channel 1 on squares, on a stride-2 map: each mean patch
    is its shape, centred; channel 2 never fires and has no image."""
    rng = np.random.default_rng(0)
    x = rng.random((4, 1, 40, 40)).astype(np.float32) * 0.2  # faint noise
    motifs = np.zeros((4, 3, 20, 20), dtype=np.float32)
    for n, (r, c) in enumerate([(10, 10), (20, 30), (30, 12), (16, 24)]):
        _cross(x[n, 0], r, c)
        motifs[n, 0, r // 2, c // 2] = 0.7
        x[n, 0, 31:34, 1:4] = 1.0  # a 3x3 square centred at (32, 2): map position (16, 1)
        motifs[n, 1, 16, 1] = 0.4
    acc = GlyphAccumulator(3, size=9, stride=2)
    acc.add(x[:2], motifs[:2])
    acc.add(x[2:], motifs[2:])
    out = acc.result({"0": "x", "1": "o"})
    assert out["shape"] == [1, 9, 9] and out["size"] == 9
    cross = glyph_image(out["channels"]["0"], out["shape"])[0]
    assert out["channels"]["0"] | {"image": None} == {
        "fires": 4, "averaged": 4, "symbol": "x", "low": out["channels"]["0"]["low"],
        "high": 1.0, "image": None}  # fmt: skip
    assert cross[4, 2:7].min() == 1.0 and cross[2:7, 4].min() == 1.0  # the cross's arms
    assert cross[0, 0] < 0.25 and cross[8, 8] < 0.25  # the corners are noise
    square = glyph_image(out["channels"]["1"], out["shape"])[0]
    assert square[3:6, 3:6].min() == 1.0 and square[0:3, 0:3].max() < 0.25
    assert out["channels"]["2"] == {"fires": 0, "averaged": 0}
    assert glyph_image(out["channels"]["2"], out["shape"]) is None


def test_patches_are_capped_but_every_activation_is_counted():
    x = np.ones((2, 3, 50), dtype=np.float32)  # 1-D: a 3-row spectrogram
    motifs = np.zeros((2, 1, 50), dtype=np.float32)
    motifs[:, 0, ::5] = 1.0  # 10 a sample, some near the edges (zero padding there)
    acc = GlyphAccumulator(1, size=7, stride=1, cap=5)
    acc.add(x, motifs)
    out = acc.result()
    assert out["shape"] == [3, 7]
    assert out["channels"]["0"]["fires"] == 20 and out["channels"]["0"]["averaged"] == 5
    image = glyph_image(out["channels"]["0"], out["shape"])
    assert image.shape == (3, 7) and image[:, 3].min() == 1.0  # the centre is always inside
    assert image[:, 0].max() < 1.0  # the first patch hangs over the start: padded with 0
