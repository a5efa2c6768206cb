#!/usr/bin/env bash
# Set up (if needed), lint, and run the whole test suite, browser tests included.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/setup_browser.sh
# The venv holds exactly the locked versions (a mismatch names each package).
.venv/bin/python -m pip freeze --all --exclude-editable | .venv/bin/python scripts/check_lock.py --freeze -
.venv/bin/ruff check sparling_genomics benchmarks tests scripts
# Chromium and igv.js were just installed: a browser test that cannot find them fails. The
# SLURM test starts a one-node SLURM (scripts/slurm_local.sh, as root) and runs the tiny
# pipeline through the cluster profile.
# The tests run on every core (pytest-xdist, at most 4 workers): most of their time is
# one-thread subprocesses. Whole test files go to one worker, so a session-built tiny run is
# built at most once per worker.
SPARLING_BROWSER_TESTS=required SPARLING_SLURM_TESTS=1 .venv/bin/python -m pytest -q -n auto --maxprocesses 4 \
    --dist loadfile "$@"
