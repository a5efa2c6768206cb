"""Each motif family's effect on the prediction, exact through the sparse layer.

``h`` reads nothing but the sparse layer (and, with a supplied core, the core's residual), so
zeroing a family's channels at every position removes exactly what the family tells ``h``: no
attribution method, no baseline input. On a site task's split, per family:

* the site metrics with the family silenced (mean top-k, each class's top-k and PR-AUC) and
  their drop from the intact model's;
* its share of each class's log-odds at that class's true sites: the mean change of
  ``logit[class] - logit[background]`` at the annotated sites when the family is silenced
  (negative: the family supports the sites); ``effect`` is that drop averaged over the
  classes, in nats, the figure families are ranked by (it moves smoothly, where a top-k
  changes only when a site crosses the k-th score);
* ``measurable``: False when silencing the family changes neither the mean top-k by
  :data:`MIN_TOPK_DROP` nor any class's true-site log-odds by :data:`MIN_LOG_ODDS` (the
  family is then labelled "no measurable effect" in the report and ``motifs.json``).

The core's families (its own channels) are measured the same way. Written here: attribution
libraries (captum, tangermeme's ``deep_lift_shap``) attribute to input bases, not to a layer's
channel groups, and silencing needs no approximation.
"""

from __future__ import annotations

import numpy as np
import torch

from ..models.modes import eval_mode
from ..tasks.base import Task, first_eval_batches
from .site_metrics import site_metrics

#: A family is measurable when silencing it drops the mean top-k by this much ...
MIN_TOPK_DROP = 0.001
#: ... or moves some class's mean true-site log-odds by this many nats.
MIN_LOG_ODDS = 0.01
#: Windows of the split scored (all of a splicing test block is thousands; effects are
#: averages over tens of thousands of sites already at this count).
WINDOWS = 512


def _log_odds_at_sites(logits: torch.Tensor, labels: np.ndarray, n_classes: int) -> list:
    """Per site class c (1..C): ``logit[c] - logit[0]`` at the positions labelled c."""
    flat = logits.float().permute(0, 2, 1).reshape(-1, logits.shape[1]).cpu().numpy()
    return [flat[labels == c, c] - flat[labels == c, 0] for c in range(1, n_classes)]


@torch.no_grad()
def family_effects(
    model,
    task: Task,
    split: str,
    families: dict[str, list[int]],
    *,
    batch_size: int,
    device: torch.device,
    windows: int = WINDOWS,
) -> dict:
    """The intact model's site metrics and, per family (name -> channels of the layer ``h``
    reads), the metrics with those channels zeroed, their drops, the mean true-site log-odds
    change per class, ``effect`` and ``measurable`` (see the module's docstring); over the
    first ``windows`` windows of ``split``. Restores the model's train mode."""
    if task.scoring != "sites":
        raise ValueError(f"task {task.name!r} is not scored per position: no family effects")
    classes = list(task.classes)
    names = list(families)
    probs: dict[str | None, list[np.ndarray]] = {n: [] for n in [None, *names]}
    odds: dict[str | None, list[list[np.ndarray]]] = {n: [] for n in [None, *names]}
    labels: list[np.ndarray] = []
    seen = 0
    with eval_mode(model):
        for batch in first_eval_batches(task, split, batch_size, windows):
            x = batch.x.to(device)
            layer, residual = model.layer_and_residual(x)
            y = batch.y.reshape(-1).numpy()
            keep = y >= 0
            labels.append(y[keep].astype(np.int16))
            for name in [None, *names]:
                edited = layer
                if name is not None:
                    edited = layer.clone()
                    edited[:, families[name]] = 0
                logits = model.read(edited, residual)
                p, _ = task.site_probabilities({"logits": logits}, batch)
                probs[name].append(np.asarray(p[keep], dtype=np.float32))
                odds[name].append(_log_odds_at_sites(logits, y, len(classes)))
            seen += len(batch)
    truth = np.concatenate(labels)
    intact = site_metrics(np.concatenate(probs.pop(None)), truth, classes)
    base_odds = [np.concatenate(parts) for parts in zip(*odds.pop(None))]
    out = {"windows": seen, "sites": {c: int((truth == i).sum()) for i, c in
                                      enumerate(classes) if i},  # fmt: skip
           "intact": _metrics(intact, classes), "families": {}}
    for name in names:
        silenced = site_metrics(np.concatenate(probs.pop(name)), truth, classes)
        after = _metrics(silenced, classes)
        change = {c: _mean_change(np.concatenate(parts), base) for c, parts, base in
                  zip(classes[1:], zip(*odds.pop(name)), base_odds)}  # fmt: skip
        drop = {k: _drop(out["intact"][k], after[k]) for k in after}
        known = [v for v in change.values() if v is not None]
        effect = -float(np.mean(known)) if known else 0.0
        measurable = (drop["mean_topk"] or 0.0) >= MIN_TOPK_DROP or any(
            abs(v) >= MIN_LOG_ODDS for v in known)  # fmt: skip
        out["families"][name] = {"channels": [int(c) for c in families[name]],
                                 "silenced": after, "drop": drop,
                                 "log_odds_change": change, "effect": round(effect, 5),
                                 "measurable": bool(measurable)}  # fmt: skip
    return out


def rank_by_effect(effects: dict) -> list[str]:
    """Family names by effect, largest first (ties: by name)."""
    families = effects["families"]
    return sorted(families, key=lambda n: (-families[n]["effect"], n))


def effect_shares(effects: dict) -> dict[str, float]:
    """Each family's share of the summed positive effect (0 for a family with none)."""
    positive = {n: max(0.0, f["effect"]) for n, f in effects["families"].items()}
    total = sum(positive.values())
    return {n: (v / total if total > 0 else 0.0) for n, v in positive.items()}


def _metrics(sites: dict, classes: list[str]) -> dict:
    out = {"mean_topk": sites["mean_topk"]}
    for name in classes[1:]:
        out[f"{name}_topk"] = sites[name]["topk"]
        out[f"{name}_pr_auc"] = sites[name]["pr_auc"]
    return out


def _drop(before, after) -> float | None:
    return None if before is None or after is None else round(before - after, 6)


def _mean_change(after: np.ndarray, before: np.ndarray) -> float | None:
    return round(float(np.mean(after - before)), 6) if len(before) else None


