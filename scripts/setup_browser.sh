#!/usr/bin/env bash
# Browser-test set-up, idempotent: Debian's Chromium + ChromeDriver (where missing) and igv.js
# from npm into build/browser/ (git-ignored). Used by scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
        export DEBIAN_FRONTEND=noninteractive
        apt-get install -y -q chromium chromium-driver >/dev/null 2>&1 \
            || (apt-get update -q >/dev/null 2>&1 \
                && apt-get install -y -q chromium chromium-driver >/dev/null 2>&1) \
            || echo "warning: could not install chromium and chromium-driver" >&2
    else
        echo "warning: chromium/chromedriver not found (apt-get install chromium chromium-driver)" >&2
    fi
fi
IGV_VERSION=3.8.10
if [ ! -f build/browser/node_modules/igv/dist/igv.min.js ] \
    || ! grep -q "\"version\": \"$IGV_VERSION\"" build/browser/node_modules/igv/package.json; then
    if command -v npm >/dev/null 2>&1; then
        mkdir -p build/browser
        npm install --prefix build/browser --no-audit --no-fund --silent "igv@$IGV_VERSION" \
            || echo "warning: npm could not install igv@$IGV_VERSION" >&2
    else
        echo "warning: npm not found; the igv.js browser test needs it (apt-get install npm)" >&2
    fi
fi
