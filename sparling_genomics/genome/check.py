"""Pre-flight check of a genome's input files, before any job runs.

The pipeline calls this while it parses its config, so a missing FASTA, a GFF or BED whose
chromosome names do not match the FASTA, or a feature past a sequence's end stops everything
with the same one-line message the ``dataset`` verb would give, before hours of work.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import InputError
from .annotation import read_annotation
from .chromosomes import sequence_names
from .fasta import Genome
from .labels import read_bed
from .references import load_reference


def check_genome_inputs(
    *,
    reference: str | None = None,
    fasta: str | Path | None = None,
    gff: str | Path | None = None,
    bed: str | Path | None = None,
    chrom_aliases: str | Path | None = None,
    skip_unknown_sequences: bool = False,
) -> dict[str, int]:
    """Read (and so check) one genome's inputs; returns its sequence lengths."""
    if reference:
        ref = load_reference(reference)
        fasta, gff = ref.fasta, ref.annotation
    if not fasta:
        raise InputError("a genome needs a reference or a FASTA")
    genome = Genome(Path(fasta))
    names = sequence_names(genome, Path(chrom_aliases) if chrom_aliases else None,
                           skip_unknown=skip_unknown_sequences)  # fmt: skip
    if gff:
        annotation = read_annotation(Path(gff), names)
        if not annotation.selected("longest"):
            raise InputError(f"{gff}: no protein-coding transcripts with exons")
    if bed:
        read_bed(Path(bed), names)
    return dict(genome.lengths)
