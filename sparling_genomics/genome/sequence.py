"""DNA encoding: integer codes, one-hot arrays and reverse complements.

Codes are A=0, C=1, G=2, T=3 and 4 for anything else (N and IUPAC ambiguity codes); one-hot
gives such positions all zeros, as SpliceAI and tangermeme do. Lower-case (soft-masked)
bases are upper-cased. Written with numpy lookup tables rather than Biopython because the
encoders run on whole chromosomes and per training batch, where a table lookup is ~100x
faster than per-record Seq objects.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # torch is imported where it is used: the workflow's checks read FASTA
    import torch  # without it (2 s an import)

ALPHABET = "ACGT"
N_CODE = 4

_ENCODE = np.full(256, N_CODE, dtype=np.uint8)
for _i, _base in enumerate(ALPHABET):
    _ENCODE[ord(_base)] = _i
    _ENCODE[ord(_base.lower())] = _i
_DECODE = np.frombuffer(b"ACGTN", dtype=np.uint8)
_COMPLEMENT = np.array([3, 2, 1, 0, N_CODE], dtype=np.uint8)


def encode(sequence: str | bytes | np.ndarray) -> np.ndarray:
    """Integer codes (uint8) of a DNA string (or of its bytes as a uint8 array); non-ACGT
    letters become ``N_CODE``."""
    if isinstance(sequence, str):
        sequence = sequence.encode("ascii", errors="replace")
    if isinstance(sequence, np.ndarray):
        return _ENCODE[sequence]
    return _ENCODE[np.frombuffer(sequence, dtype=np.uint8)]


def decode(codes: np.ndarray) -> str:
    """The DNA string (upper case, N for ``N_CODE``) of integer codes."""
    return _DECODE[np.asarray(codes, dtype=np.uint8)].tobytes().decode("ascii")


def reverse_complement_codes(codes: np.ndarray) -> np.ndarray:
    """Reverse complement of integer codes along the last axis."""
    return _COMPLEMENT[np.asarray(codes)][..., ::-1].copy()


def one_hot(codes: np.ndarray, dtype=np.float32) -> np.ndarray:
    """One-hot ``(..., 4, L)`` array of codes ``(..., L)``; N positions are all zeros."""
    codes = np.asarray(codes)
    eye = np.concatenate([np.eye(4, dtype=dtype), np.zeros((1, 4), dtype=dtype)])
    return np.moveaxis(eye[codes], -1, -2).copy()


def reverse_complement_one_hot(x: torch.Tensor) -> torch.Tensor:
    """Reverse complement of a one-hot ``(N, 4, L)`` tensor (ACGT order): flip both axes."""
    import torch

    return torch.flip(x, dims=(-2, -1))
