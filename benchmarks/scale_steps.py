"""The scale benchmark's steps: where one size's files live, each step's command line, how one
step is measured (its wall time and its own peak memory) and what a finished step did.

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
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sparling_genomics.rundir import (
    SCAN_SUMMARY,
    VARIANTS_SUMMARY,
    metrics_path,
    motifs_dir,
    read_run_json,
    report_path,
)

REPO = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "sparling_genomics.cli"]
STEPS = ("dataset", "train", "export", "scan", "variants", "report")
# Measured at the smallest size only, after its steps: the scan again with bfloat16 arithmetic
# (``scan --precision bfloat16``), its time and its sites' agreement with the float32 scan.
BF16_STEP = "scan_bfloat16"
GENOME_NAME = "genome"


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


def log_tail(log: Path, lines: int = 15) -> str:
    """The last ``lines`` lines of a step's log ('' when it cannot be read)."""
    try:
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


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


