"""The quantile behind the sparse layer's thresholds, and the check of a target density."""

from __future__ import annotations

import math

import torch

from ..errors import ConfigError

# Above this fraction of hits per channel, ``kthvalue`` beats ``topk`` on CPU.
_TOPK_MAX_FRACTION = 0.05


def check_density(density: float) -> float:
    """Return ``density`` as a float if it is a usable target density, else raise."""
    try:
        value = float(density)
    except (TypeError, ValueError):
        raise ConfigError(f"density must be a number, got {density!r}") from None
    if not (0.0 < value < 1.0) or math.isnan(value):
        raise ConfigError(f"density must lie strictly between 0 and 1, got {density!r}")
    return value


def upper_quantile(values: torch.Tensor, hits: int) -> torch.Tensor:
    """Per row of ``values`` (R, n): the threshold leaving exactly ``hits`` values above it.

    That is the ``(hits + 1)``-th largest value of each row (so with no ties exactly ``hits``
    values are strictly greater).
    """
    n = values.shape[1]
    hits = min(max(int(hits), 0), n - 1)
    if hits + 1 <= max(1, int(_TOPK_MAX_FRACTION * n)):
        top = torch.topk(values, hits + 1, dim=1, largest=True, sorted=True).values
        return top[:, hits]
    return torch.kthvalue(values, n - hits, dim=1).values
