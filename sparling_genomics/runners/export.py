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

from ..evaluate.composition import composition_control
from ..evaluate.family_effect import family_effects
from ..evaluate.positions import PositionSettings, build_positional_context, enrichment_by_motif
from ..export.families import FamilySettings
from ..export.family_files import (
    add_family_composition,
    add_family_effects,
    export_families,
    place_families,
)
from ..export.formats import write_motif_files
from ..export.logos import write_logos
from ..export.motif_summary import write_motifs_summary
from ..export.motifs import (
    channel_site_windows,
    context_offset,
    core_classes,
    motifs_from_windows,
    output_positions,
)
from ..export.naming import jaspar_targets, match_dict, name_motifs, write_tomtom
from ..export.reference_motifs import kl_to_annotated, motif_file_targets, splicing_reference
from ..genome.pwm import information_content
from ..progress import Counter
from ..rundir import FAMILIES_DIR, motifs_dir
from ..train.loading import load_run
from ..train.provenance import run_fingerprint


def export_run_motifs(
    run: Path,
    out: Path | None = None,
    *,
    split: str = "test",
    min_sites: int = 10,
    jaspar: dict | None = None,
    device: str | None = None,
    dataset: Path | None = None,
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
    loaded = load_run(run, device=device, dataset=dataset)
    task, model, config = loaded.task, loaded.model, loaded.config
    dataset = getattr(task, "data", None) if task.scoring == "sites" else None
    # Site tasks know their split's size (a bar with an end); the others count up.
    total = len(task.eval_indices(split)) if hasattr(task, "eval_indices") else None
    with Counter(f"export: {split} windows", total=total, unit="window") as counter:
        windows, _, background, sites = channel_site_windows(
            model, task, split, batch_size=config.train.eval_batch_size, device=loaded.device,
            progress=counter.update,
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
    collection, jaspar_motifs = jaspar_targets(config, jaspar)
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
    if task.scoring == "sites" and family_list:
        groups = model.motif_groups()  # a member's channel -> the layer channels it holds
        members = {f.motif.id: sorted({c for m in f.members for c in groups[m.channel]})
                   for f in family_list}  # fmt: skip
        with Counter("export: family effects", total=2, unit="step") as counter:
            effects = family_effects(model, task, split, members, device=loaded.device,
                                     batch_size=config.train.eval_batch_size)  # fmt: skip
            counter.update(1)
            composition = composition_control(model, task, split, members, device=loaded.device,
                                              batch_size=config.train.eval_batch_size)
            counter.update(1)
        add_family_effects(families, effects)
        add_family_composition(families, composition)
    summary = {
        "run": str(run),
        "model": run_fingerprint(run),  # the weights these motifs are of (train/provenance.py)
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
                "best_match": match_dict(naming["best"].get(m.id)),
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
    write_motifs_summary(out, summary)
    return summary
