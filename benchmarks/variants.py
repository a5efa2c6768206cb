"""Variant-effect benchmark: throughput and memory of the ``variants`` verb, and its in-silico
truth on a trained splicing run's held-out block.

Throughput: random variants (85% SNVs, 10% deletions and 5% insertions of 1-3 bases), one per
``spacing`` bases on average (30 by default: 1M variants over the 30 Mb chromosome), in the
dataset's test block, sorted, scored by ``sparling-genomics variants`` as a user runs it (a
subprocess; +-50 nt deltas, both strands where no gene), at two sizes: the rate is the larger
run's, and its marginal rate (extra alleles / extra seconds) leaves out the start-up; the peak
RSS of each run (``os.wait4``) shows whether memory grows with the VCF. Comparison, measured
in the same run: the same scorer without its two speed-ups (each allele's own reference
window, and the head computed over the whole padded window) on the first 1,000 alleles.
SpliceAI's ~1 variant/s on a CPU is the issue's figure, not measured here (no network, no
weights).

In-silico truth: every annotated donor's GT and acceptor's AG in the test block (canonical
sites of the selected transcripts) replaced by CA and TC respectively, in transcript
orientation: the matching loss delta (DS_DL, DS_AL) on the site's strand, and whether the
motif report names the family holding the core channel of that class as destroyed; then the
same number of SNVs at intron mid-points (the base changed to the next of ACGT): their largest
delta.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from sparling_genomics.export.motif_summary import read_motifs_summary
from sparling_genomics.rundir import VARIANTS_SUMMARY, config_path, motifs_dir

from .floors import (
    VARIANTS_ALLELES_PER_SECOND,
    VARIANTS_CORE_DESTROYED,
    VARIANTS_LOSS_SHARE,
    VARIANTS_MIDPOINT_DELTA,
)
from .report import machine_description, machine_line, publish

CLI = [sys.executable, "-m", "sparling_genomics.cli"]
HEADER = ["##fileformat=VCFv4.2", "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO"]


def test_block(run: Path):
    """(the dataset's sources: fasta, annotation; seqid -> (start of the test block, None))
    of a run's dataset."""
    from sparling_genomics.genome.dataset import SiteDataset
    from sparling_genomics.train.run_config import load_saved_config

    config = load_saved_config(config_path(run))
    data = SiteDataset(Path(config.data.dataset))
    blocks = {s: (int(b[1]), None) for s, b in data.boundaries.items()}
    source = data.source
    data.close()
    return source, blocks


def write_vcf(path: Path, rows: list[tuple[str, int, str, str, str]]) -> None:
    rows = sorted(rows, key=lambda r: (r[0], r[1]))
    lines = HEADER + [f"{c}\t{p + 1}\t{i}\t{r}\t{a}\t.\t.\t." for c, p, i, r, a in rows]
    path.write_text("\n".join(lines) + "\n")


def random_variants(genome, blocks: dict, n: int, spacing: int, seed: int = 0) -> list[tuple]:
    """``n`` random SNVs and 1-3 bp indels (0-based positions) at one per ``spacing`` bases
    on average, over a stretch that long from the start of the first test block (cut at the
    sequence's end, so denser when it is short; beyond the block it is still fine for
    throughput and memory, which is all random variants measure)."""
    from sparling_genomics.genome.sequence import decode

    rng = np.random.default_rng(seed)
    seqid = next(iter(blocks))
    lo = blocks[seqid][0]
    hi = min(genome.lengths[seqid] - 10, lo + n * spacing)
    rows = []
    while len(rows) < n:
        pos = int(rng.integers(lo, hi))
        kind = rng.random()
        size = int(rng.integers(1, 4))
        ref = decode(genome.fetch(seqid, pos, pos + 1 + (size if kind < 0.10 else 0)))
        if "N" in ref:
            continue
        if kind < 0.10:
            alt = ref[0]
        elif kind < 0.15:
            alt = ref + "".join(rng.choice(list("ACGT"), size))
        else:
            alt = "ACGT"[("ACGT".index(ref) + int(rng.integers(1, 4))) % 4]
        rows.append((seqid, pos, f"r{len(rows)}", ref, alt))
    return rows


def site_mutations(genome, annotation: Path, blocks: dict) -> tuple[list[tuple], list[tuple]]:
    """(donor GT -> CA and acceptor AG -> TC MNVs, intron mid-point SNVs) of the canonical
    sites of the selected transcripts inside the test blocks; ids say class and strand."""
    from sparling_genomics.genome.annotation import read_annotation
    from sparling_genomics.genome.labels import intron_dinucleotide, transcript_sites
    from sparling_genomics.genome.sequence import decode, encode, reverse_complement_codes

    def plus(text: str, strand: str) -> str:
        return text if strand == "+" else decode(reverse_complement_codes(encode(text)))

    sites, introns = [], []
    for t in read_annotation(annotation, dict(genome.lengths)).selected():
        if t.seqid not in blocks or t.start < blocks[t.seqid][0]:
            continue
        for s in transcript_sites(t, ["donor", "acceptor"]):
            want = "GT" if s.kind == "donor" else "AG"
            if intron_dinucleotide(s, genome) != want:
                continue
            p = s.position
            if s.kind == "donor":
                lo = p + 1 if s.strand == "+" else p - 2
            else:
                lo = p - 2 if s.strand == "+" else p + 1
            ref = decode(genome.fetch(s.seqid, lo, lo + 2))
            alt = plus("CA" if s.kind == "donor" else "TC", s.strand)
            sites.append((s.seqid, lo, f"{s.kind}{s.strand}{len(sites)}", ref, alt))
        for (_, e0), (s1, _) in zip(t.exons, t.exons[1:]):
            mid = (e0 + s1) // 2
            ref = decode(genome.fetch(t.seqid, mid, mid + 1))
            if ref in "ACGT":
                alt = "ACGT"[("ACGT".index(ref) + 1) % 4]
                introns.append((t.seqid, mid, f"intron{t.strand}{len(introns)}", ref, alt))
    return sites, introns


def run_variants_verb(run: Path, vcf: Path, out: Path, fasta: Path, gff: Path) -> dict:
    """The verb in a subprocess: its summary, wall seconds and peak RSS (GB)."""
    args = [*CLI, "variants", "--model", str(run), "--vcf", str(vcf), "--out", str(out),
            "--fasta", str(fasta), "--gff", str(gff)]  # fmt: skip
    began = time.perf_counter()
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    samples = []  # (seconds, RSS MB), once a second: does memory grow as the VCF streams?
    while True:
        done, status, usage = os.wait4(proc.pid, os.WNOHANG)  # reaped here: its own rusage
        if done:
            break
        try:
            status_text = Path(f"/proc/{proc.pid}/status").read_text()
            rss = int(status_text.split("VmRSS:")[1].split()[0]) / 1024
            samples.append((time.perf_counter() - began, rss))
        except (OSError, IndexError, ValueError):
            pass
        time.sleep(1.0)
    seconds = time.perf_counter() - began
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"variants failed: {proc.stderr.read().decode()[-500:]}")
    summary = json.loads((out / VARIANTS_SUMMARY).read_text())
    quarters = {}
    for q in (0.25, 0.5, 0.75, 1.0):
        before = [rss for t, rss in samples if t <= q * seconds]
        quarters[str(q)] = round(before[-1]) if before else None
    return {"seconds": round(seconds, 2), "peak_rss_gb": round(usage.ru_maxrss / 1024**2, 3),
            "rss_mb_at_quarters": quarters, "summary": summary}  # fmt: skip


