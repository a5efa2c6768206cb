"""Property-based tests of the DNA encoders, window tiling, block split and BED datasets.

``test_sequence.py`` already covers reverse-complement-twice and encode/decode of strings;
these add one-hot decoding, letter classes, the tiling helpers and a BED-built dataset whose
windows (both strands) are checked base by base against the genome and the BED.
"""

import tempfile
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from sparling_genomics.genome.dataset import (
    DatasetSpec,
    SiteDataset,
    _block,
    _tiles,
    block_boundaries,
    build_dataset,
)
from sparling_genomics.genome.intervals import merge_intervals
from sparling_genomics.genome.sequence import N_CODE, decode, encode, one_hot

_COMPLEMENT = np.array([3, 2, 1, 0, N_CODE])
codes_1d = st.lists(st.integers(0, 4), max_size=200).map(lambda v: np.array(v, dtype=np.uint8))


def _from_one_hot(x: np.ndarray) -> np.ndarray:
    """Codes of a one-hot ``(..., 4, L)`` array: argmax over channels, all-zero -> N."""
    return np.where(x.sum(-2) == 0, N_CODE, x.argmax(-2))


# --- encoders ---------------------------------------------------------------------------------


@given(codes_1d)
def test_one_hot_then_argmax_gives_codes_back(codes):
    """one_hot is (4, L), has at most one 1 per column, and argmax (zeros -> N) inverts it."""
    x = one_hot(codes)
    assert x.shape == (4, len(codes))
    assert set(np.unique(x)) <= {0.0, 1.0}
    assert np.array_equal(x.sum(0), (codes != N_CODE).astype(x.dtype))
    assert np.array_equal(_from_one_hot(x), codes)


@given(st.integers(1, 4), st.integers(0, 50), st.data())
def test_one_hot_of_a_batch_is_the_stack_of_rows(n, length, data):
    """one_hot of an (n, L) batch is (n, 4, L), row by row the same as one_hot of each row."""
    rows = [data.draw(st.lists(st.integers(0, 4), min_size=length, max_size=length))
            for _ in range(n)]  # fmt: skip
    codes = np.array(rows, dtype=np.uint8).reshape(n, length)
    x = one_hot(codes, dtype=np.uint8)
    assert x.shape == (n, 4, length) and x.dtype == np.uint8
    for i in range(n):
        assert np.array_equal(x[i], one_hot(codes[i], dtype=np.uint8))
    assert np.array_equal(_from_one_hot(x), codes)


@given(codes_1d)
def test_decode_then_encode_gives_codes_back(codes):
    """decode writes one upper-case ACGTN letter per code, and encode reads the codes back."""
    text = decode(codes)
    assert len(text) == len(codes) and set(text) <= set("ACGTN")
    assert np.array_equal(encode(text), codes)
    assert np.array_equal(encode(text.encode("ascii")), codes)  # bytes as well as str


@given(st.text(alphabet="ACGT", max_size=100))
def test_lower_case_bases_encode_as_upper_case(seq):
    """Soft-masked (lower-case) acgt encode exactly as ACGT, never as N."""
    assert np.array_equal(encode(seq.lower()), encode(seq))
    assert not (encode(seq.lower()) == N_CODE).any()


@given(st.text(alphabet="RYKMSWBDHVNUrykmswbdhvnu-.X*", max_size=100))
def test_ambiguity_codes_and_other_letters_encode_as_n(seq):
    """IUPAC ambiguity codes (either case), N, U, gaps and junk all become N_CODE."""
    assert np.array_equal(encode(seq), np.full(len(seq), N_CODE, dtype=np.uint8))
    assert not one_hot(encode(seq)).any()


@given(st.text(alphabet="ACGTacgtRYKMSWBDHVNn", max_size=100))
def test_mixed_text_encodes_letter_by_letter(seq):
    """encode maps each letter on its own: ACGT (any case) to 0-3, everything else to 4."""
    expect = ["ACGT".index(c.upper()) if c.upper() in "ACGT" else N_CODE for c in seq]
    assert encode(seq).tolist() == expect


# --- tiling and split helpers ----------------------------------------------------------------


