"""Topology and geometry of a point cloud: the measures of the training diagnostics.

For one point cloud (the rows of an embedding matrix, or a layer's activation vectors on a
fixed sample): Vietoris-Rips persistent homology in dimensions 0 and 1 (``ripser``), summed to
the maximum and total persistence of each dimension; the intrinsic dimension by TwoNN
(``scikit-dimension``'s global estimate, and the mean of the maximum-likelihood TwoNN estimates
over each point's neighbourhood); and, for a matrix whose rows are the residues of a cyclic
group, the share of its power at each discrete Fourier frequency (``numpy.fft``). Seed 004
(Tang et al.) reads these across a run's checkpoints: when a network groks modular addition, a
long-lived H1 bar appears in its token embeddings, its local intrinsic dimension falls, and its
embedding's power concentrates on a few frequencies.

Clouds are centred and scaled to unit root-mean-square norm first, so measures of different
checkpoints (whose weights grow or shrink) compare; duplicate rows are dropped (a sparse
layer's many identical vectors would give zero-length bars and a TwoNN division by zero);
large clouds are subsampled with a fixed seed.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

MIN_POINTS = 4  # fewer points carry no H1 and no TwoNN neighbours


@dataclass
class CloudMeasures:
    """The measures of one point cloud; ``None`` where the cloud is too small for one."""

    points: int
    dimension: int
    h0_max: float | None = None
    h0_total: float | None = None
    h1_max: float | None = None
    h1_total: float | None = None
    h1_bars: int | None = None
    h1_dominance: float | None = None  # longest H1 bar / second longest (inf: only one)
    twonn: float | None = None  # global intrinsic dimension
    twonn_local: float | None = None  # mean of the pointwise (neighbourhood) estimates
    diagrams: dict[str, np.ndarray] = field(default_factory=dict, repr=False)

    def as_dict(self) -> dict:
        """The scalar measures (JSON-ready: an infinite dominance becomes ``None``)."""
        out = {k: v for k, v in self.__dict__.items() if k != "diagrams"}
        if out["h1_dominance"] is not None and not np.isfinite(out["h1_dominance"]):
            out["h1_dominance"] = None
        return out


def prepare_cloud(points: np.ndarray, max_points: int = 1000, seed: int = 0) -> np.ndarray:
    """``points`` (n, d) as float64, duplicates dropped, at most ``max_points`` rows (a seeded
    subsample), centred and scaled to unit root-mean-square row norm."""
    x = np.asarray(points, dtype=np.float64)
    if x.ndim != 2:
        raise ValueError(f"a point cloud is a 2-D array (points, features), not {x.shape}")
    x = x[np.isfinite(x).all(1)]
    if len(x):
        x = np.unique(x, axis=0)
    if len(x) > max_points:
        keep = np.random.default_rng(seed).choice(len(x), max_points, replace=False)
        x = x[np.sort(keep)]
    if not len(x):
        return x
    x = x - x.mean(0)
    scale = np.sqrt((x**2).sum(1).mean())
    return x / scale if scale > 0 else x


def persistence(cloud: np.ndarray) -> dict[str, np.ndarray]:
    """Vietoris-Rips persistence diagrams of ``cloud`` in dimensions 0 and 1: ``{"h0": (k, 2),
    "h1": (m, 2)}`` birth/death pairs (H0's one infinite bar dropped)."""
    from ripser import ripser

    if len(cloud) < 2:
        return {"h0": np.zeros((0, 2)), "h1": np.zeros((0, 2))}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "more columns than rows": a small cloud, not a mix-up
        dgms = ripser(cloud, maxdim=1)["dgms"]
    return {f"h{k}": d[np.isfinite(d[:, 1])] for k, d in enumerate(dgms)}


def summarise_diagram(diagram: np.ndarray) -> tuple[float, float, int]:
    """(max persistence, total persistence, number of bars) of one diagram."""
    life = diagram[:, 1] - diagram[:, 0] if len(diagram) else np.zeros(0)
    life = life[life > 0]
    return (float(life.max()) if len(life) else 0.0, float(life.sum()), int(len(life)))


def twonn_dimension(cloud: np.ndarray, neighbours: int = 20) -> tuple[float, float]:
    """(global, mean local) TwoNN intrinsic dimension of ``cloud``.

    Global: scikit-dimension's TwoNN. Local: TwoNN's maximum-likelihood estimate
    ``k / sum(log(r2 / r1))`` over each point's ``neighbours`` nearest neighbours (``r1``,
    ``r2``: a point's first and second neighbour distances), vectorised here because
    scikit-dimension's pointwise fit refits TwoNN point by point (~100x slower per cloud).
    """
    import skdim
    from scipy.spatial import cKDTree

    k = max(3, min(neighbours, len(cloud) - 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        glob = float(skdim.id.TwoNN().fit(cloud).dimension_)
    dist, index = cKDTree(cloud).query(cloud, k=k + 1)  # column 0: the point itself
    r1, r2 = dist[:, 1], dist[:, 2]
    ok = r1 > 0
    log_mu = np.where(ok, np.log(np.where(ok, r2, 1.0) / np.where(ok, r1, 1.0)), np.nan)
    hood = log_mu[index]  # each point's neighbourhood (itself included)
    sums, counts = np.nansum(hood, 1), np.sum(np.isfinite(hood), 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        local = counts / sums
    local = local[np.isfinite(local) & (counts >= 3)]
    return glob, float(local.mean()) if len(local) else float("nan")


def measure_cloud(points: np.ndarray, max_points: int = 1000, seed: int = 0) -> CloudMeasures:
    """All the measures of one point cloud (see the module docstring)."""
    x = prepare_cloud(points, max_points, seed)
    out = CloudMeasures(points=int(len(x)), dimension=int(x.shape[1]) if x.ndim == 2 else 0)
    if len(x) < MIN_POINTS:
        return out
    out.diagrams = persistence(x)
    out.h0_max, out.h0_total, _ = summarise_diagram(out.diagrams["h0"])
    out.h1_max, out.h1_total, out.h1_bars = summarise_diagram(out.diagrams["h1"])
    h1 = out.diagrams["h1"]
    life = np.sort(h1[:, 1] - h1[:, 0])[::-1] if len(h1) else np.zeros(0)
    if len(life) >= 2 and life[1] > 0:
        out.h1_dominance = float(life[0] / life[1])
    elif len(life) == 1:
        out.h1_dominance = float("inf")
    if len(x) > 2:
        glob, local = twonn_dimension(x)
        out.twonn = glob if np.isfinite(glob) else None
        out.twonn_local = local if np.isfinite(local) else None
    return out


def fourier_spectrum(embedding: np.ndarray) -> np.ndarray:
    """The share of an embedding's power at each frequency 0..p//2, where row ``i`` embeds
    residue ``i`` mod ``p``: the power of the DFT along the token axis, summed over features
    (frequency ``k`` and ``p - k`` folded together), normalised to sum to 1."""
    e = np.asarray(embedding, dtype=np.float64)
    e = e - e.mean(0)
    power = (np.abs(np.fft.rfft(e, axis=0)) ** 2).sum(1)
    p = len(e)
    # rfft keeps k = 0..p//2: every k but 0 (and p/2 for even p) stands for k and p - k.
    weight = np.full(len(power), 2.0)
    weight[0] = 1.0
    if p % 2 == 0:
        weight[-1] = 1.0
    power = power * weight
    total = power.sum()
    return power / total if total > 0 else power


def top_frequencies(spectrum: np.ndarray, k: int = 5) -> tuple[list[int], float]:
    """The ``k`` frequencies (excluding 0) with the most power, and their summed share."""
    order = np.argsort(spectrum[1:])[::-1][:k] + 1
    return [int(i) for i in order], float(spectrum[order].sum())


MEASURES = ("h0_max", "h0_total", "h1_max", "h1_total", "twonn", "twonn_local",
            "fourier_top5_share")  # fmt: skip
FIT = 0.99  # train accuracy at which a run has fitted its training set


def _first(steps, values, test) -> int | None:
    return next((s for s, v in zip(steps, values) if v is not None and test(v)), None)


def find_events(series: list[dict], accuracy: str) -> dict:
    """Steps of the training events: the train set fitted (train accuracy >= 0.99), the test
    jump (the first checkpoint at half the test accuracy's rise from its start to its best,
    where it rose by at least 0.3), the H1 rise (the largest rise of H1 max from one
    checkpoint to the next), and the mean H1 max before the jump and after generalising."""
    steps = [r["step"] for r in series]
    acc = [r["accuracy"].get(accuracy) for r in series]
    fit = _first(steps, [r["accuracy"].get("train") for r in series], lambda v: v >= FIT)
    known = [v for v in acc if v is not None]
    jump = None
    if known and max(known) - known[0] >= 0.3:
        half = known[0] + (max(known) - known[0]) / 2
        jump = _first(steps, acc, lambda v: v >= half)
    h1 = [r.get("h1_max") for r in series]
    rises = [(b - a, s) for a, b, s in zip(h1, h1[1:], steps[1:])
             if a is not None and b is not None]  # fmt: skip
    rise = max(rises)[1] if rises else None
    before = [v for s, v in zip(steps, h1) if v is not None and jump is not None and s < jump]
    top = max(known) if known else 0
    after = [v for v, a in zip(h1, acc) if v is not None and a is not None and jump is not None
             and a >= 0.9 * top]  # fmt: skip
    return {
        "accuracy_split": accuracy,
        "train_fit_step": fit,
        "test_jump_step": jump,
        "h1_rise_step": rise,
        "h1_max_before_jump": float(np.mean(before)) if before else None,
        "h1_max_after_jump": float(np.mean(after)) if after else None,
    }


def correlations(series: list[dict], accuracy: str) -> dict:
    """Spearman correlation of each measure with ``accuracy`` across the checkpoints."""
    from scipy.stats import spearmanr

    out = {}
    for key in MEASURES + ("density",):
        pairs = [(r.get(key), r["accuracy"].get(accuracy)) for r in series]
        pairs = [(a, b) for a, b in pairs if a is not None and b is not None]
        if len(pairs) < 3 or len({a for a, _ in pairs}) < 2 or len({b for _, b in pairs}) < 2:
            continue
        rho, pvalue = spearmanr(*zip(*pairs))
        out[key] = {"rho": float(rho), "p": float(pvalue), "n": len(pairs)}
    return out
