"""Composition control: a word-reading family fires less on dinucleotide-shuffled windows; a
base-composition family fires as often."""

import numpy as np
import torch

from sparling_genomics.evaluate.composition import composition_control, refine_label
from sparling_genomics.genome.sequence import one_hot
from sparling_genomics.tasks.base import Batch

WORD = [2, 0, 3, 1]  # GATC


class WordAndBase(torch.nn.Module):
    """Layer channel 0 fires where GATC starts (a word), channel 1 on every T (composition)."""

    def layer_and_residual(self, x):
        codes = x.argmax(1) + 4 * (x.sum(1) == 0)
        layer = torch.zeros(x.shape[0], 2, x.shape[-1])
        hit = torch.ones_like(codes[:, :-3], dtype=torch.bool)
        for k, base in enumerate(WORD):
            hit &= codes[:, k : codes.shape[1] - 3 + k] == base
        layer[:, 0, :-3] = hit.float()
        layer[:, 1] = (codes == 3).float()
        return layer, None


class Windows:
    def __init__(self):
        rng = np.random.default_rng(0)
        codes = rng.integers(0, 4, (20, 400)).astype(np.uint8)
        for row in codes:
            for start in rng.choice(np.arange(0, 390, 10), 12, replace=False):
                row[start : start + 4] = WORD
        codes[:, 200:210] = 4  # a run of N stays N
        self.x = torch.from_numpy(one_hot(codes))

    def eval_batches(self, split, batch_size):
        for i in range(0, len(self.x), batch_size):
            yield Batch(self.x[i : i + batch_size], [[]] * len(self.x[i : i + batch_size]))


def test_a_word_is_a_motif_and_base_composition_is_composition():
    out = composition_control(WordAndBase(), Windows(), "test", {"word": [0], "t_rich": [1]},
                              batch_size=8, device=torch.device("cpu"), windows=16)  # fmt: skip
    assert out["windows"] == 16 and out["bases"] == 16 * 400
    word, base = out["families"]["word"], out["families"]["t_rich"]
    assert word["real_per_kb"] >= 30 and word["ratio"] < 0.5 and word["label"] == "motif"
    assert base["ratio"] == 1.0 and base["label"] == "composition"  # T count is kept exactly


def test_a_family_the_shuffle_keeps_is_a_short_word_or_composition_by_its_columns():
    assert refine_label("composition", 3.9, 4) == "short word"  # agGT: ~1 bit a column
    assert refine_label("composition", 5.9, 14) == "composition"  # nnTaannnnnnnnn: 0.42
    assert refine_label("composition", 2.0, 1) == "composition"  # one base: every T
    assert refine_label("motif", 0.5, 14) == "motif"  # the shuffle broke it: a motif
    assert refine_label(None, 3.0, 4) is None and refine_label("composition", None, 4) == (
        "composition")
