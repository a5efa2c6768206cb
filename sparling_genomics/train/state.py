"""The trainer's counters: where a run is in its batch stream, phases and budget.

Saved in every checkpoint (``asdict``) and put back on resume, so a resumed run continues
exactly where the killed one was.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from ..config import restore_fields


@dataclass
class TrainerState:
    """One run's counters (``phase``: "core", "anneal" or "final")."""

    step: int = 0  # batches of the main phases
    samples: int = 0  # their samples
    next_eval: int = 0  # samples at the next evaluation
    phase: str = "anneal"
    final_start: int = 0  # samples when the final phase began
    elapsed: float = 0.0  # seconds of the main phases
    best_final_accuracy: float = -1.0
    loss_sum: float = 0.0  # since the last evaluation
    loss_count: int = 0
    # Plateau restarts: how many, and the samples and best validation accuracy of the
    # current initialisation.
    restarts: int = 0
    init_start: int = 0
    init_best: float = 0.0
    # The core phase: its batches (the stream from index 0), samples and seconds.
    core_step: int = 0
    core_samples: int = 0
    core_elapsed: float = 0.0
    # The checkpoint series (train.keep_checkpoints_every): samples of the next one.
    next_keep: int = 0

    @property
    def seen(self) -> int:
        """Samples of the current initialisation (a plateau restart starts a new one)."""
        return self.samples - self.init_start

    def final_share(self, final_samples: int) -> float:
        """The share of a final phase of ``final_samples`` passed (0 before it begins)."""
        if self.phase != "final":
            return 0.0
        return (self.samples - self.final_start) / max(1, final_samples)

    def take_loss(self) -> float:
        """The mean training loss since the last call (0 without a step), and start anew."""
        mean = self.loss_sum / max(1, self.loss_count)
        self.loss_sum, self.loss_count = 0.0, 0
        return mean

    def state_dict(self) -> dict:
        return asdict(self)

    def load_state_dict(self, state: dict) -> None:
        restore_fields(self, state, "trainer")
