"""A genome of several chromosomes, gene-free scaffolds and an organelle through every verb:
``dataset --split chromosomes``, ``train --preset tiny``, ``evaluate``, ``export``, ``scan``
(the run's own genome, no ``--fasta``), ``variants`` (a VCF on two chromosomes), ``report``.

The genome is the tiny reference (300 kb of TAIR10 chr1) cut into three 100 kb "chromosomes"
with its GFF lines carried over by offset (genes straddling a cut dropped), 20 short gene-free
scaffolds and a gene-free ``ChrC``."""

import json
import re
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import TINY_FASTA, TINY_GFF, run_cli

PIECE = 100_000
CHROMOSOMES = ["chr1", "chr2", "chr3"]
SCAFFOLDS = [f"scaffold_{i:02d}" for i in range(1, 21)]


def _roots(rows: list[list[str]]) -> dict[str, tuple[int, int]]:
    """Each feature ID -> the (start, end) of its top ancestor (its gene, or itself)."""
    spans, parent = {}, {}
    for cols in rows:
        attrs = dict(a.split("=", 1) for a in cols[8].split(";") if "=" in a)
        if "ID" in attrs:
            spans[attrs["ID"]] = (int(cols[3]), int(cols[4]))
            if "Parent" in attrs:
                parent[attrs["ID"]] = attrs["Parent"].split(",")[0]

    def top(fid: str) -> str:
        while fid in parent and parent[fid] in spans:
            fid = parent[fid]
        return fid

    return {fid: spans[top(fid)] for fid in spans}


def build_multichrom_genome(folder: Path) -> tuple[Path, Path, dict[str, int]]:
    """(FASTA, GFF3, genes per chromosome) of the cut-up tiny reference in ``folder``."""
    lines = TINY_FASTA.read_text().splitlines()
    seq = "".join(lines[1:])
    rows = [line.split("\t") for line in TINY_GFF.read_text().splitlines()
            if line and not line.startswith("#")]  # fmt: skip
    roots = _roots(rows)
    out, genes = ["##gff-version 3"], dict.fromkeys(CHROMOSOMES, 0)
    for cols in rows:
        attrs = dict(a.split("=", 1) for a in cols[8].split(";") if "=" in a)
        fid = attrs.get("ID") or attrs.get("Parent", "").split(",")[0]
        start, end = roots.get(fid, (int(cols[3]), int(cols[4])))
        piece = (start - 1) // PIECE
        if (end - 1) // PIECE != piece:
            continue  # its gene straddles a cut (or it is the whole-sequence region line)
        shift = piece * PIECE
        moved = [CHROMOSOMES[piece], *cols[1:3], str(int(cols[3]) - shift),
                 str(int(cols[4]) - shift), *cols[5:]]  # fmt: skip
        out.append("\t".join(moved))
        genes[CHROMOSOMES[piece]] += cols[2] == "gene"
    rng = np.random.default_rng(0)
    records = {name: seq[i * PIECE : (i + 1) * PIECE] for i, name in enumerate(CHROMOSOMES)}
    for name in SCAFFOLDS:
        records[name] = "".join(rng.choice(list("ACGT"), size=int(rng.integers(1500, 4000))))
    records["ChrC"] = "".join(rng.choice(list("ACGT"), size=15_000))
    fasta, gff = folder / "genome.fa", folder / "genes.gff3"
    fasta.write_text("".join(
        f">{name} piece\n" + "".join(s[i : i + 60] + "\n" for i in range(0, len(s), 60))
        for name, s in records.items()))  # fmt: skip
    gff.write_text("\n".join(out) + "\n")
    return fasta, gff, genes


@pytest.fixture(scope="module")
def multichrom(tmp_path_factory):
    folder = tmp_path_factory.mktemp("multichrom")
    fasta, gff, genes = build_multichrom_genome(folder)
    return folder, fasta, gff, genes


def _ok(*args) -> str:
    result = run_cli(*args)
    assert result.returncode == 0, (args, result.stderr[-2000:])
    return result.stdout


