"""`scan`'s genome: the one the run was trained on, never a bundled default."""

import json

from tests.conftest import TINY_FASTA, TINY_GFF, train_tiny_splicing_run

OTHER = "otherchr1"


def _relabelled(folder):
    """The tiny reference with its sequence renamed: another genome, as far as names go."""
    seqid = TINY_FASTA.read_text().split(None, 1)[0][1:]
    fasta, gff = folder / "other.fa", folder / "other.gff3"
    fasta.write_text(TINY_FASTA.read_text().replace(f">{seqid}", f">{OTHER}", 1))
    lines = [OTHER + line[len(seqid):] if line.startswith(seqid + "\t") else line
             for line in TINY_GFF.read_text().splitlines()]  # fmt: skip
    gff.write_text("\n".join(lines) + "\n")
    return fasta, gff


def test_scan_without_fasta_scans_the_genome_the_run_was_trained_on(cli, tmp_path):
    from sparling_genomics.genome.dataset import build_dataset

    fasta, gff = _relabelled(tmp_path)
    dataset = tmp_path / "other.h5"
    build_dataset(dataset, fasta, annotation=gff)
    run = train_tiny_splicing_run(tmp_path / "run", dataset)
    out = tmp_path / "tracks"
    result = cli("scan", "--model", run, "--out", out, "--no-bigwig")
    assert result.returncode == 0, result.stderr
    summary = json.loads((out / "scan.json").read_text())
    assert summary["fasta"] == str(fasta)
    chroms = {line.split("\t")[0] for line in (out / "motif_sites.bed").read_text().splitlines()
              if line and not line.startswith(("track", "#"))}  # fmt: skip
    assert chroms == {OTHER}


def test_scan_of_a_run_without_a_genome_asks_for_one(cli, planted_tiny, tmp_path):
    result = cli("scan", "--model", planted_tiny.run, "--out", tmp_path / "t")
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "records no genome" in lines[0] and "--fasta" in lines[0], lines
    assert not (tmp_path / "t").exists()
