import numpy as np
import pytest
import torch

from sparling_genomics.errors import ConfigError
from sparling_genomics.models.split import RowEdit, apply_split, copy_rows, split_edits
from sparling_genomics.tasks.registry import task_class
from sparling_genomics.train.run_config import resolve_config


def task_and_model(task="planted", preset="tiny"):
    data = [{"data": {"background": "iid"}}] if task == "planted" else []
    config = resolve_config(task, preset, overrides=data)
    torch.manual_seed(0)
    t = task_class(task)(config, 0)
    return t, t.build_model()


def trained_a_little(task, model, steps=3):
    """A few steps, so thresholds, statistics and Adam's moments are not their initial
    values (a copy of an initial value would prove nothing)."""
    optimizer = torch.optim.Adam(model.trainable_parameters(), lr=1e-2)
    model.set_density(0.05)
    model.train()
    for i in range(steps):
        batch = task.train_batch(i, 16)
        loss = task.loss(model(batch.x), batch)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return optimizer


def test_copy_rows_copies_or_shares_along_a_dimension():
    x = torch.arange(12.0).view(3, 4)
    copy_rows(x, RowEdit(x, 1, [0], [2]))
    assert x[:, 2].tolist() == x[:, 0].tolist() == [0.0, 4.0, 8.0]
    y = torch.arange(6.0).view(3, 2)
    copy_rows(y, RowEdit(y, 0, [1], [2], share=True))
    assert y.tolist() == [[0.0, 1.0], [1.0, 1.5], [1.0, 1.5]]  # halved, then copied


def test_a_split_into_an_idle_motif_without_noise_keeps_the_output_and_makes_a_copy():
    task, model = task_and_model()
    optimizer = trained_a_little(task, model)
    model.eval()
    x = task.make_batch(np.random.default_rng(5), "val", 8).x
    b = model.block_size
    source, target = 1, 3
    s, t = list(range(source * b, source * b + b)), list(range(target * b, target * b + b))
    with torch.no_grad():
        model.h.inp.weight[:, t] = 0  # an idle target: h ignores it
    before = model(x)["logits"]
    moment = optimizer.state[model.h.inp.weight]["exp_avg_sq"][:, s].clone()
    apply_split(model, source, target, optimizer=optimizer, noise=0.0)
    after = model(x)
    assert torch.allclose(after["logits"], before, atol=1e-5)
    assert torch.equal(model.g.out.weight[t], model.g.out.weight[s])
    assert torch.equal(model.sparse.thresholds[target], model.sparse.thresholds[source])
    assert torch.equal(model.sparse.running_var[t], model.sparse.running_var[s])
    assert torch.equal(model.h.inp.weight[:, t], model.h.inp.weight[:, s])
    assert torch.equal(after["motifs"][:, target], after["motifs"][:, source])
    state = optimizer.state[model.h.inp.weight]
    assert torch.allclose(state["exp_avg_sq"][:, s], moment / 4)  # a halved weight's
    assert torch.equal(state["exp_avg_sq"][:, t], state["exp_avg_sq"][:, s])
    g_state = optimizer.state[model.g.out.weight]["exp_avg"]
    assert torch.equal(g_state[t], g_state[s])


def test_noise_moves_the_two_filters_apart_reproducibly():
    filters = []
    for _ in range(2):
        _, model = task_and_model()
        apply_split(model, 0, 2, noise=0.05, generator=torch.Generator().manual_seed(3))
        w = model.g.out.weight.detach()
        assert not torch.equal(w[0:2], w[4:6])
        assert torch.allclose(w[0:2], w[4:6], rtol=0.5, atol=1e-3)
        filters.append(w.clone())
    assert torch.equal(*filters)


def test_split_edits_name_what_cannot_be_split():
    _, model = task_and_model()
    with pytest.raises(ValueError, match="cannot split motif 1 into 1"):
        split_edits(model, 1, 1)
    model.h.split_edits = None  # a head that cannot share its inputs
    with pytest.raises(ConfigError, match="head that can share its inputs"):
        split_edits(model, 0, 1)


def test_a_digit_circle_model_splits_with_its_polar_head():
    task, model = task_and_model("digit_circle", "tiny")
    model.eval()
    x = task.train_batch(0, 2).x
    with torch.no_grad():
        model.h.inp.weight[:, 1] = 0  # an idle target
    before = model(x)["logits"]
    apply_split(model, 0, 1, noise=0.0)
    assert torch.allclose(model(x)["logits"], before, atol=1e-5)
