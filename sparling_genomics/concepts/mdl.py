"""Minimum description length (seed 002): the bits per row a fitted concept set needs to
send the activations -- which blocks are active (the support), their coordinates, the
residual, and the dictionary (amortised over the rows) -- and the choice of block size and
k that minimises it.

Coordinates and residuals are sent as Gaussians quantised at ``resolution`` (a fraction of
the per-feature RMS of the scaled activations): ``max(0, log2(sqrt(2 pi e) sigma / delta))``
bits per value; each dictionary parameter costs ``log2(n) / 2`` bits (the usual two-part
code), shared by the ``n`` rows."""

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
    values = codes[active]  # (active rows, block)
    code_bits = 0.0
    if values.size:
        per_coord = [_gaussian_bits(float(values[:, c].var() + values[:, c].mean() ** 2), delta)
                     for c in range(values.shape[1])]  # fmt: skip
        code_bits = mean_active * sum(per_coord)
    recon = sum(concepts.part(codes, c) for c in range(blocks))
    residual = scaled - recon
    residual -= residual.mean(0)  # a bias is part of the dictionary
    residual_bits = d * _gaussian_bits(float((residual**2).mean()), delta)
    dictionary_bits = (blocks * concepts.block + 1) * d * 0.5 * math.log2(max(n, 2)) / n
    total = support + code_bits + residual_bits + dictionary_bits
    parts = {"bits_per_row": total, "support": support, "codes": code_bits,
             "residual": residual_bits, "dictionary": dictionary_bits, "mean_active": mean_active}
    return {key: round(value, 3) for key, value in parts.items()}


def choose_block_and_k(
    x: np.ndarray,
    fit: Callable[[int, int, FitSettings], Concepts],
    concepts: int,
    settings: FitSettings,
    *,
    blocks: tuple[int, ...] = (1, 2, 4, 8),
    ks: tuple[int, ...] = (1, 2, 4, 8),
    scout_fraction: float = 0.25,
) -> tuple[int, int, list[dict]]:
    """(block, k, table): the candidate (block, k) whose short fit (``scout_fraction`` of the
    steps) has the smallest description length; ``fit(block, k, settings)`` fits one. Block
    sizes above the feature count and k above ``concepts`` are skipped."""
    d = x.shape[1]
    scout = replace(settings, steps=max(50, int(settings.steps * scout_fraction)))
    table = []
    for b, k in product(blocks, ks):
        if b > d or k > concepts:
            continue
        dl = description_length(fit(b, k, scout), x)
        table.append({"block": b, "k": k, **dl})
    best = min(table, key=lambda row: row["bits_per_row"])
    return best["block"], best["k"], table
