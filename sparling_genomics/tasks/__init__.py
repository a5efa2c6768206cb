"""Tasks: one module per task, each a dataset + loss + decoding (+ truth where known)."""

from __future__ import annotations

from ..errors import ConfigError
from .base import Batch, Task


def task_class(name: str) -> type[Task]:
    """The Task class registered under ``name``."""
    from .audio_sequence import AudioSequenceTask
    from .digit_circle import DigitCircleTask
    from .latex_ocr import LatexOcrTask
    from .planted_motifs import PlantedMotifsTask
    from .splicing import SplicingTask

    registry: dict[str, type[Task]] = {
        "planted": PlantedMotifsTask,
        "splicing": SplicingTask,
        "digit_circle": DigitCircleTask,
        "latex_ocr": LatexOcrTask,
        "audio_sequence": AudioSequenceTask,
    }
    if name not in registry:
        raise ConfigError(f"unknown task {name!r}; choose from: {', '.join(sorted(registry))}")
    return registry[name]


__all__ = ["Batch", "Task", "task_class"]
