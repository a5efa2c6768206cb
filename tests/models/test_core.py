"""The supplied site core: per-class asymmetric windows, output-position logits, freezing."""

import torch

from sparling_genomics.models.core import CoreAlone, SiteCore


def _core():
    torch.manual_seed(0)
    return SiteCore(["acceptor", "donor"], [(20, 2), (2, 6)], context=40, hidden=4, layers=2)


def test_each_class_reads_only_its_own_window():
    core = _core()
    x = torch.zeros(1, 4, 100)
    x[0, 0] = 1.0
    base = core(x)
    for p in range(100):
        changed = x.clone()
        changed[0, :, p] = torch.tensor([0.0, 0.0, 1.0, 0.0])
        moved = (core(changed) - base).abs()[0] > 0  # (classes, positions)
        for c, (up, down) in enumerate(core.windows):
            # Output q reads bases q - up .. q + down: a change at p moves q in p-down..p+up.
            expected = torch.zeros(100, dtype=torch.bool)
            expected[max(0, p - down) : p + up + 1] = True
            assert torch.equal(moved[c], expected), (c, p)


def test_site_logits_are_the_forward_pass_at_the_output_positions():
    core = _core()
    x = torch.nn.functional.one_hot(torch.randint(0, 4, (3, 140)), 4).permute(0, 2, 1).float()
    assert torch.allclose(core.site_logits(x), core.crop(core(x)), atol=1e-6)
    assert core.site_logits(x).shape == (3, 2, 100)
    residual = CoreAlone(core)(x)["logits"]
    assert residual.shape == (3, 3, 100) and torch.all(residual[:, 0] == 0)
    assert torch.all(residual[:, 1:] <= 0)  # log-probabilities


def test_loss_counts_labelled_positions_only_and_freeze_stops_gradients():
    core = _core()
    s = torch.zeros(2, 2, 5, requires_grad=True)
    y = torch.tensor([[0, 1, 2, -1, -1], [-1, -1, -1, -1, -1]])
    loss = core.loss(s, y)
    loss.backward()
    assert torch.all(s.grad[:, :, 3:] == 0) and torch.all(s.grad[0, :, :3] != 0)
    assert not core.frozen
    core.freeze()
    assert core.frozen and not any(p.requires_grad for p in core.parameters())
    assert bool(core.state_dict()["trained"])
