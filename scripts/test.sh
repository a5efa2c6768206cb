#!/usr/bin/env bash
# Set up (if needed), lint, and run the whole test suite, browser tests included.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/setup_browser.sh
.venv/bin/ruff check sparling_genomics tests
# Chromium and igv.js were just installed: a browser test that cannot find them fails.
SPARLING_BROWSER_TESTS=required .venv/bin/python -m pytest -q "$@"
