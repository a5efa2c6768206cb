"""Keras's own outputs for checking the PyTorch port (``benchmarks/spliceai_net.py``).

Run by the peers venv (TensorFlow + tf-keras, ``scripts/setup_peers.sh``):

``--tiny DIR``: a small model of SpliceAI's shape (8 channels, one residual unit of each of
SpliceAI's four kernel/dilation pairs, a skip every two units, random weights and batch-norm
statistics), saved as Keras HDF5 the way SpliceAI's models are, with its outputs on three
inputs (random bases, a stretch of N, a sequence end): ``DIR/spliceai_keras_tiny.h5`` and
``DIR/spliceai_keras_tiny.npz``, the test's fixture (tests/benchmarks/test_spliceai_net.py).

``--models DIR --out FILE.npz``: the five published models (``spliceai{1..5}.h5``) on
``--inputs`` random sequences of ``--length`` outputs: inputs and each model's outputs, which
the peers benchmark compares with the port.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import numpy as np

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def one_hot(codes: np.ndarray) -> np.ndarray:
    """(n, L) codes 0-3 ACGT, 4 N -> (n, L, 4) channels-last, N all zeros (SpliceAI's)."""
    eye = np.concatenate([np.eye(4, dtype=np.float32), np.zeros((1, 4), dtype=np.float32)])
    return eye[codes]


def inputs(rng: np.random.Generator, n: int, length: int) -> np.ndarray:
    codes = rng.integers(0, 4, size=(n, length))
    if n > 1:
        codes[1, length // 3 : length // 3 + 200] = 4  # a run of N
    if n > 2:
        codes[2, : length // 4] = 4  # a sequence's start
    return codes.astype(np.uint8)


def tiny(out: Path) -> None:
    import tf_keras as keras
    from tf_keras import layers

    rng = np.random.default_rng(0)
    keras.utils.set_random_seed(0)
    channels, units = 8, [(11, 1), (11, 4), (21, 10), (41, 25)]
    context = 2 * sum(d * (w - 1) for w, d in units)
    x0 = layers.Input(shape=(None, 4))
    conv = layers.Conv1D(channels, 1)(x0)
    skip = layers.Conv1D(channels, 1)(conv)
    for i, (w, d) in enumerate(units):
        h = layers.Activation("relu")(layers.BatchNormalization()(conv))
        h = layers.Conv1D(channels, w, dilation_rate=d, padding="same")(h)
        h = layers.Activation("relu")(layers.BatchNormalization()(h))
        h = layers.Conv1D(channels, w, dilation_rate=d, padding="same")(h)
        conv = layers.add([h, conv])
        if (i + 1) % 2 == 0:
            skip = layers.add([skip, layers.Conv1D(channels, 1)(conv)])
    skip = layers.Cropping1D(context // 2)(skip)
    model = keras.Model(x0, layers.Conv1D(3, 1, activation="softmax")(skip))
    for layer in model.layers:  # batch-norm statistics away from 0 / 1, so they are tested
        if isinstance(layer, layers.BatchNormalization):
            gamma, beta, mean, var = layer.get_weights()
            layer.set_weights([rng.uniform(0.5, 1.5, gamma.shape), rng.normal(0, 0.2, beta.shape),
                               rng.normal(0, 0.5, mean.shape), rng.uniform(0.5, 2, var.shape)])
    out.mkdir(parents=True, exist_ok=True)
    model.save(out / "spliceai_keras_tiny.h5")
    codes = inputs(rng, 3, 300 + context)
    outputs = model.predict(one_hot(codes), verbose=0)
    np.savez_compressed(out / "spliceai_keras_tiny.npz", codes=codes, outputs=outputs,
                        context=context)


def published(models: Path, out: Path, n: int, length: int) -> None:
    from tf_keras.models import load_model

    rng = np.random.default_rng(0)
    codes = inputs(rng, n, length + 10_000)
    result = {"codes": codes}
    for i in range(1, 6):
        model = load_model(models / f"spliceai{i}.h5", compile=False)
        result[f"model{i}"] = model.predict(one_hot(codes), verbose=0)
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(out, **result)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", type=Path)
    parser.add_argument("--models", type=Path)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--inputs", type=int, default=3)
    parser.add_argument("--length", type=int, default=500)
    args = parser.parse_args()
    if args.tiny:
        tiny(args.tiny)
    if args.models:
        published(args.models, args.out, args.inputs, args.length)


if __name__ == "__main__":
    main()
