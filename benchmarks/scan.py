"""Genome-scan benchmark: ``scan`` over a whole reference beside memelite's FIMO.

Ours: the ``scan`` verb as a user runs it (model over both strands, then BED9 + bigBed +
per-motif bigWig), timed as a whole and for the model pass alone. Comparison: memelite's FIMO
(numba; MEME suite's algorithm) scanning the *same exported PWMs* (``motifs.meme``) over the
same sequence, both strands, p < 1e-4, timed in the same process right after ours. The ratio
is FIMO seconds / our seconds (> 1: ours is faster). Both find motif sites, by different means:
FIMO scores each PWM, ours runs the learned model.
"""

from __future__ import annotations

import resource
import time
from pathlib import Path

from sparling_genomics.rundir import MOTIFS_MEME, motifs_dir

from .floors import SCAN_SECONDS
from .report import machine_description, machine_line, publish


def _peak_rss_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2


def run_scan_benchmark(
    run: Path,
    out: Path,
    *,
    reference: str = "tair10-chr1",
    fimo_threshold: float = 1e-4,
    benchmarks_md: Path = Path("BENCHMARKS.md"),
) -> Path:
    from memelite import fimo

    from sparling_genomics.genome.fasta import Genome
    from sparling_genomics.genome.references import load_reference
    from sparling_genomics.genome.sequence import one_hot
    from sparling_genomics.runners.scan import scan_run_to_tracks

    run, out = Path(run), Path(out)
    fasta = load_reference(reference).fasta
    began = time.perf_counter()
    ours = scan_run_to_tracks(run, fasta, out / "tracks")
    ours_seconds = time.perf_counter() - began
    ours_rss = _peak_rss_gb()

    genome = Genome(fasta)
    meme = motifs_dir(run) / MOTIFS_MEME
    # FIMO's numba kernels compile on first use (cached on disk after): time that apart.
    began = time.perf_counter()
    first = next(iter(genome.lengths))
    fimo(str(meme), one_hot(genome.sequence(first)[:10_000])[None], threshold=fimo_threshold)
    fimo_warmup = time.perf_counter() - began
    began = time.perf_counter()
    fimo_hits = 0
    for seqid in genome.lengths:
        x = one_hot(genome.sequence(seqid))[None]
        hits = fimo(str(meme), x, threshold=fimo_threshold, reverse_complement=True)
        fimo_hits += sum(len(h) for h in hits)
    fimo_seconds = time.perf_counter() - began
    result = {
        "benchmark": "scan",
        "run": str(run),
        "reference": reference,
        "machine": machine_description(),
        "bases": ours["bases"],
        "motifs": ours["motifs"],
        "ours": {
            "total_seconds": round(ours_seconds, 2),
            "model_seconds": ours["scan_seconds"],
            "sites": ours["sites"],
            "bed_rows": ours["bed_rows"],
            "peak_rss_gb": round(ours_rss, 2),
        },
        "fimo": {
            "seconds": round(fimo_seconds, 2),
            "hits": fimo_hits,
            "threshold": fimo_threshold,
            "warmup_seconds": round(fimo_warmup, 2),
        },  # fmt: skip
        "ratio_fimo_over_ours_total": round(fimo_seconds / ours_seconds, 3),
        "ratio_fimo_over_ours_model": round(fimo_seconds / ours["scan_seconds"], 3),
    }
    return publish(result, out / "bench_scan.json", benchmarks_md, "scan",
                   _markdown(result, run, out, reference))  # fmt: skip


def _markdown(r: dict, run: Path, out: Path, reference: str) -> str:
    o, f = r["ours"], r["fimo"]
    return "\n".join(
        [
            "## Genome scan: TAIR10 chr1, both strands, beside memelite FIMO",
            "",
            f"Machine: {machine_line(r['machine'])}",
            "",
            f"Command: `python -m benchmarks scan --model {run} --reference {reference} "
            f"--out {out}`. JSON: `{out}/bench_scan.json`. Model: `{run}` (the default "
            "splicing preset); FIMO scans the same exported PWMs (`motifs/motifs.meme`).",
            "",
            f"{r['bases']:,} bases, {r['motifs']} motifs. Floor: <= {SCAN_SECONDS} s on 2 cores.",
            "",
            "| | seconds | sites | note |",
            "|---|---|---|---|",
            f"| ours, whole `scan` (model + BED9 + bigBed + bigWigs) | {o['total_seconds']:.1f} "
            f"| {o['sites']:,} | peak RSS {o['peak_rss_gb']:.2f} GB |",
            f"| ours, model pass only | {o['model_seconds']:.1f} | | |",
            f"| memelite FIMO, p < {f['threshold']:g} | {f['seconds']:.1f} | {f['hits']:,} | "
            f"hits, both strands; numba warm-up before it {f['warmup_seconds']:.1f} s |",
            "",
            f"FIMO / ours: **{r['ratio_fimo_over_ours_total']:.2f}x** for the whole scan, "
            f"{r['ratio_fimo_over_ours_model']:.2f}x for the model pass (> 1: ours is faster). "
            "FIMO adds one PWM score per motif and position; our model runs two 32x32x11 "
            "convolutions per position and strand, so it is the slower of the two.",
        ]
    )
