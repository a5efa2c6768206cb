"""Whether a run meets the conditions of the Sparling paper's motif identifiability theorem.

The theorem (``../shared/notes/sparling-facts.md``): if ``g`` is local, its density equals
the true motif density, motifs do not overlap, motifs are sufficient (their layout carries
the output) and every motif type is necessary (dropping it changes the output on a fraction
alpha of inputs), then a low end-to-end error E bounds the motif error (E_m <= k E). What a
trained run can check without knowing its motifs:

* **locality** -- ``g`` has a bounded receptive field (a property of the architecture);
* **density** -- the density measured on the split against the task's true density, within
  a factor ``density_tolerance`` (the paper's ablation: 2-3x the true density already raises
  the confusion error); not checkable where the true density is unknown (splicing);
* **end-to-end error** -- ``1 - accuracy`` (the task's ``accuracy_metric``: exact match for
  sequence tasks, mean top-k for site tasks) at most ``max_error``;
* **necessity** -- each channel of the layer ``h`` reads is zeroed in turn on ``samples``
  inputs (512; 64 windows for a site task); alpha of a channel is the fraction of inputs
  whose decoded output changes (sequence tasks: the output string; site tasks: the class
  called at some position). A channel with
  alpha 0 is never needed -- dead, or a copy ``h`` ignores -- and the condition fails;
* **per-channel density** -- each channel's share of active positions, its spread, and the
  dead channels (never active);
* **idle channels** (a warning, not one of the theorem's conditions) -- a channel whose alpha
  is above 0 but under ``IDLE_SHARE`` (a fifth) of the median channel's: it meets necessity
  on paper, but a bound that scales with 1/alpha says little, and on the planted task it is
  the mark of a lost motif: a channel left idle while another carries two motifs (in the
  five such runs with per-motif figures, the channel carrying two was the one with the
  highest alpha in four, the second highest in one). Over the 54 planted runs in
  ``bench_runs`` with the check (2026-12-04): the 7 with an idle channel scored 59.6-91.3%
  test exact match (6 of them under 80%; smallest alpha 0.6-16% of the median), the 4 with a
  channel never needed (alpha 0) 38.5-80.6%, the 43 others 80.6-97.4% (smallest alpha >= 35%
  of the median). It needs no labels, so it is the one sign of that failure a run on a real
  genome can give, and the trainer's idle-split rule acts on it during training
  (``train/rules/channel_edit.py``, on in the planted presets).

Non-overlap and sufficiency are properties of the data, not of a run: reported as assumed.
The verdict is "conditions met: motif errors are bounded by the end-to-end error" or names
each condition that fails or cannot be checked. Written here rather than taken from a library:
no package implements this paper's conditions.
"""

from __future__ import annotations

import numpy as np
import torch

from ..models.modes import eval_mode
from ..models.sparling import SparlingModel
from ..tasks.base import Task, first_eval_batches

#: Defaults of :func:`check_identifiability` (the report states them beside the verdict).
DENSITY_TOLERANCE = 1.5
MAX_ERROR = 0.10
SAMPLES = 512
#: A channel is idle when its alpha is under this share of the median channel's alpha.
IDLE_SHARE = 0.2
#: Site tasks: a window holds thousands of positions (splicing: 5,000), and each channel
#: drop reruns ``h`` over all of them; 64 windows keep the check to seconds per channel.
SITE_WINDOWS = 64

ASSUMED = ("non-overlapping motifs and motif sufficiency are properties of the data, "
           "assumed, not checked from the run")  # fmt: skip


def channel_labels(model: SparlingModel) -> list[str]:
    """Names of the channels ``h`` reads: learned channels by index, a core's by class."""
    learned = [str(c) for c in range(model.learned)]
    core = getattr(model, "core", None)
    return learned + ([] if core is None else [f"core:{name}" for name in core.classes])


