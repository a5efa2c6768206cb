"""The one registry of tasks: a new task is its module (``tasks/<name>.py``) plus one line in
``TASKS``."""

from __future__ import annotations

from ..errors import ConfigError
from .audio_sequence import AudioSequenceTask
from .base import Task
from .digit_circle import DigitCircleTask
from .latex_ocr import LatexOcrTask
from .modular_addition import ModularAdditionTask
from .planted_motifs import PlantedMotifsTask
from .splicing import SplicingTask

TASKS: dict[str, type[Task]] = {
    "planted": PlantedMotifsTask,
    "splicing": SplicingTask,
    "digit_circle": DigitCircleTask,
    "latex_ocr": LatexOcrTask,
    "audio_sequence": AudioSequenceTask,
    "modular_addition": ModularAdditionTask,
}


def task_class(name: str) -> type[Task]:
    """The Task class registered under ``name``."""
    if name not in TASKS:
        raise ConfigError(f"unknown task {name!r}; choose from: {', '.join(sorted(TASKS))}")
    return TASKS[name]

