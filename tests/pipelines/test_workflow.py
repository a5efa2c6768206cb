"""The Snakemake workflow, for real, on the tiny reference with tiny budgets."""

import hashlib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from tests.conftest import TINY_FASTA, run_cli
from tests.pipelines.snakemake_run import (
    SNAKEMAKE,
    TINY_CONFIG,
    snakemake,
    snakemake_cmd,
    snakemake_env,
)

pytestmark = pytest.mark.skipif(not SNAKEMAKE.exists(), reason="snakemake not installed")


def _job(workdir):
    return workdir / "results" / "tiny" / "splicing" / "seed0"


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """The tiny config run for real, with the planted target added (seconds more) and the
    trained model applied to a second genome whose dataset lists its classes in the other
    order; that genome's scan scattered over 3 jobs."""
    workdir = tmp_path_factory.mktemp("workflow")
    config = workdir / "tiny_planted.yaml"
    planted = "planted: {enabled: true, preset: tiny, seeds: [0], threads: 1, diagnostics: 320}\n"
    text = TINY_CONFIG.read_text().replace(
        "genomes:\n", "genomes:\n  other:\n    reference: tiny\n    labels: [donor, acceptor]\n"
    )
    applied = "apply: {model: splicing, genomes: [other], scan_jobs: 3}\n"
    config.write_text(text + planted + applied)
    result = snakemake(workdir, "--cores", "2", "--configfile", config)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return workdir, config


def test_workflow_leaves_motifs_tracks_metrics_and_report(finished):
    finished, _ = finished
    job = _job(finished)
    motifs = job / "sparling" / "motifs"
    for name in ("motifs.meme", "motifs.jaspar", "motifs.transfac", "motifs.homer",
                 "tomtom.tsv", "motifs.json"):  # fmt: skip
        assert (motifs / name).is_file(), name
    assert list((motifs / "logos").glob("*.png"))
    tracks = job / "sparling" / "tracks"
    assert (tracks / "motif_sites.bed").is_file() and (tracks / "motif_sites.bb").is_file()
    assert list(tracks.glob("*.bw"))
    metrics = json.loads((job / "metrics.json").read_text())
    assert "mean_topk" in metrics["sparling"]["e2e"] and "mean_topk" in metrics["baseline"]["e2e"]
    s, b = metrics["sparling"]["e2e"], metrics["baseline"]["e2e"]
    for key, ratio in metrics[
        "ratio"
    ].items():  # (metrics where the tiny baseline scores 0 have none)
        assert ratio == pytest.approx(s[key] / b[key])
    assert "<img" in (job / "report.html").read_text()
    for rule in ("dataset", "train_sparling", "train_baseline", "export", "scan"):
        assert list((finished / "timings").rglob(f"{rule}.tsv")), rule
        assert list((finished / "logs").rglob(f"{rule}.log")), rule


def test_apply_scores_scans_and_reports_another_genome_without_training(finished):
    """`apply:` on a genome built with the other label order: the model (trained once, on
    `tiny`) scores every window of it exactly as `evaluate --split all` does on its own
    dataset of the same sequence -- classes matched by name -- and the genome gets tracks
    and a report, but no training."""
    finished, _ = finished
    applied = finished / "results" / "other" / "applied" / "splicing_seed0"
    for path in ("metrics.json", "tracks/motif_sites.bed", "tracks/motif_sites.bb",
                 "tracks/scan.json", "report.html"):  # fmt: skip
        assert (applied / path).is_file(), path
    assert not (finished / "results" / "other" / "splicing").exists()  # nothing trained there
    model = _job(finished) / "sparling"
    other = json.loads((applied / "metrics.json").read_text())
    assert other["split"] == "all" and other["dataset"].endswith("other/dataset.h5")
    own = run_cli("evaluate", "--model", model, "--split", "all", "--out", finished / "own.json",
                  cwd=finished)  # the run's config names its dataset relative to the workdir
    assert own.returncode == 0, own.stderr
    own = json.loads((finished / "own.json").read_text())
    for name in ("acceptor", "donor"):
        assert other["sites"][name] == pytest.approx(own["sites"][name])
    page = (applied / "report.html").read_text()
    assert "Scored on other data" in page and "applied to other" in page
    assert "Genome scan" in page
    assert (finished / "logs" / "other" / "applied" / "splicing_seed0" / "evaluate.log").is_file()