@torch.no_grad()
def channel_necessity(
    model: SparlingModel,
    task: Task,
    split: str,
    *,
    batch_size: int,
    device: torch.device,
    samples: int = SAMPLES,
) -> dict:
    """Per channel of the layer ``h`` reads: alpha (share of inputs whose output changes when
    the channel is zeroed) and density (share of its positions that are active), over the
    first ``samples`` inputs of ``split``; restores the model's train mode."""
    labels = channel_labels(model)
    groups = model.motif_groups()  # the channels of each motif (a block drops whole)
    changed = np.zeros(len(labels), dtype=np.int64)
    active = np.zeros(len(labels), dtype=np.int64)
    positions = seen = 0
    with eval_mode(model):
        for batch in first_eval_batches(task, split, batch_size, samples):
            x = batch.x.to(device)
            layer, residual = model.layer_and_residual(x)
            base = _outputs(task, model.read(layer, residual))
            motifs = model.motif_activations(layer)  # one per motif (a block: its norm)
            active += (motifs > 0).transpose(0, 1).reshape(len(groups), -1).sum(1).cpu().numpy()
            positions += motifs[:, 0].numel()
            for c, channels in enumerate(groups):
                dropped = layer.clone()
                dropped[:, channels] = 0
                after = _outputs(task, model.read(dropped, residual))
                changed[c] += sum(a != b for a, b in zip(base, after))
            seen += len(x)
    alpha = changed / max(1, seen)
    density = active / max(1, positions)
    return {
        "inputs": seen,
        "channels": labels,
        "alpha": [float(a) for a in alpha],
        "density": [float(d) for d in density],
    }


def _outputs(task: Task, logits: torch.Tensor) -> list:
    """Each input's decoded output: its string (sequence tasks) or its called class per
    position (site tasks), in a form ``!=`` compares."""
    if task.scoring == "sites":
        return [row.tobytes() for row in logits.argmax(dim=1).cpu().numpy()]
    return [tuple(out) for out in task.decode({"logits": logits})]


def idle_channels(
    alpha: dict[str, float], share: float = IDLE_SHARE, *, dead: bool = False
) -> list[str]:
    """Channels needed on some inputs (alpha > 0; with ``dead``, never needed too) but on
    under ``share`` of the median channel's share of them; none with fewer than three
    channels or a median of 0."""
    values = list(alpha.values())
    if len(values) < 3:
        return []
    median = float(np.median(values))
    if median <= 0:
        return []
    return [c for c, a in alpha.items() if (dead or a > 0) and a < share * median]


def identifiability_verdict(
    *,
    receptive_field: int | None,
    measured_density: float | None,
    true_density: float | None,
    error: float | None,
    necessity: dict,
    annealing_complete: bool | None = None,
    density_tolerance: float = DENSITY_TOLERANCE,
    max_error: float = MAX_ERROR,
) -> dict:
    """The conditions, each ``met`` True / False / None (not checkable), and the verdict."""
    ratio = (measured_density / true_density
             if measured_density is not None and true_density else None)  # fmt: skip
    alpha = dict(zip(necessity["channels"], necessity["alpha"]))
    density = dict(zip(necessity["channels"], necessity["density"]))
    unnecessary = [c for c, a in alpha.items() if a == 0]
    dead = [c for c, d in density.items() if d == 0]
    live = [d for d in density.values() if d > 0]
    conditions = {
        "locality": {"met": receptive_field is not None, "receptive_field": receptive_field},
        "density": {
            "met": None if ratio is None
            else bool(1 / density_tolerance <= ratio <= density_tolerance),
            "measured": measured_density,
            "true": true_density,
            "ratio": ratio,
            "tolerance": density_tolerance,
            "annealing_complete": annealing_complete,
        },
        "end_to_end": {"met": None if error is None else bool(error <= max_error),
                       "error": error, "max_error": max_error},
        "necessity": {
            "met": bool(alpha) and not unnecessary,
            "inputs": necessity["inputs"],
            "min_alpha": min(alpha.values()) if alpha else None,
            "unnecessary": unnecessary,
        },
    }  # fmt: skip
    channels = {
        "alpha": alpha,
        "density": density,
        "dead": dead,
        "idle": idle_channels(alpha),
        "alpha_median": float(np.median(list(alpha.values()))) if alpha else None,
        "density_min": min(density.values()) if density else None,
        "density_max": max(density.values()) if density else None,
        # Largest over smallest share among channels that fire (None: fewer than two do).
        "density_spread": max(live) / min(live) if len(live) > 1 else None,
    }
    return {
        "status": _status(conditions),
        "verdict": _verdict(conditions) + _idle_warning(channels),
        "conditions": conditions,
        "assumed": ASSUMED,
        "channels": channels,
    }


