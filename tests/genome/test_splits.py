"""The train / validation / test split (genome/splits.py): per-sequence blocks or whole held-out
sequences, named or chosen, stated in the summary; genomes with gene-free scaffolds."""

import json
import random

import h5py
import numpy as np
import pytest

from sparling_genomics.errors import InputError
from sparling_genomics.genome.dataset import DatasetSpec, SiteDataset, build_dataset
from sparling_genomics.genome.splits import (
    SplitRule,
    block_of,
    choose_held_out,
    describe_split,
    whole_sequence,
)


def _dna(length: int, seed: int) -> str:
    return "".join(np.random.default_rng(seed).choice(list("ACGT"), size=length))


def _gene(seqid: str, n: int, strand: str = "+", at: int = 1000) -> list[str]:
    """One two-intron protein-coding gene on ``seqid`` (1-based GFF lines)."""
    g, t = f"g{seqid}_{n}", f"t{seqid}_{n}"
    return [
        f"{seqid}\t.\tgene\t{at + 1}\t{at + 3000}\t.\t{strand}\t.\tID={g};biotype=protein_coding",
        f"{seqid}\t.\tmRNA\t{at + 1}\t{at + 3000}\t.\t{strand}\t.\tID={t};Parent={g}",
        f"{seqid}\t.\texon\t{at + 1}\t{at + 500}\t.\t{strand}\t.\tParent={t}",
        f"{seqid}\t.\texon\t{at + 1001}\t{at + 1500}\t.\t{strand}\t.\tParent={t}",
        f"{seqid}\t.\texon\t{at + 2001}\t{at + 3000}\t.\t{strand}\t.\tParent={t}",
    ]


def _genome(folder, genes: dict[str, int], scaffolds: int = 5, organelle: bool = True):
    """A FASTA of chromosomes ``chrN`` with ``genes[chrN]`` genes each (8 kb apart), plus
    gene-free scaffolds and a ``ChrC``; and its GFF3. Returns (fasta, gff)."""
    records, lines = {}, ["##gff-version 3"]
    for i, (seqid, count) in enumerate(genes.items()):
        records[seqid] = _dna(8000 * count + 2000, i)
        for n in range(count):
            lines += _gene(seqid, n, "+-"[n % 2], at=1000 + 8000 * n)
    for i in range(scaffolds):
        records[f"scaffold_{i + 1}"] = _dna(1500, 100 + i)
    if organelle:
        records["ChrC"] = _dna(5000, 99)
    fasta, gff = folder / "genome.fa", folder / "genes.gff3"
    fasta.write_text("".join(f">{k}\n{v}\n" for k, v in records.items()))
    gff.write_text("\n".join(lines) + "\n")
    return fasta, gff


def _windows_by_seq(path):
    data = SiteDataset(path)
    try:
        coords = data.windows(np.arange(len(data.split)))
        seqids = [data.seqids[i] for i in coords["seqid"]]
        return {s: set(data.split[np.array(seqids) == s].tolist()) for s in set(seqids)}, data
    finally:
        data.close()


# --- choosing whole sequences -------------------------------------------------------------------


def test_choice_comes_near_the_fractions_by_labelled_sites():
    weights = {"chr1": 30, "chr2": 15, "chr3": 20, "chr4": 15, "chr5": 20}
    chosen = choose_held_out(weights, 0.1, 0.2)
    assert chosen == {"chr1": 0, "chr2": 1, "chr3": 2, "chr4": 0, "chr5": 0}


def test_choice_is_deterministic_whatever_the_order():
    rng = random.Random(0)
    weights = {f"s{i}": rng.randint(1, 500) for i in range(300)}
    first = choose_held_out(weights, 0.1, 0.2)
    items = list(weights.items())
    rng.shuffle(items)
    assert choose_held_out(dict(items), 0.1, 0.2) == first
    total = sum(weights.values())
    share = [sum(w for s, w in weights.items() if first[s] == k) / total for k in range(3)]
    assert share[1] == pytest.approx(0.1, abs=0.01) and share[2] == pytest.approx(0.2, abs=0.01)


def test_every_held_out_split_gets_a_sequence_and_training_keeps_one():
    assert sorted(choose_held_out({"a": 10, "b": 10, "c": 10}, 0.1, 0.2).values()) == [0, 1, 2]
    assert sorted(choose_held_out({"a": 10, "b": 10}, 0.0, 0.2).values()) == [0, 2]
    # A named split is the user's; the other is chosen from the rest.
    assert choose_held_out({"a": 50, "b": 10, "c": 40}, 0.1, 0.2, {"a": 2}) == {
        "a": 2,
        "b": 1,
        "c": 0,
    }


