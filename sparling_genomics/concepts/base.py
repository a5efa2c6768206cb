"""What every concept extractor returns and shares: :class:`Concepts` (concept directions or
blocks, an encoder, per-concept activations), input checks, scaling, and the training loop
of the autoencoder-shaped ones (TopK SAE, block-sparse featurizers).

Activations are centred and divided by their RMS before fitting, so one set of defaults
(learning rate, steps, shrinkage) fits layers of any scale; encoders undo nothing (a
concept's activation is in these scaled units)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn

from ..errors import ConfigError, InputError


@dataclass
class Scaling:
    """Centre and RMS of the activations a concept set was fitted on."""

    mean: np.ndarray
    scale: float

    @classmethod
    def of(cls, x: np.ndarray) -> Scaling:
        mean = x.mean(0)
        scale = float(np.sqrt(((x - mean) ** 2).sum(1).mean())) or 1.0
        return cls(mean.astype(np.float32), scale)

    def apply(self, x: np.ndarray) -> np.ndarray:
        return ((x - self.mean) / self.scale).astype(np.float32)


@dataclass
class Concepts:
    """A fitted concept set.

    ``blocks``: the decoder, ``(concepts, block, features)`` (block 1 for one-direction
    concepts); ``codes(x)``: the within-block coordinates ``(n, concepts, block)``;
    ``activate(x)``: per-concept activation ``(n, concepts)``, a block's norm (how strongly
    the block is used), or for ``signed`` concepts (a direction with a positive side, e.g.
    Deleuzian) the code itself; ``part(codes, c)``: concept c's share of the scaled
    activations. ``info``: the method's settings and fit figures (JSON-ready)."""

    method: str
    blocks: np.ndarray
    scaling: Scaling
    encode: Callable[[np.ndarray], np.ndarray]
    info: dict = field(default_factory=dict)
    signed: bool = False

    @property
    def count(self) -> int:
        return int(self.blocks.shape[0])

    @property
    def block(self) -> int:
        return int(self.blocks.shape[1])

    def codes(self, x: np.ndarray) -> np.ndarray:
        return self.encode(self.scaling.apply(np.asarray(x, np.float32)))

    def activate(self, x: np.ndarray) -> np.ndarray:
        codes = self.codes(x)
        return codes[:, :, 0] if self.signed else np.linalg.norm(codes, axis=2)

    def part(self, codes: np.ndarray, concept: int) -> np.ndarray:
        """One concept's contribution to the scaled activations: its code times its block."""
        return codes[:, concept, :] @ self.blocks[concept]


def check_activations(x: np.ndarray, concepts: int, where: str, *, k: int | None = None) -> None:
    """A one-line :class:`InputError` for activations that cannot be fitted, and a
    :class:`ConfigError` for a concept count or k the data cannot carry."""
    x = np.asarray(x)
    if x.ndim != 2 or x.shape[0] == 0 or x.shape[1] == 0:
        raise InputError(f"{where}: no activations to fit (shape {tuple(x.shape)})")
    if not np.isfinite(x).all():
        raise InputError(f"{where}: activations contain NaN or infinite values")
    if float(x.std(0).max()) == 0.0:
        raise InputError(f"{where}: activations are constant; nothing to extract")
    if concepts < 1:
        raise ConfigError(f"{where}: the number of concepts must be >= 1, got {concepts}")
    if concepts > x.shape[0]:
        raise ConfigError(
            f"{where}: {concepts} concepts from {x.shape[0]} activation rows; "
            "use fewer concepts or more data"
        )
    if k is not None and not 1 <= k <= concepts:
        raise ConfigError(f"{where}: k={k} must be between 1 and the number of concepts "
                          f"({concepts})")  # fmt: skip


def data_init(x: torch.Tensor, rows: int, generator: torch.Generator) -> torch.Tensor:
    """``rows`` unit-norm rows drawn from the data (a dictionary that starts where the data
    is: fewer dead concepts than a random start)."""
    pick = torch.randint(0, x.shape[0], (rows,), generator=generator)
    d = x[pick] + 0.01 * torch.randn(rows, x.shape[1], generator=generator)
    return d / d.norm(dim=1, keepdim=True).clamp_min(1e-8)


@dataclass
class FitSettings:
    """The autoencoders' optimiser: Adam at ``lr`` for ``steps`` batches of ``batch_size``."""

    steps: int = 3000
    batch_size: int = 1024
    lr: float = 3e-3
    seed: int = 0
    # Concepts active in fewer than ``dead_fraction`` of a window's rows are restarted on
    # the worst-reconstructed rows every ``resample_every`` steps, until ``resample_until``
    # of the fit (the usual cure for dead dictionary atoms).
    resample_every: int = 250
    resample_until: float = 0.7
    dead_fraction: float = 1e-3