def test_the_cut_genome_keeps_genes_on_every_chromosome(multichrom):
    _, fasta, gff, genes = multichrom
    assert all(n >= 10 for n in genes.values()), genes
    total = sum(1 for line in TINY_GFF.read_text().splitlines() if "\tgene\t" in line)
    assert sum(genes.values()) == total - 2  # the two genes across 100 kb and 200 kb
    names = [line[1:].split()[0] for line in fasta.read_text().splitlines() if line[:1] == ">"]
    assert names == [*CHROMOSOMES, *SCAFFOLDS, "ChrC"]
    assert {line.split("\t")[0] for line in gff.read_text().splitlines()[1:]} == set(CHROMOSOMES)


def test_every_verb_on_a_genome_split_by_chromosome(multichrom):
    folder, fasta, gff, _ = multichrom
    data, run = folder / "data.h5", folder / "run"
    stdout = _ok("dataset", "--fasta", fasta, "--gff", gff, "--split", "chromosomes",
                 "--test-sequences", "chr2", "--out", data)  # fmt: skip
    line = stdout.strip().splitlines()[-2]
    # chr2 named for test; validation chosen by site count (chr1 has fewer sites than chr3).
    assert line.startswith("split: whole held-out sequences: train chr3 (")
    assert "; val chr1, by labelled-site count (" in line and "; test chr2, named (" in line
    assert "; 21 sequences skipped (no labelled site on them: scaffold_01, " in line
    summary = json.loads(stdout[: stdout.rindex("}") + 1])
    assert summary["split"]["skipped"]["sequences"] == 21
    # The first 20 names are listed, and how many more there are (ChrC).
    assert summary["split"]["skipped"]["names"] == SCAFFOLDS
    assert summary["split"]["skipped"]["names_not_shown"] == 1

    _ok("train", "--task", "splicing", "--preset", "tiny", "--dataset", data, "--out", run,
        "--no-progress", "--set", "train.core_samples=2000")  # fmt: skip
    scores = json.loads(_ok("evaluate", "--model", run, "--out", folder / "eval.json"))
    assert scores["split"] == "test" and 0 < scores["samples"] <= summary["windows"]["test"]
    _ok("export", "--model", run, "--min-sites", "1", "--jaspar-release", "JASPAR2024")

    tracks = folder / "tracks"
    _ok("scan", "--model", run, "--out", tracks, "--no-bigwig")
    scan = json.loads((tracks / "scan.json").read_text())
    assert Path(scan["fasta"]).resolve() == fasta.resolve()
    assert scan["sequences"] == 24
    bed = (tracks / "motif_sites.bed").read_text().splitlines()
    assert set(CHROMOSOMES) <= {row.split("\t")[0] for row in bed if not row.startswith("track")}

    seq = {name: "".join(fasta.read_text().split(f">{name} piece\n")[1].split(">")[0].split())
           for name in ("chr1", "chr3")}  # fmt: skip
    calls = folder / "calls.vcf"
    rows = ["##fileformat=VCFv4.2", *(f"##contig=<ID={c},length={PIECE}>" for c in seq),
            "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO"]  # fmt: skip
    for i, (chrom, pos) in enumerate([("chr1", 4000), ("chr1", 50_000), ("chr3", 30_000)]):
        ref = seq[chrom][pos - 1].upper()
        rows.append(f"{chrom}\t{pos}\tv{i}\t{ref}\t{'C' if ref != 'C' else 'G'}\t.\t.\t.")
    calls.write_text("\n".join(rows) + "\n")
    effects = folder / "effects"
    _ok("variants", "--model", run, "--vcf", calls, "--out", effects)
    counts = json.loads((effects / "variants.json").read_text())["counts"]
    assert counts["records"] == 3 and counts["scored"] == 3
    table = (effects / "variant_scores.tsv").read_text().splitlines()
    assert {row.split("\t")[0] for row in table[1:]} == {"chr1", "chr3"}

    report = folder / "report.html"
    _ok("report", "--model", run, "--scan", tracks, "--out", report)
    text = report.read_text()
    assert re.search(r"Split of <code>data\.h5</code>: whole held-out sequences: train chr3 ",
                     text), text[:2000]  # fmt: skip
