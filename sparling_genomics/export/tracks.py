"""Browser tracks from scanned sites: BED9, bigBed, per-motif activation bigWig.

BED9 (0-based, half-open): chrom, start, end (the motif's trimmed span on the site's strand),
name (``family/motif id`` when export clustered the motifs into families, else the motif id;
``consensus/family/motif id`` when the scan was given the seeds' consensus, ``scan
--stability``; plus ``:`` and its JASPAR name when significant), score (0-1000: the
activation over the channel's largest activation in the scan), strand, thickStart/thickEnd
(the activation's base, when inside the span), itemRgb (one colour per consensus family, else
per family, else per motif).
Rows are in ``bedtools sort -g`` order (chromosome order of the FASTA, then start), made and
sorted per sequence with numpy rather than by bedtools: a chromosome yields millions of rows,
and writing them out for sortBed and reading them back cost more than the scan itself; the
tests check the order against ``pybedtools``' ``sort``.
The track line lives in a separate ``.track`` header file, because a bigBed source must not
carry one (``export.browser`` writes the browser-ready copy with the line inside). bigBed
and bigWig are written with ``pybigtools`` (the bigBed's header then declared BED9, see
:func:`declare_bed_fields`); chromosome names are exactly those of the FASTA.
"""

from __future__ import annotations

import colorsys
import re
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..io import atomic_path, write_text_atomic
from .formats import ExportedMotif
from .scan import SiteTable


def motif_colours(n: int) -> list[str]:
    """``n`` well-separated ``R,G,B`` colours (golden-angle hues)."""
    out = []
    for i in range(n):
        r, g, b = colorsys.hsv_to_rgb((i * 0.618033988749895) % 1.0, 0.75, 0.85)
        out.append(f"{int(r * 255)},{int(g * 255)},{int(b * 255)}")
    return out


def motif_colour_map(motifs: list[ExportedMotif]) -> dict[str, str]:
    """Each motif id's ``R,G,B`` colour in the tracks: one per consensus family across seeds
    (``cNN``: the NNth colour, so a consensus family has one colour in every seed's tracks),
    else one per family (the motifs of one family share it), else one per motif; the BED's
    itemRgb and the browser files' track colours."""
    if motifs and all(re.fullmatch(r"c\d+", m.group) for m in motifs):
        palette = motif_colours(max(int(m.group[1:]) for m in motifs) + 1)
        return {m.id: palette[int(m.group[1:])] for m in motifs}
    groups = list(dict.fromkeys(m.family or m.id for m in motifs))
    colours = dict(zip(groups, motif_colours(len(groups))))
    return {m.id: colours[m.family or m.id] for m in motifs}


BED_COLUMNS = ["chrom", "start", "end", "name", "score", "strand", "thickStart", "thickEnd",
               "itemRgb"]  # fmt: skip


@dataclass
class TrackLayout:
    """Per-channel lookups that turn sites into BED rows (index = motif channel)."""

    rf: int
    exported: np.ndarray  # bool: the channel is an exported motif
    rank: np.ndarray  # the motif's place in the export (ties in the BED keep this order)
    width: np.ndarray
    offset: np.ndarray
    top: np.ndarray  # the channel's largest activation over the whole scan (score 1000)
    label: list[str]  # BED name: [consensus/][family/]motif id, plus ":name" when named
    colour: list[str]


def track_layout(
    tables: Iterable[SiteTable], motifs: list[ExportedMotif], offsets: dict[int, int], rf: int
) -> TrackLayout:
    n = max([m.channel for m in motifs] + [int(t.channel.max()) for t in tables if len(t)] + [0])
    n += 1
    layout = TrackLayout(int(rf), np.zeros(n, bool), np.zeros(n, np.int64),
                         np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n),
                         [""] * n, [""] * n)  # fmt: skip
    colours = motif_colour_map(motifs)
    for rank, m in enumerate(motifs):
        c = m.channel
        layout.exported[c] = True
        layout.rank[c], layout.width[c], layout.offset[c] = rank, m.width, offsets[c]
        label = "/".join(part for part in (m.group, m.family, m.id) if part)
        layout.label[c] = label if not m.name else f"{label}:{m.name}"
        layout.colour[c] = colours[m.id]
    for t in tables:
        if len(t):
            np.maximum.at(layout.top, t.channel.astype(np.int64), t.score.astype(np.float64))
    return layout


@dataclass
class RowBlock:
    """BED rows of one sequence as arrays, in ``bedtools sort`` order (start, then end)."""

    chrom: str
    start: np.ndarray
    end: np.ndarray
    channel: np.ndarray
    score: np.ndarray
    strand: np.ndarray  # +1 / -1
    thick_start: np.ndarray
    thick_end: np.ndarray

    def __len__(self) -> int:
        return len(self.start)

    def slice(self, lo: int, hi: int) -> RowBlock:
        return RowBlock(self.chrom, *(getattr(self, k)[lo:hi] for k in (
            "start", "end", "channel", "score", "strand", "thick_start", "thick_end")))  # fmt: skip


