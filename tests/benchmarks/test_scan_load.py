"""Scanning pieces separately gives the whole scan's sites (the load benchmark's check);
short contigs packed into one model call give the sites each gives alone."""

from benchmarks.scan_load import (
    _piece_sites_contigs,
    _piece_sites_long,
    _whole_sites,
    _write_fasta,
    compare_sites,
    make_contigs,
)
from sparling_genomics.genome.fasta import Genome
from sparling_genomics.train.loading import load_run
from tests.conftest import TINY_FASTA


def test_many_contigs_and_pieces_of_one_sequence_give_identical_sites(planted_tiny, tmp_path):
    loaded = load_run(planted_tiny.run, device="cpu")
    model, device = loaded.model, loaded.device
    tiny = Genome(TINY_FASTA)
    chromosome = tiny.sequence(next(iter(tiny.lengths)))[:120_000]
    contigs = make_contigs(chromosome, 60)
    assert len(contigs) == 60 and all(300 <= len(c) <= 3000 for c in contigs.values())
    fasta = tmp_path / "contigs.fa"
    _write_fasta(fasta, contigs)
    genome = Genome(fasta)
    whole = _whole_sites(model, genome, device)
    assert len(whole) > 0
    check = compare_sites(whole, _piece_sites_contigs(model, genome, device))
    assert check["identical"], check

    long_fasta = tmp_path / "long.fa"
    _write_fasta(long_fasta, {"one": chromosome})
    long = Genome(long_fasta)
    whole = _whole_sites(model, long, device)
    pieces = _piece_sites_long(model, long, device, pieces=4, margin=2_000)
    assert len(whole) > 0 and compare_sites(whole, pieces)["identical"]
    # The check can fail: a margin narrower than the receptive field changes sites at cuts.
    cut = _piece_sites_long(model, long, device, pieces=40, margin=0)
    assert not compare_sites(whole, cut)["identical"]
