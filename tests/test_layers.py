"""The package's dependencies run one way, and no modules import each other in a circle.

Layers, bottom to top (a module may import its own layer and those below)::

    errors, io, config, rundir  ->  genome, sparsity, models, domains  ->  tasks  ->  evaluate
    ->  train  ->  export  ->  report  ->  runners  ->  cli

``export`` holds motifs and tracks, ``report`` the HTML page and its sections and figures,
``runners`` what each verb runs over a run folder (one module a verb, named after it; no
runner imports another), ``cli`` the verbs' argument parsing.

Imports are read with ``ast``, at module top and inside functions alike (an import inside a
function is still a dependency; hiding one there does not break a cycle). Then every module
is imported in a fresh interpreter in dependency order: each must load nothing of the package
that the order has not loaded already, so the order the static graph gives is the real one.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import sparling_genomics

PACKAGE = "sparling_genomics"
ROOT = Path(sparling_genomics.__file__).resolve().parent

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


def module_names() -> dict[str, Path]:
    """Every module of the package: dotted name -> file."""
    names = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names[".".join([PACKAGE, *parts])] = path
    return names


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
    """The package modules ``name`` imports anywhere in its file (top level or in a function,
    relative imports resolved; ``from pkg import mod`` counts as importing ``pkg.mod``)."""
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
            if target.startswith(PACKAGE) and target != name:
                found.add(target)
    return found


def import_graph() -> dict[str, set[str]]:
    modules = module_names()
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


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
for name in order:
    before = set(sys.modules)
    importlib.import_module(name)
    loaded = {m for m in set(sys.modules) - before if m.split(".")[0] == "sparling_genomics"}
    parents = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 1)}
    extra = sorted(loaded - {name} - parents)
    if extra:
        sys.exit(f"importing {name} loaded {extra} that the dependency order had not")
"""


def test_every_module_imports_in_dependency_order_in_a_fresh_interpreter():
    graph = import_graph()
    found = cycles(graph)
    assert not found, "import cycles: " + "; ".join(" <-> ".join(c) for c in found)
    # A ``__main__`` module runs the command line when imported: its imports are read above.
    order = [m for m in dependency_order(graph) if not m.endswith("__main__")]
    result = subprocess.run(
        [sys.executable, "-c", _IMPORT_IN_ORDER, json.dumps(order)],
        capture_output=True,
        text=True,
        timeout=600,
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
    """One concept per module: a module that grows past 450 lines holds more than one."""
    long = {str(p.relative_to(ROOT)): n for p in ROOT.rglob("*.py")
            if (n := len(p.read_text().splitlines())) > 450}  # fmt: skip
    assert not long, f"modules over 450 lines: {long}"


def private_imports(name: str, path: Path, modules: dict[str, Path]) -> list[str]:
    """``from other_module import _name`` in ``name``'s file: a private name of another
    package module."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom):
            continue
        source = _source_of(node, name, path)
        if not source.startswith(PACKAGE) or source == name:
            continue
        found += [f"{source}.{a.name}" for a in node.names
                  if a.name.startswith("_") and not a.name.startswith("__")]  # fmt: skip
    return found


def test_no_module_imports_a_private_name_of_another():
    modules = module_names()
    bad = [f"{name} imports {target}" for name, path in sorted(modules.items())
           for target in private_imports(name, path, modules)]  # fmt: skip
    assert not bad, "private names imported across modules:\n" + "\n".join(bad)


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
    source.write_text("from ..export.motifs import _secret, public\nfrom . import __doc__\n")
    name = f"{PACKAGE}.runners.mod"
    assert private_imports(name, source, {name: source}) == [
        f"{PACKAGE}.export.motifs._secret"
    ]
