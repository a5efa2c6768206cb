#!/usr/bin/env bash
# The peers' own environment, idempotent: build/peers/.venv (git-ignored) with SpliceAI (its
# wheel ships the five Keras models), TensorFlow + tf-keras to run them as published, and
# OpenSpliceAI (PyTorch; create-data, train, predict, variant). Kept out of the project's lock:
# GPL-licensed peers and TensorFlow are benchmark tools, not dependencies of sparling-genomics.
# Used by `python -m benchmarks peers`; nothing here is imported by the package.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3.11}"
command -v "$PYTHON" >/dev/null 2>&1 || PYTHON=python3
VENV=build/peers/.venv
# Versions the peers benchmark was measured with (BENCHMARKS.md "peers" states them).
PINS=(torch==2.13.0 openspliceai==0.0.7 spliceai==1.3.1 tensorflow-cpu==2.21.0 tf-keras==2.21.0)
stamp=$VENV/.peers-setup
want=$(printf '%s\n' "${PINS[@]}" | cat - scripts/setup_peers.sh | sha256sum | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    exit 0
fi
[ -x "$VENV/bin/python" ] || { mkdir -p build/peers && "$PYTHON" -m venv "$VENV"; }
pip=("$VENV/bin/python" -m pip install -q --disable-pip-version-check)
# spliceai asks for `keras` (Keras 3 would not load its 2019 HDF5 models): its code and
# weights without dependencies, then tf-keras (Keras 2) under TensorFlow.
"${pip[@]}" "${PINS[@]:0:2}" "${PINS[@]:3}"
"${pip[@]}" --no-deps "${PINS[2]}"
# spliceai's own __init__ needs pkg_resources, which new setuptools dropped; the benchmark
# reads only its model files, so check those are where the benchmark looks.
"$VENV/bin/python" -c 'import openspliceai, tf_keras, torch' >/dev/null 2>&1
ls "$VENV"/lib/python3*/site-packages/spliceai/models/spliceai5.h5 >/dev/null
echo "$want" > "$stamp"
