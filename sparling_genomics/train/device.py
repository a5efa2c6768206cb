"""Device choice: CUDA when present (or asked for), CPU otherwise; and the machine a run
wrote its metrics on (CPU hosts part ways in floating point, so runs name theirs)."""

from __future__ import annotations

import datetime as _dt
import os
import platform
from pathlib import Path

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


def machine_description() -> dict:
    """CPU model, core count, memory, Python/torch versions, accelerator."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory_gb = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                memory_gb = round(int(line.split()[1]) / 1024**2, 1)
    except OSError:
        pass
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "memory_gb": memory_gb,
        "python": platform.python_version(),
        "torch": torch.__version__,
        "cuda": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
        "date": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
    }
