"""Splicing benchmark: dataset build, non-sparse baseline and Sparling, in one run.

1. ``sparling-genomics dataset`` on the reference (default TAIR10 chr1), in a child process
   so its wall time and peak memory (``ru_maxrss`` of the child) are its own.
2. The non-sparse baseline and the Sparling model, each a normal ``train`` run directory
   under ``OUT`` with the same CPU budget; a finished run is reused, a killed one resumed.
3. Every Sparling motif channel: its sites on the test block, their PWM (g's receptive field,
   transcript orientation), consensus, information of its best GT / AG, and the fraction of its
   sites within +-5 nt of an annotated donor / acceptor (a GT channel's activation sits a
   few bases from the labelled exon base, at the centre of its receptive field).

Writes ``OUT/bench_splicing.json`` and updates the ``splicing`` section of BENCHMARKS.md.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import torch

from sparling_genomics.export.motifs import collect_sites, merge_sites, site_windows
from sparling_genomics.genome.pwm import consensus, dinucleotide_bits, probability_matrix
from sparling_genomics.io import write_json_atomic
from sparling_genomics.train.loading import load_run
from sparling_genomics.train.run_config import resolve_config

from .report import machine_description, machine_line, run_or_resume, update_section

NEAR = 5  # a site "at" an annotated site: within this many nt of it


def build_dataset_measured(out: Path, reference: str, *, extra: list[str] | None = None) -> dict:
    """Run the ``dataset`` verb in a child process; its wall seconds and peak RSS (MB)."""
    cmd = [
        sys.executable,
        "-m",
        "sparling_genomics.cli",
        "dataset",
        "--reference",
        reference,
        "--out",
        str(out),
        *(extra or []),
    ]
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    began = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.perf_counter() - began
    if done.returncode != 0:
        raise RuntimeError(f"dataset build failed: {done.stderr.strip()[-500:]}")
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    text = done.stdout
    summary = json.loads(text[: text.rindex("}") + 1])
    return {
        "seconds": round(seconds, 2),
        "peak_rss_mb": round(peak_kb / 1024, 1),
        "peak_rss_exact": peak_kb > before,  # else an earlier child was bigger
        "summary": summary,
    }


@torch.no_grad()
def channel_report(run: Path, *, max_windows: int = 0, top: int = 5) -> list[dict]:
    """Per motif channel of a Sparling splicing run: sites, PWM consensus, GT/AG bits."""
    config, task, model, device = load_run(run)
    data = task.data
    index = task._eval_index["test"]
    if max_windows:
        index = index[:max_windows]
    half = data.context // 2
    width = model.g.receptive_field
    parts, xs, ys = [], [], []
    for lo in range(0, len(index), 64):
        x, y = data.read(index[lo : lo + 64])
        parts.append(
            collect_sites(
                model, torch.from_numpy(x).to(device), offset=half, valid=y >= 0, first_window=lo
            )
        )
        xs.append(x.astype(np.uint8))
        ys.append(y)
    sites = merge_sites(parts)
    x_all, y_all = np.concatenate(xs), np.concatenate(ys)
    coords = data.windows(index)
    classes = data.classes
    report = []
    for s in sites:
        entry: dict = {"channel": s.channel, "sites": len(s)}
        if len(s) == 0:
            entry["consensus"] = None
            report.append(entry)
            continue
        w, p, score = np.array(s.window), np.array(s.position), np.array(s.score)
        windows = np.concatenate(
            [site_windows(x_all[i][None], p[w == i], width) for i in np.unique(w)]
        )
        probs = probability_matrix(windows)
        entry["consensus"] = consensus(probs)
        entry["gt_bits"] = round(dinucleotide_bits(probs, "GT"), 3)
        entry["ag_bits"] = round(dinucleotide_bits(probs, "AG"), 3)
        out_pos = p - half
        for c, name in enumerate(classes):
            if c == 0:
                continue
            near = np.zeros(len(p), dtype=bool)
            for d in range(-NEAR, NEAR + 1):
                q = np.clip(out_pos + d, 0, y_all.shape[1] - 1)
                near |= y_all[w, q] == c
            entry[f"near_{name}"] = round(float(near.mean()), 4)
        best = np.argsort(-score)[:top]
        tops = []
        for j in best:
            seqid = data.seqids[int(coords["seqid"][w[j]])]
            strand = int(coords["strand"][w[j]])
            start = int(coords["start"][w[j]])
            genome_pos = start + out_pos[j] if strand == 1 else start + data.window - 1 - out_pos[j]
            tops.append(f"{seqid}:{int(genome_pos) + 1}{'+' if strand == 1 else '-'}")
        entry["top_sites"] = tops
        report.append(entry)
    return report


def run_splicing_benchmark(
    out: Path,
    *,
    reference: str = "tair10-chr1",
    preset: str = "cpu",
    seed: int = 0,
    benchmarks_md: Path = Path("BENCHMARKS.md"),
    overrides: list[dict] | None = None,
) -> Path:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    dataset = out / "dataset.h5"
    build = None
    if not dataset.exists():
        build = build_dataset_measured(dataset, reference)
        write_json_atomic(out / "dataset_build.json", build)
    elif (out / "dataset_build.json").exists():
        build = json.loads((out / "dataset_build.json").read_text())
    runs = {}
    for name, sparse in (("baseline", False), ("sparling", True)):
        config = resolve_config(
            "splicing",
            preset,
            overrides=[
                {
                    "seed": seed,
                    "data": {"dataset": str(dataset)},
                    "model": {"sparse_layer": sparse},
                },
                *(overrides or []),
            ],
        )
        runs[name] = run_or_resume(out / name, config)
    channels = channel_report(out / "sparling")
    base, sp = runs["baseline"]["e2e"], runs["sparling"]["e2e"]
    result = {
        "benchmark": "splicing",
        "reference": reference,
        "preset": preset,
        "seed": seed,
        "machine": machine_description(),
        "command": f"python -m benchmarks splicing --out {out} --reference {reference}",
        "dataset_build": build,
        "baseline": runs["baseline"],
        "sparling": runs["sparling"],
        "topk_ratio": (sp["mean_topk"] / base["mean_topk"]) if base["mean_topk"] else None,
        "channels": channels,
        "gt_channels": [c["channel"] for c in channels if c.get("gt_bits", 0) >= 1.5],
        "ag_channels": [c["channel"] for c in channels if c.get("ag_bits", 0) >= 1.5],
    }
    path = out / "bench_splicing.json"
    write_json_atomic(path, result)
    update_section(Path(benchmarks_md), "splicing", _markdown(result))
    return path


def _fmt(v, spec=".3f") -> str:
    return "-" if v is None else format(v, spec)


def _markdown(r: dict) -> str:
    b, s = r["baseline"], r["sparling"]
    lines = [
        "## Splicing on a real genome (TAIR10 chr1): baseline vs Sparling",
        "",
        f"Machine: {machine_line(r['machine'])}. Command: `{r['command']}` "
        f"(preset `{r['preset']}`, seed {r['seed']}). Test block: last 20% of the chromosome.",
        "",
    ]
    build = r.get("dataset_build")
    if build:
        w = build["summary"]["windows"]
        lines += [
            f"Dataset build: **{build['seconds']:.1f} s**, peak memory "
            f"**{build['peak_rss_mb']:.0f} MB** ({build['summary']['genes']} genes, "
            f"{sum(build['summary']['sites'].values())} sites, windows train/val/test "
            f"{w['train']}/{w['val']}/{w['test']}).",
            "",
        ]
    lines += [
        "| model | donor top-k | acceptor top-k | mean top-k | donor PR-AUC | acceptor PR-AUC "
        "| density | minutes |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, m in (("non-sparse baseline", b), ("Sparling", s)):
        e = m["e2e"]
        lines.append(
            f"| {name} | {_fmt(e.get('donor_topk'))} | {_fmt(e.get('acceptor_topk'))} | "
            f"{_fmt(e['mean_topk'])} | {_fmt(e.get('donor_pr_auc'))} | "
            f"{_fmt(e.get('acceptor_pr_auc'))} | "
            f"{'-' if m['density'] is None else format(m['density'], '.3%')} | "
            f"{m['wall_seconds'] / 60:.1f} |"
        )
    lines += [
        "",
        f"Sparling / baseline mean top-k: **{_fmt(r['topk_ratio'])}** (the Sparling paper's "
        "sparse splicing model reached 0.85 of SpliceAI). Channels with a GT at >= 1.5 bits: "
        f"{r['gt_channels'] or 'none'}; with an AG: {r['ag_channels'] or 'none'}.",
        "",
        "| channel | test sites | consensus (transcript strand, 31 nt) | GT bits | AG bits "
        f"| donor within {NEAR} nt | acceptor within {NEAR} nt | top sites |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for c in r["channels"]:
        if not c["sites"]:
            lines.append(f"| {c['channel']} | 0 | (never fires) | | | | | |")
            continue
        lines.append(
            f"| {c['channel']} | {c['sites']} | `{c['consensus']}` | {c['gt_bits']:.2f} | "
            f"{c['ag_bits']:.2f} | {c.get('near_donor', 0):.2f} | "
            f"{c.get('near_acceptor', 0):.2f} | {', '.join(c['top_sites'][:3])} |"
        )
    return "\n".join(lines)
