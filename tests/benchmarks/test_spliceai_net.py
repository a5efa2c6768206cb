"""The PyTorch port of SpliceAI's Keras models against Keras's own outputs, and OpenSpliceAI's
checkpoint layout."""

import json
from pathlib import Path

import h5py
import numpy as np
import pytest
import torch

from benchmarks.spliceai_net import (
    ARCHITECTURES,
    Ensemble,
    KerasGraph,
    SpliceAINet,
    context_of,
    load_openspliceai,
)
from sparling_genomics.errors import InputError

DATA = Path(__file__).resolve().parent.parent / "data"
TINY = DATA / "spliceai_keras_tiny.h5"  # made by scripts/peers/keras_reference.py --tiny


def one_hot(codes):
    eye = np.concatenate([np.eye(4, dtype=np.float32), np.zeros((1, 4), dtype=np.float32)])
    return torch.from_numpy(eye[codes].transpose(0, 2, 1).copy())


def test_the_port_matches_keras_to_1e_5():
    ref = np.load(DATA / "spliceai_keras_tiny.npz")
    net = KerasGraph(TINY).eval()
    assert net.context == int(ref["context"])
    with torch.no_grad():
        out = net(one_hot(ref["codes"])).numpy().transpose(0, 2, 1)
    assert out.shape == ref["outputs"].shape
    assert np.abs(out - ref["outputs"]).max() < 1e-5
    # the check can fail: a wrong padding side or a missing batch norm is far off
    assert np.abs(out[:, 1:] - ref["outputs"][:, :-1]).max() > 1e-3


def test_an_ensemble_is_the_mean_of_its_members_and_moves_to_a_device():
    ref = np.load(DATA / "spliceai_keras_tiny.npz")
    x = one_hot(ref["codes"])
    ensemble = Ensemble([KerasGraph(TINY)] * 2).to(torch.device("cpu"))  # nn.Module.to works
    with torch.no_grad():
        assert torch.allclose(ensemble(x), KerasGraph(TINY)(x))


def test_an_unsupported_keras_layer_is_named(tmp_path):
    bad = tmp_path / "bad.h5"
    with h5py.File(TINY) as src, h5py.File(bad, "w") as dst:
        config = json.loads(src.attrs["model_config"])
        config["config"]["layers"][1]["class_name"] = "LSTM"
        dst.attrs["model_config"] = json.dumps(config)
        src.copy("model_weights", dst)
    with pytest.raises(InputError, match="LSTM"):
        KerasGraph(bad)
    (tmp_path / "text.h5").write_text("not HDF5")
    with pytest.raises(InputError, match="not a Keras HDF5 model"):
        KerasGraph(tmp_path / "text.h5")


@pytest.mark.parametrize("flank", sorted(ARCHITECTURES))
def test_openspliceai_layout_trims_its_flank(flank, tmp_path):
    net = SpliceAINet(flank).eval()
    assert net.context == flank == context_of(*ARCHITECTURES[flank])
    torch.save(net.state_dict(), tmp_path / "model.pt")
    loaded = load_openspliceai(tmp_path / "model.pt", flank)
    x = one_hot(np.random.default_rng(0).integers(0, 5, size=(2, flank + 30)))
    with torch.no_grad():
        y = loaded(x)
    assert y.shape == (2, 3, 30)
    assert torch.allclose(y.sum(dim=1), torch.ones(2, 30))
    with pytest.raises(InputError, match="not an OpenSpliceAI flank-80"):
        load_openspliceai(tmp_path / "model.pt", 80) if flank != 80 else load_openspliceai(
            tmp_path / "missing.pt", 80)
