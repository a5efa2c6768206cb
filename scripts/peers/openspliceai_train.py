"""OpenSpliceAI's training, within a wall-clock budget and resumable (run by the peers venv).

``openspliceai train`` runs a fixed number of epochs and saves a model only at an epoch's end;
it has no time budget and no resume. The peers benchmark needs both: OpenSpliceAI trained for
the same wall time as our baseline, and trained for as long as its defaults ask (10 epochs,
hours on 2 cores) across sessions. This driver runs OpenSpliceAI's own pieces, unchanged: its
model and AdamW optimizer and LR scheduler for the flank (``initialize_model_and_optim``), its
shards and batches (``load_data_from_shard``, ``clip_datapoints``), its loss
(``categorical_crossentropy_2d``), its shard shuffling per epoch and its scheduler stepping by
epoch fraction. Its per-epoch validation and test passes are left out (they change no weight;
with early stopping off, its default, the last epoch's model is the result).

State (model, optimizer, scheduler, epoch, shard, batch, seconds) is saved every
``--checkpoint-seconds`` and at the budget, to ``OUT/state.pt``, so a killed run continues
where it stopped; ``--start-from DIR`` begins a new run from DIR's saved state (a run stopped
by its budget, with the same flank, epochs and seed: the same schedule, so the new run is that
run continued to its epochs, its seconds included); ``OUT/model_epoch{k}.pt`` after each
epoch and ``OUT/model.pt`` (a state dict, the format of OpenSpliceAI's ``model_*.pt``) at the
end; ``OUT/progress.json`` records samples, batches, epochs and seconds.

    build/peers/.venv/bin/python scripts/peers/openspliceai_train.py --data DIR --flank 400 \
        --out OUT --max-seconds 1380 [--epochs 10] [--seed 42] [--start-from DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import h5py
import numpy as np
import torch
from openspliceai.constants import CL_max
from openspliceai.train.train import initialize_model_and_optim
from openspliceai.train_base.utils import (
    categorical_crossentropy_2d,
    clip_datapoints,
    load_data_from_shard,
)


def save_atomic(obj, path: Path) -> None:
    tmp = path.with_name(path.name + ".tmp")
    torch.save(obj, tmp)
    os.replace(tmp, path)


def write_json(obj, path: Path) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(obj, indent=1) + "\n")
    os.replace(tmp, path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="Folder of dataset_train.h5")
    parser.add_argument("--flank", type=int, required=True, choices=[80, 400, 2000, 10000])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--max-seconds", type=float, default=0.0, help="0: no budget")
    parser.add_argument("--epochs", type=int, default=10, help="OpenSpliceAI's default: 10")
    parser.add_argument("--seed", type=int, default=42, help="OpenSpliceAI's default: 42")
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--checkpoint-seconds", type=float, default=300.0)
    parser.add_argument("--start-from", type=Path, default=None,
                        help="A budget-stopped run's folder to continue (when OUT has no state)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    args.out.mkdir(parents=True, exist_ok=True)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(args.seed)
    model, optimizer, scheduler, params = initialize_model_and_optim(
        device, args.flank, args.epochs, "MultiStepLR")
    params["RANDOM_SEED"] = args.seed
    h5 = h5py.File(args.data / "dataset_train.h5", "r")
    shards = np.arange(len(h5.keys()) // 2)
    batch_size = params["BATCH_SIZE"]
    sizes = {int(s): len(load_data_from_shard(h5, s, device, batch_size, params)) for s in shards}
    per_epoch = sum(sizes.values())
    state_path = args.out / "state.pt"
    progress = {"epoch": 0, "shard": 0, "batch": 0, "global_batch": 0, "samples": 0,
                "seconds": 0.0, "losses": [], "batches_per_epoch": per_epoch,
                "batch_size": batch_size, "flank": args.flank, "epochs": args.epochs,
                "seed": args.seed, "finished": False, "stopped_by": None}
    start = state_path if state_path.exists() else None
    if start is None and args.start_from is not None and (args.start_from / "state.pt").exists():
        start = args.start_from / "state.pt"
    if start is not None:
        state = torch.load(start, map_location=device, weights_only=False)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        progress = state["progress"]
        torch.set_rng_state(state["torch_rng"])
        same = {k: progress[k] for k in ("flank", "epochs", "seed")}
        if same != {"flank": args.flank, "epochs": args.epochs, "seed": args.seed}:
            raise SystemExit(f"{start}: trained with {same}, not this run's settings")
        if start != state_path:  # continue a budget-stopped run under this folder
            if progress["stopped_by"] != "max_seconds":
                raise SystemExit(f"{start}: not a budget-stopped run ({progress['stopped_by']})")
            progress |= {"finished": False, "stopped_by": None,
                         "started_from": str(args.start_from)}
    if progress["finished"]:
        if not (args.out / "model.pt").exists():  # deleted since: the state still holds it
            save_atomic(model.state_dict(), args.out / "model.pt")
        print(f"{args.out}: finished before ({progress['stopped_by']})")
        return
    began = time.perf_counter() - progress["seconds"]
    last_save = time.perf_counter()

    def save(stopped_by=None):
        progress["seconds"] = round(time.perf_counter() - began, 2)
        if stopped_by:
            progress["finished"], progress["stopped_by"] = True, stopped_by
        save_atomic({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                     "scheduler": scheduler.state_dict(), "progress": progress,
                     "torch_rng": torch.get_rng_state()}, state_path)
        if stopped_by:
            save_atomic(model.state_dict(), args.out / "model.pt")
        write_json(progress, args.out / "progress.json")

    model.train()
    while progress["epoch"] < args.epochs:
        np.random.seed(params["RANDOM_SEED"])  # as OpenSpliceAI: the same shard order each epoch
        order = np.random.choice(shards, size=len(shards), replace=False)
        for k in range(progress["shard"], len(order)):
            loader = load_data_from_shard(h5, order[k], device, batch_size, params, shuffle=True)
            for b, (dna, labels) in enumerate(loader):
                if b < progress["batch"]:
                    continue  # resumed inside this shard: its first batches were trained
                dna, labels = clip_datapoints(dna.to(device), labels.to(device), params["CL"],
                                              CL_max, params["N_GPUS"])
                optimizer.zero_grad()
                loss = categorical_crossentropy_2d(labels, model(dna))
                loss.backward()
                optimizer.step()
                scheduler.step(progress["global_batch"] / per_epoch)
                progress["global_batch"] += 1
                progress["batch"] = b + 1
                progress["samples"] += len(dna)
                progress["losses"].append(round(float(loss.item()), 6))
                now = time.perf_counter()
                if args.max_seconds and now - began >= args.max_seconds:
                    save("max_seconds")
                    print(f"budget reached: {progress['samples']} samples")
                    return
                if now - last_save >= args.checkpoint_seconds:
                    save()
                    last_save = now
            progress["shard"], progress["batch"] = k + 1, 0
        progress["epoch"] += 1
        progress["shard"] = 0
        save_atomic(model.state_dict(), args.out / f"model_epoch{progress['epoch']}.pt")
        save()
    save("epochs")


if __name__ == "__main__":
    main()
