"""Tasks: one module per task, each a dataset + loss + decoding (+ truth where known)."""

from __future__ import annotations

from ..config import RunConfig, merge
from ..errors import ConfigError
from ..sparsity.annealing import AnnealingSettings
from ..train.settings import TrainSettings
from .base import Batch, Task


def task_class(name: str) -> type[Task]:
    """The Task class registered under ``name`` (the one registry of tasks: a new task is
    its module plus one line here)."""
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


def default_config(name: str) -> RunConfig:
    """Task ``name``'s config before any preset: its data and model dataclasses, the shared
    train and annealing settings with what the task sets in them."""
    cls = task_class(name)
    config = RunConfig(
        task=name,
        data=cls.data_config(),
        model=cls.model_config(),
        train=TrainSettings(),
        annealing=AnnealingSettings(),
    )
    return merge(config, cls.defaults, every=True)


__all__ = ["Batch", "Task", "default_config", "task_class"]
