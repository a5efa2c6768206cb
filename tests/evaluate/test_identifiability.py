"""The identifiability check: met for a model whose every channel carries its symbol at the
true density with no end-to-end error; fails, naming the channel, where a channel is dead or
ignored; fails on density off the true one; not checkable without a true density; not
applicable without a sparse layer. Then the check on real runs' metrics and splicing's core."""

import numpy as np
import torch
from torch import nn

from sparling_genomics.evaluate.evaluation import score_model
from sparling_genomics.evaluate.identifiability import (
    check_identifiability,
    identifiability_verdict,
    idle_channels,
)
from sparling_genomics.models.heads import ctc_greedy_decode
from sparling_genomics.models.sparling import SparlingModel
from sparling_genomics.tasks.base import Batch, Task
from sparling_genomics.tasks.registry import task_class
from sparling_genomics.tasks.splicing import SplicingTask
from sparling_genomics.train.run_config import resolve_config

K, L, N, PER = 4, 40, 24, 3
CPU = torch.device("cpu")


class LocalG(nn.Identity):
    """The input is the motif layer: a local ``g`` of receptive field 1 with ``channels``."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.motifs = channels
        self.receptive_field = 1


class Passthrough(nn.Module):
    """Stands for a sparse layer that keeps what it is given."""

    density = PER / (K * L)

    def forward(self, z):
        return z


class ChannelHead(nn.Module):
    """CTC frames: symbol c where channel c is active, blank elsewhere (channels beyond the
    symbols are read as nothing: the head ignores them)."""

    def forward(self, m):
        return torch.cat([torch.full_like(m[:, :1], 0.5), m[:, :K]], dim=1)


class ToyTask(Task):
    name = "toy"
    symbols = ["a", "b", "c", "d"]

    def __init__(self, *, extra: int = 0, true_density: float | None = PER / (K * L)):
        """Each sample: PER symbols, each lighting its channel at one position; ``extra``
        channels that never light."""
        super().__init__({}, 0)
        rng = np.random.default_rng(0)
        x = torch.zeros(N, K + extra, L)
        targets = []
        for i in range(N):
            symbols = [int(s) for s in rng.integers(0, K, size=PER)]
            for j, s in enumerate(symbols):
                x[i, s, 5 + 12 * j] = 1.0
            targets.append(symbols)
        self.batch = Batch(x, targets, [])
        self._true = true_density

    def build_model(self, *, sparse=True):
        raise NotImplementedError

    def train_batch(self, index, batch_size):
        raise NotImplementedError

    def eval_batches(self, split, batch_size):
        for start in range(0, N, batch_size):
            yield Batch(self.batch.x[start : start + batch_size],
                        self.batch.targets[start : start + batch_size], [])  # fmt: skip

    def loss(self, outputs, batch):
        raise NotImplementedError

    def decode(self, outputs):
        return ctc_greedy_decode(outputs["logits"])

    def true_density(self):
        return self._true


def _check(task, *, channels=K, sparse=True, density=None, samples=512):
    model = SparlingModel(LocalG(channels), Passthrough() if sparse else None, ChannelHead())
    x = task.batch.x
    measured = float((x > 0).float().mean()) if density is None else density
    return check_identifiability(
        model, task, "test", e2e={"exact_match": 1.0}, measured_density=measured,
        batch_size=10, device=CPU, samples=samples,
    )  # fmt: skip


def test_conditions_hold_when_every_channel_carries_its_symbol_at_the_true_density():
    result = _check(ToyTask())
    assert result["status"] == "met", result["verdict"]
    assert result["verdict"].startswith("conditions met")
    necessity = result["conditions"]["necessity"]
    assert necessity["met"] and necessity["inputs"] == N and necessity["min_alpha"] > 0
    assert abs(result["conditions"]["density"]["ratio"] - 1.0) < 1e-6
    assert result["channels"]["dead"] == [] and set(result["channels"]["alpha"]) == {
        "0", "1", "2", "3"}  # fmt: skip
    assert result["channels"]["idle"] == [] and "warning" not in result["verdict"]


def test_a_dead_channel_fails_necessity_by_name():
    task = ToyTask(extra=1)
    # Density measured over the K + 1 channels: rescale the true one to match, so only the
    # dead channel fails.
    task._true = PER / ((K + 1) * L)
    result = _check(task, channels=K + 1)
    assert result["status"] == "fails"
    assert result["conditions"]["necessity"]["unnecessary"] == ["4"]
    assert result["channels"]["dead"] == ["4"] and result["channels"]["alpha"]["4"] == 0.0
    assert "channel(s) 4 never change the output" in result["verdict"]
    assert result["conditions"]["density"]["met"] and result["conditions"]["end_to_end"]["met"]


def test_density_off_the_true_density_fails_and_unknown_density_is_not_checkable():
    double = _check(ToyTask(), density=2 * PER / (K * L))
    assert double["status"] == "fails" and "2.00x the true" in double["verdict"]
    unknown = _check(ToyTask(true_density=None))
    assert unknown["status"] == "unknown" and unknown["verdict"].startswith("not checkable")
    assert unknown["conditions"]["density"]["met"] is None


def test_necessity_reads_only_the_asked_number_of_inputs():
    assert _check(ToyTask(), samples=7)["conditions"]["necessity"]["inputs"] == 7


def test_no_sparse_layer_means_the_theorem_does_not_apply():
    assert _check(ToyTask(), sparse=False)["status"] == "not_applicable"


def test_splicing_checks_the_core_channels_too_and_density_is_not_checkable(tiny_dataset):
    config = resolve_config("splicing", "tiny",
                            overrides=[{"data": {"dataset": str(tiny_dataset)}}])  # fmt: skip
    task = SplicingTask(config, seed=0)
    torch.manual_seed(0)
    model = task.build_model(sparse=True)
    result = score_model(model, task, "val", batch_size=4, device=CPU).identifiability
    alpha = result["channels"]["alpha"]
    core = getattr(model, "core", None)
    extra = [] if core is None else [f"core:{c}" for c in core.classes]
    assert list(alpha) == [str(c) for c in range(model.g.motifs)] + extra
    assert result["conditions"]["density"]["met"] is None  # splicing: true density unknown
    assert all(0.0 <= a <= 1.0 for a in alpha.values())


def test_a_tiny_planted_model_with_a_channel_silenced_fails_on_that_channel():
    """The check on a real (untrained, tiny) planted model: with channel 2's threshold out of
    reach the channel is dead, and the verdict names it."""
    config = resolve_config("planted", "tiny")
    task = task_class("planted")(config, seed=0)
    torch.manual_seed(0)
    model = task.build_model().eval()
    model.sparse.thresholds[2] = 1e6
    result = score_model(model, task, "val", batch_size=16, device=CPU).identifiability
    assert result["status"] == "fails"
    assert "2" in result["channels"]["dead"] and "2" in result["conditions"]["necessity"][
        "unnecessary"]  # fmt: skip
    assert result["channels"]["alpha"]["2"] == 0.0


def test_idle_channels_are_those_far_below_the_median_but_not_unneeded():
    alpha = {"0": 0.30, "1": 0.33, "2": 0.35, "3": 0.023, "4": 0.0}
    assert idle_channels(alpha) == ["3"]  # "4" is unnecessary (a condition), not idle
    assert idle_channels({"0": 0.3, "1": 0.01}) == []  # too few channels for a median
    assert idle_channels({"0": 0.0, "1": 0.0, "2": 0.01}) == []  # median 0
    assert idle_channels({"0": 0.30, "1": 0.33, "2": 0.07}) == []  # 0.07 > 0.2 * 0.30


def test_an_idle_channel_warns_without_failing_the_theorems_conditions():
    """Planted draw 2 on one host: channel 6 changed the output on 2.3% of inputs against a
    median of 32%, while channel 0 carried two motifs; every condition was met but one."""
    necessity = {"inputs": 512, "channels": ["0", "1", "2", "3"],
                 "alpha": [0.32, 0.34, 0.30, 0.023], "density": [0.002] * 4}  # fmt: skip
    block = identifiability_verdict(receptive_field=19, measured_density=0.002,
                                    true_density=0.002, error=0.05,
                                    necessity=necessity)  # fmt: skip
    assert block["status"] == "met" and block["channels"]["idle"] == ["3"]
    assert block["verdict"].startswith("conditions met")
    assert "warning: channel(s) 3 change the output on at most 2.3% of inputs" in block[
        "verdict"]  # fmt: skip
