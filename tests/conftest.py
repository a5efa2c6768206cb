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
