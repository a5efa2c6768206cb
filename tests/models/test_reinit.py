import numpy as np
import pytest
import torch

from sparling_genomics.errors import ConfigError
from sparling_genomics.models.reinit import check_reinit, head_input_weight, reinit_motif
from sparling_genomics.tasks.registry import task_class
from sparling_genomics.train.run_config import resolve_config

from .test_split import task_and_model, trained_a_little


def _splicing(dataset):
    config = resolve_config("splicing", "tiny", overrides=[{"data": {"dataset": str(dataset)}}])
    torch.manual_seed(0)
    t = task_class("splicing")(config, 0)
    return t, t.build_model()


@pytest.mark.parametrize("task", ["planted", "splicing"])
def test_a_reinitialised_motif_keeps_the_output_and_gets_fresh_incoming_weights(task, request):
    """Planted (CTC head) and splicing (dilated head beside a site core)."""
    if task == "splicing":
        t, model = _splicing(request.getfixturevalue("tiny_dataset"))
    else:
        t, model = task_and_model(task)
    optimizer = trained_a_little(t, model)
    model.eval()
    x = t.train_batch(99, 8).x
    b = model.block_size
    motif = 1
    channels = list(range(motif * b, motif * b + b))
    weight = head_input_weight(model)
    with torch.no_grad():
        weight[:, channels] = 0  # a never-needed motif: h ignores it
    before = model(x)["logits"]
    old_filter = model.g.out.weight[channels].clone()
    others = model.g.out.weight[b:].clone() if motif == 0 else model.g.out.weight[:b].clone()
    reinit_motif(model, motif, optimizer=optimizer, generator=torch.Generator().manual_seed(1))
    after = model(x)["logits"]
    assert torch.allclose(after, before, atol=1e-5)  # outgoing weights zero: same output
    new_filter = model.g.out.weight[channels]
    assert not torch.allclose(new_filter, old_filter)
    bound = 1 / np.sqrt(model.g.out.weight[0].numel())
    assert float(new_filter.detach().abs().max()) <= bound  # the layer's own initialisation range
    assert torch.equal(model.g.out.weight[:b], others)  # other motifs untouched
    for tensor, rows in ((model.g.out.weight, (0, channels)), (weight, (1, channels))):
        state = optimizer.state[tensor]
        assert float(state["exp_avg"].index_select(rows[0], torch.tensor(rows[1])).abs().sum()) == 0
    assert bool(weight[:, channels].eq(0).all())
    assert float(model.sparse.running_var[channels].sub(1).abs().max()) == 0
    assert not bool(model.sparse._warm)  # thresholds estimated afresh from the next batches


def test_a_copy_hands_its_outgoing_weights_to_the_motif_it_copies():
    t, model = task_and_model("planted")
    weight = head_input_weight(model)
    b = model.block_size
    copy, kept = 2, 0
    c_rows, k_rows = list(range(copy * b, copy * b + b)), list(range(kept * b, kept * b + b))
    expected = weight[:, k_rows] + weight[:, c_rows]
    reinit_motif(model, copy, merge=kept)
    assert torch.allclose(weight[:, k_rows], expected)
    assert bool(weight[:, c_rows].eq(0).all())


def test_reinit_is_reproducible_and_refuses_what_it_cannot_edit():
    filters = []
    for _ in range(2):
        _, model = task_and_model("planted")
        reinit_motif(model, 0, generator=torch.Generator().manual_seed(4))
        filters.append(model.g.out.weight.detach().clone())
    assert torch.equal(*filters)
    _, model = task_and_model("planted")
    with pytest.raises(ValueError, match="cannot re-initialise motif 1"):
        reinit_motif(model, 1, merge=1)
    with pytest.raises(ValueError, match="cannot re-initialise motif 99"):
        reinit_motif(model, 99)
    model.h.inp = None
    with pytest.raises(ConfigError, match="head whose first layer `inp`"):
        check_reinit(model)
