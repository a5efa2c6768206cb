import numpy as np
import pytest

from sparling_genomics.evaluate.motif_metrics import MotifConfusion


def cell(lo, hi, symbol):
    return ((slice(lo, hi),), symbol)


def test_hand_built_one_dimensional_case():
    # 2 channels, 2 symbols, length 20.
    m = np.zeros((2, 20))
    m[0, 3] = 1.0  # inside motif A (symbol 0) at 2..6: channel 0 finds it
    m[1, 4] = 0.5  # also inside A, weaker: zeroed with the cell, not a false positive
    m[1, 12] = 2.0  # inside motif B (symbol 1) at 10..14: channel 1 finds it
    m[0, 17] = 1.0  # outside every cell: false positive of channel 0
    # motif C (symbol 1) at 15..17 (17 excluded) sees nothing: missed
    conf = MotifConfusion(2, 2)
    conf.add_sample(m, [cell(2, 6, 0), cell(10, 14, 1), cell(15, 17, 1)])
    # 3 true motifs, 1 missed -> FNE 1/3.
    assert conf.fne() == pytest.approx(1 / 3)
    # found 2 + 1 false positive activation -> FPE 1/3.
    assert conf.fpe() == pytest.approx(1 / 3)
    # channel 0 -> symbol 0, channel 1 -> symbol 1: no confusion.
    assert conf.ce() == 0.0 and conf.ce_many_to_one() == 0.0
    # A's cell peaks 1.0 and 0.5 (a third off the winner), B's one channel alone.
    assert conf.spread() == pytest.approx((1 / 3 + 0) / 2)
    assert conf.summary()["spread"] == conf.spread()


def test_spread_is_zero_for_one_channel_and_near_one_for_all_alike():
    one, alike = MotifConfusion(4, 1), MotifConfusion(4, 1)
    m = np.zeros((4, 10))
    m[2, 5] = 1.0
    one.add_sample(m, [cell(3, 8, 0)])
    alike.add_sample(np.ones((4, 10)), [cell(3, 8, 0)])
    assert one.spread() == 0.0 and alike.spread() == pytest.approx(0.75)


def test_confusion_permutation_and_many_to_one():
    conf = MotifConfusion(3, 3)
    # channel 2 finds symbol 0 four times, channel 0 finds symbol 1 three times,
    # channel 0 also finds symbol 2 twice, channel 1 finds symbol 2 once.
    conf.counts[2, 0] = 4
    conf.counts[0, 1] = 3
    conf.counts[0, 2] = 2
    conf.counts[1, 2] = 1
    # One-to-one best: 2->0 (4), 0->1 (3), 1->2 (1): 8 of 10 -> CE 0.2.
    assert conf.ce() == pytest.approx(0.2)
    # Many-to-one: channel 0 -> its top (3), channel 1 -> 1, channel 2 -> 4: 8/10.
    assert conf.ce_many_to_one() == pytest.approx(0.2)
    conf.counts[1, 2] = 0
    conf.counts[1, 1] = 0
    # Now channel 0 finds 1 (3x) and 2 (2x): one-to-one loses 2 of 9, many-to-one also 2.
    assert conf.ce() == pytest.approx(2 / 9)
    assert conf.channel_to_symbol() == {2: 0, 0: 1}


def test_many_to_one_beats_one_to_one_when_a_channel_is_split():
    conf = MotifConfusion(2, 1)
    conf.counts[0, 0] = 5
    conf.counts[1, 0] = 5  # two channels share one symbol
    assert conf.ce() == pytest.approx(0.5)
    assert conf.ce_many_to_one() == 0.0


def test_symbol_channels_groups_channels_by_their_most_common_symbol():
    conf = MotifConfusion(4, 3)
    conf.counts[0, 0] = 5
    conf.counts[1, 0] = 3  # a second channel for symbol 0
    conf.counts[1, 2] = 1
    conf.counts[2, 1] = 4
    # channel 3 found nothing; symbol 2 is no channel's most common symbol.
    assert conf.symbol_channels() == {0: [0, 1], 1: [2]}
    assert conf.symbol_to_channel() == {0: 0, 1: 2, 2: 1}


def test_two_dimensional_cells_and_argmax():
    m = np.zeros((3, 10, 10))
    m[1, 2, 2] = 0.4
    m[2, 3, 3] = 0.9  # the strongest channel in the box decides
    m[0, 8, 8] = 0.1  # false positive
    conf = MotifConfusion(3, 2)
    conf.add_sample(m, [((slice(1, 5), slice(1, 5)), 0)])
    assert conf.counts[2, 0] == 1
    assert conf.counts[0, 2] == 1  # channel 0 false positive in the "none" column
    assert conf.fne() == 0.0 and conf.fpe() == pytest.approx(0.5)


def test_empty_cases_are_zero_not_nan():
    conf = MotifConfusion(2, 2)
    assert conf.fne() == conf.fpe() == conf.ce() == conf.ce_many_to_one() == conf.spread() == 0.0


def test_input_is_not_modified():
    m = np.ones((1, 5))
    MotifConfusion(1, 1).add_sample(m, [cell(0, 2, 0)])
    assert m.sum() == 5


def test_per_symbol_counts_say_where_each_motif_went():
    conf = MotifConfusion(3, 2)
    conf.counts[2, 0] = 4  # symbol "a": channel 2 four times, channel 0 once, missed twice
    conf.counts[0, 0] = 1
    conf.counts[3, 0] = 2
    conf.counts[1, 1] = 5  # symbol "b": channel 1 only
    conf.counts[1, 2] = 3  # channel 1 fires three times on no motif
    assert conf.per_symbol(["a", "b"]) == {
        "a": {"sites": 7, "missed": 2, "channels": {"0": 1, "2": 4}},
        "b": {"sites": 5, "missed": 0, "channels": {"1": 5}},
    }
    assert conf.false_positives_per_channel() == {"1": 3}
    missed = sum(v["missed"] for v in conf.per_symbol(["a", "b"]).values())
    assert missed / 12 == pytest.approx(conf.fne())
