"""A trained run -> its motifs: sites on an evaluation split, PWMs, names, files, logos.

For each motif channel: its sites (active positions) on the split's inputs; the window of g's
receptive field around each site, on the strand the model read it from (models that scan both
strands report the winning strand; splicing windows are already in transcript orientation);
counts -> probabilities with a pseudocount; low-information flanks trimmed. Channels with fewer
than ``min_sites`` sites are listed as silent, not exported as noise. Then Tomtom against a
JASPAR collection names the motifs (only at q < 0.05), and everything is written to
``RUN/motifs/`` (or ``out``): motifs.meme/.jaspar/.transfac/.homer, logos/, tomtom.tsv,
motifs.json.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from ..genome.pwm import information_content, probability_matrix, trim
from ..genome.sequence import reverse_complement_one_hot
from ..io import write_json_atomic
from ..rundir import MOTIFS_SUMMARY, motifs_dir
from ..train.loading import load_run
from .formats import ExportedMotif, write_motif_files
from .logos import write_logos
from .motifs import collect_sites, merge_sites, site_windows
from .naming import DEFAULT_COLLECTION, load_jaspar_collection, name_motifs, write_tomtom


@torch.no_grad()
def channel_site_windows(
    model, task, split: str = "test", *, batch_size: int = 64, device=None
) -> tuple[list[np.ndarray], list[np.ndarray], np.ndarray]:
    """Per channel: one-hot site windows ``(n, 4, rf)`` and activations; base background."""
    device = device or next(model.parameters()).device
    width = model.g.receptive_field
    offset = getattr(getattr(task, "data", None), "context", 0) // 2
    k = getattr(model, "channels", model.g.motifs)  # learned channels, then a core's
    windows: list[list[np.ndarray]] = [[] for _ in range(k)]
    scores: list[list[float]] = [[] for _ in range(k)]
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
    stacked = [np.concatenate(w) if w else np.zeros((0, 4, width)) for w in windows]
    background = counts / counts.sum() if counts.sum() else np.full(4, 0.25)
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
) -> dict:
    """Export the motifs of run directory ``run``; returns the ``motifs.json`` summary."""
    run = Path(run)
    out = Path(out) if out is not None else motifs_dir(run)
    config, task, model, torch_device = load_run(run, device=device)
    windows, _, background = channel_site_windows(
        model, task, split, batch_size=config.train.eval_batch_size, device=torch_device
    )
    motifs, silent = motifs_from_windows(windows, min_sites=min_sites, background=background)
    # A run that planted JASPAR motifs is named against the release it planted from, unless
    # the caller names a release.
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
    naming = name_motifs(motifs, targets)
    core = core_classes(model)
    for m in motifs:
        named = naming["named"].get(m.id)
        m.name = named.replace(" ", "_") if named else ""
        if m.channel in core:  # a supplied core channel is named for its class
            m.name = "core_" + "".join(ch if ch.isalnum() else "_" for ch in core[m.channel])
    out.mkdir(parents=True, exist_ok=True)
    files = write_motif_files(out, motifs, background)
    write_logos(out / "logos", motifs)
    write_tomtom(out / "tomtom.tsv", naming)
    summary = {
        "run": str(run),
        "split": split,
        "background": background.round(6).tolist(),
        "jaspar": collection,
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
                "core": core.get(m.channel),  # the site class of a supplied core channel
            }
            for m in motifs
        ],
        "silent_channels": silent,
        "shuffled_control": naming["control"],
        "files": {k: str(v.name) for k, v in files.items()},
    }
    write_json_atomic(out / MOTIFS_SUMMARY, summary)
    return summary


def core_classes(model) -> dict[int, str]:
    """Channel -> site class of a model's supplied core channels (after the learned ones)."""
    core = getattr(model, "core", None)
    if core is None:
        return {}
    return {model.g.motifs + i: name for i, name in enumerate(core.classes)}


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
