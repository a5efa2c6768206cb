import numpy as np
import pytest
import torch

from sparling_genomics.errors import ConfigError
from sparling_genomics.tasks.modular_addition import (
    ModularAdditionTask,
    permuted_labels,
    split_pairs,
)
from sparling_genomics.train.run_config import resolve_config


def _task(seed=0, **data):
    config = resolve_config("modular_addition", "tiny", overrides=[{"data": data}])
    return ModularAdditionTask(config, seed)


def test_split_is_deterministic_disjoint_and_covers_every_pair():
    train, held = split_pairs(13, 0.3, seed=4)
    again = split_pairs(13, 0.3, seed=4)
    assert np.array_equal(train, again[0]) and np.array_equal(held, again[1])
    assert len(train) == round(0.3 * 169) and len(set(train) | set(held)) == 169
    assert not set(train) & set(held)
    assert not np.array_equal(train, split_pairs(13, 0.3, seed=5)[0])


def test_the_run_seed_does_not_change_the_split_but_split_seed_does():
    a, b = _task(seed=0), _task(seed=1)
    for split in ("train", "val", "test"):
        assert np.array_equal(a.pairs[split], b.pairs[split])
        assert np.array_equal(a.labels[split], b.labels[split])
    assert not np.array_equal(a.pairs["train"], _task(split_seed=9).pairs["train"])


def test_labels_are_the_sum_mod_p_and_batches_are_deterministic():
    task = _task()
    batches = list(task.eval_batches("test", 7))
    x = torch.cat([b.x for b in batches])
    y = torch.cat([b.y for b in batches])
    assert x.shape == (len(task.pairs["test"]), 2) and int(x.max()) < task.p
    assert torch.equal(y, (x[:, 0] + x[:, 1]) % task.p)
    first, again = task.train_batch(3, 16), task.train_batch(3, 16)
    assert torch.equal(first.x, again.x) and torch.equal(first.y, again.y)
    assert not torch.equal(first.x, task.train_batch(4, 16).x)


def test_label_permutation_shuffles_that_fraction_of_the_training_labels():
    labels = np.arange(1000) % 97
    shuffled = permuted_labels(labels, 0.2, seed=0)
    assert sorted(shuffled) == sorted(labels)  # shuffled among themselves
    changed = np.mean(shuffled != labels)
    assert 0.15 < changed <= 0.2  # a few chosen labels land on an equal value
    assert np.array_equal(permuted_labels(labels, 0.0, seed=0), labels)
    task = _task(label_permutation=0.5)
    true = (task.pairs["train"] // task.p + task.pairs["train"] % task.p) % task.p
    assert np.mean(task.labels["train"] != true) > 0.3
    clean = task.pairs["test"] // task.p + task.pairs["test"] % task.p
    assert np.array_equal(task.labels["test"], clean % task.p)  # held-out labels stay true


@pytest.mark.parametrize("architecture", ["transformer", "mlp"])
def test_both_models_map_pairs_to_p_logits_and_keep_an_embedding(architecture):
    config = resolve_config("modular_addition", "tiny",
                            overrides=[{"model": {"architecture": architecture}}])  # fmt: skip
    task = ModularAdditionTask(config, 0)
    model = task.build_model()
    batch = task.train_batch(0, 8)
    out = model(batch.x)
    assert out["logits"].shape == (8, task.p) and model.density is None
    assert model.g.embed.weight.shape[0] == task.p
    assert task.loss(out, batch).ndim == 0


def test_a_split_without_held_out_pairs_is_refused():
    with pytest.raises(ConfigError, match="leaves no training or no held-out pairs"):
        split_pairs(3, 0.01, seed=0)
    with pytest.raises(ConfigError, match="too few held-out pairs"):
        _task(p=3, train_fraction=0.9)  # one held-out pair: no val and test halves
    with pytest.raises(ConfigError, match="not a multiple of model.heads"):
        config = resolve_config("modular_addition", "tiny", overrides=[{"model": {"heads": 3}}])
        ModularAdditionTask(config, 0).build_model()


def test_the_cpu_preset_has_the_seed_settings():
    t = resolve_config("modular_addition", "cpu")
    assert (t.data.p, t.data.train_fraction) == (113, 0.3)
    assert (t.model.d_model, t.model.heads, t.model.ffn, t.model.layers) == (128, 4, 256, 2)
    tr = t.train
    assert (tr.optimizer, tr.lr, tr.adam_beta2, tr.weight_decay, tr.batch_size) == (
        "adamw", 3e-3, 0.98, 0.1, 512)
    assert tr.keep_checkpoints_every == 500 * 512
