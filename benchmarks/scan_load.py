"""Scan load benchmark: 10,000 small contigs and one 30 Mb sequence, memory and exactness.

Two inputs made from the bundled TAIR10 chr1: ``contigs.fa``, 10,000 contigs of 300-3,000
bases cut at random places (a draft assembly's shape), and chr1 itself (30.4 Mb, one
sequence). Each is scanned by the ``scan`` verb as a user runs it (BED9 + bigBed + bigWigs)
in a child process whose peak RSS is read from ``getrusage``. The comparison is the same
model scanning *the pieces separately* (in this process, through ``scan_codes``): each contig
on its own, and chr1 cut into pieces that overlap by a margin wider than the receptive field,
each piece's core kept. Sites (position, motif channel, strand) must be identical to the
whole-file scan's, and activations equal to float32 rounding.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from sparling_genomics.rundir import SCAN_SUMMARY

from .report import machine_description, machine_line, publish

N_CONTIGS = 10_000
CONTIG_LENGTHS = (300, 3_000)
CHR1_PIECES = 3
PIECE_MARGIN = 20_000


def _write_fasta(path: Path, records: dict[str, np.ndarray]) -> None:
    from sparling_genomics.genome.sequence import decode

    with open(path, "w") as handle:
        for name, codes in records.items():
            seq = decode(codes)
            handle.write(f">{name}\n")
            for i in range(0, len(seq), 80):
                handle.write(seq[i : i + 80] + "\n")


def make_contigs(chromosome: np.ndarray, n: int, seed: int = 0) -> dict[str, np.ndarray]:
    """``n`` pieces of random length and place (non-overlapping) from one chromosome."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(CONTIG_LENGTHS[0], CONTIG_LENGTHS[1] + 1, size=n)
    gaps = rng.multinomial(len(chromosome) - int(lengths.sum()), np.ones(n + 1) / (n + 1))
    out, at = {}, 0
    for i, (length, gap) in enumerate(zip(lengths, gaps)):
        at += int(gap)
        out[f"ctg{i:05d}"] = chromosome[at : at + int(length)]
        at += int(length)
    return out


def _scan_child(run: Path, fasta: Path, out: Path) -> dict:
    """Run the ``scan`` verb in a child process; its summary, wall time and peak RSS."""
    code = (
        "import resource, subprocess, sys\n"
        "rc = subprocess.run(sys.argv[1:]).returncode\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
        "sys.exit(rc)\n"
    )
    cmd = [sys.executable, "-m", "sparling_genomics.cli", "scan", "--model", str(run),
           "--fasta", str(fasta), "--out", str(out)]  # fmt: skip
    began = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code, *cmd], capture_output=True, text=True)
    seconds = time.perf_counter() - began
    if done.returncode != 0:
        raise RuntimeError(f"scan of {fasta} failed: {done.stderr[-2000:]}")
    rss_kb = int(done.stdout.strip().splitlines()[-1])
    summary = json.loads((out / SCAN_SUMMARY).read_text())
    return {"seconds": round(seconds, 2), "peak_rss_gb": round(rss_kb / 1024**2, 3),
            "model_seconds": summary["scan_seconds"], "sites": summary["sites"],
            "bed_rows": summary["bed_rows"], "sequences": summary["sequences"],
            "bases": summary["bases"]}  # fmt: skip


def _concat(tables) -> tuple[np.ndarray, ...]:
    from sparling_genomics.export.scan import join_tables

    t = join_tables("", list(tables))
    return t.position, t.channel, t.strand, t.score


def _canonical(arrays) -> np.ndarray:
    """Sites as records (seq index, position, channel, strand, activation), sorted."""
    seq, pos, chan, strand, score = arrays
    rec = np.rec.fromarrays(
        [seq.astype(np.int64), pos.astype(np.int64), chan.astype(np.int64),
         strand.astype(np.int64), score.astype(np.float32)],
        names="seq,pos,chan,strand,score",
    )  # fmt: skip
    return np.sort(rec, order=["seq", "pos", "chan", "strand"])


