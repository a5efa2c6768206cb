"""A training run's progress: a bar on a terminal, plain lines in a log file.

Where standard error is a file (a pipeline job's log, a cluster job's output), a tqdm bar is
one ever-growing line of carriage returns that says nothing until the job ends. There the
trainer writes a plain line instead, every ``interval`` seconds: samples, phase, density, the
last validation metric, loss, elapsed time, and an upper bound on the time left (the smaller
of the time budget and the sample budget at the current rate; the schedule may end sooner).
When the run ends, :func:`summary_line` is the one line the ``train`` verb prints. The line
interval, the terminal test and ``--quiet`` are the package's (``progress.py``).
"""

from __future__ import annotations

import math
import sys
import time
from typing import TextIO

from ..progress import LINE_INTERVAL, NORMAL, format_duration, is_terminal, verbosity


class Progress:
    """Reports a run's progress to ``stream`` (standard error by default): a tqdm bar (named
    ``label``) when it is a terminal, plain lines at most every ``interval`` seconds otherwise;
    nothing when not ``enabled``."""

    def __init__(
        self,
        enabled: bool,
        initial_samples: int,
        *,
        max_samples: int,
        max_seconds: float,
        metric: str,
        label: str | None = None,
        stream: TextIO | None = None,
        interval: float = LINE_INTERVAL,
    ) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.max_samples = max_samples
        self.max_seconds = max_seconds
        self.metric = metric
        self.interval = interval
        self.bar = None
        self.lines = False
        self.last: dict = {}
        self._last_line = time.monotonic()
        self._start: tuple[int, float] | None = None
        enabled = enabled and verbosity() >= NORMAL  # --quiet: no progress
        if enabled and is_terminal(self.stream):
            from tqdm import tqdm  # only on a terminal

            self.bar = tqdm(initial=initial_samples, unit="sample", unit_scale=True, desc=label,
                            dynamic_ncols=True, leave=True, file=self.stream)  # fmt: skip
        elif enabled:
            self.lines = True

    def step(self, batch: int, samples: int, elapsed: float, phase: str) -> None:
        """After a training step: ``samples`` seen so far, ``elapsed`` seconds of training."""
        if self.bar is not None:
            self.bar.update(batch)
        if not self.lines:
            return
        if self._start is None:  # the rate is measured from the first step on
            self._start = (samples, elapsed)
        now = time.monotonic()
        if now - self._last_line >= self.interval:
            self._last_line = now
            self.stream.write(self.line(samples, elapsed, phase) + "\n")
            self.stream.flush()

    def evaluated(self, record: dict, accuracy: float, phase: str) -> None:
        """After an evaluation: keep its figures for the next line (or the bar's postfix)."""
        density = record.get("density")
        self.last = {"loss": record.get("loss"), "val": accuracy, "density": density}
        if self.bar is not None:
            self.bar.set_postfix(
                loss=f"{record['loss']:.3f}",
                val=f"{accuracy:.3f}",
                density=f"{density:.2e}" if density else "-",
                phase=phase,
            )

    def line(self, samples: int, elapsed: float, phase: str) -> str:
        """The plain progress line."""
        parts = [f"progress: {samples:,} samples", f"phase {phase}"]
        if self.last.get("density"):
            parts.append(f"density {self.last['density']:.3g}")
        if self.last.get("val") is not None:
            parts.append(f"val {self.metric} {self.last['val']:.3f}")
        if self.last.get("loss") is not None:
            parts.append(f"loss {self.last['loss']:.3f}")
        parts.append(f"elapsed {format_duration(elapsed)}")
        left = self.max_seconds - elapsed
        if self._start is not None:
            first_samples, first_elapsed = self._start
            if elapsed > first_elapsed and samples > first_samples:
                rate = (samples - first_samples) / (elapsed - first_elapsed)
                left = min(left, (self.max_samples - samples) / rate)
        if math.isfinite(left):
            parts.append(f"at most {format_duration(left)} left")
        return ", ".join(parts)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def summary_line(metrics: dict) -> str:
    """The one line the ``train`` verb prints when a run ends: its test metrics (and motif
    errors, density), samples seen and seconds, from the run's metrics; then whether the
    wall-time cap stopped it and the identifiability verdict, a line each."""
    e2e = metrics["e2e"]
    parts = [f"{k}={v:.4f}" for k, v in e2e.items() if isinstance(v, float)]
    if metrics.get("motif"):
        m = metrics["motif"]
        parts += [f"fne={m['fne']:.4f}", f"fpe={m['fpe']:.4f}", f"ce={m['ce']:.4f}"]
    if metrics.get("density") is not None:
        parts.append(f"density={metrics['density']:.3g}")
    parts.append(f"samples={metrics['samples_seen']}")
    parts.append(f"seconds={metrics['wall_seconds']:.0f}")
    line = " ".join(parts)
    if metrics.get("stopped_by") == "max_seconds":
        line += "\nstopped by the wall-time cap (train.max_seconds) before the schedule ended"
    verdict = (metrics.get("identifiability") or {}).get("verdict")
    return line + (f"\nidentifiability: {verdict}" if verdict else "")

