"""Naming against the splicing reference; the reference file; a tiny splicing run exported
end to end (positions, names, KL, report), also from a dataset without regions."""

import shutil

import h5py
import numpy as np
import pytest

from sparling_genomics.export.formats import ExportedMotif
from sparling_genomics.export.motif_summary import read_motifs_summary
from sparling_genomics.export.naming import load_jaspar_collection, name_motifs
from sparling_genomics.export.reference_motifs import (
    SPLICING_MOTIFS,
    kl_to_annotated,
    motif_file_targets,
    splicing_reference,
)
from sparling_genomics.genome.dataset import SiteDataset
from sparling_genomics.genome.pwm import trim
from sparling_genomics.genome.site_pwms import annotated_site_pwm

AT_RICH = np.array([0.32, 0.18, 0.18, 0.32])  # a plant genome's base composition


def test_reference_file_holds_the_cited_motifs():
    targets = {t.matrix_id: t for t in motif_file_targets(SPLICING_MOTIFS)}
    assert "branchpoint_YTNAN" in targets and "ESE_GAAGAA" in targets
    assert all("Pertea2007" in t.name for k, t in targets.items() if k.startswith("ESE_"))
    readme = SPLICING_MOTIFS.with_suffix(".md").read_text()
    assert "8:159" in readme and "YUNAN" in readme


@pytest.mark.parametrize("seed", [0, 1])
def test_gt_ag_motifs_are_named_donor_and_acceptor_and_their_shuffles_are_not(
    tiny_dataset, seed
):
    data = SiteDataset(tiny_dataset)
    targets, annotated = splicing_reference(data, AT_RICH)
    queries = []
    for kind in ("donor", "acceptor"):  # the test block's sites: not the reference's
        probs, n = annotated_site_pwm(data, kind, split="test")
        lo, hi = trim(probs, 0.25, AT_RICH)
        queries.append(ExportedMotif(f"q_{kind}", probs[lo:hi], n))
    result = name_motifs(queries, targets, decoys=load_jaspar_collection(), seed=seed)
    for kind in ("donor", "acceptor"):
        best = result["best"][f"q_{kind}"]
        assert best.target_id == f"annotated_{kind}" and best.q_value < 0.05
        assert result["named"][f"q_{kind}"].startswith(f"annotated_{kind}")
    assert result["control"]["false_matches"] == 0
    kl = kl_to_annotated(queries[0].probs, annotated)
    assert kl["donor"]["bits_per_column"] < 0.1 < kl["acceptor"]["bits_per_column"]


def test_splicing_reference_needs_a_dataset():
    from sparling_genomics.errors import InputError

    with pytest.raises(InputError, match="needs a site task with a dataset"):
        splicing_reference(None)


def test_tiny_splicing_run_exports_positions_names_and_report(cli, tiny_dataset, tmp_path):
    dataset = tmp_path / "tiny.h5"
    shutil.copy(tiny_dataset, dataset)
    run = tmp_path / "run"
    steps = [
        ("train", "--task", "splicing", "--preset", "tiny", "--dataset", dataset, "--out", run,
         "--no-progress"),
        ("export", "--model", run, "--min-sites", "3"),
        ("report", "--model", run, "--out", tmp_path / "report.html"),
    ]  # fmt: skip
    for args in steps:
        result = cli(*args)
        assert result.returncode == 0, result.stderr
    summary = read_motifs_summary(run / "motifs")
    assert summary["reference_motifs"]["kind"] == "splicing"
    assert "annotated_donor" in summary["reference_motifs"]["targets"]
    assert summary["motifs"]
    for m in summary["motifs"]:
        block = m["positions"]
        assert block["n_sites"] == m["nsites"]
        assert set(block["classes"]) == {"acceptor", "donor"}
        assert block["regions"]["available"]
        shares = sum(block["regions"][r]["share"] for r in ("exon", "intron", "intergenic"))
        assert shares == pytest.approx(1.0, abs=1e-3)
        assert block["summary"]
        assert set(m["kl_to_annotated"]) == {"acceptor", "donor"}
    page = (tmp_path / "report.html").read_text()
    assert "Where the motifs sit" in page and "metaplot of" in page

    # Named against JASPAR on request, with other bins.
    other = tmp_path / "jaspar_motifs"
    result = cli("export", "--model", run, "--min-sites", "3", "--out", other,
                 "--reference-motifs", "jaspar", "--max-distance", "100", "--bin-width", "10")
    assert result.returncode == 0, result.stderr
    summary = read_motifs_summary(other)
    assert summary["reference_motifs"]["kind"] == "jaspar"
    assert all(m["positions"]["bin_edges"][0] == -100 for m in summary["motifs"])
    assert all("kl_to_annotated" not in m for m in summary["motifs"])

    # The same run on a dataset built before regions were recorded: exported, marked.
    with h5py.File(dataset, "a") as h5:
        del h5["region"]
    old = tmp_path / "old_motifs"
    for args in (("export", "--model", run, "--min-sites", "3", "--out", old),
                 ("report", "--model", run, "--motifs", old, "--out", tmp_path / "old.html")):
        result = cli(*args)
        assert result.returncode == 0, result.stderr
    summary = read_motifs_summary(old)
    assert all(m["positions"]["regions"] == {"available": False} for m in summary["motifs"])
    assert "Exon / intron / intergenic share: unavailable" in (tmp_path / "old.html").read_text()


    # A named reference file that is not there: one line, exit 2, nothing written.
    result = cli("export", "--model", run, "--out", tmp_path / "m",
                 "--reference-motifs", tmp_path / "none.meme")  # fmt: skip
    assert result.returncode == 2 and "motif file not found" in result.stderr
    assert not (tmp_path / "m").exists()
