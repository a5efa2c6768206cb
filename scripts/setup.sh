#!/usr/bin/env bash
# Idempotent set-up on a fresh Debian machine with Python 3.11: a venv in .venv holding exactly
# the versions of requirements/lock.txt (hash-checked; refresh with `bash scripts/lock.sh`),
# the pinned torch release, and the package itself (editable). No GPU needed.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3.11}"
command -v "$PYTHON" >/dev/null 2>&1 || PYTHON=python3
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then
    echo "warning: $PYTHON is not Python 3.11; requirements/lock.txt was made for 3.11" \
         "(PYTHON=/path/to/python3.11 bash $0 picks another)" >&2
fi
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
# Redo the install whenever the lock, pyproject.toml or this script changed (by content: a
# fresh clone gives every file the same time).
stamp=.venv/.sparling-setup
want=$(cat requirements/lock.txt pyproject.toml scripts/setup.sh | sha256sum | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    pip=(.venv/bin/python -m pip install -q --disable-pip-version-check)
    # torch first, without its dependencies (the lock pins them): the release pyproject.toml
    # pins, which takes the CPU build on these machines and keeps a CUDA build of the same
    # release that a GPU user installed before. An unpinned torch would pull a CUDA build.
    torch_pin=$(grep -oE '"torch==[^"]+"' pyproject.toml | tr -d '"')
    "${pip[@]}" --no-deps "$torch_pin"
    "${pip[@]}" --require-hashes -r requirements/lock.txt
    # A venv made by an older set-up may hold packages the lock no longer has: remove them.
    extras=$(.venv/bin/python -m pip freeze --all --exclude-editable \
        | .venv/bin/python scripts/check_lock.py --extras-in - | grep -vx 'sparling-genomics' || true)
    if [ -n "$extras" ]; then
        # shellcheck disable=SC2086
        .venv/bin/python -m pip uninstall -q -y $extras
    fi
    # The package itself: built by the locked setuptools, its dependencies already in place.
    "${pip[@]}" --no-deps --no-build-isolation -e .
    .venv/bin/python -m pip check >/dev/null
    echo "$want" > "$stamp"
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
