# sparling-genomics: genome in -> motifs, logos, browser tracks and a report out.
#
#   snakemake --cores 2                               # default config: TAIR10 chr1, <= 60 min
#   snakemake --cores 8 --configfile my.yaml          # your genome (pipelines/config/README.md)
#   snakemake --profile pipelines/profiles/slurm      # on a SLURM cluster, GPUs per rule
#
# The layout of the Snakemake workflow catalogue, with `pipelines/` as its `workflow/` +
# `config/`: rules/ (common.smk holds the functions), envs/, schemas/, config/ (+ README.md),
# profiles/. Every rule calls the `sparling-genomics` command; logs go to logs/, timings to
# timings/ (Snakemake `benchmark:` files), both mirroring results/.
from snakemake.utils import min_version, validate

min_version("9.0")


# The default config unless the user gave one (a --configfile is merged *over* this directive's
# file, so loading both would add the default genome to the user's).
if not config.get("genomes"):

    configfile: f"{workflow.basedir}/pipelines/config/default.yaml"


validate(config, "pipelines/schemas/config.schema.yaml")


# A job's folder is <outdir>/<run path>/seed<S>: the run path is `<genome>/<run>`, or `<run>`
# for a task without a genome (`planted`).
wildcard_constraints:
    genome=r"[^/]+",
    run=r"[^/]+(?:/[^/]+)?",
    seed=r"\d+",
    model=r"sparling|baseline",
    applied=r"[^/]+",


include: "pipelines/rules/common.smk"
include: "pipelines/rules/dataset.smk"
include: "pipelines/rules/train.smk"
include: "pipelines/rules/motifs.smk"
include: "pipelines/rules/apply.smk"


# Cheap rules run by Snakemake itself, never submitted to a cluster.
localrules:
    all,
    compare,


rule all:
    """Every job's report, and so every output before it."""
    default_target: True
    input:
        job_targets(),
