"""Content fingerprints: SHA-256 over arrays (dtype, shape, bytes), so that one job's output
can say exactly which input it was made from and the next job can refuse another.

A scan part fingerprints the bases of each of its pieces as integer codes (what the model
read: soft-masked and upper-case bases are the same, a hard-masked N is not), hashed from the
arrays the scan already holds. A dataset fingerprints what it holds (sequence codes, labels,
regions, windows, split, classes), computed while it is written and kept in its attributes:
rebuilding the same dataset from the same inputs gives the same fingerprint, wherever the file
lies and whatever its build time.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from ..errors import InputError

DATASET_ATTR = "fingerprint"  # a dataset's attribute holding its content fingerprint


class ArrayDigest:
    """SHA-256 over arrays fed in order, each with its dtype and shape."""

    def __init__(self) -> None:
        self._hash = hashlib.sha256()

    def add(self, *arrays) -> ArrayDigest:
        """Feed ``arrays`` (numpy arrays or anything ``np.asarray`` takes); returns self."""
        for array in arrays:
            array = np.ascontiguousarray(array)
            self._hash.update(f"{array.dtype.str}{array.shape}".encode())
            self._hash.update(memoryview(array).cast("B") if array.size else b"")
        return self

    def hexdigest(self) -> str:
        return self._hash.hexdigest()


def codes_digest(runs: Iterable[np.ndarray]) -> str:
    """The fingerprint of a stretch of bases given as consecutive runs of integer codes
    (``Genome.fetch``): SHA-256 of the codes, the same however the stretch is cut."""
    digest = hashlib.sha256()
    for codes in runs:
        digest.update(memoryview(np.ascontiguousarray(codes, np.uint8)).cast("B"))
    return digest.hexdigest()


# What a dataset's fingerprint covers beside its windows' codes, labels and regions.
_DATASET_ARRAYS = ("split", "seqid", "strand", "start")
_DATASET_ATTRS = ("classes", "seqids", "window", "context", "split")


def seal_dataset_digest(digest: ArrayDigest, h5) -> str:
    """The fingerprint of the dataset being written to ``h5`` (an open ``h5py.File``), from
    ``digest`` (fed its windows' codes, labels and regions as they were written) and the
    per-window arrays and attributes already in the file; its build time and the paths it
    records are left out."""
    digest.add(*(h5[name][:] for name in _DATASET_ARRAYS))
    text = "\t".join(str(h5.attrs[name]) for name in _DATASET_ATTRS).encode()
    return "sha256:" + digest.add(np.frombuffer(text, np.uint8)).hexdigest()


def dataset_fingerprint(path: Path) -> str:
    """The content fingerprint a dataset file recorded when it was built; for a dataset built
    before fingerprints were recorded, a SHA-256 of the file's bytes (``file:`` prefixed)."""
    import h5py

    path = Path(path)
    try:
        with h5py.File(path, "r") as h5:
            recorded = h5.attrs.get(DATASET_ATTR)
        if recorded is not None:
            return str(recorded)
        digest = hashlib.sha256()
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 24), b""):
                digest.update(block)
    except OSError as exc:
        raise InputError(f"{path}: cannot read the dataset ({exc})"[:300]) from None
    return "file:" + digest.hexdigest()
