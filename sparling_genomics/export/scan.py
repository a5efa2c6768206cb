"""Genome scanning: run ``g`` and the sparse layer over every sequence of a FASTA.

Each sequence is streamed in chunks that overlap by a halo of (receptive field / 2 + the
sparse layer's peak window), so a chunk's kept centre is computed exactly as over the whole
sequence; positions beyond the sequence ends are N (all-zero one-hot). Both strands are
scanned: the plus strand as is, the minus strand as the reverse complement (read 5'->3' on that
strand, as minus-strand genes are in the splicing datasets), mapped back to plus coordinates.
Runs of N produce no sites (an all-N receptive field gives g a constant; the site must also
lie on an A/C/G/T base).

Sites are positions where a channel's sparse activation is non-zero, in 0-based sequence
coordinates (never window-relative).
"""

from __future__ import annotations

import ctypes
import ctypes.util
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import torch

from ..genome.fasta import Genome
from ..genome.sequence import N_CODE, one_hot, reverse_complement_codes

try:
    _LIBC = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
except OSError:  # pragma: no cover - no C library to load
    _LIBC = None


@dataclass
class SiteTable:
    """Sites of one sequence as parallel arrays (position = the activation's base)."""

    seqid: str
    position: np.ndarray  # int64
    channel: np.ndarray  # int16
    strand: np.ndarray  # int8: +1 / -1
    score: np.ndarray  # float32

    def __len__(self) -> int:
        return len(self.position)


def halo_of(model) -> int:
    rf = int(model.g.receptive_field)
    peak = 0
    if (
        model.sparse is not None
        and model.sparse.peak_window
        and (model.sparse.density <= model.sparse.peak_below)
    ):
        peak = int(model.sparse.peak_window)
    return rf // 2 + peak + 1


@torch.no_grad()
def _strand_sites(model, codes: np.ndarray, device) -> tuple[np.ndarray, ...]:
    """(channel, position, value) of one strand's non-zero activations (read left to right)."""
    x = torch.from_numpy(one_hot(codes)[None]).to(device)
    z = model.g.scan(x)
    if model.sparse is None:
        channel, position = torch.nonzero(z[0] > 0, as_tuple=True)
        value = z[0][channel, position]
    else:
        channel, position, value = model.sparse.active_sites(z)
    return channel.cpu().numpy(), position.cpu().numpy(), value.float().cpu().numpy()


@torch.no_grad()
def scan_codes(
    model, seqid: str, codes: np.ndarray, *, chunk: int = 50_000, device=None
) -> Iterator[SiteTable]:
    """The sites of one sequence, chunk by chunk (each chunk's sites in sequence coordinates)."""
    device = device or next(model.parameters()).device
    model.eval()
    halo = halo_of(model)
    length = len(codes)
    padded = np.concatenate(
        [np.full(halo, N_CODE, np.uint8), codes, np.full(halo + chunk, N_CODE, np.uint8)]
    )
    for start in range(0, length, chunk):
        end = min(start + chunk, length)
        # Always chunk + 2 x halo wide (the last chunk padded with N): one tensor shape for
        # the whole scan, so the convolution library reuses one plan (shapes that vary per
        # call grew the scan of 10,000 contigs to 1.7 GB) and sums in one order.
        piece = padded[start : start + chunk + 2 * halo]  # covers [start - halo, end + halo)
        width = len(piece)
        parts = []
        for sign in (1, -1):
            read = piece if sign == 1 else reverse_complement_codes(piece)
            c, p, v = _strand_sites(model, read, device)
            if sign == -1:
                p = width - 1 - p  # back to plus-strand coordinates of the piece
            p = p - halo  # chunk coordinates
            keep = (p >= 0) & (p < end - start)
            c, p, v = c[keep], p[keep], v[keep]
            keep = codes[start + p] != N_CODE  # a site must lie on an A/C/G/T base
            parts.append((p[keep] + start, c[keep], np.full(int(keep.sum()), sign, np.int8),
                          v[keep]))  # fmt: skip
        yield SiteTable(
            seqid,
            np.concatenate([q[0] for q in parts]).astype(np.int64),
            np.concatenate([q[1] for q in parts]).astype(np.int16),
            np.concatenate([q[2] for q in parts]),
            np.concatenate([q[3] for q in parts]).astype(np.float32),
        )


