"""Peers benchmark: SpliceAI off the shelf and OpenSpliceAI retrained, beside our models, on
the same test positions, the same variants and the same clock.

One run (``python -m benchmarks peers --out OUT``), each step kept in ``OUT/steps/NAME.json``
so a killed or stopped run continues where it stopped (``--resume`` is the default; a step
whose training was killed resumes from its own checkpoint):

1. ``dataset``: our splicing dataset of the reference (default TAIR10 chr1): per-sequence
   train / validation / test blocks, every site of every selected transcript.
2. ``baseline`` and ``sparling``: our non-sparse baseline and Sparling model, the splicing
   task's defaults, each ``--minutes`` of training on this machine (the pipeline's 23); with
   ``--long-minutes M``, ``*_long`` too: the ``long`` preset (a 2,000-nt head) on a dataset
   built with 2,000 nt of context (the same windows, so the same test positions).
3. ``spliceai``: the five published models of the ``spliceai`` wheel, averaged, 10k context,
   run by the PyTorch port (``benchmarks/spliceai_net.py``) after it is checked against Keras
   on the same inputs (``keras_check``: largest difference of any probability).
4. ``openspliceai_check``: OpenSpliceAI's own module (random weights and batch-norm
   statistics) against our loader of its checkpoints, on the same inputs;
   ``openspliceai_data``: our split in OpenSpliceAI's stage-1 format
   (``benchmarks/openspliceai_data.py``), then its own stage 2 (``create_dataset``).
5. ``openspliceai{F}`` for F in ``--flanks`` (400, 2000): OpenSpliceAI's model, optimizer,
   schedule, batches and loss (``scripts/peers/openspliceai_train.py``), trained for our
   baseline's measured wall time; ``openspliceai{F}_default``: the same for as long as its
   defaults ask (10 epochs), for the flanks given to ``--default-epochs`` (hours on 2 cores;
   resumable), each continuing its budget run's saved state where that is still on disk (the
   same seed and 10-epoch schedule: the budget run is its first minutes), else from the
   start. The section is published once everything else is scored, and again after these
   runs. A run whose weights are gone (a clone keeps the steps, not the ignored weights)
   trains again only when a step that reads it is missing.
6. Every model on the test block's labelled positions (our ``site_metrics``: top-k, PR-AUC),
   the peers reading the genome around the genes as ours do; ``{peer}_transcript`` (unless
   ``--no-transcript-context``): each peer again on the same positions read as it was
   trained, each transcript alone with N beyond it (``peer_positions``).
7. ``variants``: ``--site-mutations`` of the test block's donor GT->CA / acceptor AG->TC
   mutations and ``--random-variants`` random SNVs and indels through our ``variants`` verb
   (each of our runs) and through each peer with SpliceAI's delta rule
   (``benchmarks/peer_variants.py``; OpenSpliceAI's runs of our baseline's wall time: the
   same clock), on the allele-strands our verb scored: loss >= 0.5
   rates, Pearson r of the DS scores against SpliceAI's, allele-strands per second; with the
   transcript reading, each peer again with N beyond the allele's transcript (SpliceAI's tool;
   an allele in no transcript of the test block is then not scored, as that tool skips it).

The peers live in their own environment (``bash scripts/setup_peers.sh``: build/peers/.venv,
never in the project's lock). Writes ``OUT/bench_peers.json`` and the ``peers`` section of
BENCHMARKS.md (``benchmarks/peers_report.py``).
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch

from sparling_genomics.evaluate.site_metrics import site_metrics
from sparling_genomics.genome.dataset import SiteDataset
from sparling_genomics.genome.dataset_source import source_file
from sparling_genomics.genome.fasta import Genome
from sparling_genomics.genome.sequence import one_hot
from sparling_genomics.io import write_json_atomic, write_text_atomic
from sparling_genomics.train.device import pick_device
from sparling_genomics.train.run_config import resolve_config

from .openspliceai_data import write_datafiles
from .peer_comparison import (
    allele_strands,
    compact_scores,
    expand_scores,
    our_variants,
    peer_variants,
    prepare_variants,
    summarize_variants,
)
from .peer_positions import labelled_stretches, peer_site_scores
from .peers_report import publish_peers
from .report import machine_description, run_or_resume
from .spliceai_net import load_openspliceai, load_spliceai, spliceai_models_dir
from .splicing import MODELS, build_dataset_measured

ROOT = Path(__file__).resolve().parent.parent
PEER_PYTHON = ROOT / "build" / "peers" / ".venv" / "bin" / "python"
SCRIPTS = ROOT / "scripts" / "peers"
FLANKS = (400, 2000)


def setup_peers() -> Path:
    """The peers' venv (made or checked by ``scripts/setup_peers.sh``): its python."""
    done = subprocess.run(["bash", str(ROOT / "scripts" / "setup_peers.sh")], capture_output=True,
                          text=True)  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"scripts/setup_peers.sh failed: {done.stderr.strip()[-500:]}")
    return PEER_PYTHON


