"""Scale benchmark: time and peak memory of every verb on genomes of 100 Mb, 300 Mb and 1 Gb
built from real sequence (issue 55, item 2).

Each size's genome is made by ``scripts/make_scale_genome.py`` (copies of the bundled
chromosomes, ~1% substitutions per copy, ~45% of the bases annotated at every size; reused
when its summary says it was made with the same settings), beside 100,000 random SNVs drawn
uniformly over it (seeded; VCF sorted in FASTA order, with ``##contig`` lines). Then each step
runs as the user runs it, a ``sparling-genomics`` subprocess: ``dataset`` (the genome and its
GFF3), ``train`` (a fixed sample budget, :data:`TRAIN_SETTINGS`: the same small core and
main-phase samples and the same validation/test windows at every size, annealing off so the
model sits at the default final density from the start and its scan writes as many sites a
base as a fully trained model; its cost is meant to be constant), ``export``, ``scan`` (the
whole genome: BED9, bigBed, bigWigs, browser files), ``variants`` (the 100k SNVs) and
``report``; with ``--bfloat16``, at the smallest size also ``scan --precision bfloat16``
(its rate, and how many of its sites the float32 scan has: :func:`site_agreement`).

Peak memory: each step runs under a small launcher process (:data:`LAUNCHER`, a few lines
of Python started afresh for that step alone) that waits for it and reports
``getrusage(RUSAGE_CHILDREN).ru_maxrss``: with exactly one child, that is the step's own
peak RSS (with any processes it waited for). Why not simpler: ``RUSAGE_CHILDREN`` in the
benchmark's own process is the largest of every child reaped so far (a small step after a
big one would report the big one's peak); and ``os.wait4`` on a child of the benchmark's
process is floored at the benchmark's own RSS (~0.3 GB: it imports torch), because Linux
carries the RSS high-water mark of the address space a child leaves at ``execve`` into its
``maxrss`` (with ``vfork`` that is the parent's; measured: ``python -c pass`` read 0.30 GB).
The launcher's own footprint (~10 MB) is the floor instead. Polling ``/proc/PID/status``
(VmHWM) misses what happens after the last poll and grandchildren; ``/usr/bin/time -v`` does
what the launcher does but is not on every host.

Resumable: ``bench_scale.json`` is rewritten (atomically) as soon as a step finishes, with
the BENCHMARKS.md section; a rerun skips finished steps (``--no-resume`` starts over), so a
run killed mid-way continues where it stopped. A step that fails is recorded with its log's
tail and retried by the next run; the rest of its size waits. Growth: for each step and each
pair of sizes, the ratio of time per base (<= 1.2: within 20% of linear, or better) and of
peak memory; the issue's floors are judged at 100 Mb and 1 Gb (or, until both are measured,
provisionally at the smallest and largest size measured).
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from sparling_genomics.io import write_json_atomic, write_text_atomic
from sparling_genomics.rundir import (
    SCAN_SUMMARY,
    VARIANTS_SUMMARY,
    metrics_path,
    motifs_dir,
    read_run_json,
    report_path,
)

from .report import machine_description, machine_line, update_section

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "make_scale_genome.py"
CLI = [sys.executable, "-m", "sparling_genomics.cli"]
STEPS = ("dataset", "train", "export", "scan", "variants", "report")
# Measured at the smallest size only, after its steps: the scan again with bfloat16 arithmetic
# (``scan --precision bfloat16``), its time and its sites' agreement with the float32 scan.
BF16_STEP = "scan_bfloat16"
# Steps whose work grows with the genome, and those whose work is fixed by design.
GROWING = ("dataset", "scan")
FIXED = {"train": "fixed sample budget", "export": "fixed test windows",
         "variants": "fixed SNV count", "report": "summaries"}  # fmt: skip
REFERENCE_SIZES = ("100M", "300M", "1G")
SECTION = "scale"
JSON_NAME = "bench_scale.json"
GENOME_NAME = "genome"
LINEAR = 1.2  # time per base may grow by at most 20% from the smallest size to the largest
FLAT = 1.2  # peak memory may grow by at most 20%
# The train step's budget, the same at every size: the core (two local site models) for 1,000
# samples, the main model for 1,500 (its final phase: with annealing off, the whole schedule),
# at the default final density (0.0017, as a fully annealed model: the scan's site count a base
# is a real run's); 100 validation windows at each evaluation, 500 test windows (export reads
# the same 500). The caps in seconds only guard against a stuck run (stopped_by says which).
TRAIN_SETTINGS = (
    "train.core_samples=1000", "train.core_seconds=900", "train.final_samples=1500",
    "train.max_samples=1500", "train.max_seconds=1800", "train.eval_every=500",
    "data.val_windows=100", "data.test_windows=500", "annealing.enabled=false",
)  # fmt: skip
UNITS = {"": 1, "K": 10**3, "M": 10**6, "G": 10**9}


def parse_size(text: str) -> int:
    """Bases of ``100M``, ``1G``, ``2.5M``, ``500k`` or ``1234`` (decimal units)."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kKmMgG]?)[bB]?\s*", str(text))
    if not match or float(match[1]) * UNITS[match[2].upper()] < 1:
        raise ValueError(f"{text!r} is not a size (e.g. 2M, 100M, 1G or a number of bases)")
    return int(round(float(match[1]) * UNITS[match[2].upper()]))


