"""Sparse-layer speed: our ``SpatialSparsity`` vs the ``sparling`` package's
``SparseLayerWithBatchNorm`` (1-D, per-channel enforcer), forward + backward, same shapes and
density, same process, interleaved repeats; the figure is the median time."""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from sparling_genomics.errors import ConfigError
from sparling_genomics.io import write_json_atomic

from .report import machine_description, machine_line, update_section

SHAPES = [(64, 16, 2000), (16, 32, 5000), (64, 6, 200)]
DENSITIES = [0.01, 0.001]


def _reference_layer(channels: int, density: float):
    try:
        from sparling import SparseLayerWithBatchNorm
    except ImportError as exc:
        raise ConfigError(
            f"the sparse-layer benchmark needs the reference package: pip install "
            f"'sparling==0.3.0' dconstruct ({exc})"
        ) from None
    return SparseLayerWithBatchNorm(
        dict(type="EnforceSparsityPerChannel1D"),
        starting_sparsity=1 - density,
        channels=channels,
        affine=False,
        input_dimensions=1,
    )


def _time(layer, x, *, channels_last: bool, repeats: int) -> list[float]:
    import torch

    grad = torch.randn_like(x)
    inp = x.transpose(1, 2).contiguous() if channels_last else x
    gout = grad.transpose(1, 2).contiguous() if channels_last else grad
    times = []
    for i in range(repeats + 3):
        leaf = inp.detach().requires_grad_(True)
        start = time.perf_counter()
        out = layer(leaf)
        out.backward(gout)
        elapsed = time.perf_counter() - start
        if i >= 3:  # warm-up
            times.append(elapsed)
    return times


def run_sparse_layer_benchmark(out: Path, *, benchmarks_md: Path, repeats: int = 20) -> dict:
    import torch

    from sparling_genomics.sparsity.layer import SpatialSparsity

    torch.manual_seed(0)
    rows = []
    for n, c, length in SHAPES:
        for density in DENSITIES:
            x = torch.randn(n, c, length)
            ours = SpatialSparsity(c, density).train()
            ref = _reference_layer(c, density).train()
            ours_t, ref_t = [], []
            for _ in range(3):  # interleave so drift hits both alike
                ours_t += _time(ours, x, channels_last=False, repeats=repeats)
                # The reference's 1-D layer takes (N, L, C).
                ref_t += _time(ref, x, channels_last=True, repeats=repeats)
            ours_ms = statistics.median(ours_t) * 1000
            ref_ms = statistics.median(ref_t) * 1000
            rows.append(
                {
                    "shape": [n, c, length],
                    "density": density,
                    "ours_ms": round(ours_ms, 3),
                    "sparling_ms": round(ref_ms, 3),
                    "speedup": round(ref_ms / ours_ms, 2),
                }
            )
    machine = machine_description()
    result = {"benchmark": "sparse-layer", "machine": machine, "repeats": repeats, "rows": rows}
    write_json_atomic(Path(out), result)
    lines = [
        "## Sparse layer speed (forward + backward)",
        "",
        f"Machine: {machine_line(machine)}",
        "",
        f"Command: `python -m benchmarks sparse-layer --out {out}`",
        "",
        "Median of 3 x "
        f"{repeats} interleaved repeats, train mode (threshold update included). Comparison: "
        "`sparling==0.3.0` `SparseLayerWithBatchNorm` with `EnforceSparsityPerChannel1D`, "
        "same shape and density. Speedup = sparling time / our time (> 1: ours is faster).",
        "",
        "| N x C x L | density | ours (ms) | sparling (ms) | speedup |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        shape = " x ".join(map(str, r["shape"]))
        lines.append(
            f"| {shape} | {r['density']:g} | {r['ours_ms']:.2f} | {r['sparling_ms']:.2f} "
            f"| {r['speedup']:.2f}x |"
        )
    update_section(benchmarks_md, "sparse-layer", "\n".join(lines))
    return result
