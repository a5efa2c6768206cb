"""Minimum description length (seed 002): the bits per row a fitted concept set needs to
send the activations -- which blocks are active (the support), their coordinates, the
residual, and the dictionary (amortised over the rows) -- and the choice of block size and
k that minimises it.

Coordinates and residuals are sent as Gaussians quantised at ``resolution`` (a fraction of
the per-feature RMS of the scaled activations): ``max(0, log2(sqrt(2 pi e) sigma / delta))``
bits per value; each dictionary parameter costs ``log2(n) / 2`` bits (the usual two-part
code), shared by the ``n`` rows. A block's coordinates are sent in the principal axes of
its own contribution (``codes_i @ D_i`` over the rows where it is active), one variance per
axis: the cost does not depend on the basis or scale the fit gave the block, and a block's
unused directions cost next to nothing, while pooling one variance per coordinate index over
all blocks would charge a circle's block for a torus's spread.

The choice is made in two stages: a short fit (``scout_fraction`` of the steps) of every
candidate, then full fits of a shortlist -- each block size's shortest k, topped up with the
next shortest scouts to ``finalists`` -- and the shortest full fit is the result. Short fits
rank k fairly within a block size but block sizes unevenly: larger blocks converge sooner (on
seed 002's synthetic test, 750 steps leave the true 24 x 4, k = 3 at FVU 0.026 and fourth
overall, while 8-blocks reach 0.008), so the scouts only shortlist. A fit that starts from
another (the Grassmannian and Group-Lasso featurizers start from a vanilla fit) may be
scouted by that start (``scout_fit``): in a short fit it spends its steps recovering from the
switch (Grassmannian, block 4, k 3, 750 steps: FVU 0.23 against its own start's 0.14, so
block 4's shortest scout was k = 1, whose full fit is 39 bits longer than k = 3's), and
its own full fits still make the choice.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from itertools import product

import numpy as np

from .base import Concepts, FitSettings


def _gaussian_bits(variance: float, delta: float) -> float:
    if variance <= 0:
        return 0.0
    return max(0.0, 0.5 * math.log2(2 * math.pi * math.e * variance / delta**2))


def _coordinate_bits(concepts: Concepts, codes: np.ndarray, active: np.ndarray,
                     delta: float) -> float:  # fmt: skip
    """Bits per row for the active blocks' coordinates: for each block, its contribution's
    second moment along each principal axis, weighted by how often the block is active."""
    n = codes.shape[0]
    bits = 0.0
    for c in range(concepts.count):
        rows = active[:, c]
        if not rows.any():
            continue
        z = codes[rows, c, :].astype(np.float64)  # (n_c, b)
        basis = concepts.blocks[c].astype(np.float64)  # (b, d)
        # Eigenvalues of (z D)^T (z D) / n_c, via the b x b form (z^T z / n_c) (D D^T).
        moment = z.T @ z / len(z)
        gram = basis @ basis.T
        eig = np.linalg.eigvals(moment @ gram).real.clip(min=0)
        bits += rows.sum() / n * sum(_gaussian_bits(float(v), delta) for v in eig)
    return bits


def description_length(concepts: Concepts, x: np.ndarray, *, resolution: float = 0.25) -> dict:
    """Bits per row of ``x`` under ``concepts``: support, codes, residual, dictionary."""
    scaled = concepts.scaling.apply(x)
    n, d = scaled.shape
    delta = resolution / math.sqrt(d)
    codes = concepts.codes(x)
    active = np.linalg.norm(codes, axis=2) > 0
    blocks = concepts.count
    mean_active = float(active.sum(1).mean())
    support = float(np.mean([math.log2(math.comb(blocks, int(a))) for a in active.sum(1)]))
    code_bits = _coordinate_bits(concepts, codes, active, delta)
    recon = sum(concepts.part(codes, c) for c in range(blocks))
    residual = scaled - recon
    residual -= residual.mean(0)  # a bias is part of the dictionary
    residual_bits = d * _gaussian_bits(float((residual**2).mean()), delta)
    dictionary_bits = (blocks * concepts.block + 1) * d * 0.5 * math.log2(max(n, 2)) / n
    total = support + code_bits + residual_bits + dictionary_bits
    parts = {"bits_per_row": total, "support": support, "codes": code_bits,
             "residual": residual_bits, "dictionary": dictionary_bits, "mean_active": mean_active}
    return {key: round(float(value), 3) for key, value in parts.items()}


def choose_block_and_k(
    x: np.ndarray,
    fit: Callable[[int, int, FitSettings], Concepts],
    concepts: int,
    settings: FitSettings,
    *,
    blocks: tuple[int, ...] = (1, 2, 4, 8),
    ks: tuple[int, ...] = (1, 2, 3, 4, 6, 8),
    scout_fraction: float = 0.25,
    finalists: int = 3,
    scout_fit: Callable[[int, int, FitSettings], Concepts] | None = None,
) -> tuple[Concepts, list[dict]]:
    """(fit, table): the candidate (block, k) with the smallest description length, fitted
    with ``settings``. Every candidate gets a short fit (``scout_fraction`` of the steps);
    each block size's shortest, and the next shortest up to ``finalists`` in all, get full
    fits, and the shortest of those is returned.
    ``fit(block, k, settings)`` fits one; ``scout_fit`` (default ``fit``) makes the short
    fits. Block sizes above the feature count and k above
    ``concepts`` are skipped. Table rows: block, k, stage ('scout' or 'full') and the
    description length's parts."""
    d = x.shape[1]
    scout = replace(settings, steps=max(50, int(settings.steps * scout_fraction)))
    table = []
    for b, k in product(blocks, ks):
        if b > d or k > concepts:
            continue
        dl = description_length((scout_fit or fit)(b, k, scout), x)
        table.append({"block": b, "k": k, "stage": "scout", **dl})
    ranked = sorted(table, key=lambda row: row["bits_per_row"])
    shortlist = [row for i, row in enumerate(ranked)
                 if all(other["block"] != row["block"] for other in ranked[:i])]  # fmt: skip
    rest = [row for row in ranked if row not in shortlist]
    shortlist += rest[: max(0, finalists - len(shortlist))]
    best, best_bits = None, math.inf
    for row in shortlist:
        fitted = fit(row["block"], row["k"], settings)
        dl = description_length(fitted, x)
        table.append({"block": row["block"], "k": row["k"], "stage": "full", **dl})
        if dl["bits_per_row"] < best_bits:
            best, best_bits = fitted, dl["bits_per_row"]
    return best, table
