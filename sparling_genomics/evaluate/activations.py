"""Activations of a model as a point cloud: the token embedding's rows, the motif layer's
active positions, g's output, or any module's output caught by a forward hook; one row a
point (per example, or per position of a map). ``diagnose`` measures these clouds and
``concepts`` fits its extractors on them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from torch import nn

from ..errors import InputError

#: Modules whose outputs put features last (others with 3+ axes: channels first, as g's).
FEATURE_LAST = (nn.Linear, nn.LayerNorm, nn.Embedding, nn.TransformerEncoderLayer,
                nn.MultiheadAttention, nn.GELU, nn.ReLU)  # fmt: skip


def embedding_module(model: nn.Module) -> nn.Embedding | None:
    """The model's token embedding: ``g.embed`` where it is one, else its first embedding."""
    embed = getattr(model.g, "embed", None)
    if isinstance(embed, nn.Embedding):
        return embed
    return next((m for m in model.modules() if isinstance(m, nn.Embedding)), None)


def layer_choices(model: nn.Module) -> list[str]:
    """The names ``--layer`` accepts for ``model``."""
    named = [n for n, _ in model.named_modules() if n and n != "g"]
    return (["embedding"] if embedding_module(model) is not None else []) + ["motifs", "g"] + named


def check_layer(model: nn.Module, layer: str, run: Path) -> None:
    """An :class:`InputError` naming the choices when ``layer`` is not one of them."""
    choices = layer_choices(model)
    if layer not in choices:
        shown = ", ".join(choices[:14]) + (", ..." if len(choices) > 14 else "")
        raise InputError(f"{run}: --layer {layer!r} is not a layer of this model ({shown})")


def _rows(t: torch.Tensor, channels_first: bool) -> np.ndarray:
    """A layer output as (points, features): per example, or per position of a map."""
    t = t.detach().float().cpu()
    if t.ndim <= 1:
        return t.reshape(-1, 1).numpy()
    if t.ndim == 2:
        return t.numpy()
    if channels_first:
        t = t.movedim(1, -1)
    return t.reshape(-1, t.shape[-1]).numpy()


@torch.no_grad()
def point_cloud(model: nn.Module, layer: str, batches: list, device: torch.device) -> np.ndarray:
    """The point cloud of ``layer`` on the fixed ``batches`` (the embedding: its rows)."""
    if layer == "embedding":
        return embedding_module(model).weight.detach().float().cpu().numpy()
    outs = []
    if layer in ("motifs", "g"):
        for batch in batches:
            x = batch.x.to(device)
            out = model(x)["motifs"] if layer == "motifs" else model.g(x)
            rows = _rows(out, channels_first=True)
            if layer == "motifs" and model.density is not None:
                rows = rows[(rows != 0).any(1)]  # a sparse layer: its active positions only
            outs.append(rows)
    else:
        module = dict(model.named_modules())[layer]
        caught: list[torch.Tensor] = []

        def hook(_module, _inputs, output):
            while isinstance(output, (tuple, list)):
                output = output[0]
            caught.append(output)

        handle = module.register_forward_hook(hook)
        try:
            for batch in batches:
                caught.clear()
                model(batch.x.to(device))
                outs += [_rows(t, not isinstance(module, FEATURE_LAST)) for t in caught]
        finally:
            handle.remove()
    return np.concatenate(outs) if outs else np.zeros((0, 1))