def size_label(bases: int) -> str:
    """``100M`` for 100,000,000 (the shortest exact decimal label)."""
    for unit in ("G", "M", "K"):
        if bases % UNITS[unit] == 0:
            return f"{bases // UNITS[unit]}{unit}"
    return str(bases)


@dataclass(frozen=True)
class SizePaths:
    """Where one size's inputs and outputs live, under ``OUT/<size>/``."""

    root: Path

    @property
    def genome_dir(self) -> Path:
        return self.root / "genome"

    @property
    def fasta(self) -> Path:
        return self.genome_dir / f"{GENOME_NAME}.fa"

    @property
    def gff(self) -> Path:
        return self.genome_dir / f"{GENOME_NAME}.gff3"

    @property
    def genome_summary(self) -> Path:
        return self.genome_dir / f"{GENOME_NAME}.json"

    @property
    def vcf(self) -> Path:
        return self.root / "random_snvs.vcf"

    @property
    def vcf_summary(self) -> Path:
        return self.root / "random_snvs.json"

    @property
    def dataset(self) -> Path:
        return self.root / "dataset.h5"

    @property
    def run(self) -> Path:
        return self.root / "run"

    @property
    def tracks(self) -> Path:
        return self.root / "tracks"

    @property
    def tracks_bf16(self) -> Path:
        return self.root / "tracks_bfloat16"

    @property
    def variants(self) -> Path:
        return self.root / "variants"

    @property
    def report(self) -> Path:
        return report_path(self.run)

    def log(self, step: str) -> Path:
        return self.root / "logs" / f"{step}.log"

    def outputs(self, step: str) -> Path:
        """What ``step`` writes (removed before it runs again)."""
        return {"dataset": self.dataset, "train": self.run, "export": motifs_dir(self.run),
                "scan": self.tracks, BF16_STEP: self.tracks_bf16, "variants": self.variants,
                "report": self.report}[step]  # fmt: skip


def step_command(step: str, paths: SizePaths, train_settings: tuple[str, ...]) -> list[str]:
    """The ``sparling-genomics`` command line of one step."""
    p = paths
    commands = {
        "dataset": ["dataset", "--fasta", p.fasta, "--gff", p.gff, "--out", p.dataset, "--force"],
        "train": ["train", "--task", "splicing", "--preset", "cpu", "--dataset", p.dataset,
                  "--out", p.run, "--seed", "0", "--no-progress",
                  *[a for s in train_settings for a in ("--set", s)]],
        "export": ["export", "--model", p.run],
        "scan": ["scan", "--model", p.run, "--fasta", p.fasta, "--out", p.tracks],
        BF16_STEP: ["scan", "--model", p.run, "--fasta", p.fasta, "--out", p.tracks_bf16,
                    "--precision", "bfloat16"],
        "variants": ["variants", "--model", p.run, "--vcf", p.vcf, "--out", p.variants,
                     "--fasta", p.fasta, "--gff", p.gff],
        "report": ["report", "--model", p.run, "--scan", p.tracks, "--variants", p.variants,
                   "--out", p.report],
    }  # fmt: skip
    return [*CLI, *map(str, commands[step])]


# The launcher between the benchmark and each step: runs the step, then writes its resource
# use (RUSAGE_CHILDREN of a process with one child: that child's own) to the file argv[1].
LAUNCHER = (
    "import json, resource, subprocess, sys\n"
    "rc = subprocess.run(sys.argv[2:]).returncode\n"
    "u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "with open(sys.argv[1], 'w') as f:\n"
    "    json.dump({'maxrss_kb': u.ru_maxrss, 'cpu': u.ru_utime + u.ru_stime, 'rc': rc}, f)\n"
)


