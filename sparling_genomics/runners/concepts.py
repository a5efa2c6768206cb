"""A trained run -> concepts found after training in one of its layers, each exported as a
motif where the model reads DNA.

Collect the layer's activations on a split (``export/concept_sites.py`` for DNA models: rows
per position and strand; other models: the layer's rows as ``diagnose`` reads them), fit each
chosen extractor (``concepts/extract.py``: TopK SAE, three block-sparse featurizers,
Deleuzian) on a seeded subsample, then per concept: its activation on every row, its sites
(local maxima in the top rows), their windows -> PWM -> trimmed motif -> Tomtom names against
the run's reference (as ``export`` names Sparling's channels) -> logos, MEME/JASPAR/TRANSFAC/
HOMER, tomtom.tsv, sites.bed, and for site tasks where the motifs sit relative to the
labelled sites. Written to ``RUN/concepts/<method>/`` with ``concepts.h5`` (blocks, scaling,
per-row concept activations and the rows' places); ``RUN/concepts/concepts.json`` (JSON
last, atomically) sums up every method."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from pathlib import Path

import h5py
import numpy as np

from ..concepts.base import FitSettings, check_activations
from ..concepts.extract import METHODS, extract
from ..errors import ConfigError, InputError
from ..evaluate.activations import check_layer, point_cloud
from ..evaluate.positions import PositionSettings, build_positional_context, enrichment_by_motif
from ..export.concept_sites import (
    DNA_LAYERS,
    LayerRows,
    bed_line,
    concept_families,
    concept_sites,
    dna_layer_rows,
    motif_entry,
    site_placer,
    sorted_bed,
    windows_of_sites,
)
from ..export.formats import ExportedMotif, write_motif_files
from ..export.logos import write_logos
from ..export.modisco import export_modisco, hypothetical_attributions
from ..export.motifs import context_offset
from ..export.naming import jaspar_targets, name_motifs, write_tomtom
from ..export.reference_motifs import motif_file_targets, splicing_reference
from ..genome.pwm import probability_matrix, trim
from ..io import atomic_path, write_json_atomic, write_text_atomic
from ..progress import Counter, detail
from ..rundir import CONCEPTS_SUMMARY, concepts_dir
from ..train.loading import load_run

#: The extractors, then the post-hoc genomics baseline (attributions + TF-MoDISco-lite).
ALL_METHODS = (*METHODS, "modisco")


@dataclass
class ConceptSettings:
    """What ``concepts`` fits and exports (``concepts`` 0: one per motif channel of g)."""

    methods: tuple[str, ...] = METHODS
    concepts: int = 0
    modisco_windows: int = 2000  # windows attributed for the TF-MoDISco baseline
    block: int | None = None
    k: int | None = None
    steps: int = 3000
    seed: int = 0
    fit_rows: int = 100_000
    max_rows: int = 1_000_000
    site_fraction: float = 0.001
    max_sites: int = 2000
    min_sites: int = 10
    trim_bits: float = 0.25


def is_dna_model(model) -> bool:
    return hasattr(getattr(model, "g", None), "stem") and hasattr(model.g, "out_norm")


def collect_layer(model, task, layer: str, split: str, settings: ConceptSettings,
                  batch_size: int, device, run: Path) -> LayerRows:  # fmt: skip
    """The layer's activation rows (DNA layers: with their places and input windows)."""
    if is_dna_model(model):
        if layer not in DNA_LAYERS:
            raise InputError(f"{run}: --layer {layer!r} is not a layer of this model "
                             f"(one of {', '.join(DNA_LAYERS)})")  # fmt: skip
        return dna_layer_rows(model, task, layer, split, offset=context_offset(task),
                              batch_size=batch_size, device=device,
                              max_rows=settings.max_rows)  # fmt: skip
    check_layer(model, layer, run)
    batches = []
    have = 0
    for batch in task.eval_batches(split, batch_size):
        batches.append(batch)
        have += len(batch.x)
        if have * 64 >= settings.max_rows:  # a few dozen rows per example at most
            break
    rows = point_cloud(model, layer, batches, device).astype(np.float32)[: settings.max_rows]
    return LayerRows(rows, np.zeros((len(rows), 3), np.int64), np.zeros((0, 4, 0)),
                     np.full(4, 0.25))  # fmt: skip


def fit_subsample(rows: np.ndarray, count: int, seed: int) -> np.ndarray:
    if len(rows) <= count:
        return rows
    return rows[np.sort(np.random.default_rng(seed).choice(len(rows), count, replace=False))]


