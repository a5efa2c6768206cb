#!/usr/bin/env bash
# Set up (if needed) and run the main job: the Snakemake pipeline on its default config
# (pipelines/config/default.yaml: splicing motif discovery on the bundled TAIR10 chr1, sized
# for 2 CPU cores, <= 60 minutes). Outputs go to results/ (logs/ and timings/ beside it);
# a re-run redoes only what is missing. Extra arguments go to snakemake, e.g.
#   bash scripts/main.sh --configfile my.yaml      (your genome)
#   bash scripts/main.sh -n                        (dry run: what would run)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/snakemake --cores "${CORES:-2}" --rerun-incomplete "$@"
echo "done: a report.html in each job folder (results/<genome>/<run>/seed<S>/, results/planted/seed<S>/);" \
     "motifs/ and tracks/ in each job's sparling/ folder"
