"""A DNA model's layer as rows of activations, one per (window, position, strand), and a
concept's sites among them.

Layers: ``hidden`` (g's last hidden features, after its final batch-norm and ReLU: what the
motif projection reads; the default) and ``g`` (g's motif logits before the max over
strands). A model that scans both strands gives two rows per position, the reverse strand's
features read at the mirrored position, so a row's site window is read 5'->3' on the strand
that produced it (as ``run_motifs.channel_site_windows`` does for Sparling's channels).

A concept's sites are the local maxima of its activation (at least ``rf // 2`` apart on a
window and strand) in the top ``site_fraction`` of its rows, at most ``max_sites``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from ..evaluate.positions import PositionSettings
from ..genome.pwm import information_content
from ..genome.sequence import reverse_complement_one_hot
from ..rundir import FAMILIES_DIR
from .family_files import export_families, place_families
from .formats import ExportedMotif
from .motifs import context_offset, site_windows
from .naming import match_dict

DNA_LAYERS = ("hidden", "g")


@dataclass
class LayerRows:
    """Activation rows ``rows`` (n, d); ``where`` (n, 3): window (in the split's evaluation
    order), input position, strand (+1 / -1); ``x``: the windows' one-hot inputs."""

    rows: np.ndarray
    where: np.ndarray
    x: np.ndarray
    background: np.ndarray


def _strand_features(g, x: torch.Tensor, layer: str) -> torch.Tensor:
    """(N, C, L) features of one strand: ``hidden`` or ``g``'s motif logits."""
    h = x.unsqueeze(2).contiguous(memory_format=torch.channels_last)
    h = torch.relu(g.out_norm(g.units(g.stem(h))))
    return (g.out(h) if layer == "g" else h).squeeze(2).float()


@torch.no_grad()
def dna_layer_rows(
    model, task, layer: str, split: str, *, offset: int, batch_size: int, device,
    max_rows: int,
) -> LayerRows:  # fmt: skip
    """Rows of ``layer`` on ``split`` (windows taken in order until ``max_rows`` rows; only
    labelled output positions of site tasks)."""
    g = model.g
    both = bool(getattr(g, "reverse_complement", False))
    rows, where, inputs = [], [], []
    counts = np.zeros(4)
    have = first = 0
    for batch in task.eval_batches(split, batch_size):
        x = batch.x.to(device)
        length = x.shape[-1] - 2 * offset
        valid = (batch.y >= 0).numpy() if batch.y is not None else np.ones((len(x), length), bool)
        strands = [(1, _strand_features(g, x, layer))]
        if both:
            reverse = _strand_features(g, reverse_complement_one_hot(x), layer)
            strands.append((-1, torch.flip(reverse, dims=(-1,))))
        x_np = x.cpu().numpy()
        counts += (x_np[:, :, offset : offset + length] * valid[:, None, :]).sum(axis=(0, 2))
        w, p = np.nonzero(valid)
        for strand, feats in strands:
            f = feats[:, :, offset : offset + length].cpu().numpy()
            rows.append(f[w, :, p])
            where.append(np.stack([w + first, p + offset, np.full(len(w), strand)], 1))
        inputs.append(x_np)
        first += len(x)
        have += len(w) * len(strands)
        if have >= max_rows:
            break
    background = counts / counts.sum() if counts.sum() else np.full(4, 0.25)
    return LayerRows(np.concatenate(rows).astype(np.float32),
                     np.concatenate(where).astype(np.int64), np.concatenate(inputs),
                     background)  # fmt: skip