def step(out: Path, name: str, compute: Callable[[], dict], needs: Path | None = None) -> dict:
    """A step's result: read from ``OUT/steps/NAME.json`` if it finished before (and the file
    it made, ``needs``, is still there: a clone keeps the JSON but not the ignored data), else
    computed now and written (atomically: a killed step leaves no result)."""
    path = out / "steps" / f"{name}.json"
    if path.exists() and (needs is None or needs.exists()):
        return json.loads(path.read_text())
    result = compute()
    path.parent.mkdir(parents=True, exist_ok=True)
    if name.startswith("variants_"):  # per-allele scores: compact, bench_runs/ has a budget
        result = rounded(result)  # what is written is what this run goes on with
        write_text_atomic(path, json.dumps(result, separators=(",", ":")) + "\n")
    else:
        write_json_atomic(path, result)
    return result


def rounded(value, digits: int = 4):
    """``value`` with every float rounded to ``digits`` decimals: the precision our verb's
    ``variant_scores.tsv`` has, so every model's scores are compared at the same one."""
    if isinstance(value, float):
        return round(value, digits)
    if isinstance(value, list):
        return [rounded(v, digits) for v in value]
    if isinstance(value, dict):
        return {k: rounded(v, digits) for k, v in value.items()}
    return value


def peer_python(args: list[str], *, cwd: Path | None = None) -> float:
    """Run the peers' python with ``args``; its wall seconds (a failure raises, with its
    stderr's end)."""
    began = time.perf_counter()
    env = dict(os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="2")
    done = subprocess.run([str(PEER_PYTHON), *args], capture_output=True, text=True, cwd=cwd,
                          env=env)  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(args[:2])} failed: {done.stderr.strip()[-800:]}")
    return round(time.perf_counter() - began, 2)


def our_run(out: Path, name: str, dataset: Path, minutes: float, seed: int,
            preset: str = "cpu") -> dict:  # fmt: skip
    """Our model ``name`` (``baseline``/``sparling``, ``_long`` for the long preset)."""
    config = resolve_config("splicing", preset, overrides=[
        {"seed": seed, "data": {"dataset": str(dataset)}, "train": {"max_seconds": minutes * 60}},
        MODELS["baseline"] if name.startswith("baseline") else {},
    ])  # fmt: skip
    metrics = run_or_resume(out / name, config)
    return {"run": str(out / name), "preset": preset, "e2e": metrics["e2e"],
            "sites": metrics.get("sites"),
            "wall_seconds": metrics["wall_seconds"], "samples_seen": metrics["samples_seen"],
            "stopped_by": metrics.get("stopped_by"), "device": metrics.get("device")}  # fmt: skip


def test_positions(dataset_path: Path) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray,
                                                 list[str]]:  # fmt: skip
    """(seqids, strands, starts, labels, classes) of the test block's windows (all of them:
    what ``evaluate`` scores with the splicing default ``data.test_windows: 0``)."""
    data = SiteDataset(dataset_path)
    try:
        index = data.indices("test")
        where = data.windows(index)
        seqids = [data.seqids[s] for s in where["seqid"]]
        return seqids, where["strand"], where["start"], data.labels(index), list(data.classes)
    finally:
        data.close()


