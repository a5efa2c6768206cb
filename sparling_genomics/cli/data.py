"""The ``dataset`` verb: a genome and its annotation (or labelled BED sites) as labelled
windows in one HDF5 file."""

from __future__ import annotations

from pathlib import Path

import click

from .paths import OUT_FILE


@click.command()
@click.option("--reference", help="Named reference (reference/NAME.yaml) or a manifest path.")
@click.option("--fasta", type=click.Path(path_type=Path), help="Genome FASTA (plain or gzip).")
@click.option("--gff", type=click.Path(path_type=Path), help="Annotation: GFF3 or GTF.")
@click.option("--bed", type=click.Path(path_type=Path), help="Labelled sites/regions (BED4+).")
@click.option(
    "--chrom-aliases",
    type=click.Path(path_type=Path),
    help="File pairing the GFF/BED's sequence names with the FASTA's (two columns per line).",
)
@click.option(
    "--skip-unknown-sequences",
    is_flag=True,
    help="Skip GFF/BED lines on sequences the FASTA lacks (e.g. organelles) instead of failing.",
)
@click.option("--out", required=True, type=OUT_FILE, help="Output .h5 file.")
@click.option(
    "--labels",
    default="acceptor,donor",
    show_default=True,
    help="Site kinds from the annotation: acceptor, donor, tss, polya, start_codon, stop_codon.",
)
@click.option(
    "--transcripts",
    type=click.Choice(["longest", "all"]),
    default="longest",
    show_default=True,
    help="Per gene: the longest transcript, or all.",
)
@click.option("--window", default=1000, show_default=True, help="Output positions per window.")
@click.option("--context", default=400, show_default=True, help="Context bases (both sides).")
@click.option("--val-fraction", default=0.1, show_default=True)
@click.option("--test-fraction", default=0.2, show_default=True)
@click.option(
    "--split",
    "split_mode",
    type=click.Choice(["blocks", "chromosomes"]),
    default="blocks",
    show_default=True,
    help="blocks: each sequence cut into train | val | test blocks; chromosomes: whole "
    "sequences held out (named below, else chosen by labelled-site count near the fractions).",
)
@click.option("--test-sequences", default="", help="With --split chromosomes: test sequences, "
              "comma-separated (e.g. chr1,chr3).")  # fmt: skip
@click.option("--val-sequences", default="", help="With --split chromosomes: validation "
              "sequences, comma-separated.")  # fmt: skip
@click.option("--force", is_flag=True, help="Replace an existing --out file.")
def dataset(
    reference,
    fasta,
    gff,
    bed,
    chrom_aliases,
    skip_unknown_sequences,
    out,
    labels,
    transcripts,
    window,
    context,
    val_fraction,
    test_fraction,
    split_mode,
    test_sequences,
    val_sequences,
    force,
) -> None:
    """Build a labelled-site HDF5 dataset from a genome + annotation (or a BED)."""
    import json

    from ..errors import InputError
    from ..genome.dataset import DatasetSpec, build_dataset
    from ..genome.references import DEFAULT_REFERENCE, available_references, load_reference
    from ..genome.splits import describe_split

    if out.exists() and not force:
        raise InputError(f"{out}: exists already (use --force to replace it)")
    if reference and fasta:
        raise InputError("give --reference or --fasta, not both")
    named = None  # a bundled reference is recorded by name, not by its install path
    if not fasta:
        ref = load_reference(reference or DEFAULT_REFERENCE)
        fasta = ref.fasta
        if (reference or DEFAULT_REFERENCE) in available_references():
            named = reference or DEFAULT_REFERENCE
        if gff is None and bed is None:
            gff = ref.annotation
    if gff is not None and bed is not None:
        raise InputError("give --gff or --bed, not both")
    if gff is None and bed is None:
        raise InputError("no labels: give --gff (annotation) or --bed (labelled sites)")
    spec = DatasetSpec(
        window=window,
        context=context,
        kinds=[k.strip() for k in labels.split(",") if k.strip()],
        transcripts=transcripts,
        val_fraction=val_fraction,
        test_fraction=test_fraction,
        split=split_mode,
        test_sequences=[s.strip() for s in test_sequences.split(",") if s.strip()],
        val_sequences=[s.strip() for s in val_sequences.split(",") if s.strip()],
    )
    summary = build_dataset(
        out,
        fasta,
        annotation=gff,
        bed=bed,
        spec=spec,
        chrom_aliases=chrom_aliases,
        skip_unknown_sequences=skip_unknown_sequences,
        reference=named,
    )
    click.echo(json.dumps(summary, indent=2))
    click.echo(f"split: {describe_split(summary)}")
    click.echo(f"wrote {out}")
