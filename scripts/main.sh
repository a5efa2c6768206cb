#!/usr/bin/env bash
# Set up (if needed) and run the main job on the bundled default reference (TAIR10 chr1):
# build the donor/acceptor dataset from the genome and its annotation, then train the
# Sparling splicing model (2 CPU cores: about 30 minutes) and score it on the held-out block.
# Writes OUT (default runs/tair10-chr1): dataset.h5, sparling/ (a run directory).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
out="${1:-runs/tair10-chr1}"
if [ -e "$out/sparling" ]; then
    echo "error: $out/sparling exists; pass another output folder as argument" >&2
    exit 2
fi
mkdir -p "$out"
if [ ! -e "$out/dataset.h5" ]; then
    .venv/bin/sparling-genomics dataset --reference tair10-chr1 --out "$out/dataset.h5"
fi
.venv/bin/sparling-genomics train --task splicing --dataset "$out/dataset.h5" --out "$out/sparling"
