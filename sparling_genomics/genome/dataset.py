"""Labelled-site datasets in HDF5: windows of ``window`` output positions plus context.

Layout of a dataset file (all arrays indexed by window)::

    x         uint8 (n, 4, context + window)  one-hot, N = all zeros, transcript orientation
    y         int8  (n, window)               0 = none, k = classes[k], -1 = not labelled
                                              (readers match classes by name: SiteDataset)
    split     int8  (n,)                      0 train, 1 validation, 2 test
    seqid     int32 (n,)                      index into attrs['seqids']
    strand    int8  (n,)                      +1 or -1 (minus-strand windows are reverse
                                              complemented, labels follow)
    start     int64 (n,)                      genome coordinate of the lowest output position
    region    int8  (n, window)               annotation datasets only (added after format 1
                                              shipped, so optional): 0 intergenic, 1 exon,
                                              2 intron, on the window's strand; -1 not labelled
    attrs: classes, seqids, window, context, split (per-sequence boundaries
           [val_start, test_start]), source, summary (counts, and the split stated),
           format_version

Windows tile *clusters* of same-strand overlapping genes, with real flanking sequence as
context and N beyond sequence ends. Positions of a window outside its own cluster are -1
(ignored by loss and metrics), so each genome position is scored at most once per strand.
Every site of every selected transcript in the cluster is labelled.

Split (``genome/splits.py``): per sequence, contiguous blocks ``train | validation | test``
(default 70/10/20%; a boundary never cuts a gene cluster), or whole held-out sequences
(``split="chromosomes"``, as SpliceAI). Either is recorded as per-sequence boundaries in
``attrs['split']`` and stated in the summary's ``split`` block (sequences without a labelled
site listed as skipped).

The file is written to a temporary name and renamed, so a failed build leaves nothing.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..io import atomic_path, require_file
from .annotation import read_annotation
from .chromosomes import SequenceNames, sequence_names
from .dataset_source import source_record
from .fasta import Genome
from .fingerprint import DATASET_ATTR, ArrayDigest, seal_dataset_digest
from .intervals import LabelTrack, merge_intervals
from .labels import (
    DEFAULT_KINDS,
    SITE_KINDS,
    class_mapping,
    count_non_canonical,
    read_bed,
    transcript_sites,
)
from .regions import region_tracks
from .sequence import one_hot, reverse_complement_codes
from .splits import (
    SPLITS,
    SplitRule,
    block_boundaries,  # noqa: F401  (re-exported: callers import it from here)
    block_of,
    nothing_labelled,
    split_genome,
    split_summary,
)

FORMAT_VERSION = 1
_block = block_of  # its name before genome/splits.py (tests/genome/test_properties.py uses it)


@dataclass
class DatasetSpec:
    """What to build; every field is recorded in the dataset."""

    window: int = 1000
    context: int = 400
    kinds: list[str] = field(default_factory=lambda: list(DEFAULT_KINDS))
    transcripts: str = "longest"
    val_fraction: float = 0.1
    test_fraction: float = 0.2
    background_ratio: float = 1.0  # BED source: unlabelled windows per labelled window
    seed: int = 0
    split: str = "blocks"  # or "chromosomes": whole held-out sequences (genome/splits.py)
    test_sequences: list[str] = field(default_factory=list)  # named; else chosen
    val_sequences: list[str] = field(default_factory=list)

    def split_rule(self) -> SplitRule:
        """The split part of the spec."""
        return SplitRule(self.split, self.val_fraction, self.test_fraction,
                         list(self.test_sequences), list(self.val_sequences))  # fmt: skip

    def check(self) -> None:
        if self.window < 1 or self.context < 0 or self.context % 2:
            raise InputError("window must be >= 1 and context an even number >= 0")
        bad = [k for k in self.kinds if k not in SITE_KINDS]
        if bad:
            raise InputError(f"unknown site kind(s) {bad}; choose from {', '.join(SITE_KINDS)}")
        if not self.kinds:
            raise InputError("choose at least one site kind")
        self.split_rule().check()


@dataclass
class _Plan:
    """Windows to cut, label tracks to cut them from, split boundaries, sites per split."""

    classes: list[str]
    windows: list[tuple[str, int, int, int, int]]  # (seqid, strand, start, split, span end)
    tracks: dict[tuple[str, int], LabelTrack]  # (seqid, strand) -> labelled intervals
    boundaries: dict[str, list[int]]
    summary: dict
    split_sites: list[int]  # labelled sites in train, val, test
    # (seqid, strand) -> exon (1) and intron (2) intervals; None: no annotation (BED source)
    regions: dict[tuple[str, int], LabelTrack] | None = None


def _tiles(span: tuple[int, int], window: int) -> list[int]:
    s, e = span
    return list(range(s, e, window))


def plan_from_annotation(
    genome: Genome, annotation_path: Path, spec: DatasetSpec, names: SequenceNames | None = None
) -> _Plan:
    names = names or sequence_names(genome)
    try:
        annotation = read_annotation(annotation_path, names)
    except InputError as exc:  # every line on sequences the FASTA lacks, skipped on request
        if not (names.skipped and str(exc).endswith("annotation holds no features")):
            raise
        raise nothing_labelled(annotation_path, genome.path, genome.lengths,
                               skipped_lines=names.skipped) from None  # fmt: skip
    gtf = annotation.format == "gtf"
    selected = annotation.selected(spec.transcripts)
    if not selected:
        raise nothing_labelled(annotation_path, genome.path, genome.lengths,
                               skipped_lines=names.skipped, other=annotation.skipped)  # fmt: skip
    classes = ["none", *spec.kinds]
    code = {k: i + 1 for i, k in enumerate(spec.kinds)}
    spans: dict[tuple[str, int], list[tuple[int, int]]] = {}
    labelled: dict[tuple[str, int], dict[int, int]] = {}
    sites = []
    collisions = 0
    for t in selected:
        key = (t.seqid, 1 if t.strand == "+" else -1)
        spans.setdefault(key, []).append((t.start, t.end))
        at = labelled.setdefault(key, {})
        for site in transcript_sites(t, spec.kinds, gtf=gtf):
            if not 0 <= site.position < genome.lengths[t.seqid]:
                continue
            current = at.get(site.position)
            if current is not None:
                collisions += int(current != code[site.kind])
                continue  # the same site from another transcript, or two kinds at one base
            at[site.position] = code[site.kind]
            sites.append(site)
    tracks = {
        key: LabelTrack([(p, p + 1, c) for p, c in labelled.get(key, {}).items()]) for key in spans
    }
    clusters = {seqid: merge_intervals(spans.get((seqid, 1), []) + spans.get((seqid, -1), []))
                for seqid in sorted({k[0] for k in spans})}  # fmt: skip
    boundaries, split_sites = split_genome(
        spec.split_rule(), genome.lengths, clusters, ((k[0], p) for k, at in labelled.items()
        for p in at), fasta=genome.path, labels=annotation_path, aliases=names.aliases)  # fmt: skip
    windows = []
    for seqid in clusters:
        bounds = boundaries[seqid]
        for strand in (1, -1):
            for cluster in merge_intervals(spans.get((seqid, strand), [])):
                split = block_of(cluster[0], bounds)
                for start in _tiles(cluster, spec.window):
                    windows.append((seqid, strand, start, split, cluster[1]))
    kinds_count = Counter(s.kind for s in sites)
    non_canonical = count_non_canonical(sites, genome)
    summary = {
        "source": "annotation",
        "transcripts": len(selected),
        "genes": len({t.gene for t in selected}),
        "sites": {k: int(kinds_count.get(k, 0)) for k in spec.kinds},
        "non_canonical": {
            k: int(non_canonical.get(k, 0)) for k in ("donor", "acceptor") if k in spec.kinds
        },
        "label_collisions": collisions,
        "skipped_features": dict(sorted(annotation.skipped.items())),
    }
    return _Plan(classes, windows, tracks, boundaries, summary, split_sites,
                 region_tracks(selected))  # fmt: skip


def plan_from_bed(
    genome: Genome, bed_path: Path, spec: DatasetSpec, names: SequenceNames | None = None
) -> _Plan:
    sequences = names or sequence_names(genome)
    records = read_bed(bed_path, sequences)
    names = sorted({r.name for r in records})
    classes = ["none", *names]
    code = {n: i + 1 for i, n in enumerate(names)}
    rng = np.random.default_rng(spec.seed)
    tracks: dict[tuple[str, int], LabelTrack] = {}
    windows = []
    w = spec.window
    by_seq: dict[str, list] = {}
    for r in records:
        by_seq.setdefault(r.seqid, []).append(r)
    clusters = {s: merge_intervals([(r.start, r.end) for r in by_seq[s]]) for s in sorted(by_seq)}
    boundaries, split_sites = split_genome(
        spec.split_rule(), genome.lengths, clusters, ((r.seqid, r.start) for r in records),
        fasta=genome.path, labels=bed_path, aliases=sequences.aliases)  # fmt: skip
    labelled_tiles = 0
    for seqid in clusters:
        length = genome.lengths[seqid]
        recs = by_seq[seqid]
        bounds = boundaries[seqid]
        used: set[int] = set()
        for strand in (1, -1):
            mine = [r for r in recs if (r.strand == "-") == (strand == -1)]
            if not mine:
                continue
            tracks[(seqid, strand)] = LabelTrack([(r.start, r.end, code[r.name]) for r in mine])
            tiles = sorted({t for r in mine for t in range(r.start // w, (r.end - 1) // w + 1)})
            labelled_tiles += len(tiles)
            used.update(tiles)
            windows += [
                (seqid, strand, t * w, block_of(t * w, bounds), min(length, (t + 1) * w))
                for t in tiles
            ]
        n_tiles = (length + w - 1) // w
        free = np.setdiff1d(np.arange(n_tiles), np.array(sorted(used), dtype=np.int64))
        n_background = min(len(free), int(round(spec.background_ratio * len(used))))
        if n_background:
            tracks.setdefault((seqid, 1), LabelTrack([]))
            for t in np.sort(rng.choice(free, n_background, replace=False)):
                start = int(t) * w
                windows.append((seqid, 1, start, block_of(start, bounds), min(length, start + w)))
    counts = Counter(r.name for r in records)
    summary = {
        "source": "bed",
        "records": len(records),
        "sites": {n: int(counts[n]) for n in names},
        "labelled_windows": labelled_tiles,
    }
    return _Plan(classes, windows, tracks, boundaries, summary, split_sites)


def _cut(genome: Genome, plan: _Plan, spec: DatasetSpec, index: int):
    seqid, strand, start, _, span_end = plan.windows[index]
    half = spec.context // 2
    codes = genome.fetch(seqid, start - half, start + spec.window + half)
    y = np.full(spec.window, -1, dtype=np.int8)
    # Only the window's own cluster: a position is labelled in exactly one window.
    end = min(start + spec.window, span_end)
    y[: end - start] = 0
    plan.tracks[(seqid, strand)].fill(y, start, end)
    region = None
    if plan.regions is not None:
        region = np.zeros(spec.window, dtype=np.int8)
        if (seqid, strand) in plan.regions:
            plan.regions[(seqid, strand)].fill(region, start, end)
        region[y < 0] = -1
    if strand == -1:
        codes = reverse_complement_codes(codes)
        y = y[::-1].copy()
        region = None if region is None else region[::-1].copy()
    return codes, y, region


def build_dataset(
    out: Path,
    fasta: Path,
    *,
    annotation: Path | None = None,
    bed: Path | None = None,
    spec: DatasetSpec | None = None,
    chrom_aliases: Path | None = None,
    skip_unknown_sequences: bool = False,
    batch: int = 512,
    reference: str | None = None,
) -> dict:
    """Build the HDF5 dataset ``out`` from a FASTA and a GFF3/GTF or a labelled BED.

    ``chrom_aliases``: a file pairing the label file's sequence names with the FASTA's;
    ``skip_unknown_sequences``: skip label lines on sequences the FASTA lacks (counted in the
    summary's ``skipped_unknown_sequences``) instead of refusing the file; ``reference``: the
    name of the bundled reference the files are, recorded instead of their paths."""
    import h5py

    spec = spec or DatasetSpec()
    spec.check()
    out = Path(out)
    if (annotation is None) == (bed is None):
        raise InputError("give exactly one label source: an annotation (GFF3/GTF) or a BED")
    began = time.perf_counter()
    genome = Genome(fasta)
    names = sequence_names(genome, chrom_aliases, skip_unknown=skip_unknown_sequences)
    if annotation is not None:
        plan = plan_from_annotation(genome, Path(annotation), spec, names)
    else:
        plan = plan_from_bed(genome, Path(bed), spec, names)
    if skip_unknown_sequences:
        plan.summary["skipped_unknown_sequences"] = dict(sorted(names.skipped.items()))
    if not plan.windows:
        raise InputError("no windows to write: no labelled region on any sequence")
    order = sorted(range(len(plan.windows)), key=lambda i: (plan.windows[i][3], i))
    plan.windows = [plan.windows[i] for i in order]
    seqids = sorted({w[0] for w in plan.windows})
    seq_index = {s: i for i, s in enumerate(seqids)}
    n = len(plan.windows)
    width = spec.window + spec.context
    with atomic_path(out) as tmp, h5py.File(tmp, "w") as h5:
        chunk = (min(16, n), 4, width)
        x = h5.create_dataset("x", (n, 4, width), dtype="uint8", chunks=chunk,
                              compression="gzip", compression_opts=4, shuffle=True)  # fmt: skip
        y = h5.create_dataset("y", (n, spec.window), dtype="int8",
                              chunks=(min(16, n), spec.window), compression="gzip")  # fmt: skip
        region = None
        if plan.regions is not None:
            region = h5.create_dataset(
                "region", (n, spec.window), dtype="int8", chunks=(min(16, n), spec.window),
                compression="gzip",
            )  # fmt: skip
        digest = ArrayDigest()  # what the dataset holds, as it is written (its fingerprint)
        for lo in range(0, n, batch):
            hi = min(n, lo + batch)
            pieces = [_cut(genome, plan, spec, i) for i in range(lo, hi)]
            arrays = [np.stack(a) for a in zip(*pieces) if a[0] is not None]  # codes, y[, region]
            x[lo:hi] = one_hot(arrays[0], dtype=np.uint8)
            y[lo:hi] = arrays[1]
            if region is not None:
                region[lo:hi] = arrays[2]
            digest.add(*arrays)
        h5["split"] = np.array([w[3] for w in plan.windows], dtype=np.int8)
        h5["seqid"] = np.array([seq_index[w[0]] for w in plan.windows], dtype=np.int32)
        h5["strand"] = np.array([w[1] for w in plan.windows], dtype=np.int8)
        h5["start"] = np.array([w[2] for w in plan.windows], dtype=np.int64)
        counts = np.bincount(h5["split"][:], minlength=3)
        plan.summary["windows"] = {s: int(c) for s, c in zip(SPLITS, counts)}
        plan.summary["split"] = split_summary(spec.split_rule(), genome.lengths, plan.windows,
                                              plan.split_sites)  # fmt: skip
        plan.summary["build_seconds"] = round(time.perf_counter() - began, 2)
        h5.attrs["format_version"] = FORMAT_VERSION
        h5.attrs["classes"] = json.dumps(plan.classes)
        h5.attrs["seqids"] = json.dumps(seqids)
        h5.attrs["window"] = spec.window
        h5.attrs["context"] = spec.context
        h5.attrs["split"] = json.dumps(plan.boundaries)
        h5.attrs["spec"] = json.dumps(asdict(spec))
        h5.attrs["source"] = json.dumps(source_record(
            out, reference=reference, fasta=fasta, annotation=annotation, bed=bed,
            chrom_aliases=chrom_aliases))  # fmt: skip
        h5.attrs["summary"] = json.dumps(plan.summary)
        h5.attrs[DATASET_ATTR] = seal_dataset_digest(digest, h5)
    return plan.summary


@dataclass
class SiteDataset:
    """Lazy reader of a dataset file; arrays are read per batch from disk.

    ``class_order`` (a model's classes, ``none`` first): labels are read in that order, the
    file's classes matched by name, so a model meets a dataset built with another label order
    (``--labels donor,acceptor``) without scoring donors as acceptors."""

    path: Path
    class_order: list[str] | None = None

    def __post_init__(self) -> None:
        import h5py

        self.path = Path(self.path)
        if not self.path.exists():
            raise InputError(
                f"{self.path}: dataset file not found (build it with `sparling-genomics dataset`)"
            )
        require_file(self.path, "dataset file")  # a folder or a device, named as such
        try:
            self._h5 = h5py.File(self.path, "r")
            attrs = self._h5.attrs
            if int(attrs["format_version"]) != FORMAT_VERSION:
                raise InputError(
                    f"{self.path}: dataset format {attrs['format_version']} "
                    f"is not {FORMAT_VERSION}; rebuild it"
                )
            self.file_classes = json.loads(attrs["classes"])
            self.seqids = json.loads(attrs["seqids"])
            self.window = int(attrs["window"])
            self.context = int(attrs["context"])
            self.boundaries = json.loads(attrs["split"])
            self.summary = json.loads(attrs["summary"])
            self.source = json.loads(attrs.get("source", "{}"))  # fasta, annotation, bed paths
            self.split = self._h5["split"][:]
            self.x = self._h5["x"]
            self.y = self._h5["y"]
            # Datasets built before the region array existed still load (no exon/intron).
            self.has_regions = "region" in self._h5
        except (OSError, KeyError, ValueError) as exc:
            raise InputError(
                f"{self.path}: not a sparling-genomics dataset ({exc})"[:300]
            ) from None
        order = list(self.class_order or self.file_classes)
        self._to_order = class_mapping(self.path, self.file_classes, order)
        self.classes = order

    def _in_order(self, y: np.ndarray) -> np.ndarray:
        """File label codes as codes of :attr:`classes` (-1, not labelled, stays -1)."""
        if self._to_order is None:
            return y
        return np.where(y >= 0, self._to_order[np.maximum(y, 0)], y).astype(y.dtype)

    def indices(self, split: str) -> np.ndarray:
        return np.flatnonzero(self.split == SPLITS.index(split))

    def read(self, indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(x, y) of windows ``indices`` (any order, repeats allowed: a batch that spans two
        epochs can hold a window twice), as (float32 one-hot, int64 labels)."""
        # h5py reads only strictly increasing indices.
        unique, back = np.unique(np.asarray(indices), return_inverse=True)
        x = self.x[unique]
        y = self._in_order(self.y[unique])
        return x[back].astype(np.float32), y[back].astype(np.int64)

    def _rows(self, name: str, indices: np.ndarray) -> np.ndarray:
        """Rows ``indices`` (any order) of the per-window array ``name``."""
        indices = np.asarray(indices, dtype=np.int64)
        order = np.argsort(indices)
        out = np.empty((len(indices), self.window), dtype=np.int8)
        if len(indices):
            out[order] = self._h5[name][indices[order]]
        return out

    def labels(self, indices: np.ndarray) -> np.ndarray:
        """Labels ``y`` (int8) of windows ``indices``, without reading their sequence."""
        return self._in_order(self._rows("y", indices))

    def regions(self, indices: np.ndarray) -> np.ndarray | None:
        """``region`` codes (``regions.REGIONS``; -1 not labelled) of windows ``indices``; None
        for a dataset without them (a BED source, or built before they were recorded)."""
        return self._rows("region", indices) if self.has_regions else None

    def windows(self, indices: np.ndarray) -> dict[str, np.ndarray]:
        """Coordinates of windows ``indices``."""
        return {k: self._h5[k][:][indices] for k in ("seqid", "strand", "start")}

    def close(self) -> None:
        self._h5.close()
