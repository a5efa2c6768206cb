"""A wheel built from the checkout and installed into a fresh venv outside it gives a working
``sparling-genomics``: the reference manifests, the splicing motifs and the tiny reference ship
in it as package data (pyproject.toml maps ``reference/`` to ``sparling_genomics/reference/``).

The fresh venv installs only the wheel; the dependencies come from this interpreter's
site-packages, named by a ``.pth`` line (which adds the folder without running its own ``.pth``
files, so the checkout's editable install stays inactive there). Deselect with
``--deselect tests/test_wheel.py::test_the_wheel_installed_elsewhere_trains_and_exports``.
"""

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())
#: Package data the wheel must hold beside the reference manifests (reference/*.yaml).
PACKAGE_DATA = ("splicing_motifs.meme", "splicing_motifs.md", "tiny/tiny.fa", "tiny/tiny.gff3")


def test_pyproject_lists_every_package():
    """pyproject.toml lists its packages by name (a package mapped from reference/ cannot be
    mixed with packages.find): every folder with an ``__init__.py``, and reference/'s."""
    listed = PYPROJECT["tool"]["setuptools"]["packages"]
    code = {".".join(p.parent.relative_to(REPO).parts)
            for p in (REPO / "sparling_genomics").rglob("__init__.py")}  # fmt: skip
    reference = REPO / "reference"
    folders = [reference, *(p for p in reference.rglob("*") if p.is_dir())]
    data = {".".join(("sparling_genomics", *p.relative_to(REPO).parts)) for p in folders}
    assert sorted(listed) == sorted(code | data)
    assert PYPROJECT["tool"]["setuptools"]["package-dir"] == {
        "sparling_genomics.reference": "reference"
    }


def _run(args, cwd, env, timeout=300):
    result = subprocess.run(list(map(str, args)), cwd=cwd, env=env, capture_output=True,
                            text=True, timeout=timeout)  # fmt: skip
    assert result.returncode == 0, f"{' '.join(map(str, args))}:\n{result.stderr[-3000:]}"
    return result


def _source_copy(dest: Path) -> Path:
    """The files a wheel is built from, copied: setuptools' build/ and egg-info stay out of the
    checkout, and no stale build/lib of an earlier build can ship a removed module."""
    dest.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(REPO / name, dest / name)
    skip = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("sparling_genomics", "reference"):
        shutil.copytree(REPO / name, dest / name, ignore=skip)
    return dest


def test_the_wheel_installed_elsewhere_trains_and_exports(tmp_path):
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP")}  # fmt: skip
    env.update(OMP_NUM_THREADS="1", PYTHONUNBUFFERED="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    src = _source_copy(tmp_path / "src")
    dist = tmp_path / "dist"
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
          "--no-cache-dir", "-q", "-w", dist, src], tmp_path, env)  # fmt: skip
    [wheel] = dist.glob("sparling_genomics-*.whl")

    names = set(zipfile.ZipFile(wheel).namelist())
    modules = {p.relative_to(src).as_posix() for p in (src / "sparling_genomics").rglob("*.py")}
    assert modules <= names, sorted(modules - names)
    data = [p.name for p in (REPO / "reference").glob("*.yaml")] + list(PACKAGE_DATA)
    assert {"tiny.yaml", "tair10-chr1.yaml"} <= set(data)
    missing = {f"sparling_genomics/reference/{name}" for name in data} - names
    assert not missing, sorted(missing)

    venv = tmp_path / "venv"
    made = subprocess.run([sys.executable, "-m", "venv", venv], capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"cannot make a venv with pip: {made.stderr.strip()[-300:]}")
    python, cli = venv / "bin" / "python", venv / "bin" / "sparling-genomics"
    _run([python, "-m", "pip", "install", "--no-deps", "--no-index", "-q", wheel], tmp_path, env)
    site = Path(_run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                     tmp_path, env).stdout.strip())  # fmt: skip
    deps = dict.fromkeys(sysconfig.get_paths()[k] for k in ("purelib", "platlib"))
    (site / "checkout_dependencies.pth").write_text("".join(f"{p}\n" for p in deps))

    work = tmp_path / "elsewhere"
    work.mkdir()
    assert REPO not in work.parents
    where = _run([python, "-c", "import sparling_genomics as s; from sparling_genomics.genome."
                  "references import reference_dir as r; print(s.__file__); print(r())"],
                 work, env).stdout.split()  # fmt: skip
    assert all(Path(p).is_relative_to(site) for p in where), where
    version = _run([cli, "--version"], work, env).stdout
    assert PYPROJECT["project"]["version"] in version

    _run([cli, "dataset", "--reference", "tiny", "--out", "ds.h5"], work, env)
    _run([cli, "train", "--task", "splicing", "--preset", "tiny", "--dataset", "ds.h5",
          "--out", "run", "--no-progress"], work, env)  # fmt: skip
    metrics = json.loads((work / "run" / "metrics.json").read_text())
    assert metrics["task"] == "splicing"
    _run([cli, "export", "--model", "run", "--min-sites", "3"], work, env)
    summary = json.loads((work / "run" / "motifs" / "motifs.json").read_text())
    reference = summary["reference_motifs"]
    assert reference["kind"] == "splicing"
    assert "annotated_donor" in reference["targets"]
    assert "branchpoint_YTNAN" in reference["targets"]  # from the wheel's splicing_motifs.meme
