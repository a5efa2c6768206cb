import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def run_cli(*args, timeout=300, **kwargs):
    """Run ``sparling-genomics ARGS`` in a subprocess (one torch thread, no progress bar)."""
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONUNBUFFERED="1")
    return subprocess.run(
        [sys.executable, "-m", "sparling_genomics.cli", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=kwargs.get("cwd", REPO),
    )


def run_steps(steps: list[tuple], run: Path) -> Path:
    """Run CLI commands in order (a RuntimeError naming the one that fails); return ``run``."""
    for args in steps:
        result = run_cli(*args)
        if result.returncode != 0:
            raise RuntimeError(f"{' '.join(map(str, args))}: {result.stderr}")
    return run


def train_tiny_planted_run(run: Path) -> Path:
    """A tiny planted run, sparse from the start (so its tracks stay small), exported with
    JASPAR names into RUN/motifs."""
    steps = [
        ("train", "--task", "planted", "--preset", "tiny", "--out", run, "--no-progress",
         "--set", "annealing.start_density=0.02"),
        ("export", "--model", run, "--min-sites", "3", "--jaspar-release", "JASPAR2024"),
    ]  # fmt: skip
    return run_steps(steps, run)


def retrain_in_place(run: Path) -> Path:
    """Run ``run``'s final weights changed (one weight nudged, the checkpoint re-saved with
    its digest): another training into the same folder, after its motifs were exported."""
    import torch

    from sparling_genomics.rundir import checkpoint_path
    from sparling_genomics.train.checkpoint import load_checkpoint, save_checkpoint

    final = checkpoint_path(run, "final.pt")
    payload = load_checkpoint(final)
    weights = payload["model"]
    name = next(k for k, v in weights.items() if torch.is_tensor(v) and v.is_floating_point())
    weights[name] = weights[name] + 0.01
    save_checkpoint(final, payload)
    return run


@pytest.fixture
def cli():
    return run_cli


NO_ESPEAK = "espeak-ng is not installed (apt-get install espeak-ng)"


@pytest.fixture(scope="session")
def espeak_corpus(tmp_path_factory):
    """A 3-voice, 30-clip espeak-ng corpus (built once per test session; tests only read it)."""
    from sparling_genomics.domains.espeak_corpus import build_espeak_corpus

    if shutil.which("espeak-ng") is None:
        pytest.skip(NO_ESPEAK)
    out = tmp_path_factory.mktemp("espeak") / "corpus"
    build_espeak_corpus(out, speakers=3, repetitions=1, seed=0)
    return out


TINY_FASTA = REPO / "reference" / "tiny" / "tiny.fa"
TINY_GFF = REPO / "reference" / "tiny" / "tiny.gff3"


@pytest.fixture(scope="session")
def tiny_dataset(tmp_path_factory):
    """The tiny reference's donor/acceptor dataset (built once per test session)."""
    from sparling_genomics.genome.dataset import build_dataset

    path = tmp_path_factory.mktemp("tiny") / "tiny.h5"
    build_dataset(path, TINY_FASTA, annotation=TINY_GFF)
    return path


@pytest.fixture(scope="session")
def planted_tiny(tmp_path_factory):
    """A tiny planted run (sparse from the start, so its tracks stay small), exported with
    names, scanned over the first 20 kb of the tiny reference, and reported."""
    from types import SimpleNamespace

    base = tmp_path_factory.mktemp("planted_tiny")
    run = train_tiny_planted_run(base / "run")
    lines = TINY_FASTA.read_text().splitlines()
    fasta = base / "piece.fa"
    seq = "".join(lines[1:])[:20_000]
    fasta.write_text(lines[0] + "\n" + "\n".join(seq[i : i + 60] for i in range(0, len(seq), 60)))
    tracks = base / "tracks"
    report = base / "report.html"
    for args in (
        ("scan", "--model", run, "--fasta", fasta, "--out", tracks),
        ("report", "--model", run, "--scan", tracks, "--out", report),
    ):
        result = run_cli(*args)
        assert result.returncode == 0, result.stderr
    return SimpleNamespace(base=base, run=run, fasta=fasta, tracks=tracks, report=report,
                           seqid=lines[0][1:].split()[0], length=len(seq))  # fmt: skip


def train_tiny_splicing_run(run: Path, dataset: Path) -> Path:
    """A tiny splicing run with its site core (trained long enough to find GT and AG) on the
    tiny reference's dataset, exported into RUN/motifs."""
    steps = [
        ("train", "--task", "splicing", "--preset", "tiny", "--dataset", dataset, "--out", run,
         "--no-progress", "--set", "train.core_samples=2000"),
        ("export", "--model", run, "--min-sites", "1", "--jaspar-release", "JASPAR2024"),
    ]  # fmt: skip
    return run_steps(steps, run)


@pytest.fixture(scope="session")
def splicing_tiny(tmp_path_factory, tiny_dataset):
    """A tiny exported splicing run with a site core (built once per test session)."""
    return train_tiny_splicing_run(tmp_path_factory.mktemp("splicing_tiny") / "run", tiny_dataset)
