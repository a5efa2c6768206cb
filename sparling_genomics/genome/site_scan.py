"""PWM site scans: relative scores (JASPAR's ``(s - min) / (max - min)``) of every window of
many sequences for many motifs on both strands, as one float32 ``conv1d``.

Written here rather than taken from memelite's FIMO because the planted task calls it on
every training batch to reject background windows that hold a site, where a p-value scan of
each batch would cost more than the model step; the relative score is the cutoff JASPAR's
own scans use (0.8-0.85), with no background model to fit.
"""

from __future__ import annotations

import numpy as np
import torch

from .jaspar import Motif


def log_odds(motif: Motif) -> np.ndarray:
    """Log2-odds matrix (4, W) of a motif against a uniform background."""
    return np.log2(np.clip(motif.pwm, 1e-6, 1.0) / 0.25)


def relative_scores(codes: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """Relative PWM score (0 = worst, 1 = best possible site) of every window.

    ``codes`` is ``(..., L)`` (values 0-3); returns ``(..., L - W + 1)`` for the forward
    strand. The relative score is the JASPAR convention, ``(s - min) / (max - min)``.
    """
    width = matrix.shape[1]
    positions = codes.shape[-1] - width + 1
    scores = np.zeros(codes.shape[:-1] + (positions,))
    for w in range(width):  # W vectorised gathers beat one (N, L, W) fancy index
        scores += matrix[codes[..., w : w + positions], w]
    lo, hi = matrix.min(0).sum(), matrix.max(0).sum()
    return (scores - lo) / (hi - lo)


def stack_relative_matrices(matrices: list[np.ndarray]) -> np.ndarray:
    """Stack K log-odds matrices into (K, 5, Wmax) scaled so that sums are relative scores.

    Column w of motif k is ``(M[:, w] - min_w) / (max - min)`` so a window's sum is its
    relative score; columns past the motif's width are 0; row 4 (a position past the end of
    the sequence) is -inf inside the motif, so sites running off the end never count.
    """
    width = max(m.shape[1] for m in matrices)
    stacked = np.zeros((len(matrices), 5, width))
    for k, matrix in enumerate(matrices):
        lo, hi = matrix.min(0), matrix.max(0)
        span = hi.sum() - lo.sum()
        w = matrix.shape[1]
        stacked[k, :4, :w] = (matrix - lo) / span
        stacked[k, 4, :w] = -np.inf
    return stacked


#: Stand-in for -inf in scan filters: a convolution multiplies it by 0 (NaN with -inf).
_OFF_END = -1e4


def site_scan_filters(stacked: np.ndarray) -> torch.Tensor:
    """Filters (2K, 5, Wmax) that score every motif on both strands in one ``conv1d``.

    The first K are the stacked relative matrices (forward strand); the next K their reverse
    complements, left-aligned the same way, so output position p scores the site occupying
    bases p..p+W-1 read on the minus strand. Row 4 (past the end) is a large negative number.
    """
    k, _, width = stacked.shape
    forward = np.where(np.isinf(stacked), _OFF_END, stacked)
    reverse = np.zeros_like(forward)
    for i in range(k):
        w = int((forward[i, 4] != 0).sum())  # the motif's own width
        reverse[i, :4, :w] = forward[i, 3::-1, w - 1 :: -1]
        reverse[i, 4, :w] = _OFF_END
    return torch.from_numpy(np.concatenate([forward, reverse])).float()


def site_scores(codes: np.ndarray, filters: torch.Tensor) -> torch.Tensor:
    """Relative scores ``(N, 2K, L)`` of every site starting at each position of ``codes``
    (N, L; 0-3, or 4 for a base no site may hold) under ``site_scan_filters``' filters.

    One float32 convolution over a 5-symbol one-hot (the fifth: past the end): background
    rejection was 85% of a batch's data time when the matrices were gathered column by
    column in numpy.
    """
    width = filters.shape[-1]
    n, length = codes.shape
    padded = np.full((n, length + width - 1), 4, dtype=np.int64)
    padded[:, :length] = codes
    x = torch.nn.functional.one_hot(torch.from_numpy(padded), 5).transpose(1, 2).float()
    with torch.no_grad():
        return torch.nn.functional.conv1d(x, filters)


def windows_with_site(codes: np.ndarray, filters: torch.Tensor, cutoff: float) -> np.ndarray:
    """Rows of ``codes`` (N, L) holding a site of any motif, either strand, scoring at least
    ``cutoff`` (a relative score); sites must lie wholly inside the row. The cutoff is
    lowered by 1e-5 so float32 rounding can only reject more windows, never keep one whose
    site scores at the cutoff."""
    return (site_scores(codes, filters) >= cutoff - 1e-5).flatten(1).any(1).numpy()
