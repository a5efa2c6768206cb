"""Family effects: silencing a family the output reads drops the metric; an unused one not."""

import numpy as np
import pytest
import torch

from sparling_genomics.evaluate.family_effect import (
    effect_shares,
    family_effects,
    rank_by_effect,
)
from sparling_genomics.tasks.base import Batch


class ReadsTwoChannels(torch.nn.Module):
    """A stand-in Sparling model whose layer is its input: ``h`` calls an acceptor where
    channel 0 fires and a donor where channel 1 fires; channel 2 fires but is never read."""

    def layer_and_residual(self, x):
        return x, None

    def read(self, layer, residual=None):
        background = torch.zeros_like(layer[:, :1])
        return torch.cat([background, 6 * layer[:, 0:1] - 3, 6 * layer[:, 1:2] - 3], 1)


class SiteWindows:
    name, scoring, classes = "sites", "sites", ["none", "acceptor", "donor"]

    def __init__(self):
        rng = np.random.default_rng(0)
        x = np.zeros((12, 4, 300), np.float32)
        y = np.zeros((12, 300), np.int64)
        for w in range(12):
            acc, don, noise = (rng.choice(300, 6, replace=False) for _ in range(3))
            x[w, 0, acc], y[w, acc] = 1, 1
            x[w, 1, don], y[w, don] = 1, 2
            x[w, 2, noise] = 1
        y[:, :5] = -1  # unlabelled positions are not scored
        self.x, self.y = torch.from_numpy(x), torch.from_numpy(y)

    def eval_batches(self, split, batch_size):
        for i in range(0, len(self.x), batch_size):
            yield Batch(self.x[i : i + batch_size], [[]] * len(self.x[i : i + batch_size]),
                        y=self.y[i : i + batch_size])  # fmt: skip

    def site_probabilities(self, outputs, batch):
        p = torch.softmax(outputs["logits"].float(), dim=1)
        return p.permute(0, 2, 1).reshape(-1, 3).numpy(), batch.y.reshape(-1).numpy()


def test_silencing_a_read_family_drops_its_class_and_an_unread_one_changes_nothing():
    effects = family_effects(ReadsTwoChannels(), SiteWindows(), "test",
                             {"acc": [0], "unread": [2], "both": [0, 1]},
                             batch_size=5, device=torch.device("cpu"), windows=10)  # fmt: skip
    assert effects["windows"] == 10 and effects["intact"]["mean_topk"] == pytest.approx(1.0)
    acc, unread, both = (effects["families"][n] for n in ("acc", "unread", "both"))
    assert acc["drop"]["acceptor_topk"] > 0.5 and acc["drop"]["donor_topk"] == 0
    assert acc["log_odds_change"]["acceptor"] == pytest.approx(-6.0)
    assert acc["log_odds_change"]["donor"] == 0 and acc["measurable"]
    assert unread["drop"]["mean_topk"] == 0 and unread["effect"] == 0
    assert not unread["measurable"]
    assert both["effect"] == pytest.approx(6.0) and acc["effect"] == pytest.approx(3.0)
    assert rank_by_effect(effects) == ["both", "acc", "unread"]
    shares = effect_shares(effects)
    assert shares["both"] == pytest.approx(2 / 3) and shares["unread"] == 0
