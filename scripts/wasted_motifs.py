"""Wasted motifs of finished splicing runs, by the resampling rule's own criteria
(``train/channel_resample.py``): never-needed motifs (alpha 0, and idle by the identifiability
rule) and near-copies on the first 64 validation windows; test mean top-k from metrics.json;
and from the run's identifiability check on the test split, each learned channel's firing
share (its density over the annealed density: the shared budget's split) with the channels
that never change the output starred, lowest share first.

    python scripts/wasted_motifs.py RUN [RUN ...]
"""

import json
import sys
from pathlib import Path

from sparling_genomics.train.channel_resample import wasted_motifs
from sparling_genomics.train.loading import load_run

for run in sys.argv[1:]:
    loaded = load_run(Path(run))
    found = wasted_motifs(loaded.model, loaded.task, batch_size=64, device=loaded.device,
                          budget=loaded.model.learned)  # fmt: skip
    picked = found["picked"]
    metrics = json.loads((Path(run) / "metrics.json").read_text())
    resample = (metrics.get("annealing") or {}).get("resample") or {}
    print(run, "mean_topk", metrics["e2e"]["mean_topk"], "wall", metrics.get("wall_seconds"),
          "never needed", sum(1 for a in found["alpha"] if a == 0),
          "idle", sum(1 for p in picked if p[2] == "never needed"),
          "copies", found["copies"]["copies"], "wasted", len(picked),
          "resample", resample.get("done"))
    block = metrics.get("identifiability") or {}
    if block.get("channels"):
        density, target = block["channels"]["density"], metrics["density"]
        never = set(block["conditions"]["necessity"]["unnecessary"])
        shares = sorted((d / target, c) for c, d in density.items() if c.isdigit())
        print("  shares:", " ".join(f"{c}:{x:.2f}{'*' if c in never else ''}"
                                    for x, c in shares))  # fmt: skip
