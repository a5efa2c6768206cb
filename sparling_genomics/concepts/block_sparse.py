"""Block-sparse featurizers (seed 002): a concept is a block of ``b`` coordinates kept or
dropped together, so one concept can carry a small manifold (a circle, a sphere, a torus)
rather than one direction.

- ``vanilla``: linear encoder and decoder; keep each row's ``k`` blocks of largest l2 norm.
- ``grassmannian``: each decoder block has orthonormal rows (a point on the Stiefel manifold,
  kept there by a QR retraction after every step); the encoder is tied,
  ``z_i = gamma * D_i (x - b)``; the same top-k block projection.
- ``group_lasso``: linear encoder, block soft-shrinkage ``u_i * relu(1 - theta_i / |u_i|)`` of
  the encoder's blocks ``u_i`` and an l2,1 penalty ``lambda * sum_i |u_i|``; a threshold
  offset shared by the blocks is adapted during the fit so that about ``k`` blocks survive
  per row (the shrinkage sets the support; no hard top-k). The penalty is on the encoder's
  blocks before the shrinkage: on the shrunk codes it never reaches a block below the
  threshold, nothing keeps the unused blocks small, the encoder inflates every block and the
  threshold chases it (synthetic test, block 4, k 3: threshold 0.1 -> 6.5, FVU 0.17, R^2
  0.53); before it, the unused blocks are pushed under the threshold. lambda is 0.1: at 0.01
  the synthetic test did a little better (R^2 0.992 against 0.981) but on a real layer (the
  planted draw 2's non-sparse ``hidden``, 7 blocks, k 1) the encoder still outgrew the
  penalty and the threshold ran away (1,700 after 1,300 steps, FVU 119); at 0.1 every block
  and k tried there stays within 0.08 of its vanilla start's FVU.

Grassmannian and Group-Lasso fits start from the blocks of a short vanilla fit (a third of
the steps; orthonormalised for the Grassmannian): from a random or data start their own
losses stall in poor optima (seed 002's synthetic test, 12 manifolds in 64-D, 24 blocks of 4:
recovery R^2 0.19 and 0.21 from a data start, against 0.997 for vanilla).

The Grassmannian's tied encoder ranks blocks by how much of a row they *span*, so the warm
start's unused blocks (the vanilla encoder never picked them, but their decoder rows still
overlap the used blocks' subspaces by 30-97% on that test) would win the top-k against the
right ones: fraction of variance unexplained jumps from 0.04 to 0.86 at the switch. They
restart in the orthogonal complement of the used blocks instead (0.42 at the switch, given
b 4 / k 3: R^2 0.876 -> 0.899).

Read-out after the fit (the fitted concepts' ``codes``):

- Grassmannian: the tied projection still picks the k blocks, but their coordinates are the
  least-squares coordinates of the row in the union of the k subspaces (:func:`joint_codes`).
  A block's own projection also takes in the other active manifolds' share of its subspace
  (about b / d of each), which vanilla's free encoder learns to ignore; solving for the kept
  blocks together removes it (synthetic test, given b 4 / k 3: R^2 0.899 -> 0.951, worst
  manifold 0.807 -> 0.895). Trained that way from the switch it does worse (R^2 0.04: the
  least-squares codes no longer push the blocks apart, so the projection picks wrong ones),
  so the fit itself keeps the tied codes.
- Group-Lasso: a relaxed fit (as the relaxed lasso): the shrinkage's support is kept, and
  a few rounds of least-squares codes on that support and a least-squares decoder (the
  method of optimal directions) undo the shrinkage's bias on the amplitudes and the
  dictionary (synthetic test, given b 4 / k 3: FVU 0.023 -> 0.006, R^2 0.981 -> 0.998). The
  shrunk codes leave a residual that the description length charges for: before it, MDL
  chose 8-blocks (R^2 0.70) by one bit; relaxed, b 4 is 89 bits per row against b 8's 97.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from .base import (
    Autoencoder,
    Concepts,
    FitSettings,
    Scaling,
    check_activations,
    data_init,
    fit_figures,
    orthonormal_blocks,
    to_concepts,
    train_autoencoder,
)

VARIANTS = ("vanilla", "grassmannian", "group_lasso")
#: The variants whose fits start from a short vanilla fit.
WARM_STARTED = ("grassmannian", "group_lasso")


def keep_top_blocks(z: torch.Tensor, k: int) -> torch.Tensor:
    """``z`` (n, blocks, b) with all but each row's ``k`` largest-norm blocks set to zero."""
    energy = (z * z).sum(2)  # the squared norm ranks blocks as the norm does, for less
    keep = torch.zeros_like(energy).scatter(1, energy.topk(k, dim=1).indices, 1.0)
    return z * keep.unsqueeze(2)