def concept_motifs(
    layer: LayerRows, activation: np.ndarray, prefix: str, *, rf: int, settings: ConceptSettings
) -> tuple[list[ExportedMotif], dict, list[int]]:
    """Per concept (activation column): its sites -> a trimmed PWM; silent concepts (fewer
    than ``min_sites`` sites) are listed, not exported."""
    motifs, sites, silent = [], {}, []
    for c in range(activation.shape[1]):
        picks = concept_sites(activation[:, c], layer.where, rf=rf,
                              site_fraction=settings.site_fraction,
                              max_sites=settings.max_sites)  # fmt: skip
        if len(picks) < settings.min_sites:
            silent.append(c)
            continue
        probs = probability_matrix(windows_of_sites(layer, picks, rf))
        lo, hi = trim(probs, settings.trim_bits, layer.background)
        motif = ExportedMotif(f"{prefix}_c{c:02d}", probs[lo:hi], len(picks), channel=c, offset=lo)
        motifs.append(motif)
        sites[c] = picks
    return motifs, sites, silent


def bed_lines(layer: LayerRows, motifs: list[ExportedMotif], sites: dict, activation,
              place, rf: int) -> list[str]:  # fmt: skip
    """BED6 of every exported concept's sites (score: activation / the concept's top, x1000)."""
    lines = []
    for m in motifs:
        top = float(activation[sites[m.channel][0], m.channel])
        for i in sites[m.channel]:
            w, pos, strand = (int(v) for v in layer.where[i])
            # The trimmed motif's span in the window's input (forward coordinates): columns
            # offset..offset+width of the rf window centred on the site, read on its strand.
            if strand > 0:
                begin = pos - rf // 2 + m.offset
            else:
                begin = pos + rf // 2 - m.offset - m.width + 1
            score = int(round(1000 * float(activation[i, m.channel]) / max(top, 1e-12)))
            lines.append(bed_line(place, m.id, w, begin, m.width, strand, score))
    return lines


def write_concepts_h5(path: Path, concepts, activation: np.ndarray, layer: LayerRows) -> None:
    with atomic_path(path) as tmp, h5py.File(tmp, "w") as h5:
        h5["blocks"] = concepts.blocks
        h5["mean"] = concepts.scaling.mean
        h5.attrs["scale"] = concepts.scaling.scale
        h5.attrs["method"] = concepts.method
        h5.create_dataset("activation", data=activation.astype(np.float32), compression="gzip")
        h5.create_dataset("where", data=layer.where, compression="gzip")
        h5["where"].attrs["columns"] = "window, input position, strand"


def extract_run_concepts(
    run: Path,
    out: Path | None = None,
    *,
    layer: str | None = None,
    split: str = "test",
    settings: ConceptSettings | None = None,
    reference_motifs: str | None = None,
    device: str | None = None,
    dataset: Path | None = None,
) -> dict:
    """Fit every method of ``settings`` to ``layer`` of run ``run``; returns (and writes)
    the ``concepts.json`` summary."""
    run = Path(run)
    settings = settings or ConceptSettings()
    out = Path(out) if out is not None else concepts_dir(run)
    loaded = load_run(run, device=device, dataset=dataset)
    config, task, model = loaded.config, loaded.task, loaded.model
    dna = is_dna_model(model)
    layer = layer or ("hidden" if dna else task.diagnostic_layer)
    for method in settings.methods:
        if method not in ALL_METHODS:
            raise ConfigError(f"unknown concept method {method!r} "
                              f"(one of {', '.join(ALL_METHODS)})")  # fmt: skip
        if method == "modisco" and not dna:
            raise ConfigError(f"{run}: the modisco baseline needs a model that reads DNA")
    rows = collect_layer(model, task, layer, split, settings, config.train.eval_batch_size,
                         loaded.device, run)  # fmt: skip
    count = settings.concepts or int(getattr(model.g, "motifs", 0) or rows.rows.shape[1])
    sample = fit_subsample(rows.rows, settings.fit_rows, settings.seed)
    where = f"{run} layer {layer}"
    targets = decoys = None
    reference = {}
    if dna:
        targets, decoys, reference = _naming_targets(config, task, rows, reference_motifs)
    dataset = getattr(task, "data", None) if task.scoring == "sites" else None
    context = None
    if dataset is not None:
        context = build_positional_context(dataset, task.eval_indices(split), split,
                                           PositionSettings().max_distance)  # fmt: skip
    summary = {"run": str(run), "layer": layer, "split": split, "rows": int(len(rows.rows)),
               "fit_rows": int(len(sample)), "features": int(rows.rows.shape[1]),
               "concepts": count, "settings": _settings_dict(settings),
               "reference_motifs": reference, "methods": {}}  # fmt: skip
    if any(m != "modisco" for m in settings.methods):  # bad counts fail before any file
        check_activations(sample, count, where, k=settings.k)
        if settings.block is not None and settings.block > sample.shape[1]:
            raise ConfigError(f"{where}: block size {settings.block} is larger than the "
                              f"{sample.shape[1]} activation features")  # fmt: skip
    out.mkdir(parents=True, exist_ok=True)
    counter = Counter("concepts", total=len(settings.methods), unit="method")
    for method in settings.methods:
        detail(f"concepts: {method} on {len(sample):,} rows of {where}")
        began = time.perf_counter()
        if method == "modisco":
            windows = rows.x[: settings.modisco_windows]
            hyp = hypothetical_attributions(model, windows, device=loaded.device)
            entry = export_modisco(out / method, windows, hyp, rows.background, targets, decoys,
                                   site_placer(task, split), rf=int(model.g.receptive_field),
                                   context=context, offset=context_offset(task))  # fmt: skip
            entry["seconds"] = round(time.perf_counter() - began, 2)
            summary["methods"][method] = entry
            counter.update(1)
            continue
        fitted = extract(sample, method, count, block=settings.block, k=settings.k,
                         settings=FitSettings(steps=settings.steps, seed=settings.seed),
                         where=where)  # fmt: skip
        activation = fitted.activate(rows.rows)
        folder = out / method
        folder.mkdir(parents=True, exist_ok=True)
        entry = {"info": fitted.info, "block": fitted.block, "count": fitted.count}
        if dna:
            entry.update(_export_motifs(folder, rows, activation, method, model, task, split,
                                        settings, targets, decoys, context))  # fmt: skip
        write_concepts_h5(folder / "concepts.h5", fitted, activation, rows)
        entry["seconds"] = round(time.perf_counter() - began, 2)
        summary["methods"][method] = entry
        counter.update(1)
    counter.close()
    write_json_atomic(out / CONCEPTS_SUMMARY, summary)
    return summary


