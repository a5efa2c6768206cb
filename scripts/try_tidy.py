"""Tidy a finished run's motifs, then train on and print the test figures: ``push`` moves each
motif whose second firing cluster another motif owns off it, ``merge`` re-initialises each motif
whose main cluster repeats a more needed one's (what ``h`` read from it added to the kept one),
``control`` trains on untouched. An experiment on a run's final weights, not a benchmark: it is
how ``annealing.split_push`` and ``split_merge`` (``train/channel_split.py``) were first tried,
and needs the run's ``checkpoints/final.pt`` (kept on the machine that trained it, not
committed).

    PYTHONPATH=. .venv/bin/python scripts/try_tidy.py RUN MODE SAMPLES LR_SCALE

MODE: ``push``, ``merge``, ``control``, or ``push-all``: push as the rule does but with idle
motifs counted as owners and pushed too (the rule leaves them out).

Trains with Adam at LR_SCALE x the final phase's learning rate (constant), batches drawn from
indices past any run's, seed 0; the tidying uses the rule's own functions and thresholds.
Measured 2026-12-07 on the AMD host (docs/paper-domains.md, DigitCircle attempts 27 and 28).
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

from sparling_genomics.evaluate.evaluation import evaluate_model
from sparling_genomics.evaluate.firing_clusters import (
    firing_clusters,
    repeated_motifs,
    shared_pattern_motifs,
)
from sparling_genomics.evaluate.identifiability import IDLE_SHARE, channel_necessity, idle_channels
from sparling_genomics.models.reinit import reinit_motif
from sparling_genomics.train.channel_split import (
    MAX_COS,
    MIN_SHARE,
    OWNED_COS,
    SAME_COS,
    push_off,
)
from sparling_genomics.train.loading import load_run


def report(tag: str, model, task, device) -> None:
    """Test exact match, edit error, FNE/FPE/CE and perturbation consistency."""
    r = evaluate_model(model, task, "test", batch_size=250, device=device, perturbation=True)
    errors = {k: round(r.motif[k], 4) for k in ("fne", "fpe", "ce")}
    consistency = None if r.perturbation is None else round(r.perturbation["consistency"], 4)
    print(tag, "test", r.e2e, errors, "consistency", consistency, flush=True)


def main(run: Path, mode: str, samples: int, lr_scale: float) -> None:
    torch.manual_seed(0)
    loaded = load_run(run, device="cpu")
    config, task, model, device = loaded.config, loaded.task, loaded.model, loaded.device
    report("before", model, task, device)
    lr = config.train.lr * config.train.final_lr_scale * lr_scale
    optimizer = torch.optim.Adam(model.trainable_parameters(), lr=lr)
    alpha = channel_necessity(model, task, "val", batch_size=250, device=device)["alpha"]
    alpha = alpha[: model.learned]
    clusters = firing_clusters(model, task, "val", batch_size=250, device=device)
    if mode == "merge":
        for drop, keep in repeated_motifs(clusters, alpha, same_cos=SAME_COS):
            print("merge", drop, "into", keep, "alphas", alpha[drop], alpha[keep])
            reinit_motif(model, drop, merge=keep, optimizer=optimizer,
                         generator=torch.Generator().manual_seed(drop))  # fmt: skip
    elif mode in ("push", "push-all"):
        idle = set(idle_channels(dict(enumerate(alpha)), IDLE_SHARE, dead=True))
        idle = idle if mode == "push" else set()
        pushed = shared_pattern_motifs(clusters, max_cos=MAX_COS, min_share=MIN_SHARE,
                                       owned_cos=OWNED_COS, skip=idle)  # fmt: skip
        print("push", pushed)
        for motif in pushed:
            push_off(model, motif, clusters[motif]["centres"])
    if mode != "control":
        report(f"after {mode}", model, task, device)
    model.train()
    size = config.train.batch_size
    first, seen, step = 3_000_000 // size, 0, 0
    while seen < samples:
        batch = task.train_batch(first + step, size)
        loss = task.loss(model(batch.x), batch)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        seen, step = seen + size, step + 1
    report(f"after {seen} samples", model, task, device)


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), float(sys.argv[4]))