def project(x: torch.Tensor, blocks: torch.Tensor) -> torch.Tensor:
    """``x`` (n, features) onto every block's rows: (n, blocks, b), as one matrix product
    over the flattened blocks (an einsum over ``cbf`` runs as a batched product)."""
    c, b, f = blocks.shape
    return (x @ blocks.reshape(c * b, f).T).view(len(x), c, b)


def combine(z: torch.Tensor, blocks: torch.Tensor) -> torch.Tensor:
    """Codes ``z`` (n, blocks, b) times their blocks, summed: (n, features)."""
    c, b, f = blocks.shape
    return z.reshape(len(z), c * b) @ blocks.reshape(c * b, f)


def joint_codes(r: torch.Tensor, blocks: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
    """Least-squares coordinates of ``r`` (n, features) in the union of each row's kept
    blocks (``keep`` (n, blocks) bool), zero elsewhere: (n, blocks, b). Solved over
    8192-row chunks (bounds the per-row Gram matrices)."""
    c, b, _ = blocks.shape
    if len(r) > 8192:
        return torch.cat([joint_codes(rc, blocks, kc) for rc, kc in zip(r.split(8192),
                                                                         keep.split(8192))])
    n = len(r)
    m = int(keep.sum(1).max()) if n else 0
    if m == 0:
        return r.new_zeros(n, c, b)
    idx = keep.to(r.dtype).topk(m, dim=1).indices  # (n, m): the kept blocks first
    valid = keep.gather(1, idx).to(r.dtype)
    basis = (blocks[idx] * valid[:, :, None, None]).reshape(n, m * b, -1)
    # Padding slots (rows keeping fewer than m blocks) get a unit diagonal and solve to
    # zero; a small ridge keeps nearly collinear kept blocks solvable.
    ridge = torch.diag_embed((1.0 - valid).repeat_interleave(b, 1) + 1e-4)
    solution = torch.linalg.solve(basis @ basis.transpose(1, 2) + ridge, basis @ r.unsqueeze(2))
    solution = solution.view(n, m, b) * valid.unsqueeze(2)
    return r.new_zeros(n, c, b).scatter(1, idx.unsqueeze(2).expand(n, m, b), solution)


def _block_init(x: torch.Tensor, blocks: int, b: int, g: torch.Generator) -> torch.Tensor:
    """Blocks of data rows, each orthonormalised: ``(blocks, b, features)``."""
    return orthonormal_blocks(data_init(x, blocks * b, g).reshape(blocks, b, -1))


@torch.no_grad()
def spare_unused_blocks(start: VanillaBSF, x: torch.Tensor, g: torch.Generator,
                        dead_fraction: float) -> torch.Tensor:  # fmt: skip
    """The warm start's decoder blocks, orthonormalised, with the blocks it picks in fewer
    than ``dead_fraction`` of the rows moved to random orthonormal blocks in the orthogonal
    complement of the used blocks' span (so that a tied encoder does not rank them above the
    used blocks that span the same rows)."""
    blocks = orthonormal_blocks(start.decoder.detach().clone())
    picked = (start.codes(x).norm(dim=2) > 0).float().mean(0)
    unused = torch.nonzero(picked < dead_fraction).flatten()
    used = torch.nonzero(picked >= dead_fraction).flatten()
    if len(unused) == 0:
        return blocks
    count, b, features = len(unused), blocks.shape[1], blocks.shape[2]
    draw = torch.randn(count * b, features, generator=g)
    if len(used):
        span, _ = torch.linalg.qr(blocks[used].reshape(-1, features).T)  # (features, r)
        if span.shape[1] < features:  # when the used blocks span everything, no complement
            draw = draw - (draw @ span) @ span.T
    blocks[unused] = orthonormal_blocks(draw.reshape(count, b, features))
    return blocks


class VanillaBSF(Autoencoder):
    def __init__(self, init: torch.Tensor, k: int) -> None:
        super().__init__()
        blocks, b, features = init.shape
        self.k = k
        self.decoder = nn.Parameter(init.clone())
        self.encoder = nn.Parameter(init.clone())
        self.enc_bias = nn.Parameter(torch.zeros(blocks, b))
        self.bias = nn.Parameter(torch.zeros(features))

    def codes(self, x: torch.Tensor) -> torch.Tensor:
        z = project(x - self.bias, self.encoder) + self.enc_bias
        return keep_top_blocks(z, self.k)

    def decode(self, z: torch.Tensor) -> torch.Tensor:
        return combine(z, self.decoder) + self.bias

    def dictionary(self) -> torch.Tensor:
        return self.decoder

    def after_step(self, z: torch.Tensor) -> None:
        # A block's scale lives in its codes: unit Frobenius norm per block per row-sum.
        norms = self.decoder.norm(dim=2, keepdim=True).clamp_min(1e-8)
        self.decoder.div_(norms)


class GrassmannianBSF(Autoencoder):
    def __init__(self, init: torch.Tensor, k: int) -> None:
        super().__init__()
        self.k = k
        self.decoder = nn.Parameter(init.clone())
        self.log_gamma = nn.Parameter(torch.zeros(()))
        self.bias = nn.Parameter(torch.zeros(init.shape[2]))
        self.joint = False  # set after the fit: the kept blocks' joint coordinates

    def codes(self, x: torch.Tensor) -> torch.Tensor:
        z = keep_top_blocks(self.log_gamma.exp() * project(x - self.bias, self.decoder), self.k)
        if not self.joint:
            return z
        return joint_codes(x - self.bias, self.decoder, z.norm(dim=2) > 0)

    def decode(self, z: torch.Tensor) -> torch.Tensor:
        return combine(z, self.decoder) + self.bias

    def dictionary(self) -> torch.Tensor:
        return self.decoder

    def after_step(self, z: torch.Tensor) -> None:
        # QR retraction back onto orthonormal rows (sign-fixed so a block does not flip).
        q, r = torch.linalg.qr(self.decoder.transpose(1, 2))
        signs = torch.sign(torch.diagonal(r, dim1=1, dim2=2)).clamp_min(0) * 2 - 1
        self.decoder.copy_((q * signs.unsqueeze(1)).transpose(1, 2))


class GroupLassoBSF(Autoencoder):
    def __init__(self, init: torch.Tensor, k: int, *, lam: float = 0.1, rate: float = 0.02):
        super().__init__()
        blocks, b, features = init.shape
        self.k, self.rate, self.lam = k, rate, lam
        self.decoder = nn.Parameter(init.clone())
        self.encoder = nn.Parameter(init.clone())
        self.enc_bias = nn.Parameter(torch.zeros(blocks, b))
        self.raw_theta = nn.Parameter(torch.full((blocks,), -6.0), requires_grad=False)
        self.bias = nn.Parameter(torch.zeros(features))
        # A shared threshold offset, adapted so that about k blocks survive the shrinkage.
        self.register_buffer("tau", torch.tensor(0.1))
        self.relaxed = False  # set by :func:`relax`: least-squares codes on the support

    def codes(self, x: torch.Tensor) -> torch.Tensor:
        u = project(x - self.bias, self.encoder) + self.enc_bias
        norms = u.norm(dim=2, keepdim=True).clamp_min(1e-8)
        self.block_norms = norms.squeeze(2)  # the penalty's: the batch's blocks, unshrunk
        theta = (F.softplus(self.raw_theta) + self.tau).view(1, -1, 1)
        z = u * torch.relu(1.0 - theta / norms)
        if not self.relaxed:
            return z
        return joint_codes(x - self.bias, self.decoder, z.norm(dim=2) > 0)

    def decode(self, z: torch.Tensor) -> torch.Tensor:
        return combine(z, self.decoder) + self.bias

    def dictionary(self) -> torch.Tensor:
        return self.decoder

    def penalty(self, z: torch.Tensor) -> torch.Tensor:
        return self.lam * self.block_norms.sum(1).mean()

    def after_step(self, z: torch.Tensor) -> None:
        self.decoder.div_(self.decoder.norm(dim=2, keepdim=True).clamp_min(1e-8))
        active = float((z.norm(dim=2) > 0).float().sum(1).mean())
        self.tau.mul_(math.exp(self.rate * max(-1.0, min(1.0, (active - self.k) / self.k))))


@torch.no_grad()
def relax(model: GroupLassoBSF, x: torch.Tensor, rounds: int = 3) -> None:
    """The relaxed fit: each row's support fixed as the shrinkage sets it, then ``rounds`` of
    least-squares codes on it and a least-squares decoder and bias (the method of optimal
    directions); the model then reads out least-squares codes."""
    support = model.codes(x).norm(dim=2) > 0
    c, b, f = model.decoder.shape
    old_bias = model.bias.clone()
    for _ in range(rounds):
        z = joint_codes(x - model.bias, model.decoder, support)
        design = torch.cat([z.reshape(len(x), c * b), x.new_ones(len(x), 1)], 1)
        gram = design.T @ design + 1e-4 * torch.eye(c * b + 1)
        solution = torch.linalg.solve(gram, design.T @ x)
        decoder = solution[:-1].view(c, b, f)
        model.decoder.copy_(decoder / decoder.norm(dim=2, keepdim=True).clamp_min(1e-8))
        model.bias.copy_(solution[-1])
    # The encoder centred on the old bias: fold the shift into its block offsets, so that the
    # support (which the encoder sets) stays the one the decoder was refitted on.
    model.enc_bias.add_(project((model.bias - old_bias).unsqueeze(0), model.encoder)[0])
    model.relaxed = True


def fit_block_sparse(
    x: np.ndarray,
    variant: str,
    concepts: int,
    block: int,
    k: int,
    settings: FitSettings | None = None,
    *,
    where: str = "activations",
) -> Concepts:
    """A block-sparse featurizer (``variant`` in :data:`VARIANTS`) with ``concepts`` blocks of
    ``block`` coordinates, about ``k`` active per row, fitted to ``x`` (n, d)."""
    settings = settings or FitSettings()
    check_activations(x, concepts, where, k=k)
    if variant not in VARIANTS:
        raise ValueError(f"unknown block-sparse variant {variant!r}")
    scaling = Scaling.of(np.asarray(x, np.float64))
    scaled = scaling.apply(x)
    generator = torch.Generator().manual_seed(settings.seed)
    torch.manual_seed(settings.seed)
    init = _block_init(torch.from_numpy(scaled), concepts, block, generator)
    cls = {"vanilla": VanillaBSF, "grassmannian": GrassmannianBSF,
           "group_lasso": GroupLassoBSF}[variant]  # fmt: skip
    info = {"concepts": concepts, "block": block, "k": k, "steps": settings.steps}
    if variant in WARM_STARTED:
        warm = replace(settings, steps=max(1, settings.steps // 3))
        start = VanillaBSF(init, k)
        info["warm_start"] = {"vanilla_steps": warm.steps, **train_autoencoder(start, scaled, warm)}
        if variant == "grassmannian":
            init = spare_unused_blocks(start, torch.from_numpy(scaled[:8192]), generator,
                                       settings.dead_fraction)  # fmt: skip
        else:
            init = start.decoder.detach().clone()
        settings = replace(settings, steps=settings.steps - warm.steps)
    model = cls(init, k)
    if variant == "group_lasso":
        with torch.no_grad():
            model.encoder.copy_(start.encoder)
            model.enc_bias.copy_(start.enc_bias)
            model.bias.copy_(start.bias)
            # The offset starts at half the median (k+1)-th block norm and rises from there
            # (a block shrunk to zero everywhere gets no gradient: starting high kills some).
            sample = torch.from_numpy(scaled[:8192])
            z = project(sample - model.bias, model.encoder) + model.enc_bias
            cut = z.norm(dim=2).sort(1, descending=True).values[:, min(k, concepts - 1)]
            model.tau.fill_(0.5 * float(cut.median()))
        # Its blocks are the warm start's: restarting a shrunk-away block loses its manifold.
        settings = replace(settings, resample_every=0)
    elif variant == "grassmannian":
        with torch.no_grad():
            model.bias.copy_(start.bias)
    info.update(train_autoencoder(model, scaled, settings))
    data = torch.from_numpy(scaled)
    if variant == "grassmannian":
        model.joint = True
        info["tied_fvu"] = info["fvu"]
        info.update(fit_figures(model, data))
    elif variant == "group_lasso":
        info["shrunk_fvu"] = info["fvu"]
        relax(model, data)
        info.update(fit_figures(model, data))
    return to_concepts(f"bsf_{variant}", model, scaling, info)
