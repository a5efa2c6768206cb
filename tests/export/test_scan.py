"""Genome scanning: chunking is exact, both strands, genome coordinates, N runs."""

import numpy as np
import pytest
import torch

from sparling_genomics.export.scan import scan_codes
from sparling_genomics.genome.sequence import N_CODE, one_hot, reverse_complement_codes
from sparling_genomics.models.motif import MotifModel1D
from sparling_genomics.models.sparling import SparlingModel
from sparling_genomics.sparsity.layer import SpatialSparsity


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    g = MotifModel1D(4, hidden=8, first_kernel=9, residual_units=1, unit_kernel=3,
                     reverse_complement=False)  # fmt: skip
    sparse = SpatialSparsity(4, 0.005, peak_window=3, peak_below=0.01)
    m = SparlingModel(g, sparse, torch.nn.Identity())
    # Calibrate thresholds and BN statistics on random DNA, then freeze (eval mode).
    for module in g.modules():
        if isinstance(module, torch.nn.BatchNorm2d):
            module.momentum = None  # cumulative average: converged after a few batches
    m.train()
    rng = np.random.default_rng(0)
    for _ in range(60):
        m.motifs(torch.from_numpy(one_hot(rng.integers(0, 4, (8, 2000)).astype(np.uint8))))
    return m.eval()


def _all(model, codes, chunk):
    parts = list(scan_codes(model, "s", codes, chunk=chunk))
    pos = np.concatenate([p.position for p in parts])
    strand = np.concatenate([p.strand for p in parts])
    chan = np.concatenate([p.channel for p in parts])
    order = np.lexsort((chan, strand, pos))
    return pos[order], strand[order], chan[order]


def test_chunked_scan_equals_whole_sequence_scan(model):
    codes = np.random.default_rng(1).integers(0, 4, 5000).astype(np.uint8)
    whole = _all(model, codes, 10_000)
    for chunk in (333, 1000):
        got = _all(model, codes, chunk)
        assert all(np.array_equal(a, b) for a, b in zip(whole, got))
    assert len(whole[0]) > 0 and set(whole[1]) == {1, -1}


def test_plus_strand_sites_are_the_motif_layer_and_minus_is_the_reverse_complement(model):
    codes = np.random.default_rng(2).integers(0, 4, 3000).astype(np.uint8)
    pos, strand, chan = _all(model, codes, 10_000)
    m = model.motifs(torch.from_numpy(one_hot(codes)[None])).detach().numpy()[0]
    c, p = np.nonzero(m > 0)
    assert set(zip(p.tolist(), c.tolist())) == set(zip(pos[strand == 1].tolist(),
                                                       chan[strand == 1].tolist()))  # fmt: skip
    rc = reverse_complement_codes(codes)
    m_rc = model.motifs(torch.from_numpy(one_hot(rc)[None])).detach().numpy()[0]
    c, p = np.nonzero(m_rc > 0)
    mapped = set(zip((len(codes) - 1 - p).tolist(), c.tolist()))
    assert mapped == set(zip(pos[strand == -1].tolist(), chan[strand == -1].tolist()))


def test_n_runs_give_no_sites(model):
    codes = np.random.default_rng(3).integers(0, 4, 3000).astype(np.uint8)
    codes[1000:2000] = N_CODE
    pos, _, _ = _all(model, codes, 700)
    assert not ((pos >= 1000) & (pos < 2000)).any()


def test_sites_are_in_sequence_coordinates_not_chunk_or_window_relative(model):
    """The same bases 1,000 nt further into a sequence give the same sites 1,000 nt later."""
    rng = np.random.default_rng(4)
    core = rng.integers(0, 4, 4000).astype(np.uint8)
    shifted = np.concatenate([rng.integers(0, 4, 1000).astype(np.uint8), core])
    halo = 40  # > the model's receptive field / 2 + peak window: edges differ, the rest not
    a = _all(model, core, 700)
    b = _all(model, shifted, 700)

    def inner(sites, lo, hi):
        pos, strand, chan = sites
        keep = (pos >= lo) & (pos < hi)
        return set(zip(pos[keep].tolist(), strand[keep].tolist(), chan[keep].tolist()))

    expected = {(p + 1000, s, c) for p, s, c in inner(a, halo, 4000 - halo)}
    assert expected and expected == inner(b, 1000 + halo, 5000 - halo)


