#!/usr/bin/env bash
# Set up (if needed) and run the main job on the bundled default reference (TAIR10 chr1):
# Sparling motif discovery on the planted-motif task, 2 CPU cores, under 15 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
out="${1:-runs/planted-seed0}"
.venv/bin/sparling-genomics train --task planted --preset cpu --seed 0 --out "$out"
