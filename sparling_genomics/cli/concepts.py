"""The ``concepts`` verb: concepts found after training in a
run's layer (TopK SAE, block-sparse featurizers, Deleuzian) and, for DNA models, the motifs
they stand for."""

from __future__ import annotations

import click

from .options import device_option, model_option, run_dataset_option, threads_option
from .paths import OUT_FOLDER

_METHODS = ("sae", "bsf_vanilla", "bsf_grassmannian", "bsf_group_lasso", "deleuzian")
_BASELINES = ("modisco",)


@click.command()
@model_option()
@click.option("--out", type=OUT_FOLDER, help="Folder (default RUN/concepts).")
@click.option("--layer", help="DNA models: hidden (default: g's last hidden features) or g "
              "(its motif logits per strand); others: motifs, g, embedding or a module "
              "name.")  # fmt: skip
@click.option("--method", "methods", multiple=True, type=click.Choice(_METHODS + _BASELINES),
              help="Extractor (repeatable; default: the five extractors). modisco: the "
              "post-hoc baseline, saturation mutagenesis + TF-MoDISco-lite (DNA models).")
@click.option("--concepts", default=0, show_default=True, type=click.IntRange(min=0),
              help="Concepts (blocks) per method; 0: one per motif channel of g.")  # fmt: skip
@click.option("--block", type=click.IntRange(min=1),
              help="Block size of the block-sparse featurizers (default: by MDL).")  # fmt: skip
@click.option("--k", type=click.IntRange(min=1),
              help="Active concepts per row for SAE / BSF (default: by MDL).")  # fmt: skip
@click.option("--steps", default=3000, show_default=True, type=click.IntRange(min=1),
              help="Optimiser steps of the autoencoder-shaped extractors.")  # fmt: skip
@click.option("--seed", default=0, show_default=True, type=int)
@click.option("--split", type=click.Choice(["val", "test"]), default="test", show_default=True)
@click.option("--max-rows", default=1_000_000, show_default=True, type=click.IntRange(min=1),
              help="Activation rows collected (windows in order until reached).")  # fmt: skip
@click.option("--fit-rows", default=100_000, show_default=True, type=click.IntRange(min=1),
              help="Rows the extractors are fitted on (a seeded subsample).")  # fmt: skip
@click.option("--site-fraction", default=0.001, show_default=True,
              type=click.FloatRange(min=0, max=1, min_open=True),
              help="A concept's sites are its local maxima among its top rows (this fraction).")
@click.option("--modisco-windows", default=2000, show_default=True,
              type=click.IntRange(min=1), help="Windows attributed for --method modisco.")
@click.option("--reference-motifs", help="jaspar, splicing or a MEME file (default: the task's).")
@run_dataset_option()
@device_option("auto (default: the run's)")
@threads_option()
def concepts(run, out, layer, methods, concepts, block, k, steps, seed, split, max_rows,
             fit_rows, site_fraction, modisco_windows, reference_motifs,
             run_dataset, device) -> None:  # fmt: skip
    """Concepts of RUN's layer found after training; motifs, logos, sites for DNA models."""
    from ..rundir import concepts_dir
    from ..runners.concepts import ConceptSettings, describe, extract_run_concepts

    settings = ConceptSettings(
        methods=tuple(methods) or _METHODS, concepts=concepts, block=block, k=k, steps=steps,
        seed=seed, fit_rows=fit_rows, max_rows=max_rows, site_fraction=site_fraction,
        modisco_windows=modisco_windows,
    )  # fmt: skip
    summary = extract_run_concepts(run, out, layer=layer, split=split, settings=settings,
                                   reference_motifs=reference_motifs, device=device,
                                   dataset=run_dataset)  # fmt: skip
    click.echo(describe(summary))
    click.echo(f"wrote {out or concepts_dir(run)}")
