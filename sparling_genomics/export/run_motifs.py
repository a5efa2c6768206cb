"""A trained run -> its motifs: sites on an evaluation split, PWMs, names, files, logos.

For each motif channel: its sites (active positions) on the split's inputs; the window of g's
receptive field around each site, on the strand the model read it from (models that scan both
strands report the winning strand; splicing windows are already in transcript orientation);
counts -> probabilities with a pseudocount; low-information flanks trimmed. Channels with fewer
than ``min_sites`` sites are listed as silent, not exported as noise. Then Tomtom against a
reference names the motifs (only at q < 0.05): JASPAR for DNA tasks, the splicing reference
(``export/reference_motifs.py``) for site tasks built from an annotation, or a MEME file; and
for site tasks each motif gets its ``positions`` block (``evaluate/positions.py``: distance
to the labelled sites, exon/intron share, against a matched null). Everything is written to
``RUN/motifs/`` (or ``out``): motifs.meme/.jaspar/.transfac/.homer, logos/, tomtom.tsv,
motifs.json.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from ..evaluate.positions import PositionSettings, build_positional_context, enrichment_by_motif
from ..genome.pwm import information_content, probability_matrix, trim
from ..genome.sequence import reverse_complement_one_hot
from ..io import write_json_atomic
from ..rundir import MOTIFS_SUMMARY, motifs_dir
from ..train.loading import load_run
from .formats import ExportedMotif, write_motif_files
from .logos import write_logos
from .motifs import collect_sites, merge_sites, site_windows
from .naming import DEFAULT_COLLECTION, load_jaspar_collection, name_motifs, write_tomtom
from .reference_motifs import (
    kl_to_annotated,
    motif_file_targets,
    splicing_reference,
)


@torch.no_grad()
def channel_site_windows(
    model, task, split: str = "test", *, batch_size: int = 64, device=None,
    with_locations: bool = False,
) -> tuple:  # fmt: skip
    """Per channel: one-hot site windows ``(n, 4, rf)`` and activations; base background;
    with ``with_locations``, also per channel an ``(n, 2)`` array of (evaluation window
    ordinal, output position) of each site, rows in the same order as its windows."""
    device = device or next(model.parameters()).device
    width = model.g.receptive_field
    offset = getattr(getattr(task, "data", None), "context", 0) // 2
    k = model.g.motifs
    windows: list[list[np.ndarray]] = [[] for _ in range(k)]
    scores: list[list[float]] = [[] for _ in range(k)]
    locations: list[list[np.ndarray]] = [[] for _ in range(k)]
    seen = 0  # evaluation windows before this batch
    counts = np.zeros(4)
    for batch in task.eval_batches(split, batch_size):
        x = batch.x.to(device)
        length = x.shape[-1] - 2 * offset
        valid = (batch.y >= 0).numpy() if batch.y is not None else np.ones((len(x), length), bool)
        sites = merge_sites([collect_sites(model, x, offset=offset, valid=valid)])
        x_np = x.cpu().numpy()
        counts += (x_np[:, :, offset : offset + length] * valid[:, None, :]).sum(axis=(0, 2))
        both = bool(getattr(model.g, "reverse_complement", False))
        if both:
            reverse = model.g.strand_of_max(x).cpu().numpy().astype(bool)
            x_rc = reverse_complement_one_hot(x).cpu().numpy()
        for s in sites:
            for w in np.unique(s.window):
                pick = np.array(s.window) == w
                pos = np.array(s.position)[pick]
                got = site_windows(x_np[w][None], pos, width)
                if both:
                    rev = reverse[w, s.channel, pos]
                    if rev.any():
                        # The reverse strand's window, read 5'->3' on that strand.
                        mirrored = x_np.shape[-1] - 1 - pos[rev]
                        got[rev] = site_windows(x_rc[w][None], mirrored, width)
                windows[s.channel].append(got)
                scores[s.channel].extend(np.array(s.score)[pick].tolist())
                ordinal = np.full(len(pos), seen + w)
                locations[s.channel].append(np.stack([ordinal, pos - offset], axis=1))
        seen += len(x)
    stacked = [np.concatenate(w) if w else np.zeros((0, 4, width)) for w in windows]
    background = counts / counts.sum() if counts.sum() else np.full(4, 0.25)
    if with_locations:
        where = [np.concatenate(v) if v else np.zeros((0, 2), np.int64) for v in locations]
        return stacked, [np.array(s) for s in scores], background, where
    return stacked, [np.array(s) for s in scores], background


def motifs_from_windows(
    windows: list[np.ndarray],
    *,
    min_sites: int = 10,
    trim_bits: float = 0.25,
    prefix: str = "sparling",
    background: np.ndarray | None = None,
) -> tuple[list[ExportedMotif], list[int]]:
    """Exported motifs (PWMs trimmed against ``background``, the sequences' base
    composition) and the channels that are silent (< min_sites)."""
    motifs, silent = [], []
    for channel, w in enumerate(windows):
        if len(w) < min_sites:
            silent.append(channel)
            continue
        probs = probability_matrix(w)
        lo, hi = trim(probs, trim_bits, background)
        motifs.append(ExportedMotif(f"{prefix}_c{channel:02d}", probs[lo:hi], len(w),
                                    channel=channel, offset=lo))  # fmt: skip
    return motifs, silent


def export_run_motifs(
    run: Path,
    out: Path | None = None,
    *,
    split: str = "test",
    min_sites: int = 10,
    jaspar: dict | None = None,
    device: str | None = None,
    reference_motifs: str | None = None,
    positions: PositionSettings | None = None,
) -> dict:
    """Export the motifs of run directory ``run``; returns the ``motifs.json`` summary.

    ``reference_motifs``: "jaspar", "splicing" or a MEME file path (default: the task's
    ``reference_motifs``); ``positions``: the positional statistics' settings (site tasks)."""
    run = Path(run)
    out = Path(out) if out is not None else motifs_dir(run)
    config, task, model, torch_device = load_run(run, device=device)
    dataset = getattr(task, "data", None) if task.scoring == "sites" else None
    windows, _, background, locations = channel_site_windows(
        model, task, split, batch_size=config.train.eval_batch_size, device=torch_device,
        with_locations=True,
    )  # fmt: skip
    motifs, silent = motifs_from_windows(windows, min_sites=min_sites, background=background)
    choice = reference_motifs or getattr(task, "reference_motifs", "jaspar")
    annotated: dict[str, np.ndarray] = {}
    if choice == "splicing":
        targets, annotated = splicing_reference(dataset, background)
        reference = {"kind": "splicing", "description": "annotated site PWMs (training block), "
                     "branch point and plant ESE hexamers (reference/splicing_motifs.meme)"}
    elif choice != "jaspar":
        targets = motif_file_targets(Path(choice))
        reference = {"kind": "file", "description": str(choice)}
    # The JASPAR collection names DNA motifs; beside another reference it is a decoy set: a
    # few dozen targets make Tomtom's null (built from the target columns) unreliable, so
    # JASPAR's columns fill it out and count in the q-values, but never name anything.
    collection, jaspar_motifs = _jaspar_targets(config, jaspar)
    jaspar_words = " ".join(str(v) for v in collection.values() if v)
    if choice == "jaspar":
        targets, decoys = jaspar_motifs, None
        reference = {"kind": "jaspar", "description": jaspar_words}
    else:
        decoys = jaspar_motifs
        reference["decoys"] = f"{jaspar_words} (Tomtom null and q-value count only; no names)"
    reference["targets"] = [t.matrix_id for t in targets]
    naming = name_motifs(motifs, targets, decoys=decoys)
    for m in motifs:
        named = naming["named"].get(m.id)
        m.name = named.replace(" ", "_") if named else ""
    placed = {}
    if dataset is not None and motifs:
        settings = positions or PositionSettings()
        context = build_positional_context(
            dataset, task.eval_indices(split), split, settings.max_distance
        )
        placed = enrichment_by_motif(context, {m.id: locations[m.channel] for m in motifs},
                                     settings)  # fmt: skip
    out.mkdir(parents=True, exist_ok=True)
    files = write_motif_files(out, motifs, background)
    write_logos(out / "logos", motifs)
    write_tomtom(out / "tomtom.tsv", naming)
    summary = {
        "run": str(run),
        "split": split,
        "background": background.round(6).tolist(),
        "jaspar": collection,
        "reference_motifs": reference,
        "motifs": [
            {
                "id": m.id,
                "channel": m.channel,
                "nsites": m.nsites,
                "width": m.width,
                "offset": m.offset,
                "consensus": m.consensus,
                "bits": round(float(information_content(m.probs).sum()), 3),
                "best_match": _match_dict(naming["best"].get(m.id)),
                "name": naming["named"].get(m.id),
                **({"kl_to_annotated": kl_to_annotated(m.probs, annotated)} if annotated else {}),
                **({"positions": placed[m.id]} if m.id in placed else {}),
            }
            for m in motifs
        ],
        "silent_channels": silent,
        "shuffled_control": naming["control"],
        "files": {k: str(v.name) for k, v in files.items()},
    }
    write_json_atomic(out / MOTIFS_SUMMARY, summary)
    return summary


def _jaspar_targets(config, jaspar: dict | None):
    """The JASPAR collection (a planted run's release unless the caller names one) and its
    motifs."""
    # A run that planted JASPAR motifs is named against the release it planted from.
    collection = dict(DEFAULT_COLLECTION)
    planted_release = getattr(config.data, "jaspar_release", None)
    if planted_release:
        collection["release"] = planted_release
    for key, value in (jaspar or {}).items():
        if value is not None or key == "tax_group":  # tax_group None: every group
            collection[key] = value
    targets = load_jaspar_collection(
        collection["release"], collection["collection"], collection["tax_group"]
    )
    return collection, targets


def _match_dict(match) -> dict | None:
    if match is None:
        return None
    return {
        "target_id": match.target_id,
        "target_name": match.target_name,
        "p_value": match.p_value,
        "e_value": match.e_value,
        "q_value": match.q_value,
    }
