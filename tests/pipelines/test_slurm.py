"""The SLURM profile: what it asks for per rule (always), and the tiny pipeline through it on
a real one-node SLURM (`scripts/slurm_local.sh`) with a training job killed and retried.

The second installs and starts system daemons (root) and takes about 3 minutes on 2 cores, so
it runs only with SPARLING_SLURM_TESTS=1. Its profile is the repository's with the two
placeholders filled in (account `sparling`, which the script creates; the partitions `cpu` and
`gpu` exist as named) and memory requests capped at what this node has; its sacct lines and
timings go to build/test-artifacts/slurm/run.md.
"""

import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO

SCRIPT = REPO / "scripts" / "slurm_local.sh"
PROFILE = REPO / "pipelines" / "profiles" / "slurm" / "config.yaml"
TINY_CONFIG = REPO / "pipelines" / "config" / "tiny.yaml"
SNAKEMAKE = Path(sys.executable).with_name("snakemake")
ARTIFACTS = Path(os.environ.get("SPARLING_TEST_ARTIFACTS", REPO / "build" / "test-artifacts"))
ACCOUNT = "sparling"  # the account scripts/slurm_local.sh creates
RUN_ID = re.compile(r"SLURM run ID: (\S+)")  # the plugin's job name for all the run's jobs
SACCT_FIELDS = "JobID,Partition,Account,AllocCPUS,ReqMem,AllocTRES%60,State,Elapsed,Comment%80"


def _skip_reason():
    if os.environ.get("SPARLING_SLURM_TESTS") != "1":
        return ("starts a one-node SLURM (scripts/slurm_local.sh, root) and runs the tiny "
                "pipeline through it (minutes): set SPARLING_SLURM_TESTS=1")  # fmt: skip
    if os.geteuid() != 0:
        return "scripts/slurm_local.sh needs root (it installs and starts the SLURM daemons)"
    if shutil.which("sbatch") is None and shutil.which("apt-get") is None:
        return "SLURM is not installed and there is no apt-get to install it"
    if not SNAKEMAKE.exists():
        return "snakemake not installed"
    try:
        import snakemake_executor_plugin_slurm  # noqa: F401
    except ImportError:
        return "snakemake-executor-plugin-slurm not installed"
    return None


needs_slurm = pytest.mark.skipif(_skip_reason() is not None, reason=str(_skip_reason()))