def test_whole_sequence_bounds_put_every_position_in_its_split():
    for split in range(3):
        bounds = whole_sequence(split, 1000)
        assert {block_of(p, bounds) for p in (0, 1, 500, 999)} == {split}


@pytest.mark.parametrize(
    "rule, words",
    [
        (SplitRule(mode="halves"), "split must be one of blocks, chromosomes, got 'halves'"),
        (SplitRule(test_sequences=["chr1"]), "give them with --split chromosomes"),
        (
            SplitRule("chromosomes", test_sequences=["chr1"], val_sequences=["chr1"]),
            "'chr1' is named both as a test and as a validation sequence",
        ),
        (SplitRule(val_fraction=0.5, test_fraction=0.5), "must lie in [0, 1)"),
    ],
)
def test_rules_that_cannot_be_built(rule, words):
    with pytest.raises(InputError) as info:
        rule.check()
    assert words in str(info.value)


# --- datasets in both modes ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def genome(tmp_path_factory):
    genes = {"chr1": 4, "chr2": 2, "chr3": 1, "chr4": 3, "chr5": 2}
    return _genome(tmp_path_factory.mktemp("splits"), genes)


def test_blocks_mode_states_the_split_and_skips_gene_free_sequences(genome, tmp_path):
    fasta, gff = genome
    summary = build_dataset(tmp_path / "d.h5", fasta, annotation=gff)
    block = summary["split"]
    assert block["mode"] == "blocks"
    assert block["train"]["sequences"] == 5 and block["train"]["names"][0] == "chr1"
    assert block["skipped"] == {
        "sequences": 6,
        "names": ["scaffold_1", "scaffold_2", "scaffold_3", "scaffold_4", "scaffold_5", "ChrC"],
        "why": "no labelled site on them",
    }
    assert {k: block[k]["windows"] for k in ("train", "val", "test")} == summary["windows"]
    sites = sum(summary["sites"].values())
    assert sum(block[k]["sites"] for k in ("train", "val", "test")) == sites
    text = describe_split(summary)
    assert text.startswith("per-sequence blocks (validation 10%, test 20% of each sequence)")
    assert "6 sequences skipped (no labelled site on them: scaffold_1, " in text


def test_chromosome_mode_named_holds_out_whole_sequences(genome, tmp_path):
    fasta, gff = genome
    out = tmp_path / "d.h5"
    spec = DatasetSpec(split="chromosomes", test_sequences=["chr2"], val_sequences=["chr3"])
    summary = build_dataset(out, fasta, annotation=gff, spec=spec)
    by_seq, data = _windows_by_seq(out)
    assert by_seq == {"chr1": {0}, "chr2": {2}, "chr3": {1}, "chr4": {0}, "chr5": {0}}
    assert data.boundaries["chr2"] == [0, 0] and data.boundaries["chr3"] == [0, 10000]
    assert data.boundaries["chr1"] == [34000, 34000]
    block = summary["split"]
    assert block["test"]["names"] == ["chr2"] and block["val"]["names"] == ["chr3"]
    assert block["train"]["names"] == ["chr1", "chr4", "chr5"]
    assert block["held_out"] == {"test": "named", "val": "named"}
    assert block["skipped"]["sequences"] == 6
    with h5py.File(out) as h5:
        assert json.loads(h5.attrs["summary"])["split"] == block
        assert json.loads(h5.attrs["spec"])["test_sequences"] == ["chr2"]
    text = describe_split(summary)
    assert text.startswith("whole held-out sequences: train chr1, chr4, chr5 (")
    assert "; test chr2, named (" in text


def test_chromosome_mode_chosen_is_deterministic(genome, tmp_path):
    fasta, gff = genome
    spec = DatasetSpec(split="chromosomes")
    first = build_dataset(tmp_path / "a.h5", fasta, annotation=gff, spec=spec)["split"]
    second = build_dataset(tmp_path / "b.h5", fasta, annotation=gff, spec=spec)["split"]
    assert first == second
    assert first["held_out"] == {"test": "by labelled-site count", "val": "by labelled-site count"}
    # 12 genes of 4 sites: test wants 20% (9.6 sites), validation 10% (4.8).
    assert first["test"]["names"] == ["chr2"] and first["test"]["sites"] == 8
    assert first["val"]["names"] == ["chr3"] and first["val"]["sites"] == 4
    with h5py.File(tmp_path / "a.h5") as h5, h5py.File(tmp_path / "b.h5") as h5b:
        assert np.array_equal(h5["split"][:], h5b["split"][:])
        assert h5.attrs["split"] == h5b.attrs["split"]


