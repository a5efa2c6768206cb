"""A run's motif families as files: the representatives' motif files, logos, names and merged
sites under ``RUN/motifs/families/``, and each family placed against the labelled sites."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..evaluate.composition import refine_label
from ..evaluate.family_effect import effect_shares, rank_by_effect
from ..evaluate.grammar import spacing_enrichment
from ..evaluate.intron_null import intron_matched_enrichment, intron_summary
from ..evaluate.positions import PositionSettings, enrichment_by_motif
from ..rundir import FAMILIES_DIR, FAMILY_SITES
from .families import (
    FamilySettings,
    MotifFamily,
    cluster_families,
    families_summary,
    write_family_sites,
)
from .formats import ExportedMotif, write_motif_files
from .logos import write_logos
from .naming import name_motifs, write_tomtom


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


#: The preferred spacings kept in motifs.json (largest ratio first, overlapping ones last).
GRAMMAR_KEPT = 30


def place_families(block: dict, families: list[MotifFamily], context, offset: int,
                   settings: PositionSettings) -> None:  # fmt: skip
    """Give each family entry of ``block`` its ``positions`` block: the family's sites (its
    members' de-duplicated ones, each at its span's centre) against the labelled sites, and
    against its own introns (``intron_positions``); ``block["grammar"]``: the families'
    preferred spacings to one another (``evaluate.grammar``)."""
    located = {f.motif.id: np.stack([f.sites[:, 0], f.sites[:, 1] + f.motif.width // 2
                                     - offset], axis=1)
               for f in families}  # fmt: skip
    by_family = enrichment_by_motif(context, located, settings)
    for entry in block["families"]:
        if entry["id"] in by_family:
            entry["positions"] = by_family[entry["id"]]
        if entry["id"] in located and context.region is not None:
            sites = located[entry["id"]]
            inside = intron_matched_enrichment(context, sites[:, 0], sites[:, 1], settings)
            entry["intron_positions"] = {**inside, "summary": intron_summary(inside)}
    grammar = spacing_enrichment(context.scorable, located,
                                 {f.motif.id: f.motif.width for f in families})  # fmt: skip
    block["grammar"] = {k: v for k, v in grammar.items() if k not in ("pairs", "enriched")}
    block["grammar"]["pairs_tested"] = len(grammar["pairs"])
    block["grammar"]["enriched"] = grammar["enriched"][:GRAMMAR_KEPT]


def add_family_effects(block: dict, effects: dict) -> None:
    """Give each family entry of ``block`` its ``effect`` block (``evaluate.family_effect``:
    the drop in site metrics and true-site log-odds when its channels are silenced, its share
    of the summed effect, its rank) and order the entries by effect, largest first; the
    intact model's metrics and the windows scored go to ``block["effects"]``."""
    shares = effect_shares(effects)
    order = rank_by_effect(effects)
    for entry in block["families"]:
        measured = effects["families"].get(entry["id"])
        if measured is not None:
            entry["effect"] = {**{k: v for k, v in measured.items() if k != "channels"},
                               "share": round(shares[entry["id"]], 5),
                               "rank": order.index(entry["id"]) + 1}  # fmt: skip
    rank = {name: i for i, name in enumerate(order)}
    block["families"].sort(key=lambda e: rank.get(e["id"], len(rank)))
    block["effects"] = {"windows": effects["windows"], "sites": effects["sites"],
                        "intact": effects["intact"], "order": "effect"}  # fmt: skip


def add_family_composition(block: dict, control: dict) -> None:
    """Give each family entry of ``block`` its ``composition`` block
    (``evaluate.composition``: active positions per kb on real and dinucleotide-shuffled
    windows, their ratio, the label "motif", "short word" or "composition",
    ``evaluate.composition.refine_label``) and the representative's bits per column; the
    windows and the threshold go to ``block["composition"]``."""
    for entry in block["families"]:
        measured = control["families"].get(entry["id"])
        if measured is not None:
            per_column = entry["bits"] / entry["width"] if entry.get("width") else None
            label = refine_label(measured["label"], entry.get("bits"), entry.get("width"))
            entry["composition"] = {**measured, "label": label,
                                    "bits_per_column": None if per_column is None
                                    else round(per_column, 3)}  # fmt: skip
    block["composition"] = {k: control[k] for k in ("windows", "bases", "threshold")}
