"""Running the workflow from a test: the Snakemake command, its environment, its dry-run
table.

Snakemake imports every installed executor plugin at start; the SLURM plugin then runs
``scontrol show config``, which on a machine with SLURM installed but no controller up (what
the SLURM test leaves behind) waits about 9 s before failing -- on every Snakemake call. The
tests' calls (but the SLURM test's) therefore see an ``scontrol`` that fails at once.
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.conftest import REPO

TINY_CONFIG = REPO / "pipelines" / "config" / "tiny.yaml"
SNAKEMAKE = Path(sys.executable).with_name("snakemake")


@functools.cache
def _failing_scontrol() -> Path:
    """A folder holding an ``scontrol`` that exits 1 at once (removed at exit)."""
    folder = Path(tempfile.mkdtemp(prefix="no-scontrol-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    shim = folder / "scontrol"
    shim.write_text("#!/bin/sh\nexit 1\n")
    shim.chmod(0o755)
    return folder


def snakemake_env() -> dict[str, str]:
    """The environment of a test's Snakemake call: one torch thread a job, no SLURM query."""
    path = f"{_failing_scontrol()}{os.pathsep}{os.environ.get('PATH', '')}"
    return dict(os.environ, OMP_NUM_THREADS="1", PATH=path)


def snakemake_cmd(workdir: Path, *args) -> list[str]:
    return [str(SNAKEMAKE), "-s", str(REPO / "Snakefile"), "-d", str(workdir), *map(str, args)]


def snakemake(workdir: Path, *args, timeout: float = 600, popen: bool = False):
    """``snakemake ARGS`` on the repository's Snakefile in ``workdir`` (a finished
    ``CompletedProcess``, or with ``popen`` a running ``Popen`` in a session of its own)."""
    cmd, env = snakemake_cmd(workdir, *args), snakemake_env()
    if popen:
        return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                env=env, start_new_session=True)  # fmt: skip
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)


def job_counts(stdout: str) -> dict[str, int]:
    """Rule -> jobs, from the dry run's "Job stats" table."""
    table = stdout.split("Job stats:")[1].split("\n\n")[0].splitlines()[3:]
    return {rule: int(count) for rule, count in map(str.split, table)}
