"""The DigitCircle task: its heads and CNN, its cells on the strided map, swaps, a tiny run."""

import json
import math

import pytest
import yaml

from sparling_genomics.domains.digit_circle import generate_batch


def test_cyclic_ctc_loss_is_the_same_for_every_rotation_of_the_target():
    import torch

    from sparling_genomics.models.heads import cyclic_ctc_loss

    torch.manual_seed(0)
    logits = torch.randn(2, 11, 48)
    base = cyclic_ctc_loss(logits, [[3, 1, 4], [2, 7, 1, 8]])
    rotated = cyclic_ctc_loss(logits, [[1, 4, 3], [8, 2, 7, 1]])
    assert torch.allclose(base, rotated)
    assert not torch.allclose(base, cyclic_ctc_loss(logits, [[3, 4, 1], [2, 7, 1, 8]]))


def test_polar_head_bins_every_pixel_counter_clockwise_from_angle_zero():
    """A single activation at angle a (y up) lands, whole, in angle bin a / 2pi * angles."""
    import torch

    from sparling_genomics.models.heads import PolarCTCHead

    head = PolarCTCHead(1, 1, size=100, angles=36, radii=4, layers=0, recurrent=False)
    for degrees in (5, 95, 205):
        m = torch.zeros(1, 1, 100, 100)
        a = math.radians(degrees)
        m[0, 0, round(49.5 - 30 * math.sin(a)), round(49.5 + 30 * math.cos(a))] = 1.0
        ring = head.ring(m)[0, 0]
        assert float(ring.sum()) == pytest.approx(1.0)
        assert int(ring.sum(0).argmax()) == degrees // 10


def test_2d_motif_model_receptive_field_is_17_pixels():
    import torch

    from sparling_genomics.models.motif import MotifModel2D

    torch.manual_seed(0)
    g = MotifModel2D(4, hidden=8).eval()
    assert g.receptive_field == 17
    x = torch.zeros(1, 1, 41, 41)
    y = x.clone()
    y[0, 0, 20, 20] = 1.0
    changed = (g(x) - g(y)).abs().amax(1)[0] > 0
    rows, cols = torch.nonzero(changed, as_tuple=True)
    assert rows.min() == 12 and rows.max() == 28 and cols.min() == 12 and cols.max() == 28


def test_tiny_digit_circle_train_end_to_end(cli, tmp_path):
    out = tmp_path / "run"
    result = cli("train", "--task", "digit_circle", "--preset", "tiny", "--out", out,
                 "--no-progress")  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "fne=" in result.stdout and (out / "metrics.json").is_file()
    # The evaluate verb rescores the final weights, perturbation consistency included.
    evaluated = cli("evaluate", "--model", out, "--out", tmp_path / "m.json")
    assert evaluated.returncode == 0, evaluated.stderr
    metrics = json.loads((tmp_path / "m.json").read_text())
    saved = json.loads((out / "metrics.json").read_text())
    assert metrics["e2e"] == saved["e2e"] and metrics["perturbation"] == saved["perturbation"]
    # Each channel's mean input patch, one receptive field wide, drawn in the report.
    from sparling_genomics.report.page import build_report

    glyphs = saved["motif"]["glyphs"]
    assert glyphs == metrics["motif"]["glyphs"]
    assert glyphs["shape"] == [1, glyphs["size"], glyphs["size"]] and glyphs["size"] % 2 == 1
    channels = yaml.safe_load((out / "config.yaml").read_text())["model"]["motif_channels"]
    assert list(glyphs["channels"]) == [str(c) for c in range(channels)]
    assert sum(c["fires"] for c in glyphs["channels"].values()) > 0
    assert 'alt="channel glyphs"' in build_report(out)


def test_stride_2_cells_hold_every_map_position_of_the_padded_box():
    from sparling_genomics.tasks.digit_circle import DigitCircleTask
    from sparling_genomics.train.run_config import resolve_config

    task = DigitCircleTask(resolve_config("digit_circle", "cpu"), 0)
    assert task.stride == 2 and task.map_size == 50
    samples = generate_batch(0, 0, 4)
    batch = task._batch(samples)
    for sample, cells in zip(samples, batch.cells):
        for ((rows, cols), digit), (d, r0, r1, c0, c1) in zip(cells, sample.boxes):
            assert digit == d
            assert rows.start == -(-max(0, r0 - 2) // 2) and rows.stop == (r1 + 1) // 2 + 1
            assert cols.start == -(-max(0, c0 - 2) // 2) and cols.stop == (c1 + 1) // 2 + 1
    # The whole map's share of digits: 4.5 digits over 12 channels x 50 x 50 positions.
    assert abs(task.true_density() - 4.5 / (12 * 50 * 50)) < 1e-12
    paper = DigitCircleTask(resolve_config("digit_circle", "paper"), 0)
    assert abs(paper.true_density() - 4.5 / (10 * 100 * 100)) < 1e-12  # the paper's 4.49e-5


def test_swapping_a_digit_keeps_the_ring_canonical():
    from sparling_genomics.tasks.digit_circle import DigitCircleTask
    from sparling_genomics.train.run_config import resolve_config

    task = DigitCircleTask(resolve_config("digit_circle", "tiny"), 0)
    cells = [((slice(0, 1), slice(0, 1)), d) for d in (5, 2, 7)]
    assert task.swap_output([2, 7, 5], cells, 1, 9) == [5, 9, 7]  # 2 -> 9: 5 is smallest now
    assert task.swap_output([2, 7, 5], cells, 0, 7) is None  # 7 is in the ring already
