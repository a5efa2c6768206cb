"""Block-sparse motifs: a motif is a block of ``b`` channels kept or dropped together.

Seed 002's block-sparse featurizers keep the blocks of largest l2 norm, so a concept is a small
subspace (a manifold: a motif's strength, its spacing to a partner) rather than one direction.
In the sparse layer (``model.sparse.block_size`` b > 1) the normalised channels are grouped
in consecutive blocks of b, and every rule of the layer (peaks, competition, the per-block
``(1 - density)`` quantile thresholds, a shared budget) runs on the blocks' l2 norms ``n``.
A block's output is its normalised vector shrunk by the threshold, ``z * relu(n - t) / n``
(group soft-thresholding, the shrinkage of the Group-Lasso featurizer): its norm is
``relu(n - t)``, the paper's ``relu(z - t)`` for a block, and it is zero unless the whole
block is kept. Each block is reported as one motif whose activation is that norm, so metrics,
exports and scans see K motifs while ``h`` reads all K x b channels.
"""

from __future__ import annotations

import torch

from ..errors import ConfigError


def check_block_size(channels: int, block_size: int) -> int:
    """``block_size`` if it is a whole number >= 1 that divides ``channels``, else raise."""
    if int(block_size) != block_size or block_size < 1:
        raise ConfigError(f"block_size must be a whole number >= 1, got {block_size!r}")
    if channels % block_size:
        raise ConfigError(f"{channels} channels do not split into blocks of {block_size}")
    return int(block_size)


def layer_channels(motifs: int, block_size: int | None) -> int:
    """Channels of a sparse layer holding ``motifs`` motifs of ``block_size`` channels each
    (None or 1: one channel per motif)."""
    return motifs * (block_size or 1)


def block_norms(x: torch.Tensor, block_size: int) -> torch.Tensor:
    """The l2 norm of each block of ``block_size`` consecutive channels of ``x`` (N, C, ...),
    as (N, C / block_size, ...); ``x`` itself for blocks of one."""
    if block_size == 1:
        return x
    n, c = x.shape[:2]
    return torch.linalg.vector_norm(x.reshape(n, c // block_size, block_size, *x.shape[2:]), dim=2)


def spread_blocks(per_block: torch.Tensor, block_size: int) -> torch.Tensor:
    """A per-block tensor (N, K, ...) repeated over each block's channels: (N, K * b, ...)."""
    if block_size == 1:
        return per_block
    return per_block.repeat_interleave(block_size, dim=1)


def block_channels(block: int, block_size: int) -> list[int]:
    """The channels of block ``block``."""
    return list(range(block * block_size, (block + 1) * block_size))
