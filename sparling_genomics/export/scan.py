"""Genome scanning: run ``g`` and the sparse layer over every sequence of a FASTA.

Each sequence is streamed in chunks that overlap by a halo of (receptive field / 2 + the
sparse layer's peak window), so a chunk's kept centre is computed exactly as over the whole
sequence; positions beyond the sequence ends are N (all-zero one-hot). Both strands are
scanned: the plus strand as is, the minus strand as the reverse complement (read 5'->3' on that
strand, as minus-strand genes are in the splicing datasets), mapped back to plus coordinates;
with the sparse layer's strand rule (``model.sparse.strand_window``), a site that loses to the
other strand's larger site of its motif nearby is dropped, so a palindrome gives one site.
Runs of N produce no sites (an all-N receptive field gives g a constant; the site must also
lie on an A/C/G/T base).

Sites are positions where a channel's sparse activation is non-zero, in 0-based sequence
coordinates (never window-relative).

``precision="bfloat16"`` runs ``g`` and the core's convolutions in bfloat16 (``torch.autocast``;
the sparse layer stays float32): about 1.7x faster on a CPU with AVX512-BF16 or AMX, at the
cost of sites whose value lies within bfloat16's rounding of a threshold (BENCHMARKS.md, "Scale",
gives the agreement measured); the default float32 gives exactly the model's own sites.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import torch

from ..genome.fasta import Genome
from ..genome.sequence import N_CODE, one_hot, reverse_complement_codes
from ..models.sparling import halo_of, strand_rule_on
from ..sparsity.rules import strand_winners

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


PRECISIONS = ("float32", "bfloat16")


def check_precision(precision: str) -> str:
    """``precision`` if it is one of :data:`PRECISIONS` (a one-line error otherwise)."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision {precision!r}: use one of {', '.join(PRECISIONS)}")
    return precision


@torch.no_grad()
def _strand_sites(model, piece: np.ndarray, device,
                  precision: str = "float32") -> list[tuple[np.ndarray, ...]]:  # fmt: skip
    """(channel, position, value) of each strand's non-zero activations over ``piece``: the
    plus strand, then the minus strand (its reverse complement, read left to right), both
    strands through the model in one batch."""
    reads = np.stack([piece, reverse_complement_codes(piece)])
    x = torch.from_numpy(one_hot(reads)).to(device)
    core = getattr(model, "core", None)
    with torch.autocast(torch.device(device).type, dtype=torch.bfloat16,
                        enabled=precision == "bfloat16"):  # fmt: skip
        z = model.g.scan(x).float()
        s = core(x).float() if core is not None else None
    out = []
    for strand in range(2):
        zs = z[strand : strand + 1]
        if model.sparse is None:
            channel, position = torch.nonzero(zs[0] > 0, as_tuple=True)
            value = zs[0][channel, position]
        else:
            channel, position, value = model.sparse.active_sites(zs)
        if s is not None:  # core channels follow the learned ones
            parts = [(channel, position, value)]
            for i, layer in enumerate(model.core_sparse):
                c, p, v = layer.active_sites(s[strand : strand + 1, i : i + 1])
                parts.append((c + model.learned + i, p, v))
            channel, position, value = (torch.cat(t) for t in zip(*parts))
        out.append((channel.cpu().numpy(), position.cpu().numpy(), value.float().cpu().numpy()))
    return out


def _strand_rule(strands: list, learned: int, width: int, window: int) -> list:
    """The sparse layer's strand rule on both strands' sites of a piece ``width`` bases wide
    (plus-strand coordinates): a learned motif's site is dropped where the other strand has
    a larger one within ±``window`` (ties go to the plus strand); core channels keep theirs."""
    dense, learned_sites = [], []
    for c, p, v in strands:
        values = torch.full((1, learned, width), float("-inf"))
        learned_site = c < learned
        values[0, c[learned_site], p[learned_site]] = torch.from_numpy(v[learned_site])
        dense.append(values)
        learned_sites.append(learned_site)
    keeps = strand_winners(dense[0], dense[1], window)
    out = []
    for (c, p, v), keep, learned_site in zip(strands, keeps, learned_sites):
        kept = np.ones(len(c), bool)
        kept[learned_site] = keep[0, c[learned_site], p[learned_site]].numpy()
        out.append((c[kept], p[kept], v[kept]))
    return out