def _settings_dict(settings: ConceptSettings) -> dict:
    d = asdict(settings)
    d["methods"] = list(d["methods"])
    return d


def _naming_targets(config, task, rows: LayerRows, choice: str | None):
    choice = choice or getattr(task, "reference_motifs", "jaspar")
    collection, jaspar = jaspar_targets(config, None)
    words = " ".join(str(v) for v in collection.values() if v)
    if choice == "jaspar":
        return jaspar, None, {"kind": "jaspar", "description": words}
    if choice == "splicing":
        targets, _ = splicing_reference(task.data, rows.background)
        return targets, jaspar, {"kind": "splicing", "decoys": words}
    return motif_file_targets(Path(choice)), jaspar, {"kind": "file", "description": choice}


def _export_motifs(folder, rows, activation, method, model, task, split, settings, targets,
                   decoys, context) -> dict:  # fmt: skip
    rf = int(model.g.receptive_field)
    motifs, sites, silent = concept_motifs(rows, activation, method, rf=rf, settings=settings)
    naming = name_motifs(motifs, targets, decoys=decoys)
    for m in motifs:
        named = naming["named"].get(m.id)
        m.name = named.replace(" ", "_") if named else ""
    placed = {}
    if context is not None and motifs:
        offset = context_offset(task)
        placed = enrichment_by_motif(context, {
            m.id: np.stack([rows.where[sites[m.channel], 0],
                            rows.where[sites[m.channel], 1] - offset], 1)
            for m in motifs}, PositionSettings())  # fmt: skip
    files, families = {}, None
    if motifs:
        files = {k: v.name for k, v in write_motif_files(folder, motifs, rows.background).items()}
        write_logos(folder / "logos", motifs)
        write_tomtom(folder / "tomtom.tsv", naming)
        families = concept_families(folder, motifs, {c: rows.where[p] for c, p in sites.items()},
                                    targets, decoys, rf, rows.background, context,
                                    context_offset(task))  # fmt: skip
    lines = bed_lines(rows, motifs, sites, activation, site_placer(task, split), rf)
    write_text_atomic(folder / "sites.bed", sorted_bed(lines))
    files["sites"] = "sites.bed"
    return {
        "motifs": [{**motif_entry(m, naming),
                    **({"positions": placed[m.id]} if m.id in placed else {})}
                   for m in motifs],  # fmt: skip
        "silent_concepts": silent,
        "shuffled_control": naming["control"],
        "files": files,
        **({"families": families} if families is not None else {}),
    }


def describe(summary: dict) -> str:
    """One line per method: concepts, fit, exported motifs and their names."""
    lines = [f"{summary['concepts']} concepts per method from {summary['fit_rows']} of "
             f"{summary['rows']} rows of layer {summary['layer']} ({summary['features']} "
             "features)"]  # fmt: skip
    for method, entry in summary["methods"].items():
        info = entry["info"]
        fit = f"fvu {info['fvu']:.3f}" if "fvu" in info else ""
        motifs = entry.get("motifs")
        named = sum(1 for m in motifs or [] if m.get("name"))
        shown = f", {len(motifs)} motifs ({named} named)" if motifs is not None else ""
        lines.append(f"  {method}: block {entry['block']}, k {info.get('k', '-')} {fit}"
                     f"{shown}, {entry['seconds']:.1f} s")  # fmt: skip
    return "\n".join(lines)