@given(st.integers(0, 10_000), st.integers(0, 3000), st.integers(1, 500))
def test_tiles_cover_the_span_without_gap_or_overlap(s, length, window):
    """Tiles [t, t + window) start at the span's start, abut one another, and the last one
    reaches (or passes) the span's end: ceil(length / window) tiles, none outside the span."""
    e = s + length
    tiles = _tiles((s, e), window)
    assert len(tiles) == -(-length // window)
    if not tiles:
        return
    assert tiles[0] == s
    assert all(b - a == window for a, b in zip(tiles, tiles[1:]))  # no gap, no overlap
    assert tiles[-1] < e <= tiles[-1] + window  # covers the end, no tile beyond it
    covered = np.zeros(length + window, dtype=int)
    for t in tiles:
        covered[t - s : t - s + window] += 1
    assert (covered[:length] == 1).all()


intervals = st.lists(
    st.tuples(st.integers(0, 2000), st.integers(1, 400)).map(lambda p: (p[0], p[0] + p[1])),
    max_size=12,
)


@given(intervals)
def test_merge_gives_sorted_disjoint_intervals_covering_the_same_bases(rows):
    """merge_intervals: sorted, non-overlapping (touching allowed) intervals whose union is the
    input's."""
    merged = merge_intervals(rows)
    assert all(s < e for s, e in merged)
    assert all(e0 <= s1 for (_, e0), (s1, _) in zip(merged, merged[1:]))
    before, after = np.zeros(2500, bool), np.zeros(2500, bool)
    for s, e in rows:
        before[s:e] = True
    for s, e in merged:
        after[s:e] = True
    assert np.array_equal(before, after)


@given(
    st.integers(1, 3000),
    intervals,
    st.floats(0, 0.45),
    st.floats(0, 0.45),
)
def test_block_boundaries_never_cut_a_cluster(length, rows, val, test):
    """Boundaries [val_start, test_start]: ordered, inside [0, length], never strictly inside a
    (merged) cluster, and moved from round(length * fraction) only when that cut a cluster,
    then to the cluster's nearer end."""
    clusters = [(s, min(e, length)) for s, e in merge_intervals(rows) if s < length]
    bounds = block_boundaries(length, clusters, val, test)
    assert len(bounds) == 2 and 0 <= bounds[0] <= bounds[1] <= length
    for b in bounds:
        assert not any(s < b < e for s, e in clusters)
    allowed = []
    for frac in (1.0 - val - test, 1.0 - test):
        b0 = int(round(length * frac))
        cut = [(s, e) for s, e in clusters if s < b0 < e]
        if cut:
            s, e = cut[0]
            allowed.append({end for end in (s, e) if abs(end - b0) == min(b0 - s, e - b0)})
        else:
            allowed.append({b0})
    assert bounds[0] in allowed[0]
    assert bounds[1] in {max(b, bounds[0]) for b in allowed[1]}  # never before val_start
    # Positions map to blocks train | val | test in order.
    blocks = [_block(p, bounds) for p in range(length)]
    assert blocks == sorted(blocks)


# --- BED-built dataset: both strands, base by base -------------------------------------------

CLASSES = ("acceptor", "donor", "tss")


@st.composite
def bed_genomes(draw):
    """(sequences, sites, spec): 1-2 random sequences (ACGT with soft-masked stretches and N
    runs), single-base BED sites on '+', '-' or '.', and a small window and context."""
    n_seqs = draw(st.integers(1, 2))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    seqs = {}
    for k in range(n_seqs):
        length = draw(st.integers(1500, 3000))
        letters = rng.choice(list("ACGT"), size=length)
        lo = draw(st.integers(0, length - 1))
        letters[lo : lo + draw(st.integers(0, 60))] = "N"
        lo = draw(st.integers(0, length - 1))
        soft = slice(lo, lo + draw(st.integers(0, 200)))
        letters[soft] = np.char.lower(letters[soft])
        seqs[f"chr{k + 1}"] = "".join(letters)
    names = list(seqs)
    sites = []
    for _ in range(draw(st.integers(1, 25))):
        seqid = draw(st.sampled_from(names))
        sites.append(
            (
                seqid,
                draw(st.integers(0, len(seqs[seqid]) - 1)),
                draw(st.sampled_from("+-.")),
                draw(st.sampled_from(CLASSES)),
            )
        )
    spec = DatasetSpec(
        window=draw(st.integers(20, 400)),
        context=2 * draw(st.integers(0, 60)),
        background_ratio=draw(st.sampled_from([0.0, 0.5, 1.0])),
        seed=draw(st.integers(0, 100)),
    )
    return seqs, sites, spec


def _write_inputs(folder: Path, seqs: dict[str, str], sites) -> tuple[Path, Path]:
    fasta, bed = folder / "genome.fa", folder / "sites.bed"
    with open(fasta, "w") as handle:
        for name, seq in seqs.items():
            handle.write(f">{name} test sequence\n")
            handle.writelines(seq[i : i + 60] + "\n" for i in range(0, len(seq), 60))
    with open(bed, "w") as handle:
        handle.writelines(f"{c}\t{p}\t{p + 1}\t{n}\t0\t{s}\n" for c, p, s, n in sites)
    return fasta, bed


@settings(max_examples=15, deadline=None)
@given(bed_genomes())
def test_bed_dataset_windows_match_genome_and_sites_on_both_strands(case):
    """Every window's x is the genome around it (context/2 flanks, N beyond the ends), reverse
    complemented on '-'; every y > 0 is a BED site of the window's strand ('.' counts as '+')
    whose base in x is the genome base ('+') or its complement ('-'); each site is labelled in
    exactly one window of its strand, and positions outside the window's span are -1."""
    seqs, sites, spec = case
    codes = {name: encode(seq) for name, seq in seqs.items()}
    with tempfile.TemporaryDirectory() as tmp:
        fasta, bed = _write_inputs(Path(tmp), seqs, sites)
        out = Path(tmp) / "data.h5"
        build_dataset(out, fasta, bed=bed, spec=spec)
        data = SiteDataset(out)
        try:
            n = len(data.split)
            x, y = data.read(np.arange(n))
            coords = data.windows(np.arange(n))
            classes, seqids = data.classes, data.seqids
            w, c = data.window, data.context
            bounds = data.boundaries
            split = data.split.copy()
        finally:
            data.close()
    assert (w, c) == (spec.window, spec.context)
    assert classes == ["none", *sorted({s[3] for s in sites})]
    assert seqids == sorted({s[0] for s in sites})
    half = c // 2
    # Expected label per (seqid, strand, position): the highest class code among its sites
    # (later intervals overwrite earlier ones, and intervals sort by class code last).
    expected: dict[tuple[str, int, int], int] = {}
    for seqid, pos, strand, name in sites:
        key = (seqid, -1 if strand == "-" else 1, pos)
        expected[key] = max(expected.get(key, 0), classes.index(name))
    seen: dict[tuple[str, int, int], int] = {}
    labelled_windows = set()
    for i in range(n):
        seqid = seqids[coords["seqid"][i]]
        strand, start = int(coords["strand"][i]), int(coords["start"][i])
        length = len(codes[seqid])
        assert strand in (1, -1) and start % w == 0 and 0 <= start < length
        assert split[i] == _block(start, bounds[seqid])
        # Genome coordinate of each x column and of each y position.
        cols = np.arange(w + c)
        gx = start - half + (cols if strand == 1 else w + c - 1 - cols)
        gy = gx[half : half + w]
        inside = (gx >= 0) & (gx < length)
        want = np.full(w + c, N_CODE)
        want[inside] = codes[seqid][gx[inside]]
        if strand == -1:
            want = _COMPLEMENT[want]
        got = _from_one_hot(x[i])
        assert np.array_equal(got, want), f"window {i} ({seqid}:{start} {strand}): x differs"
        span_end = min(length, start + w)
        for j in range(w):
            g = int(gy[j])
            if g >= span_end:
                assert y[i, j] == -1
                continue
            label = int(y[i, j])
            assert label == expected.get((seqid, strand, g), 0), (i, j, g)
            if label > 0:
                # The requested property, spelled out: the labelled base in x is the genome
                # base on '+', its complement on '-'.
                base = int(codes[seqid][g])
                assert got[half + j] == (base if strand == 1 else _COMPLEMENT[base])
                key = (seqid, strand, g)
                seen[key] = seen.get(key, 0) + 1
                labelled_windows.add(i)
    assert seen == dict.fromkeys(expected, 1)  # every site once, on its own strand
    # Minus-strand windows exist exactly where '-' sites do.
    minus_seqs = {seqids[k] for k, s in zip(coords["seqid"], coords["strand"]) if s == -1}
    assert minus_seqs == {s[0] for s in sites if s[2] == "-"}
    # Windows are unique per (sequence, strand, start).
    keys = list(zip(coords["seqid"].tolist(), coords["strand"].tolist(),
                    coords["start"].tolist()))  # fmt: skip
    assert len(set(keys)) == len(keys)
    # Windows holding sites are exactly the tiles of the sites, per strand.
    tiles = {(seqids.index(s), st_, p // w * w) for (s, st_, p) in expected}
    assert {keys[i] for i in labelled_windows} == tiles
