"""``motifs.json``: the summary ``export`` writes beside its motif files, its one writer and
its one reader; and the exported motifs and motif families read back as
:class:`~.formats.ExportedMotif` (the summary's fields with the PWMs of the MEME file beside
it), and the families' merged sites, as ``scan`` and ``stability`` use them.

The summary's layout is ``runners/export.py``'s (``motifs``: one entry a motif; ``families``:
the families' block, ``export/families.py``). Every reader comes through here, so a missing,
torn or foreign file is the same one-line error, naming the file, wherever it is read.
"""

from __future__ import annotations

import csv
import gzip
import io
import zlib
from pathlib import Path

import numpy as np

from ..errors import InputError, RunDirectoryError
from ..io import write_json_atomic
from ..rundir import FAMILIES_DIR, FAMILY_SITES, MOTIFS_MEME, MOTIFS_SUMMARY, read_run_json
from .formats import ExportedMotif, read_meme_motifs

#: What makes the summary when it is missing.
EXPORT_FIRST = "run `sparling-genomics export` first"


def motifs_summary_path(folder: Path) -> Path:
    """``FOLDER/motifs.json`` (``FOLDER``: ``RUN/motifs`` or an export's ``--out``)."""
    return Path(folder) / MOTIFS_SUMMARY


def write_motifs_summary(folder: Path, summary: dict) -> Path:
    """Write ``FOLDER/motifs.json`` atomically (the file's one writer: ``export``)."""
    path = motifs_summary_path(folder)
    write_json_atomic(path, summary)
    return path


def read_motifs_summary(folder: Path, *, missing_ok: bool = False) -> dict | None:
    """``FOLDER/motifs.json`` as a dict; None where it is missing and ``missing_ok``. A
    missing (unless ``missing_ok``) or torn file, or one without its ``motifs`` list, is a
    one-line :class:`RunDirectoryError` naming it."""
    path = motifs_summary_path(folder)
    if missing_ok and not path.is_file():
        return None
    summary = read_run_json(path, EXPORT_FIRST)
    if not isinstance(summary, dict) or not isinstance(summary.get("motifs"), list):
        raise RunDirectoryError(f"{path}: no 'motifs' list (not made by `sparling-genomics "
                                "export`; export again)")  # fmt: skip
    return summary


def exported_motifs(folder: Path) -> list[ExportedMotif]:
    """The motifs of ``FOLDER/motifs.json`` with their PWMs from ``FOLDER/motifs.meme`` (id,
    name with spaces as ``_``, site count, channel, trimmed offset, family)."""
    folder = Path(folder)
    summary = read_motifs_summary(folder)
    entries = summary["motifs"]
    pwms = _pwms(folder / MOTIFS_MEME, [m["id"] for m in entries])
    return [ExportedMotif(m["id"], probs, m["nsites"], _name(m), m["channel"], m["offset"],
                          m.get("family") or "")
            for m, probs in zip(entries, pwms)]  # fmt: skip


def exported_families(folder: Path) -> list[ExportedMotif]:
    """The family representatives of ``FOLDER/motifs.json``'s ``families`` block with their
    PWMs from ``FOLDER/families/motifs.meme``; each one's ``effect`` is its family's effect on
    the prediction (None where the export measured none). A summary from before motif
    families is a one-line :class:`InputError`."""
    folder = Path(folder)
    summary = read_motifs_summary(folder)
    block = summary.get("families")
    if not isinstance(block, dict) or "families" not in block:
        raise InputError(f"{motifs_summary_path(folder)}: no 'families' block (exported "
                         "before motif families existed; run `sparling-genomics export` "
                         "again)")  # fmt: skip
    entries = block["families"]
    if not entries:
        return []
    pwms = _pwms(folder / FAMILIES_DIR / MOTIFS_MEME, [f["id"] for f in entries])
    return [ExportedMotif(f["id"], probs, int(f["nsites"]), _name(f),
                          effect=(f.get("effect") or {}).get("effect"))
            for f, probs in zip(entries, pwms)]  # fmt: skip


def exported_family_sites(folder: Path) -> dict[str, np.ndarray] | None:
    """The families' merged sites of ``FOLDER/families/sites.tsv.gz`` (``export/families.py``
    ``sites_tsv``): family id -> (window, start, strand +1/-1) rows, windows in the exported
    split's evaluation order; None where the export wrote no such file (no families, or an
    export from before it). A torn or foreign file is a one-line :class:`InputError`."""
    path = Path(folder) / FAMILIES_DIR / FAMILY_SITES
    if not path.is_file():
        return None
    rows: dict[str, list] = {}
    try:
        reader = csv.reader(io.StringIO(gzip.decompress(path.read_bytes()).decode()),
                            delimiter="\t")  # fmt: skip
        if next(reader, None) != ["family", "window", "start", "end", "strand"]:
            raise ValueError("not the header export writes")
        for line in reader:
            family, window, start, _, strand = line
            rows.setdefault(family, []).append((int(window), int(start),
                                                {"+": 1, "-": -1}[strand]))  # fmt: skip
    except (OSError, EOFError, zlib.error, UnicodeDecodeError, ValueError, KeyError) as exc:
        raise InputError(f"{path}: not a family sites table ({exc}); export again") from None
    return {k: np.asarray(v, np.int64).reshape(-1, 3) for k, v in rows.items()}


def _name(entry: dict) -> str:
    return (entry.get("name") or "").replace(" ", "_")


def _pwms(meme: Path, ids: list[str]) -> list:
    """The PWMs of ``ids`` from MEME file ``meme``, which export wrote with those ids in that
    order; a one-line :class:`InputError` where it holds others."""
    found = read_meme_motifs(meme)
    if [key.split()[0] for key in found] != ids:
        raise InputError(f"{meme}: its motifs do not match {MOTIFS_SUMMARY} ({len(found)} vs "
                         f"{len(ids)}); export again")  # fmt: skip
    return list(found.values())
