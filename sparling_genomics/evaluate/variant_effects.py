"""Variant effects through a trained site model: SpliceAI-style delta scores, and the motif
sites a variant creates or destroys.

One ALT allele at 0-based ``pos`` (REF length ``r``, ALT length ``a``) is scored on one strand:
the reference and the alternative sequence around it are run through the model in transcript
orientation (the minus strand as the reverse complement, its outputs flipped back), and the
site probabilities of reference positions ``pos - D .. pos + D`` are compared. The alternative's
outputs are put on reference coordinates as SpliceAI does (Jaganathan et al. 2019,
``spliceai/utils.py::get_delta_scores``), generalised from its two indel shapes to any pair of
lengths: the first ``min(r, a) - 1`` allele bases map one to one; where ALT is longer, the
last REF base takes the maximum over the rest of ALT (an insertion collapses onto its anchor);
where ALT is shorter, the REF bases it lacks score 0 (a deleted site is lost). Delta scores
per site class: gain = the largest increase, loss = the largest decrease over the 2D + 1
positions (0 when there is none), and their positions relative to POS on the plus strand.

Motif sites (the sparse layer's non-zero activations, learned channels then the core's) are
compared within ``halo`` bases of the allele, the only positions whose activation can change;
a site present only in the reference is *destroyed*, only in the alternative *created*, in
both with its activation changed by at least half *weakened* / *strengthened*.

Written here rather than taken from SpliceAI or tangermeme: SpliceAI's code runs its own Keras
models only, and tangermeme's ``variant_effect`` functions score substitutions and indels of
one-hot tensors without the coordinate mapping of deltas or the sparse layer's sites.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..genome.sequence import N_CODE, encode, one_hot, reverse_complement_codes
from ..models.sparling import halo_of

#: Nearby alleles share one reference window up to this many bases (plus an allele's own).
CLUSTER_SPAN = 8192
#: Positions (rows x length) per model call, and the multiple its rows are padded to.
MAX_POSITIONS = 200_000
ROW_MULTIPLE = 16
#: Relative activation change at which a site present in both sequences is reported.
CHANGE_FRACTION = 0.5


@dataclass(frozen=True)
class Allele:
    """One ALT allele of a variant, scored on one strand (+1 or -1)."""

    seqid: str
    pos: int  # 0-based start of REF
    ref: str
    alt: str
    strand: int


@dataclass
class MotifChange:
    """A motif site the allele touches; ``offset`` is the site's plus-strand distance from
    POS in reference coordinates (a site inside an insertion sits on its last REF base)."""

    channel: int
    offset: int
    effect: str  # created | destroyed | strengthened | weakened
    before: float
    after: float


@dataclass
class AlleleEffect:
    """Per site class: (gain, loss, gain position, loss position); and the motif changes."""

    deltas: dict[str, tuple[float, float, int, int]]
    motifs: list[MotifChange]

    @property
    def max_delta(self) -> float:
        return max((max(g, s) for g, s, _, _ in self.deltas.values()), default=0.0)


def model_flank(model, context: int) -> int:
    """Bases each side of the scored span an input needs: ``h``'s context plus twice the
    motif layer's reach, so every output and every site near the allele is computed exactly as
    in a whole-sequence scan."""
    return context // 2 + 2 * halo_of(model)


def allele_sequences(fetch, allele: Allele, distance: int, extra: int, flank: int):
    """(reference codes, alternative codes) of equal length ``2 * flank + 2D + 1 + extra``,
    plus strand, starting ``flank + D`` bases before POS; the alternative continues with the
    genome after the allele so it is as long as the reference (``extra`` >= ALT - REF
    length keeps all of POS + D in view)."""
    span = 2 * distance + 1 + extra
    start = allele.pos - distance - flank
    length = span + 2 * flank
    ref = fetch(allele.seqid, start, start + length)
    head = allele.pos - start
    tail_start = allele.pos + len(allele.ref)
    tail = fetch(allele.seqid, tail_start, tail_start + length - head - len(allele.alt))
    alt = np.concatenate([ref[:head], encode(allele.alt), tail])
    return ref, alt


def alt_to_ref(values: np.ndarray, r: int, a: int, distance: int) -> np.ndarray:
    """Per-position values ``(..., S)`` of the alternative (first index = POS - D) on the
    reference positions POS - D .. POS + D (SpliceAI's indel rule, generalised)."""
    d = distance
    span = 2 * d + 1
    out = np.zeros(values.shape[:-1] + (span,), dtype=values.dtype)
    out[..., :d] = values[..., :d]
    shared = min(r, a) - 1
    if shared > 0:
        out[..., d : d + shared] = values[..., d : d + shared]
    last = d + shared  # the allele's last mapped REF base
    if a >= r:
        if last < span:
            out[..., last] = values[..., last : d + a].max(axis=-1)
    # a < r: REF bases d + a .. d + r - 1 stay 0 (deleted); base d + a - 1 maps one to one.
    elif last < span:
        out[..., last] = values[..., last]
    after = np.arange(d + r, span)
    if len(after):
        out[..., after] = values[..., after - r + a]
    return out


def site_deltas(ref: np.ndarray, alt: np.ndarray, classes: list[str], distance: int):
    """Per site class (``classes[1:]``; rows of ``ref``/``alt`` ``(classes, 2D + 1)``):
    (gain, loss, gain position, loss position), positions relative to POS."""
    out = {}
    for c, name in enumerate(classes[1:], start=1):
        diff = alt[c] - ref[c]
        gain_at, loss_at = int(diff.argmax()), int(diff.argmin())
        out[name] = (max(0.0, float(diff[gain_at])), max(0.0, float(-diff[loss_at])),
                     gain_at - distance, loss_at - distance)  # fmt: skip
    return out


def motif_changes(ref_m: np.ndarray, alt_m: np.ndarray, r: int, a: int, centre: int,
                  reach: int) -> list[MotifChange]:  # fmt: skip
    """Sites within ``reach`` of the allele that differ between the reference motif map
    ``ref_m`` and the alternative's ``alt_m`` (both ``(channels, L)``, plus orientation, POS
    at index ``centre``)."""
    lo = max(0, centre - reach)
    ref_hi = min(ref_m.shape[1], centre + r + reach)
    before: dict[tuple[int, int], float] = {}
    ch, pos = np.nonzero(ref_m[:, lo:ref_hi] > 0)
    for c, p in zip(ch.tolist(), (pos + lo).tolist()):
        before[(c, p - centre)] = float(ref_m[c, p])
    after: dict[tuple[int, int], float] = {}
    alt_hi = min(alt_m.shape[1], centre + a + reach)
    ch, pos = np.nonzero(alt_m[:, lo:alt_hi] > 0)
    for c, p in zip(ch.tolist(), (pos + lo).tolist()):
        k = _ref_offset(p - centre, r, a)
        after[(c, k)] = max(after.get((c, k), 0.0), float(alt_m[c, p]))
    changes = []
    for key in sorted(set(before) | set(after), key=lambda k: (k[1], k[0])):
        b, f = before.get(key, 0.0), after.get(key, 0.0)
        if b == 0.0:
            effect = "created"
        elif f == 0.0:
            effect = "destroyed"
        elif abs(f - b) >= CHANGE_FRACTION * max(b, f):
            effect = "strengthened" if f > b else "weakened"
        else:
            continue
        changes.append(MotifChange(key[0], key[1], effect, round(b, 4), round(f, 4)))
    return changes


def _ref_offset(j: int, r: int, a: int) -> int:
    """The reference offset from POS of offset ``j`` of the alternative sequence."""
    if j < 0:
        return j
    if j >= a:
        return j - a + r  # after the allele
    return j if (j < r - 1 or a < r) else r - 1  # inside it: extra ALT bases on the last REF


@torch.inference_mode()
def _forward(model, codes: np.ndarray, device) -> tuple[np.ndarray, np.ndarray | None]:
    """(class probabilities ``(N, classes, L - context)``, motif map ``(N, M, L)`` or None for
    a model without a sparse layer) of code rows ``codes`` ``(N, L)``."""
    x = torch.from_numpy(one_hot(codes)).to(device)
    out = model(x)
    probs = torch.softmax(out["logits"].float(), dim=1).cpu().numpy()
    if getattr(model, "sparse", None) is None:
        return probs, None
    parts = [out["motifs"]] + ([out["core_motifs"]] if "core_motifs" in out else [])
    return probs, torch.cat(parts, 1).float().cpu().numpy()


def _forward_rows(model, rows: list[np.ndarray], strands: list[int], *, context: int,
                  common: int, device) -> list[tuple[np.ndarray, np.ndarray | None]]:  # fmt: skip
    """(probabilities, motif map) of each plus-strand code row, scored on its strand and
    returned in plus orientation. Rows of the ``common`` length run as one batch; longer ones
    are padded with N (after their flank, so no output they keep sees it) to a multiple of
    1,024 and run with those of the same padded length, at most ~200k positions a call."""
    out: list = [None] * len(rows)
    buckets: dict[int, list[int]] = {}
    for i, row in enumerate(rows):
        size = len(row) if len(row) == common else -(-len(row) // 1024) * 1024
        buckets.setdefault(size, []).append(i)
    for size, index in buckets.items():
        step = max(1, MAX_POSITIONS // size)
        for lo in range(0, len(index), step):
            part = index[lo : lo + step]
            # Few distinct input shapes: the convolution library keeps a plan per shape, and
            # batches of every row count grew memory with the VCF (1.2 GB after 2,000 alleles,
            # 2.1 GB after 20,000). Rows are padded with N rows to a multiple of 16 (an
            # allele's window) or a power of 2 (the few long reference windows of a batch).
            count = len(part)
            rows_padded = -(-count // ROW_MULTIPLE) * ROW_MULTIPLE if size == common else (
                1 << (count - 1).bit_length())  # fmt: skip
            codes = np.full((rows_padded, size), N_CODE, np.uint8)
            for k, i in enumerate(part):
                row = rows[i] if strands[i] > 0 else reverse_complement_codes(rows[i])
                codes[k, : len(row)] = row
            probs, motifs = _forward(model, codes, device)
            for k, i in enumerate(part):
                n = len(rows[i])
                p = probs[k, :, : n - context]
                m = None if motifs is None else motifs[k, :, :n]
                if strands[i] < 0:  # back to plus orientation
                    p, m = p[:, ::-1], (None if m is None else m[:, ::-1])
                out[i] = (p, m)
    return out


def _clusters(alleles: list[Allele], gap: int) -> list[list[int]]:
    """Indices of alleles on the same sequence and strand, each within ``gap`` of the one
    before and all within :data:`CLUSTER_SPAN` of the first: their reference is one window
    (which then costs less than a window per allele)."""
    groups: dict[tuple, list[int]] = {}
    for i, al in enumerate(alleles):
        groups.setdefault((al.seqid, al.strand), []).append(i)
    clusters = []
    for index in groups.values():
        index.sort(key=lambda i: alleles[i].pos)
        current = [index[0]]
        for i in index[1:]:
            pos = alleles[i].pos
            if (
                pos - alleles[current[-1]].pos <= gap
                and pos - alleles[current[0]].pos <= CLUSTER_SPAN
            ):
                current.append(i)
            else:
                clusters.append(current)
                current = [i]
        clusters.append(current)
    return clusters


def score_alleles(model, fetch, alleles: list[Allele], classes: list[str], *, context: int,
                  distance: int = 50, device=None) -> list[AlleleEffect]:  # fmt: skip
    """Delta scores and motif changes of ``alleles`` (one batch). ``fetch(seqid, start,
    end)`` gives genome codes, N beyond the ends. Each alternative is one window; the
    reference of nearby alleles (a dense VCF's neighbours, a multi-allelic record's ALTs) is
    one shared window, so it costs little more than the alternatives."""
    if not alleles:
        return []
    device = device or next(model.parameters()).device
    model.eval()
    flank = model_flank(model, context)
    reach = halo_of(model)
    extra = max(0, max(len(al.alt) - len(al.ref) for al in alleles))
    width = 2 * distance + 1 + extra + 2 * flank  # an allele's window
    trim = flank - context // 2  # outputs before POS - D in a window
    clusters = _clusters(alleles, gap=width // 2)
    rows, strands, first = [], [], {}
    for c in clusters:
        lead = alleles[c[0]]
        start = lead.pos - distance - flank
        rows.append(fetch(lead.seqid, start, alleles[c[-1]].pos - lead.pos + start + width))
        strands.append(lead.strand)
        first.update({i: (len(rows) - 1, alleles[i].pos - lead.pos) for i in c})
    for al in alleles:
        rows.append(allele_sequences(fetch, al, distance, extra, flank)[1])
        strands.append(al.strand)
    scored = _forward_rows(model, rows, strands, context=context, common=width, device=device)
    effects = []
    for i, al in enumerate(alleles):
        row, shift = first[i]
        p_ref, m_ref = scored[row]
        p_alt, m_alt = scored[len(clusters) + i]
        r, a = len(al.ref), len(al.alt)
        ref_view = p_ref[:, shift + trim : shift + trim + 2 * distance + 1]
        alt_view = alt_to_ref(np.ascontiguousarray(p_alt[:, trim:]), r, a, distance)
        changes = []
        if m_ref is not None:
            ref_map = m_ref[:, shift : shift + width]
            changes = motif_changes(ref_map, m_alt, r, a, flank + distance, reach)
        effects.append(AlleleEffect(site_deltas(ref_view, alt_view, classes, distance), changes))
    return effects
