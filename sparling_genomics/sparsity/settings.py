"""The ``model.sparse`` block of a run's config: the sparse layer's options (``layer.py``)."""

from __future__ import annotations

from dataclasses import dataclass

from ..config import bounded


@dataclass
class SparseSettings:
    """The ``model.sparse`` block of a run's config: the layer's options."""

    affine: bool = False
    per_channel: bool = True
    momentum: float = bounded(0.1, above=0, max=1)
    min_hits: float = bounded(20.0, min=0)
    peak_window: int = bounded(5, min=0)  # one activation per site; 0 = the paper's layer
    peak_below: float = bounded(0.01, above=0, max=1)  # ... once the density is at most this
    # Channels compete within +-compete_window (the anti-copy rule, see layer.py's docstring),
    # from the density the peak rule starts at; 0 = off. None (not in the config, settable in
    # any task): off (the paper's layer).
    compete_window: int | None = bounded(None, min=0, optional=True, settable=True)
    # [low, high]: one shared firing budget, each channel's density within low..high x the
    # target (sparsity/budget.py); None (not in the config, settable) or [1, 1]: per-channel.
    share_range: list[float] | None = bounded(None, optional=True, settable=True)
    # Channels per motif (sparsity/blocks.py); None (not in the config, settable) or 1: one.
    block_size: int | None = bounded(None, min=1, optional=True, settable=True)
    # A peak loses to the other strand's larger value within +-strand_window (the strand
    # rule, for palindromes); None (not in the config, settable) or 0: off.
    strand_window: int | None = bounded(None, min=0, optional=True, settable=True)
