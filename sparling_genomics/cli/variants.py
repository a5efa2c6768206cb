"""The ``variants`` verb: score a VCF with a trained site model.

Thin, as the other verbs.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from .options import (
    device_option,
    model_option,
    motifs_option,
    run_dataset_option,
    threads_option,
)
from .paths import OUT_FOLDER


@click.command()
@model_option("Run folder of a trained site model (splicing or BED labels).")
@click.option("--vcf", required=True, type=click.Path(path_type=Path), help="VCF (plain or .gz).")
@click.option("--out", required=True, type=OUT_FOLDER, help="Output folder.")
@click.option(
    "--fasta", type=click.Path(path_type=Path), help="Genome FASTA (default: the run's dataset's)."
)
@click.option("--reference", help="Named reference (reference/NAME.yaml) instead of --fasta.")
@click.option(
    "--gff",
    type=click.Path(path_type=Path),
    help="Annotation for the strands (default: the run's dataset's; none: both).",
)
@click.option(
    "--distance",
    type=click.IntRange(min=0),
    default=50,
    show_default=True,
    help="Delta scores within +-D nt of the variant.",
)
@click.option(
    "--batch",
    type=click.IntRange(min=1),
    default=64,
    show_default=True,
    help="Alleles per model call.",
)
@motifs_option
@click.option(
    "--skip-ref-mismatch",
    is_flag=True,
    help="Count and skip records whose REF does not match the FASTA.",
)
@click.option(
    "--skip-unknown-sequences",
    "skip_unknown",
    is_flag=True,
    help="Count and skip records on sequences the FASTA lacks.",
)
@click.option(
    "--chrom-aliases",
    type=click.Path(path_type=Path),
    help="File of sequence-name aliases (VCF name, FASTA name).",
)
@run_dataset_option()
@device_option()
@threads_option()
def variants(run, vcf, out, fasta, reference, gff, distance, batch, motifs_dir,
             skip_ref_mismatch, skip_unknown, chrom_aliases, run_dataset,
             device) -> None:  # fmt: skip
    """Variant effects: site delta scores (SpliceAI's convention) and the motif sites each
    allele creates or destroys; an annotated VCF, TSVs and variants.json in --out."""
    from ..errors import InputError
    from ..genome.references import load_reference
    from ..runners.variants import score_vcf

    if fasta and reference:
        raise InputError("give --fasta or --reference, not both")
    if reference:
        ref = load_reference(reference)
        fasta, gff = ref.fasta, gff or ref.annotation
    result = score_vcf(
        run,
        vcf,
        out,
        fasta=fasta,
        gff=gff,
        distance=distance,
        batch=batch,
        skip_ref_mismatch=skip_ref_mismatch,
        skip_unknown=skip_unknown,
        chrom_aliases=chrom_aliases,
        motifs_dir=motifs_dir,
        device=device,
        dataset=run_dataset,
    )
    keep = ("counts", "skipped", "seconds", "alleles_per_second", "files")
    click.echo(json.dumps({k: result[k] for k in keep}, indent=2))
    skipped = ", ".join(f"{k} {v['alleles']}" for k, v in result["skipped"].items() if v["alleles"])
    counts = result["counts"]
    click.echo(f"scored {counts['scored']} of {counts['alleles']} alleles ({counts['records']} "
               f"records); skipped: {skipped or 'none'}; wrote {out}/")  # fmt: skip