@pytest.fixture(scope="module")
def core_model():
    """Competing learned channels plus a two-class site core, calibrated on random DNA."""
    from sparling_genomics.models.core import SiteCore

    torch.manual_seed(1)
    g = MotifModel1D(4, hidden=8, first_kernel=9, residual_units=1, unit_kernel=3,
                     reverse_complement=False)  # fmt: skip
    sparse = SpatialSparsity(4, 0.005, peak_window=3, peak_below=0.01, compete_window=2)
    core = SiteCore(["acceptor", "donor"], [(20, 2), (2, 6)], context=0, hidden=4, layers=2)
    layers = [SpatialSparsity(1, 0.003, peak_window=3, peak_below=0.01) for _ in range(2)]
    m = SparlingModel(g, sparse, torch.nn.Identity(), core, layers)
    for module in g.modules():
        if isinstance(module, torch.nn.BatchNorm2d):
            module.momentum = None
    m.train()
    rng = np.random.default_rng(0)
    for _ in range(60):
        m.motifs(torch.from_numpy(one_hot(rng.integers(0, 4, (8, 2000)).astype(np.uint8))))
    return m.eval()


def test_scan_of_competing_and_core_channels_is_the_motif_layer_in_any_chunking(core_model):
    assert core_model.sparse.competing()
    codes = np.random.default_rng(3).integers(0, 4, 4000).astype(np.uint8)
    pos, strand, chan = _all(core_model, codes, 10_000)
    m = core_model.motifs(torch.from_numpy(one_hot(codes)[None])).detach().numpy()[0]
    c, p = np.nonzero(m > 0)
    assert set(c.tolist()) & {0, 1, 2, 3} and set(c.tolist()) & {4, 5}  # learned and core fire
    # Away from the ends (where g's zero padding of hidden layers differs from a scan's Ns).
    inner = (p >= 50) & (p < len(codes) - 50)
    plus = (strand == 1) & (pos >= 50) & (pos < len(codes) - 50)
    assert set(zip(p[inner].tolist(), c[inner].tolist())) == set(
        zip(pos[plus].tolist(), chan[plus].tolist())
    )
    for chunk in (300, 1111):
        got = _all(core_model, codes, chunk)
        assert all(np.array_equal(a, b) for a, b in zip((pos, strand, chan), got))


def test_strand_rule_gives_a_palindrome_one_site_and_forward_agrees():
    """An exact palindrome read by a model whose detections sit off the site's centre: two
    sites (one per strand) without the strand rule, one with it, as in the forward pass."""
    from sparling_genomics.export.scan import _strand_rule

    sites = (np.array([0, 0, 1]), np.array([10, 40, 10]), np.array([1.0, 2.0, 3.0], np.float32))
    minus = (np.array([0, 0]), np.array([18, 70]), np.array([1.5, 0.5], np.float32))
    plus, rev = _strand_rule([sites, minus], learned=1, width=100, window=10)
    # channel 0: 10 (+) loses to 18 (-), 40 (+) stands alone, 70 (-) stands alone;
    # channel 1 is a core channel: kept as is.
    assert sorted(zip(plus[0].tolist(), plus[1].tolist())) == [(0, 40), (1, 10)]
    assert rev[1].tolist() == [18, 70]


