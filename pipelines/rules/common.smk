# The functions the rule files share (those files hold only rules), in four parts -- the
# paths of every job, the config turned into runs (with the pre-flight checks), the rules'
# inputs and arguments, the targets.
import functools
import re
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path

from snakemake.exceptions import WorkflowError

# The three folders a job writes to: its outputs, its logs, its timings (Snakemake `benchmark:`).
OUT = Path(config["outdir"])
LOGS = Path("logs")
# timings/, not Snakemake's usual benchmarks/: that is the repository's benchmark package.
BENCHMARKS = Path("timings")
# The command, run by the Python that runs Snakemake (so no PATH set-up is needed).
SG = f"{shlex.quote(sys.executable)} -m sparling_genomics.cli"


# ---------------------------------------------------------------------------------------------
# Paths: the only place a folder layout is spelled. Rules build their outputs, logs and
# benchmarks with these; inputs name the upstream rule's output (`rules.X.output.Y`).


def genome_path(*parts, root=OUT, genome="{genome}"):
    """<root>/<genome>/<parts>: a file made once per genome (the dataset, its log)."""
    return str(Path(root, genome, *parts))


def job_path(*parts, root=OUT, run="{run}", seed="{seed}"):
    """<root>/<run path>/seed<S>/<parts>: a file of one job (one run, one seed).

    `root` is OUT (results), LOGS or BENCHMARKS; `run` is a run's `path` (`<genome>/<name>`,
    or `<name>` for a task without a genome); both default to the rules' wildcards.
    """
    return str(Path(root, run, f"seed{seed}", *parts))


def applied_path(*parts, root=OUT, genome="{genome}", applied="{applied}"):
    """<root>/<genome>/applied/<applied>/<parts>: a file of a trained model applied to a
    genome (`apply:`)."""
    return str(Path(root, genome, "applied", applied, *parts))


def run_path(*parts, root=OUT, run="{run}"):
    """<root>/<run path>/<parts>: a file made once per run over all its seeds (seed
    stability)."""
    return str(Path(root, run, *parts))


def fill(pattern, wildcards, **values):
    """The path of `pattern` (another rule's output) for this job's wildcards (+ `values`)."""
    return expand(pattern, **{**dict(wildcards.items()), **values})[0]


# ---------------------------------------------------------------------------------------------
# Runs: a run is (task, genome or none, preset, seeds, options). `runs:` entries and the
# `planted:` target both become one; every rule reads what differs from the run.


@dataclass(frozen=True)
class Run:
    """One model setting, trained once per seed; the rules' `{run}` wildcard is its `path`."""

    name: str
    task: str
    genome: str | None  # None: the task makes its own data (no dataset, nothing to scan)
    preset: str
    seeds: tuple[int, ...]
    threads: int
    title: str  # report title, "{seed}" filled in per job
    baseline: bool = False  # also train the non-sparse baseline
    scan: bool = False  # scan the genome for motif sites
    scan_jobs: int = 1  # jobs the scan is scattered over (1: one scan job)
    # `export` names motifs against config["jaspar"] (False: the release the task planted from)
    jaspar: bool = False
    sets: dict = field(default_factory=dict)  # model folder -> `train --set` overrides
    runtime: dict = field(default_factory=dict)  # model folder -> minutes a cluster allows
    diagnostics: int = 0  # keep the Sparling model's weights every N samples; diagnose them

    @property
    def path(self):
        return f"{self.genome}/{self.name}" if self.genome else self.name

    @property
    def models(self):
        """Model folders of a job: the Sparling model, and the baseline if asked for."""
        return ("sparling", "baseline") if self.baseline else ("sparling",)


def _genome_run(name, run):
    """A `runs:` entry: a task on a genome's dataset, within a wall-clock budget."""
    sets, runtime = {}, {}
    for model, minutes in (("sparling", run["train_minutes"]),
                           ("baseline", run["baseline_minutes"])):  # fmt: skip
        sets[model] = (f"model.motif_channels={run['motifs']}",
                       f"train.max_seconds={60 * minutes}",
                       f"train.threads={run['threads']}", *run["set"])  # fmt: skip
        runtime[model] = int(minutes) + 15
    if run["diagnostics"]:
        sets["sparling"] += (f"train.keep_checkpoints_every={run['diagnostics']}",)
    jobs = scan_job_count(run["genome"], run["scan_jobs"], run.get("scan_job_bases"),
                          f"runs.{name}")  # fmt: skip
    return Run(name=name, task=run["task"], genome=run["genome"], preset=run["preset"],
               seeds=tuple(run["seeds"]), threads=run["threads"],
               title=f"{name} on {run['genome']}, seed {{seed}}", baseline=run["baseline"],
               scan=run["scan"], scan_jobs=jobs, jaspar=True, sets=sets,
               runtime=runtime,
               diagnostics=run["diagnostics"])  # fmt: skip


