"""Seed 002's synthetic test: activations that are additive superpositions of low-dimensional
manifolds (circles, spheres, tori), each embedded linearly in a higher-dimensional space;
a few manifolds active per row, each at a random point of itself, plus noise. The answer is
known: each manifold's contribution to every row."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: Coordinates each kind needs in its ambient block: a circle lies in a plane, a sphere in
#: 3-D, a (flat) torus S1 x S1 in 4-D.
AMBIENT = {"circle": 2, "sphere": 3, "torus": 4}


@dataclass
class Superposition:
    """``x`` (n, dim) = sum of ``parts`` (n, manifolds, dim) + noise; ``kinds`` per manifold;
    ``active`` (n, manifolds) which manifolds are present in each row."""

    x: np.ndarray
    parts: np.ndarray
    kinds: list[str]
    active: np.ndarray


def manifold_points(kind: str, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` uniform points of a unit manifold of ``kind`` in its ambient coordinates."""
    if kind == "circle":
        t = rng.uniform(0, 2 * np.pi, n)
        return np.stack([np.cos(t), np.sin(t)], 1)
    if kind == "sphere":
        v = rng.standard_normal((n, 3))
        return v / np.linalg.norm(v, axis=1, keepdims=True)
    if kind == "torus":
        a, b = rng.uniform(0, 2 * np.pi, (2, n))
        return np.stack([np.cos(a), np.sin(a), np.cos(b), np.sin(b)], 1) / np.sqrt(2)
    raise ValueError(f"unknown manifold kind {kind!r}")


def superposition(
    n: int = 20_000,
    *,
    dim: int = 64,
    kinds: tuple[str, ...] = ("circle", "sphere", "torus") * 4,
    active: int = 3,
    noise: float = 0.02,
    seed: int = 0,
) -> Superposition:
    """``n`` rows with ``active`` of ``len(kinds)`` manifolds present in each, each manifold
    embedded by its own random orthonormal map into ``dim`` dimensions (maps of different
    manifolds overlap: the embedding is a superposition, not a block diagonal)."""
    rng = np.random.default_rng(seed)
    m = len(kinds)
    if not 1 <= active <= m:
        raise ValueError(f"active must be between 1 and {m}")
    maps = []
    for kind in kinds:
        q, _ = np.linalg.qr(rng.standard_normal((dim, AMBIENT[kind])))
        maps.append(q.T)  # (ambient, dim)
    on = np.zeros((n, m), bool)
    on[np.arange(n)[:, None], np.argsort(rng.random((n, m)), axis=1)[:, :active]] = True
    parts = np.zeros((n, m, dim))
    for i, kind in enumerate(kinds):
        rows = np.flatnonzero(on[:, i])
        amplitude = rng.uniform(0.5, 1.5, len(rows))[:, None]
        parts[rows, i] = amplitude * manifold_points(kind, len(rows), rng) @ maps[i]
    x = parts.sum(1) + noise * rng.standard_normal((n, dim))
    return Superposition(x.astype(np.float32), parts.astype(np.float32), list(kinds), on)
