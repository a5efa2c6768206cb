"""VCF input for variant scoring, read with pysam (htslib): records streamed one at a time,
multi-allelic records split into their ALT alleles, every field the scorer uses checked against
its domain, and every allele either scored or counted under a reason -- never silently dropped.

Refused with a one-line ``file:line`` error (exit 2): a file that is not VCF, a record htslib
cannot parse, POS < 1, a REF or ALT that is not an allele, an ID holding whitespace, a QUAL
that is not a Phred score (a number >= 0, or ``.``), REF running past the sequence's end, a
sequence the FASTA lacks (unless ``skip_unknown``), a REF that does not match the FASTA (unless
``skip_ref_mismatch``), and a VCF without records. Counted and skipped: ALT ``.`` (no
alternative), symbolic and breakend alleles (``<DEL>``, ``*``, ``G]chr2:5]``) and alleles
longer than :data:`MAX_ALLELE` bases.

A VCF (plain or gzip) that starts with a UTF-8 byte-order mark is read as the same file without
it: htslib cannot skip the mark, so it reads the text through a pipe that leaves it out.
"""

from __future__ import annotations

import codecs
import gzip
import os
import re
import shutil
import threading
import zlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..io import READ_ERRORS, is_gzip, open_text, require_file, starts_with_bom
from .chromosomes import SequenceNames
from .sequence import N_CODE, decode, encode

MAX_ALLELE = 50
_DNA = re.compile(r"^[ACGTNacgtn]+$")
_SYMBOLIC = re.compile(r"^(<[^<>]+>|\*|.*[\[\]].*|\.?[ACGTNacgtn]+\.?)$")

#: Why an allele was not scored (the summary's keys).
SKIP_REASONS = {
    "no_alt": "ALT is '.' (no alternative allele)",
    "symbolic": "symbolic or breakend ALT (<DEL>, *, t[chr:pos[, ...)",
    "too_long": f"REF or ALT longer than {MAX_ALLELE} bases",
    "unknown_sequence": "on a sequence the FASTA lacks (--skip-unknown-sequences)",
    "ref_mismatch": "REF does not match the FASTA (--skip-ref-mismatch)",
}


@dataclass
class VcfAllele:
    """One ALT allele of a record: scored (``skip`` None) or skipped for ``skip``."""

    alt: str
    skip: str | None = None


@dataclass
class VcfRecord:
    """One record: its text columns, FASTA sequence name, 0-based REF start and alleles."""

    line: int
    columns: list[str]
    seqid: str | None
    pos: int
    ref: str
    alleles: list[VcfAllele] = field(default_factory=list)


def _header_lines(path: Path) -> int:
    """Lines before the first record (for ``file:line`` messages)."""
    n = 0
    try:
        with open_text(path, errors="replace") as fh:
            for line in fh:
                if not line.startswith("#"):
                    break
                n += 1
    except READ_ERRORS:
        return 0
    return n


def _record_lines(path: Path) -> Iterator[str]:
    """The record lines of ``path`` as written (htslib reads a QUAL of 'abc' as 0 and keeps
    an ID with spaces, and its records print back normalised, so those two columns are checked
    on the text)."""
    with open_text(path, errors="replace") as fh:
        for text in fh:
            if text.strip() and not text.startswith("#"):
                yield text


def _check_text_fields(at: str, text: str) -> None:
    """Refuse an ID with whitespace or a QUAL that is not a Phred score (VCF 4.3, 1.6.1)."""
    columns = text.rstrip("\r\n").split("\t")
    if len(columns) < 6:
        return  # htslib has refused or will refuse the record
    rid, qual = columns[2], columns[5]
    if re.search(r"\s", rid):
        raise InputError(f"{at}: ID {rid[:20]!r} holds whitespace (VCF IDs cannot)")
    if qual != ".":
        try:
            score = float(qual)
        except ValueError:
            score = float("nan")
        if not score >= 0:
            raise InputError(f"{at}: QUAL {qual[:20]!r} is not a Phred quality (a number >= 0, "
                             "or '.' when unknown)")  # fmt: skip