def genome_fasta(genome):
    g = config["genomes"][genome]
    if g.get("fasta"):
        return g["fasta"]
    from sparling_genomics.genome.references import load_reference

    return str(load_reference(g["reference"]).fasta)


def scan_job_count(genome, jobs, job_bases, where):
    """Jobs a genome's scan is scattered over: `scan_jobs`, or with `scan_job_bases` one job
    per that many bases of the genome, rounded up (its FASTA's lengths, read at planning);
    a plan of jobs smaller than the scan's chunk, of empty jobs or of too many is refused with
    the number it would make (`export.scan_plan`)."""
    from sparling_genomics.errors import ConfigError
    from sparling_genomics.export.scan_plan import scan_jobs

    if job_bases is None and jobs == 1:
        return 1
    if job_bases is not None and jobs != 1:
        raise WorkflowError(f"config: {where}: give scan_jobs or scan_job_bases, not both")
    try:
        return scan_jobs(genome_bases(genome), jobs=None if job_bases else jobs,
                         job_bases=job_bases, genome=genome)  # fmt: skip
    except ConfigError as exc:
        raise WorkflowError(f"config: {where}: {exc}") from None


@functools.lru_cache(maxsize=None)
def genome_bases(genome):
    """The bases of a `genomes` entry's FASTA (its index; a gzipped FASTA is streamed), read
    once per planning."""
    from sparling_genomics.genome.fasta import fasta_bases

    return fasta_bases(Path(genome_fasta(genome)))


def _planted_run(planted):
    """The `planted:` target: the planted-motif task at its preset's settings (known truth)."""
    every = planted["diagnostics"]
    return Run(name="planted", task="planted", genome=None, preset=planted["preset"],
               seeds=tuple(planted["seeds"]), threads=planted["threads"],
               title="Planted motifs, seed {seed}", diagnostics=every,
               sets={"sparling": (f"train.keep_checkpoints_every={every}",)} if every else {})  # fmt: skip


def _runs():
    runs = [_genome_run(name, run) for name, run in config["runs"].items()]
    if config["planted"]["enabled"]:
        runs.append(_planted_run(config["planted"]))
    return {run.path: run for run in runs}


def _check_config():
    """Cross-key checks the schema cannot express, then the genomes' files themselves."""
    from sparling_genomics.errors import SparlingError
    from sparling_genomics.genome.check import check_genome_inputs

    for name, run in config["runs"].items():
        if run["genome"] not in config["genomes"]:
            known = ", ".join(config["genomes"])
            raise WorkflowError(
                f"config: runs.{name}.genome: {run['genome']!r} is not a key of genomes "
                f"({known})"
            )
    for name, genome in config["genomes"].items():
        try:
            check_genome_inputs(
                reference=genome.get("reference"),
                fasta=genome.get("fasta"),
                gff=genome.get("gff"),
                bed=genome.get("bed"),
                chrom_aliases=genome.get("chrom_aliases"),
                skip_unknown_sequences=genome.get("skip_unknown_sequences", False),
            )
        except SparlingError as exc:
            raise WorkflowError(f"config: genomes.{name}: {exc}") from None


@dataclass(frozen=True)
class Applied:
    """`apply:` -- a trained Sparling model (its folder, and the files that show it is
    finished and exported) put on other genomes; the rules' `{applied}` wildcard is `name`."""

    name: str
    model: str  # the run folder
    genomes: tuple[str, ...]
    scan: bool
    scan_jobs: dict  # genome -> jobs its scan is scattered over
    title: str
    needs: tuple[str, ...]  # the model's metrics.json and motifs.json (pipeline outputs or not)


