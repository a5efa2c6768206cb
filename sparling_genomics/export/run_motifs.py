"""A trained run -> its motifs: sites on an evaluation split, PWMs, names, files, logos.

For each motif channel: its sites (active positions) on the split's inputs; the window of g's
receptive field around each site, on the strand the model read it from (models that scan both
strands report the winning strand; splicing windows are already in transcript orientation);
counts -> probabilities with a pseudocount; low-information flanks trimmed. Channels with fewer
than ``min_sites`` sites are listed as silent, not exported as noise. Then Tomtom against a
JASPAR collection names the motifs (only at q < 0.05), and everything is written to
``RUN/motifs/`` (or ``out``): motifs.meme/.jaspar/.transfac/.homer, logos/, tomtom.tsv,
motifs.json; the motifs' families (``export/families.py``) go to ``families/`` beside them
(the same files for the representatives, plus their merged sites) and to motifs.json's
``families`` block.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from ..genome.pwm import information_content, probability_matrix, trim
from ..genome.sequence import reverse_complement_one_hot
from ..io import write_json_atomic
from ..rundir import FAMILIES_DIR, FAMILY_SITES, MOTIFS_SUMMARY, motifs_dir
from ..train.loading import load_run
from .families import (
    FamilySettings,
    cluster_families,
    families_summary,
    write_family_sites,
)
from .formats import ExportedMotif, write_motif_files
from .logos import write_logos
from .motifs import collect_sites, merge_sites, site_windows
from .naming import DEFAULT_COLLECTION, load_jaspar_collection, name_motifs, write_tomtom


@torch.no_grad()
def channel_site_windows(
    model, task, split: str = "test", *, batch_size: int = 64, device=None
) -> tuple[list[np.ndarray], list[np.ndarray], np.ndarray, list[np.ndarray]]:
    """Per channel: one-hot site windows ``(n, 4, rf)`` and activations; base background;
    per channel the sites as ``(n, 3)`` rows (window index in the split's evaluation order,
    activation position in the window's input, strand read: +1 / -1), in the windows' order
    (motif families link channels that fire at the same places)."""
    device = device or next(model.parameters()).device
    width = model.g.receptive_field
    offset = getattr(getattr(task, "data", None), "context", 0) // 2
    k = model.g.motifs
    windows: list[list[np.ndarray]] = [[] for _ in range(k)]
    scores: list[list[float]] = [[] for _ in range(k)]
    where: list[list[np.ndarray]] = [[] for _ in range(k)]
    counts = np.zeros(4)
    first = 0
    for batch in task.eval_batches(split, batch_size):
        x = batch.x.to(device)
        length = x.shape[-1] - 2 * offset
        valid = (batch.y >= 0).numpy() if batch.y is not None else np.ones((len(x), length), bool)
        sites = merge_sites([collect_sites(model, x, offset=offset, valid=valid,
                                           first_window=first)])  # fmt: skip
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
                got = site_windows(x_np[w - first][None], pos, width)
                strand = np.ones(len(pos), np.int64)
                if both:
                    rev = reverse[w - first, s.channel, pos]
                    strand[rev] = -1
                    if rev.any():
                        # The reverse strand's window, read 5'->3' on that strand.
                        mirrored = x_np.shape[-1] - 1 - pos[rev]
                        got[rev] = site_windows(x_rc[w - first][None], mirrored, width)
                windows[s.channel].append(got)
                scores[s.channel].extend(np.array(s.score)[pick].tolist())
                where[s.channel].append(np.stack([np.full(len(pos), w), pos, strand], axis=1))
        first += len(x)
    stacked = [np.concatenate(w) if w else np.zeros((0, 4, width)) for w in windows]
    background = counts / counts.sum() if counts.sum() else np.full(4, 0.25)
    located = [np.concatenate(w).astype(np.int64) if w else np.zeros((0, 3), np.int64)
               for w in where]  # fmt: skip
    return stacked, [np.array(s) for s in scores], background, located


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
    family_settings: FamilySettings | None = None,
) -> dict:
    """Export the motifs of run directory ``run`` and their families; returns the
    ``motifs.json`` summary."""
    run = Path(run)
    out = Path(out) if out is not None else motifs_dir(run)
    config, task, model, torch_device = load_run(run, device=device)
    windows, _, background, sites = channel_site_windows(
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
    for m in motifs:
        named = naming["named"].get(m.id)
        m.name = named.replace(" ", "_") if named else ""
    out.mkdir(parents=True, exist_ok=True)
    files = write_motif_files(out, motifs, background)
    write_logos(out / "logos", motifs)
    write_tomtom(out / "tomtom.tsv", naming)
    families = export_families(out / FAMILIES_DIR, motifs, dict(enumerate(sites)), targets,
                               rf=model.g.receptive_field, background=background,
                               settings=family_settings)  # fmt: skip
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
                "family": m.family,
            }
            for m in motifs
        ],
        "families": families,
        "silent_channels": silent,
        "shuffled_control": naming["control"],
        "files": {k: str(v.name) for k, v in files.items()},
    }
    write_json_atomic(out / MOTIFS_SUMMARY, summary)
    return summary


def export_families(
    folder: Path,
    motifs: list[ExportedMotif],
    sites: dict[int, np.ndarray],
    targets,
    *,
    rf: int,
    background: np.ndarray | None = None,
    settings: FamilySettings | None = None,
) -> dict:
    """Cluster ``motifs`` into families (``export/families.py``) and write the family-level
    files to ``folder`` (``RUN/motifs/families/``): motifs.meme/.jaspar/.transfac/.homer of
    the representatives, logos/, tomtom.tsv (names against ``targets``, as the channels are
    named), sites.tsv.gz; sets each motif's ``family``; returns motifs.json's ``families``."""
    settings = settings or FamilySettings()
    families, links, _ = cluster_families(motifs, sites, rf=rf, settings=settings)
    representatives = [f.motif for f in families]
    naming = name_motifs(representatives, targets)
    for f in families:
        named = naming["named"].get(f.motif.id)
        f.motif.name = named.replace(" ", "_") if named else ""
    block = families_summary(families, links, motifs, settings, naming)
    if families:
        folder.mkdir(parents=True, exist_ok=True)
        files = write_motif_files(folder, representatives, background)
        write_logos(folder / "logos", representatives)
        write_tomtom(folder / "tomtom.tsv", naming)
        write_family_sites(folder / FAMILY_SITES, families)
        block["files"] = {k: f"{FAMILIES_DIR}/{v.name}" for k, v in files.items()}
        block["files"]["sites"] = f"{FAMILIES_DIR}/{FAMILY_SITES}"
        block["files"]["tomtom"] = f"{FAMILIES_DIR}/tomtom.tsv"
    return block


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