def measure_command(command: list[str], log: Path) -> dict:
    """Run ``command`` (stdout and stderr to ``log``) through :data:`LAUNCHER`; its wall
    seconds, peak RSS (GB), CPU seconds and exit code (see the module's docstring)."""
    log.parent.mkdir(parents=True, exist_ok=True)
    usage_file = log.with_name(log.name + ".rusage.json")
    usage_file.unlink(missing_ok=True)
    began = time.perf_counter()
    with open(log, "wb") as handle:
        proc = subprocess.Popen([sys.executable, "-c", LAUNCHER, str(usage_file), *command],
                                stdout=handle, stderr=subprocess.STDOUT, cwd=REPO)  # fmt: skip
        try:
            code = proc.wait()
        except BaseException:
            proc.kill()
            proc.wait()
            raise
    seconds = round(time.perf_counter() - began, 2)
    usage = read_json_or_none(usage_file)
    if usage is None:  # the launcher itself was killed
        return {"seconds": seconds, "peak_rss_gb": 0.0, "cpu_seconds": 0.0,
                "exit_code": code or 1}  # fmt: skip
    return {
        "seconds": seconds,
        "peak_rss_gb": round(usage["maxrss_kb"] / 1024**2, 3),  # ru_maxrss: KB on Linux
        "cpu_seconds": round(usage["cpu"], 2),
        "exit_code": usage["rc"],
    }


def read_json_or_none(path: Path) -> dict | None:
    """A JSON file's content; None when it is not there (files here are written atomically)."""
    try:
        return json.loads(Path(path).read_text())
    except FileNotFoundError:
        return None


def _tail(log: Path, lines: int = 15) -> str:
    try:
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


# -- inputs ---------------------------------------------------------------------------------------

_CODE = np.full(256, 4, dtype=np.uint8)
for _i, _b in enumerate(b"ACGT"):
    _CODE[_b] = _CODE[_b + 32] = _i


def read_fai(fasta: Path) -> list[tuple[str, int, int, int, int]]:
    """Rows of ``FASTA.fai``: name, length, offset, bases a line, bytes a line; the index
    checked against the FASTA first (``Genome``: a stale one is rebuilt, or refused)."""
    from sparling_genomics.genome.fasta import Genome
    from sparling_genomics.genome.fasta_index import fai_path
    from sparling_genomics.genome.fasta_index import read_fai as read_index

    Genome(fasta)
    return [(r.name, r.length, r.offset, r.line_bases, r.line_bytes)
            for r in read_index(fai_path(fasta))]  # fmt: skip


