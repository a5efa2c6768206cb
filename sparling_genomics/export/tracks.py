"""Browser tracks from scanned sites: BED9, bigBed, per-motif activation bigWig.

BED9 (0-based, half-open): chrom, start, end (the motif's trimmed span on the site's strand),
name (motif id, plus its JASPAR name when significant), score (0-1000: the activation over the
channel's largest activation in the scan), strand, thickStart/thickEnd (the activation's base,
when inside the span),
itemRgb (one colour per motif). Sorted by bedtools (``pybedtools``) in chromosome order of the
FASTA, then start. The track line lives in a separate ``.track`` header file, because a bigBed
source must not carry one. bigBed and bigWig are written with ``pybigtools``; chromosome names
are exactly those of the FASTA.
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


def bed_lines(
    tables: list[SiteTable],
    motifs: list[ExportedMotif],
    offsets: dict[int, int],
    rf: int,
    lengths: dict[str, int],
) -> list[tuple[str, int, int, str]]:
    """(chrom, start, end, rest) rows of the exported motifs' sites (unsorted)."""
    by_channel = {m.channel: m for m in motifs}
    colours = dict(zip(by_channel, motif_colours(len(by_channel))))
    top = {c: 0.0 for c in by_channel}
    for t in tables:
        for c in by_channel:
            pick = t.channel == c
            if pick.any():
                top[c] = max(top[c], float(t.score[pick].max()))
    rows = []
    for t in tables:
        for c, motif in by_channel.items():
            pick = t.channel == c
            if not pick.any():
                continue
            sub = SiteTable(t.seqid, t.position[pick], t.channel[pick], t.strand[pick],
                            t.score[pick])  # fmt: skip
            start, end = site_spans(sub, motif, rf, offsets[c], lengths[t.seqid])
            scores = np.clip(np.round(1000 * sub.score / max(top[c], 1e-12)), 0, 1000)
            name = motif.id if not motif.name else f"{motif.id}:{motif.name}"
            for s, e, p, st, sc in zip(start, end, sub.position, sub.strand, scores):
                if e <= s:
                    continue
                # Thick part: the activation's base when it lies inside the motif span
                # (a trimmed motif need not cover it); otherwise none (thickStart = thickEnd).
                ts, te = (int(p), int(p) + 1) if s <= p < e else (int(s), int(s))
                rows.append((t.seqid, int(s), int(e),
                             f"{name}\t{int(sc)}\t{'+' if st == 1 else '-'}\t{ts}\t{te}"
                             f"\t{colours[c]}"))  # fmt: skip
    return rows


def sort_bed_rows(rows, order: list[str]) -> list[tuple[str, int, int, str]]:
    """Rows sorted by ``order`` (the FASTA's sequence order), start, end."""
    rank = {name: i for i, name in enumerate(order)}
    return sorted(rows, key=lambda r: (rank[r[0]], r[1], r[2]))


def write_bed(path: Path, rows, order: list[str], *, track_name: str) -> Path:
    """BED9 sorted by bedtools (``sortBed``) in FASTA order, plus ``path.track`` with the
    track line (itemRgb on). Returns the path of the BED."""
    import pybedtools

    path = Path(path)
    rank = {name: i for i, name in enumerate(order)}
    unsorted = path.with_name(f".{path.name}.unsorted")
    genome_file = path.with_name(f".{path.name}.genome")
    try:
        with open(unsorted, "w") as handle:
            for chrom, s, e, rest in sorted(rows, key=lambda r: rank[r[0]]):
                handle.write(f"{chrom}\t{s}\t{e}\t{rest}\n")
        with open(genome_file, "w") as handle:
            handle.writelines(f"{name}\n" for name in order)
        with atomic_path(path) as tmp:
            pybedtools.BedTool(str(unsorted)).sort(g=str(genome_file)).saveas(str(tmp))
    finally:
        unsorted.unlink(missing_ok=True)
        genome_file.unlink(missing_ok=True)
        pybedtools.cleanup()
    write_text_atomic(
        Path(str(path) + ".track"),
        f'track name="{track_name}" description="Sparling motif sites" itemRgb="On"\n',
    )
    return path


def write_bigbed(path: Path, bed: Path, lengths: dict[str, int]) -> Path:
    """bigBed of a sorted BED9 (no track line), via pybigtools; atomic."""
    import pybigtools

    def entries():
        with open(bed) as handle:
            for line in handle:
                chrom, s, e, rest = line.rstrip("\n").split("\t", 3)
                yield chrom, int(s), int(e), rest

    with atomic_path(path) as tmp:
        pybigtools.open(str(tmp), "w").write(lengths, entries())
    return Path(path)


def write_bigwig(path: Path, lengths: dict[str, int], intervals) -> Path:
    """bigWig from sorted ``(chrom, start, end, value)`` intervals, via pybigtools; atomic."""
    import pybigtools

    with atomic_path(path) as tmp:
        pybigtools.open(str(tmp), "w").write(lengths, intervals)
    return Path(path)
