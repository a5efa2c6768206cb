"""``motifs.json``'s one writer and reader, and the exported motifs and families read back with
their PWMs: one-line errors naming the file for a missing, torn, foreign or mismatched one."""

import numpy as np
import pytest

from sparling_genomics.errors import InputError, RunDirectoryError
from sparling_genomics.export.families import MotifFamily, write_family_sites
from sparling_genomics.export.formats import ExportedMotif, write_motif_files
from sparling_genomics.export.motif_summary import (
    exported_families,
    exported_family_sites,
    exported_motifs,
    motifs_summary_path,
    read_motifs_summary,
    write_motifs_summary,
)


def pwm(seq: str) -> np.ndarray:
    out = np.full((len(seq), 4), 0.05)
    for i, base in enumerate(seq):
        out[i, "ACGT".index(base)] = 0.85
    return out


MOTIFS = [ExportedMotif("sparling_c00", pwm("TGACGTCA"), 40, "ATF1"),
          ExportedMotif("sparling_c03", pwm("CACGTG"), 12)]  # fmt: skip
ENTRIES = [{"id": "sparling_c00", "channel": 0, "nsites": 40, "offset": 2, "name": "ATF1 (x)",
            "family": "sparling_f00"},
           {"id": "sparling_c03", "channel": 3, "nsites": 12, "offset": 0, "name": None,
            "family": None}]  # fmt: skip


def exported(folder, families=None):
    """A folder as ``export`` leaves it: motif files and the summary."""
    folder.mkdir(parents=True, exist_ok=True)
    write_motif_files(folder, MOTIFS)
    summary = {"motifs": ENTRIES, **({"families": families} if families is not None else {})}
    write_motifs_summary(folder, summary)
    return folder


def test_the_summary_written_is_the_summary_read(tmp_path):
    summary = {"split": "test", "motifs": ENTRIES, "families": {"families": []}}
    path = write_motifs_summary(tmp_path, summary)
    assert path == motifs_summary_path(tmp_path) == tmp_path / "motifs.json"
    assert read_motifs_summary(tmp_path) == summary


def test_a_missing_torn_or_foreign_summary_is_one_line_naming_the_file(tmp_path):
    path = tmp_path / "motifs.json"
    with pytest.raises(RunDirectoryError, match=f"^{path}: missing .*export` first"):
        read_motifs_summary(tmp_path)
    assert read_motifs_summary(tmp_path, missing_ok=True) is None
    path.write_text('{"motifs": [')
    with pytest.raises(RunDirectoryError, match=f"^{path}: not valid JSON"):
        read_motifs_summary(tmp_path, missing_ok=True)  # there, but torn: not "missing"
    for foreign in ("{}", "[]", '{"motifs": {}}'):
        path.write_text(foreign)
        with pytest.raises(RunDirectoryError, match=f"^{path}: no 'motifs' list"):
            read_motifs_summary(tmp_path)


def test_exported_motifs_carry_the_summary_fields_and_the_meme_pwms(tmp_path):
    motifs = exported(tmp_path)
    found = exported_motifs(motifs)
    assert [(m.id, m.name, m.nsites, m.channel, m.offset, m.family) for m in found] == [
        ("sparling_c00", "ATF1_(x)", 40, 0, 2, "sparling_f00"),
        ("sparling_c03", "", 12, 3, 0, "")]  # fmt: skip
    for m, made in zip(found, MOTIFS):
        np.testing.assert_allclose(m.probs, made.probs / made.probs.sum(1, keepdims=True),
                                   atol=1e-6)  # fmt: skip


def test_a_meme_file_that_does_not_match_the_summary_is_one_line(tmp_path):
    folder = exported(tmp_path)
    write_motif_files(folder, MOTIFS[:1])
    with pytest.raises(InputError, match=r"motifs.meme: its motifs do not match motifs.json "
                                         r"\(1 vs 2\); export again"):  # fmt: skip
        exported_motifs(folder)


def test_exported_families_carry_their_effect(tmp_path):
    block = {"families": [{"id": "fam0", "nsites": 30, "name": "a name",
                           "effect": {"effect": 1.5}},
                          {"id": "fam1", "nsites": 5, "name": None, "effect": None}]}  # fmt: skip
    folder = exported(tmp_path, block)
    write_motif_files(folder / "families", [ExportedMotif("fam0", pwm("TGACGTCA"), 30),
                                            ExportedMotif("fam1", pwm("CACGTG"), 5)])  # fmt: skip
    found = exported_families(folder)
    assert [(f.id, f.nsites, f.name, f.effect) for f in found] == [
        ("fam0", 30, "a_name", 1.5), ("fam1", 5, "", None)]  # fmt: skip
    assert found[1].width == 6


def test_no_families_is_an_empty_list_and_no_block_is_one_line(tmp_path):
    assert exported_families(exported(tmp_path / "empty", {"families": []})) == []
    old = exported(tmp_path / "old")
    with pytest.raises(InputError, match="motifs.json: no 'families' block .*export` again"):
        exported_families(old)


def test_family_sites_read_back_as_written_and_a_torn_file_is_one_line(tmp_path):
    assert exported_family_sites(tmp_path) is None  # an export without the file
    sites = np.array([[0, 10, 1], [3, 120, -1]])
    family = MotifFamily(ExportedMotif("sparling_f00", pwm("CACGTG"), 2), [], [], [], sites)
    (tmp_path / "families").mkdir()
    write_family_sites(tmp_path / "families" / "sites.tsv.gz", [family])
    read = exported_family_sites(tmp_path)
    assert list(read) == ["sparling_f00"] and read["sparling_f00"].tolist() == sites.tolist()
    (tmp_path / "families" / "sites.tsv.gz").write_bytes(b"not gzip")
    with pytest.raises(InputError, match="sites.tsv.gz: not a family sites table"):
        exported_family_sites(tmp_path)
