"""Splicing benchmark: dataset build, non-sparse baseline, Sparling and its ablations, in one run.

1. ``sparling-genomics dataset`` on the reference (default TAIR10 chr1), in a child process
   so its wall time and peak memory (``ru_maxrss`` of the child) are its own.
2. The non-sparse baseline, the Sparling model (with the supplied site core and the channel
   competition, each channel at the annealed density) and its two ablations -- no core
   (``model.core_sites: false``) and no anti-copy rule (``model.sparse.compete_window: 0``)
   -- and a variant with a second anti-copy rule, a shared firing budget
   (``model.sparse.share_range: [0.25, 8]``, ``sparsity/budget.py``; the splicing default
   since it measured better over 3 seeds, ``benchmarks/seeds.py``); each a normal
   ``train`` run directory under ``OUT`` with the same CPU budget (a Sparling model stops
   when its schedule ends, by samples, or at the budget); a finished run is reused, a
   killed one resumed.
3. Every motif channel of each Sparling model: its sites on the test block, their PWM (g's
   receptive field, transcript orientation), consensus, information of its best GT / AG, and
   the fraction of its sites within +-5 nt of an annotated donor / acceptor (a GT channel's
   activation sits a few bases from the labelled exon base, at the centre of its receptive
   field); the near-copies among the learned channels (``evaluate/copies.py``) and the learned
   channels that copy a core channel.
4. The core channels' PWMs against the annotated sites' PWMs (windows centred on the
   labelled sites of the same test windows): KL divergence in bits per column, over the
   core's own window and over the whole receptive field.

Writes ``OUT/bench_splicing.json`` and updates the ``splicing`` section of BENCHMARKS.md.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import click
import numpy as np
import torch

from sparling_genomics.evaluate.copies import near_copies, pwm_similarity
from sparling_genomics.export.motifs import collect_sites, merge_sites, site_windows
from sparling_genomics.genome.pwm import consensus, dinucleotide_bits, probability_matrix, trim
from sparling_genomics.io import write_json_atomic
from sparling_genomics.rundir import read_log
from sparling_genomics.train.loading import load_run
from sparling_genomics.train.run_config import resolve_config

from .report import machine_description, machine_line, run_or_resume, update_section
from .splicing_families import export_or_read, families_markdown, family_figures

NEAR = 5  # a site "at" an annotated site: within this many nt of it
MIN_SITES = 10  # a channel with fewer test sites is silent (export's default)

#: The models of one benchmark run: name -> what it sets over the splicing defaults (the
#: same wall-clock budget, ``train.max_seconds``, for every model).
MODELS = {
    "baseline": {"model": {"sparse_layer": False}},
    # Supplied core + channel competition, each channel at the annealed density (the splicing
    # default until the shared budget below became it, after 3 seeds: `benchmarks seeds`).
    "sparling": {"model": {"sparse": {"share_range": [1.0, 1.0]}}},
    "sparling_no_core": {"model": {"core_sites": False, "sparse": {"share_range": [1.0, 1.0]}}},
    "sparling_no_anticopy": {"model": {"sparse": {"compete_window": 0, "share_range": [1.0, 1.0]}}},
    # The second anti-copy rule (sparsity/budget.py): the competition plus a shared budget --
    # today's splicing defaults.
    "sparling_shared_budget": {"model": {"sparse": {"share_range": [0.25, 8.0]}}},
}
SPARLING_MODELS = [name for name in MODELS if name != "baseline"]


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
def channel_report(run: Path, *, max_windows: int = 0, top: int = 5) -> tuple[list[dict], dict]:
    """Per motif channel of a Sparling splicing run (learned channels, then any core's):
    sites, PWM consensus, GT/AG bits; and the measurements across channels (near-copies,
    core PWMs against the annotated sites')."""
    loaded = load_run(run)
    model, data, device = loaded.model, loaded.task.data, loaded.device
    index = loaded.task.eval_indices("test")
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
    learned = model.learned
    core = {} if model.core is None else {learned + i: c for i, c in enumerate(model.core.classes)}
    valid = y_all >= 0
    counts = (x_all[:, :, half : half + y_all.shape[1]] * valid[:, None, :]).sum(axis=(0, 2))
    background = counts / counts.sum()
    pwms: dict[int, np.ndarray] = {}
    report = []
    for s in sites:
        entry: dict = {"channel": s.channel, "sites": len(s), "core": core.get(s.channel)}
        if len(s) == 0:
            entry["consensus"] = None
            report.append(entry)
            continue
        w, p, score = np.array(s.window), np.array(s.position), np.array(s.score)
        windows = np.concatenate(
            [site_windows(x_all[i][None], p[w == i], width) for i in np.unique(w)]
        )
        probs = probability_matrix(windows)
        pwms[s.channel] = probs
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
    measures = {
        "near_copies": _learned_copies(sites, pwms, learned, background),
        "core": _core_against_annotation(model, pwms, x_all, y_all, half, width),
    }
    return report, measures


def _learned_copies(sites, pwms: dict, learned: int, background: np.ndarray) -> dict:
    """Near-copies among the learned channels with >= MIN_SITES sites (trimmed PWMs; sites
    within +-2 nt), and the learned channels whose PWM copies a core channel's."""
    trimmed = {}
    for c, probs in pwms.items():
        if len(sites[c]) >= MIN_SITES:
            lo, hi = trim(probs, 0.25, background)
            trimmed[c] = probs[lo:hi] if hi > lo else probs
    mine = {c: p for c, p in trimmed.items() if c < learned}
    where = {c: (np.array(sites[c].window), np.array(sites[c].position)) for c in mine}
    result = near_copies(mine, where)
    result["copies_of_core"] = sorted(
        c for c in mine
        if any(pwm_similarity(mine[c], trimmed[k]) >= 0.9 for k in trimmed if k >= learned)
    )
    return result


def _core_against_annotation(model, pwms, x_all, y_all, half: int, width: int) -> dict:
    """Per core class: KL(core PWM || annotated PWM) in bits per column, the annotated PWM
    counted from windows centred on the labelled sites of that class in the same windows."""
    if model.core is None:
        return {}
    out = {}
    centre = width // 2
    for i, name in enumerate(model.core.classes):
        channel = model.learned + i
        w, p = np.nonzero(y_all == i + 1)
        if channel not in pwms or len(w) == 0:
            out[name] = None
            continue
        annotated = probability_matrix(
            np.concatenate([site_windows(x_all[k][None], p[w == k] + half, width)
                            for k in np.unique(w)])
        )  # fmt: skip
        kl = (pwms[channel] * np.log2(pwms[channel] / annotated)).sum(axis=1)
        up, down = model.core.windows[i]
        span = slice(max(0, centre - up), min(width, centre + down + 1))
        out[name] = {
            "annotated_sites": int(len(w)),
            "kl_bits_per_column_core_window": round(float(kl[span].mean()), 4),
            "kl_bits_per_column_receptive_field": round(float(kl.mean()), 4),
            "core_window": [-up, down],
            "consensus_core": consensus(pwms[channel]),
            "consensus_annotated": consensus(annotated),
        }
    return out


def _core_phase(run: Path) -> dict | None:
    """The core phase's closing log record: its samples, seconds and validation top-k."""
    records = [r for r in read_log(run) if r.get("phase") == "core"]
    if not records:
        return None
    last = records[-1]
    keep = ("core_samples", "elapsed", "core_val_mean_topk", "core_densities")
    return {k: last.get(k) for k in keep} | {
        k: v for k, v in last.items() if k.startswith("core_val_") and k.endswith("_topk")
    }


def run_splicing_benchmark(
    out: Path,
    *,
    reference: str = "tair10-chr1",
    preset: str = "cpu",
    seed: int = 0,
    benchmarks_md: Path = Path("BENCHMARKS.md"),
    overrides: list[dict] | None = None,
    skip: tuple[str, ...] = (),
) -> Path:
    unknown = [m for m in skip if m not in SPARLING_MODELS or m == "sparling"]
    if unknown:
        raise click.BadParameter(f"--skip {unknown[0]}: not one of the Sparling variants")
    models = {name: sets for name, sets in MODELS.items() if name not in skip}
    sparling_models = [name for name in SPARLING_MODELS if name not in skip]
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
    for name, sets in models.items():
        config = resolve_config(
            "splicing",
            preset,
            overrides=[
                {"seed": seed, "data": {"dataset": str(dataset)}},
                sets,
                *(overrides or []),
            ],
        )
        runs[name] = run_or_resume(out / name, config)
    reports = {name: channel_report(out / name) for name in sparling_models}
    families = {name: family_figures(export_or_read(out / name)) for name in sparling_models}
    channels = reports["sparling"][0]
    base, sp = runs["baseline"]["e2e"], runs["sparling"]["e2e"]
    models = {}
    for name, metrics in runs.items():
        e2e = metrics["e2e"]
        entry = {
            "mean_topk": e2e["mean_topk"],
            "topk_ratio": e2e["mean_topk"] / base["mean_topk"] if base["mean_topk"] else None,
            "learned_density": metrics["density"],
            "measured_density": metrics["measured_density"],
            "train_minutes": round(metrics["wall_seconds"] / 60, 2),
            "core_phase": _core_phase(out / name),
        }
        if name in reports:
            entry.update(reports[name][1])
        models[name] = entry
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
        "ablations": {name: runs[name] for name in sparling_models if name != "sparling"},
        "models": models,
        "ablation_channels": {n: reports[n][0] for n in sparling_models if n != "sparling"},
        "topk_ratio": (sp["mean_topk"] / base["mean_topk"]) if base["mean_topk"] else None,
        "channels": channels,
        "families": families,
        "gt_channels": [c["channel"] for c in channels if c.get("gt_bits", 0) >= 1.5],
        "ag_channels": [c["channel"] for c in channels if c.get("ag_bits", 0) >= 1.5],
    }
    path = out / "bench_splicing.json"
    write_json_atomic(path, result)
    update_section(Path(benchmarks_md), "splicing", _markdown(result, path))
    return path


def _fmt(v, spec=".3f") -> str:
    return "-" if v is None else format(v, spec)


def _markdown(r: dict, path: Path | None = None) -> str:
    b, s = r["baseline"], r["sparling"]
    cited = f" JSON: `{path}`." if path else ""
    lines = [
        "## Splicing on a real genome (TAIR10 chr1): baseline vs Sparling",
        "",
        f"Machine: {machine_line(r['machine'])}. Command: `{r['command']}` "
        f"(preset `{r['preset']}`, seed {r['seed']}).{cited} Test block: last 20% of the "
        "chromosome.",
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
        "| model | donor top-k | acceptor top-k | mean top-k | / baseline | donor PR-AUC "
        "| acceptor PR-AUC | learned density | near-copies | core + main minutes |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    labels = {"baseline": "non-sparse baseline", "sparling": "Sparling (core + anti-copy)",
              "sparling_no_core": "Sparling, no core",
              "sparling_no_anticopy": "Sparling, no anti-copy",
              "sparling_shared_budget": "Sparling, + shared budget",
              }  # fmt: skip
    runs = {"baseline": b, "sparling": s, **r.get("ablations", {})}
    for name, m in runs.items():
        e = m["e2e"]
        extra = r.get("models", {}).get(name, {})
        copies = extra.get("near_copies")
        core = (extra.get("core_phase") or {}).get("elapsed")
        copied = "-" if not copies else f"{copies['copies']} of {copies['channels']}"
        core_minutes = "" if core is None else f"{core / 60:.1f} + "
        lines.append(
            f"| {labels.get(name, name)} | {_fmt(e.get('donor_topk'))} | "
            f"{_fmt(e.get('acceptor_topk'))} | {_fmt(e['mean_topk'])} | "
            f"{_fmt(extra.get('topk_ratio'))} | {_fmt(e.get('donor_pr_auc'))} | "
            f"{_fmt(e.get('acceptor_pr_auc'))} | "
            f"{'-' if m['density'] is None else format(m['density'], '.3%')} | "
            f"{copied} | {core_minutes}{m['wall_seconds'] / 60:.1f} |"
        )
    core = (r.get("models", {}).get("sparling") or {}).get("core") or {}
    if core:
        phase = r["models"]["sparling"].get("core_phase") or {}
        lines += [
            "",
            "Core channels against the annotated sites (test block; KL of the core channel's "
            "PWM from the annotated PWM, bits per column):",
            "",
            "| class | window | core alone, validation top-k | annotated sites | KL (core window) "
            "| KL (31 nt) | core consensus | annotated consensus |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for name, c in core.items():
            if c is None:
                lines.append(f"| {name} | | | 0 | | | (silent) | |")
                continue
            lines.append(
                f"| {name} | {c['core_window'][0]}..+{c['core_window'][1]} | "
                f"{_fmt(phase.get(f'core_val_{name}_topk'))} | {c['annotated_sites']} | "
                f"{c['kl_bits_per_column_core_window']:.3f} | "
                f"{c['kl_bits_per_column_receptive_field']:.3f} | `{c['consensus_core']}` | "
                f"`{c['consensus_annotated']}` |"
            )
    lines += [
        "",
        f"Sparling / baseline mean top-k: **{_fmt(r['topk_ratio'])}** (the Sparling paper's "
        "sparse splicing model reached 0.85 of SpliceAI). Channels with a GT at >= 1.5 bits: "
        f"{r['gt_channels'] or 'none'}; with an AG: {r['ag_channels'] or 'none'}.",
    ]
    if r.get("families"):
        lines += families_markdown(r["families"])
    lines += [
        "",
        "| channel | test sites | consensus (transcript strand, 31 nt) | GT bits | AG bits "
        f"| donor within {NEAR} nt | acceptor within {NEAR} nt | top sites |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for c in r["channels"]:
        if not c["sites"]:
            lines.append(f"| {c['channel']} | 0 | (never fires) | | | | | |")
            continue
        label = f"{c['channel']} (core: {c['core']})" if c.get("core") else c["channel"]
        lines.append(
            f"| {label} | {c['sites']} | `{c['consensus']}` | {c['gt_bits']:.2f} | "
            f"{c['ag_bits']:.2f} | {c.get('near_donor', 0):.2f} | "
            f"{c.get('near_acceptor', 0):.2f} | {', '.join(c['top_sites'][:3])} |"
        )
    return "\n".join(lines)
