"""Progress: a bar on a terminal, plain lines (samples, phase, density, metric, elapsed, time
left) in a log file, nothing when turned off."""

import io

from sparling_genomics.progress import format_duration
from sparling_genomics.rundir import log_path
from sparling_genomics.train.progress import Progress
from sparling_genomics.train.run_config import resolve_config
from sparling_genomics.train.trainer import train


def _progress(stream, **kwargs):
    options = {"max_samples": 10_000, "max_seconds": 600.0, "metric": "mean_topk",
               "stream": stream, "interval": 0.0}  # fmt: skip
    return Progress(True, 0, **{**options, **kwargs})


def test_durations_read_like_a_clock():
    assert format_duration(12.4) == "12s"
    assert format_duration(245) == "4m05s"
    assert format_duration(3723) == "1h02m03s"
    assert format_duration(-3) == "0s"


def test_a_log_file_gets_plain_lines_with_the_figures():
    stream = io.StringIO()
    p = _progress(stream)
    assert p.bar is None and p.lines
    p.step(16, 16, 1.0, "dense")
    p.evaluated({"loss": 0.5, "density": 0.00178}, 0.74, "anneal")
    p.step(16, 1016, 11.0, "anneal")
    lines = stream.getvalue().splitlines()
    assert len(lines) == 2 and all(line.startswith("progress: ") for line in lines)
    assert lines[1] == (
        "progress: 1,016 samples, phase anneal, density 0.00178, "
        "val mean_topk 0.740, loss 0.500, elapsed 11s, at most 1m30s left"
    )
    # 100 samples/s after the first step: 8,984 samples left take 90 s, under the 589 s budget


def test_the_time_budget_bounds_the_time_left():
    stream = io.StringIO()
    p = _progress(stream, max_samples=10**9, max_seconds=100.0)
    p.step(1, 1, 1.0, "dense")
    p.step(1, 2, 40.0, "dense")
    assert stream.getvalue().splitlines()[-1].endswith("at most 1m00s left")


def test_lines_come_at_most_every_interval():
    stream = io.StringIO()
    p = _progress(stream, interval=3600.0)
    for i in range(100):
        p.step(1, i + 1, float(i), "dense")
    assert stream.getvalue() == ""


def test_turned_off_writes_nothing():
    stream = io.StringIO()
    p = Progress(False, 0, max_samples=10, max_seconds=1.0, metric="x", stream=stream)
    p.step(1, 1, 1.0, "dense")
    p.close()
    assert p.bar is None and not p.lines and stream.getvalue() == ""


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_a_terminal_gets_a_bar():
    stream = _Terminal()
    p = _progress(stream)
    assert p.bar is not None and not p.lines
    p.step(16, 16, 1.0, "dense")
    p.close()
    assert "sample" in stream.getvalue()


def test_a_training_run_into_a_file_writes_progress_lines(tmp_path, monkeypatch, capsys):
    config = resolve_config("planted", "tiny")
    original = Progress.__init__

    def every_step(self, *args, **kwargs):
        original(self, *args, **{**kwargs, "interval": 0.0})

    monkeypatch.setattr(Progress, "__init__", every_step)
    train(config, tmp_path / "run", progress=True)
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("progress: ")]
    assert len(lines) == 640 // 16  # one per step, captured output is not a terminal
    assert "phase" in lines[-1] and "val exact_match" in lines[-1]
    assert log_path(tmp_path / "run").is_file()
