"""Device choice: CUDA when present (or asked for), CPU otherwise."""

from __future__ import annotations

import torch

from ..errors import ConfigError


def pick_device(name: str = "auto") -> torch.device:
    """``auto`` -> ``cuda`` if available else ``cpu``; ``cpu``/``cuda``/``cuda:N`` as given."""
    if name in (None, "", "auto"):
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        device = torch.device(name)
    except RuntimeError:
        raise ConfigError(f"unknown device {name!r}; use auto, cpu or cuda[:N]") from None
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ConfigError(f"device {name!r} asked for, but CUDA is not available here")
    return device
