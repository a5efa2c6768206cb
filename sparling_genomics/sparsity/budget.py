"""A shared firing budget: one density for all channels of a sparse layer, split by demand.

With per-channel thresholds (the Sparling paper's layer) every channel fires at exactly the
target density d. A signal more frequent than d (on TAIR10 chr1: GT and AG candidates, the
U-richness of introns) can then only be covered by several channels that copy each other,
and the channel competition (``compete_window``) only makes the copies take turns: on chr1,
14 of 32 learned channels were near-copies sharing no sites.

Here the layer's C channels share a budget of ``d * C`` firings per position: one threshold
over all channels' normalised values (BatchNorm puts them on one scale) sets each channel's
share by how strongly it fires, within ``[low * d, high * d]`` per channel. The upper bound
keeps one broad channel from taking the whole budget; the lower bound keeps every channel
firing, so it keeps getting gradient (a channel at zero density never comes back). ``low =
high = 1`` is the per-channel layer; one unbounded global threshold is the paper's ablation
(DigitCircle CE 22%), which is why the shares are bounded.

The threshold is found by bisection over the candidates' values: the total count, each
channel's count clipped to its bounds, is monotone in the threshold.
"""

from __future__ import annotations

import torch

from ..errors import ConfigError


def check_share_range(share_range) -> tuple[float, float]:
    """``(low, high)`` with ``0 <= low <= 1 <= high``, else a one-line error."""
    try:
        low, high = (float(v) for v in share_range)
    except (TypeError, ValueError):
        raise ConfigError(
            f"model.sparse.share_range must be [LOW, HIGH], got {share_range!r}"
        ) from None
    if not 0.0 <= low <= 1.0 <= high:
        raise ConfigError(
            f"model.sparse.share_range must have 0 <= LOW <= 1 <= HIGH, got {share_range!r}"
        )
    return low, high


def share_hits(density: float, elements: int, share_range: tuple[float, float]) -> tuple[int, int]:
    """Per channel, the fewest and most firings among ``elements`` positions."""
    low, high = share_range
    return round(low * density * elements), round(high * density * elements)


def budget_thresholds(
    top: torch.Tensor, elements: int, density: float, share_range: tuple[float, float]
) -> torch.Tensor:
    """Per channel, the threshold under the shared budget.

    ``top`` (C, m): each channel's largest values, sorted in descending order, out of
    ``elements`` positions per channel (-inf: a position that cannot fire); ``m`` must exceed
    the most firings a channel may get. The thresholds leave ``round(density * elements *
    C)`` values above them in all, between the share bounds per channel (fewer only where a
    channel has fewer finite values than its lower bound).
    """
    channels, m = top.shape
    few, many = share_hits(density, elements, share_range)
    many = min(many, m - 1)
    few = min(few, many)
    ceiling = top[:, few]  # a threshold above this would leave fewer than `few` firings
    floor = top[:, many]  # ... below this, more than `many`
    target = round(density * elements * channels)
    candidates = top[:, : many + 1].reshape(-1).sort(descending=True).values

    def fired(threshold: torch.Tensor) -> int:
        counts = (top > threshold).sum(dim=1).clamp(min=few, max=many)
        return int(counts.sum())

    lo, hi = 0, len(candidates) - 1
    while lo < hi:  # smallest index (highest threshold) whose count reaches the target
        mid = (lo + hi) // 2
        if fired(candidates[mid]) >= target:
            hi = mid
        else:
            lo = mid + 1
    shared = candidates[lo]
    return torch.minimum(torch.maximum(shared.expand(channels), floor), ceiling)
