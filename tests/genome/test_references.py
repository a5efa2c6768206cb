"""Bundled reference manifests: each names files that are there, under its own name."""

import gzip

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


def test_a_close_unknown_name_gets_a_did_you_mean():
    with pytest.raises(InputError, match=r"unknown reference 'tiyn'; did you mean 'tiny'\? \("):
        load_reference("tiyn")
    with pytest.raises(InputError) as err:
        load_reference("mars")
    assert "did you mean" not in str(err.value)


FASTA = b">chr1 test\nACGTACGTAC\nGGTTAA\n"


@pytest.mark.parametrize(
    "name,content",
    [
        ("genome.fa", FASTA),
        ("genome.FASTA", FASTA),
        ("genome.fna.gz", gzip.compress(FASTA, mtime=0)),
        ("genome.fa", b""),  # by its suffix, even when empty
        ("genome.yaml", b"\n\n  " + FASTA),  # by its first non-blank byte, whatever its name
        ("genome.txt", gzip.compress(FASTA, mtime=0)),  # gzip read whatever its name
        ("genome", FASTA),  # no suffix: not a bundled name, a FASTA on disk
    ],
)
def test_a_fasta_given_as_the_reference_points_to_fasta(tmp_path, monkeypatch, name, content):
    monkeypatch.chdir(tmp_path)
    (tmp_path / name).write_bytes(content)
    with pytest.raises(InputError) as err:
        load_reference(name)
    message = str(err.value)
    assert message == (f"{name}: is a FASTA file, not a reference manifest; give it with --fasta "
                       "(and the annotation with --gff)")  # fmt: skip
    assert "\n" not in message


def test_a_manifest_is_not_taken_for_a_fasta(tmp_path, monkeypatch):
    (tmp_path / "my.fa").write_bytes(FASTA)
    (tmp_path / "my.yaml").write_text("name: mine\nfasta: my.fa\n")
    reference = load_reference(tmp_path / "my.yaml")
    assert reference.name == "mine" and reference.annotation is None
    (tmp_path / "broken.yaml").write_text("fasta: [unclosed\n")
    with pytest.raises(InputError, match="broken.yaml: reference manifest is not valid YAML"):
        load_reference(tmp_path / "broken.yaml")
    # A bundled name wins over a file of that name in the working folder.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tiny").write_bytes(FASTA)
    assert load_reference("tiny").name == "tiny"
