"""Re-initialising wasted motifs during training (the resampling rule).

Seen on the splicing task (issue 57, the default pipeline at e9b7c12): of 32 learned channels,
10 ended as near-copies of another and 7 never changed the output when dropped: capacity the
firing budget pays for and the motifs do not use. Sparse-autoencoder training meets the same
waste as dead features and resamples them; ReDo (Sokar et al., 2023) re-initialises dormant
neurons. This rule does that to motifs, while the density schedule still leaves the fresh
motif time to learn (``models/reinit.py`` is the edit).

The rule, with ``annealing.resample_samples`` W (0 or unset: off): from the first evaluation
at a density of at most ``resample_within`` (8) x the stop density, and every W samples after,
until ``resample_until`` (half) of the final phase has passed, at an evaluation with no step
on probation (``rollback.py``), the learned motifs are looked at on the first validation inputs
(64 windows for a site task, 512 inputs otherwise):

* never needed: the motif's alpha (the share of inputs whose output changes when it is
  dropped, ``evaluate/identifiability.py``) is under a fifth of the median motif's (0
  included), the identifiability check's idle rule;
* near-copies (1-D sequence input: one-hot DNA): PWMs from the motif's sites on the inputs
  (the receptive-field window, read on the strand g found the motif on, trimmed to its
  informative columns) and the sites themselves, under ``evaluate/copies.py``'s criteria (PWM
  similarity >= 0.9 or half the sites within +-2 nt); in each group of copies the motif with
  the highest alpha (then the most sites) stays and the others are re-initialised, their
  outgoing weights added to the one that stays.

At most a quarter of the learned motifs a look, least-needed first, and ``resample_limit``
(half of the learned motifs) a run. A re-initialised motif is left alone for the next
``GRACE_LOOKS`` (4) looks' worth of samples: on TAIR10 chr1 (seed 0, W = 2,400) the second
look re-initialised again five of the eight motifs the first had, before they could have
learnt anything, and spent the run's limit. The look's cost is the identifiability check's:
one ``h`` pass per motif over the inputs looked at.

A fresh motif's filter (``resample_init``): ``random`` (the default) draws it from g's output
layer's own initialisation, as ReDo does; on TAIR10 chr1 those re-formed the composition
family they were taken from. ``missed`` (site tasks) points it where the model errs, as
sparse-autoencoder training resamples dead features towards badly reconstructed inputs:
:func:`missed_directions` draws validation positions by squared loss and takes the centred
features g's output layer reads there.

``resample_copies: false`` leaves near-copies alone and re-initialises never-needed motifs
only: on TAIR10 chr1 (seed 0) both inits spent most of the limit on copies, and the fresh
motifs became copies again (9 at the end against the default's 5); never-needed motifs only
did no better (7 never needed at the end, as the default). Over 3 seeds the rule gains
nothing against the default (BENCHMARKS.md, "Splicing over seeds"): it is off in every preset.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np
import torch
import torch.nn.functional as F

from ..config import restore_fields
from ..errors import ConfigError
from ..evaluate.copies import near_copies
from ..evaluate.identifiability import (
    IDLE_SHARE,
    SAMPLES,
    SITE_WINDOWS,
    channel_necessity,
    idle_channels,
)
from ..genome.pwm import trim
from ..models.reinit import check_reinit, reinit_motif
from ..sparsity.annealing import AnnealingSettings
from ..tasks.base import first_eval_batches
from .schedule import final_share

DEFAULT_WITHIN = 8.0  # looks start once the density is at most this x the stop density
DEFAULT_UNTIL = 0.5  # and end once this share of the final phase has passed
PER_LOOK = 0.25  # at most this share of the learned motifs re-initialised at one look
GRACE_LOOKS = 4  # a re-initialised motif is not picked again for this many looks' samples
MIN_SITES = 10  # a motif with fewer sites on the inputs gets no PWM (its sites still count)
PSEUDOCOUNT = 0.1


@torch.no_grad()
def motif_pwms_and_sites(model, task, split: str, *, samples: int, batch_size: int,
                         device) -> tuple[dict, dict]:  # fmt: skip
    """Per learned motif of a model over 1-D one-hot DNA input: its trimmed PWM (width, 4)
    from the receptive-field windows of its sites (on the strand g read it on) and its sites
    as (input index, position) arrays, over the first ``samples`` inputs of ``split``."""
    learned = model.learned
    rf = int(model.g.receptive_field)
    half = rf // 2
    counts = torch.zeros(learned, 4, rf, dtype=torch.float64)
    found: dict[int, list] = {c: [] for c in range(learned)}
    seen = 0
    was_training = model.training
    model.eval()
    try:
        for batch in first_eval_batches(task, split, batch_size, samples):
            x = batch.x.to(device)
            motifs = model.motifs(x)[:, :learned]
            strand = None
            if getattr(model.g, "reverse_complement", False):
                strand = model.g.strand_of_max(x)
            n, c, p = torch.nonzero(motifs > 0, as_tuple=True)
            windows = torch.nn.functional.pad(x, (half, half)).unfold(-1, rf, 1)  # N, 4, L, rf
            site_windows = windows[n, :, p].double().cpu()  # S, 4, rf
            if strand is not None:  # the reverse strand's site read 5'->3': both axes flip
                flip = strand[n, c, p].bool().cpu()
                site_windows[flip] = site_windows[flip].flip(1, 2)
            counts.index_add_(0, c.cpu(), site_windows)
            for ch, index, pos in zip(c.tolist(), (n + seen).tolist(), p.tolist()):
                found[ch].append((index, pos))
            seen += len(x)
    finally:
        model.train(was_training)
    pwms, sites = {}, {}
    for ch in range(learned):
        rows = np.asarray(found[ch], np.int64).reshape(-1, 2)
        sites[ch] = (rows[:, 0], rows[:, 1])
        if len(rows) >= MIN_SITES:
            probs = counts[ch].numpy().T + PSEUDOCOUNT
            probs = probs / probs.sum(axis=1, keepdims=True)
            lo, hi = trim(probs)
            pwms[ch] = probs[lo:hi]
    return pwms, sites


def pick_wasted(alpha: list[float], groups: list[list[int]], nsites: list[int], budget: int,
                spare: frozenset[int] | set[int] = frozenset()) -> list[tuple]:  # fmt: skip
    """(motif, motif to merge its outgoing weights into or None, why) of the motifs to
    re-initialise: the copies beyond the one that stays in each group (highest alpha, then
    most sites), then the never-needed motifs that stay in no group, least-needed first, at
    most ``budget``; motifs in ``spare`` (re-initialised lately) are never picked."""
    picked: dict[int, tuple[int | None, str]] = {}
    keepers = set()
    for group in groups:
        keeper = max(group, key=lambda m: (alpha[m], nsites[m], -m))
        keepers.add(keeper)
        for m in group:
            if m != keeper:
                picked[m] = (keeper, f"copy of {keeper}")
    for m in idle_channels(dict(enumerate(alpha)), IDLE_SHARE, dead=True):
        if m not in picked and m not in keepers:
            picked[m] = (None, "never needed")
    order = sorted((m for m in picked if m not in spare),
                   key=lambda m: (alpha[m], m))[: max(0, budget)]  # fmt: skip
    return [(m, *picked[m]) for m in order]


def wasted_motifs(model, task, *, batch_size: int, device, budget: int,
                  spare: frozenset[int] | set[int] = frozenset(),
                  copies_too: bool = True) -> dict:  # fmt: skip
    """One look at the first validation inputs (64 windows for a site task, 512 inputs
    otherwise): ``alpha`` of each learned motif, the ``copies`` found (1-D DNA tasks with
    ``copies_too``; else none) and the motifs :func:`pick_wasted` ``picked``."""
    inputs = SITE_WINDOWS if task.scoring == "sites" else SAMPLES
    necessity = channel_necessity(model, task, "val", batch_size=batch_size, device=device,
                                  samples=inputs)  # fmt: skip
    alpha = necessity["alpha"][: model.learned]  # not a supplied core's channels
    copies = {"groups": [], "copies": 0}
    nsites = [0] * model.learned
    if copies_too and _sequence_input(task):
        pwms, sites = motif_pwms_and_sites(model, task, "val", samples=inputs,
                                           batch_size=batch_size, device=device)  # fmt: skip
        nsites = [len(sites[m][0]) for m in range(model.learned)]
        copies = near_copies(pwms, {m: sites[m] for m in pwms})
    picked = pick_wasted(alpha, copies["groups"], nsites, budget, spare)
    return {"alpha": alpha, "copies": copies, "picked": picked}


@torch.no_grad()
def missed_directions(model, task, count: int, *, batch_size: int, device,
                      generator: torch.Generator) -> torch.Tensor:  # fmt: skip
    """``count`` filters for g's output layer, each the features g's output layer reads at
    a position of the first validation windows' output (the input's middle, without the
    context flanks) drawn with probability proportional to its squared loss, less the
    features' mean over all those positions (the resampling of dead features in
    sparse-autoencoder training, which points a new feature at badly reconstructed inputs):
    a fresh motif that starts where the model errs, not in whatever basin a random filter
    falls into. Site tasks (a loss per position) only."""
    captured = []
    hook = model.g.out.register_forward_hook(lambda mod, inp, out: captured.append(inp[0]))
    losses, features = [], []
    was_training = model.training
    model.eval()
    try:
        for batch in first_eval_batches(task, "val", batch_size, SITE_WINDOWS):
            x, y = batch.x.to(device), batch.y
            captured.clear()
            logits = model(x)["logits"]
            loss = F.cross_entropy(logits, y.to(logits.device), ignore_index=-1,
                                   reduction="none")  # fmt: skip
            z = captured[0][: len(x)].flatten(2)  # forward strand: (N, hidden, input length)
            start = (z.shape[-1] - loss.shape[-1]) // 2  # the output window: the input's middle
            z = z[..., start : start + loss.shape[-1]]
            losses.append(loss.flatten().cpu())
            features.append(z.transpose(1, 2).reshape(-1, z.shape[1]).cpu())
    finally:
        hook.remove()
        model.train(was_training)
    loss, z = torch.cat(losses).double(), torch.cat(features).double()
    weights = loss.clamp_min(0) ** 2
    if weights.sum() <= 0:
        weights = torch.ones_like(weights)
    rows = torch.multinomial(weights, count, replacement=False, generator=generator)
    return (z[rows] - z.mean(dim=0)).float()


@dataclass
class WastedResample:
    """The rule's settings and what it has done (``log``: samples, motif, why, density)."""

    samples: int = 0  # W; 0: off
    within: float = DEFAULT_WITHIN
    until: float = DEFAULT_UNTIL
    limit: int | None = None  # None: half of the learned motifs
    init: str = "random"  # a fresh motif's filter: "random" (ReDo) or "missed" (see module)
    copies: bool = True  # near-copies re-initialised too (False: never-needed motifs only)
    done: int = 0
    since: int = -1  # samples at the last look (-1: none yet)
    log: list = field(default_factory=list)
    fresh: dict = field(default_factory=dict)  # motif -> samples when it was re-initialised

    @classmethod
    def from_settings(cls, a: AnnealingSettings) -> WastedResample:
        if a.resample_samples and a.split_samples:
            raise ConfigError(
                "annealing.resample_samples and annealing.split_samples: use one of the two "
                "rules (a split makes the copy the other re-initialises); set the other to 0"
            )
        within = DEFAULT_WITHIN if a.resample_within is None else a.resample_within
        until = DEFAULT_UNTIL if a.resample_until is None else a.resample_until
        return cls(samples=a.resample_samples or 0, within=float(within), until=float(until),
                   limit=a.resample_limit, init=a.resample_init or "random",
                   copies=a.resample_copies is not False)  # fmt: skip

    @property
    def enabled(self) -> bool:
        return self.samples > 0

    def check_model(self, model, task) -> None:
        """Fail before training when the rule is on but ``model`` cannot be edited (or the
        ``missed`` init asked for where ``task`` has no loss per position)."""
        if self.enabled and model.sparse is not None:
            check_reinit(model)
            if self.init == "missed" and task.scoring != "sites":
                raise ConfigError("annealing.resample_init=missed: needs a task scored per "
                                  "position (sites); use random")  # fmt: skip

    def limit_for(self, learned: int) -> int:
        return learned // 2 if self.limit is None else int(self.limit)

    def due(self, samples: int, density: float | None, stop_density: float,
            final_share: float, learned: int) -> bool:  # fmt: skip
        """Whether this evaluation looks (``final_share``: the share of the final phase
        passed, 0 while annealing)."""
        return (
            self.enabled
            and density is not None
            and self.done < self.limit_for(learned)
            and density <= self.within * stop_density
            and final_share < self.until
            and (self.since < 0 or samples - self.since >= self.samples)
        )

    def review(self, trainer, samples: int) -> dict:
        """At an evaluation with no step on probation: re-initialise the wasted motifs of the
        trainer's model when a look is due; the log record's additions (empty when none)."""
        model, s = trainer.model, trainer.state
        if trainer.probation.active or model.sparse is None:
            return {}
        share = final_share(trainer.config.train, s, samples)
        if not self.due(samples, model.density, trainer.stop_density, share,
                        model.learned):  # fmt: skip
            return {}
        self.since = samples
        budget = min(max(1, int(PER_LOOK * model.learned)),
                     self.limit_for(model.learned) - self.done)  # fmt: skip
        spare = {int(m) for m, at in self.fresh.items()
                 if samples - at < GRACE_LOOKS * self.samples}  # fmt: skip
        found = wasted_motifs(model, trainer.task, batch_size=trainer.config.train.eval_batch_size,
                              device=trainer.device, budget=budget, spare=spare,
                              copies_too=self.copies)  # fmt: skip
        picked, alpha = found["picked"], found["alpha"]
        directions = None
        if self.init == "missed" and picked:
            draw = torch.Generator().manual_seed(trainer.config.seed * 7919 + 15_485_863
                                                 + self.done)  # fmt: skip
            directions = missed_directions(
                model, trainer.task, len(picked) * model.block_size, generator=draw,
                batch_size=trainer.config.train.eval_batch_size, device=trainer.device)
        for i, (motif, merge, why) in enumerate(picked):
            generator = torch.Generator().manual_seed(trainer.config.seed * 7919 + 104_729
                                                      + self.done)  # fmt: skip
            b = model.block_size
            reinit_motif(model, motif, merge=merge, optimizer=trainer.optimizer,
                         generator=generator,
                         direction=None if directions is None else directions[i * b:(i + 1) * b])
            self.done += 1
            self.fresh[motif] = samples
            self.log.append([samples, motif, why, round(float(alpha[motif]), 4), model.density])
        if not picked:
            return {}
        return {"resample": [{"motif": m, "why": why, "alpha": round(float(alpha[m]), 4)}
                             for m, _, why in picked]}  # fmt: skip

    def state_dict(self) -> dict:
        return asdict(self)

    def load_state_dict(self, state: dict) -> None:
        restore_fields(self, state, "resample")

    def summary(self) -> dict:
        """What ``metrics.json`` reports (``annealing.resample``)."""
        return {"samples": self.samples, "within": self.within, "until": self.until,
                "limit": self.limit, "init": self.init, "copies": self.copies,
                "done": self.done,
                "log": self.log}  # fmt: skip


def _sequence_input(task) -> bool:
    """Whether the task's inputs are 1-D one-hot DNA (the copy criterion needs PWMs): the
    tasks that export DNA motifs."""
    return bool(getattr(task, "exports_motifs", False))
