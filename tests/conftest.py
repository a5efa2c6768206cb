import os
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


@pytest.fixture
def cli():
    return run_cli


TINY_FASTA = REPO / "reference" / "tiny" / "tiny.fa"
TINY_GFF = REPO / "reference" / "tiny" / "tiny.gff3"


@pytest.fixture(scope="session")
def tiny_dataset(tmp_path_factory):
    """The tiny reference's donor/acceptor dataset (built once per test session)."""
    from sparling_genomics.genome.dataset import build_dataset

    path = tmp_path_factory.mktemp("tiny") / "tiny.h5"
    build_dataset(path, TINY_FASTA, annotation=TINY_GFF)
    return path