def test_plan_pieces_cuts_at_chunk_multiples_covers_each_base_once_and_balances():
    from sparling_genomics.export.scan import plan_pieces

    lengths = {"chr1": 10_500, "chr2": 4_200, **{f"s{i}": 90 for i in range(30)}, "chr3": 7_000}
    for parts in (1, 2, 3, 5, 50):
        jobs = plan_pieces(lengths, parts, chunk=1000)
        assert len(jobs) == parts
        covered: dict[str, list[tuple[int, int]]] = {}
        for job in jobs:
            for piece in job:
                assert piece.start % 1000 == 0 and piece.start < piece.end
                covered.setdefault(piece.seqid, []).append((piece.start, piece.end))
        assert list(covered) == list(lengths)  # FASTA order
        for seqid, spans in covered.items():
            assert spans[0][0] == 0 and spans[-1][1] == lengths[seqid]
            assert all(a[1] == b[0] for a, b in zip(spans, spans[1:]))
        if parts <= 5:
            sizes = [sum(p.end - p.start for p in job) for job in jobs]
            assert max(sizes) - min(sizes) <= 2 * 1000 + 90, sizes


def test_pieces_scanned_apart_give_the_whole_scan(model, tmp_path):
    from sparling_genomics.export.scan import join_pieces, plan_pieces, scan_genome, scan_pieces
    from sparling_genomics.genome.fasta import Genome

    rng = np.random.default_rng(3)
    seqs = {"long": 7_300, **{f"c{i}": int(rng.integers(50, 400)) for i in range(12)}, "mid": 2_100}
    letters = np.array(list("ACGT"))
    fasta = tmp_path / "g.fa"
    fasta.write_text("".join(f">{s}\n{''.join(letters[rng.integers(0, 4, n)])}\n"
                             for s, n in seqs.items()))  # fmt: skip
    genome = Genome(fasta)
    whole = scan_genome(model, genome, chunk=1000)
    for parts in (2, 3, 7):
        tables = []
        for job in plan_pieces(genome.lengths, parts, chunk=1000):
            seen = []  # ``seen``: each piece's bases once, as read for the scan (packed or cut)
            tables += scan_pieces(model, genome, job, chunk=1000,
                                  seen=lambda piece, codes, into=seen: into.append((piece, codes)))
            assert sorted((p for p, _ in seen), key=job.index) == job
            for piece, codes in seen:
                assert np.array_equal(codes, genome.fetch(piece.seqid, piece.start, piece.end))
        joined = join_pieces(tables)
        assert [t.seqid for t in joined] == [t.seqid for t in whole]
        for a, b in zip(whole, joined):
            for field in ("position", "channel", "strand", "score"):
                assert np.array_equal(getattr(a, field), getattr(b, field)), (parts, a.seqid)


def test_bfloat16_scan_keeps_nearly_every_site_and_float32_is_the_default(core_model):
    codes = np.random.default_rng(5).integers(0, 4, 6000).astype(np.uint8)
    exact = _all(core_model, codes, 2000)
    fast = list(scan_codes(core_model, "s", codes, chunk=2000, precision="bfloat16"))
    fast_sites = set(zip(*(np.concatenate([getattr(p, k) for p in fast]).tolist()
                           for k in ("position", "strand", "channel"))))  # fmt: skip
    exact_sites = set(zip(*(a.tolist() for a in exact)))
    assert len(exact_sites) > 20
    assert len(fast_sites & exact_sites) / len(fast_sites | exact_sites) > 0.8
    assert exact_sites == set(zip(*(a.tolist() for a in _all(core_model, codes, 777))))
    with pytest.raises(ValueError, match="precision 'float16'"):
        next(scan_codes(core_model, "s", codes, precision="float16"))


def test_core_reads_only_each_class_window(core_model):
    """A base outside a class's own window never changes that class's logit."""
    core = core_model.core
    codes = np.random.default_rng(6).integers(0, 4, 200).astype(np.uint8)
    x = torch.from_numpy(one_hot(codes)[None])
    base = core(x)
    codes[100] = (codes[100] + 1) % 4
    changed = torch.from_numpy(one_hot(codes)[None])
    delta = (core(changed) - base)[0].abs() > 0
    for i, (up, down) in enumerate(core.windows):
        moved = set(np.nonzero(delta[i].numpy())[0].tolist())
        # Position p reads bases p - up .. p + down, so base 100 moves p in 100 - down .. 100 + up.
        assert moved and moved <= set(range(100 - down, 100 + up + 1))