def test_apply_benchmark_reads_the_run_and_scores_its_baseline_on_the_other_genome(
    finished, tmp_path
):
    """`python -m benchmarks apply` on the finished run: Sparling's figures are the pipeline's
    own (applied metrics, the run's test block), the baseline's on the other genome are those
    `evaluate --split all` gives on that genome's dataset, and the section names both."""
    from benchmarks.apply_genome import run_apply_benchmark

    finished, _ = finished
    markdown = tmp_path / "BENCHMARKS.md"
    path = run_apply_benchmark(finished, tmp_path / "bench", wall_seconds=90.0,
                               command="snakemake --configfile c.yaml", benchmarks_md=markdown)
    (row,) = json.loads(path.read_text())["applied"]
    assert (row["genome"], row["applied"], row["job"]) == ("other", "splicing_seed0",
                                                          "tiny/splicing/seed0")  # fmt: skip
    applied = json.loads((finished / "results/other/applied/splicing_seed0/metrics.json")
                         .read_text())  # fmt: skip
    own = json.loads((_job(finished) / "metrics.json").read_text())
    assert row["sparling"]["other"]["donor_pr_auc"] == applied["e2e"]["donor_pr_auc"]
    assert row["sparling"]["own"]["donor_pr_auc"] == own["sparling"]["e2e"]["donor_pr_auc"]
    assert row["baseline"]["own"]["acceptor_pr_auc"] == own["baseline"]["e2e"]["acceptor_pr_auc"]
    direct = run_cli("evaluate", "--model", _job(finished) / "baseline", "--dataset",
                     finished / "results/other/dataset.h5", "--split", "all", "--out",
                     tmp_path / "direct.json")  # fmt: skip
    assert direct.returncode == 0, direct.stderr
    direct = json.loads((tmp_path / "direct.json").read_text())
    for key in ("donor_pr_auc", "acceptor_pr_auc", "mean_topk"):
        assert row["baseline"]["other"][key] == pytest.approx(direct["e2e"][key])
    assert row["sites"] == {k: applied["sites"][k]["sites"] for k in ("donor", "acceptor")}
    assert row["scan"]["sites"] > 0
    text = markdown.read_text()
    assert "<!-- bench:apply:start -->" in text and "applied to other" in text
    assert any(r["job"].startswith("other/applied/") for r in json.loads(path.read_text())["rules"])


def test_a_scan_scattered_over_jobs_gathers_the_single_scans_tracks(finished):
    """`other` is the same sequence as `tiny`: its scan, scattered over 3 jobs (parts removed
    after the gather), gives the run's own single-job tracks byte for byte."""
    finished, _ = finished
    applied = finished / "results" / "other" / "applied" / "splicing_seed0" / "tracks"
    own = _job(finished) / "sparling" / "tracks"
    for name in ("motif_sites.bed", "motif_sites.bb"):
        assert (applied / name).read_bytes() == (own / name).read_bytes(), name
    assert json.loads((applied / "scan.json").read_text())["parts"] == 3
    assert not list(applied.glob("parts/*.npz"))  # temp: gone once gathered
    logs = finished / "logs" / "other" / "applied" / "splicing_seed0" / "scan"
    assert sorted(p.name for p in logs.glob("*.log")) == [
        f"part-000{i}-of-0003.log" for i in (1, 2, 3)]


def test_planted_target_runs_through_the_same_rules(finished):
    """The planted job has a splicing job's layout, trains without a dataset or baseline, and
    names its motifs against the JASPAR release it planted from (not the config's)."""
    finished, _ = finished
    job = finished / "results" / "planted" / "seed0"
    for path in ("report.html", "metrics.json", "sparling/config.yaml",
                 "sparling/motifs/motifs.meme", "sparling/motifs/tomtom.tsv"):  # fmt: skip
        assert (job / path).is_file(), path
    assert not (job / "baseline").exists() and not (job / "sparling" / "tracks").exists()
    metrics = json.loads((job / "metrics.json").read_text())
    assert metrics["task"] == "planted" and "baseline" not in metrics
    planted = yaml.safe_load((job / "sparling" / "config.yaml").read_text())["data"]
    assert "dataset" not in planted
    named = json.loads((job / "sparling" / "motifs" / "motifs.json").read_text())["jaspar"]
    assert named["release"] == planted["jaspar_release"]
    splicing = json.loads((_job(finished) / "sparling" / "motifs" / "motifs.json").read_text())
    assert splicing["jaspar"]["release"] == "JASPAR2026" != planted["jaspar_release"]
    assert splicing["reference_motifs"]["kind"] == "splicing"  # JASPAR only as decoys there
    for rule in ("train_sparling", "export", "compare", "diagnose", "report"):
        assert (finished / "logs" / "planted" / "seed0" / f"{rule}.log").is_file(), rule
    # `diagnostics: 320`: a checkpoint series, its diagnostics, and their report section.
    diagnostics = json.loads((job / "sparling/diagnostics/diagnostics.json").read_text())
    assert diagnostics["layer"] == "motifs" and diagnostics["checkpoints"] == 3
    assert "Training diagnostics" in (job / "report.html").read_text()
    assert not (_job(finished) / "sparling" / "diagnostics").exists()  # off by default