def compare_sites(whole: np.ndarray, pieces: np.ndarray, rtol: float = 1e-5) -> dict:
    """Same sites (sequence, position, motif, strand), and activations equal to float32
    rounding (within ``rtol`` of the largest activation): convolutions over tensors of other
    lengths may sum in another order, so the last bits of an activation can differ (seen:
    5e-6); bit-equal ones are counted too."""
    keys = ("seq", "pos", "chan", "strand")
    whole_keys = np.rec.fromarrays([whole[k] for k in keys], names=",".join(keys))
    piece_keys = np.rec.fromarrays([pieces[k] for k in keys], names=",".join(keys))
    same_sites = len(whole) == len(pieces) and bool(np.array_equal(whole_keys, piece_keys))
    out = {"whole_sites": int(len(whole)), "piece_sites": int(len(pieces)),
           "same_sites": same_sites}  # fmt: skip
    if same_sites:
        a, b = whole["score"].astype(np.float64), pieces["score"].astype(np.float64)
        out["bit_equal_activations"] = int((whole["score"] == pieces["score"]).sum())
        out["max_abs_activation_difference"] = float(np.abs(a - b).max()) if len(a) else 0.0
        # An activation is relu(z - t): a last-bit difference of z is absolute, so the
        # tolerance is relative to the largest activation, not to each (often tiny) one.
        scale = float(np.abs(a).max()) if len(a) else 0.0
        out["activations_equal"] = bool(np.all(np.abs(a - b) <= rtol * scale))
    else:
        only_whole = len(np.setdiff1d(whole_keys, piece_keys))
        only_pieces = len(np.setdiff1d(piece_keys, whole_keys))
        out.update(only_in_whole=int(only_whole), only_in_pieces=int(only_pieces),
                   activations_equal=False)  # fmt: skip
    out["identical"] = bool(out["same_sites"] and out["activations_equal"])
    return out


def _whole_sites(model, genome, device) -> np.ndarray:
    from sparling_genomics.export.scan import scan_genome

    tables = scan_genome(model, genome, device=device)
    index = {name: i for i, name in enumerate(genome.lengths)}
    seq = np.concatenate([np.full(len(t), index[t.seqid]) for t in tables])
    return _canonical((seq, *_concat(tables)))


def _piece_sites_contigs(model, genome, device) -> np.ndarray:
    """Each contig scanned on its own, in one chunk of its own length."""
    from sparling_genomics.export.scan import scan_codes

    parts = []
    for i, name in enumerate(genome.lengths):
        codes = genome.sequence(name)
        tables = list(scan_codes(model, name, codes, chunk=len(codes), device=device))
        arrays = _concat(tables)
        parts.append((np.full(len(arrays[0]), i), *arrays))
    return _canonical(tuple(np.concatenate(col) for col in zip(*parts)))


def _piece_sites_long(model, genome, device, pieces: int, margin: int) -> np.ndarray:
    """One long sequence cut into ``pieces`` overlapping pieces, each scanned on its own;
    sites in each piece's core, shifted back to sequence coordinates."""
    from sparling_genomics.export.scan import scan_codes

    (name, length), = genome.lengths.items()  # fmt: skip
    codes = genome.sequence(name)
    bounds = np.linspace(0, length, pieces + 1).astype(int)
    parts = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        a, b = max(0, lo - margin), min(length, hi + margin)
        tables = list(scan_codes(model, f"{name}:{a}-{b}", codes[a:b].copy(), device=device))
        pos, chan, strand, score = _concat(tables)
        pos = pos + a
        keep = (pos >= lo) & (pos < hi)
        parts.append((np.zeros(int(keep.sum())), pos[keep], chan[keep], strand[keep],
                      score[keep]))  # fmt: skip
    return _canonical(tuple(np.concatenate(col) for col in zip(*parts)))