def _status(conditions: dict) -> str:
    met = [c["met"] for c in conditions.values()]
    if any(m is False for m in met):
        return "fails"
    return "unknown" if any(m is None for m in met) else "met"


def _idle_warning(channels: dict) -> str:
    """'; warning: ...' naming the idle channels (empty when there are none)."""
    idle = channels["idle"]
    if not idle:
        return ""
    worst = max(channels["alpha"][c] for c in idle)
    return (f"; warning: channel(s) {', '.join(idle[:12])}{' ...' if len(idle) > 12 else ''} "
            f"change the output on at most {worst:.1%} of inputs against a median channel's "
            f"{channels['alpha_median']:.1%}: idle channels, where another channel may carry "
            "two motifs")  # fmt: skip


def _verdict(conditions: dict) -> str:
    """One sentence: bounded, or each failing / uncheckable condition with its figures."""
    failing, unknown = [], []
    loc, den, e2e, nec = (conditions[k] for k in ("locality", "density", "end_to_end",
                                                  "necessity"))  # fmt: skip
    if not loc["met"]:
        failing.append("g is not local (no bounded receptive field)")
    if den["met"] is False:
        text = (f"density {den['measured']:.3g} is {den['ratio']:.2f}x the true "
                f"{den['true']:.3g} (allowed {1 / den['tolerance']:.2f}-{den['tolerance']:.2f}x)")
        if den["annealing_complete"] is False:
            text += ", annealing did not finish"
        failing.append(text)
    elif den["met"] is None:
        unknown.append("the true motif density is unknown, so density = true density "
                       "cannot be checked")
    if e2e["met"] is False:
        failing.append(f"end-to-end error {e2e['error']:.1%} is above {e2e['max_error']:.0%}")
    elif e2e["met"] is None:
        unknown.append("no end-to-end error")
    if not nec["met"]:
        names = ", ".join(nec["unnecessary"][:12]) + (" ..." if len(nec["unnecessary"]) > 12
                                                       else "")  # fmt: skip
        failing.append(f"channel(s) {names} never change the output when dropped "
                       f"({nec['inputs']} inputs): motif necessity fails")
    if failing:
        return "conditions fail: " + "; ".join(failing + unknown)
    if unknown:
        return "not checkable: " + "; ".join(unknown) + " (the other conditions are met)"
    return ("conditions met: motif errors are bounded by the end-to-end error "
            f"({e2e['error']:.1%})")  # fmt: skip


def check_identifiability(
    model: SparlingModel,
    task: Task,
    split: str,
    *,
    e2e: dict,
    measured_density: float | None,
    batch_size: int,
    device: torch.device,
    annealing_complete: bool | None = None,
    samples: int | None = None,
) -> dict:
    """The identifiability block of a run's metrics on ``split`` (``e2e`` and
    ``measured_density``: that split's scores; ``samples``: inputs the necessity test reads,
    by default ``SAMPLES``, or ``SITE_WINDOWS`` for a site task). A model without a sparse
    layer: the theorem does not apply (``status`` "not_applicable")."""
    if samples is None:
        samples = SITE_WINDOWS if task.scoring == "sites" else SAMPLES
    if model.sparse is None:
        verdict = "no sparse layer: the identifiability theorem does not apply"
        return {"status": "not_applicable", "verdict": verdict}
    accuracy = e2e.get(task.accuracy_metric)
    necessity = channel_necessity(model, task, split, batch_size=batch_size, device=device,
                                  samples=samples)  # fmt: skip
    return identifiability_verdict(
        receptive_field=getattr(model.g, "receptive_field", None),
        measured_density=measured_density,
        true_density=task.true_density(),
        error=None if accuracy is None else 1.0 - float(accuracy),
        necessity=necessity,
        annealing_complete=annealing_complete,
    )