def score_peer(net: torch.nn.Module, dataset_path: Path, genome: Genome,
               context: str = "genome") -> dict:  # fmt: skip
    """A peer's top-k and PR-AUC on the test block's labelled positions, and its speed;
    ``context``: the genome around the genes, or each transcript alone (``peer_positions``)."""
    device = pick_device()
    net = net.to(device)
    seqids, strands, starts, labels, classes = test_positions(dataset_path)
    began = time.perf_counter()
    scores, kept = peer_site_scores(net, genome.fetch, seqids, strands, starts, labels, classes,
                                    device=device, context=context)  # fmt: skip
    seconds = time.perf_counter() - began
    sites = site_metrics(scores, kept, classes)
    e2e = {"mean_topk": sites["mean_topk"]}
    for name in classes[1:]:
        e2e[f"{name}_topk"], e2e[f"{name}_pr_auc"] = sites[name]["topk"], sites[name]["pr_auc"]
    return {"e2e": e2e, "sites": sites, "seconds": round(seconds, 2),
            "positions_per_second": round(len(kept) / seconds, 1), "device": str(device)}


def keras_check(out: Path, models_dir: Path, ensemble) -> dict:
    """The port against Keras on the same inputs: largest probability difference per model."""
    npz = out / "keras_reference.npz"
    seconds = peer_python([str(SCRIPTS / "keras_reference.py"), "--models", str(models_dir),
                           "--out", str(npz), "--inputs", "3", "--length", "500"])  # fmt: skip
    ref = np.load(npz)
    x = torch.from_numpy(one_hot(ref["codes"]))
    diffs = {}
    with torch.no_grad():
        for i, member in enumerate(ensemble.members, 1):
            port = member(x).numpy().transpose(0, 2, 1)
            diffs[f"spliceai{i}"] = float(np.abs(port - ref[f"model{i}"]).max())
    return {"max_abs_difference": diffs, "worst": max(diffs.values()), "keras_seconds": seconds,
            "inputs": int(ref["codes"].shape[0]), "outputs_each": 500}  # fmt: skip


def openspliceai_check(out: Path, flanks: tuple[int, ...]) -> dict:
    """Our loader against OpenSpliceAI's own module: largest probability difference per flank
    (its state dict loaded into ``SpliceAINet``, the same random inputs)."""
    folder = out / "openspliceai_check"
    diffs = {}
    for flank in flanks:
        peer_python([str(SCRIPTS / "openspliceai_reference.py"), "--flank", str(flank),
                     "--out", str(folder)])  # fmt: skip
        ref = np.load(folder / f"openspliceai{flank}.npz")
        net = load_openspliceai(folder / f"openspliceai{flank}.pt", flank)
        with torch.no_grad():
            ours = net(torch.from_numpy(one_hot(ref["codes"]))).numpy()
        diffs[str(flank)] = float(np.abs(ours - ref["outputs"]).max())
    return {"max_abs_difference": diffs, "worst": max(diffs.values())}


def openspliceai_data(out: Path, dataset: Path) -> dict:
    """Our split as OpenSpliceAI's stage-1 files, then its own stage 2 (``create_dataset``)."""
    folder = out / "openspliceai_data"
    began = time.perf_counter()
    records = write_datafiles(dataset, folder)
    stage1 = round(time.perf_counter() - began, 2)
    code = ("import argparse; from openspliceai.create_data.create_dataset import create_dataset;"
            f" create_dataset(argparse.Namespace(output_dir={str(folder)!r},"
            " chr_split='train-test', biotype='protein-coding'))")  # fmt: skip
    stage2 = peer_python(["-c", code])
    return {"folder": str(folder), "records": records, "stage1_seconds": stage1,
            "stage2_seconds": stage2}  # fmt: skip


def openspliceai_train(out: Path, data: dict, flank: int, *, max_seconds: float,
                       epochs: int = 10, name: str | None = None,
                       start_from: Path | None = None) -> dict:  # fmt: skip
    """OpenSpliceAI trained by ``scripts/peers/openspliceai_train.py`` (resumes a killed run;
    with ``start_from``, continues that budget-stopped run's saved state under ``name``)."""
    folder = out / (name or f"openspliceai{flank}")
    threads = str(torch.get_num_threads())
    extra = ["--start-from", str(start_from)] if start_from is not None else []
    seconds = peer_python([str(SCRIPTS / "openspliceai_train.py"), "--data", data["folder"],
                           "--flank", str(flank), "--out", str(folder), "--max-seconds",
                           str(max_seconds), "--epochs", str(epochs), "--threads", threads,
                           *extra])  # fmt: skip
    progress = json.loads((folder / "progress.json").read_text())
    progress.pop("losses", None)
    return progress | {"folder": str(folder), "model": str(folder / "model.pt"),
                       "last_call_seconds": seconds}  # fmt: skip


