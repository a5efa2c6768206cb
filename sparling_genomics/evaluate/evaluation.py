"""Evaluate a model on a task split: end-to-end metrics, motif metrics, measured density."""

from __future__ import annotations

import torch

from ..models.sparling import SparlingModel
from ..tasks.base import Task
from .motif_metrics import MotifConfusion
from .sequence_metrics import edit_error, exact_match


@torch.no_grad()
def evaluate_model(
    model: SparlingModel,
    task: Task,
    split: str,
    *,
    batch_size: int,
    device: torch.device,
    motif_metrics: bool = True,
    perturbation: bool = False,
) -> dict:
    """Metrics of ``model`` on the fixed ``split`` set; restores the model's train mode.

    With ``perturbation`` (and a task that allows swaps) the result also holds
    ``'perturbation'``: the perturbation-consistency score (``evaluate.perturbation``).
    """
    was_training = model.training
    model.eval()
    predicted, truth = [], []
    confusion = None
    active = 0
    positions = 0
    try:
        for batch in task.eval_batches(split, batch_size):
            outputs = model(batch.x.to(device))
            predicted.extend(task.decode(outputs))
            truth.extend(batch.targets)
            motifs = outputs["motifs"]
            active += int((motifs > 0).sum())
            positions += motifs.numel()
            if motif_metrics and batch.cells:
                if confusion is None:
                    confusion = MotifConfusion(motifs.shape[1], len(task.symbols))
                confusion.add_batch(motifs.float().cpu().numpy(), batch.cells)
    finally:
        model.train(was_training)
    result = {
        "e2e": {
            "exact_match": exact_match(predicted, truth),
            "edit_error": edit_error(predicted, truth),
        },
        "measured_density": active / positions if positions else 0.0,
        "samples": len(truth),
    }
    if confusion is not None:
        result["motif"] = confusion.summary()
        result["motif"]["ce_matching"] = task.ce_matching
        many = task.ce_matching == "many_to_one"
        if many:  # the paper's CE for LaTeX and audio
            result["motif"]["ce"] = result["motif"]["ce_many_to_one"]
        result["motif"]["channel_to_symbol"] = {
            str(c): task.symbols[s] for c, s in confusion.channel_to_symbol(many).items()
        }
        if perturbation and task.swappable_symbols():
            from .perturbation import perturbation_consistency

            result["perturbation"] = perturbation_consistency(
                model, task, split, confusion.symbol_to_channel(), confusion.symbol_channels(),
                batch_size=batch_size, device=device,
            )  # fmt: skip
    return result
