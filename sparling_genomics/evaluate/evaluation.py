"""Evaluate a model on a task split: end-to-end metrics, motif metrics, measured density.

One loop (:func:`evaluate_model`) for every task: eval mode, the split's fixed batches, the
forward pass, and the result. What differs between tasks comes through the task's hooks
(``tasks.base.Task``): ``scoring`` names how the end-to-end output is scored, ``decode`` gives
output strings ("sequence" scoring), ``site_probabilities`` per-position class probabilities
("sites" scoring); each scoring kind accumulates its metrics in a scorer below.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..models.modes import eval_mode
from ..models.sparling import SparlingModel
from ..tasks.base import Batch, Task
from .glyphs import GlyphAccumulator
from .identifiability import check_identifiability
from .motif_metrics import MotifConfusion
from .perturbation import perturbation_consistency
from .sequence_metrics import edit_error, exact_match
from .site_metrics import site_metrics


@dataclass
class Evaluation:
    """Metrics of a model on one split. ``to_json`` gives the dict the trainer's log,
    ``metrics.json`` and the ``evaluate`` verb have always written (same keys, same order);
    the trainer's ``metrics.json`` is it and the run's fields, laid out by
    ``rundir.metrics_record``."""

    #: End-to-end metrics (``Task.accuracy_metric`` is one of them; higher is better).
    e2e: dict[str, float | None]
    #: Fraction of motif-map positions that are active (None: no sparse layer to measure).
    measured_density: float | None
    #: Samples (or windows) scored.
    samples: int
    #: "sites" scoring: per-class top-k and PR-AUC (``evaluate.site_metrics``).
    sites: dict | None = None
    #: Tasks that know their motifs: FNE, FPE, CE and the channel-to-symbol matching.
    motif: dict | None = None
    #: Perturbation consistency (``evaluate.perturbation``), where asked for and swaps exist.
    perturbation: dict | None = None
    #: The identifiability theorem's conditions and verdict (``evaluate.identifiability``).
    identifiability: dict | None = None

    def to_json(self) -> dict:
        out: dict = {"e2e": self.e2e}
        if self.sites is not None:
            out["sites"] = self.sites
        out["measured_density"] = self.measured_density
        out["samples"] = self.samples
        if self.motif is not None:
            out["motif"] = self.motif
        if self.perturbation is not None:
            out["perturbation"] = self.perturbation
        if self.identifiability is not None:
            out["identifiability"] = self.identifiability
        return out


class SequenceScorer:
    """"sequence" scoring: decoded output strings against the targets (exact match, edit
    error) and, where batches carry their true motif cells, the motif layer (FNE/FPE/CE)."""

    def __init__(self, task: Task, model: SparlingModel, *, motif_metrics: bool) -> None:
        self.task = task
        self.motif_metrics = motif_metrics
        self.predicted: list[list[int]] = []
        self.truth: list[list[int]] = []
        self.confusion: MotifConfusion | None = None
        self.sparse = model.sparse is not None
        self.active = 0
        self.positions = 0

    def add(self, outputs: dict[str, torch.Tensor], batch: Batch) -> None:
        self.predicted.extend(self.task.decode(outputs))
        self.truth.extend(batch.targets)
        motifs = outputs["motifs"]
        self.active += int((motifs > 0).sum())
        self.positions += motifs.numel()
        if self.motif_metrics and batch.cells:
            if self.confusion is None:
                self.confusion = MotifConfusion(motifs.shape[1], len(self.task.symbols))
            self.confusion.add_batch(motifs.float().cpu().numpy(), batch.cells)

    def result(self) -> Evaluation:
        return Evaluation(
            e2e={
                "exact_match": exact_match(self.predicted, self.truth),
                "edit_error": edit_error(self.predicted, self.truth),
            },
            measured_density=(self.active / self.positions if self.positions else 0.0)
            if self.sparse else None,
            samples=len(self.truth),
            motif=None if self.confusion is None else self._motif(self.confusion),
        )

    def _motif(self, confusion: MotifConfusion) -> dict:
        task = self.task
        motif: dict = confusion.summary()
        motif["ce_matching"] = task.ce_matching
        many = task.ce_matching == "many_to_one"
        if many:  # the paper's CE for LaTeX and audio
            motif["ce"] = motif["ce_many_to_one"]
        motif["channel_to_symbol"] = {
            str(c): task.symbols[s] for c, s in confusion.channel_to_symbol(many).items()
        }
        motif["per_symbol"] = confusion.per_symbol(task.symbols)
        motif["false_positives_per_channel"] = confusion.false_positives_per_channel()
        return motif


class SiteScorer:
    """"sites" scoring: per-position class probabilities against the labels (SpliceAI top-k
    accuracy and PR-AUC per site class; ``e2e`` holds their mean top-k and each class's).
    Density is measured only where the model has a sparse layer."""

    def __init__(self, task: Task, model: SparlingModel, *, motif_metrics: bool) -> None:
        self.task = task
        self.sparse = model.sparse is not None
        self.probs: list[np.ndarray] = []
        self.labels: list[np.ndarray] = []
        self.active = self.positions = self.windows = 0

    def add(self, outputs: dict[str, torch.Tensor], batch: Batch) -> None:
        probs, labels = self.task.site_probabilities(outputs, batch)
        keep = labels >= 0  # only labelled positions are scored: hold only those
        self.probs.append(np.asarray(probs[keep], dtype=np.float32))
        self.labels.append(labels[keep].astype(np.int16))
        if self.sparse:
            motifs = outputs["motifs"]
            self.active += int((motifs > 0).sum())
            self.positions += motifs.numel()
        self.windows += len(batch)

    def result(self) -> Evaluation:
        classes = self.task.classes
        probs, labels = np.concatenate(self.probs), np.concatenate(self.labels)
        self.probs, self.labels = [], []  # one copy of the scores while they are ranked
        sites = site_metrics(probs, labels, classes)
        del probs, labels
        e2e = {"mean_topk": sites["mean_topk"]}
        for name in self.task.symbols:
            e2e[f"{name}_topk"] = sites[name]["topk"]
            e2e[f"{name}_pr_auc"] = sites[name]["pr_auc"]
        return Evaluation(
            e2e=e2e,
            sites=sites,
            measured_density=self.active / self.positions if self.positions else None,
            samples=self.windows,
        )


SCORERS = {"sequence": SequenceScorer, "sites": SiteScorer}


@torch.no_grad()
def evaluate_model(
    model: SparlingModel,
    task: Task,
    split: str,
    *,
    batch_size: int,
    device: torch.device,
    motif_metrics: bool = True,
    perturbation: bool = False,
    glyphs: bool = False,
) -> Evaluation:
    """Metrics of ``model`` on the fixed ``split`` set; restores the model's train mode.

    With ``perturbation`` (and a task that allows swaps and knows its motifs) the result also
    holds the perturbation-consistency score (``evaluate.perturbation``); with ``glyphs`` (an
    image or spectrogram task that knows its motifs) each channel's mean input patch
    (``evaluate.glyphs``) in ``motif["glyphs"]``.
    """
    scorer = SCORERS[task.scoring](task, model, motif_metrics=motif_metrics)
    patches = glyph_accumulator(model, task) if glyphs else None
    with eval_mode(model):
        for batch in task.eval_batches(split, batch_size):
            outputs = model(batch.x.to(device))
            scorer.add(outputs, batch)
            if patches is not None:
                patches.add(batch.x.numpy(), outputs["motifs"].float().cpu().numpy())
    result = scorer.result()
    if patches is not None and result.motif is not None:
        result.motif["glyphs"] = patches.result(result.motif.get("channel_to_symbol"))
    confusion = getattr(scorer, "confusion", None)
    if perturbation and confusion is not None and task.swappable_symbols():
        result.perturbation = perturbation_consistency(
            model, task, split, confusion.symbol_to_channel(), confusion.symbol_channels(),
            batch_size=batch_size, device=device,
        )  # fmt: skip
    return result


def glyph_accumulator(model: SparlingModel, task: Task) -> GlyphAccumulator | None:
    """Patches one receptive field wide for a sparse model of a task whose motifs are not
    DNA (a DNA channel's picture is its exported PWM); None where that does not apply."""
    size = getattr(model.g, "receptive_field", None)
    if model.sparse is None or size is None or task.exports_motifs:
        return None
    return GlyphAccumulator(model.g.motifs, size, getattr(model.g, "stride", 1))


def score_model(
    model: SparlingModel,
    task: Task,
    split: str,
    *,
    batch_size: int,
    device: torch.device,
    annealing_complete: bool | None = None,
) -> Evaluation:
    """``model`` on ``split`` as a run's record has it: with perturbation consistency where
    the task allows swaps, and the identifiability check (the trainer's final metrics, the
    ``evaluate`` verb and a rescore all score this way)."""
    result = evaluate_model(
        model, task, split, batch_size=batch_size, device=device,
        perturbation=bool(task.swappable_symbols()), glyphs=True,
    )  # fmt: skip
    result.identifiability = check_identifiability(
        model, task, split, e2e=result.e2e, measured_density=result.measured_density,
        batch_size=batch_size, device=device, annealing_complete=annealing_complete,
    )  # fmt: skip
    return result
