"""Sequence names across files: alias files, and the hint when a GFF/BED and FASTA disagree.

The commonest failure with real genomes is chromosome naming: an Ensembl GFF says ``1``, a
UCSC BED says ``chr1``, a RefSeq FASTA says ``NC_003070.9``. When a name is not in the FASTA
the error shows a few names from each file and a likely fix, guessed from case, a ``chr``
prefix, or the FASTA header (RefSeq headers say ``... chromosome 1``). The fix itself is an
explicit alias file (``--chrom-aliases``; pipeline ``chrom_aliases:``): a text file whose
lines pair names, one of which is the FASTA's (either column order; more columns are more
aliases of the same sequence, as in UCSC ``chromAlias.txt``). Annotations often cover more
than the FASTA (organelles, unplaced scaffolds): ``--skip-unknown-sequences`` skips such
lines and reports how many were skipped per sequence.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError
from ..io import READ_ERRORS, open_text, require_file

_CHROMOSOME_IN_HEADER = re.compile(r"\b(?:chromosome|chr)\s*([A-Za-z0-9]+)", re.IGNORECASE)
_PREFIX = re.compile(r"^(?:chromosome|chrom|chr)[_ ]?", re.IGNORECASE)


def read_aliases(path: Path, fasta_names) -> dict[str, str]:
    """Alias -> FASTA name, from a file of whitespace-separated names per line (gzip and a
    byte-order mark allowed, as in every text input)."""
    path = Path(path)
    require_file(path, "chromosome alias file")
    fasta_names = set(fasta_names)
    out: dict[str, str] = {}
    try:
        with open_text(path) as handle:
            lines = handle.read().splitlines()
    except READ_ERRORS as exc:
        raise InputError(f"{path}: cannot read alias file ({exc})"[:300]) from None
    for number, line in enumerate(lines, start=1):
        names = line.split()
        if not names or names[0].startswith("#"):
            continue
        if len(names) < 2:
            raise InputError(
                f"{path}:{number}: an alias line needs two names (other name, FASTA name)"
            )
        targets = [n for n in names if n in fasta_names]
        if not targets:
            raise InputError(
                f"{path}:{number}: none of {', '.join(map(repr, names))} is a sequence of "
                f"the FASTA ({_few(sorted(fasta_names))})"
            )
        if len(set(targets)) > 1:
            raise InputError(f"{path}:{number}: names two FASTA sequences: {targets}")
        for name in names:
            if name == targets[0]:
                continue
            if out.get(name, targets[0]) != targets[0]:
                raise InputError(
                    f"{path}:{number}: {name!r} is an alias of both {out[name]!r} and "
                    f"{targets[0]!r}"
                )
            out[name] = targets[0]
    if not out:
        raise InputError(f"{path}: alias file holds no aliases")
    return out


def _few(names, n: int = 5) -> str:
    names = list(names)
    return ", ".join(names[:n]) + (", ..." if len(names) > n else "")


def _core(name: str) -> str:
    return _PREFIX.sub("", name).lower()


def guess_fasta_name(name: str, fasta_names, headers: dict[str, str] | None = None) -> str | None:
    """The FASTA sequence ``name`` most likely means, by case, ``chr`` prefix or header."""
    fasta_names = list(fasta_names)
    for f in fasta_names:
        if f.lower() == name.lower():
            return f
    core = _core(name)
    for f in fasta_names:
        if _core(f) == core:
            return f
    for f, header in (headers or {}).items():
        found = _CHROMOSOME_IN_HEADER.search(header.split(None, 1)[1] if " " in header else "")
        if found and found.group(1).lower() == core:
            return f
    return None


def file_sequence_names(path: Path, *, limit: int = 5, max_lines: int = 2_000_000) -> list[str]:
    """The first distinct names in column 1 of a GFF/GTF/BED file (skipping comments)."""
    names: list[str] = []
    with open_text(path, errors="replace") as fh:
        for number, line in enumerate(fh):
            if number >= max_lines or len(names) >= limit:
                break
            if line.startswith(("#", "track", "browser")) or not line.strip():
                continue
            name = line.split("\t", 1)[0].strip()
            if name and name not in names:
                names.append(name)
    return names


def unknown_sequence_message(
    where: str, path: Path, name: str, fasta_names, headers: dict[str, str] | None = None
) -> str:
    """One line: the name, a few names from each file, and the likely fix."""
    fasta_names = list(fasta_names)
    theirs = file_sequence_names(path) if Path(path).is_file() else [name]
    known = set(fasta_names)
    pairs = [(n, guess_fasta_name(n, fasta_names, headers)) for n in theirs if n not in known]
    pairs = [(n, f) for n, f in pairs if f is not None]
    aliases = "--chrom-aliases FILE; pipeline: chrom_aliases: FILE"
    if pairs:
        example = "; ".join(f"'{n}<TAB>{f}'" for n, f in pairs[:3])
        fix = f"the names look like aliases: give an alias file with lines {example} ({aliases})"
    else:
        fix = (
            "skip the lines on sequences the FASTA lacks (--skip-unknown-sequences; pipeline: "
            "skip_unknown_sequences: true), or, if they are the same sequences under other "
            f"names, give an alias file ({aliases})"
        )
    return (
        f"{where}: sequence {name!r} is not in the FASTA. FASTA has: {_few(fasta_names)}; "
        f"{Path(path).name} has: {_few(theirs)}. Likely fix: {fix}"
    )


@dataclass
class SequenceNames:
    """A FASTA's sequence lengths, plus the aliases other files may use for its names.

    ``locate`` turns a name from a GFF/BED line into the FASTA's name, or raises the one-line
    error with the naming hint. ``headers`` (FASTA header lines) is read only for that hint.
    """

    lengths: dict[str, int]
    aliases: dict[str, str] = field(default_factory=dict)
    headers: Callable[[], dict[str, str]] | None = None
    #: Skip lines on sequences the FASTA lacks (counted in ``skipped``) instead of refusing.
    skip_unknown: bool = False
    skipped: Counter = field(default_factory=Counter)

    @classmethod
    def of(cls, names: SequenceNames | dict[str, int]) -> SequenceNames:
        return names if isinstance(names, SequenceNames) else cls(dict(names))

    def locate(self, where: str, source: Path, seqid: str, end: int, *, feature: str) -> str | None:
        """The FASTA name of ``seqid``; None when it is unknown and ``skip_unknown``."""
        name = self.aliases.get(seqid, seqid)
        if name not in self.lengths and self.skip_unknown:
            self.skipped[seqid] += 1
            return None
        if name not in self.lengths:
            headers = self.headers() if self.headers is not None else None
            raise InputError(unknown_sequence_message(where, source, seqid, self.lengths, headers))
        if end > self.lengths[name]:
            raise InputError(
                f"{where}: {feature} ends at {end}, beyond the end of {name} "
                f"(length {self.lengths[name]})"
            )
        return name


def sequence_names(
    genome, aliases: Path | None = None, *, skip_unknown: bool = False
) -> SequenceNames:
    """The :class:`SequenceNames` of a :class:`~.fasta.Genome`, with an optional alias file
    (and, with ``skip_unknown``, lines on sequences the FASTA lacks skipped, not refused)."""
    mapping = read_aliases(aliases, genome.lengths) if aliases else {}
    return SequenceNames(dict(genome.lengths), mapping, genome.headers, skip_unknown)