def run_scan_load_benchmark(
    run: Path,
    out: Path,
    *,
    reference: str = "tair10-chr1",
    benchmarks_md: Path = Path("BENCHMARKS.md"),
) -> Path:
    from sparling_genomics.genome.fasta import Genome
    from sparling_genomics.genome.references import load_reference
    from sparling_genomics.train.loading import load_run

    run, out = Path(run), Path(out)
    out.mkdir(parents=True, exist_ok=True)
    chr1_fasta = load_reference(reference).fasta
    chr1 = Genome(chr1_fasta)
    contigs_fasta = out / "contigs.fa"
    _write_fasta(contigs_fasta, make_contigs(chr1.sequence(next(iter(chr1.lengths))), N_CONTIGS))

    result: dict = {"benchmark": "scan-load", "run": str(run), "reference": reference,
                    "machine": machine_description(), "inputs": {}}  # fmt: skip
    loaded = load_run(run)
    model, device = loaded.model, loaded.device
    for label, fasta in (("contigs", contigs_fasta), ("chromosome", chr1_fasta)):
        scan = _scan_child(run, fasta, out / f"{label}_tracks")
        genome = Genome(fasta)
        began = time.perf_counter()
        whole = _whole_sites(model, genome, device)
        whole_seconds = time.perf_counter() - began
        began = time.perf_counter()
        if label == "contigs":
            pieces = _piece_sites_contigs(model, genome, device)
            how = f"each of the {len(genome.lengths):,} contigs alone"
        else:
            pieces = _piece_sites_long(model, genome, device, CHR1_PIECES, PIECE_MARGIN)
            how = f"{CHR1_PIECES} pieces overlapping by {PIECE_MARGIN:,} bases, cores kept"
        piece_seconds = time.perf_counter() - began
        check = compare_sites(whole, pieces)
        if check["whole_sites"] != scan["sites"]:
            check["identical"] = False
            check["note"] = "library scan and scan verb disagree on the site count"
        result["inputs"][label] = {
            "fasta": str(fasta),
            "scan": scan,
            "pieces": how,
            "model_seconds_whole": round(whole_seconds, 2),
            "model_seconds_pieces": round(piece_seconds, 2),
            **check,
        }
    return publish(result, out / "bench_scan_load.json", benchmarks_md, "scan-load",
                   _markdown(result, run, out))  # fmt: skip


def _markdown(r: dict, run: Path, out: Path) -> str:
    rows = []
    for label, i in r["inputs"].items():
        s = i["scan"]
        rows.append(
            f"| {label}: {s['sequences']:,} sequence(s), {s['bases']:,} bases | "
            f"{s['seconds']:.1f} | {s['model_seconds']:.1f} | **{s['peak_rss_gb']:.2f}** | "
            f"{s['sites']:,} | {i['pieces']}: {i['piece_sites']:,} sites in "
            f"{i['model_seconds_pieces']:.1f} s (whole: {i['model_seconds_whole']:.1f} s), "
            f"ratio {i['model_seconds_pieces'] / max(i['model_seconds_whole'], 1e-9):.2f}x | "
            f"{'**yes**' if i['identical'] else '**NO**'} |"
        )
    return "\n".join(
        [
            "## Scan under load: 10,000 small contigs and one 30 Mb sequence",
            "",
            f"Machine: {machine_line(r['machine'])}",
            "",
            f"Command: `python -m benchmarks scan-load --model {run} --out {out}`. "
            f"JSON: `{out}/bench_scan_load.json`. Each input is scanned by the `scan` verb "
            "(both strands, BED9 + bigBed + per-motif bigWig) in a child process whose peak RSS "
            "is measured; the same model then scans the pieces separately, in process.",
            "",
            "| input | `scan` s | model pass s | peak RSS GB | sites | pieces scanned "
            "separately | identical sites |",
            "|---|---|---|---|---|---|---|",
            *rows,
            "",
            "Identical = the same sites (sequence, position, motif, strand) and activations "
            "equal to float32 rounding (within 1e-5 of the largest activation; short contigs "
            "are packed into one model call, and convolutions over other tensor lengths may "
            "round the last bit differently): "
            + "; ".join(
                f"{label}: {i.get('bit_equal_activations', 0):,} of {i['whole_sites']:,} "
                f"bit-equal, largest difference {i.get('max_abs_activation_difference', 0):.2g}"
                for label, i in r["inputs"].items()
            )
            + ".",
        ]
    )