def _run(*cmd, timeout=120):
    return subprocess.run(list(map(str, cmd)), capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def slurm():
    """A running one-node SLURM; stopped afterwards unless it was running before."""
    was_up = _run("bash", SCRIPT, "--status").returncode == 0
    started = _run("bash", SCRIPT, timeout=1200)  # the first time installs the packages
    assert started.returncode == 0, started.stdout[-3000:] + started.stderr[-3000:]
    yield started.stdout
    if not was_up:
        stopped = _run("bash", SCRIPT, "--stop")
        assert stopped.returncode == 0, stopped.stderr


def _profile(folder: Path) -> Path:
    """The repository's profile, placeholders filled in, memory capped at half the node's
    (one GPU job and a CPU job fit), status polled every few seconds (tiny jobs)."""
    node_mb = int(_run("sinfo", "-h", "-o", "%m").stdout.split()[0].rstrip("+"))
    profile = yaml.safe_load(PROFILE.read_text())
    profile["default-resources"]["slurm_account"] = ACCOUNT
    for resources in (profile["default-resources"], *profile["set-resources"].values()):
        if "mem_mb" in resources:
            resources["mem_mb"] = min(resources["mem_mb"], node_mb // 2)
    profile["slurm-init-seconds-before-status-checks"] = 2
    profile["latency-wait"] = 5
    folder.mkdir()
    (folder / "config.yaml").write_text(yaml.safe_dump(profile))
    return folder


def _rules():
    """Rule -> (its `threads:`, whether it declares `gpu=1`), from the rule files (train's
    threads come from the config: tiny has 1)."""
    rules = {}
    for smk in (REPO / "pipelines" / "rules").glob("*.smk"):
        for block in re.split(r"^rule ", smk.read_text(), flags=re.M)[1:]:
            threads = re.search(r"^    threads: (\d+)$", block, flags=re.M)
            rules[block.split(":")[0]] = (
                int(threads.group(1)) if threads else None,
                re.search(r"^        gpu=1,$", block, flags=re.M) is not None,
            )
    rules["train"] = (yaml.safe_load(TINY_CONFIG.read_text())["runs"]["splicing"]["threads"],
                      rules["train"][1])  # fmt: skip
    return rules


def _sacct(run_id, since):
    out = _run("sacct", "-X", "-P", "-n", "--name", run_id, "-S", since,
               f"--format={SACCT_FIELDS}").stdout  # fmt: skip
    names = [f.split("%")[0] for f in SACCT_FIELDS.split(",")]
    return [dict(zip(names, line.split("|"))) for line in out.splitlines() if line]


def _rule(row):
    return re.match(r"rule_(.+?)(?:_wildcards_|$)", row["Comment"]).group(1)


def _training_process(job_id):
    """The pid of the `sparling-genomics train` process that SLURM job `job_id` runs, if any."""
    for proc in Path("/proc").iterdir():
        try:
            cmdline = (proc / "cmdline").read_bytes().split(b"\0")
            environ = (proc / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"sparling_genomics.cli" in cmdline and b"train" in cmdline and (
            f"SLURM_JOB_ID={job_id}".encode() in environ
        ):  # fmt: skip
            return int(proc.name)
    return None


def _kill_a_training_job(proc, lines, workdir):
    """Wait for a training job that has started writing its run folder, and SIGKILL its
    training process (as the OOM killer would; SLURM records the job FAILED); return (the
    run's SLURM job name, the job's id). Not `scancel`: sacct then says "CANCELLED by 0",
    which the locked plugin (2.8.0) does not take for a failure -- Snakemake would wait on
    the job for ever (pipelines/profiles/README.md)."""
    deadline = time.monotonic() + 600
    while proc.poll() is None and time.monotonic() < deadline:
        time.sleep(1)
        found = [m.group(1) for line in list(lines) if (m := RUN_ID.search(line))]
        if not found:
            continue
        queue = _run("squeue", "-h", "--name", found[0], "-o", "%i|%T|%k").stdout
        for job_id, state, comment in (row.split("|") for row in queue.splitlines()):
            model = comment.rpartition("_")[2]  # rule_train_wildcards_<run>_<seed>_<model>
            folder = workdir / "results" / "tiny" / "splicing" / "seed0" / model
            pid = _training_process(job_id) if comment.startswith("rule_train_") else None
            if state == "RUNNING" and pid and (folder / "train_log.jsonl").is_file():
                os.kill(pid, signal.SIGKILL)
                return found[0], job_id
    return None, None


def test_profile_asks_one_gpu_per_gpu_rule_and_lets_threads_set_the_cpus():
    """Every rule declaring `gpu=1` goes to the GPU partition with that one request (no `gres`
    beside it: the plugin would send both); no CPU count overrides the rules' threads."""
    profile = yaml.safe_load(PROFILE.read_text())
    rules = _rules()
    assert set(profile["set-resources"]) <= set(rules)
    for rule, (_, gpu) in rules.items():
        resources = {**profile["default-resources"], **profile["set-resources"].get(rule, {})}
        assert resources["slurm_partition"] == ("gpu" if gpu else "cpu"), rule
        assert not {"gres", "gpu", "cpus_per_task", "cpus_per_gpu"} & set(resources), rule
    assert "slurm_account" not in profile["default-resources"]  # a commented placeholder


@needs_slurm
def test_tiny_pipeline_runs_through_slurm_and_a_killed_job_is_retried(slurm, tmp_path):
    profile = _profile(tmp_path / "profile")
    workdir = tmp_path / "work"
    cmd = [SNAKEMAKE, "-s", REPO / "Snakefile", "-d", workdir, "--profile", profile,
           "--configfile", TINY_CONFIG]  # fmt: skip
    since = time.strftime("%Y-%m-%dT%H:%M:%S")
    start = time.monotonic()
    proc = subprocess.Popen(list(map(str, cmd)), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True,
                            env=dict(os.environ, OMP_NUM_THREADS="1"))  # fmt: skip
    lines = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stdout), daemon=True)
    reader.start()
    try:
        run_id, killed_id = _kill_a_training_job(proc, lines, workdir)
        proc.wait(timeout=1200)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait()
    reader.join(timeout=10)
    wall = time.monotonic() - start
    output = "".join(lines)
    assert killed_id, "no training job was seen running\n" + output[-3000:]
    assert proc.returncode == 0, output[-5000:]
    assert (workdir / "results" / "tiny" / "splicing" / "seed0" / "report.html").is_file()

    rows = _sacct(run_id, since)
    record = [f"wall time: {wall:.0f} s", f"command: {shlex.join(map(str, cmd))}",
              f"killed: {killed_id}", SACCT_FIELDS.replace(",", "|"),
              *("|".join(row.values()) for row in rows)]  # fmt: skip
    (ARTIFACTS / "slurm").mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "slurm" / "run.md").write_text("\n".join(record) + "\n")
    record = "\n".join(record)

    # The killed job was submitted again and finished; every other job finished once.
    (killed,) = [r for r in rows if r["JobID"] == killed_id]
    assert killed["State"] == "FAILED", record
    again = [r for r in rows if r["Comment"] == killed["Comment"] and r is not killed]
    assert [r["State"] for r in again] == ["COMPLETED"], record
    assert all(r["State"] == "COMPLETED" for r in rows if r is not killed), record
    assert {_rule(r) for r in rows} == {"dataset", "train", "export", "scan", "report"}, record
    rules = _rules()
    for row in rows:
        threads, gpu = rules[_rule(row)]
        assert row["Account"] == ACCOUNT, row
        # One GPU for the GPU rules, in the GPU partition; the CPUs are the rule's threads.
        assert row["Partition"] == ("gpu" if gpu else "cpu"), row
        assert ("gres/gpu=1" in row["AllocTRES"]) == gpu, row
        assert int(row["AllocCPUS"]) == threads, row