ROWS_PER_SLICE = 100_000  # rows turned into text at a time: bounds memory on long sequences


def site_rows(table: SiteTable, layout: TrackLayout, length: int) -> RowBlock:
    """The BED rows of one sequence's sites (exported motifs only), vectorised."""
    channel = table.channel.astype(np.int64)
    keep = layout.exported[channel] if len(channel) else np.zeros(0, bool)
    index = np.flatnonzero(keep)
    channel, pos = channel[index], table.position[index].astype(np.int64)
    strand = table.strand[index]
    width, offset = layout.width[channel], layout.offset[channel]
    half = layout.rf // 2
    lo = np.where(strand == 1, pos - half + offset, pos + half - offset - width + 1)
    start, end = np.clip(lo, 0, length), np.clip(lo + width, 0, length)
    score = np.clip(np.round(1000 * (table.score[index] / _positive(layout.top[channel]))),
                    0, 1000).astype(np.int64)  # fmt: skip
    # Thick part: the activation's base when it lies inside the motif span (a trimmed motif
    # need not cover it); otherwise none (thickStart = thickEnd).
    inside = (start <= pos) & (pos < end)
    thick_start = np.where(inside, pos, start)
    thick_end = np.where(inside, pos + 1, start)
    ok = end > start
    order = np.lexsort((index[ok], layout.rank[channel][ok], end[ok], start[ok]))
    pick = np.flatnonzero(ok)[order]
    return RowBlock(table.seqid, start[pick], end[pick], channel[pick], score[pick],
                    strand[pick], thick_start[pick], thick_end[pick])  # fmt: skip


def _positive(top: np.ndarray) -> np.ndarray:
    return np.where(top > 0, top, 1.0)


def row_blocks(tables, motifs, offsets, rf, lengths):
    """BED rows of every sequence, one :class:`RowBlock` per sequence in FASTA order.

    ``tables``: a list of :class:`SiteTable` (sorted here), or a ``SiteStore``, which reads
    its tables back in FASTA order one at a time (never all in memory)."""
    layout = track_layout(tables, motifs, offsets, rf)
    if isinstance(tables, list):
        rank = {name: i for i, name in enumerate(lengths)}
        tables = sorted(tables, key=lambda t: rank[t.seqid])
    for t in tables:
        yield site_rows(t, layout, lengths[t.seqid]), layout


def _text_block(block: RowBlock, layout: TrackLayout):
    """(chrom, starts, ends, rest-of-columns strings) of a block, for BED and bigBed."""
    label, colour = layout.label, layout.colour
    strands = np.where(block.strand == 1, "+", "-").tolist()
    rest = [
        f"{label[c]}\t{sc}\t{st}\t{ts}\t{te}\t{colour[c]}"
        for c, sc, st, ts, te in zip(block.channel.tolist(), block.score.tolist(), strands,
                                     block.thick_start.tolist(), block.thick_end.tolist())
    ]  # fmt: skip
    return block.chrom, block.start.tolist(), block.end.tolist(), rest


def bed_frame(tables, motifs, offsets, rf, lengths):
    """All BED9 rows as one pandas DataFrame, in the files' order (for inspection and tests;
    the writers stream per sequence instead)."""
    import pandas as pd

    frames = []
    for block, layout in row_blocks(tables, motifs, offsets, rf, lengths):
        channel = block.channel.tolist()
        frames.append(pd.DataFrame({
            "chrom": [block.chrom] * len(block), "start": block.start, "end": block.end,
            "name": [layout.label[c] for c in channel], "score": block.score,
            "strand": np.where(block.strand == 1, "+", "-"), "thickStart": block.thick_start,
            "thickEnd": block.thick_end, "itemRgb": [layout.colour[c] for c in channel],
        }, columns=BED_COLUMNS))  # fmt: skip
    if not frames:
        return pd.DataFrame({c: [] for c in BED_COLUMNS}, columns=BED_COLUMNS)
    return pd.concat(frames, ignore_index=True)


