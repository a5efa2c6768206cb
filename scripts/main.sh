#!/usr/bin/env bash
# Set up (if needed) and run the main job on the bundled default reference (TAIR10 chr1):
# build the donor/acceptor dataset from the genome and its annotation, train the Sparling
# splicing model (2 CPU cores: about 30 minutes), then export its motifs (PWM files, logos,
# JASPAR names), scan the whole chromosome for motif sites (BED9, bigBed, bigWig) and write
# the HTML report. Writes OUT (default runs/tair10-chr1): dataset.h5, sparling/ (the run, with
# motifs/ and report.html) and tracks/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
out="${1:-runs/tair10-chr1}"
if [ -e "$out/sparling" ]; then
    echo "error: $out/sparling exists; pass another output folder as argument" >&2
    exit 2
fi
mkdir -p "$out"
sg=.venv/bin/sparling-genomics
if [ ! -e "$out/dataset.h5" ]; then
    $sg dataset --reference tair10-chr1 --out "$out/dataset.h5"
fi
$sg train --task splicing --dataset "$out/dataset.h5" --out "$out/sparling"
$sg export --model "$out/sparling"
$sg scan --model "$out/sparling" --reference tair10-chr1 --out "$out/tracks"
$sg report --model "$out/sparling" --scan "$out/tracks" --out "$out/sparling/report.html"
echo "report: $out/sparling/report.html; tracks: $out/tracks/"