def test_rerun_after_success_does_nothing(finished):
    finished, config = finished
    result = snakemake(finished, "--cores", "2", "--configfile", config)
    assert result.returncode == 0
    assert "Nothing to be done" in result.stdout + result.stderr


def _verbs(runs, out, vcf, compared=True):
    """Every verb that reads a run, writing under ``out``: (name, arguments); with
    ``compared`` False only those whose outputs are compared with an earlier run's."""
    sparling, planted = runs
    small = ("--method", "sae", "--steps", "30", "--fit-rows", "2000", "--concepts", "3",
             "--block", "2", "--k", "1")  # fmt: skip
    verbs = [
        ("evaluate", ["--model", sparling, "--out", out / "evaluate.json"]),
        ("export", ["--model", sparling, "--out", out / "motifs", "--min-sites", "1",
                    "--jaspar-release", "JASPAR2024"]),
        ("scan", ["--model", sparling, "--out", out / "tracks", "--no-bigwig"]),
        ("variants", ["--model", sparling, "--vcf", vcf, "--out", out / "variants"]),
        ("stability", ["--model", sparling, "--model", sparling, "--out", out / "stab.json"]),
    ]  # fmt: skip
    if compared:
        return verbs
    # Run after the move only: the report and the concepts must work (a report of the run
    # is the pipeline's; concepts are the same code path); the diagnostics equal the
    # pipeline's own of the planted job.
    return verbs + [
        ("report", ["--model", sparling, "--out", out / "report.html"]),
        ("diagnose", ["--model", planted, "--out", out / "diagnostics"]),
        ("concepts", ["--model", sparling, "--out", out / "concepts", *small]),
    ]  # fmt: skip


def _outputs(out):
    """What must not change when the results move: the outputs' contents, paths left out."""
    evaluate = json.loads((out / "evaluate.json").read_text())
    return {
        "evaluate": (evaluate["e2e"], evaluate["sites"]),
        "motifs": (out / "motifs" / "motifs.meme").read_text(),
        "bed": (out / "tracks" / "motif_sites.bed").read_text(),
        "variants": (out / "variants" / "variant_scores.tsv").read_text(),
        "stability": json.loads((out / "stab.json").read_text())["fraction_reproduced"],
    }


def _series(diagnostics: Path) -> list:
    return [r["accuracy"] for r in json.loads(diagnostics.read_text())["series"]]


def test_moved_results_work_from_any_folder(finished, tmp_path):
    """The results tree moved under a renamed parent, every verb run from a third folder:
    the same outputs as from the pipeline's folder (the diagnostics: the pipeline's own); a
    dataset gone too is named with the option that gives it, and that option works."""
    finished, _ = finished
    job = _job(finished)
    sparling = job / "sparling"
    planted = next(p.parent.parent for p in (finished / "results").rglob("series")
                   if p.parent.name == "checkpoints")  # fmt: skip
    header, body = TINY_FASTA.read_text().split("\n", 1)
    seq, genome = header[1:].split()[0], body.replace("\n", "").upper()
    vcf = tmp_path / "x.vcf"
    records = [f"{seq}\t{p}\t.\t{genome[p - 1]}\t{'G' if genome[p - 1] == 'C' else 'C'}\t.\t.\t."
               for p in (5_000, 12_345, 40_000)]  # fmt: skip
    vcf.write_text("\n".join(["##fileformat=VCFv4.2", f"##contig=<ID={seq},length={len(genome)}>",
                              "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO", *records]) + "\n")
    rel = [r.relative_to(finished) for r in (sparling, planted)]
    before = tmp_path / "before"
    for verb, args in _verbs(rel, before, vcf):
        result = run_cli(verb, *args, cwd=finished)
        assert result.returncode == 0, (verb, result.stderr[-2000:])
    own_diagnostics = _series(planted / "diagnostics" / "diagnostics.json")
    moved = tmp_path / "renamed parent" / "results"
    moved.parent.mkdir()
    shutil.move(finished / "results", moved)
    third = tmp_path / "third"
    third.mkdir()
    try:
        runs = [moved / r.relative_to("results") for r in rel]
        after = tmp_path / "after"
        for verb, args in _verbs(runs, after, vcf, compared=False):
            result = run_cli(verb, *args, cwd=third)
            assert result.returncode == 0, (verb, result.stderr[-2000:])
        assert _outputs(after) == _outputs(before)
        assert _series(after / "diagnostics" / "diagnostics.json") == own_diagnostics
        concepts = json.loads((after / "concepts" / "concepts.json").read_text())
        assert list(concepts["methods"]) == ["sae"]
        assert "<img" in (after / "report.html").read_text()
        dataset = moved / "tiny" / "dataset.h5"
        shutil.move(dataset, tmp_path / "elsewhere.h5")
        try:
            gone = run_cli("export", "--model", runs[0], "--out", tmp_path / "m2", cwd=third)
            assert gone.returncode == 2
            lines = gone.stderr.strip().splitlines()
            assert len(lines) == 1 and "data.dataset" in lines[0] and "--dataset" in lines[0]
            assert "looked for" in lines[0] and str(runs[0]) in lines[0]
            given = run_cli("scan", "--model", runs[0], "--out", tmp_path / "t2", "--no-bigwig",
                            "--dataset", tmp_path / "elsewhere.h5", cwd=third)  # fmt: skip
            assert given.returncode == 0, given.stderr[-2000:]
            assert (tmp_path / "t2" / "motif_sites.bed").read_text() == _outputs(before)["bed"]
        finally:
            shutil.move(tmp_path / "elsewhere.h5", dataset)
    finally:
        shutil.move(moved, finished / "results")