def write_tracks(
    bed_path: Path,
    bigbed_path: Path | None,
    tables: Iterable[SiteTable],
    motifs: list[ExportedMotif],
    offsets: dict[int, int],
    rf: int,
    lengths: dict[str, int],
    *,
    track_name: str,
) -> int:
    """Sorted BED9 at ``bed_path`` (+ ``.track`` with the track line, itemRgb on) and, unless
    None, the same rows as a bigBed; all written atomically. Returns the number of rows.

    Rows are made one sequence at a time and turned into text ``ROWS_PER_SLICE`` at a time
    (BED and bigBed in one pass), so memory holds one sequence's rows as numpy arrays (~50
    bytes a row) and one slice as text, not the genome's rows. With no rows there is no
    bigBed (pybigtools writes an unreadable header-only file for empty input), and an old one
    at ``bigbed_path`` is removed so it cannot be mistaken for this scan's.
    """
    import itertools

    import pybigtools

    bed_path = Path(bed_path)
    written = 0
    with atomic_path(bed_path) as tmp, open(tmp, "w") as handle:

        def rows():
            nonlocal written
            for block, layout in row_blocks(tables, motifs, offsets, rf, lengths):
                for lo in range(0, len(block), ROWS_PER_SLICE):
                    piece = block.slice(lo, lo + ROWS_PER_SLICE)
                    chrom, start, end, rest = _text_block(piece, layout)
                    handle.writelines(f"{chrom}\t{s}\t{e}\t{r}\n"
                                      for s, e, r in zip(start, end, rest))  # fmt: skip
                    written += len(start)
                    yield from zip(itertools.repeat(chrom), start, end, rest)

        stream = rows()
        first = next(stream, None)
        if bigbed_path is None or first is None:
            for _ in stream:
                pass
            if bigbed_path is not None:
                Path(bigbed_path).unlink(missing_ok=True)
        else:
            with atomic_path(Path(bigbed_path)) as tmp_bb:
                writer = pybigtools.open(str(tmp_bb), "w")
                writer.write(lengths, itertools.chain([first], stream))
                declare_bed_fields(tmp_bb, len(BED_COLUMNS))
    write_text_atomic(Path(str(bed_path) + ".track"), track_line(track_name))
    return written


def track_line(track_name: str) -> str:
    """The BED's UCSC/IGV track line (name, description, itemRgb on), with its newline."""
    return f'track name="{track_name}" description="Sparling motif sites" itemRgb="On"\n'


BIGBED_MAGIC = 0x8789F2EB


def declare_bed_fields(path: Path, fields: int) -> None:
    """Declare a pybigtools bigBed's rows as ``fields`` standard BED columns, in place.

    pybigtools 0.3 writes every bigBed as BED3 (header fieldCount and definedFieldCount 3, a
    ``bed3`` autoSql) whatever its rows hold, and takes no autoSql; UCSC splits a row into
    fieldCount columns, so a ``type bigBed 9`` hub track would lose names, strands and
    colours. The header's two counts become ``fields`` and its autoSql offset 0 (no autoSql:
    readers then use the standard BED definition of that many fields, as kent's
    ``bigBedAsOrDefault`` does); the rows are untouched.
    """
    with open(path, "r+b") as handle:
        head = handle.read(44)
        if len(head) < 44 or struct.unpack("<I", head[:4])[0] != BIGBED_MAGIC:
            raise ValueError(f"{path}: not a little-endian bigBed")
        handle.seek(32)  # fieldCount, definedFieldCount, autoSqlOffset
        handle.write(struct.pack("<HHQ", fields, fields, 0))


MANY_SEQUENCES = 200  # above this many sequences with values, bigWigs go through pyBigWig


def write_bigwig(path: Path, lengths: dict[str, int], tracks) -> Path | None:
    """bigWig of single-base values, atomically; ``tracks`` yields ``(chrom, positions,
    values)`` numpy arrays per sequence, in ``lengths`` order, positions sorted and unique.

    Two writers, by measurement: pybigtools (multithreaded) is the faster for few long
    sequences (chr1's 32 motif tracks: ~8 s; pyBigWig ~15 s), but it costs ~0.7 ms per
    sequence per file, so a 10,000-contig assembly's 32 tracks took ~4 minutes with it and
    ~1 minute with pyBigWig (libBigWig), used above ``MANY_SEQUENCES`` sequences. None (and no
    file; an old one is removed) when there are no values: an empty bigWig is not readable by
    every reader.
    """
    path = Path(path)
    chunks = [(c, p, v) for c, p, v in tracks if len(p)]
    if not chunks:
        path.unlink(missing_ok=True)
        return None
    with atomic_path(path) as tmp:
        if len(chunks) > MANY_SEQUENCES:
            _write_bigwig_pybigwig(tmp, lengths, chunks)
        else:
            _write_bigwig_pybigtools(tmp, lengths, chunks)
    return path


def _write_bigwig_pybigtools(path: Path, lengths, chunks) -> None:
    import pybigtools

    def intervals():
        for chrom, positions, values in chunks:
            pos = np.asarray(positions, dtype=np.int64)
            yield from zip([chrom] * len(pos), pos.tolist(), (pos + 1).tolist(),
                           np.asarray(values, dtype=np.float64).tolist())  # fmt: skip

    pybigtools.open(str(path), "w").write(lengths, intervals())


def _write_bigwig_pybigwig(path: Path, lengths, chunks) -> None:
    import pyBigWig

    writer = pyBigWig.open(str(path), "w")
    try:
        writer.addHeader(list(lengths.items()), maxZooms=10)
        for chrom, positions, values in chunks:
            writer.addEntries(chrom, np.ascontiguousarray(positions, dtype=np.int64),
                              values=np.ascontiguousarray(values, dtype=np.float64),
                              span=1)  # fmt: skip
    finally:
        writer.close()