def scan_genome(model, genome: Genome, *, chunk: int = 50_000, device=None) -> list[SiteTable]:
    """Sites of every sequence of ``genome``, one table per sequence (FASTA order).

    Sequences shorter than ``chunk`` are packed together, up to ``chunk`` bases a pack, with
    2 x halo Ns between them, and scanned as one: every position of a packed sequence then
    sees exactly what it sees when scanned alone (its bases and Ns), so the sites are the
    same, and a draft assembly's 10,000 contigs cost tens of model calls, not 20,000.
    """
    halo = halo_of(model)
    tables: dict[str, SiteTable] = {}
    pack: list[str] = []
    pack_bases = 0
    for seqid, length in genome.lengths.items():
        if length >= chunk:
            tables[seqid] = join_tables(seqid, list(scan_codes(model, seqid, genome.sequence(seqid),
                                                         chunk=chunk, device=device)))  # fmt: skip
            continue
        if pack and pack_bases + length + 2 * halo > chunk:
            tables.update(_scan_pack(model, genome, pack, halo, chunk, device))
            pack, pack_bases = [], 0
            _release_free_memory()
        pack.append(seqid)
        pack_bases += length + 2 * halo
    if pack:
        tables.update(_scan_pack(model, genome, pack, halo, chunk, device))
    return [tables[seqid] for seqid in genome.lengths]


def _release_free_memory() -> None:
    """Give freed heap pages back to the OS (glibc ``malloc_trim``). Each model call frees
    megabytes of tensors between the small site arrays that stay alive; glibc keeps such a
    fragmented heap, and a 10,000-contig scan grew to 1.2 GB without this (0.5 GB with)."""
    trim = getattr(_LIBC, "malloc_trim", None)  # glibc only
    if trim is not None:
        trim(0)


def join_tables(seqid: str, parts: list[SiteTable]) -> SiteTable:
    """One table of ``seqid`` from the tables of its chunks (in order)."""
    return SiteTable(
        seqid,
        np.concatenate([p.position for p in parts]).astype(np.int64),
        np.concatenate([p.channel for p in parts]).astype(np.int16),
        np.concatenate([p.strand for p in parts]).astype(np.int8),
        np.concatenate([p.score for p in parts]).astype(np.float32),
    )


def _scan_pack(model, genome: Genome, seqids: list[str], halo: int, chunk: int, device):
    """Scan short sequences as one N-separated pack; split the sites back per sequence."""
    spacer = np.full(2 * halo, N_CODE, np.uint8)
    pieces, starts, at = [], [], 0
    for seqid in seqids:
        codes = genome.sequence(seqid)
        starts.append(at)
        pieces += [codes, spacer]
        at += len(codes) + len(spacer)
    codes = np.concatenate(pieces)
    packed = join_tables("pack", list(scan_codes(model, "pack", codes, chunk=chunk,
                                           device=device)))  # fmt: skip
    which = np.searchsorted(np.asarray(starts), packed.position, side="right") - 1
    out = {}
    for i, seqid in enumerate(seqids):
        pick = which == i
        out[seqid] = SiteTable(seqid, packed.position[pick] - starts[i], packed.channel[pick],
                               packed.strand[pick], packed.score[pick])  # fmt: skip
    return out


def activation_track(table: SiteTable, channel: int) -> tuple[np.ndarray, np.ndarray]:
    """(positions, values) of one channel's activation, the larger strand's where both fire,
    sorted by position (a bigWig's intervals)."""
    pick = table.channel == channel
    pos, val = table.position[pick], table.score[pick]
    order = np.lexsort((-val, pos))
    pos, val = pos[order], val[order]
    first = np.ones(len(pos), bool)
    first[1:] = pos[1:] != pos[:-1]
    return pos[first], val[first]


