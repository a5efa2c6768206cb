"""The verbs' progress: plain lines in a log, nothing with --quiet, a bar on a terminal."""

import io

from sparling_genomics import progress
from sparling_genomics.progress import Counter, detail, note


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_lines_in_a_log_say_done_total_rate_and_time_left():
    log = io.StringIO()
    with Counter("scan", total=2_000_000, unit="bp", stream=log, interval=0) as counter:
        counter.update(500_000)
        counter.update(500_000)
    lines = log.getvalue().splitlines()
    assert len(lines) == 2
    assert lines[1].startswith("scan: 1.00 Mb of 2.00 Mb (50%), ")
    assert "b/s, about " in lines[1] and "left, elapsed " in lines[1]


def test_lines_without_a_total_count_up():
    log = io.StringIO()
    with Counter("variants", unit="allele", stream=log, interval=0) as counter:
        counter.update(64)
    assert log.getvalue().startswith("variants: 64 allele, ")
    assert "left" not in log.getvalue()


def test_lines_wait_for_the_interval():
    log = io.StringIO()
    with Counter("export", total=10, unit="window", stream=log, interval=3600) as counter:
        for _ in range(10):
            counter.update(1)
    assert log.getvalue() == ""


def test_quiet_silences_counters_and_notes_verbose_adds_details():
    log = io.StringIO()
    try:
        progress.set_verbosity(progress.QUIET)
        with Counter("scan", total=10, stream=log, interval=0) as counter:
            counter.update(5)
        note("a note", stream=log)
        progress.set_verbosity(progress.NORMAL)
        note("a note", stream=log)
        detail("a detail", stream=log)
        progress.set_verbosity(progress.VERBOSE)
        detail("a detail", stream=log)
    finally:
        progress.set_verbosity(progress.NORMAL)
    assert log.getvalue() == "a note\na detail\n"


def test_a_terminal_gets_a_bar_not_lines():
    term = _Terminal()
    with Counter("scan", total=100, unit="bp", stream=term, interval=0) as counter:
        assert counter.bar is not None and not counter.lines
        counter.update(100)
    assert "scan" in term.getvalue() and "\r" in term.getvalue()
