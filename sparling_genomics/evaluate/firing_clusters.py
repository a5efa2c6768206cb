"""Does a motif fire on two kinds of site? Two clusters of g's features where it fires.

A channel that carries two motifs (on DigitCircle: two digits; on the planted task: two PWMs)
fires on two kinds of input, and ``g``'s last features at its firing positions (what its
output filter ``g.out`` reads) fall into two groups pointing two ways. A channel with one
motif fires on one kind: its features split, if at all, by strength along one direction.
So the measure is the cosine between the mean features of the two 2-means clusters of a
motif's firing positions. On two DigitCircle runs (``docs/paper-domains.md``, attempts 22
and 23; validation set, 500 inputs; spares aside) the channels whose firings were at least
95% one digit had a cosine of 0.99-1.00, but one at 0.87 (its 9 stray 9s a cluster of their
own, a share the rule below ignores); of the nine whose firings held a second digit at a
tenth or more, six were at 0.68-0.85, their clusters splitting by digit (e.g. 206 6s | 82
9s), two at 0.96 and one at 1.00. Raw input patches do not show it (the noise swamps them).

A channel's second pattern is not always a motif without a channel: on attempt 22's weights
both two-way channels' smaller clusters pointed the way of another channel's main one
(cosine 0.99 and 1.00: 5s on the 6 channel, 6s on the 9 channel), while on attempt 23's the
four channels' smaller clusters (all 9s) matched no channel's main one (0.61-0.76): only
there was a digit without a channel of its own.

2-means is scikit-learn's ``KMeans`` (already a dependency through the concept extractors).
"""

from __future__ import annotations

import numpy as np
import torch

from ..models.modes import eval_mode
from ..models.split import motif_output
from ..tasks.base import Task, first_eval_batches
from .identifiability import SAMPLES

MAX_FIRINGS = 2000  # per motif: a random subset beyond this (the cosine is stable well below)


@torch.no_grad()
def firing_clusters(
    model,
    task: Task,
    split: str,
    *,
    batch_size: int,
    device: torch.device,
    samples: int = SAMPLES,
    seed: int = 0,
) -> list[dict]:
    """Per learned motif, over the first ``samples`` inputs of ``split``: ``firings`` (its
    active positions), and with at least 4 of them ``cos`` (cosine between the mean ``g.out``
    input features of its two 2-means clusters), ``minor`` (the smaller cluster's share) and
    ``centres`` (2, features; the larger cluster first). Restores the model's train mode."""
    out = motif_output(model, "measuring a motif's firing clusters")
    learned = model.learned
    captured: dict = {}
    hook = out.register_forward_hook(lambda _m, inp, o: captured.update(f=inp[0], o=o))
    features: list[list[np.ndarray]] = [[] for _ in range(learned)]  # per motif, per batch
    try:
        with eval_mode(model):
            for batch in first_eval_batches(task, split, batch_size, samples):
                layer, _ = model.layer_and_residual(batch.x.to(device))
                motifs = model.motif_activations(layer)[:, :learned]
                forward, reverse, wins = _strands(model, captured["f"], captured["o"], len(layer))
                b, c, p = (motifs.reshape(motifs.shape[0], learned, -1) > 0).nonzero().unbind(1)
                rows = forward[b, :, p]  # (firings, features)
                if wins is not None:
                    rows = torch.where(wins[b, c, p].unsqueeze(1), reverse[b, :, p], rows)
                rows, c = rows.float().cpu().numpy(), c.cpu().numpy()
                for motif in np.unique(c):
                    features[motif].append(rows[c == motif])
    finally:
        hook.remove()
    rng = np.random.default_rng(seed)
    width = out.in_channels
    return [_clusters(np.concatenate(chunks) if chunks else np.empty((0, width)), rng, seed)
            for chunks in features]  # fmt: skip


def _strands(model, f: torch.Tensor, o: torch.Tensor, n: int):
    """``g.out``'s input features of the forward and reverse strand as (n, features,
    positions), and per (input, motif, position) True where the reverse strand's logit won:
    a reverse-complement model scans both strands in one batch of 2n
    (``MotifModel1D.forward_with_strand``); otherwise (f, None, None)."""
    f = f.reshape(f.shape[0], f.shape[1], -1)
    if f.shape[0] == n:
        return f, None, None
    o = o.reshape(o.shape[0], o.shape[1], -1)
    reverse = torch.flip(f[n:], dims=(-1,))
    wins = model.g._reverse_wins(o[:n], torch.flip(o[n:], dims=(-1,)))
    return f[:n], reverse, wins