@torch.no_grad()
def scan_codes(
    model, seqid: str, codes: np.ndarray, *, chunk: int = 50_000, device=None,
    span: tuple[int, int] | None = None, precision: str = "float32",
) -> Iterator[SiteTable]:
    """The sites of one sequence, chunk by chunk (each chunk's sites in sequence coordinates);
    ``span``: only the chunks of bases [start, end) (start a multiple of ``chunk``), each
    read with the same halo of real bases, so its sites are those of the whole scan;
    ``precision``: one of :data:`PRECISIONS`."""
    check_precision(precision)
    device = device or next(model.parameters()).device
    model.eval()
    halo = halo_of(model)
    length = len(codes)
    padded = np.concatenate(
        [np.full(halo, N_CODE, np.uint8), codes, np.full(halo + chunk, N_CODE, np.uint8)]
    )
    first, last = span if span is not None else (0, length)
    for start in range(first, min(last, length), chunk):
        end = min(start + chunk, length)
        # Always chunk + 2 x halo wide (the last chunk padded with N): one tensor shape for
        # the whole scan, so the convolution library reuses one plan (shapes that vary per
        # call grew the scan of 10,000 contigs to 1.7 GB) and sums in one order.
        piece = padded[start : start + chunk + 2 * halo]  # covers [start - halo, end + halo)
        width = len(piece)
        (c, p, v), (rc, rp, rv) = _strand_sites(model, piece, device, precision)
        strands = [(c, p, v), (rc, width - 1 - rp, rv)]  # minus: back to plus coordinates
        if strand_rule_on(model.sparse):
            strands = _strand_rule(strands, model.learned, width, model.sparse.strand_window)
        parts = []
        for sign, (c, p, v) in zip((1, -1), strands):
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


@dataclass(frozen=True)
class Piece:
    """Bases [start, end) of one sequence: a scan job's share of it (``plan_pieces``)."""

    seqid: str
    start: int
    end: int