def steps_of_run(key: str, readings: tuple[str, ...]) -> list[str]:
    """The steps read from an OpenSpliceAI run's weights: its scores in each reading, and for
    a run of our baseline's wall time (the same clock) its variant scores too."""
    uses = [key if r == "genome" else f"{key}_transcript" for r in readings]
    return uses if key.endswith("_default") else uses + [f"variants_{n}" for n in uses]


def peers_command(out: Path, reference: str, minutes: float, seed: int, flanks, default_epochs,
                  site_mutations: int, random_variants: int, long_minutes: float,
                  transcript_context: bool = True) -> str:
    """The command line that makes this result (options at their defaults left out)."""
    parts = ["python -m benchmarks peers", f"--out {out}", f"--reference {reference}"]
    for option, value, default in (("--minutes", minutes, 23.0), ("--seed", seed, 0),
                                   ("--site-mutations", site_mutations, 400),
                                   ("--random-variants", random_variants, 300),
                                   ("--long-minutes", long_minutes, 0.0)):  # fmt: skip
        if value != default:
            parts.append(f"{option} {value:g}")
    if tuple(flanks) != FLANKS:
        parts.append(f"--flanks {','.join(map(str, flanks))}")
    if default_epochs:
        parts.append(f"--default-epochs {','.join(map(str, default_epochs))}")
    if not transcript_context:
        parts.append("--no-transcript-context")
    return " ".join(parts)


