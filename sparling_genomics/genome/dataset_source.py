"""What a dataset records of its inputs (FASTA, annotation or BED, chromosome aliases), so
that a dataset or a run copied elsewhere still finds them.

A bundled reference is recorded by name (``tair10-chr1``): its files live in an installed
package, at another path in every environment. Other files are recorded by
``io.record_path``: relative to the dataset's folder where both lie under the working folder
(a project's results tree, moved as one), absolute otherwise. Datasets written before this
recorded every path as given; those are read as before (relative to the working folder).
"""

from __future__ import annotations

from pathlib import Path

from ..io import record_path, resolve_recorded
from .references import load_reference

SOURCE_KEYS = ("fasta", "annotation", "bed", "chrom_aliases")


def source_record(out: Path, *, reference: str | None = None, **files: Path | None) -> dict:
    """The ``source`` attribute of dataset ``out``: each of :data:`SOURCE_KEYS` recorded
    from ``out``'s folder (None where not given); with ``reference`` (a bundled reference's
    name), its name and which of the files are that reference's (``from_reference``)."""
    folder = Path(out).parent
    record = {key: record_path(files[key], folder) if files.get(key) else None
              for key in SOURCE_KEYS}  # fmt: skip
    if reference:
        bundled = load_reference(reference)
        own = {"fasta": bundled.fasta, "annotation": bundled.annotation}
        record["reference"] = reference
        record["from_reference"] = [key for key, path in own.items() if path and files.get(key)
                                    and Path(files[key]).resolve() == Path(path).resolve()]
    return record


def source_file(source: dict, key: str, dataset: Path) -> Path | None:
    """The input file ``key`` ("fasta", "annotation", ...) of the dataset at ``dataset``
    whose ``source`` attribute is ``source``: the named reference's file where it was built
    from one, else the recorded path found from the dataset's folder; None if none."""
    name = source.get("reference")
    if name and key in source.get("from_reference", ()):
        reference = load_reference(name)
        return Path(reference.fasta if key == "fasta" else reference.annotation)
    text = source.get(key)
    return resolve_recorded(text, Path(dataset).parent) if text else None
