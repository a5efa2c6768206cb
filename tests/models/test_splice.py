import pytest
import torch

from sparling_genomics.models.splice import SpliceAIHead


def test_spliceai_400_receptive_field_and_crop():
    head = SpliceAIHead(8, 3, context=400)
    assert head.receptive_field == 401
    out = head(torch.zeros(2, 8, 1400))
    assert out.shape == (2, 3, 1000)


def test_output_position_sees_only_its_receptive_field():
    torch.manual_seed(0)
    head = SpliceAIHead(4, 3, context=40, channels=8, kernel=3, dilations=[1, 2]).eval()
    rf = head.receptive_field  # 1 + 2*2*1 + 2*2*2 = 13
    x = torch.randn(1, 4, 140)
    base = head(x)
    y = x.clone()
    y[..., 20 + 50 + rf // 2 + 1] += 5.0  # just outside output position 50's field
    assert torch.allclose(head(y)[..., 50], base[..., 50])
    y[..., 20 + 50 + rf // 2] += 5.0  # its last input
    assert not torch.allclose(head(y)[..., 50], base[..., 50])


@pytest.mark.parametrize("dilations,context", [([1, 1, 1, 1, 4, 4, 4, 4], 400), ([1, 4], 400),
                                               ([1, 4], 100)])  # fmt: skip
def test_eval_mode_computes_only_the_cone_and_gets_the_padded_logits(dilations, context):
    torch.manual_seed(0)
    head = SpliceAIHead(6, 3, context=context, channels=8, dilations=dilations)
    for module in head.modules():
        if isinstance(module, torch.nn.BatchNorm2d):  # not the identity, as after training
            module.running_mean.uniform_(-1, 1)
            module.running_var.uniform_(0.5, 2.0)
    head.eval()
    m = torch.relu(torch.randn(2, 6, context + 123))
    with torch.no_grad():
        valid = head.forward_valid(m)
        head.train()  # the padded path (BatchNorm then uses batch statistics: copy them back)
        for module in head.modules():
            if isinstance(module, torch.nn.BatchNorm2d):
                module.eval()
        padded = head.forward_padded(m)
    assert valid.shape == padded.shape == (2, 3, 123)
    assert torch.allclose(valid, padded, atol=1e-5)
