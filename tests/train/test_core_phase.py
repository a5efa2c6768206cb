"""The core phase's calibration: a core channel's density raised to reach a site recall."""

from __future__ import annotations

import json

import torch

from sparling_genomics.sparsity.layer import SpatialSparsity
from sparling_genomics.train.core_phase import (
    CORE_DENSITY_CAP,
    CORE_DENSITY_STEP,
    density_for_recall,
    site_share,
    train_core,
)
from sparling_genomics.train.run_config import resolve_config


def _logits_and_sites(seed: int = 0):
    """(N, 1, L + 40) logits and (N, L) sites: sites every 100 positions, their logits
    spread so that no single threshold catches them all before the background's tail."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(64, 1, 1040, generator=g)
    sites = torch.zeros(64, 1000, dtype=torch.bool)
    sites[:, 50::100] = True
    x[:, 0, 20:1020][sites] += torch.linspace(2.0, 8.0, int(sites.sum()))
    return x, sites


def test_density_for_recall_is_the_first_step_that_reaches_the_recall():
    x, sites = _logits_and_sites()
    layer = SpatialSparsity(1, 0.001, peak_window=5, peak_below=1.0)
    density = density_for_recall(layer, x, sites, 0.8)
    assert site_share(layer, x, sites) >= 0.8 and density > 0.001
    below = SpatialSparsity(1, density / CORE_DENSITY_STEP, peak_window=5, peak_below=1.0)
    below.calibrate(x)
    assert site_share(below, x, sites) < 0.8  # one step less misses the recall
    # Out of reach: the cap, not a density past it.
    capped = SpatialSparsity(1, 0.001, peak_window=5, peak_below=1.0)
    assert density_for_recall(capped, x, sites, 0.99999) <= CORE_DENSITY_CAP


def test_core_site_recall_raises_the_core_densities_with_peaks_kept(tiny_dataset, tmp_path):
    from sparling_genomics.config import dump_yaml
    from sparling_genomics.rundir import create_run_directory, log_value
    from sparling_genomics.train.trainer import Trainer

    overrides = [{"data": {"dataset": str(tiny_dataset)}, "model": {"core_site_recall": 0.9}}]
    config = resolve_config("splicing", "tiny", overrides=overrides)
    run = tmp_path / "run"
    trainer = Trainer(config, run, progress=False)
    create_run_directory(run, dump_yaml(config))
    frequencies = trainer.task.site_frequencies()
    train_core(trainer)
    record = [json.loads(line) for line in (run / "train_log.jsonl").read_text().splitlines()][-1]
    for layer, f, share in zip(trainer.model.core_sparse, frequencies,
                               record["core_site_shares"]):  # fmt: skip
        assert layer.density >= f * 0.999 and layer.peak_below == 1.0
        assert share >= 0.9 or layer.density * CORE_DENSITY_STEP > CORE_DENSITY_CAP
    densities = [layer.density for layer in trainer.model.core_sparse]
    assert record["core_densities"] == log_value(densities)  # the log keeps 6 digits
    # One call per site: no two core calls within the peak window of each other.
    out = trainer.model.eval()(trainer.task.train_batch(0, 4).x)["core_motifs"]
    r = config.model.sparse.peak_window
    for row in (out > 0).reshape(-1, out.shape[-1]):
        at = torch.nonzero(row).flatten()
        assert bool((at.diff() > r).all())
