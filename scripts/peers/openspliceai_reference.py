"""OpenSpliceAI's own module on random inputs, for checking our loader (run by the peers venv).

Writes ``OUT/openspliceai{F}.pt`` (a state dict of OpenSpliceAI's ``SpliceAI`` for flank F,
its batch-norm statistics randomised so they matter) and ``OUT/openspliceai{F}.npz`` (inputs
and OpenSpliceAI's outputs); the peers benchmark loads the state dict into
``benchmarks/spliceai_net.SpliceAINet`` and compares.

    build/peers/.venv/bin/python scripts/peers/openspliceai_reference.py --flank 400 --out DIR
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import torch
from openspliceai.train.train import initialize_model_and_optim


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flank", type=int, required=True, choices=[80, 400, 2000, 10000])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--length", type=int, default=200)
    args = parser.parse_args()
    torch.manual_seed(0)
    model, *_ = initialize_model_and_optim(torch.device("cpu"), args.flank, 10, "MultiStepLR")
    for module in model.modules():
        if isinstance(module, torch.nn.BatchNorm1d):
            module.running_mean.normal_(0, 0.3)
            module.running_var.uniform_(0.5, 2.0)
    model.eval()
    rng = np.random.default_rng(0)
    codes = rng.integers(0, 5, size=(2, args.flank + args.length))  # 4: N, all zeros
    eye = np.concatenate([np.eye(4, dtype=np.float32), np.zeros((1, 4), dtype=np.float32)])
    x = torch.from_numpy(eye[codes].transpose(0, 2, 1).copy())
    with torch.no_grad():
        y = model(x).numpy()
    args.out.mkdir(parents=True, exist_ok=True)
    torch.save(model.state_dict(), args.out / f"openspliceai{args.flank}.pt")
    np.savez_compressed(args.out / f"openspliceai{args.flank}.npz", codes=codes, outputs=y)


if __name__ == "__main__":
    main()