def _applied():
    """The `apply:` entry checked: genomes known, the model a `runs` key (and seed) or a
    finished, exported run folder; None when the config has none."""
    from sparling_genomics.rundir import MOTIFS_SUMMARY, metrics_path, motifs_dir

    spec = config.get("apply")
    if not spec:
        return None
    for genome in spec["genomes"]:
        if genome not in config["genomes"]:
            known = ", ".join(config["genomes"])
            raise WorkflowError(
                f"config: apply.genomes: {genome!r} is not a key of genomes ({known})"
            )
    model = str(spec["model"])
    if model in config["runs"]:
        run = config["runs"][model]
        seeds = run.get("seeds", [0])
        seed = spec.get("seed", seeds[0])
        if seed not in seeds:
            raise WorkflowError(
                f"config: apply.seed: {seed} is not one of runs.{model}.seeds ({seeds})"
            )
        folder = job_path("sparling", run=f"{run['genome']}/{model}", seed=seed)
        name = spec.get("name") or f"{model}_seed{seed}"
        title = f"{model} (seed {seed}, trained on {run['genome']})"
    else:
        path = Path(model)
        if not metrics_path(path).is_file():
            raise WorkflowError(
                f"config: apply.model: {model!r} is neither a key of runs nor a finished run "
                f"folder (no {metrics_path(path)})"
            )
        if not (motifs_dir(path) / MOTIFS_SUMMARY).is_file():
            raise WorkflowError(
                f"config: apply.model: {model}: its motifs are not exported (no "
                f"{motifs_dir(path) / MOTIFS_SUMMARY}); run `sparling-genomics export "
                f"--model {model}` first"
            )
        folder = str(path)
        name = spec.get("name") or path.name
        title = f"{path.name} ({model})"
    if re.fullmatch(r"seed\d+", name) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", name):
        raise WorkflowError(
            f"config: apply.name: {name!r} cannot name a folder under applied/; set apply.name"
        )
    needs = (str(metrics_path(Path(folder))), str(motifs_dir(Path(folder)) / MOTIFS_SUMMARY))
    jobs = {genome: scan_job_count(genome, spec.get("scan_jobs", 1),
                                   spec.get("scan_job_bases"), "apply")
            for genome in spec["genomes"]}  # fmt: skip
    return Applied(name=name, model=folder, genomes=tuple(spec["genomes"]),
                   scan=spec.get("scan", True), scan_jobs=jobs, title=title,
                   needs=needs)  # fmt: skip


_check_config()
RUNS = _runs()
APPLIED = _applied()


def run_of(wildcards):
    return RUNS[wildcards.run]


# ---------------------------------------------------------------------------------------------
# Inputs and arguments of the rules, from the run's properties.


def genome_source_args(wildcards):
    g = config["genomes"][wildcards.genome]
    if g.get("reference"):
        args = ["--reference", g["reference"]]
    else:
        args = ["--fasta", g["fasta"]]
        args += ["--gff", g["gff"]] if g.get("gff") else ["--bed", g["bed"]]
    if g.get("chrom_aliases"):
        args += ["--chrom-aliases", g["chrom_aliases"]]
    if g.get("skip_unknown_sequences"):
        args += ["--skip-unknown-sequences"]
    if not g.get("bed"):
        args += ["--labels", ",".join(g["labels"]), "--transcripts", g["transcripts"]]
    args += ["--split", g["split"]]
    for key in ("test_sequences", "val_sequences"):
        if g.get(key):
            args += [f"--{key.replace('_', '-')}", ",".join(g[key])]
    return shlex.join(args)


def train_inputs(wildcards):
    """The genome's dataset; nothing for a task that makes its own data."""
    genome = run_of(wildcards).genome
    return {"dataset": fill(rules.dataset.output.h5, wildcards, genome=genome)} if genome else {}


def train_args(wildcards, input):
    run = run_of(wildcards)
    args = ["--task", run.task, "--preset", run.preset, "--seed", wildcards.seed]
    for s in run.sets.get(wildcards.model, ()):
        args += ["--set", s]
    if wildcards.model == "baseline":
        args.append("--baseline")
    if "dataset" in input.keys():
        args += ["--dataset", input.dataset]
    return shlex.join(args)


def train_runtime(wildcards):
    """Minutes a cluster should allow (budget + 15); None: the profile's default."""
    return run_of(wildcards).runtime.get(wildcards.model)


def compare_inputs(wildcards):
    return {model: fill(rules.train.output.metrics, wildcards, model=model)
            for model in run_of(wildcards).models}  # fmt: skip


def compare_args(wildcards, input):
    """The job's models: `--model SPARLING [--baseline BASELINE]` (their run folders)."""
    args = ["--model", str(Path(input.sparling).parent)]
    if "baseline" in input.keys():
        args += ["--baseline", str(Path(input.baseline).parent)]
    return shlex.join(args)