def _naive_rate(run: Path, genome, gff: Path, rows: list[tuple]) -> float:
    """Alleles per second of the scorer with each allele's own reference window and the
    head over the whole padded window (both speed-ups off), in this process."""
    from sparling_genomics.evaluate import variant_effects as ve
    from sparling_genomics.genome.annotation import read_annotation
    from sparling_genomics.genome.gene_strands import GeneStrands
    from sparling_genomics.models.splice import SpliceAIHead
    from sparling_genomics.train.loading import load_run

    loaded = load_run(run)
    task, model, device = loaded.task, loaded.model, loaded.device
    genes = GeneStrands.from_annotation(read_annotation(gff, dict(genome.lengths)))
    alleles = []
    for seqid, pos, _, ref, alt in rows:
        for strand in genes.strands(seqid, pos, pos + len(ref)) or {1: [], -1: []}:
            alleles.append(ve.Allele(seqid, pos, ref, alt, strand))
    span, valid = ve.CLUSTER_SPAN, SpliceAIHead.forward_valid
    ve.CLUSTER_SPAN = -1  # no shared reference windows
    SpliceAIHead.forward_valid = SpliceAIHead.forward_padded
    try:
        began = time.perf_counter()
        for lo in range(0, len(alleles), 64):
            ve.score_alleles(model, genome.fetch, alleles[lo : lo + 64], task.classes,
                             context=task.data.context, distance=50, device=device)  # fmt: skip
        seconds = time.perf_counter() - began
    finally:
        ve.CLUSTER_SPAN, SpliceAIHead.forward_valid = span, valid
    return len(rows) / seconds


