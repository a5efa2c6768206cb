"""Check requirements/lock.txt against pyproject.toml, the conda env and an installed venv.

    python scripts/check_lock.py                   # lock vs pyproject.toml and the conda env
    pip freeze --all --exclude-editable | python scripts/check_lock.py --freeze -
    python scripts/check_lock.py --write-conda     # rewrite the conda env's pins (lock.sh)
    python scripts/check_lock.py --extras-in -     # names installed but not locked (setup.sh)

The lock is made by uv (`scripts/lock.sh`); this only reads it. What "disagree" means:
a requirement of pyproject.toml (dependencies, every extra, requirements/tools.in) that no
locked version satisfies; a package the lock says comes straight from pyproject.toml that
pyproject no longer asks for; a torch pin other than the one the lock was resolved against;
conda pins other than the lock's. Exit 1 with one line per problem.
"""

from __future__ import annotations

import argparse
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOCK = ROOT / "requirements" / "lock.txt"
TOOLS = ROOT / "requirements" / "tools.in"
PYPROJECT = ROOT / "pyproject.toml"
CONDA_ENV = ROOT / "pipelines" / "envs" / "sparling-genomics.yaml"
PYPROJECT_ROOT = "sparling-genomics (pyproject.toml)"
TORCH_HEADER = re.compile(r"^# torch: resolved against torch==(\S+)\+cpu")
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)")


def normalise(name: str) -> str:
    """PEP 503 name: `ConfigArgParse`, `connection_pool` -> `configargparse`, `connection-pool`."""
    return re.sub(r"[-_.]+", "-", name).lower()


def read_lock(text: str) -> tuple[dict[str, str], dict[str, set[str]], str | None]:
    """Pinned versions, each package's `# via` parents, and the torch version of the header."""
    pins: dict[str, str] = {}
    parents: dict[str, set[str]] = {}
    torch = None
    current = None
    for line in text.splitlines():
        if m := TORCH_HEADER.match(line):
            torch = m.group(1)
        elif m := PIN.match(line):
            current = normalise(m.group(1))
            pins[current] = m.group(2)
            parents[current] = set()
        elif current and (m := re.match(r"^\s+#\s+(?:via\s+)?(\S.*)$", line)):
            via = m.group(1).strip()
            if via != "via":
                parents[current].add(via)
    return pins, parents, torch


def pyproject_requirements(pyproject: Path = PYPROJECT, tools: Path = TOOLS) -> list[str]:
    """Every requirement string the set-up asks for: dependencies, all extras, tools.in."""
    project = tomllib.loads(pyproject.read_text())["project"]
    reqs = list(project.get("dependencies", []))
    for extra in project.get("optional-dependencies", {}).values():
        reqs.extend(extra)
    for line in tools.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            reqs.append(line)
    return reqs


def check_pyproject(lock_text: str, requirements: list[str]) -> list[str]:
    """Problems between the requirements and the lock (empty when they agree)."""
    from packaging.requirements import Requirement
    from packaging.version import Version

    pins, parents, torch = read_lock(lock_text)
    problems = []
    wanted = set()
    for text in requirements:
        req = Requirement(text)
        name = normalise(req.name)
        wanted.add(name)
        if req.marker is not None and not req.marker.evaluate({"python_version": "3.11"}):
            continue
        if name == "torch":
            if torch is None:
                problems.append("lock: no '# torch: resolved against' line; run scripts/lock.sh")
            elif not req.specifier.contains(Version(torch), prereleases=True):
                problems.append(f"pyproject.toml asks for {text} but the lock was resolved "
                                f"against torch=={torch}; run scripts/lock.sh")
        elif name not in pins:
            problems.append(f"pyproject.toml asks for {text} but the lock has no {name}; "
                            "run scripts/lock.sh")
        elif not req.specifier.contains(Version(pins[name]), prereleases=True):
            problems.append(f"pyproject.toml asks for {text} but the lock pins "
                            f"{name}=={pins[name]}; run scripts/lock.sh")
    for name, via in sorted(parents.items()):
        if PYPROJECT_ROOT in via and name not in wanted:
            problems.append(f"the lock pins {name} for pyproject.toml, which no longer asks "
                            "for it; run scripts/lock.sh")
    return problems


