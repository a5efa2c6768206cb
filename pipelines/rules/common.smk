# Shared by the workflow: the config turned into jobs, paths, and the pre-flight checks.
import shlex
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError

OUT = Path(config["outdir"])
# The command, run by the Python that runs Snakemake (so no PATH set-up is needed).
SG = f"{shlex.quote(sys.executable)} -m sparling_genomics.cli"


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


_check_config()


# One job set per (run, seed): results/<genome>/<run>/seed<S>/...
JOBS = [
    (name, run["genome"], seed)
    for name, run in config["runs"].items()
    for seed in run["seeds"]
]


def job_dir(name, genome, seed):
    return OUT / genome / name / f"seed{seed}"


def run_of(wildcards):
    return config["runs"][wildcards.run]


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
    return shlex.join(args)


def genome_fasta(genome):
    g = config["genomes"][genome]
    if g.get("fasta"):
        return g["fasta"]
    from sparling_genomics.genome.references import load_reference

    return str(load_reference(g["reference"]).fasta)


def train_args(wildcards, baseline=False):
    run = run_of(wildcards)
    minutes = run["baseline_minutes"] if baseline else run["train_minutes"]
    sets = [f"model.motif_channels={run['motifs']}", f"train.max_seconds={60 * minutes}",
            f"train.threads={run['threads']}", *run["set"]]
    args = ["--task", run["task"], "--preset", run["preset"], "--seed", wildcards.seed]
    for s in sets:
        args += ["--set", s]
    if baseline:
        args.append("--baseline")
    return shlex.join(args)


def jaspar_args():
    j = config["jaspar"]
    return shlex.join(["--jaspar-release", j["release"], "--jaspar-collection", j["collection"],
                       "--jaspar-tax-group", j["tax_group"]])


def job_targets():
    out = []
    if config["planted"]["enabled"]:
        out += [str(OUT / "planted" / f"seed{s}" / "report.html") for s in config["planted"]["seeds"]]
    for name, genome, seed in JOBS:
        d = job_dir(name, genome, seed)
        out += [d / "report.html", d / "metrics.json", d / "sparling" / "motifs" / "motifs.json"]
        if config["runs"][name]["scan"]:
            out.append(d / "sparling" / "tracks" / "scan.json")
    return [str(p) for p in out]


def compare_inputs(wc):
    d = OUT / wc.genome / wc.run / f"seed{wc.seed}"
    out = {"sparling": d / "sparling" / "metrics.json"}
    if config["runs"][wc.run]["baseline"]:
        out["baseline"] = d / "baseline" / "metrics.json"
    return out


def report_inputs(wc):
    d = OUT / wc.genome / wc.run / f"seed{wc.seed}"
    out = {"metrics": d / "metrics.json", "motifs": d / "sparling" / "motifs" / "motifs.json"}
    if config["runs"][wc.run]["scan"]:
        out["scan"] = d / "sparling" / "tracks" / "scan.json"
    if config["runs"][wc.run]["baseline"]:
        out["baseline"] = d / "baseline" / "metrics.json"
    return out