class VcfReader:
    """Streams the records of ``path``; ``counts`` tallies records, alleles and skips."""

    def __init__(self, path: Path, names: SequenceNames, fetch, *,
                 skip_ref_mismatch: bool = False) -> None:  # fmt: skip
        import pysam

        self.path = Path(path)
        require_file(self.path, "VCF file")
        if self.path.stat().st_size == 0:
            raise InputError(f"{self.path}: empty file, not a VCF")
        pysam.set_verbosity(0)  # htslib's warnings; what matters is checked here
        self._handle = None
        self._feed: _BomFreePipe | None = None
        try:
            if starts_with_bom(self.path):  # htslib cannot skip it: a pipe without it
                self._feed = _BomFreePipe(self.path)
                self._handle = self._feed.reader
                self._vcf = pysam.VariantFile(self._handle)
            else:
                try:
                    self._vcf = pysam.VariantFile(str(self.path))
                except NotImplementedError:  # plain gzip, not bgzip: htslib cannot seek in it
                    self._handle = gzip.open(self.path, "rb")  # noqa: SIM115 - closed by close()
                    self._vcf = pysam.VariantFile(self._handle)
        except (ValueError, OSError, EOFError, zlib.error) as exc:
            reason = exc
            if self._feed is not None:  # htslib names the pipe, not the file: say what failed
                self._feed.reader.close()
                self._feed.check()
                reason = "htslib cannot read its header"
            raise InputError(f"{self.path}: not a VCF file ({reason})"[:300]) from None
        try:
            self.header_text = str(self._vcf.header)
        except UnicodeDecodeError as exc:
            raise InputError(f"{self.path}: the header is not UTF-8 text ({exc})"[:300]) from None
        self._first_line = _header_lines(self.path) + 1
        self.names = names
        self.fetch = fetch
        self.skip_ref_mismatch = skip_ref_mismatch
        self.counts: Counter = Counter()

    def close(self) -> None:
        self._vcf.close()
        if self._handle is not None:
            self._handle.close()

    def records(self) -> Iterator[VcfRecord]:
        line = self._first_line - 1
        where = "the first record"
        it = iter(self._vcf)
        raw = _record_lines(self.path)  # the text htslib parsed: what it reads leniently
        while True:
            try:
                rec = next(it)
            except StopIteration:
                break
            except (OSError, ValueError) as exc:
                raise InputError(
                    f"{self.path}:{line + 1}: not a VCF record, the one after {where} "
                    f"(htslib: {exc})"[:300]
                ) from None
            line += 1
            at = f"{self.path}:{line}"
            try:
                text = next(raw, "")
            except READ_ERRORS as exc:
                raise InputError(f"{at}: cannot read the record ({exc})"[:300]) from None
            _check_text_fields(at, text)
            try:
                record = self._record(rec, line)  # pysam decodes each field as UTF-8
                where = f"{rec.chrom}:{rec.pos}"
            except UnicodeDecodeError as exc:
                raise InputError(f"{at}: the record is not UTF-8 text ({exc})"[:300]) from None
            yield record
        if self._feed is not None:
            self._feed.check()  # a pipe cut short by a broken gzip looks like a shorter VCF
        if not self.counts["records"]:
            raise InputError(f"{self.path}: the VCF holds no variant records")

    def _record(self, rec, line: int) -> VcfRecord:
        at = f"{self.path}:{line}"
        self.counts["records"] += 1
        ref, alts = rec.ref or "", list(rec.alts or [])
        if rec.pos < 1:
            raise InputError(f"{at}: POS {rec.pos} is not a position (VCF POS counts from 1)")
        if not _DNA.match(ref):
            raise InputError(f"{at}: REF {ref[:20]!r} is not a DNA allele (A, C, G, T, N)")
        for alt in alts:
            if not _SYMBOLIC.match(alt):
                raise InputError(f"{at}: ALT {alt[:20]!r} is not an allele (bases, <ID>, * or a "
                                 "breakend)")  # fmt: skip
        columns = str(rec).rstrip("\n").split("\t")
        self.counts["alleles"] += max(1, len(alts))
        out = VcfRecord(line, columns, None, rec.pos - 1, ref.upper())
        if not alts:
            self.counts["no_alt"] += 1
            return out
        seqid = self.names.locate(at, self.path, rec.chrom, rec.pos - 1 + len(ref), feature="REF")
        out.seqid = seqid
        skip = None
        if seqid is None:
            skip = "unknown_sequence"
        elif not self._ref_matches(out):
            if not self.skip_ref_mismatch:
                genome = decode(self.fetch(seqid, out.pos, out.pos + len(ref)))
                raise InputError(
                    f"{at}: REF {ref[:20]} does not match the FASTA at {rec.chrom}:{rec.pos} "
                    f"({genome[:20]}): another genome build? (--skip-ref-mismatch counts and "
                    "skips such records)"
                )
            skip = "ref_mismatch"
        for alt in alts:
            reason = skip
            if reason is None and not _DNA.match(alt):
                reason = "symbolic"
            elif reason is None and max(len(ref), len(alt)) > MAX_ALLELE:
                reason = "too_long"
            elif reason is None and alt.upper() == out.ref:
                reason = "no_alt"
            out.alleles.append(VcfAllele(alt.upper(), reason))
            self.counts[reason or "scored"] += 1
        return out

    def _ref_matches(self, rec: VcfRecord) -> bool:
        want = encode(rec.ref)
        have = self.fetch(rec.seqid, rec.pos, rec.pos + len(rec.ref))
        known = want != N_CODE
        return bool(np.array_equal(want[known], have[known]))


class _BomFreePipe:
    """``reader``: the read end of a pipe a thread fills with ``path``'s text (gunzipped) after
    its byte-order mark, for htslib, which reads descriptors; ``check()`` raises the error that
    stopped the thread early (a broken gzip), once htslib has read to the end."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.error: BaseException | None = None
        read_end, write_end = os.pipe()
        self.reader = os.fdopen(read_end, "rb")
        self._thread = threading.Thread(target=self._fill, args=(write_end,), daemon=True)
        self._thread.start()

    def _fill(self, write_end: int) -> None:
        try:
            with os.fdopen(write_end, "wb") as sink, (
                    gzip.open(self.path, "rb") if is_gzip(self.path) else open(self.path, "rb")
            ) as source:  # fmt: skip
                source.read(len(codecs.BOM_UTF8))
                shutil.copyfileobj(source, sink)
        except BrokenPipeError:
            pass  # the reader was closed before the end (an error in an earlier record)
        except (OSError, EOFError, zlib.error) as exc:
            self.error = exc

    def check(self) -> None:
        self._thread.join()
        if self.error is not None:
            raise InputError(f"{self.path}: cannot read the VCF to its end ({self.error})"[:300])
