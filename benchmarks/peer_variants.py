"""SpliceAI's variant scoring with a peer's network: DS_AG, DS_AL, DS_DG, DS_DL of an allele.

The rule of SpliceAI's ``get_delta_scores`` (spliceai/utils.py), for a network of context
``C`` and ``distance`` D (50): the reference window is the ``C + 2D + 1`` bases centred on the
variant's first base, the alternative window the same with REF replaced by ALT; on the minus
strand both are reverse complemented and the outputs flipped back. A deletion's alternative
output gets zeros where the deleted bases were, an insertion's the maximum over the inserted
bases; the four scores are the largest gain or loss of acceptor and donor probability over the
``2D + 1`` positions. SpliceAI's tool skips a variant whose REF and ALT are both longer than
one base; a substitution of equal lengths (the benchmark's GT->CA site mutations) is scored
here with its positions aligned, the same as ours. SpliceAI's tool also puts N beyond the ends
of the allele's annotated transcript (its training data did the same); ``bounds`` does that
here, and without it the windows read the genome, as our verb does. Written out (not
SpliceAI's function) because that one calls Keras models and reads the gene table of a human
annotation.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from sparling_genomics.genome.sequence import (
    N_CODE,
    encode,
    one_hot,
    reverse_complement_codes,
)

DISTANCE = 50
SCORES = ("DS_AG", "DS_AL", "DS_DG", "DS_DL")


def allele_windows(
    fetch: Callable, seqid: str, pos: int, ref: str, alt: str, strand: int, context: int,
    distance: int = DISTANCE, bounds: tuple[int, int] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Reference and alternative codes of one allele (0-based ``pos``), oriented;
    ``bounds``: the transcript's genome interval ``[lo, hi)``, N beyond it (SpliceAI's tool)."""
    wid = context + 2 * distance + 1
    first = pos - wid // 2
    seq = fetch(seqid, first, pos + wid // 2 + 1)
    if bounds is not None:
        seq = seq.copy()
        seq[: min(max(bounds[0] - first, 0), wid)] = N_CODE
        seq[min(max(bounds[1] - first, 0), wid) :] = N_CODE
    alt_codes = np.concatenate([seq[: wid // 2], encode(alt), seq[wid // 2 + len(ref) :]])
    if strand == -1:
        return reverse_complement_codes(seq), reverse_complement_codes(alt_codes)
    return seq, alt_codes


def align_alt(y_alt: np.ndarray, ref_len: int, alt_len: int, distance: int) -> np.ndarray:
    """The alternative output ``(positions, 3)`` on the reference's positions (SpliceAI's rule)."""
    cov = 2 * distance + 1
    if ref_len > 1 and alt_len == 1:
        gap = np.zeros((ref_len - alt_len, y_alt.shape[1]), dtype=y_alt.dtype)
        return np.concatenate([y_alt[: cov // 2 + alt_len], gap, y_alt[cov // 2 + alt_len :]])
    if ref_len == 1 and alt_len > 1:
        inserted = y_alt[cov // 2 : cov // 2 + alt_len].max(axis=0, keepdims=True)
        return np.concatenate([y_alt[: cov // 2], inserted, y_alt[cov // 2 + alt_len :]])
    return y_alt


def delta_scores(y_ref: np.ndarray, y_alt: np.ndarray) -> tuple[float, float, float, float]:
    """(DS_AG, DS_AL, DS_DG, DS_DL) from aligned outputs ``(positions, 3)`` (none, acceptor,
    donor)."""
    gain, loss = y_alt - y_ref, y_ref - y_alt
    return (float(gain[:, 1].max()), float(loss[:, 1].max()), float(gain[:, 2].max()),
            float(loss[:, 2].max()))  # fmt: skip


@torch.no_grad()
def peer_variant_scores(net: torch.nn.Module, fetch: Callable, alleles: list[tuple], *,
                        distance: int = DISTANCE, batch: int = 8,
                        device: torch.device | None = None,
                        bounds: list[tuple[int, int] | None] | None = None,
                        ) -> list[tuple[float, ...]]:  # fmt: skip
    """Scores of ``alleles`` ``(seqid, pos, ref, alt, strand)`` in order; None for an allele
    SpliceAI's rule cannot place (REF and ALT of different lengths, both longer than 1).
    ``bounds``: each allele's transcript interval (N beyond it), or None for one outside
    every transcript, which SpliceAI's tool does not score (None too)."""
    device = device or torch.device("cpu")
    context = int(net.context)
    placed = [not (len(a[2]) > 1 and len(a[3]) > 1 and len(a[2]) != len(a[3])) and
              (bounds is None or bounds[i] is not None) for i, a in enumerate(alleles)]  # fmt: skip
    windows = []
    for i, (seqid, pos, ref, alt, strand) in enumerate(alleles):
        if placed[i]:
            windows.append(allele_windows(fetch, seqid, pos, ref, alt, strand, context, distance,
                                          None if bounds is None else bounds[i]))  # fmt: skip
    outputs: dict[tuple[int, int], np.ndarray] = {}
    jobs = [(i, k, w[k]) for i, w in enumerate(windows) for k in (0, 1)]
    jobs.sort(key=lambda job: len(job[2]))  # rows of one length share a batch
    for lo in range(0, len(jobs), batch):
        part = jobs[lo : lo + batch]
        for length in sorted({len(j[2]) for j in part}):
            same = [j for j in part if len(j[2]) == length]
            x = torch.from_numpy(one_hot(np.stack([j[2] for j in same]))).to(device)
            y = net(x).float().cpu().numpy().transpose(0, 2, 1)  # (b, positions, 3)
            for (i, k, _), out in zip(same, y):
                outputs[(i, k)] = out
    result: list[tuple[float, ...] | None] = []
    index = iter(range(len(windows)))
    for (_, _, ref, alt, strand), ok in zip(alleles, placed):
        if not ok:
            result.append(None)
            continue
        i = next(index)
        y_ref, y_alt = outputs[(i, 0)], outputs[(i, 1)]
        if strand == -1:
            y_ref, y_alt = y_ref[::-1], y_alt[::-1]
        result.append(delta_scores(y_ref, align_alt(y_alt, len(ref), len(alt), distance)))
    return result
