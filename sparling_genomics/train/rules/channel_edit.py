"""Editing the motif channels during training: split, push, merge (``annealing.channel_edit``).

Near the true density a run can end with one motif channel carrying two motifs and another
idle, a motif spread over channels that belong to others, or one motif on two channels; more
training and smaller density steps do not undo any of these. The rule looks at the model
every ``samples`` training samples once the density is at most ``within`` x the stop density,
while no other rule waits on the model (a step on probation, ``rollback.py``) and until
``until`` of the final phase has passed; a look never comes at the first evaluation after the
density changed when it reads firing clusters (the thresholds have just moved).

At a look, the learned motifs' alphas are measured (``channel_necessity``: the share of the
first 512 validation inputs whose output changes when the motif is dropped). Then:

* ``merge``: of two motifs whose main firing clusters (``evaluate/firing_clusters.py``: 2-means
  of g's features where a motif fires) point one way (cosine >= ``SAME_COS``), the less needed
  is re-initialised into a spare, what ``h`` read from it added to the kept one
  (``models/reinit.py``); a look that merges makes no split (the alphas no longer describe
  the model).
* ``push``: a motif whose smaller cluster points the way of another (not idle) motif's main
  one (cosine >= ``OWNED_COS``) is moved towards its own main cluster by ``AIM`` x its norm.
* split (``max_splits`` a run): when the least-needed motif's alpha is under a fifth of the
  median's (three motifs at least), a source is copied into it (``models/split.py``): with
  ``source: busiest`` the most needed motif, the copies moved apart by ``NOISE``; with
  ``source: two_patterns`` a motif whose two firing clusters point apart (cosine under
  ``MAX_COS``, the smaller at least ``MIN_SHARE`` of its firings, pointing the way of no other
  motif's main cluster), the copies aimed at the two clusters (no split without such a motif).

Looks go on after the split limit while push or merge is on. What each part was measured to
do, and the forms tried before: docs/method.md ("An idle motif gets a copy of the busiest
one") and docs/paper-domains.md (DigitCircle attempts 16-30).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import torch

from ...config import bounded
from ...evaluate.firing_clusters import (
    firing_clusters,
    repeated_motifs,
    shared_pattern_motifs,
    two_pattern_motifs,
)
from ...evaluate.identifiability import IDLE_SHARE, channel_necessity, idle_channels
from ...models.reinit import check_reinit, reinit_motif
from ...models.split import apply_split, move_filters, split_edits
from .base import RuleContext, TrainingRule

NOISE = 0.05  # relative noise that moves the two copies' g filters apart
MAX_COS = 0.9  # two_patterns: firing clusters this far apart or more (one motif: 0.99-1.00)
MIN_SHARE = 0.1  # ... the smaller cluster at least this share of the motif's firings
OWNED_COS = 0.95  # ... and not pointing the way of another motif's main cluster this closely
SAME_COS = 0.95  # merge: two motifs whose main clusters point this closely one way are one
AIM = 0.2  # two_patterns and push: a filter moved by this x its norm towards its cluster


@dataclass
class ChannelEditSettings:
    """The ``annealing.channel_edit`` block."""

    samples: int = bounded(50_000, min=1, help="between looks")
    within: float = bounded(8.0, min=1,
                            help="looks once the density is at most this x the stop")  # fmt: skip
    until: float = bounded(1.0, min=0, max=1,
                           help="no look after this share of the final phase")  # fmt: skip
    max_splits: int = bounded(2, min=0, help="splits a run")
    source: Literal["busiest", "two_patterns"] = bounded(
        "busiest", help="which motif a split copies: `busiest` or `two_patterns`")
    push: bool = bounded(False, help="push a motif off a second pattern another motif owns")
    merge: bool = bounded(
        False, help="merge a motif into another whose main pattern it repeats")


@dataclass
class ChannelEditState:
    """What the rule has done: ``log`` (samples, source, target, their alphas, density[,
    cosine]) per split, ``tidied`` (samples, merged pairs, pushed motifs, density) per look
    that merged or pushed."""

    density_seen: float = -1.0  # the density at the last look
    splits: int = 0
    since: int = -1  # samples at the last look (-1: none yet)
    log: list = field(default_factory=list)
    tidied: list = field(default_factory=list)


def pick_split(alpha: list[float], share: float = IDLE_SHARE) -> tuple[int, int] | None:
    """(source, target) motifs: the most needed one and the least needed one when the latter's
    alpha is under ``share`` x the median (0 included); None with fewer than three motifs, a
    median of 0 or no such motif."""
    idle = idle_channels(dict(enumerate(alpha)), share, dead=True)
    if not idle:
        return None
    return int(np.argmax(alpha)), min(idle, key=lambda c: alpha[c])


class ChannelEdit(TrainingRule):
    """See the module docstring."""

    name = "channel_edit"
    Settings = ChannelEditSettings
    State = ChannelEditState

    @property
    def tidy(self) -> bool:
        """Whether looks push or merge motifs (and go on after the split limit)."""
        return self.settings.push or self.settings.merge

    def check(self, model, task) -> None:
        if model.learned >= 2:
            split_edits(model, 0, 1)  # a ConfigError names the part that cannot
            if self.settings.merge:
                check_reinit(model)

    def due(self, samples: int, density: float | None, stop_density: float,
            final_share: float = 0.0) -> bool:  # fmt: skip
        """Whether this evaluation looks (every ``samples``; ``final_share``: the share of the
        final phase passed, 0 while annealing)."""
        c, s = self.settings, self.state
        return (
            final_share < c.until
            and (s.splits < c.max_splits or self.tidy)
            and density is not None
            and density <= c.within * stop_density
            and (s.since < 0 or samples - s.since >= c.samples)
        )

    def after(self, context: RuleContext) -> dict:
        if not context.settled:
            return {}
        model, s = context.model, self.state
        stepped, s.density_seen = model.density != s.density_seen, model.density
        clusters_needed = self.settings.source == "two_patterns" or self.tidy
        if clusters_needed and stepped:
            return {}  # a density step just taken: its firings are not yet the model's own
        if not self.due(context.samples, model.density, context.stop_density,
                        context.final_share):  # fmt: skip
            return {}
        necessity = channel_necessity(model, context.task, "val", device=context.device,
                                      batch_size=context.eval_batch_size)  # fmt: skip
        alpha = necessity["alpha"][: model.learned]  # not a supplied core's channels
        s.since = context.samples
        idle = set(idle_channels(dict(enumerate(alpha)), IDLE_SHARE, dead=True))
        clusters = None
        if clusters_needed:
            clusters = firing_clusters(model, context.task, "val", device=context.device,
                                       batch_size=context.eval_batch_size)  # fmt: skip
        record = self._tidy(context, clusters, alpha, idle) if self.tidy else {}
        if s.splits < self.settings.max_splits and not record.get("merge"):
            record.update(self._split(context, alpha, clusters, idle))
        return record

    def _tidy(self, context: RuleContext, clusters: list[dict], alpha, idle: set[int]) -> dict:
        """Merge each motif whose main cluster repeats a more needed motif's into it (the
        repeat re-initialised: a spare again), then push every motif whose second pattern
        another (not idle) motif owns off it; the record's additions (empty when nothing)."""
        model = context.model
        merge, push = self.settings.merge, self.settings.push
        merged = repeated_motifs(clusters, alpha, same_cos=SAME_COS) if merge else []
        for drop, keep in merged:
            generator = torch.Generator().manual_seed(context.seed * 7919 + drop)
            reinit_motif(model, drop, merge=keep, optimizer=context.optimizer,
                         generator=generator)  # fmt: skip
        gone = idle | {drop for drop, _ in merged}
        pushed = shared_pattern_motifs(clusters, max_cos=MAX_COS, min_share=MIN_SHARE,
                                       owned_cos=OWNED_COS, skip=gone) if push else []
        for motif in pushed:
            centres = clusters[motif]["centres"]
            move_filters(model, motif, centres[0], centres[1], AIM)
        if not merged and not pushed:
            return {}
        pairs = [list(m) for m in merged]
        self.state.tidied.append([context.samples, pairs, pushed, model.density])
        return {"merge": pairs, "push": pushed}

    def _split(self, context: RuleContext, alpha, clusters, idle: set[int]) -> dict:
        model, s = context.model, self.state
        pick = pick_split(alpha)
        if pick is None:
            return {}
        source, target = pick
        centres = cos = None
        if self.settings.source == "two_patterns":
            found = two_pattern_motifs(clusters, max_cos=MAX_COS, min_share=MIN_SHARE,
                                       skip=idle, owned_cos=OWNED_COS)  # fmt: skip
            if not found:
                return {}
            source = found[0]
            centres, cos = clusters[source]["centres"], clusters[source]["cos"]
        generator = torch.Generator().manual_seed(context.seed * 7919 + s.splits)
        apply_split(model, source, target, optimizer=context.optimizer, noise=NOISE,
                    generator=generator)  # fmt: skip
        if centres is not None:  # each copy aimed at one of the two clusters
            move_filters(model, source, centres[0], centres[1], AIM)
            move_filters(model, target, centres[1], centres[0], AIM)
        s.splits += 1
        entry = [context.samples, source, target, alpha[source], alpha[target], model.density]
        s.log.append(entry if cos is None else [*entry, cos])
        split = {"source": source, "target": target, "alpha": [alpha[source], alpha[target]]}
        return {"split": split if cos is None else {**split, "cos": cos}}

    def summary(self) -> dict:
        s = self.state
        return {**self.settings.__dict__, "splits": s.splits, "log": s.log, "tidied": s.tidied}
