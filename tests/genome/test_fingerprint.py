"""Content fingerprints: a stretch of bases however it is cut, and a dataset by what it holds
(not where it lies or when it was built)."""

import shutil

import h5py
import numpy as np

from sparling_genomics.genome.dataset import DatasetSpec, build_dataset
from sparling_genomics.genome.fingerprint import (
    DATASET_ATTR,
    ArrayDigest,
    codes_digest,
    dataset_fingerprint,
)
from tests.conftest import TINY_FASTA, TINY_GFF


def test_a_stretch_of_bases_has_one_fingerprint_however_it_is_cut():
    codes = np.random.default_rng(0).integers(0, 5, 10_000).astype(np.uint8)
    whole = codes_digest([codes])
    assert codes_digest([codes[:3], codes[3:7000], codes[7000:]]) == whole
    assert codes_digest(iter([codes[:5000], codes[5000:]])) == whole
    changed = codes.copy()
    changed[1234] = 4  # one base hard-masked
    assert codes_digest([changed]) != whole


def test_array_digest_tells_dtype_and_shape_apart():
    values = np.arange(12, dtype=np.int16)
    assert (ArrayDigest().add(values).hexdigest()
            != ArrayDigest().add(values.reshape(3, 4)).hexdigest()
            != ArrayDigest().add(values.astype(np.int32)).hexdigest())  # fmt: skip


def test_a_dataset_fingerprints_what_it_holds(tmp_path):
    first, again = tmp_path / "a.h5", tmp_path / "b" / "a.h5"
    again.parent.mkdir()
    build_dataset(first, TINY_FASTA, annotation=TINY_GFF)
    build_dataset(again, TINY_FASTA, annotation=TINY_GFF)  # another path, another build time
    assert dataset_fingerprint(first) == dataset_fingerprint(again)
    assert dataset_fingerprint(first).startswith("sha256:")
    other = tmp_path / "other.h5"
    build_dataset(other, TINY_FASTA, annotation=TINY_GFF, spec=DatasetSpec(test_fraction=0.3))
    assert dataset_fingerprint(other) != dataset_fingerprint(first)
    moved = tmp_path / "moved.h5"
    shutil.copy(first, moved)
    assert dataset_fingerprint(moved) == dataset_fingerprint(first)


def test_a_dataset_built_before_fingerprints_is_fingerprinted_by_its_bytes(tmp_path):
    path = tmp_path / "old.h5"
    build_dataset(path, TINY_FASTA, annotation=TINY_GFF)
    with h5py.File(path, "a") as h5:
        del h5.attrs[DATASET_ATTR]
    recorded = dataset_fingerprint(path)
    assert recorded.startswith("file:") and recorded == dataset_fingerprint(path)
