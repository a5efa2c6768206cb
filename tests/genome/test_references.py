"""Bundled reference manifests: each names files that are there, under its own name."""

import pytest

from sparling_genomics.errors import InputError
from sparling_genomics.genome.references import available_references, load_reference


def test_every_bundled_manifest_loads_and_names_its_files():
    names = available_references()
    assert {"tiny", "tair10-chr1", "arenosa-chr1-2"} <= set(names)
    for name in names:
        reference = load_reference(name)
        assert reference.name == name
        assert reference.fasta.is_file() and reference.annotation.is_file()


def test_the_second_genome_reads_as_its_own_sequences():
    """arenosa-chr1-2 is A. arenosa's chromosomes 1-2, not another copy of TAIR10."""
    from sparling_genomics.genome.fasta import Genome

    lengths = Genome(load_reference("arenosa-chr1-2").fasta).lengths
    assert set(lengths) == {"LR999451.1", "LR999452.1"}
    assert sum(lengths.values()) == 39_540_687


def test_an_unknown_name_lists_the_known_ones():
    with pytest.raises(InputError, match="unknown reference 'mars'.*arenosa-chr1-2"):
        load_reference("mars")