# --- chaos: jobs killed at random points -----------------------------------------------------

#: The tiny job's verbs a kill may hit, in their order, and the timing file of each (report and
#: compare have none).
_TIMED = {"dataset": "dataset.tsv", "train": "splicing/seed0/train_sparling.tsv",
          "export": "splicing/seed0/export.tsv", "scan": "splicing/seed0/scan.tsv"}  # fmt: skip
_VOLATILE = re.compile(r"seconds|elapsed|date")  # wall clocks, which no two runs share


def _job_pids(session: int, verb: str) -> list[int]:
    """The processes of ``sparling-genomics VERB`` jobs in the workflow's session."""
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and os.getsid(int(entry.name)) == session:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
                if argv[1:4] == [b"-m", b"sparling_genomics.cli", verb.encode()]:
                    pids.append(int(entry.name))
        except OSError:  # gone meanwhile
            continue
    return pids


def _kill_a_job(workdir: Path, config: Path, verb: str, after: float, rng,
                whole: bool = False) -> bool:  # fmt: skip
    """Run the workflow until a ``verb`` job has run ``after`` seconds, then SIGKILL that job
    (only it: the workflow sees a failed job, lets the others finish and stops) or, with
    ``whole``, the workflow and all its jobs at once (a lost node: the lock and the job's
    incomplete marks are left behind, and ``--unlock`` is run after). Whether it killed."""
    with open(workdir / "chaos.log", "a") as log:
        proc = subprocess.Popen(
            snakemake_cmd(workdir, "--cores", "2", "--rerun-incomplete", "--configfile", config),
            stdout=log, stderr=subprocess.STDOUT, env=snakemake_env(), start_new_session=True)
        seen, killed = None, False
        while proc.poll() is None and not killed:
            pids = _job_pids(proc.pid, verb)
            seen = seen or (time.time() if pids else None)
            if pids and time.time() - seen >= after:
                try:
                    os.killpg(proc.pid, signal.SIGKILL) if whole else os.kill(rng.choice(pids),
                                                                              signal.SIGKILL)
                    killed = True
                except ProcessLookupError:
                    continue
            time.sleep(0.05)
        proc.wait(timeout=600)
    if killed and whole:
        assert snakemake(workdir, "--unlock", "--configfile", config).returncode == 0
    return killed


def _files(root: Path) -> dict[str, tuple[str, int]]:
    """Each file under ``root``: its SHA-256 and modification time."""
    return {str(p.relative_to(root)): (hashlib.sha256(p.read_bytes()).hexdigest(),
                                       p.stat().st_mtime_ns)
            for p in sorted(root.rglob("*")) if p.is_file()}  # fmt: skip


def _steady(value):
    """A JSON value without its wall-clock figures."""
    if isinstance(value, dict):
        return {k: _steady(v) for k, v in value.items() if not _VOLATILE.search(k)}
    return [_steady(v) for v in value] if isinstance(value, list) else value


