"""The one registry of tasks: a new task is its module (``tasks/<name>.py``) plus one line in
``TASKS``."""

from __future__ import annotations

from ..errors import ConfigError, close_match
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
    """The Task class registered under ``name`` (an unknown name: a ConfigError listing the
    tasks, with the closest as a "did you mean")."""
    if name not in TASKS:
        match = close_match(name, TASKS)
        hint = f" (did you mean {match!r}?)" if match else ""
        raise ConfigError(f"unknown task {name!r}{hint}; choose from: {', '.join(sorted(TASKS))}")
    return TASKS[name]