def concept_sites(
    activation: np.ndarray, where: np.ndarray, *, rf: int, site_fraction: float,
    max_sites: int,
) -> np.ndarray:  # fmt: skip
    """Indices of the rows that are a concept's sites (strongest first)."""
    if not len(activation):
        return np.zeros(0, np.int64)
    cut = np.quantile(activation, 1.0 - site_fraction)
    candidates = np.flatnonzero((activation >= cut) & (activation > 0))
    candidates = candidates[np.argsort(-activation[candidates], kind="stable")]
    taken: dict[tuple[int, int], list[int]] = {}
    half = max(1, rf // 2)
    kept = []
    for i in candidates:
        key = (int(where[i, 0]), int(where[i, 2]))
        pos = int(where[i, 1])
        near = taken.setdefault(key, [])
        if any(abs(pos - q) < half for q in near):
            continue
        near.append(pos)
        kept.append(i)
        if len(kept) >= max_sites:
            break
    return np.asarray(kept, np.int64)


def windows_of_sites(layer: LayerRows, picks: np.ndarray, width: int) -> np.ndarray:
    """One-hot windows ``(n, 4, width)`` of the sites ``picks``, each read on its strand."""
    out = np.zeros((len(picks), 4, width), np.float32)
    length = layer.x.shape[-1]
    for n, i in enumerate(picks):
        w, pos, strand = (int(v) for v in layer.where[i])
        seq = layer.x[w][None]
        if strand < 0:
            seq = seq[:, ::-1, ::-1]  # reverse complement of A, C, G, T rows
            pos = length - 1 - pos
        out[n] = site_windows(np.ascontiguousarray(seq), np.array([pos]), width)[0]
    return out


def site_placer(task, split: str):
    """``place(window, begin, width, strand) -> (chrom, start, strand)``: a span of a window's
    input (forward coordinates) as a BED interval -- genome coordinates for site tasks built
    from a genome (the dataset's windows), else ``window<N>`` pseudo-chromosomes in window
    coordinates (synthetic windows, e.g. planted)."""
    dataset = getattr(task, "data", None)
    offset = context_offset(task)
    if dataset is None or not hasattr(dataset, "windows"):
        return lambda w, begin, width, strand: (f"window{w}", begin, strand)
    coords = dataset.windows(task.eval_indices(split))

    def place(w: int, begin: int, width: int, strand: int) -> tuple[str, int, int]:
        p = begin - offset
        origin, wstrand = int(coords["start"][w]), int(coords["strand"][w])
        start = origin + p if wstrand > 0 else origin + dataset.window - p - width
        return dataset.seqids[int(coords["seqid"][w])], start, strand * wstrand

    return place


def bed_line(place, name: str, w: int, begin: int, width: int, strand: int, score: int) -> str:
    chrom, start, strand = place(w, begin, width, strand)
    start = max(0, start)
    return f"{chrom}\t{start}\t{start + width}\t{name}\t{min(1000, max(0, score))}\t" + (
        "+" if strand > 0 else "-")


def sorted_bed(lines: list[str]) -> str:
    lines = sorted(lines, key=lambda s: (s.split("\t")[0], int(s.split("\t")[1])))
    return "".join(line + "\n" for line in lines)


def motif_entry(m, naming: dict) -> dict:
    """A concept motif's ``concepts.json`` entry (the fields ``motifs.json`` gives a
    channel): sites, width, consensus, bits, best Tomtom match and name."""
    return {"id": m.id, "channel": m.channel, "nsites": m.nsites, "width": m.width,
            "consensus": m.consensus,
            "bits": round(float(information_content(m.probs).sum()), 3),
            "best_match": match_dict(naming["best"].get(m.id)),
            "name": naming["named"].get(m.id), "family": m.family or None}  # fmt: skip


def concept_families(folder: Path, motifs: list[ExportedMotif], sites: dict, targets, decoys,
                     rf: int, background, context, offset: int,
                     prefix: str | None = None) -> dict:  # fmt: skip
    """A method's motifs clustered into families as ``export`` clusters Sparling's channels
    (``folder/families/``; ``sites``: concept -> (window, position, strand) rows), each family
    placed against the labelled sites where the task has them; the ``families`` block."""
    block, families = export_families(folder / FAMILIES_DIR, motifs, sites, targets,
                                      decoys=decoys, rf=rf, background=background,
                                      prefix=prefix)  # fmt: skip
    if context is not None and families:
        place_families(block, families, context, offset, PositionSettings())
    return block
