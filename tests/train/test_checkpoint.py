"""Checkpoints from untrusted places: nothing executes, nothing modified is accepted."""

import os
import pickle

import pytest
import torch

from sparling_genomics.errors import CheckpointError
from sparling_genomics.train.checkpoint import load_checkpoint, save_checkpoint


def _payload():
    return {"model": {"w": torch.arange(5000, dtype=torch.float32)}, "trainer": {"step": 3}}


def test_round_trip(tmp_path):
    path = tmp_path / "c.pt"
    save_checkpoint(path, _payload())
    loaded = load_checkpoint(path)
    assert torch.equal(loaded["model"]["w"], _payload()["model"]["w"])
    assert loaded["trainer"] == {"step": 3}


class _Exploit:
    def __reduce__(self):
        return (os.system, ("touch PWNED",))


def test_pickle_that_runs_code_is_refused_and_not_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "evil.pt"
    torch.save({"format": "sparling-genomics-checkpoint-2", "model": _Exploit()}, path)
    with pytest.raises(CheckpointError, match="evil.pt: refused: .* could run code"):
        load_checkpoint(path)
    assert not (tmp_path / "PWNED").exists()
    # The same with a plain pickle file given as a checkpoint.
    path.write_bytes(pickle.dumps(_Exploit()))
    with pytest.raises(CheckpointError):
        load_checkpoint(path)
    assert not (tmp_path / "PWNED").exists()


def test_flipped_weight_byte_is_refused(tmp_path):
    path = tmp_path / "c.pt"
    save_checkpoint(path, _payload())
    data = bytearray(path.read_bytes())
    at = data.find(torch.tensor([2500.0]).numpy().tobytes())
    assert at > 0
    data[at] ^= 0x01  # torch.load alone accepts this file (weight 2500 -> 2500.0002)
    path.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match="do not match its digest"):
        load_checkpoint(path)


@pytest.mark.parametrize("keep", [0, 100, 0.5])
def test_truncated_checkpoint_is_refused(tmp_path, keep):
    path = tmp_path / "c.pt"
    save_checkpoint(path, _payload())
    data = path.read_bytes()
    path.write_bytes(data[: int(keep * len(data)) if isinstance(keep, float) else keep])
    with pytest.raises(CheckpointError, match="c.pt: "):
        load_checkpoint(path)


def test_foreign_torch_file_is_refused(tmp_path):
    path = tmp_path / "c.pt"
    torch.save({"w": torch.zeros(3)}, path)
    with pytest.raises(CheckpointError, match="not a sparling-genomics checkpoint"):
        load_checkpoint(path)
