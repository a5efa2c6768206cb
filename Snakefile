# sparling-genomics: genome in -> motifs, logos, browser tracks and a report out.
#
#   snakemake --cores 2                               # default config: TAIR10 chr1, <= 60 min
#   snakemake --cores 8 --configfile my.yaml          # your genome (see pipelines/config/)
#   snakemake --profile pipelines/profiles/slurm      # on a SLURM cluster, GPUs per rule
#
# Every rule calls the `sparling-genomics` command; logs go to logs/, timings to benchmarks/.
from snakemake.utils import min_version, validate

min_version("9.0")


# The default config unless the user gave one (a --configfile is merged *over* this directive's
# file, so loading both would add the default genome to the user's).
if not config.get("genomes"):

    configfile: f"{workflow.basedir}/pipelines/config/default.yaml"


validate(config, "pipelines/schema/config.schema.yaml")


wildcard_constraints:
    genome=r"[^/]+",
    run=r"[^/]+",
    seed=r"\d+",


include: "pipelines/rules/common.smk"
include: "pipelines/rules/dataset.smk"
include: "pipelines/rules/train.smk"
include: "pipelines/rules/motifs.smk"
include: "pipelines/rules/planted.smk"


rule all:
    default_target: True
    input:
        job_targets(),
