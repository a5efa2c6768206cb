"""Splitting one motif of a Sparling model into another: the edit behind the channel-edit rule.

On the planted task a run can end with one channel (or block) carrying two motifs and
another idle (``evaluate/identifiability.py``): at a density near the true one the shared
channel has the firing budget of one motif, so it misses sites of both, and a smaller density
step does not give the motif back (``train/rules/rollback.py``). This is the dead-code problem of
vector quantisation, and the remedy here is LBG's: put a copy of the busiest code word in
place of the dead one, a little apart, and let training pull the two apart.

:func:`split_edits` lists, for a target motif to become a copy of a source motif, every
tensor row that holds the motif: ``g``'s output filter and bias, the sparse layer's
normalisation statistics, threshold and pending quantile values, and ``h``'s per-channel
gain and input weights. ``h``'s input weights are *shared* (the source's halved, the copy
gets the other half), so the two identical channels give ``h`` exactly the input the source
gave it: when ``h`` ignored the target (an idle motif), the output does not change at the
split. :func:`apply_split` applies the edits to
the weights and to the optimizer's per-parameter state (Adam's moments, scaled alike), then
moves ``g``'s two filters apart by ``noise`` (relative, seeded) so training can tell them
apart. Written here because no library edits a model's channels this way.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from ..errors import ConfigError


@dataclass(frozen=True)
class RowEdit:
    """Rows ``target`` of ``tensor`` along ``dim`` become rows ``source``; with ``share`` the
    source's rows are halved first (a sum over both then equals the source's alone)."""

    tensor: torch.Tensor
    dim: int
    source: list[int]
    target: list[int]
    share: bool = False


def copy_rows(tensor: torch.Tensor, edit: RowEdit, scale: float = 0.5) -> None:
    """Apply ``edit`` to ``tensor`` (the edit's own, or a tensor of its shape such as an
    optimizer moment) in place; a shared edit multiplies the source rows by ``scale``."""
    index = torch.tensor(edit.source, device=tensor.device)
    rows = tensor.index_select(edit.dim, index)
    if edit.share:
        rows = rows * scale
        tensor.index_copy_(edit.dim, index, rows)
    tensor.index_copy_(edit.dim, torch.tensor(edit.target, device=tensor.device), rows)


def conv_output_edits(conv: nn.Module, source: list[int], target: list[int]) -> list[RowEdit]:
    """A convolution's output channels (weight and bias)."""
    edits = [RowEdit(conv.weight, 0, source, target)]
    if conv.bias is not None:
        edits.append(RowEdit(conv.bias, 0, source, target))
    return edits


def norm_edits(norm: nn.Module, source: list[int], target: list[int]) -> list[RowEdit]:
    """A BatchNorm's per-channel statistics (and affine weight and bias, when it has them)."""
    names = ("running_mean", "running_var", "weight", "bias")
    return [RowEdit(t, 0, source, target) for name in names
            if (t := getattr(norm, name, None)) is not None]  # fmt: skip


def motif_output(model, what: str) -> nn.Module:
    """g's last layer ``out`` (one output channel per motif channel): what a motif edit
    rewrites; a ConfigError saying ``what`` needs it otherwise."""
    out = getattr(model.g, "out", None)
    if not isinstance(out, (nn.Conv1d, nn.Conv2d)) or out.out_channels != model.g.motifs:
        raise ConfigError(f"{what} needs a motif model g whose last layer is `out`")
    return out


def split_edits(model, source: int, target: int) -> list[RowEdit]:
    """The edits that make learned motif ``target`` of ``model`` a copy of motif ``source``
    (motifs are channels, or blocks of channels); a ConfigError where a part of the model
    cannot be edited so."""
    groups = model.motif_groups()
    learned = model.learned
    if not (0 <= source < learned and 0 <= target < learned) or source == target:
        raise ValueError(f"cannot split motif {source} into {target} of {learned} learned")
    s, t = groups[source], groups[target]
    out = motif_output(model, "splitting a motif")
    head = getattr(model.h, "split_edits", None)
    if head is None:
        raise ConfigError(
            f"splitting a motif needs a head that can share its inputs; "
            f"{type(model.h).__name__} cannot"
        )
    edits = conv_output_edits(out, s, t)
    if model.sparse is not None:
        edits += model.sparse.split_edits(source, target)
    return edits + head(s, t)


@torch.no_grad()
def apply_split(
    model,
    source: int,
    target: int,
    *,
    optimizer: torch.optim.Optimizer | None = None,
    noise: float = 0.05,
    generator: torch.Generator | None = None,
) -> None:
    """Make motif ``target`` a copy of ``source`` (:func:`split_edits`), in the weights and in
    ``optimizer``'s state, then multiply each of the two motifs' ``g`` output filters by
    ``1 + noise * N(0, 1)`` independently."""
    edits = split_edits(model, source, target)
    for edit in edits:
        copy_rows(edit.tensor, edit)
        state = {} if optimizer is None else optimizer.state.get(edit.tensor, {})
        for key, value in state.items():
            if torch.is_tensor(value) and value.shape == edit.tensor.shape:
                copy_rows(value, edit, 0.25 if key == "exp_avg_sq" else 0.5)
    weight = model.g.out.weight
    groups = model.motif_groups()
    for channels in (groups[source], groups[target]):
        rows = weight[channels]
        shake = torch.randn(rows.shape, generator=generator, dtype=rows.dtype)
        weight[channels] = rows * (1 + noise * shake.to(rows.device))


@torch.no_grad()
def move_filters(model, motif: int, toward, away, step: float) -> None:
    """Move ``motif``'s ``g`` output filters by ``step`` x their norm along the unit line from
    feature vector ``away`` to ``toward`` (a split's copies aimed at the two patterns their
    source carried, or a motif pushed off a pattern another motif owns)."""
    weight = model.g.out.weight
    line = torch.as_tensor(toward - away, dtype=weight.dtype, device=weight.device)
    line = line / line.norm().clamp_min(1e-12)
    for channel in model.motif_groups()[motif]:
        row = weight[channel].reshape(-1)
        weight[channel] = (row + step * row.norm() * line).reshape(weight[channel].shape)