def scan_run_to_tracks(
    run,
    fasta,
    out,
    *,
    motifs_dir=None,
    chunk: int = 50_000,
    device: str | None = None,
    bigwig: bool = True,
) -> dict:
    """Scan ``fasta`` with run ``run``'s model; write BED9 (+ .track), bigBed, per-motif
    bigWigs and ``scan.json`` (this summary) to ``out``. Motifs (ids, names, trimmed spans)
    come from ``motifs_dir`` (default ``RUN/motifs``, made by ``export``)."""
    import json
    import time
    from pathlib import Path

    from ..errors import InputError
    from ..io import safe_child, write_json_atomic
    from ..train.loading import load_run
    from .formats import ExportedMotif, read_meme_motifs
    from .tracks import write_bigwig, write_tracks

    run, out = Path(run), Path(out)
    motifs_dir = Path(motifs_dir) if motifs_dir else run / "motifs"
    summary_path = motifs_dir / "motifs.json"
    if not summary_path.is_file():
        raise InputError(f"{motifs_dir}: no motifs.json; run `sparling-genomics export` first")
    summary = json.loads(summary_path.read_text())
    meme = read_meme_motifs(motifs_dir / "motifs.meme")
    listed = [m["id"] for m in summary["motifs"]]
    if [key.split()[0] for key in meme] != listed:
        raise InputError(
            f"{motifs_dir / 'motifs.meme'}: motifs do not match motifs.json "
            f"({len(meme)} vs {len(listed)}); export again"
        )
    _, _, model, torch_device = load_run(run, device=device)
    genome = Genome(fasta)
    rf = int(model.g.receptive_field)
    motifs, offsets = [], {}
    for entry, probs in zip(summary["motifs"], meme.values()):
        safe_child(out, entry["id"], ".bw")  # refuse ids that could leave OUT, before any work
        motifs.append(ExportedMotif(entry["id"], probs, entry["nsites"],
                                    (entry["name"] or "").replace(" ", "_"),
                                    entry["channel"], entry["offset"]))  # fmt: skip
        offsets[entry["channel"]] = int(entry["offset"])
    out.mkdir(parents=True, exist_ok=True)
    began = time.perf_counter()
    tables = scan_genome(model, genome, chunk=chunk, device=torch_device)
    scan_seconds = time.perf_counter() - began
    bed = out / "motif_sites.bed"
    n_rows = write_tracks(bed, out / "motif_sites.bb", tables, motifs, offsets, rf,
                          genome.lengths, track_name=f"sparling {run.name}")  # fmt: skip
    wigs = []
    if bigwig:
        for m in motifs:

            def values(channel=m.channel):
                for t in tables:
                    yield (t.seqid, *activation_track(t, channel))

            wig = write_bigwig(safe_child(out, m.id, ".bw"), genome.lengths, values())
            if wig is not None:
                wigs.append(wig)
    result = {
        "run": str(run),
        "fasta": str(fasta),
        "sequences": len(genome.lengths),
        "bases": int(sum(genome.lengths.values())),
        "device": str(torch_device),
        "motifs": len(motifs),
        "sites": int(sum(len(t) for t in tables)),
        "bed_rows": n_rows,
        "scan_seconds": round(scan_seconds, 2),
        "total_seconds": round(time.perf_counter() - began, 2),
        "files": [
            bed.name,
            bed.name + ".track",
            *(["motif_sites.bb"] if n_rows else []),
            *[w.name for w in wigs],
        ],  # fmt: skip
        "motifs_without_sites": [
            m.id for m in motifs if not any(w.name == f"{m.id}.bw" for w in wigs)
        ]
        if bigwig
        else None,  # fmt: skip
    }
    write_json_atomic(out / "scan.json", result)
    return result
