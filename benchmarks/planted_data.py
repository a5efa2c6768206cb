"""Planted batch generation speed: background site rejection as one ``conv1d`` over both
strands (``genome/site_scan.windows_with_site``) vs the per-column numpy gather it
replaced (kept here as the comparison), on the default set (200 bp) and random motif draws
(300 bp, up to 5 sites); same process, interleaved repeats, median time per 64-sample batch.
It also counts how often the two disagree on fixed genome windows (only sites within 1e-5 of
the cutoff may: the conv rejects those, by design)."""

from __future__ import annotations

import statistics
import time
from pathlib import Path

import numpy as np

from sparling_genomics.io import write_json_atomic

from .planted import DRAW_DATA, draw_motifs
from .report import machine_description, machine_line, update_section

BATCH = 64


def gathered_site_scores(codes: np.ndarray, stacked: np.ndarray) -> np.ndarray:
    """The replaced scan: relative score (K, N, L) of each motif's site at each position of
    ``codes`` (N, L), forward strand, one numpy gather per matrix column."""
    k, _, width = stacked.shape
    n, length = codes.shape
    padded = np.full((n, length + width - 1), 4, dtype=np.intp)
    padded[:, :length] = codes
    scores = np.zeros((k, n, length))
    for w in range(width):
        scores += stacked[:, padded[:, w : w + length], w]
    return scores


def _gathered_has_site(task):
    from sparling_genomics.genome.sequence import reverse_complement_codes
    from sparling_genomics.genome.site_scan import stack_relative_matrices

    stacked = stack_relative_matrices(task.log_odds_matrices)

    def has_site(codes: np.ndarray) -> np.ndarray:
        best = np.maximum(
            gathered_site_scores(codes, stacked),
            gathered_site_scores(reverse_complement_codes(codes), stacked),
        )
        return (best >= task.min_relative_score).any(axis=(0, 2))

    return has_site


def _batch_ms(task, batches: int, start: int) -> list[float]:
    times = []
    for i in range(batches):
        t = time.perf_counter()
        task.train_batch(start + i, BATCH)
        times.append((time.perf_counter() - t) * 1000)
    return times


def _measure(name: str, data: dict, batches: int, threads: int, windows: int) -> dict:
    import torch

    from sparling_genomics.tasks.registry import task_class
    from sparling_genomics.train.run_config import resolve_config

    torch.set_num_threads(threads)
    config = resolve_config("planted", "cpu", overrides=[{"data": data}] if data else [])
    conv = task_class("planted")(config, 0)
    gather = task_class("planted")(config, 0)
    gather._has_site = _gathered_has_site(gather)
    conv_ms, gather_ms = [], []
    for r in range(3):  # interleaved, so drift hits both alike
        conv_ms += _batch_ms(conv, batches, r * batches)
        gather_ms += _batch_ms(gather, batches, r * batches)
    rng = np.random.default_rng(0)
    genome = conv._genome
    starts = rng.integers(0, int(0.8 * len(genome)) - conv.length, windows)
    fixed = genome[starts[:, None] + np.arange(conv.length)]
    fixed = fixed[~(fixed == 4).any(axis=1)]
    ours, theirs = conv._has_site(fixed), gather._has_site(fixed)
    return {
        "set": name,
        "motifs": len(conv.motifs),
        "length": conv.length,
        "conv_ms": round(statistics.median(conv_ms), 2),
        "gather_ms": round(statistics.median(gather_ms), 2),
        "speedup": round(statistics.median(gather_ms) / statistics.median(conv_ms), 2),
        "windows": int(len(fixed)),
        "rejected": round(float(ours.mean()), 4),
        "disagree": int((ours != theirs).sum()),
        "disagree_conv_only": int((ours & ~theirs).sum()),
    }


def run_planted_data_benchmark(
    out: Path,
    *,
    benchmarks_md: Path,
    draws: list[int],
    batches: int = 20,
    threads: int = 2,
    windows: int = 20_000,
) -> dict:
    sets = [("default", {})] + [
        (f"draw{d}", {**DRAW_DATA, "motifs": draw_motifs(d)}) for d in draws
    ]
    rows = [_measure(name, data, batches, threads, windows) for name, data in sets]
    machine = machine_description()
    result = {"benchmark": "planted-data", "machine": machine, "batch": BATCH,
              "batches": 3 * batches, "threads": threads, "rows": rows}  # fmt: skip
    write_json_atomic(Path(out), result)
    draws_arg = ",".join(map(str, draws))
    lines = [
        "## Planted batch generation: background site rejection",
        "",
        f"Machine: {machine_line(machine)}",
        "",
        f"Command: `python -m benchmarks planted-data --out {out} --draws {draws_arg}`",
        "",
        f"Median time to make one {BATCH}-sample training batch ({3 * batches} batches, "
        "interleaved): background windows holding a site of any planted motif on either "
        "strand (relative score >= 0.85) are rejected and redrawn. Comparison: the per-column "
        "numpy gather the task used before (`benchmarks/planted_data.py`), in the same process. "
        f"Disagreements are counted on {windows:,} fixed genome windows; 'conv only' ones are "
        "sites within 1e-5 of the cutoff, which the conv rejects by design.",
        "",
        "| motif set | motifs | length | rejected windows | conv (ms) | gather (ms) | speedup "
        "| disagree (conv only) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['set']} | {r['motifs']} | {r['length']} | {100 * r['rejected']:.1f}% "
            f"| {r['conv_ms']:.1f} | {r['gather_ms']:.1f} | {r['speedup']:.1f}x "
            f"| {r['disagree']} of {r['windows']:,} ({r['disagree_conv_only']}) |"
        )
    update_section(benchmarks_md, "planted-data", "\n".join(lines))
    return result
