"""The ``concepts`` verb on a tiny planted run: files, BED, HDF5, report section, bad input."""

import json
import shutil

import h5py
import pytest

FAST = ("--steps", "30", "--fit-rows", "3000", "--concepts", "3", "--block", "2", "--k", "1",
        "--site-fraction", "0.01")  # fmt: skip


@pytest.fixture(scope="module")
def concept_run(planted_tiny, tmp_path_factory, ):
    from tests.conftest import run_cli

    run = tmp_path_factory.mktemp("concepts") / "run"
    shutil.copytree(planted_tiny.run, run)
    result = run_cli("concepts", "--model", run, "--method", "sae", "--method", "bsf_grassmannian",
                     "--method", "deleuzian", *FAST)  # fmt: skip
    assert result.returncode == 0, result.stderr
    return run, result


def test_concepts_writes_each_method_and_a_summary(concept_run):
    run, result = concept_run
    summary = json.loads((run / "concepts" / "concepts.json").read_text())
    assert list(summary["methods"]) == ["sae", "bsf_grassmannian", "deleuzian"]
    assert summary["layer"] == "hidden" and summary["concepts"] == 3
    assert "wrote" in result.stdout and "sae: block 1" in result.stdout
    for method, entry in summary["methods"].items():
        folder = run / "concepts" / method
        with h5py.File(folder / "concepts.h5") as h5:
            assert h5["activation"].shape == (summary["rows"], 3)
            assert h5["where"].shape == (summary["rows"], 3)
            assert h5["blocks"].shape[:2] == (3, entry["block"])
        assert entry["block"] == (2 if method == "bsf_grassmannian" else 1)
        ids = {m["id"] for m in entry["motifs"]}
        for line in (folder / "sites.bed").read_text().splitlines():
            chrom, start, end, name, score, strand = line.split("\t")
            assert chrom.startswith("window") and 0 <= int(start) < int(end)
            assert name in ids and strand in "+-" and 0 <= int(score) <= 1000
        if entry["motifs"]:
            assert (folder / "motifs.meme").is_file() and (folder / "tomtom.tsv").is_file()
            assert all(m["nsites"] >= 10 for m in entry["motifs"])
            # Its motifs clustered into families as export clusters Sparling's channels.
            families = {f["id"]: f for f in entry["families"]["families"]}
            assert families and all(f.startswith(f"{method}_f") for f in families)
            members = [m["id"] for f in families.values() for m in f["members"]]
            assert sorted(members) == sorted(ids)
            assert all(families[m["family"]] for m in entry["motifs"])
            assert (folder / "families" / "motifs.meme").is_file()


def test_the_report_has_a_concepts_section(concept_run):
    from tests.conftest import run_cli

    run, _ = concept_run
    out = run.parent / "report.html"
    result = run_cli("report", "--model", run, "--out", out)
    assert result.returncode == 0, result.stderr
    page = out.read_text()
    assert "Concepts after training" in page and "Deleuzian" in page


def test_same_seed_same_concepts_alone_or_after_other_methods(concept_run, tmp_path):
    from tests.conftest import run_cli

    run, _ = concept_run
    result = run_cli("concepts", "--model", run, "--method", "bsf_grassmannian", *FAST,
                     "--out", tmp_path)
    assert result.returncode == 0, result.stderr
    with h5py.File(tmp_path / "bsf_grassmannian" / "concepts.h5") as a, \
            h5py.File(run / "concepts" / "bsf_grassmannian" / "concepts.h5") as b:
        # Equal up to float rounding (BLAS sums in another memory layout: ~1e-7 a step,
        # 1.4e-5 after the fit's steps on the tiny planted run's motif blocks).
        assert abs(a["blocks"][:] - b["blocks"][:]).max() < 1e-4


@pytest.mark.parametrize("args, message", [
    (("--layer", "nosuch"), "--layer 'nosuch' is not a layer of this model"),
    (("--concepts", "3", "--k", "5"), "k=5 must be between 1 and the number of concepts"),
    (("--concepts", "3", "--block", "64", "--k", "1"), "block size 64 is larger than"),
])  # fmt: skip
def test_bad_options_are_one_line_errors(planted_tiny, tmp_path, args, message):
    from tests.conftest import run_cli

    result = run_cli("concepts", "--model", planted_tiny.run, "--method", "bsf_vanilla",
                     "--steps", "5", "--out", tmp_path / "c", *args)  # fmt: skip
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and message in result.stderr, result.stderr
    assert not (tmp_path / "c" / "concepts.json").exists()


def test_modisco_baseline_runs_on_a_tiny_model(planted_tiny, tmp_path):
    from tests.conftest import run_cli

    result = run_cli("concepts", "--model", planted_tiny.run, "--method", "modisco",
                     "--modisco-windows", "32", "--out", tmp_path, timeout=600)  # fmt: skip
    assert result.returncode == 0, result.stderr
    entry = json.loads((tmp_path / "concepts.json").read_text())["methods"]["modisco"]
    assert set(entry["info"]) == {"positive_patterns", "negative_patterns", "windows"}
    assert entry["info"]["windows"] == 32 and (tmp_path / "modisco" / "sites.bed").is_file()


def test_site_task_concepts_and_modisco_say_where_they_sit(splicing_tiny, tmp_path):
    """On a site task every method's motifs and families get a positions block (where they
    sit relative to the labelled sites); TF-MoDISco's patterns are clustered too."""
    from tests.conftest import run_cli

    result = run_cli("concepts", "--model", splicing_tiny, "--method", "sae", "--method", "modisco",
                     "--modisco-windows", "16", "--out", tmp_path, *FAST,
                     timeout=600)  # fmt: skip
    assert result.returncode == 0, result.stderr
    summary = json.loads((tmp_path / "concepts.json").read_text())
    assert summary["reference_motifs"]["kind"] == "splicing"
    for method, entry in summary["methods"].items():
        for m in entry["motifs"]:
            assert set(m["positions"]["classes"]) <= {"acceptor", "donor"}
            assert m["positions"]["classes"], (method, m["id"])
        for f in entry.get("families", {}).get("families", []):
            assert f["id"].startswith(f"{method}_f") and "positions" in f
    assert summary["methods"]["sae"]["motifs"], "the tiny splicing run's SAE exported nothing"


def test_seqlets_are_placed_as_channel_sites_are():
    """A seqlet's row, projected by the families code, lands on the seqlet's own span."""
    import numpy as np

    from sparling_genomics.export.families import project_sites
    from sparling_genomics.export.formats import ExportedMotif
    from sparling_genomics.export.modisco import seqlet_rows

    motif = ExportedMotif("modisco_p00", np.full((6, 4), 0.25), 2, channel=0, offset=3)
    seqlets = np.array([[0, 40, 6, 1], [2, 17, 6, -1]])
    rows = seqlet_rows(seqlets, motif, rf=21)
    placed = project_sites(rows, motif, 0, False, 6, 21, 0)
    assert placed.tolist() == [[0, 40, 1], [2, 17, -1]]