def plan_pieces(lengths: dict[str, int], parts: int, chunk: int) -> list[list[Piece]]:
    """The genome (``{seqid: length}``, FASTA order) cut into ``parts`` jobs of about equal
    bases, in order: a sequence that does not fit a job's share is cut at multiples of
    ``chunk`` from its start (so each chunk is the one a whole scan reads); a job may be
    empty where sequences are few and long."""
    total = sum(lengths.values())
    share = max(chunk, -(-total // parts))
    jobs: list[list[Piece]] = [[] for _ in range(parts)]
    job, filled = 0, 0
    for seqid, length in lengths.items():
        start = 0
        while start < length:
            room = share - filled
            end = length
            if length - start > room and job < parts - 1:
                end = min(length, start + max(chunk, room // chunk * chunk))
            jobs[job].append(Piece(seqid, start, end))
            filled += end - start
            start = end
            if filled >= share and job < parts - 1:
                job, filled = job + 1, 0
    return jobs


def scan_pieces(model, genome: Genome, pieces: list[Piece], *, chunk: int = 50_000, device=None,
                progress: Callable[[int], None] | None = None, precision: str = "float32",
                keep: Callable[[SiteTable], None] | None = None,
                seen: Callable[[Piece, np.ndarray], None] | None = None,
                ) -> list[SiteTable]:  # fmt: skip
    """Sites of each piece of ``genome``, one table per piece (in order);
    ``progress(bases)`` after each chunk or pack is scanned. With ``keep``, each piece's table
    is handed to it as soon as it is scanned (a ``SiteStore``'s ``add``: sites spilled to
    disk, memory flat in genome size) and nothing is returned; the pieces of one sequence
    still come in order, short sequences (packed) whenever their pack is scanned.
    ``seen(piece, codes)``: each piece's bases as read for the scan (a part's fingerprint of
    what it scanned, hashed without reading the genome again).

    Whole sequences shorter than ``chunk`` are packed together, up to ``chunk`` bases a pack,
    with 2 x halo Ns between them, and scanned as one: every position of a packed sequence
    then sees exactly what it sees when scanned alone (its bases and Ns), so the sites are the
    same, and a draft assembly's 10,000 contigs cost tens of model calls, not 20,000.
    """
    keep_freed_tensors()
    halo = halo_of(model)
    tick = progress or (lambda bases: None)
    seen = seen or (lambda piece, codes: None)
    tables: dict[Piece, SiteTable] = {}

    def done(found: dict[Piece, SiteTable]) -> None:
        if keep is None:
            tables.update(found)
        else:
            for table in found.values():
                keep(table)

    pack: list[Piece] = []
    pack_bases = 0
    for piece in pieces:
        length = genome.lengths[piece.seqid]
        if length >= chunk or (piece.start, piece.end) != (0, length):
            parts, codes = [], genome.sequence(piece.seqid)
            seen(piece, codes[piece.start : piece.end])
            for part in scan_codes(model, piece.seqid, codes, chunk=chunk, device=device,
                                   precision=precision, span=(piece.start, piece.end)):  # fmt: skip
                parts.append(part)
                tick(min(chunk, piece.end - piece.start - chunk * (len(parts) - 1)))
            done({piece: join_tables(piece.seqid, parts)})
            continue
        if pack and pack_bases + length + 2 * halo > chunk:
            done(_scan_pack(model, genome, pack, halo, chunk, device, precision, seen))
            tick(sum(p.end for p in pack))
            pack, pack_bases = [], 0
            _release_free_memory()
        pack.append(piece)
        pack_bases += length + 2 * halo
    if pack:
        done(_scan_pack(model, genome, pack, halo, chunk, device, precision, seen))
        tick(sum(p.end for p in pack))
    return [] if keep is not None else [tables[piece] for piece in pieces]


def scan_genome(model, genome: Genome, *, chunk: int = 50_000, device=None,
                progress: Callable[[int], None] | None = None, precision: str = "float32",
                keep: Callable[[SiteTable], None] | None = None) -> list[SiteTable]:  # fmt: skip
    """Sites of every sequence of ``genome``, one table per sequence (FASTA order): the
    whole genome as one job of :func:`scan_pieces` (``keep``: as there)."""
    whole = [Piece(seqid, 0, length) for seqid, length in genome.lengths.items()]
    return scan_pieces(model, genome, whole, chunk=chunk, device=device, progress=progress,
                       precision=precision, keep=keep)


def join_pieces(tables: list[SiteTable]) -> list[SiteTable]:
    """Tables of consecutive pieces of one sequence joined: one table per sequence, in the
    order the sequences come."""
    joined: dict[str, list[SiteTable]] = {}
    for table in tables:
        joined.setdefault(table.seqid, []).append(table)
    return [join_tables(seqid, parts) for seqid, parts in joined.items()]


_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameters


def keep_freed_tensors() -> None:
    """Let glibc reuse the memory of freed model tensors instead of returning it to the OS
    (``mallopt``): a chunk's activations are megabytes each, above glibc's thresholds, so
    every model call otherwise maps fresh pages and faults them in; a scan spent about 40% of
    its time there (0.43 vs 0.75 Mb/s on 2 cores). Peak memory is unchanged (the pages are
    reused, not added); :func:`_release_free_memory` still hands them back on purpose."""
    mallopt = getattr(_LIBC, "mallopt", None)  # glibc only
    if mallopt is not None:
        mallopt(_M_MMAP_THRESHOLD, 256 << 20)
        mallopt(_M_TRIM_THRESHOLD, 1 << 30)


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


def _scan_pack(model, genome: Genome, pieces: list[Piece], halo: int, chunk: int, device,
               precision: str, seen: Callable[[Piece, np.ndarray], None]):  # fmt: skip
    """Scan short whole sequences as one N-separated pack; split the sites back per piece."""
    spacer = np.full(2 * halo, N_CODE, np.uint8)
    parts, starts, at = [], [], 0
    for piece in pieces:
        codes = genome.sequence(piece.seqid)
        seen(piece, codes)
        starts.append(at)
        parts += [codes, spacer]
        at += len(codes) + len(spacer)
    codes = np.concatenate(parts)
    packed = join_tables("pack", list(scan_codes(model, "pack", codes, chunk=chunk,
                                           device=device, precision=precision)))  # fmt: skip
    which = np.searchsorted(np.asarray(starts), packed.position, side="right") - 1
    out = {}
    for i, piece in enumerate(pieces):
        pick = which == i
        out[piece] = SiteTable(piece.seqid, packed.position[pick] - starts[i],
                               packed.channel[pick], packed.strand[pick],
                               packed.score[pick])  # fmt: skip
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
