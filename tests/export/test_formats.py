"""Motif files read back with the field's own readers (Biopython, memelite)."""

import numpy as np
import pytest
from Bio import motifs as bio_motifs
from memelite.io import read_meme

from sparling_genomics.errors import InputError
from sparling_genomics.export.formats import (
    ExportedMotif,
    homer_threshold,
    read_meme_motifs,
    write_motif_files,
)


@pytest.fixture
def motifs():
    rng = np.random.default_rng(0)
    a = rng.dirichlet(np.ones(4) * 0.3, size=8)
    b = rng.dirichlet(np.ones(4) * 0.3, size=5)
    return [
        ExportedMotif("sparling_c00", a, nsites=120, name="MA1350.1_BZIP42", channel=0),
        ExportedMotif("sparling_c03", b, nsites=37, channel=3),
    ]


def test_meme_reads_back_with_memelite_and_biopython(tmp_path, motifs):
    background = np.array([0.32, 0.18, 0.18, 0.32])
    paths = write_motif_files(tmp_path, motifs, background)
    # No E-value for a discovered motif: no ``E=`` at all (MEME's minimal format allows it).
    matrix_lines = [line for line in paths["meme"].read_text().splitlines()
                    if line.startswith("letter-probability matrix:")]  # fmt: skip
    assert matrix_lines == ["letter-probability matrix: alength= 4 w= 8 nsites= 120",
                            "letter-probability matrix: alength= 4 w= 5 nsites= 37"]  # fmt: skip
    assert "E=" not in paths["meme"].read_text()
    assert list(read_meme(str(paths["meme"]))) == list(read_meme_motifs(paths["meme"]))
    ours = read_meme_motifs(paths["meme"])
    assert list(ours) == ["sparling_c00 MA1350.1_BZIP42", f"sparling_c03 {motifs[1].consensus}"]
    for got, m in zip(ours.values(), motifs):
        assert np.allclose(got, m.probs, atol=1e-5)
    with open(paths["meme"]) as handle:
        record = bio_motifs.parse(handle, "minimal")
    assert [m.name for m in record] == ["sparling_c00", "sparling_c03"]
    assert [m.num_occurrences for m in record] == [120, 37]
    assert [m.evalue for m in record] == [0.0, 0.0]  # Biopython's default for a missing E=
    assert np.isclose(record.background["A"], 0.32)
    # Biopython rebuilds counts as round(p * nsites), renormalised: within ~2 / nsites.
    pwm = np.array([record[0].pwm[b] for b in "ACGT"]).T
    assert np.allclose(pwm, motifs[0].probs, atol=2 / 120)


def test_meme_writes_an_e_value_only_where_a_motif_carries_one(tmp_path, motifs):
    motifs[1].evalue = 3.2e-9
    paths = write_motif_files(tmp_path, motifs)
    lines = paths["meme"].read_text().splitlines()
    assert "letter-probability matrix: alength= 4 w= 8 nsites= 120" in lines
    assert "letter-probability matrix: alength= 4 w= 5 nsites= 37 E= 3.2e-09" in lines
    with open(paths["meme"]) as handle:
        record = bio_motifs.parse(handle, "minimal")
    assert [m.evalue for m in record] == [0.0, 3.2e-9]
    assert len(read_meme_motifs(paths["meme"])) == 2


def test_old_meme_files_with_e_zero_still_read(tmp_path, motifs):
    """Files written before E= was left out (``E= 0`` on every motif) read as before."""
    path = write_motif_files(tmp_path, motifs)["meme"]
    old = tmp_path / "old.meme"
    old.write_text("\n".join(line + " E= 0" if line.startswith("letter-probability") else line
                             for line in path.read_text().splitlines()))  # fmt: skip
    assert old.read_text().count("E= 0") == 2
    ours, before = read_meme_motifs(path), read_meme_motifs(old)
    assert list(before) == list(ours)
    assert all(np.array_equal(before[k], ours[k]) for k in ours)
    with open(old) as handle:
        assert [m.num_occurrences for m in bio_motifs.parse(handle, "minimal")] == [120, 37]


def test_jaspar_transfac_homer(tmp_path, motifs):
    paths = write_motif_files(tmp_path, motifs)
    with open(paths["jaspar"]) as handle:
        jaspar = bio_motifs.parse(handle, "jaspar")
    assert [m.matrix_id for m in jaspar] == ["sparling_c00", "sparling_c03"]
    assert jaspar[0].name == "MA1350.1_BZIP42"
    assert np.allclose(np.array([jaspar[1].counts[b] for b in "ACGT"]).T, motifs[1].probs * 37,
                       atol=0.01)  # fmt: skip
    with open(paths["transfac"]) as handle:
        transfac = bio_motifs.parse(handle, "transfac")
    assert len(transfac) == 2
    homer = paths["homer"].read_text().splitlines()
    header = homer[0].split("\t")
    assert header[0] == ">" + motifs[0].consensus.upper() and header[1].startswith("sparling_c00/")
    assert float(header[2]) == pytest.approx(homer_threshold(motifs[0].probs), abs=1e-6)
    assert float(header[2]) > 0
    assert len(homer) == 2 + 8 + 5
    assert np.allclose([sum(map(float, row.split("\t"))) for row in homer[1:9]], 1, atol=1e-3)


def test_duplicate_ids_are_refused(tmp_path, motifs):
    motifs[1].id = motifs[0].id
    with pytest.raises(InputError, match="unique"):
        write_motif_files(tmp_path, motifs)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "text,message",
    [
        ("", "no motifs"),
        (
            "MEME version 4\n\nMOTIF a\nletter-probability matrix: alength= 4 w= 2\nx y z w\n",
            "not a readable MEME",
        ),
        (
            "MOTIF a\nletter-probability matrix: alength= 4 w= 1\n0.9 0.9 0.1 0.1\n",
            "not probabilities",
        ),
    ],
)
def test_bad_motif_files(tmp_path, text, message):
    path = tmp_path / "bad.meme"
    path.write_text(text)
    with pytest.raises(InputError, match=message) as err:
        read_meme_motifs(path)
    assert str(err.value).startswith(str(path))
