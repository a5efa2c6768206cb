#!/usr/bin/env bash
# Refresh the lock: requirements/lock.txt pins, with hashes, every package the set-up installs
# (pyproject.toml's dependencies and its test and bench extras, the installer and the build
# backend), resolved with uv for CPython 3.11 on x86_64 Linux: keeping the versions the lock
# already pins where they still satisfy pyproject (a new dependency adds its own pins and
# moves nothing else), or, with --upgrade, at the newest releases that satisfy its ranges. torch itself is left out of the lock (the set-up installs the
# release pyproject pins, whose CPU build lies on these machines' disk and whose CUDA build a
# GPU user installs first); its dependencies are resolved against the CPU build's metadata, so
# no CUDA wheels are pulled in. Also rewrites the conda environment's pins to match.
#
#   bash scripts/lock.sh [--upgrade]   then: bash scripts/test.sh, and commit both files
set -euo pipefail
cd "$(dirname "$0")/.."
upgrade=()
case "${1:-}" in
    --upgrade) upgrade=(--upgrade) ;;
    "") ;;
    *) echo "error: unknown option ${1} (bash scripts/lock.sh [--upgrade])" >&2; exit 2 ;;
esac
UV_VERSION=0.13.8
tools=build/lock-tools
if [ ! -x "$tools/bin/uv" ] || ! "$tools/bin/uv" --version | grep -q "^uv $UV_VERSION "; then
    rm -rf "$tools"
    python3 -m venv "$tools"
    "$tools/bin/python" -m pip install -q "uv==$UV_VERSION"
fi
torch_pin=$(grep -oE '"torch==[^"]+"' pyproject.toml | tr -d '"')
[ -n "$torch_pin" ] || { echo "error: pyproject.toml: no torch==VERSION pin" >&2; exit 2; }
torch_version=${torch_pin#torch==}
constraint=$(mktemp)
out=$(mktemp)
cp requirements/lock.txt "$out"  # uv keeps the pins of an existing output file
trap 'rm -f "$constraint" "$out"' EXIT
echo "torch==$torch_version+cpu" > "$constraint"
# Where the CPU build of torch comes from: a folder holding its wheel (these machines have one
# in /opt/wheels; TORCH_WHEELS names another), else PyTorch's CPU index.
wheels=${TORCH_WHEELS:-/opt/wheels}
if compgen -G "$wheels/torch-$torch_version+cpu-*.whl" >/dev/null; then
    torch_source=(--find-links "$wheels")
else
    torch_source=(--extra-index-url https://download.pytorch.org/whl/cpu
                  --index-strategy unsafe-best-match)
fi
"$tools/bin/uv" pip compile pyproject.toml requirements/tools.in \
    --extra test --extra bench \
    --constraint "$constraint" "${torch_source[@]}" --no-emit-package torch \
    --python-version 3.11 --python-platform x86_64-unknown-linux-gnu \
    --generate-hashes --no-header --quiet "${upgrade[@]}" -o "$out"
{
    echo "# The lock of what scripts/setup.sh installs: made by 'bash scripts/lock.sh' from"
    echo "# pyproject.toml and requirements/tools.in (uv $UV_VERSION, CPython 3.11, x86_64 Linux)."
    echo "# Do not edit by hand. tests/test_lock.py fails when it and pyproject.toml disagree."
    echo "# torch: resolved against $torch_pin+cpu, installed by the set-up, not pinned here."
    cat "$out"
} > requirements/lock.txt
.venv/bin/python scripts/check_lock.py --write-conda 2>/dev/null \
    || python3 scripts/check_lock.py --write-conda
echo "wrote requirements/lock.txt ($(grep -cE '^[a-z0-9]' requirements/lock.txt) packages)" \
     "and pipelines/envs/sparling-genomics.yaml"