def run_peers_benchmark(out: Path, *, reference: str = "tair10-chr1", minutes: float = 23.0,
                        seed: int = 0, flanks: tuple[int, ...] = FLANKS,
                        default_epochs: tuple[int, ...] = (), site_mutations: int = 400,
                        random_variants: int = 300, long_minutes: float = 0.0,
                        transcript_context: bool = True,
                        benchmarks_md: Path = Path("BENCHMARKS.md")) -> Path:  # fmt: skip
    """The whole benchmark; finished steps are read back, so a stopped run continues."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    setup_peers()
    dataset = out / "dataset.h5"
    build = step(out, "dataset", lambda: build_dataset_measured(dataset, reference),
                 needs=dataset)  # fmt: skip
    data = SiteDataset(dataset)
    source, context = data.source, data.context
    data.close()
    genome = Genome(source_file(source, "fasta", dataset))
    spliceai_dir = spliceai_models_dir(PEER_PYTHON)
    ensemble = load_spliceai(spliceai_dir)
    check = step(out, "keras_check", lambda: keras_check(out, spliceai_dir, ensemble))
    spliceai = step(out, "spliceai", lambda: score_peer(ensemble, dataset, genome))
    models: dict[str, dict] = {}
    for name in ("sparling", "baseline"):
        models[name] = step(out, name, lambda n=name: our_run(out, n, dataset, minutes, seed))
    models["spliceai"] = spliceai
    if long_minutes:  # the long preset (2,000 nt) on a dataset of that context, same windows
        wide = out / "dataset_long.h5"
        step(out, "dataset_long", lambda: build_dataset_measured(
            wide, reference, extra=["--context", "2000"]), needs=wide)  # fmt: skip
        for name in ("sparling_long", "baseline_long"):
            models[name] = step(out, name, lambda n=name: our_run(
                out, n, wide, long_minutes, seed, preset="long"))  # fmt: skip
    budget = models["baseline"]["wall_seconds"]
    osai_check = step(out, "openspliceai_check", lambda: openspliceai_check(out, flanks))
    data = step(out, "openspliceai_data", lambda: openspliceai_data(out, dataset),
                needs=out / "openspliceai_data" / "dataset_train.h5")  # fmt: skip
    readings = ("genome", "transcript") if transcript_context else ("genome",)
    trained: dict[str, dict] = {}

    def train_and_score(runs: list[tuple]) -> None:
        """OpenSpliceAI runs ``(name, flank, max seconds, state to start from)``, each scored."""
        for key, flank, seconds, start in runs:
            model = out / key / "model.pt"  # ignored: a clone keeps the steps, not the model
            uses = steps_of_run(key, readings)
            recorded = all((out / "steps" / f"{n}.json").exists() for n in uses)
            if not model.exists() and not recorded:  # trains again: the old scores are stale
                for stale in uses:
                    (out / "steps" / f"{stale}.json").unlink(missing_ok=True)
            trained[key] = step(out, f"{key}_train", lambda k=key, f=flank, m=seconds, s=start:
                                openspliceai_train(out, data, f, max_seconds=m, name=k,
                                                   start_from=s),
                                needs=None if recorded else model)  # fmt: skip
            for reading in readings:
                name = key if reading == "genome" else f"{key}_transcript"
                models[name] = step(out, name, lambda k=key, f=flank, r=reading: score_peer(
                    load_openspliceai(Path(trained[k]["model"]), f), dataset, genome,
                    context=r))  # fmt: skip

    prepared = step(out, "variants_vcf", lambda: prepare_variants(
        out, dataset, genome, site_mutations_n=site_mutations,
        random_variants_n=random_variants))  # fmt: skip
    scored: dict[str, dict] = {}

    def score_variants() -> dict:
        """Every model's variant scores (steps done before are read back), summarized."""
        ours = [n for n in ("baseline", "sparling", "baseline_long", "sparling_long")
                if n in models]  # fmt: skip
        for name in ours:  # the baseline first: its allele-strands are what every model scores
            scored[name] = step(out, f"variants_{name}", lambda n=name: our_variants(
                out, n, Path(models[n]["run"]), prepared))  # fmt: skip
        keys = allele_strands(prepared, scored["baseline"])
        nets = {k: (lambda v=v: load_openspliceai(Path(v["model"]), int(v["flank"])))
                for k, v in trained.items() if not k.endswith("_default")}  # fmt: skip
        nets["spliceai"] = lambda: ensemble
        stretches = (labelled_stretches(*test_positions(dataset)[:4]) if transcript_context
                     else None)  # fmt: skip
        for name, net in nets.items():  # SpliceAI last: its transcript reading ~50 min
            for reading in readings:
                key = name if reading == "genome" else f"{name}_transcript"
                scored[key] = expand_scores(step(out, f"variants_{key}", lambda n=net, r=reading:
                                                 compact_scores(peer_variants(
                                                     n(), genome, prepared, keys,
                                                     stretches if r == "transcript" else None),
                                                     keys)), keys)  # fmt: skip
            if name == "spliceai" and transcript_context:
                models["spliceai_transcript"] = step(out, "spliceai_transcript", lambda:
                                                     score_peer(ensemble, dataset, genome,
                                                                context="transcript"))
        return summarize_variants(prepared, scored)

    def publish_now() -> Path:
        variants = score_variants()  # first: it adds SpliceAI's transcript reading to models
        order = [n for n in models if not n.endswith("_transcript")]
        shown = {k: models[k] for n in order for k in (n, f"{n}_transcript") if k in models}
        result = {
            "benchmark": "peers", "reference": reference, "seed": seed, "minutes": minutes,
            "machine": machine_description(),
            "command": peers_command(out, reference, minutes, seed, flanks, default_epochs,
                                     site_mutations, random_variants, long_minutes,
                                     transcript_context),
            "context": context,
            "dataset_build": build, "keras_check": check, "openspliceai_check": osai_check,
            "models": shown, "openspliceai_training": dict(trained), "openspliceai_data": data,
            "variants": variants,
        }  # fmt: skip
        return publish_peers(result, out, Path(benchmarks_md))

    # Published once the budget runs are scored, and again after OpenSpliceAI's default
    # epochs (hours on 2 cores; each continues its budget run's state while that is on disk).
    train_and_score([(f"openspliceai{f}", f, budget, None) for f in flanks])
    path = publish_now()
    if default_epochs:
        train_and_score([(f"openspliceai{f}_default", f, 0, out / f"openspliceai{f}")
                         for f in default_epochs])  # fmt: skip
        path = publish_now()
    return path