class Autoencoder(nn.Module):
    """Shared shape: ``codes(x) -> (n, concepts, block)``, ``decode(codes) -> x``, and an
    optional ``penalty(codes)`` added to the squared error."""

    def codes(self, x: torch.Tensor) -> torch.Tensor:  # pragma: no cover - abstract
        raise NotImplementedError

    def decode(self, z: torch.Tensor) -> torch.Tensor:  # pragma: no cover - abstract
        raise NotImplementedError

    def dictionary(self) -> torch.Tensor:  # pragma: no cover - abstract
        raise NotImplementedError

    def penalty(self, z: torch.Tensor) -> torch.Tensor:
        return z.new_zeros(())

    def after_step(self, z: torch.Tensor) -> None:
        """Hook after each optimiser step (e.g. renormalise, adapt a penalty)."""

    def restart(self, concepts: torch.Tensor, blocks: torch.Tensor) -> None:
        """Put ``blocks`` (len(concepts), b, features) into the dictionary (and a separate
        encoder, where there is one) at ``concepts``."""
        with torch.no_grad():
            for name in ("decoder", "encoder"):
                weight = getattr(self, name, None)
                if weight is not None:
                    weight[concepts] = blocks.to(weight.dtype)
            bias = getattr(self, "enc_bias", None)
            if bias is not None:
                bias[concepts] = 0.0


def train_autoencoder(model: Autoencoder, x: np.ndarray, settings: FitSettings) -> dict:
    """Fit ``model`` to scaled activations ``x`` by Adam; returns the final fit figures
    (fraction of variance unexplained on all of ``x``, mean active concepts per row)."""
    generator = torch.Generator().manual_seed(settings.seed)
    data = torch.from_numpy(np.ascontiguousarray(x, np.float32))
    optimizer = torch.optim.Adam(model.parameters(), lr=settings.lr)
    n = data.shape[0]
    seen = fired = None
    restarted = 0
    for step in range(settings.steps):
        batch = data[torch.randint(0, n, (min(settings.batch_size, n),), generator=generator)]
        z = model.codes(batch)
        loss = ((model.decode(z) - batch) ** 2).sum(1).mean() + model.penalty(z)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        with torch.no_grad():
            model.after_step(z.detach())
            active = (z.detach().norm(dim=2) > 0).sum(0)
            fired = active if fired is None else fired + active
            seen = len(batch) if seen is None else seen + len(batch)
            every = settings.resample_every
            if every and (step + 1) % every == 0:
                if step + 1 < settings.resample_until * settings.steps:
                    dead = torch.nonzero(fired < settings.dead_fraction * seen).flatten()
                    if len(dead):
                        restarted += len(dead)
                        model.restart(dead, _worst_rows(model, batch, len(dead), generator))
                        optimizer.state.clear()  # stale moments would throw them out again
                seen = fired = None
    return {**fit_figures(model, data), "restarted": restarted}


@torch.no_grad()
def _worst_rows(model: Autoencoder, batch: torch.Tensor, count: int, g: torch.Generator):
    """``count`` blocks started from the residuals of the batch's worst-reconstructed rows
    (each block: its row's residual and a few neighbours', orthonormalised)."""
    residual = batch - model.decode(model.codes(batch))
    order = residual.norm(dim=1).argsort(descending=True)
    b = model.dictionary().shape[1]
    picks = order[: max(count * b, 1)]
    rows = residual[picks][: count * b]
    if len(rows) < count * b:
        rows = torch.cat([rows, torch.randn(count * b - len(rows), batch.shape[1], generator=g)])
    rows = rows + 0.01 * torch.randn(rows.shape, generator=g)
    return orthonormal_blocks(rows.reshape(count, b, -1))


def orthonormal_blocks(blocks: torch.Tensor) -> torch.Tensor:
    """``blocks`` (count, b, features) with each block's rows orthonormalised (QR); rows
    beyond the feature count are zero."""
    q, _ = torch.linalg.qr(blocks.transpose(1, 2))  # (count, features, min(b, features))
    out = torch.zeros_like(blocks)
    out[:, : q.shape[2]] = q.transpose(1, 2)
    return out


@torch.no_grad()
def fit_figures(model: Autoencoder, data: torch.Tensor) -> dict:
    """Fraction of variance unexplained and mean active concepts, over all rows."""
    err = total = active = 0.0
    for chunk in data.split(8192):
        z = model.codes(chunk)
        err += float(((model.decode(z) - chunk) ** 2).sum())
        total += float((chunk**2).sum())
        active += float((z.norm(dim=2) > 0).sum())
    return {"fvu": round(err / max(total, 1e-12), 5), "active": round(active / len(data), 3)}


def to_concepts(method: str, model: Autoencoder, scaling: Scaling, info: dict) -> Concepts:
    """A trained autoencoder as a :class:`Concepts` (weights copied out of torch)."""
    model.eval()

    @torch.no_grad()
    def encode(x: np.ndarray) -> np.ndarray:
        out = [model.codes(c).numpy() for c in torch.from_numpy(x).split(8192)]
        return np.concatenate(out) if out else np.zeros((0, *model.dictionary().shape[:2]))

    with torch.no_grad():
        blocks = model.dictionary().numpy().copy()
    return Concepts(method, blocks, scaling, encode, info=info)