def _content(path: Path):
    """What an output says, less the wall-clock figures two runs differ in: JSON without
    them, an HDF5 file's arrays and attributes, a checkpoint's weights; None for the pages
    and vector logos that carry a date (the PNG logos and the files the report shows are
    compared)."""
    import h5py
    import torch

    if path.suffix in (".html", ".svg"):
        return None
    if path.suffix == ".json":
        return _steady(json.loads(path.read_text()))
    if path.suffix == ".jsonl":
        return [_steady(json.loads(line)) for line in path.read_text().splitlines()]
    if path.suffix == ".pt":
        return _tensors(torch.load(path, weights_only=True)["model"])
    if path.suffix == ".h5":
        out = {}
        with h5py.File(path) as h5:
            for key, value in h5.attrs.items():
                text = value.decode() if isinstance(value, bytes) else str(value)
                out[f"@{key}"] = _steady(json.loads(text)) if text.startswith("{") else text
            h5.visititems(lambda name, item: out.setdefault(name, item[()].tolist())
                          if isinstance(item, h5py.Dataset) else None)  # fmt: skip
        return out
    return path.read_bytes()


def _tensors(value):
    """A checkpoint's weights as bytes (nested as they are)."""
    if isinstance(value, dict):
        return {k: _tensors(v) for k, v in value.items()}
    return value.numpy().tobytes() if hasattr(value, "numpy") else value


def _declared_outputs(workdir: Path, config: Path) -> dict[str, str]:
    """Every output the workflow declares (under results/), and the rule that makes it."""
    result = snakemake(workdir, "--summary", "--configfile", config)
    rows = [line.split("\t") for line in result.stdout.splitlines()[1:] if "\t" in line]
    return {row[0].removeprefix("results/"): row[2] for row in rows}


def test_jobs_killed_at_random_points_rerun_to_the_same_outputs(finished, tmp_path):
    """The tiny job (without its baseline, for time) SIGKILLed at random points of its jobs'
    runs (within 60% of the time each took in the uninterrupted run, ``finished``), three
    times -- training always, and then the whole workflow with it (a lost node: the
    workflow's lock and its incomplete marks left behind), two of dataset, export and scan
    one job alone; at least two of the three kills land before the job ends -- the workflow
    run again after each (``--unlock`` after the whole kill, ``--rerun-incomplete``):
    once it finishes, its outputs are the uninterrupted run's (no file more, none less, the
    same contents but for wall-clock figures), and no file of a job that had finished was
    redone or lost (a finished training's run folder included; the dataset finished before
    the training's kill). ``SPARLING_CHAOS_SEED`` picks other kill points."""
    seed = int(os.environ.get("SPARLING_CHAOS_SEED", "0"))
    rng = random.Random(seed)
    config = tmp_path / "tiny.yaml"
    config.write_text(TINY_CONFIG.read_text().replace("baseline: true", "baseline: false"))
    targets = ["train", *rng.sample(["dataset", "export", "scan"], 2)]
    targets.sort(key=list(_TIMED).index)
    timings = finished[0] / "timings" / "tiny"
    snapshots, killed = [], []
    for verb in targets:
        took = float((timings / _TIMED[verb]).read_text().splitlines()[1].split("\t")[0])
        after = rng.uniform(0.05, 0.6) * took
        if _kill_a_job(tmp_path, config, verb, after, rng, whole=verb == "train"):
            killed.append((verb, round(after, 1)))
        snapshots.append(_files(tmp_path / "results"))
    assert len(killed) >= 2, (seed, targets, killed)
    result = snakemake(tmp_path, "--cores", "2", "--configfile", config)
    assert result.returncode == 0, (seed, result.stdout[-3000:] + result.stderr[-3000:])
    end = _files(tmp_path / "results")
    declared = _declared_outputs(tmp_path, config)
    for snapshot in snapshots:
        runs = [Path(p).parent for p, rule in declared.items() if rule == "train" and p in snapshot]
        for path, seen in snapshot.items():
            in_run = Path(path).parent in {*runs, *(r / "checkpoints" for r in runs)}
            if path in declared or in_run:
                assert end.get(path) == seen, (seed, killed, path, "redone or lost")
    own, ours = finished[0] / "results" / "tiny", tmp_path / "results" / "tiny"
    expected = [p for p in _files(own) if "/baseline/" not in p]
    assert sorted(_files(ours)) == sorted(expected), (seed, killed)
    for path in expected:
        mine, theirs = _content(ours / path), _content(own / path)
        if path.endswith("seed0/metrics.json"):  # the job's: Sparling beside the baseline
            mine, theirs = mine["sparling"], theirs["sparling"]
        assert mine == theirs, (seed, killed, path)