def export_args(wildcards):
    """Name motifs against the config's JASPAR collection, or (planted) the planted release."""
    if not run_of(wildcards).jaspar:
        return ""
    j = config["jaspar"]
    return shlex.join(["--jaspar-release", j["release"], "--jaspar-collection", j["collection"],
                       "--jaspar-tax-group", j["tax_group"]])  # fmt: skip


def stability_inputs(wildcards):
    """The exported motifs of every seed of the run."""
    return [fill(rules.export.output.summary, wildcards, seed=seed)
            for seed in run_of(wildcards).seeds]  # fmt: skip


def stability_args(wildcards, input):
    """`--model RUN` per seed (the Sparling run folders above their motifs/)."""
    return shlex.join([a for path in input for a in ("--model", str(Path(path).parents[1]))])


def report_inputs(wildcards):
    run = run_of(wildcards)
    out = {
        "metrics": fill(rules.compare.output.metrics, wildcards),
        "motifs": fill(rules.export.output.summary, wildcards),
    }
    table = stability_table(wildcards)
    if table:  # each seed's report shows which families recur in every seed
        out["stability"] = table[0]
    if run.scan:
        out["scan"] = fill(rules.scan.output.summary, wildcards)
    if run.baseline:
        out["baseline"] = fill(rules.train.output.metrics, wildcards, model="baseline")
    if run.diagnostics:  # report reads RUN/diagnostics/ when it is there
        out["diagnostics"] = fill(rules.diagnose.output.summary, wildcards)
    return out


def report_args(wildcards, input):
    args = ["--model", str(Path(input.motifs).parents[1])]
    if "scan" in input.keys():
        args += ["--scan", str(Path(input.scan).parent)]
    if "baseline" in input.keys():
        args += ["--baseline", str(Path(input.baseline).parent)]
    if "stability" in input.keys():
        args += ["--stability", input.stability]
    args += ["--title", run_of(wildcards).title.format(seed=wildcards.seed)]
    return shlex.join(args)


def applied_inputs(wildcards):
    """The applied model's finished files (made here when it is a `runs` key) and the genome's
    dataset."""
    return {"model": list(APPLIED.needs),
            "dataset": fill(rules.dataset.output.h5, wildcards)}  # fmt: skip


def applied_report_inputs(wildcards):
    out = {"model": list(APPLIED.needs),
           "metrics": fill(rules.apply_evaluate.output.metrics, wildcards)}  # fmt: skip
    if APPLIED.scan:
        out["scan"] = fill(rules.apply_scan.output.summary, wildcards)
    return out


def applied_report_args(wildcards, input):
    args = ["--model", APPLIED.model, "--evaluation", input.metrics]
    if "scan" in input.keys():
        args += ["--scan", str(Path(input.scan).parent)]
    args += ["--title", f"{APPLIED.title} applied to {wildcards.genome}"]
    return shlex.join(args)


def job_targets():
    """Every job's report (it needs every other output of its job), and every applied
    genome's."""
    jobs = [path for run in RUNS.values()
            for path in expand(rules.report.output.html, run=run.path, seed=run.seeds)]  # fmt: skip
    if APPLIED is not None:
        jobs += expand(rules.apply_report.output.html, genome=APPLIED.genomes,
                       applied=APPLIED.name)  # fmt: skip
    return jobs


# ---------------------------------------------------------------------------------------------
# A scattered scan (`scan_jobs` > 1): N jobs of about equal bases, then one gather.

PART = "part-{part}-of-{parts}.npz"  # `scan --part I/N` writes OUT/parts/<this>


def scan_parts(pattern, jobs, wildcards):
    """The part files a gather reads (`pattern`: the parts' path with {part} and {parts})."""
    if jobs <= 1:
        return []
    return [fill(pattern, wildcards, part=f"{i:04d}", parts=f"{jobs:04d}")
            for i in range(1, jobs + 1)]  # fmt: skip


def gather_args(jobs):
    """`--gather N` for a scattered scan, nothing for one scan job."""
    return f"--gather {jobs}" if jobs > 1 else ""


def stability_table(wildcards):
    """A run with several seeds: its stability JSON (each seed's report shows it; each seed's
    sites carry their consensus family, `scan --stability`); none for one seed."""
    if len(run_of(wildcards).seeds) < 2:
        return []
    return [fill(rules.stability.output.table, wildcards)]


def scan_stability_args(wildcards, input):
    return shlex.join(["--stability", str(input.stability)]) if input.stability else ""
