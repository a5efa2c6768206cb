"""How much a verb tells while it works: the verbosity the command line sets (``--quiet``,
``--verbose``), and a progress counter that draws a bar on a terminal and writes plain lines
where standard error is a file.

A pipeline job's log or a cluster job's output is a file: there a tqdm bar is one growing
line of carriage returns that says nothing until the job ends, so :class:`Counter` writes a
line at most every ``interval`` seconds instead (done, rate, time left where the total is
known). ``--quiet`` silences both, and :func:`note` lines; ``--verbose`` adds
:func:`detail` lines. tqdm draws the bar; the line mode and the verbosity are the few lines
tqdm has no setting for.
"""

from __future__ import annotations

import math
import sys
import time
from typing import TextIO

QUIET, NORMAL, VERBOSE = -1, 0, 1
#: Seconds between plain lines: two a minute, so a log never goes a minute without one.
LINE_INTERVAL = 30.0

_level = NORMAL


def set_verbosity(level: int) -> None:
    """Set how much verbs tell: :data:`QUIET`, :data:`NORMAL` or :data:`VERBOSE`."""
    global _level
    _level = max(QUIET, min(VERBOSE, int(level)))


def verbosity() -> int:
    """The verbosity in force."""
    return _level


def note(message: str, stream: TextIO | None = None) -> None:
    """A line on standard error, unless ``--quiet``."""
    if _level >= NORMAL:
        print(message, file=stream or sys.stderr, flush=True)


def detail(message: str, stream: TextIO | None = None) -> None:
    """A line on standard error with ``--verbose`` only."""
    if _level >= VERBOSE:
        print(message, file=stream or sys.stderr, flush=True)


def format_duration(seconds: float) -> str:
    """``1h02m03s`` / ``4m05s`` / ``12s``."""
    seconds = max(0, int(round(seconds)))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m{secs:02d}s"
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


def is_terminal(stream: TextIO) -> bool:
    """Whether ``stream`` is a terminal (False for files, pipes and closed streams)."""
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _amount(value: float, unit: str) -> str:
    if unit == "bp":
        for scale, name in ((1e9, "Gb"), (1e6, "Mb"), (1e3, "kb")):
            if value >= scale:
                return f"{value / scale:.2f} {name}"
        return f"{value:.0f} bp"
    return f"{value:,.0f} {unit}"


class Counter:
    """Progress of one verb's work: ``update(n)`` as it goes, ``close()`` (or a ``with``
    block) at the end. A tqdm bar named ``label`` on a terminal, a plain line at most every
    ``interval`` seconds otherwise, nothing with ``--quiet`` or when not ``enabled``."""

    def __init__(
        self,
        label: str,
        *,
        total: float | None = None,
        unit: str = "it",
        enabled: bool = True,
        stream: TextIO | None = None,
        interval: float = LINE_INTERVAL,
    ) -> None:
        self.label, self.total, self.unit = label, total, unit
        self.stream = stream if stream is not None else sys.stderr
        self.interval = interval
        self.done = 0.0
        self.bar = None
        self.lines = False
        self._start = self._last = time.monotonic()
        if not enabled or _level < NORMAL:
            return
        if is_terminal(self.stream):
            from tqdm import tqdm  # only on a terminal

            self.bar = tqdm(total=total, desc=label, unit=unit, unit_scale=unit == "bp",
                            dynamic_ncols=True, leave=False, file=self.stream)  # fmt: skip
        else:
            self.lines = True

    def __enter__(self) -> Counter:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def update(self, n: float = 1) -> None:
        """``n`` more units done."""
        self.done += n
        if self.bar is not None:
            self.bar.update(n)
        elif self.lines:
            now = time.monotonic()
            if now - self._last >= self.interval:
                self._last = now
                self.stream.write(self.line() + "\n")
                self.stream.flush()

    def line(self) -> str:
        """The plain progress line: done (of total), rate, elapsed, time left."""
        elapsed = time.monotonic() - self._start
        done = _amount(self.done, self.unit)
        if self.total:
            done += f" of {_amount(self.total, self.unit)} ({100 * self.done / self.total:.0f}%)"
        parts = [f"{self.label}: {done}"]
        if elapsed > 0 and self.done > 0:
            rate = self.done / elapsed
            parts.append(f"{_amount(rate, self.unit)}/s")
            if self.total:
                left = (self.total - self.done) / rate
                if math.isfinite(left):
                    parts.append(f"about {format_duration(left)} left")
        parts.append(f"elapsed {format_duration(elapsed)}")
        return ", ".join(parts)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None
