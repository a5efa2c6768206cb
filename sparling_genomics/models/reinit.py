"""Re-initialising a wasted motif of a Sparling model: the edit behind the channel-edit
rule's merge (``train/rules/channel_edit.py``).

A learned motif is wasted when ``h`` never needs it or when it repeats another motif. The
remedy is the dormant-neuron one of ReDo
(Sokar et al., 2023, "The dormant neuron phenomenon in deep reinforcement learning") and of
sparse-autoencoder training's resampling of dead features: the motif's incoming weights (g's
output filter and bias) are drawn afresh from the layer's own initialisation, its outgoing
weights (``h``'s input weights from it) are set to zero, and the optimizer's moments of both
are cleared. With its outgoing weights at zero the output does not change at the edit, so the
model keeps its accuracy while the fresh motif finds something of its own to fire at.

A repeat's outgoing weights are first added to those of the motif it repeats (``merge``): the
two fire at the same kind of site, so the kept one carries what ``h`` read from both.

The sparse layer forgets the motif's statistics: its BatchNorm running mean and variance
return to 0 and 1 and its thresholds are estimated afresh from the next batches (as after a
density step: ``SpatialSparsity.density``), so the new motif starts at the layer's density.
Written here because no library edits a model's channels this way.
"""

from __future__ import annotations

import math

import torch

from ..errors import ConfigError
from ..sparsity.blocks import block_channels
from .split import motif_output


def head_input_weight(model) -> torch.Tensor:
    """``h``'s input weights (output, motif-layer channel, ...): what ``h`` reads from each
    channel; a ConfigError for a head without a first convolution ``inp`` over the layer."""
    inp = getattr(model.h, "inp", None)
    channels = model.g.motifs + (0 if model.core is None else len(model.core.classes))
    weight = getattr(inp, "weight", None)
    if weight is None or weight.dim() < 2 or weight.shape[1] != channels:
        raise ConfigError(
            f"re-initialising a motif needs a head whose first layer `inp` reads the motif "
            f"layer's {channels} channels; {type(model.h).__name__} has none"
        )
    return weight


def check_reinit(model) -> None:
    """Fail (ConfigError) where a part of ``model`` cannot be edited by :func:`reinit_motif`."""
    motif_output(model, "re-initialising a motif")
    head_input_weight(model)


def _clear_moments(optimizer: torch.optim.Optimizer | None, tensor: torch.Tensor, dim: int,
                   rows: list[int]) -> None:  # fmt: skip
    """Zero the optimizer's per-element state (Adam's moments) of ``tensor``'s ``rows``."""
    state = {} if optimizer is None else optimizer.state.get(tensor, {})
    index = torch.tensor(rows, device=tensor.device)
    for value in state.values():
        if torch.is_tensor(value) and value.shape == tensor.shape:
            value.index_fill_(dim, index.to(value.device), 0.0)


@torch.no_grad()
def reinit_motif(
    model,
    motif: int,
    *,
    merge: int | None = None,
    optimizer: torch.optim.Optimizer | None = None,
    generator: torch.Generator | None = None,
) -> None:
    """Re-initialise learned motif ``motif`` (a channel, or a block) of ``model`` in place:
    fresh incoming weights, zero outgoing weights (added first to motif ``merge``'s when
    given), cleared optimizer moments and sparse-layer statistics (see the module)."""
    learned, b = model.learned, model.block_size
    if not 0 <= motif < learned or merge == motif or (merge is not None
                                                      and not 0 <= merge < learned):  # fmt: skip
        raise ValueError(f"cannot re-initialise motif {motif} (merge {merge}) of {learned}")
    check_reinit(model)
    channels = block_channels(motif, b)
    out = model.g.out
    fan_in = out.weight[0].numel()
    bound = 1.0 / math.sqrt(fan_in)  # nn.Conv's own default: kaiming_uniform(a=sqrt(5))
    index = torch.tensor(channels, device=out.weight.device)
    for tensor in (out.weight, out.bias):
        if tensor is None:
            continue
        shape = (len(channels), *tensor.shape[1:])
        fresh = (2 * torch.rand(shape, generator=generator) - 1) * bound
        tensor.index_copy_(0, index, fresh.to(tensor))
        _clear_moments(optimizer, tensor, 0, channels)
    weight = head_input_weight(model)
    if merge is not None:
        kept = torch.tensor(block_channels(merge, b), device=weight.device)
        weight.index_add_(1, kept, weight.index_select(1, index.to(weight.device)))
    weight.index_fill_(1, index.to(weight.device), 0.0)
    _clear_moments(optimizer, weight, 1, channels)
    sparse = model.sparse
    if sparse is not None:
        sparse.running_mean[index] = 0.0
        sparse.running_var[index] = 1.0
        sparse.restart_thresholds()