def _truth(scores: Path, changes: Path, motifs: Path) -> dict:
    """Per site class: share of site mutations with loss >= 0.5 and with the core family
    named destroyed (the core families from folder ``motifs``' export, none where it has
    none); intron mid-points: the median and 95th percentile of the largest delta."""
    summary = read_motifs_summary(motifs, missing_ok=True) or {"motifs": []}
    core_family = {m["core"]: m.get("family") for m in summary["motifs"] if m.get("core")}
    destroyed = set()
    with open(changes) as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            if row["effect"] == "destroyed":
                destroyed.add((row["id"], row["strand"], row["family"].split(":")[0]))
    out: dict = {}
    mids = []
    with open(scores) as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            vid = row["id"]
            if vid.startswith("intron"):
                if row["strand"] == vid[6]:
                    mids.append(float(row["max_delta"]))
                continue
            kind, strand = ("donor", vid[5]) if vid.startswith("donor") else ("acceptor", vid[8])
            if row["strand"] != strand:
                continue
            loss = float(row["DS_DL" if kind == "donor" else "DS_AL"])
            entry = out.setdefault(kind, {"sites": 0, "loss_at_least_0.5": 0, "core_destroyed": 0})
            entry["sites"] += 1
            entry["loss_at_least_0.5"] += loss >= 0.5
            entry["core_destroyed"] += (vid, strand, core_family.get(kind)) in destroyed
    for entry in out.values():
        entry["fraction_loss_at_least_0.5"] = round(entry["loss_at_least_0.5"] / entry["sites"], 4)
        entry["fraction_core_destroyed"] = round(entry["core_destroyed"] / entry["sites"], 4)
    mids_arr = np.array(mids)
    out["intron_midpoints"] = {
        "snvs": len(mids),
        "median_max_delta": round(float(np.median(mids_arr)), 5) if len(mids) else None,
        "p95_max_delta": round(float(np.percentile(mids_arr, 95)), 5) if len(mids) else None,
    }
    out["core_families"] = core_family
    return out


def _truth_runs(run: Path, out: Path, genome, gff: Path, blocks: dict, fasta: Path,
                compare: Path | None) -> tuple[dict, dict | None]:  # fmt: skip
    """Every test-block site's GT/AG mutated, and as many intron mid-point SNVs, through the
    run (and through ``compare``): the in-silico truth figures of each."""
    sites, introns = site_mutations(genome, gff, blocks)
    rng = np.random.default_rng(1)
    keep = rng.choice(len(introns), min(len(sites), len(introns)), replace=False)
    introns = [introns[i] for i in sorted(keep)]
    write_vcf(out / "truth.vcf", sites + introns)
    truth_run = run_variants_verb(run, out / "truth.vcf", out / "truth", fasta, gff)
    truth = _truth(out / "truth" / "variant_scores.tsv", out / "truth" / "motif_changes.tsv",
                   motifs_dir(run))  # fmt: skip
    compared = None
    if compare is not None:  # the same mutations through another model (e.g. the baseline)
        compare = Path(compare)
        other = run_variants_verb(compare, out / "truth.vcf", out / "truth_compare", fasta, gff)
        compared = _truth(out / "truth_compare" / "variant_scores.tsv",
                          out / "truth_compare" / "motif_changes.tsv",
                          motifs_dir(compare)) | {
            "run": str(compare), "seconds": other["seconds"]}  # fmt: skip
    return truth | {"seconds": truth_run["seconds"]}, compared