def _clusters(x: np.ndarray, rng: np.random.Generator, seed: int) -> dict:
    if len(x) < 4:
        return {"firings": len(x), "cos": None, "minor": 0.0, "centres": None}
    if len(x) > MAX_FIRINGS:
        x = x[rng.choice(len(x), MAX_FIRINGS, replace=False)]
    from sklearn.cluster import KMeans  # here: scikit-learn takes ~2 s to import, and every
    # verb that reads a checkpoint imports this module through the rule registry

    labels = KMeans(n_clusters=2, n_init=4, random_state=seed).fit_predict(x)
    sizes = np.bincount(labels, minlength=2)
    order = np.argsort(-sizes)
    centres = np.stack([x[labels == k].mean(0) if sizes[k] else x.mean(0) for k in order])
    cos = _cosine(centres[0], centres[1])
    return {"firings": int(len(x)), "cos": cos, "minor": float(sizes.min() / len(x)),
            "centres": centres}  # fmt: skip


def two_pattern_motifs(
    clusters: list[dict],
    *,
    max_cos: float,
    min_share: float,
    skip: set[int] = frozenset(),
    owned_cos: float | None = None,
) -> list[int]:
    """Motifs whose firing clusters point two ways (cosine under ``max_cos``, the smaller
    cluster at least ``min_share`` of the firings), most distinct first; ``skip`` left out.
    With ``owned_cos``, a motif whose smaller cluster points the way of another motif's larger
    one (cosine at least ``owned_cos``; ``skip``'s motifs not counted) is left out too: it
    shares a pattern that already has a channel of its own, which a copy would not mend."""
    found = [
        c
        for c, k in enumerate(clusters)
        if c not in skip and k["cos"] is not None and k["cos"] < max_cos
        and k["minor"] >= min_share
    ]  # fmt: skip
    if owned_cos is not None:
        found = [c for c in found if not _owned(clusters, c, owned_cos, skip)]
    return sorted(found, key=lambda c: clusters[c]["cos"])


def shared_pattern_motifs(
    clusters: list[dict],
    *,
    max_cos: float,
    min_share: float,
    owned_cos: float,
    skip: set[int] = frozenset(),
) -> list[int]:
    """Motifs whose firing clusters point two ways (as :func:`two_pattern_motifs`) and whose
    smaller cluster points the way of another motif's larger one (cosine at least
    ``owned_cos``): a second pattern that has a channel of its own elsewhere. ``skip``'s
    motifs are neither picked nor counted as owners."""
    two_way = two_pattern_motifs(clusters, max_cos=max_cos, min_share=min_share, skip=skip)
    return [c for c in two_way if _owned(clusters, c, owned_cos, skip)]


def _owned(clusters: list[dict], motif: int, owned_cos: float, skip) -> bool:
    """Whether ``motif``'s smaller cluster points the way of another motif's larger one."""
    minor = clusters[motif]["centres"][1]
    for other, k in enumerate(clusters):
        if other == motif or other in skip or k["centres"] is None:
            continue
        if _cosine(minor, k["centres"][0]) >= owned_cos:
            return True
    return False


def repeated_motifs(clusters: list[dict], alpha, *, same_cos: float) -> list[tuple[int, int]]:
    """(repeat, kept) pairs: motifs whose main firing clusters point one way (cosine at least
    ``same_cos``: one pattern on two channels), the less needed (``alpha``; then the higher
    index) of each pair the repeat; a motif is a repeat or kept at most once a call."""
    majors = {c: k["centres"][0] for c, k in enumerate(clusters) if k["centres"] is not None}
    pairs, used = [], set()
    for a in majors:
        for b in majors:
            if b <= a or a in used or b in used:
                continue
            if _cosine(majors[a], majors[b]) >= same_cos:
                keep, drop = (a, b) if alpha[a] >= alpha[b] else (b, a)
                pairs.append((drop, keep))
                used |= {a, b}
    return pairs


def _cosine(u: np.ndarray, v: np.ndarray) -> float:
    """Cosine between two feature vectors (0 where either is zero)."""
    norms = float(np.linalg.norm(u) * np.linalg.norm(v))
    return float(u @ v) / norms if norms > 0 else 0.0
