"""Split the busiest motif of a finished planted run into its idle one, then train on and print
validation figures every 25k samples and the test figures at the end (or train on without a
split, the control). An experiment on a run's final weights, not a benchmark: it is how the
idle-split rule (``train/channel_split.py``) was first tried, and needs the run's
``checkpoints/final.pt`` (kept on the machine that trained it, not committed).

    PYTHONPATH=. .venv/bin/python scripts/try_split.py RUN split|control SAMPLES

Trains at the run's final density with Adam at the final phase's learning rate (constant),
batches drawn from indices past any run's, seed 0. Measured 2026-12-04 on the AMD host on
``bench_runs/archive/planted_i24i/sparling_seed2`` (test exact match 78.1%, validation 0.791):
split, validation 0.914 / 0.961 / 0.964 after 25k / 50k / 75k samples, test 97.1% after 150k; a
first version of this script (the noise from torch's global generator) got test 95.4%, and
without the split (control, 100k) 77.4%. On ``draw2_seed0`` (that first version): validation
0.708 -> 0.851 after 100k samples.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import torch

from sparling_genomics.evaluate.evaluation import evaluate_model
from sparling_genomics.evaluate.identifiability import channel_necessity
from sparling_genomics.models.split import apply_split
from sparling_genomics.train.channel_split import NOISE, pick_split
from sparling_genomics.train.loading import load_run


def report(tag: str, model, task, device) -> list[float]:
    """Validation exact match, FNE/FPE/CE and each motif's alpha; the alphas."""
    alpha = channel_necessity(model, task, "val", batch_size=500, device=device)["alpha"]
    result = evaluate_model(model, task, "val", batch_size=500, device=device)
    errors = {k: round(v, 4) for k, v in (result.motif or {}).items() if k in ("fne", "fpe", "ce")}
    print(tag, "val", round(result.e2e[task.accuracy_metric], 4), errors,
          "alpha", [round(a, 3) for a in alpha], flush=True)  # fmt: skip
    return alpha[: model.learned]


def main(run: Path, mode: str, samples: int) -> None:
    torch.manual_seed(0)
    loaded = load_run(run, device="cpu")
    config, task, model, device = loaded.config, loaded.task, loaded.model, loaded.device
    alpha = report("before", model, task, device)
    optimizer = torch.optim.Adam(
        model.trainable_parameters(), lr=config.train.lr * config.train.final_lr_scale
    )
    pick = pick_split(alpha)
    print("split (source, target):", pick)
    if mode == "split" and pick is not None:
        apply_split(model, *pick, optimizer=optimizer, noise=NOISE,
                    generator=torch.Generator().manual_seed(0))  # fmt: skip
        report("after split", model, task, device)
    model.train()
    first, seen, step, started = 3_000_000 // 64, 0, 0, time.time()
    while seen < samples:
        batch = task.train_batch(first + step, 64)
        loss = task.loss(model(batch.x), batch)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        seen, step = seen + 64, step + 1
        if step % (25_000 // 64) == 0:
            report(f"{seen} samples {time.time() - started:.0f}s", model, task, device)
    result = evaluate_model(model, task, "test", batch_size=500, device=device)
    print("test", result.e2e[task.accuracy_metric], result.motif)


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]))
