"""BENCHMARKS.md upkeep: machine description and one replaceable section per benchmark."""

from __future__ import annotations

import json
import re
import shutil
import warnings
from pathlib import Path

from sparling_genomics.io import write_json_atomic, write_text_atomic
from sparling_genomics.rundir import (
    FINAL_CHECKPOINT,
    LAST_CHECKPOINT,
    checkpoint_path,
    metrics_path,
)
from sparling_genomics.train.device import machine_description  # noqa: F401 (re-exported)

from .summary import tidy_text

HEADER = (
    "# Benchmarks\n\n"
    "Written by `python -m benchmarks ...`; each section is replaced when its benchmark "
    "reruns. Figures come from the JSON file named in the section. The sections keep a fixed "
    "order (`benchmarks/summary.py`), each followed by its notes.\n"
)


def run_or_resume(out: Path, config: dict) -> dict:
    """A benchmark's training run in ``out``: its metrics if it finished earlier (reused, not
    retrained; perturbation and identifiability blocks from before the current rules are
    recomputed from the final weights where they are on disk), resumed from its last
    checkpoint if it was killed, else trained now (afresh where it was killed before its first
    checkpoint: its folder holds nothing finished)."""
    from sparling_genomics.train.loading import metrics_are_stale, rescore_stale
    from sparling_genomics.train.trainer import train

    out = Path(out)
    if metrics_path(out).exists():
        metrics = json.loads(metrics_path(out).read_text())
        if metrics_are_stale(metrics) and checkpoint_path(out, FINAL_CHECKPOINT).exists():
            metrics = rescore_stale(out, metrics)
        return metrics
    if checkpoint_path(out, LAST_CHECKPOINT).exists():
        return train({}, out, resume=True, progress=False)
    if out.is_dir():
        shutil.rmtree(out)
    return train(config, out, progress=False)


def pct(value) -> str:
    """A fraction as a percentage with two decimals; '-' for None."""
    return "-" if value is None else f"{100 * value:.2f}%"


def machine_line(machine: dict) -> str:
    gpu = machine["cuda"] or "no GPU"
    return (
        f"{machine['cpu']}, {machine['cores']} cores ({machine['torch_threads']} torch threads), "
        f"{machine['memory_gb']} GB, {gpu}; Python {machine['python']}, torch {machine['torch']}; "
        f"{machine['date']}"
    )


def machines_line(runs: list[tuple[str, str | None]], cpu: str) -> str | None:
    """A sentence for a section whose runs did not all train on ``cpu`` (the machine that
    wrote it): ``runs`` pairs each run's label with the CPU its metrics name (None: metrics
    written before runs named their machine). None when every run names ``cpu``. Runs reused
    from another host matter: CPU hosts part ways in floating point within a few thousand
    samples, so the same seed follows another path there."""
    elsewhere: dict[str, list[str]] = {}
    unknown = [label for label, host in runs if host is None]
    for label, host in runs:
        if host is not None and host != cpu:
            elsewhere.setdefault(host, []).append(label)
    parts = [f"{', '.join(labels)} on {host}" for host, labels in elsewhere.items()]
    sentences = ["Runs trained on another CPU: " + "; ".join(parts) + "."] if parts else []
    if unknown:
        sentences.append(f"Machine not recorded for {', '.join(unknown)} (metrics written "
                         "before runs named their machine).")  # fmt: skip
    return " ".join(sentences) or None


def update_section(path: Path, name: str, body: str, *, header: str = HEADER,
                   tidy: bool = True) -> None:  # fmt: skip
    """Replace (or append) the section ``name`` of the markdown file at ``path`` (a new file
    starts with ``header``). With ``tidy`` (BENCHMARKS.md), the file is then put in its
    sections' order with a fresh summary (``benchmarks/summary.py``); without it (another
    document holding a generated section), the rest of the file is left as it is."""
    path = Path(path)
    text = path.read_text() if path.exists() else header
    start, end = f"<!-- bench:{name}:start -->", f"<!-- bench:{name}:end -->"
    block = f"{start}\n{body.rstrip()}\n{end}"
    pattern = re.compile(re.escape(start) + r".*?" + re.escape(end), re.DOTALL)
    if pattern.search(text):
        text = pattern.sub(lambda _: block, text)
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    if tidy:
        try:
            text = tidy_text(text, path.parent)
        except ValueError as exc:  # a hand-broken marker: keep the section, say why
            warnings.warn(f"{path}: not tidied ({exc}); fix it and run `python -m benchmarks "
                          "tidy`", stacklevel=2)  # fmt: skip
    write_text_atomic(path, text if text.endswith("\n") else text + "\n")


def publish(result: dict, json_path: Path, benchmarks_md: Path, section: str, body: str) -> Path:
    """Write a benchmark's JSON and replace its BENCHMARKS.md section; returns the JSON path."""
    write_json_atomic(Path(json_path), result)
    update_section(Path(benchmarks_md), section, body)
    return Path(json_path)


def concepts_code() -> str | None:
    """The last commit that changed the extractors' package (``sparling_genomics/concepts``):
    which extractor code made a set's rows, when sets were extracted at different times."""
    import subprocess

    try:
        command = ["git", "log", "-1", "--format=%h", "--", "sparling_genomics/concepts"]
        found = subprocess.run(command, capture_output=True, text=True, check=True,
                               cwd=Path(__file__).resolve().parents[1])  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        return None
    return found.stdout.strip() or None
