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
motifs.json; the motifs' families (``export/families.py``) go to ``families/`` beside them
(the same files for the representatives, plus their merged sites) and to motifs.json's
``families`` block.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from ..evaluate.positions import PositionSettings, build_positional_context, enrichment_by_motif
from ..genome.pwm import information_content, probability_matrix, trim
from ..genome.sequence import reverse_complement_one_hot
from ..io import write_json_atomic
from ..rundir import FAMILIES_DIR, FAMILY_SITES, MOTIFS_SUMMARY, motifs_dir
from ..train.loading import load_run
from .families import (
    FamilySettings,
    MotifFamily,
    cluster_families,
    families_summary,
    write_family_sites,
)
from .formats import ExportedMotif, write_motif_files
from .logos import write_logos
from .motifs import collect_sites, merge_sites, site_windows
from .naming import DEFAULT_COLLECTION, load_jaspar_collection, name_motifs, write_tomtom
from .reference_motifs import (
    kl_to_annotated,
    motif_file_targets,
    splicing_reference,
)


def context_offset(task) -> int:
    """Bases of input context before a window's first output position (site tasks' datasets
    carry ``context`` bases of flank in all; 0 elsewhere)."""
    return getattr(getattr(task, "data", None), "context", 0) // 2


def output_positions(rows: np.ndarray, offset: int) -> np.ndarray:
    """Site rows (window, input position, strand) as (window, output position) pairs."""
    rows = np.asarray(rows, np.int64).reshape(-1, 3)
    return np.stack([rows[:, 0], rows[:, 1] - offset], axis=1)


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
    offset = context_offset(task)
    k = getattr(model, "channels", model.g.motifs)  # learned channels, then a core's
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
    reference_motifs: str | None = None,
    positions: PositionSettings | None = None,
    family_settings: FamilySettings | None = None,
) -> dict:
    """Export the motifs of run directory ``run`` and their families; returns the
    ``motifs.json`` summary.

    ``reference_motifs``: "jaspar", "splicing" or a MEME file path (default: the task's
    ``reference_motifs``); ``positions``: the positional statistics' settings (site tasks)."""
    run = Path(run)
    out = Path(out) if out is not None else motifs_dir(run)
    config, task, model, torch_device = load_run(run, device=device)
    dataset = getattr(task, "data", None) if task.scoring == "sites" else None
    windows, _, background, sites = channel_site_windows(
        model, task, split, batch_size=config.train.eval_batch_size, device=torch_device
    )
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
    core = core_classes(model)
    for m in motifs:
        named = naming["named"].get(m.id)
        m.name = named.replace(" ", "_") if named else ""
        if m.channel in core:  # a supplied core channel is named for its class
            m.name = "core_" + "".join(ch if ch.isalnum() else "_" for ch in core[m.channel])
    placed = {}
    if dataset is not None and motifs:
        settings = positions or PositionSettings()
        context = build_positional_context(
            dataset, task.eval_indices(split), split, settings.max_distance
        )
        offset = context_offset(task)
        placed = enrichment_by_motif(
            context, {m.id: output_positions(sites[m.channel], offset) for m in motifs}, settings
        )
    out.mkdir(parents=True, exist_ok=True)
    files = write_motif_files(out, motifs, background)
    write_logos(out / "logos", motifs)
    write_tomtom(out / "tomtom.tsv", naming)
    families, family_list = export_families(
        out / FAMILIES_DIR, motifs, dict(enumerate(sites)), targets, decoys=decoys,
        rf=model.g.receptive_field, background=background, settings=family_settings,
    )  # fmt: skip
    if dataset is not None and family_list:
        place_families(families, family_list, context, context_offset(task), settings)
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
                "family": m.family,
                "core": core.get(m.channel),  # the site class of a supplied core channel
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


def export_families(
    folder: Path,
    motifs: list[ExportedMotif],
    sites: dict[int, np.ndarray],
    targets,
    *,
    rf: int,
    decoys=None,
    background: np.ndarray | None = None,
    settings: FamilySettings | None = None,
    prefix: str | None = None,
) -> tuple[dict, list[MotifFamily]]:
    """Cluster ``motifs`` into families (``export/families.py``) and write the family-level
    files to ``folder`` (``RUN/motifs/families/``): motifs.meme/.jaspar/.transfac/.homer of
    the representatives, logos/, tomtom.tsv (names against ``targets``, with ``decoys`` in
    Tomtom's null, as the channels are named), sites.tsv.gz; sets each motif's ``family``;
    returns motifs.json's ``families`` block and the families (named ``<prefix>_f00`` ...:
    by default the motif ids' part before ``_c``)."""
    settings = settings or FamilySettings()
    families, links, _ = cluster_families(motifs, sites, rf=rf, settings=settings,
                                          prefix=prefix)  # fmt: skip
    representatives = [f.motif for f in families]
    naming = name_motifs(representatives, targets, decoys=decoys)
    for f in families:
        named = naming["named"].get(f.motif.id)
        f.motif.name = named.replace(" ", "_") if named else ""
    block = families_summary(families, links, motifs, settings, naming, sites)
    if families:
        folder.mkdir(parents=True, exist_ok=True)
        files = write_motif_files(folder, representatives, background)
        write_logos(folder / "logos", representatives)
        write_tomtom(folder / "tomtom.tsv", naming)
        write_family_sites(folder / FAMILY_SITES, families)
        block["files"] = {k: f"{FAMILIES_DIR}/{v.name}" for k, v in files.items()}
        block["files"]["sites"] = f"{FAMILIES_DIR}/{FAMILY_SITES}"
        block["files"]["tomtom"] = f"{FAMILIES_DIR}/tomtom.tsv"
    return block, families


def place_families(block: dict, families: list[MotifFamily], context, offset: int,
                   settings: PositionSettings) -> None:  # fmt: skip
    """Give each family entry of ``block`` its ``positions`` block: the family's sites (its
    members' de-duplicated ones, each at its span's centre) against the labelled sites."""
    located = {f.motif.id: np.stack([f.sites[:, 0], f.sites[:, 1] + f.motif.width // 2
                                     - offset], axis=1)
               for f in families}  # fmt: skip
    by_family = enrichment_by_motif(context, located, settings)
    for entry in block["families"]:
        if entry["id"] in by_family:
            entry["positions"] = by_family[entry["id"]]


def core_classes(model) -> dict[int, str]:
    """Channel -> site class of a model's supplied core channels (after the learned ones)."""
    core = getattr(model, "core", None)
    if core is None:
        return {}
    return {model.learned + i: name for i, name in enumerate(core.classes)}


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
