"""Browser tracks from scanned sites: BED9, bigBed, per-motif activation bigWig.

BED9 (0-based, half-open): chrom, start, end (the motif's trimmed span on the site's strand),
name (motif id, plus its JASPAR name when significant), score (0-1000: the activation over the
channel's largest activation in the scan), strand, thickStart/thickEnd (the activation's base,
when inside the span),
itemRgb (one colour per motif). Rows are in ``bedtools sort -g`` order (chromosome order of the
FASTA, then start), sorted here with numpy rather than by bedtools: a chromosome yields
millions of rows, and writing them out for sortBed and reading them back cost more than the
scan itself; the tests check the order against ``pybedtools``' ``sort``. The track line lives in
a separate ``.track`` header file, because a bigBed source must not carry one. bigBed and bigWig
are written with ``pybigtools``; chromosome names are exactly those of the FASTA.
"""

from __future__ import annotations

import colorsys
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


def site_spans(sites: SiteTable, motif: ExportedMotif, rf: int, offset: int, length: int):
    """(start, end) of each site's motif on the genome: the trimmed span ``[offset, offset +
    width)`` of the receptive-field window, laid out on the site's strand."""
    half = rf // 2
    lo = np.where(
        sites.strand == 1,
        sites.position - half + offset,
        sites.position + half - offset - motif.width + 1,
    )
    start = np.clip(lo, 0, length)
    end = np.clip(lo + motif.width, 0, length)
    return start, end


BED_COLUMNS = ["chrom", "start", "end", "name", "score", "strand", "thickStart", "thickEnd",
               "itemRgb"]  # fmt: skip


def bed_frame(
    tables: list[SiteTable],
    motifs: list[ExportedMotif],
    offsets: dict[int, int],
    rf: int,
    lengths: dict[str, int],
):
    """BED9 rows (a pandas DataFrame, unsorted) of the exported motifs' sites.

    Built column-wise with numpy: a chromosome scan yields millions of sites.
    """
    import pandas as pd

    by_channel = {m.channel: m for m in motifs}
    colours = dict(zip(by_channel, motif_colours(len(by_channel))))
    top = {c: 0.0 for c in by_channel}
    for t in tables:
        for c in by_channel:
            pick = t.channel == c
            if pick.any():
                top[c] = max(top[c], float(t.score[pick].max()))
    frames = []
    for t in tables:
        for c, motif in by_channel.items():
            pick = t.channel == c
            if not pick.any():
                continue
            sub = SiteTable(t.seqid, t.position[pick], t.channel[pick], t.strand[pick],
                            t.score[pick])  # fmt: skip
            start, end = site_spans(sub, motif, rf, offsets[c], lengths[t.seqid])
            keep = end > start
            start, end, pos = start[keep], end[keep], sub.position[keep]
            scores = np.clip(np.round(1000 * sub.score[keep] / max(top[c], 1e-12)), 0, 1000)
            # Thick part: the activation's base when it lies inside the motif span (a
            # trimmed motif need not cover it); otherwise none (thickStart = thickEnd).
            inside = (start <= pos) & (pos < end)
            name = motif.id if not motif.name else f"{motif.id}:{motif.name}"
            frames.append(
                pd.DataFrame(
                    {
                        "chrom": t.seqid,
                        "start": start.astype(np.int64),
                        "end": end.astype(np.int64),
                        "name": name,
                        "score": scores.astype(np.int64),
                        "strand": np.where(sub.strand[keep] == 1, "+", "-"),
                        "thickStart": np.where(inside, pos, start).astype(np.int64),
                        "thickEnd": np.where(inside, pos + 1, start).astype(np.int64),
                        "itemRgb": colours[c],
                    },
                    columns=BED_COLUMNS,
                )
            )
    if not frames:
        return pd.DataFrame({c: [] for c in BED_COLUMNS}, columns=BED_COLUMNS)
    return pd.concat(frames, ignore_index=True)


def sort_bed(frame, order: list[str]):
    """Rows in ``sortBed -g`` order: chromosome as in ``order`` (the FASTA), then start (then
    end, so the order is deterministic)."""
    rank = {name: i for i, name in enumerate(order)}
    chrom_rank = frame["chrom"].map(rank).to_numpy()
    idx = np.lexsort((frame["end"].to_numpy(), frame["start"].to_numpy(), chrom_rank))
    return frame.iloc[idx].reset_index(drop=True)


def _rest_columns(frame) -> list[str]:
    """Columns 4-9 of each row as one tab-joined string (bigBed's 'rest' field)."""
    cols = [frame[c].tolist() for c in BED_COLUMNS[3:]]
    return [f"{a}\t{b}\t{c}\t{d}\t{e}\t{f}" for a, b, c, d, e, f in zip(*cols)]


def write_tracks(
    bed_path: Path, bigbed_path: Path | None, frame, lengths: dict[str, int], *, track_name: str
) -> Path:
    """Sorted BED9 at ``bed_path`` (+ ``.track`` with the track line, itemRgb on) and, unless
    None, the same rows as a bigBed; all written atomically. Returns the BED's path.

    With no rows there is no bigBed (pybigtools writes an unreadable header-only file for
    empty input), and an old one at ``bigbed_path`` is removed so it cannot be mistaken for
    this scan's."""
    import pybigtools

    bed_path = Path(bed_path)
    frame = sort_bed(frame, list(lengths))
    chrom = frame["chrom"].tolist()
    start = frame["start"].tolist()
    end = frame["end"].tolist()
    rest = _rest_columns(frame)
    with atomic_path(bed_path) as tmp, open(tmp, "w") as handle:
        handle.writelines(f"{c}\t{s}\t{e}\t{r}\n" for c, s, e, r in zip(chrom, start, end, rest))
    write_text_atomic(
        Path(str(bed_path) + ".track"),
        f'track name="{track_name}" description="Sparling motif sites" itemRgb="On"\n',
    )
    if bigbed_path is not None and not chrom:
        Path(bigbed_path).unlink(missing_ok=True)
    elif bigbed_path is not None:
        with atomic_path(Path(bigbed_path)) as tmp:
            pybigtools.open(str(tmp), "w").write(lengths, zip(chrom, start, end, rest))
    return bed_path


def write_bigwig(path: Path, lengths: dict[str, int], intervals) -> Path | None:
    """bigWig from sorted ``(chrom, start, end, value)`` intervals, via pybigtools; atomic.
    None (and no file; an old one is removed) when there are no intervals: pybigtools would
    write an unreadable header-only file."""
    import itertools

    import pybigtools

    intervals = iter(intervals)
    first = next(intervals, None)
    if first is None:
        Path(path).unlink(missing_ok=True)
        return None
    with atomic_path(path) as tmp:
        pybigtools.open(str(tmp), "w").write(lengths, itertools.chain([first], intervals))
    return Path(path)
