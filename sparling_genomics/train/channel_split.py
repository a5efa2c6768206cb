"""Splitting the busiest motif into an idle one during training (the idle-channel rule).

Seen on the planted task (``bench_runs/archive/planted_i24i``): a run can end with one motif channel
carrying two of the planted motifs and another channel idle: ``h`` needs it on under a fifth of
the inputs a median channel is needed on (``evaluate/identifiability.py``). Near the true
density the shared channel has one motif's firing budget, so it misses sites of both (seed 2:
FNE 9%, test exact match 78.1%), and neither more training nor a smaller density step gives
the motif back: 100k more samples on seed 2's final weights left it at 77.4%. Copying the
busiest channel into the idle one (``models/split.py``) and training 50k samples took the same
weights to 0.96 validation exact match, the two copies each taking one motif (test 97.1% after
150k; ``scripts/try_split.py``); draw 2 likewise (0.71 -> 0.85). Trained with the rule on one
host looking from 8x the true density (``bench_runs/planted_split_within8``): seed 2 78.10 ->
96.75%, draw 2 72.40 -> 89.25%, but draw 1 90.50 -> 84.90%: a look mid-annealing can find an
idleness that would have passed. Looking from 1.5x (the planted presets; 250k final samples,
``archive/planted_cpu_preset_final250k``):
seed 2 96.75%, draw 2 87.85%, draw 1 90.50% (no split), mean of six runs 91.50 -> 92.14%.

The rule, with ``annealing.split_samples`` W (0 or unset: off): once the density (after the
evaluation's annealing decision) is at most ``split_within`` (8; planted presets 1.5) x the
stop density, at the first evaluation with no step on probation (``rollback.py``) and every W
samples after (so a split gets W samples before the next look), the learned motifs' alphas
are measured on the first 512 validation inputs (``channel_necessity``: the share of inputs
whose output changes when the motif is dropped). When the least-needed motif's alpha is under
a fifth of the median's (dead ones included) and there are at least three motifs, the motif
with the highest alpha is split into it. At most ``split_limit`` (2) splits a run.

With ``split_on_rollback``, a step on probation that is due to be taken back (W samples
without recovering) gets a look first (when one is due by the rules above): a motif the step
left idle is answered by a split and the step stands -- taking it back would undo the split.
A look at the evaluation that takes a step would see the model before it has trained at the
new density; one at the rollback has given it W samples to recover on its own. **Off in the
presets: it hurt both runs it can change** (``bench_runs/archive/planted_i24k_on_rollback``, the
planted runs with a step taken back within 1.5x). Draw 2 (whose look at 480k the probation
skipped) split 0 into 6 at 530k instead of taking the step back: 87.85 -> 86.00%. Seed 2
split 4 into 1 at 280k, where the rollback and a later split had rescued it; 50k samples on,
channel 4 was idle in its turn and took a copy of 3, the limit was spent and the run ended with
two idle channels: 96.75 -> 68.90%. A step that costs a motif is better taken back first; a
split answers an idleness that outlasts the retake. A look at any evaluation on probation (the
first form) split a transient idleness at the step's own evaluation (draw 2: 84.15%,
``planted_i24k_look_in_probation``).

With ``split_source: two_patterns`` the source is not the busiest motif but one that shows it
carries two (``evaluate/firing_clusters.py``: the two 2-means clusters of g's features where it
fires point two ways, cosine under 0.9, the smaller at least a tenth of its firings, and the
smaller pointing the way of no other motif's main cluster: a pattern with no channel of its
own), and no split is made without one. With spare channels, as on DigitCircle (12 for 10
digits), an idle channel is the design, so idleness alone is no evidence (attempt 16 copied
one-digit channels into the spares twice, and each pair went on sharing its digit). The two
copies' ``g`` filters are then moved apart along the line between the two clusters' mean
features (the source towards the larger, the target towards the smaller, by ``AIM`` x the
filter's norm), not by noise alone. A two_patterns look never comes at an evaluation that took
a density step (the thresholds have just moved; on DigitCircle a split there, on top of the
step, took validation exact match from 0.82 down to 0.23, against 0.58 without it).

Two more edits at each look (no look at an evaluation that took a step; looks go on after the
split limit while either is on), off unless set. ``split_push``: a motif whose smaller
cluster points the way of another (not idle) motif's main one (cosine at least OWNED_COS)
fires on a pattern that has a channel of its own, and its filter is moved towards its main
cluster by ``AIM`` x its norm. ``split_merge``: of two motifs whose main clusters point one
way (SAME_COS; on attempt 27's DigitCircle weights a digit's two channels were at
0.995-1.00, channels of different digits at most 0.77), the less needed is re-initialised
(``models/reinit.py``: a spare again, what ``h`` read from it added to the kept one); a
look that merges makes no split (its alphas no longer describe the model). ``split_until``:
no look once that share of the final phase has passed (an edit costs the model 40-80k
samples of accuracy; docs/paper-domains.md, DigitCircle attempts 27-30).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np
import torch

from ..config import restore_fields
from ..evaluate.firing_clusters import (
    firing_clusters,
    repeated_motifs,
    shared_pattern_motifs,
    two_pattern_motifs,
)
from ..evaluate.identifiability import IDLE_SHARE, channel_necessity, idle_channels
from ..models.reinit import check_reinit, reinit_motif
from ..models.split import apply_split, split_edits
from ..sparsity.annealing import AnnealingSettings
from .schedule import final_share

DEFAULT_WITHIN = 8.0  # checks start once the density is at most this x the stop density
DEFAULT_LIMIT = 2  # splits per run
NOISE = 0.05  # relative noise that moves the two copies' g filters apart
MAX_COS = 0.9  # two_patterns: firing clusters this far apart or more (one motif: 0.99-1.00)
MIN_SHARE = 0.1  # ... the smaller cluster at least this share of the motif's firings
OWNED_COS = 0.95  # ... and not pointing the way of another motif's main cluster this closely
SAME_COS = 0.95  # tidy: two motifs whose main clusters point this closely one way are one
AIM = 0.2  # two_patterns: each copy's filter moved by this x its norm towards its cluster


def pick_split(alpha: list[float], share: float = IDLE_SHARE) -> tuple[int, int] | None:
    """(source, target) motifs: the most needed one and the least needed one when the latter's
    alpha is under ``share`` x the median (0 included); None with fewer than three motifs, a
    median of 0 or no such motif."""
    idle = idle_channels(dict(enumerate(alpha)), share, dead=True)
    if not idle:
        return None
    return int(np.argmax(alpha)), min(idle, key=lambda c: alpha[c])


@torch.no_grad()
def aim_split(model, source: int, target: int, centres) -> None:
    """Move the ``g`` output filters of ``source`` towards the first of two mean feature
    vectors ``centres`` (the larger cluster) and of ``target`` towards the second, each by
    ``AIM`` x its norm along the unit line between them."""
    _shift(model, source, centres, 1.0)
    _shift(model, target, centres, -1.0)


def push_off(model, motif: int, centres) -> None:
    """Move ``motif``'s ``g`` output filters away from the second of its two cluster means
    ``centres`` (a pattern another motif owns), towards the first, by ``AIM`` x their norm."""
    _shift(model, motif, centres, 1.0)


@torch.no_grad()
def _shift(model, motif: int, centres, sign: float) -> None:
    weight = model.g.out.weight
    line = torch.as_tensor(centres[0] - centres[1], dtype=weight.dtype, device=weight.device)
    line = line / line.norm().clamp_min(1e-12)
    for channel in model.motif_groups()[motif]:
        row = weight[channel].reshape(-1)
        weight[channel] = (row + sign * AIM * row.norm() * line).reshape(weight[channel].shape)


@dataclass
class IdleSplit:
    """The rule's settings and what it has done (``log``: samples, source, target and their
    alphas, density of each split)."""

    samples: int = 0  # W; 0: off
    within: float = DEFAULT_WITHIN
    limit: int = DEFAULT_LIMIT
    on_rollback: bool = False  # look before a step is taken back; a split keeps the step
    source: str = "busiest"  # or "two_patterns": a motif whose firings form two clusters
    push: bool = False  # at each look: push a motif off a second pattern another owns
    merge: bool = False  # ... and merge a motif into another whose main pattern it repeats
    until: float = 1.0  # no look once this share of the final phase has passed
    density_seen: float = -1.0  # the density at the last evaluation (two_patterns)
    splits: int = 0
    since: int = -1  # samples at the last look (-1: none yet)
    log: list = field(default_factory=list)
    tidied: list = field(default_factory=list)  # [samples, merged, pushed, density] per look

    @classmethod
    def from_settings(cls, a: AnnealingSettings) -> IdleSplit:
        within = DEFAULT_WITHIN if a.split_within is None else a.split_within
        limit = DEFAULT_LIMIT if a.split_limit is None else a.split_limit
        return cls(samples=a.split_samples or 0, within=float(within), limit=int(limit),
                   on_rollback=bool(a.split_on_rollback),
                   source=a.split_source or "busiest", push=bool(a.split_push),
                   merge=bool(a.split_merge),
                   until=1.0 if a.split_until is None else float(a.split_until))  # fmt: skip

    @property
    def enabled(self) -> bool:
        return self.samples > 0

    @property
    def tidy(self) -> bool:
        """Whether looks push or merge motifs (and go on after the split limit)."""
        return self.push or self.merge

    def check_model(self, model) -> None:
        """Fail before training when the rule is on but ``model`` cannot be split."""
        if self.enabled and model.learned >= 2:
            split_edits(model, 0, 1)  # a ConfigError names the part that cannot
            if self.merge:
                check_reinit(model)

    def due(self, samples: int, density: float | None, stop_density: float,
            final_share: float = 0.0) -> bool:  # fmt: skip
        """Whether this evaluation looks for an idle motif (every W samples; ``final_share``:
        the share of the final phase passed, 0 while annealing)."""
        return (
            self.enabled
            and final_share < self.until
            and (self.splits < self.limit or self.tidy)
            and density is not None
            and density <= self.within * stop_density
            and (self.since < 0 or samples - self.since >= self.samples)
        )

    def review(self, trainer, samples: int) -> dict:
        """At an evaluation with no step on probation: split the busiest motif into an idle
        one when due (the trainer's model and optimizer); the log record's additions (empty
        when nothing)."""
        if trainer.probation.active:
            return {}
        return self._look(trainer, samples)

    def instead_of_rollback(self, trainer, samples: int) -> dict:
        """At an evaluation whose step on probation is due to be taken back: with
        ``on_rollback``, look (when due) and, if a motif is idle, split into it and let the
        step stand (taking it back would undo the split); the record's additions, empty when
        the rollback should go ahead."""
        if not self.on_rollback:
            return {}
        record = self._look(trainer, samples)
        if record:
            trainer.probation.clear()
            record["probation"] = "split"
        return record

    def _look(self, trainer, samples: int) -> dict:
        model = trainer.model
        stepped, self.density_seen = model.density != self.density_seen, model.density
        if (self.source == "two_patterns" or self.tidy) and stepped:
            return {}  # a density step just taken: its firings are not yet the model's own
        share = final_share(trainer.config.train, trainer.state, samples)
        if not self.due(samples, model.density, trainer.stop_density, share):
            return {}
        necessity = channel_necessity(
            model, trainer.task, "val", batch_size=trainer.config.train.eval_batch_size,
            device=trainer.device,
        )  # fmt: skip
        alpha = necessity["alpha"][: model.learned]  # not a supplied core's channels
        self.since = samples
        idle = set(idle_channels(dict(enumerate(alpha)), IDLE_SHARE, dead=True))
        clusters = None
        if self.source == "two_patterns" or self.tidy:
            clusters = firing_clusters(model, trainer.task, "val", device=trainer.device,
                                       batch_size=trainer.config.train.eval_batch_size)  # fmt: skip
        record = self._tidy(trainer, clusters, alpha, idle, samples) if self.tidy else {}
        if self.splits < self.limit and not record.get("tidy", {}).get("merge"):
            # (after a merge the alphas no longer describe the model: no split this look)
            record.update(self._split(trainer, samples, alpha, clusters, idle))
        return record

    def _tidy(self, trainer, clusters: list[dict], alpha, idle: set[int], samples: int) -> dict:
        """Merge each motif whose main cluster repeats a more needed motif's into it (the
        repeat re-initialised: a spare again), then push every motif whose second pattern
        another (not idle) motif owns off it; the record's additions (empty when nothing)."""
        model = trainer.model
        merged = repeated_motifs(clusters, alpha, same_cos=SAME_COS) if self.merge else []
        for drop, keep in merged:
            generator = torch.Generator().manual_seed(trainer.config.seed * 7919 + drop)
            reinit_motif(model, drop, merge=keep, optimizer=trainer.optimizer,
                         generator=generator)  # fmt: skip
        gone = idle | {drop for drop, _ in merged}
        pushed = shared_pattern_motifs(clusters, max_cos=MAX_COS, min_share=MIN_SHARE,
                                       owned_cos=OWNED_COS, skip=gone) if self.push else []
        for motif in pushed:
            push_off(model, motif, clusters[motif]["centres"])
        if not merged and not pushed:
            return {}
        pairs = [list(m) for m in merged]
        self.tidied.append([samples, pairs, pushed, model.density])
        return {"tidy": {"merge": pairs, "push": pushed}}

    def _split(self, trainer, samples: int, alpha, clusters, idle: set[int]) -> dict:
        model = trainer.model
        pick = pick_split(alpha)
        if pick is None:
            return {}
        source, target = pick
        centres = cos = None
        if self.source == "two_patterns":
            found = two_pattern_motifs(clusters, max_cos=MAX_COS, min_share=MIN_SHARE,
                                       skip=idle, owned_cos=OWNED_COS)  # fmt: skip
            if not found:
                return {}
            source = found[0]
            centres, cos = clusters[source]["centres"], clusters[source]["cos"]
        generator = torch.Generator().manual_seed(trainer.config.seed * 7919 + self.splits)
        apply_split(model, source, target, optimizer=trainer.optimizer, noise=NOISE,
                    generator=generator)  # fmt: skip
        if centres is not None:
            aim_split(model, source, target, centres)
        self.splits += 1
        entry = [samples, source, target, alpha[source], alpha[target], model.density]
        self.log.append(entry if cos is None else [*entry, cos])
        record = {"source": source, "target": target, "alpha": [alpha[source], alpha[target]]}
        return {"split": record if cos is None else {**record, "cos": cos}}

    def state_dict(self) -> dict:
        return asdict(self)

    def load_state_dict(self, state: dict) -> None:
        restore_fields(self, state, "split")

    def summary(self) -> dict:
        """What ``metrics.json`` reports (``annealing.split``)."""
        return {"samples": self.samples, "within": self.within, "limit": self.limit,
                "on_rollback": self.on_rollback, "source": self.source, "until": self.until,
                "splits": self.splits, "log": self.log,
                **({"push": self.push, "merge": self.merge, "tidied": self.tidied}
                   if self.tidy else {})}  # fmt: skip
