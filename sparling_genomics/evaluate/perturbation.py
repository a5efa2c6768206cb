"""Perturbation consistency (the Sparling paper's test that channels *mean* their symbols).

For a sample the model reads correctly, take one true motif occurrence of symbol ``s``, found
by channel ``c``; move its activations inside its cell from channel ``c`` to the channel
``c'`` that stands for another symbol ``s'`` (the channel that most often finds ``s'``).
The perturbation is consistent when ``h`` now outputs exactly the true string with that one
occurrence changed from ``s`` to ``s'`` (the task says what that string is:
``Task.swap_output``). The score is the fraction of consistent perturbations. Reported by
the paper: DigitCircle 99.3%, LaTeX 86.1%, audio 93.4%.
"""

from __future__ import annotations

import numpy as np
import torch

from ..models.sparling import SparlingModel
from ..tasks.base import Task


@torch.no_grad()
def perturbation_consistency(
    model: SparlingModel,
    task: Task,
    split: str,
    symbol_to_channel: dict[int, int],
    *,
    batch_size: int,
    device: torch.device,
    seed: int = 0,
) -> dict:
    """``{'consistency', 'perturbations', 'skipped'}`` over the samples of ``split``.

    One perturbation per correctly read sample that has a found motif with a swap the task
    allows; the occurrence and the new symbol are drawn from ``seed``.
    """
    rng = np.random.default_rng(seed)
    was_training = model.training
    model.eval()
    consistent = tried = skipped = 0
    try:
        for batch in task.eval_batches(split, batch_size):
            outputs = model(batch.x.to(device))
            motifs = outputs["motifs"]
            predicted = task.decode(outputs)
            perturbed, expected = [], []
            for i, (pred, truth) in enumerate(zip(predicted, batch.targets)):
                if list(pred) != list(truth) or not batch.cells:
                    continue
                change = _pick_swap(rng, task, motifs[i], batch.cells[i], truth,
                                    symbol_to_channel)  # fmt: skip
                if change is None:
                    skipped += 1
                    continue
                region, channel, new_channel, want = change
                m = motifs[i].clone()
                index = (slice(None),) + region
                moved = m[index][channel].clone()
                m[index][channel] = 0  # views: these write into m
                m[index][new_channel] = torch.maximum(m[index][new_channel], moved)
                perturbed.append(m)
                expected.append(want)
            if perturbed:
                logits = model.h(torch.stack(perturbed))
                for got, want in zip(task.decode({"logits": logits}), expected):
                    consistent += list(got) == list(want)
                    tried += 1
    finally:
        model.train(was_training)
    return {
        "consistency": consistent / tried if tried else None,
        "perturbations": tried,
        "skipped": skipped,
    }


def _pick_swap(rng, task, motif_map, cells, truth, symbol_to_channel):
    """(cell slices, channel, new channel, expected output) of one random allowed swap."""
    order = rng.permutation(len(cells))
    for j in order:
        region, symbol = cells[j]
        values = motif_map[(slice(None),) + tuple(region)].flatten(1).amax(dim=1)
        if not bool((values > 0).any()):
            continue  # a missed motif: nothing to move
        channel = int(values.argmax())
        choices = [s for s in task.swappable_symbols() if s != symbol and s in symbol_to_channel]
        for new_symbol in rng.permutation(choices) if choices else []:
            new_channel = symbol_to_channel[int(new_symbol)]
            if new_channel == channel:
                continue
            want = task.swap_output(truth, cells, int(j), int(new_symbol))
            if want is not None:
                return tuple(region), channel, new_channel, want
    return None
