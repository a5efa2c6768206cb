"""Benchmarks reach a run folder through ``rundir`` (issue 56): no benchmark module spells a
file name ``rundir`` owns or joins a path with one of its folder names. That they use the
package's public names only (no ``_name`` by import or as a module's attribute) is
``tests/test_layers.py``'s check, across the package and the benchmarks alike."""

from __future__ import annotations

import ast

from sparling_genomics import rundir

from ..conftest import REPO

BENCHMARKS = REPO / "benchmarks"


def run_folder_names() -> tuple[set[str], set[str]]:
    """(file names, folder names) ``rundir`` owns: its module-level string constants, a name
    with a dot being a file's."""
    names = {v for k, v in vars(rundir).items() if k.isupper() and isinstance(v, str)}
    files = {n for n in names if "." in n}
    return files, names - files


def _docstrings(tree: ast.Module) -> set[int]:
    """ids of the module's, classes' and functions' docstring nodes (prose may name files)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def offences(source: str, filename: str = "<source>") -> list[str]:
    """Where ``source`` spells a run-folder file name (the whole string or one ``/`` part of
    it, as in a glob) or joins a path with a run-folder folder name (``run / "motifs"``): one
    ``file:line: what`` each."""
    files, folders = run_folder_names()
    tree = ast.parse(source, filename=filename)
    docstrings = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        where = f"{filename}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) in docstrings:
                continue
            hit = files & set(node.value.split("/"))
            if hit:
                found.append(f"{where}: spells {sorted(hit)[0]!r} (use rundir's name)")
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            right = node.right
            if isinstance(right, ast.Constant) and right.value in folders:
                found.append(f"{where}: joins {right.value!r} (use rundir's name)")
    return found


def test_the_checker_sees_each_kind_of_offence():
    planted = '''
"""A docstring may name RUN/metrics.json."""
import json
from pathlib import Path

from sparling_genomics.rundir import METRICS_NAME


def read(run: Path) -> dict:
    """Reads metrics.json."""
    a = json.loads((run / "metrics.json").read_text())
    b = sorted(run.glob("*/seed*/config.yaml"))
    c = run / "motifs"
    d = {"motifs": 1, "checkpoints": 2}  # keys, not paths
    return a, b, c, d, run / METRICS_NAME
'''
    found = offences(planted, "planted.py")
    assert sorted(found) == sorted([
        "planted.py:11: spells 'metrics.json' (use rundir's name)",
        "planted.py:12: spells 'config.yaml' (use rundir's name)",
        "planted.py:13: joins 'motifs' (use rundir's name)",
    ])  # fmt: skip


def test_the_names_collected_are_rundirs_files_and_folders():
    files, folders = run_folder_names()
    assert {rundir.METRICS_NAME, rundir.CONFIG_NAME, rundir.LOG_NAME, rundir.MOTIFS_SUMMARY,
            rundir.SCAN_SUMMARY, rundir.VARIANTS_SUMMARY, rundir.FINAL_CHECKPOINT} <= files
    assert {rundir.MOTIFS_DIR, rundir.CHECKPOINT_DIR} <= folders


def test_no_benchmark_spells_a_run_folder_name():
    modules = sorted(BENCHMARKS.glob("*.py"))
    assert len(modules) > 10
    found = []
    for path in modules:
        found += offences(path.read_text(), str(path.relative_to(REPO)))
    assert not found, "\n".join(found)