def test_chromosome_mode_with_a_bed_source(genome, tmp_path):
    fasta, _ = genome
    bed = tmp_path / "sites.bed"
    bed.write_text("".join(f"chr{i}\t{1000 * i}\t{1000 * i + 1}\tsite\t0\t+\n" for i in (1, 2, 3)))
    spec = DatasetSpec(split="chromosomes", test_sequences=["chr1"])
    summary = build_dataset(tmp_path / "d.h5", fasta, bed=bed, spec=spec)
    assert summary["split"]["test"]["names"] == ["chr1"]
    assert summary["split"]["test"]["sites"] == 1
    assert len(summary["split"]["val"]["names"]) == 1
    assert summary["split"]["skipped"]["sequences"] == 8


def _message(**kwargs) -> str:
    with pytest.raises(InputError) as info:
        build_dataset(**kwargs)
    text = str(info.value)
    assert "\n" not in text
    return text


def test_a_named_sequence_that_does_not_exist(genome, tmp_path):
    fasta, gff = genome
    spec = DatasetSpec(split="chromosomes", test_sequences=["chr9"])
    text = _message(out=tmp_path / "d.h5", fasta=fasta, annotation=gff, spec=spec)
    assert text.startswith(f"--test-sequences: 'chr9' is not a sequence of {fasta}")
    assert "(did you mean 'chr" in text and "it has 11: chr1, chr2," in text
    assert not (tmp_path / "d.h5").exists()


def test_a_named_sequence_without_genes(genome, tmp_path):
    fasta, gff = genome
    spec = DatasetSpec(split="chromosomes", val_sequences=["ChrC"])
    text = _message(out=tmp_path / "d.h5", fasta=fasta, annotation=gff, spec=spec)
    assert text.startswith(f"--val-sequences: ChrC carries no labelled site in {gff}")


def test_too_few_labelled_sequences_for_whole_sequence_held_out(tmp_path):
    fasta, gff = _genome(tmp_path, {"chr1": 2, "chr2": 1})
    spec = DatasetSpec(split="chromosomes")
    text = _message(out=tmp_path / "d.h5", fasta=fasta, annotation=gff, spec=spec)
    assert f"{fasta}: --split chromosomes needs 3 sequences with labelled sites" in text
    assert "it has 2 (chr1, chr2); use --split blocks" in text
    summary = build_dataset(tmp_path / "d.h5", fasta, annotation=gff,
                            spec=DatasetSpec(split="chromosomes", val_fraction=0))  # fmt: skip
    assert summary["split"]["val"]["windows"] == 0 and summary["split"]["test"]["sequences"] == 1
    assert summary["split"]["held_out"]["val"] == "fraction 0"
    assert "; val none (fraction 0) (0 windows, 0 sites); test " in describe_split(summary)


def test_ten_thousand_scaffolds_and_no_gene_on_them(tmp_path):
    fasta = tmp_path / "scaffolds.fa"
    seq = _dna(100, 0)
    fasta.write_text("".join(f">scaffold_{i}\n{seq}\n" for i in range(10_000)))
    gff = tmp_path / "repeats.gff3"
    gff.write_text("".join(f"scaffold_{i}\t.\trepeat_region\t1\t50\t.\t+\t.\tID=r{i}\n"
                           for i in range(0, 10_000, 10)))  # fmt: skip
    text = _message(out=tmp_path / "d.h5", fasta=fasta, annotation=gff)
    assert text.startswith(
        f"{gff}: no protein-coding transcripts with exons on any of the 10,000 sequences of "
        f"{fasta} (scaffold_0, "
    )
    assert "other features: repeat_region 1,000" in text
    # A GFF of another assembly, its lines skipped on request: the same, with the count.
    other = tmp_path / "other.gff3"
    other.write_text("\n".join(_gene("chr1", 0) + _gene("chr2", 0)) + "\n")
    text = _message(out=tmp_path / "d.h5", fasta=fasta, annotation=other,
                    skip_unknown_sequences=True)  # fmt: skip
    assert text.startswith(f"{other}: no protein-coding transcripts with exons on any of the")
    assert "10 lines on sequences the FASTA lacks skipped (chr1, chr2)" in text