def run_variants_benchmark(run: Path, out: Path, *, variants: int = 20_000, spacing: int = 30,
                           reference: str | None = None, compare: Path | None = None,
                           section: str = "variants", truth: bool = True,
                           benchmarks_md: Path = Path("BENCHMARKS.md")) -> Path:  # fmt: skip
    from sparling_genomics.genome.fasta import Genome
    from sparling_genomics.genome.references import load_reference

    run, out = Path(run), Path(out)
    out.mkdir(parents=True, exist_ok=True)
    source, blocks = test_block(run)
    fasta, gff = Path(source["fasta"]), Path(source["annotation"])
    if reference:  # the run's dataset's files, from the named reference
        fasta, gff = load_reference(reference).fasta, load_reference(reference).annotation
    genome = Genome(fasta)
    rows = random_variants(genome, blocks, variants, spacing)
    small = rows[: max(1, variants // 10)]
    write_vcf(out / "random_small.vcf", small)
    write_vcf(out / "random.vcf", rows)
    first = run_variants_verb(run, out / "random_small.vcf", out / "random_small", fasta, gff)
    whole = run_variants_verb(run, out / "random.vcf", out / "random", fasta, gff)
    naive = _naive_rate(run, genome, gff, sorted(rows, key=lambda r: (r[0], r[1]))[:1000])
    # The same verb on variants 100x sparser (no two share a reference window).
    sparse_rows = random_variants(genome, blocks, max(10, min(variants // 10, 2000)), spacing * 100,
                                  seed=1)  # fmt: skip
    write_vcf(out / "random_sparse.vcf", sparse_rows)
    sparse = run_variants_verb(run, out / "random_sparse.vcf", out / "random_sparse", fasta, gff)
    scored = whole["summary"]["counts"]["scored"]
    extra = scored - first["summary"]["counts"]["scored"]
    marginal = extra / max(1e-9, whole["seconds"] - first["seconds"])
    truth_result, compared = None, None
    if truth:  # off for a run measuring throughput and memory only (e.g. a briefly trained model)
        truth_result, compared = _truth_runs(run, out, genome, gff, blocks, fasta, compare)
    result = {
        "benchmark": "variants", "section": section, "run": str(run),
        "machine": machine_description(),
        "reference": reference, "fasta": str(fasta), "annotation": str(gff),
        "throughput": {
            "variants": variants, "spacing": spacing, "alleles_scored": scored,
            "mean_spacing": _mean_spacing(rows),
            "allele_strands": whole["summary"]["counts"]["scored_strands"],
            "seconds": whole["seconds"], "alleles_per_second": round(scored / whole["seconds"], 1),
            "marginal_alleles_per_second": round(marginal, 1),
            "peak_rss_gb": whole["peak_rss_gb"],
            "rss_mb_at_quarters": whole["rss_mb_at_quarters"],
            "small": {"alleles": first["summary"]["counts"]["scored"],
                      "seconds": first["seconds"], "peak_rss_gb": first["peak_rss_gb"]},
            "naive_alleles_per_second": round(naive, 1),
            "sparse": {"alleles": sparse["summary"]["counts"]["scored"],
                       "spacing": spacing * 100, "seconds": sparse["seconds"],
                       "alleles_per_second": round(sparse["summary"]["counts"]["scored"]
                                                   / sparse["seconds"], 1),
                       "peak_rss_gb": sparse["peak_rss_gb"]},
            "ratio_over_naive": round(marginal / naive, 2),
        },
        "truth": truth_result,
        "truth_compare": compared,
    }  # fmt: skip
    return publish(result, out / "bench_variants.json", benchmarks_md, section,
                   _markdown(result, run, out, variants))  # fmt: skip


def _mean_spacing(rows: list[tuple]) -> float | None:
    """Bases per variant over the stretch the variants span (what ``--spacing`` asked for,
    unless the sequence ended first)."""
    if len(rows) < 2:
        return None
    positions = [r[1] for r in rows]
    return round((max(positions) - min(positions)) / (len(rows) - 1), 1)


def _growth(quarters: dict) -> str:
    half, end = quarters.get("0.5"), quarters.get("1.0")
    if not half or not end:
        return "too short to tell"
    return f"{(end - half) / half:+.0%}"


def _markdown(r: dict, run: Path, out: Path, variants: int) -> str:
    t, v = r["throughput"], r["truth"]
    named = r.get("section", "variants") != "variants"  # published beside the default section
    lines = [
        "## Variant effects: throughput, memory"
        + (" and in-silico truth" if v else "") + " (TAIR10 chr1 test block)"
        + (f", {variants:,} random variants" if named else ""),
        "",
        f"Machine: {machine_line(r['machine'])}",
        "",
        f"Command: `python -m benchmarks variants --model {run} --out {out} --variants "
        f"{variants} --spacing {r['throughput']['spacing']} --reference {r['reference']}"
        + (f" --compare {r['truth_compare']['run']}" if r.get("truth_compare") else "")
        + (f" --section '{r['section']}'" if named else "")
        + ("" if v else " --no-truth")
        + "`. "
        f"JSON: `{out}/bench_variants.json`. "
        "Deltas within +-50 nt; the strand of the overlapping gene, both strands where none.",
        "",
        "| | alleles | seconds | alleles/s | peak RSS |",
        "|---|---|---|---|---|",
        f"| `variants`, {t['small']['alleles']:,} random alleles | {t['small']['alleles']:,} | "
        f"{t['small']['seconds']:.1f} | | {t['small']['peak_rss_gb']:.2f} GB |",
        f"| `variants`, {t['alleles_scored']:,} random alleles, one per "
        f"{t.get('mean_spacing') or t['spacing']:g} bp "
        f"({t['allele_strands']:,} "
        f"allele-strands) | {t['alleles_scored']:,} | {t['seconds']:.1f} | "
        f"{t['alleles_per_second']:.0f} (marginal **{t['marginal_alleles_per_second']:.0f}**) "
        f"| {t['peak_rss_gb']:.2f} GB |",
        f"| same scorer, speed-ups off (1,000 alleles) | 1,000 | | "
        f"{t['naive_alleles_per_second']:.0f} | |",
        f"| `variants`, {t['sparse']['alleles']:,} random alleles, one per "
        f"{t['sparse']['spacing']:,} bp (no shared reference windows) | "
        f"{t['sparse']['alleles']:,} | {t['sparse']['seconds']:.1f} | "
        f"{t['sparse']['alleles_per_second']:.0f} (start-up included) | "
        f"{t['sparse']['peak_rss_gb']:.2f} GB |",
        "",
        "Memory of the larger run at a quarter, half, three quarters and the end of its time: "
        + ", ".join(f"{v} MB" for v in t["rss_mb_at_quarters"].values())
        + f" ({_growth(t['rss_mb_at_quarters'])} from half to end).",
        "",
        f"Marginal rate / speed-ups off: **{t['ratio_over_naive']:.2f}x**. Floor: >= "
        f"{VARIANTS_ALLELES_PER_SECOND} "
        "alleles/s on 2 cores (SpliceAI on a CPU: ~1/s, the issue's figure, not measured here).",
    ]
    if not v:
        return "\n".join([*lines, "", "In-silico truth: not run here (`--no-truth`); this "
                           "section measures throughput and memory only."])  # fmt: skip
    lines += [
        "",
        f"In-silico truth (floors: loss >= 0.5 for >= {VARIANTS_LOSS_SHARE:.0%} of site mutations; "
        f"core family destroyed for >= {VARIANTS_CORE_DESTROYED:.0%}; intron mid-point median "
        f"|delta| <= {VARIANTS_MIDPOINT_DELTA:g}):",
        "",
        "| model | mutation | sites | loss >= 0.5 | core family named destroyed | intron "
        "mid-point SNVs: median / 95th percentile of the largest delta |",
        "|---|---|---|---|---|---|",
    ]
    models = [(f"`{run}`", v)] + ([(f"`{c['run']}`", c)] if (c := r.get("truth_compare")) else [])
    for label, truth in models:
        m = truth["intron_midpoints"]
        for kind, change in (("donor", "GT -> CA"), ("acceptor", "AG -> TC")):
            e = truth.get(kind)
            if e:
                destroyed = (f"{e['fraction_core_destroyed']:.1%}" if truth["core_families"]
                             else "- (no motif layer)")  # fmt: skip
                mids = f"{m['median_max_delta']} / {m['p95_max_delta']} ({m['snvs']:,} SNVs)"
                lines.append(f"| {label} | {kind} {change} | {e['sites']:,} | "
                             f"{e['fraction_loss_at_least_0.5']:.1%} | {destroyed} | {mids} |")
    return "\n".join(lines)
