"""Exon / intron / intergenic region tracks of the selected transcripts (the optional
``region`` array of an annotation dataset)."""

from __future__ import annotations

from .intervals import LabelTrack, merge_intervals

#: Codes of the optional ``region`` array: exons and introns of the selected transcripts of
#: the window's strand (a base exonic in one transcript and intronic in another is exonic).
REGIONS = ("intergenic", "exon", "intron")


def region_tracks(selected) -> dict[tuple[str, int], LabelTrack]:
    """Per (seqid, strand): merged exons (code 1) and the rest of the transcripts' spans
    (introns, code 2), as non-overlapping intervals."""
    spans: dict[tuple[str, int], list[tuple[int, int]]] = {}
    exons: dict[tuple[str, int], list[tuple[int, int]]] = {}
    for t in selected:
        key = (t.seqid, 1 if t.strand == "+" else -1)
        spans.setdefault(key, []).append((t.start, t.end))
        exons.setdefault(key, []).extend(t.exons)
    out = {}
    for key, span_list in spans.items():
        merged_exons = merge_intervals(exons.get(key, []))
        rows = [(s, e, 1) for s, e in merged_exons]
        for s, e in merge_intervals(span_list):
            cursor = s
            for es, ee in merged_exons:
                if ee <= cursor or es >= e:
                    continue
                if es > cursor:
                    rows.append((cursor, es, 2))
                cursor = max(cursor, ee)
            if cursor < e:
                rows.append((cursor, e, 2))
        out[key] = LabelTrack(rows)
    return out