def write_random_snvs(fasta: Path, vcf: Path, n: int, seed: int = 0) -> dict:
    """``n`` SNVs at distinct positions drawn uniformly over the genome (A/C/G/T reference
    bases only; the alternative one of the other three), as a VCF sorted in FASTA order with
    a ``##contig`` line per sequence. Bases are read through the ``.fai`` from a memory map:
    the genome is never loaded."""
    rows = read_fai(fasta)
    lengths = np.array([r[1] for r in rows], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    total = int(lengths.sum())
    if n > total // 2:
        raise ValueError(f"{n:,} SNVs is too many for a {total:,}-base genome")
    genome = np.memmap(fasta, dtype=np.uint8, mode="r")
    rng = np.random.default_rng(seed)
    drawn = np.zeros(0, dtype=np.int64)
    kept = np.zeros(0, dtype=np.int64)
    while len(kept) < n:
        drawn = np.concatenate([drawn, rng.integers(0, total, size=n + 1000)])
        index = np.searchsorted(starts, drawn, side="right") - 1
        pos = drawn - starts[index]
        offsets = np.array([r[2] for r in rows])[index]
        widths = np.array([r[4] for r in rows])[index]
        bases = np.array([r[3] for r in rows])[index]
        codes = _CODE[genome[offsets + pos // bases * widths + pos % bases]]
        _, first = np.unique(drawn, return_index=True)
        valid = np.zeros(len(drawn), dtype=bool)
        valid[first] = True
        kept = np.flatnonzero(valid & (codes < 4))[:n]  # first n distinct A/C/G/T draws
    chosen = np.sort(drawn[kept])
    index = np.searchsorted(starts, chosen, side="right") - 1
    pos = chosen - starts[index]
    offsets = np.array([r[2] for r in rows])[index]
    widths = np.array([r[4] for r in rows])[index]
    per_line = np.array([r[3] for r in rows])[index]
    ref = _CODE[genome[offsets + pos // per_line * widths + pos % per_line]]
    alt = (ref + rng.integers(1, 4, size=len(ref))) % 4
    letters = np.frombuffer(b"ACGT", dtype=np.uint8)
    header = ["##fileformat=VCFv4.2", "##source=sparling-genomics benchmarks scale (random SNVs, "
              f"seed {seed})", f"##reference=file://{Path(fasta).resolve()}"]  # fmt: skip
    header += [f"##contig=<ID={name},length={length}>" for name, length, *_ in rows]
    header.append("#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO")
    names = [r[0] for r in rows]
    body = [f"{names[s]}\t{p + 1}\tsnv{i}\t{chr(letters[r])}\t{chr(letters[a])}\t.\t.\t."
            for i, (s, p, r, a) in enumerate(zip(index, pos, ref, alt))]  # fmt: skip
    write_text_atomic(vcf, "\n".join(header + body) + "\n")
    return {"variants": len(body), "seed": seed, "sequences_hit": int(len(set(index.tolist())))}


def prepare_inputs(paths: SizePaths, bases: int, settings: dict, runner=measure_command) -> dict:
    """The size's genome (made now, or reused when its summary has the same size, seed and
    rate and its files are there: a clone keeps the summary alone) and its random SNVs
    (reused when made for that genome with the same count and seed); what was done and how
    long it took."""
    made: dict = {}
    summary = read_json_or_none(paths.genome_summary)
    files = (paths.fasta, Path(f"{paths.fasta}.fai"), paths.gff)
    same = summary is not None and all(f.is_file() for f in files) and (
        summary.get("requested_bases"), summary.get("seed"), summary.get("requested_rate")
    ) == (bases, settings["seed"], settings["substitution_rate"])
    if not same:
        paths.vcf_summary.unlink(missing_ok=True)  # SNVs of another genome
        command = [sys.executable, str(SCRIPT), "--size", str(bases), "--out",
                   str(paths.genome_dir), "--seed", str(settings["seed"]), "--quiet",
                   "--substitution-rate", str(settings["substitution_rate"])]  # fmt: skip
        measured = runner(command, paths.log("generate"))
        if measured["exit_code"] != 0:
            raise RuntimeError(f"making the {size_label(bases)} genome failed:\n"
                               f"{_tail(paths.log('generate'))}")  # fmt: skip
        summary = read_json_or_none(paths.genome_summary)
        if summary is None:  # a mocked runner in tests writes nothing
            summary = {"bases": bases}
        made["generate"] = measured
    wanted = {"variants": settings["variants"], "seed": settings["seed"]}
    snvs = read_json_or_none(paths.vcf_summary)
    if not (snvs and paths.vcf.is_file() and {k: snvs.get(k) for k in wanted} == wanted):
        began = time.perf_counter()
        snvs = write_random_snvs(paths.fasta, paths.vcf, settings["variants"],
                                 seed=settings["seed"])  # fmt: skip
        snvs["seconds"] = round(time.perf_counter() - began, 2)
        write_json_atomic(paths.vcf_summary, snvs)
        made["vcf"] = snvs
    keep = ("bases", "sequences", "annotated_sequences", "annotated_bases", "genes", "mrnas",
            "substitutions", "substitution_rate", "seconds")  # fmt: skip
    return {"genome": {k: summary[k] for k in keep if k in summary}, **made}


# -- details of a finished step -------------------------------------------------------------------


def step_details(step: str, paths: SizePaths) -> dict:
    """A few figures of a finished step's own summary (what it did, beside what it cost),
    kept apart from the measurement (``variants`` has its own ``seconds``)."""
    try:
        if step == "train":
            m = read_run_json(metrics_path(paths.run), "made by `train`")
            return {k: m.get(k) for k in ("samples_seen", "stopped_by", "wall_seconds")} | {
                "mean_topk": (m.get("e2e") or {}).get("mean_topk")}
        if step in ("scan", BF16_STEP):
            tracks = paths.tracks if step == "scan" else paths.tracks_bf16
            s = read_run_json(tracks / SCAN_SUMMARY, "made by `scan`")
            return {k: s.get(k) for k in ("sequences", "bases", "motifs", "sites",
                                          "scan_seconds", "total_seconds")}  # fmt: skip
        if step == "variants":
            v = read_run_json(paths.variants / VARIANTS_SUMMARY, "made by `variants`")
            return {k: v.get(k) for k in ("counts", "seconds", "alleles_per_second")}
    except Exception as exc:  # details are extras: a missing or changed summary is noted
        return {"details_error": str(exc)[:200]}
    return {}


def site_agreement(bed: Path, other: Path) -> dict:
    """How many sites two scans' BED files share (a site: sequence, start, end, motif and
    strand; scores aside): counts, shared, and the Jaccard index."""

    def keys(path: Path) -> np.ndarray:
        with open(path) as handle:
            rows = [hash("\t".join((f := line.split("\t", 6))[:4] + f[5:6]))
                    for line in handle if not line.startswith(("track", "#", "browser"))]
        return np.unique(np.asarray(rows, dtype=np.int64))

    a, b = keys(bed), keys(other)
    shared = int(len(np.intersect1d(a, b, assume_unique=True)))
    union = len(a) + len(b) - shared
    return {"float32_sites": int(len(a)), "bfloat16_sites": int(len(b)), "shared": shared,
            "jaccard": round(shared / union, 5) if union else 1.0}


# -- the run --------------------------------------------------------------------------------------


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")


def run_scale_benchmark(
    out: Path,
    sizes: list[str],
    *,
    benchmarks_md: Path = Path("BENCHMARKS.md"),
    resume: bool = True,
    variants: int = 100_000,
    seed: int = 0,
    substitution_rate: float = 0.01,
    extra_settings: tuple[str, ...] = (),
    prune: bool = False,
    bfloat16: bool = False,
    command: str | None = None,
    runner: Callable[[list[str], Path], dict] = measure_command,
    prepare: Callable[..., dict] = prepare_inputs,
    log: Callable[[str], None] = print,
) -> Path:
    """Measure every step at every size (skipping those ``bench_scale.json`` has, unless
    ``resume`` is off), and with ``bfloat16`` the smallest size's :data:`BF16_STEP`; the
    JSON path. ``runner`` and ``prepare`` are replaced in tests."""
    out = Path(out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    path = out / JSON_NAME
    train_settings = (*TRAIN_SETTINGS, *extra_settings)
    settings = {"seed": seed, "substitution_rate": substitution_rate, "variants": variants,
                "train": list(train_settings)}  # fmt: skip
    result = read_json_or_none(path) if resume else None
    if result is not None and result.get("settings") != settings:
        raise SystemExit(f"{path}: measured with other settings ({result.get('settings')}); "
                         "rerun with --no-resume, or give another --out")  # fmt: skip
    if result is None:
        result = {"benchmark": "scale", "settings": settings, "sizes": {}}
    result["machine"] = machine_description()
    result["command"] = command or f"python -m benchmarks scale --out {out}"
    labels = [size_label(parse_size(s)) for s in sizes]
    result["requested"] = sorted(set(result.get("requested", [])) | set(labels),
                                 key=parse_size)  # fmt: skip

    def save() -> None:
        write_json_atomic(path, result)
        update_section(benchmarks_md, SECTION, render_markdown(result, path))

    save()
    failed = False
    for label in labels:
        bases = parse_size(label)
        entry = result["sizes"].setdefault(label, {"bases": bases, "steps": {}})
        todo = [s for s in STEPS if s not in entry["steps"]]
        if not todo:
            log(f"{label}: every step measured before (kept)")
            continue
        paths = SizePaths(out / label)
        paths.root.mkdir(parents=True, exist_ok=True)
        log(f"{label}: genome and random SNVs")
        made = prepare(paths, bases, settings, runner=runner)
        entry.update(made)
        if "generate" in made:  # a new genome: nothing measured on the old one stands
            entry["steps"].clear()
        elif "vcf" in made:  # new SNVs: variants (and the report that shows them) again
            entry["steps"].pop("variants", None)
            entry["steps"].pop("report", None)
        todo = [s for s in STEPS if s not in entry["steps"]]
        save()
        for step in todo:
            target = paths.outputs(step)
            if target.is_dir():
                shutil.rmtree(target)
            elif target.exists():
                target.unlink()
            cmd = step_command(step, paths, train_settings)
            log(f"{label}: {step}: {shlex.join(cmd[2:])}")
            measured = runner(cmd, paths.log(step))
            if measured["exit_code"] != 0:
                entry["failed"] = {"step": step, "exit_code": measured["exit_code"],
                                   "log": str(paths.log(step)), "tail": _tail(paths.log(step)),
                                   "when": _now()}  # fmt: skip
                save()
                log(f"{label}: {step} failed (exit {measured['exit_code']}); see "
                    f"{paths.log(step)}")  # fmt: skip
                failed = True
                break
            entry.pop("failed", None)
            entry["steps"][step] = {**measured, "bases": bases, "finished": _now(),
                                    "cpu": result["machine"]["cpu"],
                                    "summary": step_details(step, paths)}  # fmt: skip
            for later in STEPS[STEPS.index(step) + 1 :]:  # they used what this step replaced
                entry["steps"].pop(later, None)
            if step in STEPS[: STEPS.index("scan") + 1]:
                entry.pop(BF16_STEP, None)
            save()
            log(f"{label}: {step}: {measured['seconds']:.1f} s, "
                f"{measured['peak_rss_gb']:.2f} GB peak")  # fmt: skip
        smallest = label == min(labels, key=parse_size)
        if (bfloat16 and smallest and all(s in entry["steps"] for s in STEPS)
                and BF16_STEP not in entry):  # fmt: skip
            target = paths.outputs(BF16_STEP)
            if target.is_dir():
                shutil.rmtree(target)
            cmd = step_command(BF16_STEP, paths, train_settings)
            log(f"{label}: {BF16_STEP}: {shlex.join(cmd[2:])}")
            measured = runner(cmd, paths.log(BF16_STEP))
            if measured["exit_code"] == 0:
                entry[BF16_STEP] = {**measured, "bases": bases, "finished": _now(),
                                    "summary": step_details(BF16_STEP, paths),
                                    "agreement": site_agreement(
                                        paths.tracks / "motif_sites.bed",
                                        paths.tracks_bf16 / "motif_sites.bed")}  # fmt: skip
                save()
            else:
                log(f"{label}: {BF16_STEP} failed (exit {measured['exit_code']}); see "
                    f"{paths.log(BF16_STEP)}")  # fmt: skip
        if prune and all(s in entry["steps"] for s in STEPS):
            for target in (paths.tracks, paths.tracks_bf16, paths.dataset):
                shutil.rmtree(target) if target.is_dir() else target.unlink(missing_ok=True)
            entry["pruned"] = "tracks and dataset removed after measuring"
            save()
    if failed:
        raise SystemExit(f"a step failed: see {path} and the logs; rerun the same command "
                         "to retry it (finished steps are kept)")  # fmt: skip
    return path


# -- analysis -------------------------------------------------------------------------------------


def measured_sizes(result: dict) -> list[tuple[str, dict]]:
    """(label, entry) of every size with at least one step measured, smallest first."""
    rows = [(k, v) for k, v in result.get("sizes", {}).items() if v.get("steps")]
    return sorted(rows, key=lambda kv: kv[1]["bases"])


def growth(result: dict) -> list[dict]:
    """For each step and each pair of sizes measured (consecutive, and smallest to largest):
    the size, time and peak-memory ratios and time per base (larger / smaller)."""
    rows = []
    for step in STEPS:
        have = [(k, v["bases"], v["steps"][step]) for k, v in measured_sizes(result)
                if step in v["steps"]]  # fmt: skip
        pairs = list(zip(have, have[1:]))
        if len(have) > 2:
            pairs.append((have[0], have[-1]))
        for (a, bases_a, ra), (b, bases_b, rb) in pairs:
            size_ratio = bases_b / bases_a
            time_ratio = rb["seconds"] / max(ra["seconds"], 1e-9)
            per_base = time_ratio / size_ratio
            rows.append({"step": step, "from": a, "to": b, "size_ratio": size_ratio,
                         "time_ratio": time_ratio, "per_base_ratio": per_base,
                         "within_linear": per_base <= LINEAR,
                         "memory_ratio": rb["peak_rss_gb"] / max(ra["peak_rss_gb"], 1e-9)})
    return rows


def _ends(result: dict, step: str) -> tuple[tuple[str, dict], tuple[str, dict], bool] | None:
    """(smaller, larger) sizes a floor compares for ``step``: 100M and 1G when both are
    measured (final), else the smallest and largest measured (provisional); None with fewer
    than two."""
    have = [(k, v["steps"][step]) for k, v in measured_sizes(result) if step in v["steps"]]
    if len(have) < 2:
        return None
    named = dict(have)
    if "100M" in named and "1G" in named:
        return ("100M", named["100M"]), ("1G", named["1G"]), True
    return have[0], have[-1], False


def floors(result: dict) -> list[dict]:
    """The issue's floors: each with its measured value and met (True/False; None: not yet
    measured) and whether it is final (judged at the sizes the issue names)."""
    sizes = dict(measured_sizes(result))
    out = []
    gig = sizes.get("1G", {}).get("steps", {}).get("dataset")
    out.append({"floor": "`dataset` at 1 Gb: <= 15 min",
                "value": f"{gig['seconds'] / 60:.1f} min" if gig else "1G not measured",
                "met": None if gig is None else gig["seconds"] <= 15 * 60, "final": bool(gig)})
    out.append({"floor": "`dataset` at 1 Gb: <= 4 GB peak",
                "value": f"{gig['peak_rss_gb']:.2f} GB" if gig else "1G not measured",
                "met": None if gig is None else gig["peak_rss_gb"] <= 4, "final": bool(gig)})
    rates = [(k, v["steps"]["scan"]["bases"] / v["steps"]["scan"]["seconds"] / 1e6)
             for k, v in measured_sizes(result) if "scan" in v["steps"]]  # fmt: skip
    out.append({"floor": "`scan` >= 1 Mb/s (whole scan) at every size",
                "value": ", ".join(f"{k}: {r:.2f} Mb/s" for k, r in rates) or "not measured",
                "met": all(r >= 1 for _, r in rates) if rates else None,
                "final": all(k in dict(rates) for k in REFERENCE_SIZES)})  # fmt: skip
    for step, what in (("scan", "`scan` peak memory flat (within 20%)"),
                       ("variants", "`variants` peak memory flat (within 20%)")):  # fmt: skip
        ends = _ends(result, step)
        if ends is None:
            out.append({"floor": f"{what}, 100 Mb to 1 Gb", "value": "needs two sizes",
                        "met": None, "final": False})  # fmt: skip
            continue
        (a, ra), (b, rb), final = ends
        ratio = rb["peak_rss_gb"] / max(ra["peak_rss_gb"], 1e-9)
        out.append({"floor": f"{what}, 100 Mb to 1 Gb", "final": final, "met": ratio <= FLAT,
                    "value": f"{a} {ra['peak_rss_gb']:.2f} GB -> {b} {rb['peak_rss_gb']:.2f} GB "
                    f"(x{ratio:.2f})"})  # fmt: skip
    ends_rows = [g for g in growth(result) if _is_ends(result, g)]
    if ends_rows:
        slow = [f"{g['step']} x{g['per_base_ratio']:.2f}" for g in ends_rows
                if not g["within_linear"]]  # fmt: skip
        final = all(_ends(result, g["step"])[2] for g in ends_rows)
        out.append({"floor": "every step's time within 20% of linear in genome size",
                    "value": ("time per base, smallest to largest size: all <= x1.20" if not slow
                              else "above x1.20 per base: " + ", ".join(slow)),
                    "met": not slow, "final": final})  # fmt: skip
    else:
        out.append({"floor": "every step's time within 20% of linear in genome size",
                    "value": "needs two sizes", "met": None, "final": False})
    return out


def _is_ends(result: dict, g: dict) -> bool:
    ends = _ends(result, g["step"])
    return ends is not None and (g["from"], g["to"]) == (ends[0][0], ends[1][0])


# -- Markdown -------------------------------------------------------------------------------------


def _cell(r: dict | None) -> str:
    return "-" if r is None else f"{r['seconds']:,.1f} s, {r['peak_rss_gb']:.2f} GB"


def _scan_rate(entry: dict) -> str:
    """The whole scan's bases a second, and its model pass's (from ``scan.json``)."""
    scan = entry["steps"].get("scan")
    if scan is None:
        return "-"
    text = f"{entry['bases'] / scan['seconds'] / 1e6:.2f} Mb/s"
    model = (scan.get("summary") or {}).get("scan_seconds")
    if model:
        text += f" ({entry['bases'] / model / 1e6:.2f} Mb/s)"
    return text


def _verdict(met: bool | None, final: bool) -> str:
    if met is None:
        return "not measured yet"
    word = "**met**" if met else "**not met**"
    return word if final else f"{word} (provisional)"


def render_markdown(result: dict, json_path: Path) -> str:
    """The BENCHMARKS.md section of ``result`` (sizes measured so far, and which are not)."""
    sizes = measured_sizes(result)
    labels = [k for k, _ in sizes]
    if Path(json_path).resolve().is_relative_to(REPO):  # as the repository names it
        json_path = Path(json_path).resolve().relative_to(REPO)
    lines = [
        "## Scale: every verb on 100 Mb, 300 Mb and 1 Gb genomes built from real sequence",
        "",
        f"Machine: {machine_line(result['machine'])}",
        "",
        f"Command: `{result['command']}`. JSON: `{json_path}`. Genomes: "
        "`scripts/make_scale_genome.py` (copies of the bundled TAIR10 chr1 and A. arenosa "
        "chr1-2 with their GFF3, and of two unannotated assemblies as gene-free sequence; ~1% "
        "substitutions per copy). Each step is one `sparling-genomics` process; peak memory is "
        "its own max RSS (read by a small launcher process, see `benchmarks/scale.py`). "
        "`train` has the same sample budget at every size ("
        + ", ".join(f"`{s}`" for s in result["settings"]["train"])
        + f"); `variants` scores {result['settings']['variants']:,} random SNVs at every size.",
    ]
    missing = [k for k in result.get("requested", []) if k not in labels]
    missing += [k for k in REFERENCE_SIZES if k not in labels and k not in missing]
    partial = [(k, [s for s in STEPS if s not in v["steps"]]) for k, v in sizes
               if len(v["steps"]) < len(STEPS)]  # fmt: skip
    notes = []
    if missing:
        notes.append("not measured yet: " + ", ".join(missing))
    if partial:
        notes.append("; ".join(f"{k} lacks {', '.join(s)}" for k, s in partial))
    failed = [(k, v["failed"]) for k, v in result.get("sizes", {}).items() if v.get("failed")]
    notes += [f"{k}: `{f['step']}` failed (exit {f['exit_code']}, log `{f['log']}`)"
              for k, f in failed]  # fmt: skip
    if notes:
        lines += ["", "**Missing:** " + "; ".join(notes) + ". Rerun the command: finished "
                  "steps are kept."]  # fmt: skip
    if not sizes:
        return "\n".join(lines)
    cpus = sorted({s.get("cpu") for _, v in sizes for s in v["steps"].values()} - {None})
    if len(cpus) > 1:
        lines += ["", "Steps ran on more than one CPU: " + "; ".join(cpus) + "."]
    lines += ["", "| step | " + " | ".join(labels) + " |", "|---|" + "---|" * len(labels)]
    lines.append("| genome | " + " | ".join(
        f"{v['bases']:,} bases, {v.get('genome', {}).get('sequences', '-')} sequence(s), "
        f"{100 * v.get('genome', {}).get('annotated_bases', 0) / v['bases']:.0f}% annotated, "
        f"{v.get('genome', {}).get('genes', 0):,} genes" for _, v in sizes) + " |")  # fmt: skip
    for step in STEPS:
        lines.append(f"| `{step}` | " + " | ".join(_cell(v["steps"].get(step))
                                                     for _, v in sizes) + " |")  # fmt: skip
    lines.append("| `scan` rate (model pass alone) | " + " | ".join(
        _scan_rate(v) for _, v in sizes) + " |")  # fmt: skip
    for k, v in sizes:
        fast = v.get(BF16_STEP)
        if fast:
            agree = fast["agreement"]
            lines += ["", f"`scan --precision bfloat16` at {k}: {_cell(fast)}, "
                      f"{fast['bases'] / fast['seconds'] / 1e6:.2f} Mb/s whole "
                      f"(float32: {_scan_rate(v)}); {agree['bfloat16_sites']:,} sites against "
                      f"float32's {agree['float32_sites']:,}, {agree['shared']:,} shared "
                      f"(Jaccard {agree['jaccard']:.4f})."]  # fmt: skip
    rows = growth(result)
    if rows:
        lines += ["", "Growth (larger size / smaller): time per base <= x1.20 is within 20% of "
                  "linear (or better); memory <= x1.20 is flat. Expected: "
                  + ", ".join(f"`{s}` grows with the genome" for s in GROWING) + "; "
                  + ", ".join(f"`{s}` {why}" for s, why in FIXED.items()) + ".", "",
                  "| step | sizes | bases x | time x | time per base x | within 20% of linear "
                  "| peak memory x |", "|---|---|---|---|---|---|---|"]  # fmt: skip
        for g in rows:
            lines.append(f"| `{g['step']}` | {g['from']} -> {g['to']} | {g['size_ratio']:.2f} | "
                         f"{g['time_ratio']:.2f} | {g['per_base_ratio']:.2f} | "
                         f"{'yes' if g['within_linear'] else '**no**'} | "
                         f"{g['memory_ratio']:.2f} |")  # fmt: skip
    lines += ["", "Floors (issue 55; provisional until both 100 Mb and 1 Gb are measured):", "",
              "| floor | measured | verdict |", "|---|---|---|"]
    for f in floors(result):
        lines.append(f"| {f['floor']} | {f['value']} | {_verdict(f['met'], f['final'])} |")
    return "\n".join(lines)
