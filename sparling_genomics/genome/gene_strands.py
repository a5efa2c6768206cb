"""Gene bodies by sequence, to tell which strand (transcript orientation) a variant is scored
on: the strands of the genes whose span (first to last base of any of their transcripts)
overlaps it; both strands where there is no gene, as SpliceAI scores only annotated genes but
a motif tool should not go silent between them.

A sorted-array lookup over the annotation's genes (a few thousand per chromosome), rather than
an interval tree or bedtools: one ``searchsorted`` per query bounded by the longest gene.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .annotation import Annotation


@dataclass
class _Spans:
    start: np.ndarray  # int64, sorted
    end: np.ndarray
    strand: np.ndarray  # int8 +1 / -1
    gene: list[str]
    longest: int


class GeneStrands:
    """``strands(seqid, start, end)``: the genes overlapping ``[start, end)`` by strand."""

    def __init__(self, genes: list[tuple[str, int, int, int, str]]) -> None:
        """``genes``: (seqid, start, end, strand +1/-1, gene id), 0-based half-open."""
        by_seq: dict[str, list] = {}
        for seqid, start, end, strand, gene in genes:
            by_seq.setdefault(seqid, []).append((start, end, strand, gene))
        self._spans = {}
        for seqid, rows in by_seq.items():
            rows.sort()
            start = np.array([r[0] for r in rows], dtype=np.int64)
            end = np.array([r[1] for r in rows], dtype=np.int64)
            self._spans[seqid] = _Spans(start, end, np.array([r[2] for r in rows], np.int8),
                                        [r[3] for r in rows], int((end - start).max()))  # fmt: skip

    @classmethod
    def from_annotation(cls, annotation: Annotation) -> GeneStrands:
        genes = []
        for gene, ids in annotation.genes.items():
            tx = [annotation.transcripts[t] for t in ids]
            if tx:
                strand = 1 if tx[0].strand == "+" else -1
                genes.append((tx[0].seqid, min(t.start for t in tx), max(t.end for t in tx),
                              strand, gene))  # fmt: skip
        return cls(genes)

    def __len__(self) -> int:
        return sum(len(s.gene) for s in self._spans.values())

    def strands(self, seqid: str, start: int, end: int) -> dict[int, list[str]]:
        """Strand (+1/-1) -> ids of the genes on it overlapping ``[start, end)``; empty where
        no gene does."""
        spans = self._spans.get(seqid)
        if spans is None:
            return {}
        lo = int(np.searchsorted(spans.start, start - spans.longest, side="left"))
        hi = int(np.searchsorted(spans.start, end, side="left"))
        out: dict[int, list[str]] = {}
        for i in range(lo, hi):
            if spans.end[i] > start:
                out.setdefault(int(spans.strand[i]), []).append(spans.gene[i])
        return dict(sorted(out.items(), reverse=True))