def read_freeze(text: str) -> dict[str, str]:
    """`pip freeze` lines -> {name: version}; editable and URL lines are skipped."""
    out = {}
    for line in text.splitlines():
        if m := PIN.match(line.strip()):
            out[normalise(m.group(1))] = m.group(2)
    return out


def torch_build_packages(pins: dict[str, str], requires=None) -> set[str]:
    """torch and what the installed torch build needs beyond the lock, transitively: a CUDA
    build of the pinned release brings nvidia-* wheels that the lock (resolved against the
    CPU build) does not name; they belong to that torch, not to the project.

    ``requires(name)`` gives a distribution's requirement strings (default: the running
    interpreter's ``importlib.metadata.requires``; None where it is not installed)."""
    from packaging.requirements import Requirement

    if requires is None:
        from importlib import metadata

        def requires(name):
            try:
                return metadata.requires(name) or []
            except metadata.PackageNotFoundError:
                return None

    found, todo = {"torch"}, ["torch"]
    while todo:
        for text in requires(todo.pop()) or []:
            req = Requirement(text)
            name = normalise(req.name)
            if req.marker is not None and not req.marker.evaluate({"extra": ""}):
                continue
            if name not in found and name not in pins and requires(name) is not None:
                found.add(name)
                todo.append(name)
    return found


def check_freeze(lock_text: str, freeze_text: str, requires=None) -> list[str]:
    """Problems between an installed environment (pip freeze --all) and the lock."""
    pins, _, torch = read_lock(lock_text)
    installed = read_freeze(freeze_text)
    build = torch_build_packages(pins, requires)
    problems = []
    for name in sorted(set(pins) | set(installed)):
        if name in build:
            continue
        if name not in installed:
            problems.append(f"{name}=={pins[name]} is locked but not installed")
        elif name not in pins:
            problems.append(f"{name}=={installed[name]} is installed but not in the lock")
        elif installed[name] != pins[name]:
            problems.append(f"{name}=={installed[name]} is installed, the lock pins {pins[name]}")
    got = installed.get("torch")
    if got is None:
        problems.append(f"torch is not installed (the lock was resolved against {torch})")
    elif got.split("+", 1)[0] != torch:
        problems.append(f"torch=={got} is installed, the lock was resolved against {torch}")
    return problems


def conda_env(lock_text: str, env_text: str) -> str:
    """The conda env file with its pip pins replaced by the lock's (comments kept)."""
    pins, _, torch = read_lock(lock_text)
    head = env_text.split("      # pinned by scripts/lock.sh", 1)[0].rstrip("\n")
    lines = [head, "      # pinned by scripts/lock.sh (the versions of requirements/lock.txt)",
             f"      - torch=={torch}"]
    lines += [f"      - {name}=={version}" for name, version in sorted(pins.items())]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--freeze", help="pip freeze output to diff against the lock (- = stdin)")
    parser.add_argument("--extras-in", help="print installed names the lock lacks (- = stdin)")
    parser.add_argument("--write-conda", action="store_true")
    args = parser.parse_args(argv)
    lock_text = LOCK.read_text()
    if args.write_conda:
        CONDA_ENV.write_text(conda_env(lock_text, CONDA_ENV.read_text()))
        return 0
    if args.extras_in:
        text = sys.stdin.read() if args.extras_in == "-" else Path(args.extras_in).read_text()
        pins = read_lock(lock_text)[0]
        build = torch_build_packages(pins)
        print("\n".join(n for n in read_freeze(text) if n not in pins and n not in build))
        return 0
    if args.freeze:
        text = sys.stdin.read() if args.freeze == "-" else Path(args.freeze).read_text()
        problems = [f"{LOCK.name}: {p}" for p in check_freeze(lock_text, text)]
    else:
        problems = check_pyproject(lock_text, pyproject_requirements())
        if conda_env(lock_text, CONDA_ENV.read_text()) != CONDA_ENV.read_text():
            problems.append(f"{CONDA_ENV.name}: pins differ from the lock; run scripts/lock.sh")
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    if not problems:
        print(f"{LOCK.relative_to(ROOT)}: agrees", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
