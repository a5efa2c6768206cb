"""Wasted motifs of finished splicing runs, by the resampling rule's own criteria
(``train/channel_resample.py``): never-needed motifs (alpha 0, and idle by the identifiability
rule) and near-copies on the first 64 validation windows; test mean top-k from metrics.json.

    python scripts/wasted_motifs.py RUN [RUN ...]
"""

import json
import sys
from pathlib import Path

from sparling_genomics.evaluate.identifiability import SITE_WINDOWS, channel_necessity
from sparling_genomics.export.copies import near_copies
from sparling_genomics.train.channel_resample import motif_pwms_and_sites, pick_wasted
from sparling_genomics.train.loading import load_run

for run in sys.argv[1:]:
    config, task, model, device = load_run(Path(run))
    alpha = channel_necessity(model, task, "val", batch_size=64, device=device,
                              samples=SITE_WINDOWS)["alpha"][: model.learned]  # fmt: skip
    pwms, sites = motif_pwms_and_sites(model, task, "val", samples=SITE_WINDOWS, batch_size=64,
                                       device=device)  # fmt: skip
    found = near_copies(pwms, {m: sites[m] for m in pwms})
    nsites = [len(sites[m][0]) for m in range(model.learned)]
    picked = pick_wasted(alpha, found["groups"], nsites, budget=model.learned)
    metrics = json.loads((Path(run) / "metrics.json").read_text())
    resample = (metrics.get("annealing") or {}).get("resample") or {}
    print(run, "mean_topk", metrics["e2e"]["mean_topk"], "wall", metrics.get("wall_seconds"),
          "never needed", sum(1 for a in alpha if a == 0),
          "idle", sum(1 for p in picked if p[2] == "never needed"),
          "copies", found["copies"], "wasted", len(picked), "resample", resample.get("done"))
