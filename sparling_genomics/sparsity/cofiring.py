"""The co-firing penalty: a loss term on two channels being on in one place.

With ``model.sparse.cofire_weight`` w > 0 the training loss gains ``w * P``, where ``P`` is
the share of the motif layer's pairwise activation mass that falls on *different* channels
within +-``cofire_window`` (per spatial dim) of each other. With ``m_c`` channel c's local
maximum over that window, divided by its mean over the batch,

    P = sum_positions (sum_c m_c)^2 - sum_c m_c^2   /   sum_positions (sum_c m_c)^2,

which is 0 when no two channels are on within the window of each other anywhere in the batch,
and does not change when a channel's values are scaled (neither shrinking the layer nor one
loud channel drowning the others lowers it). The gradient lowers a channel's activations
where it shares a place and raises them where it is alone.

Why: on DigitCircle channels co-fire on a second digit (a spare channel on zeros and nines),
``h`` learns to read the pair, and a perturbation test that moves one channel fails. The
channel contest (``rules.py``) removes the co-firing at a stroke and broke the model every
time it was switched on (``docs/paper-domains.md``); a penalty from the dense phase on lets
``g`` and ``h`` move off co-firing together, with the gradient through every channel. At the
dense phase's densities a batch holds plenty of hits, so the estimate is stable there (the
reason ``rules.py`` gives for a contest, not a penalty, applies at densities of 1e-3).
Written here rather than taken from a library: it is six tensor operations on the layer's
own output. No preset sets it: at w = 1 from the start, DigitCircle (11 channels) learnt but
its validation accuracy swung between 0.4% and 92% during annealing where the same run
without it held 90-98% (``docs/paper-domains.md``); at w = 0.1 it held down to density 5e-4
and came apart below it (a spare channel given the same density as the others has nowhere to
fire alone).
"""

from __future__ import annotations

import torch

from .rules import local_max


def cofiring_penalty(motifs: torch.Tensor, window: int) -> torch.Tensor:
    """``P`` (module docstring) of motif activations ``(N, C, ...)`` (1-D or 2-D spatial,
    non-negative): a scalar in ``[0, 1 - 1/C]``, 0 for an all-zero layer."""
    m = local_max(motifs, window, "co-firing penalty") if window > 0 else motifs
    # Each channel over its own batch mean: a channel can not win by amplitude (an affine
    # BatchNorm scale grown on one channel would otherwise take P towards 0).
    spatial = tuple(range(2, m.dim()))
    m = m / m.mean(dim=(0, *spatial), keepdim=True).clamp_min(1e-12)
    total = m.sum(dim=1)
    pairs = total.square() - m.square().sum(dim=1)
    return pairs.sum() / total.square().sum().clamp_min(1e-12)


def cofiring_term(outputs: dict[str, torch.Tensor], options) -> torch.Tensor | float:
    """The loss term of a model's ``outputs`` under ``model.sparse`` settings ``options``
    (None: a model without a sparse layer): ``cofire_weight * P`` on ``outputs["motifs"]``,
    with the peak window when ``cofire_window`` is unset; 0.0 when off."""
    weight = 0.0 if options is None else float(options.cofire_weight or 0.0)
    if weight <= 0.0 or "motifs" not in outputs:
        return 0.0
    window = options.peak_window if options.cofire_window is None else options.cofire_window
    return weight * cofiring_penalty(outputs["motifs"], int(window))
