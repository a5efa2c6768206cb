"""The package's dependencies run one way, and no modules import each other in a circle.

Layers, bottom to top (a module may import its own layer and those below)::

    errors, io, config, rundir  ->  genome, sparsity, models, domains  ->  tasks  ->  evaluate
    ->  train  ->  export  ->  report  ->  runners  ->  cli

``export`` holds motifs and tracks, ``report`` the HTML page and its sections and figures,
``runners`` what each verb runs over a run folder (one module a verb, named after it; no
runner imports another), ``cli`` the verbs' argument parsing.

``benchmarks/`` (``python -m benchmarks``, outside the installed package) sits above all of it:
benchmarks import the package as its users do, the package never imports a benchmark, and the
benchmark modules import one another in one direction too (the floors they all judge by in
``benchmarks/floors.py``, which imports no other benchmark module).

Imports are read with ``ast``, at module top and inside functions alike (an import inside a
function is still a dependency; hiding one there does not break a cycle). Then every module
is imported in a fresh interpreter in dependency order: each must load nothing of its own
top-level package that the order has not loaded already, so the order the static graph gives
is the real one. No module reaches a private name (``_name``) of another, by import or as an
attribute of an imported module.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import sparling_genomics

PACKAGE = "sparling_genomics"
ROOT = Path(sparling_genomics.__file__).resolve().parent
BENCHMARKS = "benchmarks"
BENCHMARKS_ROOT = ROOT.parent / BENCHMARKS
#: Benchmark modules every other benchmark may read, and that read no benchmark module.
BENCHMARK_BASE = (f"{BENCHMARKS}.floors", f"{BENCHMARKS}.labels")

# Rank of each top-level name in the package; imports may only point to the same or a lower
# rank.
LAYERS: list[tuple[str, ...]] = [
    ("", "errors", "io", "config", "rundir", "progress"),
    ("genome", "sparsity", "models", "domains"),
    ("tasks",),
    ("evaluate", "concepts"),
    ("train",),
    ("export",),
    ("report",),
    ("runners",),
    ("cli", "__main__"),
]
RANK = {name: rank for rank, names in enumerate(LAYERS) for name in names}


def module_names(root: Path = ROOT, top: str = PACKAGE) -> dict[str, Path]:
    """Every module of the package ``top`` in folder ``root``: dotted name -> file."""
    names = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names[".".join([top, *parts])] = path
    return names


def all_modules() -> dict[str, Path]:
    """The package's modules and the benchmarks'."""
    return module_names() | module_names(BENCHMARKS_ROOT, BENCHMARKS)


def top_of(module: str) -> str:
    return module.split(".")[0]


def _is_package(path: Path) -> bool:
    return path.name == "__init__.py"


def _source_of(node: ast.ImportFrom, name: str, path: Path) -> str:
    """The module a ``from ... import`` in module ``name`` (file ``path``) reads from, with
    relative imports resolved."""
    if not node.level:
        return node.module or ""
    base = name if _is_package(path) else name.rpartition(".")[0]
    anchor = base.split(".")
    anchor = anchor[: len(anchor) - (node.level - 1)]
    return ".".join(anchor + ([node.module] if node.module else []))


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The modules of ``modules`` that ``name`` imports anywhere in its file (top level or in
    a function, relative imports resolved; ``from pkg import mod`` counts as importing
    ``pkg.mod``)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            source = _source_of(node, name, path)
            targets = [
                f"{source}.{a.name}" if f"{source}.{a.name}" in modules else source
                for a in node.names
            ]
        else:
            continue
        for target in targets:
            # ``import pkg.a.b`` of a module that does not exist names its nearest package.
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def import_graph(top: str = PACKAGE) -> dict[str, set[str]]:
    """What each module of ``top`` (the package or the benchmarks) imports of either."""
    modules = all_modules()
    return {name: imports_of(name, path, modules) for name, path in modules.items()
            if top_of(name) == top}  # fmt: skip


def layer_of(module: str) -> str:
    """The top-level name of ``module`` inside the package ('' for the package itself)."""
    return module.removeprefix(PACKAGE).lstrip(".").split(".")[0]


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def dependency_order(graph: dict[str, set[str]]) -> list[str]:
    """Modules with every module a module imports before it (the graph must be acyclic)."""
    order: list[str] = []
    done: set[str] = set()

    def visit(node: str) -> None:
        if node in done:
            return
        done.add(node)
        for nxt in sorted(graph[node]):
            visit(nxt)
        order.append(node)

    for node in sorted(graph):
        visit(node)
    return order


def test_every_module_has_a_layer():
    unknown = sorted({layer_of(m) for m in import_graph()} - set(RANK))
    assert not unknown, f"package names without a layer in tests/test_layers.py: {unknown}"


def test_no_import_cycles():
    found = cycles(import_graph())
    assert not found, "import cycles: " + "; ".join(" <-> ".join(c) for c in found)


def test_no_import_cycles_among_the_benchmarks():
    found = cycles(import_graph(BENCHMARKS))
    assert not found, "import cycles: " + "; ".join(" <-> ".join(c) for c in found)


def test_the_package_never_imports_a_benchmark():
    bad = [f"{module} imports {target}" for module, targets in sorted(import_graph().items())
           for target in sorted(targets) if top_of(target) == BENCHMARKS]  # fmt: skip
    assert not bad, "the package importing benchmarks:\n" + "\n".join(bad)


def test_the_floors_and_labels_import_no_benchmark():
    """Every benchmark and the summary read the floors (and the names the sections give what
    they compare) from one place, below all of them."""
    graph = import_graph(BENCHMARKS)
    assert set(BENCHMARK_BASE) <= set(graph)
    bad = [f"{module} imports {target}" for module in BENCHMARK_BASE
           for target in sorted(graph[module]) if top_of(target) == BENCHMARKS]  # fmt: skip
    assert not bad, "\n".join(bad)


def test_imports_run_down_the_layers():
    bad = [
        f"{module} ({layer_of(module) or PACKAGE}) imports {target} ({layer_of(target)})"
        for module, targets in sorted(import_graph().items())
        for target in sorted(targets)
        if RANK.get(layer_of(target), -1) > RANK.get(layer_of(module), len(LAYERS))
    ]
    assert not bad, "imports of a higher layer:\n" + "\n".join(bad)


_IMPORT_IN_ORDER = """
import importlib, json, sys
order = json.loads(sys.argv[1])
top = order[0].split(".")[0]
for name in order:
    before = set(sys.modules)
    importlib.import_module(name)
    loaded = {m for m in set(sys.modules) - before if m.split(".")[0] == top}
    parents = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 1)}
    extra = sorted(loaded - {name} - parents)
    if extra:
        sys.exit(f"importing {name} loaded {extra} that the dependency order had not")
