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
