"""Composition or motif: does a family fire as often on sequence of the same dinucleotide
composition with its words broken?

Each window of the split is dinucleotide-shuffled (tangermeme's ``dinucleotide_shuffle``: an
Euler path through the window's own dinucleotide counts, so its base and dinucleotide
composition, GC and U-richness included, are kept exactly; N columns stay N), and each
family's active positions per kb are counted on the real and on the shuffled windows. A
sequence motif fires far less once its words are broken; a channel that reads composition
(a U-rich intron, a GC shift) fires about as often. ``ratio`` is the shuffled rate over the
real one, and a family is labelled ``composition`` when it is at least
:data:`COMPOSITION_RATIO`, else ``motif``.

A dinucleotide shuffle keeps every 2-mer, so a short word fires as often on it as a
composition channel does: on TAIR10 chr1 (three seeds of the default, 2026-12-06) every
family's ratio was 0.5-1.3, the core's ``agGT`` and ``tgcAG`` included. :func:`refine_label`
therefore splits the families the shuffle keeps by their representative:
``short word`` when it has at least :data:`WORD_COLUMNS` columns carrying
:data:`WORD_BITS` bits a column on average (a GT or AG word with its context), else
``composition`` (a weak preference spread over many columns, such as the U-rich intron
family's ``nnTaannnnnnnnn``, 0.42 bits a column, or a single base).
"""

from __future__ import annotations

import numpy as np
import torch

from ..models.modes import eval_mode
from ..tasks.base import Task, first_eval_batches

#: A family firing at least half as often on dinucleotide-shuffled windows reads composition.
COMPOSITION_RATIO = 0.5
#: A family the shuffle keeps is a short word when its representative has at least this many
#: columns at this many bits a column on average, else composition.
WORD_COLUMNS = 2
WORD_BITS = 0.5
#: Windows of the split shuffled (a splicing window is 5,000 bases: 256 hold 1.3 Mb).
WINDOWS = 256


@torch.no_grad()
def composition_control(
    model,
    task: Task,
    split: str,
    families: dict[str, list[int]],
    *,
    batch_size: int,
    device: torch.device,
    windows: int = WINDOWS,
    seed: int = 0,
) -> dict:
    """Per family (name -> channels of the layer ``h`` reads): its active positions per kb on
    the first ``windows`` windows of ``split`` and on their dinucleotide shuffles, the ratio
    and the label (see the module's docstring). Restores the model's train mode."""
    from tangermeme.ersatz import dinucleotide_shuffle

    names = list(families)
    real = np.zeros(len(names), np.int64)
    shuffled = np.zeros(len(names), np.int64)
    bases = seen = 0
    with eval_mode(model):
        for batch in first_eval_batches(task, split, batch_size, windows):
            x = batch.x
            mixed = dinucleotide_shuffle(x, n=1, random_state=seed + seen, allow_N=True)[:, 0]
            for counts, inputs in ((real, x), (shuffled, mixed)):
                layer, _ = model.layer_and_residual(inputs.to(device))
                active = (layer > 0).sum(dim=(0, 2)).cpu().numpy()  # per layer channel
                counts += [int(active[families[n]].sum()) for n in names]
            bases += int(x.shape[0] * x.shape[-1])
            seen += len(x)
    out = {"windows": seen, "bases": bases, "threshold": COMPOSITION_RATIO, "families": {}}
    for i, name in enumerate(names):
        ratio = float(shuffled[i] / real[i]) if real[i] else None
        out["families"][name] = {
            "real_per_kb": round(1000 * real[i] / max(bases, 1), 4),
            "shuffled_per_kb": round(1000 * shuffled[i] / max(bases, 1), 4),
            "ratio": None if ratio is None else round(ratio, 4),
            "label": None if ratio is None else
            ("composition" if ratio >= COMPOSITION_RATIO else "motif"),
        }  # fmt: skip
    return out


def refine_label(label: str | None, bits: float | None, width: int | None) -> str | None:
    """``composition_control``'s label with the representative's ``bits`` over ``width``
    columns: a family the shuffle keeps is a ``short word`` or ``composition`` (see the
    module's docstring); ``motif`` and None pass through."""
    if label != "composition" or not width or bits is None:
        return label
    return "short word" if width >= WORD_COLUMNS and bits / width >= WORD_BITS else label
