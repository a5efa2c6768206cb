#!/usr/bin/env bash
# Set up (if needed), lint, and run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/ruff check sparling_genomics tests
.venv/bin/python -m pytest -q "$@"