"""


@pytest.mark.parametrize("top", [PACKAGE, BENCHMARKS])
def test_every_module_imports_in_dependency_order_in_a_fresh_interpreter(top):
    """Each top-level package on its own (a benchmark's imports of the package load freely)."""
    graph = {name: {t for t in targets if top_of(t) == top}
             for name, targets in import_graph(top).items()}  # fmt: skip
    found = cycles(graph)
    assert not found, "import cycles: " + "; ".join(" <-> ".join(c) for c in found)
    # A ``__main__`` module runs the command line when imported: its imports are read above.
    order = [m for m in dependency_order(graph) if not m.endswith("__main__")]
    result = subprocess.run(
        [sys.executable, "-c", _IMPORT_IN_ORDER, json.dumps(order)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT.parent,  # where ``benchmarks`` is found, as ``python -m benchmarks`` runs
    )
    assert result.returncode == 0, result.stderr.strip().splitlines()[-1:]


def test_the_checks_see_a_cycle_and_an_upward_import(tmp_path):
    """The graph reader and the checks find what they are for, on a made-up package."""
    graph = {
        f"{PACKAGE}.tasks.base": {f"{PACKAGE}.evaluate.evaluation"},
        f"{PACKAGE}.evaluate.evaluation": {f"{PACKAGE}.tasks.base"},
        f"{PACKAGE}.rundir": set(),
    }
    assert cycles(graph) == [[f"{PACKAGE}.evaluate.evaluation", f"{PACKAGE}.tasks.base"]]
    source = tmp_path / "mod.py"
    source.write_text("def f():\n    from ..train.trainer import train\n")
    modules = {f"{PACKAGE}.evaluate.mod": source, f"{PACKAGE}.train.trainer": source}
    assert imports_of(f"{PACKAGE}.evaluate.mod", source, modules) == {f"{PACKAGE}.train.trainer"}


def test_no_module_is_over_450_lines():
    """One concept per module (in the package and in the benchmarks): a module that grows
    past 450 lines holds more than one."""
    long = {str(p.relative_to(ROOT.parent)): n for p in all_modules().values()
            if (n := len(p.read_text().splitlines())) > 450}  # fmt: skip
    assert not long, f"modules over 450 lines: {long}"


def _private(attr: str) -> bool:
    return attr.startswith("_") and not attr.startswith("__")


def _dotted(node: ast.expr) -> str | None:
    """``a.b.c`` of a chain of names and attributes; None for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def private_uses(name: str, path: Path, modules: dict[str, Path]) -> list[str]:
    """The private names (``_name``) of another module of the package or the benchmarks that
    ``name``'s file reaches: ``from module import _name``, ``import pkg._module``, or
    ``module._name`` on a module an import bound to a name."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found, bound = [], {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            source = _source_of(node, name, path)
            if top_of(source) not in (PACKAGE, BENCHMARKS) or source == name:
                continue
            found += [f"{source}.{a.name}" for a in node.names if _private(a.name)]
            bound |= {a.asname or a.name: f"{source}.{a.name}" for a in node.names
                      if f"{source}.{a.name}" in modules}  # fmt: skip
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if top_of(alias.name) not in (PACKAGE, BENCHMARKS):
                    continue
                found += [alias.name for part in alias.name.split(".") if _private(part)]
                bound[alias.asname or top_of(alias.name)] = (
                    alias.name if alias.asname else top_of(alias.name))
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            base = _dotted(node.value)
            first, _, rest = (base or "").partition(".")
            module = ".".join(filter(None, [bound.get(first), rest]))
            if first in bound and module in modules and module != name:
                found.append(f"{module}.{node.attr}")
    return found


def test_no_module_uses_a_private_name_of_another():
    """Across the package and the benchmarks (a benchmark uses the package as its users do:
    public names only, the CLI's private helpers included)."""
    modules = all_modules()
    bad = [f"{name} uses {target}" for name, path in sorted(modules.items())
           for target in private_uses(name, path, modules)]  # fmt: skip
    assert not bad, "private names used across modules:\n" + "\n".join(bad)


def test_no_runner_imports_another_runner():
    """Each verb's runner stands alone: what two runners share lives in a lower layer."""
    bad = [f"{module} imports {target}" for module, targets in sorted(import_graph().items())
           if layer_of(module) == "runners" for target in sorted(targets)
           if layer_of(target) == "runners" and target != f"{PACKAGE}.runners"]  # fmt: skip
    assert not bad, "runners importing runners:\n" + "\n".join(bad)


def test_every_runner_is_named_after_its_verb():
    """``runners/scan.py`` runs ``scan``: a runner's module name is the verb it runs."""
    from sparling_genomics.cli.main import main

    runners = {name.rpartition(".")[2] for name in module_names()
               if layer_of(name) == "runners" and name != f"{PACKAGE}.runners"}  # fmt: skip
    assert runners and not runners - set(main.commands), sorted(runners - set(main.commands))


def test_the_private_name_check_sees_one(tmp_path):
    source = tmp_path / "mod.py"
    source.write_text(
        "from ..export.motifs import _secret, public\nfrom . import __doc__\n"
        "from sparling_genomics.cli import main as cli_main\nimport sparling_genomics.io\n"
        "import sparling_genomics._hidden\nfrom benchmarks import report\n"
        "def f(run):\n"
        "    return cli_main._model_option, sparling_genomics.io._tmp, report._cell, run._x\n"
    )
    name = f"{PACKAGE}.runners.mod"
    modules = {m: source for m in (name, f"{PACKAGE}.cli.main", f"{PACKAGE}.io",
                                   f"{BENCHMARKS}.report")}  # fmt: skip
    assert sorted(private_uses(name, source, modules)) == sorted([
        f"{PACKAGE}.export.motifs._secret", f"{PACKAGE}._hidden",
        f"{PACKAGE}.cli.main._model_option", f"{PACKAGE}.io._tmp", f"{BENCHMARKS}.report._cell",
    ])  # fmt: skip
