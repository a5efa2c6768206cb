"""``python -m benchmarks``: one click group with every benchmark, bad seeds a usage error."""

import os
import subprocess
import sys

import pytest

from tests.conftest import REPO

BENCHMARKS = ("apply", "concepts", "grokking", "identifiability", "motif-export", "paper-domain",
              "peers", "pipeline", "planted", "planted-data", "scale", "scan", "scan-load",
              "scan-regression", "seeds", "sparse-layer", "splicing", "tidy",
              "variants")  # fmt: skip


def run_benchmarks(*args):
    """``python -m benchmarks ARGS`` from the repository root, as the README runs it."""
    env = dict(os.environ, OMP_NUM_THREADS="1")
    command = [sys.executable, "-m", "benchmarks", *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=REPO, env=env)


def test_help_lists_every_benchmark():
    result = run_benchmarks("--help")
    assert result.returncode == 0, result.stderr
    listed = [line.split()[0] for line in result.stdout.split("Commands:", 1)[1].splitlines()
              if line.strip()]  # fmt: skip
    assert tuple(listed) == BENCHMARKS


def test_each_benchmark_keeps_its_options():
    from benchmarks.cli import main

    shared = {"-q", "--quiet", "-v", "--verbose", "--debug", "-h", "--help"}  # every command's
    options = {name: sorted(o for p in cmd.params for o in p.opts if o not in shared)
               for name, cmd in main.commands.items()}  # fmt: skip
    assert options["planted"] == ["--ablations", "--benchmarks-md", "--block-size", "--draws",
                                  "--out", "--preset", "--seeds", "--set"]  # fmt: skip
    assert options["planted-data"] == ["--batches", "--benchmarks-md", "--draws", "--out"]
    assert options["paper-domain"] == ["--benchmarks-md", "--out", "--preset", "--section",
                                       "--seeds", "--set", "--task"]  # fmt: skip
    assert options["splicing"] == ["--benchmarks-md", "--out", "--preset", "--reference",
                                   "--seed", "--set", "--skip"]  # fmt: skip
    assert options["scan"] == options["scan-load"] == ["--benchmarks-md", "--model", "--out",
                                                       "--reference"]  # fmt: skip
    assert options["scan-regression"] == ["--before", "--benchmarks-md", "--model", "--out",
                                          "--parts", "--reference", "--repeats"]  # fmt: skip
    assert options["motif-export"] == ["--benchmarks-md", "--out", "--preset", "--seeds"]
    assert options["sparse-layer"] == ["--benchmarks-md", "--out", "--repeats"]
    assert options["apply"] == ["--benchmarks-md", "--command", "--out", "--wall-seconds",
                                "--workdir"]  # fmt: skip
    assert options["pipeline"] == sorted([*options["apply"], "--section", "--title"])
    assert options["seeds"] == ["--baseline", "--benchmarks-md", "--model", "--out", "--section"]
    assert options["variants"] == ["--benchmarks-md", "--compare", "--model", "--out",
                                   "--reference", "--section", "--spacing", "--truth",
                                   "--variants"]  # fmt: skip
    assert options["grokking"] == ["--benchmarks-md", "--max-points", "--out",
                                   "--permutations", "--planted-seeds"]  # fmt: skip
    assert options["concepts"] == ["--benchmarks-md", "--out", "--parts"]
    assert options["identifiability"] == ["--benchmarks-md", "--out", "--runs"]
    assert options["tidy"] == ["--benchmarks-md"]


@pytest.mark.parametrize("command", [["paper-domain", "--task", "digit_circle"], ["planted"]])
def test_seeds_that_are_not_integers_are_a_usage_error(tmp_path, command):
    out = tmp_path / "bench"
    result = run_benchmarks(*command, "--out", out, "--seeds", "0,x")
    assert result.returncode == 2
    assert "'0,x' is not a comma-separated list of integers" in result.stderr
    assert not out.exists()
