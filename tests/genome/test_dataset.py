"""HDF5 datasets on the tiny reference: labels, orientation, split, round trip, bad input."""

import json

import h5py
import numpy as np
import pytest

from sparling_genomics.errors import InputError
from sparling_genomics.genome.annotation import read_annotation
from sparling_genomics.genome.dataset import (
    DatasetSpec,
    SiteDataset,
    block_boundaries,
    build_dataset,
)
from sparling_genomics.genome.fasta import Genome
from sparling_genomics.genome.labels import read_bed
from sparling_genomics.genome.sequence import decode, reverse_complement_codes
from tests.conftest import TINY_FASTA, TINY_GFF


def _codes(x):
    """Integer codes of one-hot (4, L) windows (N -> 4)."""
    return np.where(x.sum(0) == 0, 4, x.argmax(0)).astype(np.uint8)


def test_round_trip_sequence_and_labels_both_strands(tiny_dataset):
    genome = Genome(TINY_FASTA)
    data = SiteDataset(tiny_dataset)
    half = data.context // 2
    coords = data.windows(np.arange(len(data.split)))
    assert set(coords["strand"]) == {1, -1}
    x, y = data.read(np.arange(len(data.split)))
    for i in range(len(x)):
        start = int(coords["start"][i])
        expect = genome.fetch("NC_003070.9", start - half, start + data.window + half)
        if coords["strand"][i] == -1:
            expect = reverse_complement_codes(expect)
        assert np.array_equal(_codes(x[i]), expect)
    # Labelled donors read G T right after them, acceptors A G right before them, in the
    # window's (transcript) orientation, but for the few non-canonical sites the summary counts.
    donor, acceptor = data.classes.index("donor"), data.classes.index("acceptor")
    after, before = [], []
    for i in range(len(x)):
        seq = decode(_codes(x[i]))
        after += [seq[half + p + 1 : half + p + 3] for p in np.flatnonzero(y[i] == donor)]
        before += [seq[half + p - 2 : half + p] for p in np.flatnonzero(y[i] == acceptor)]
    summary = data.summary
    assert len(after) == summary["sites"]["donor"] > 50
    assert len(before) == summary["sites"]["acceptor"] == len(after)
    assert sum(d != "GT" for d in after) == summary["non_canonical"]["donor"] < 0.05 * len(after)
    assert sum(a != "AG" for a in before) == summary["non_canonical"]["acceptor"]
    assert sum(d == "GC" for d in after) >= 1  # GC-AG introns exist and are kept


def test_hand_read_donor_is_labelled_in_its_window(tiny_dataset):
    data = SiteDataset(tiny_dataset)
    coords = data.windows(np.arange(len(data.split)))
    donor = data.classes.index("donor")
    # NAC001 (+): donor at 1-based 3913. ARV1 (-): its longest transcript, rna-NM_001331240.1
    # (exons ... 8236-8464, 8571-9130), has its first donor at 1-based 8571.
    for genome_pos, strand in ((3912, 1), (8570, -1)):
        hit = [
            i
            for i in range(len(data.split))
            if coords["strand"][i] == strand
            and coords["start"][i] <= genome_pos < coords["start"][i] + data.window
        ]
        assert len(hit) == 1
        i = hit[0]
        _, y = data.read(np.array([i]))
        offset = genome_pos - coords["start"][i]
        index = offset if strand == 1 else data.window - 1 - offset
        assert y[0, index] == donor


def test_split_is_contiguous_blocks_and_never_cuts_a_gene(tiny_dataset):
    genome = Genome(TINY_FASTA)
    genes = read_annotation(TINY_GFF, genome.lengths).selected()
    data = SiteDataset(tiny_dataset)
    val_start, test_start = data.boundaries["NC_003070.9"]
    assert 0 < val_start < test_start < 300_000
    for t in genes:
        for b in (val_start, test_start):
            assert not (t.start < b < t.end), f"{t.id} is cut at {b}"
    coords = data.windows(np.arange(len(data.split)))
    expected = np.digitize(coords["start"], [val_start, test_start])
    assert np.array_equal(data.split, expected)
    counts = np.bincount(data.split, minlength=3)
    assert all(counts > 0)


def test_block_boundaries_move_to_the_nearer_cluster_end():
    assert block_boundaries(1000, [(650, 720), (880, 950)], 0.1, 0.2) == [720, 800]
    assert block_boundaries(1000, [(690, 900)], 0.1, 0.2) == [690, 900]
    assert block_boundaries(1000, [(690, 1000)], 0.1, 0.2) == [690, 690]


def test_attrs_record_split_and_classes(tiny_dataset):
    with h5py.File(tiny_dataset) as h5:
        assert json.loads(h5.attrs["classes"]) == ["none", "acceptor", "donor"]
        assert "NC_003070.9" in json.loads(h5.attrs["split"])
        assert h5["x"].compression == "gzip" and h5["x"].chunks[0] <= 16
        assert h5["x"].dtype == np.uint8 and h5["y"].dtype == np.int8


def test_bed_source_labels_sites_on_both_strands(tmp_path):
    bed = tmp_path / "sites.bed"
    bed.write_text(
        "NC_003070.9\t1000\t1001\tpeak\t0\t+\n"
        "NC_003070.9\t5000\t5010\tpeak\t0\t-\n"
        "NC_003070.9\t250000\t250001\tsummit\n"
    )
    out = tmp_path / "bed.h5"
    summary = build_dataset(out, TINY_FASTA, bed=bed, spec=DatasetSpec(window=500, context=100))
    assert summary["sites"] == {"peak": 2, "summit": 1}
    data = SiteDataset(out)
    assert data.classes == ["none", "peak", "summit"]
    x, y = data.read(np.arange(len(data.split)))
    coords = data.windows(np.arange(len(data.split)))
    assert (y == 1).sum() == 11 and (y == 2).sum() == 1
    minus = np.flatnonzero(coords["strand"] == -1)
    assert len(minus) == 1 and (y[minus[0]] == 1).sum() == 10
    # Background windows: as many unlabelled windows as labelled ones, none labelled.
    assert (np.array([(row > 0).any() for row in y]) == 0).sum() == 3
    # A BED carries no gene structure: no exon/intron regions.
    assert not data.has_regions and data.regions(np.arange(2)) is None


@pytest.mark.parametrize(
    "bed_text,message",
    [
        ("", "BED file holds no records"),
        ("# only a comment\n", "BED file holds no records"),
        ("chrZ\t10\t20\tpeak\n", ":1: sequence 'chrZ' is not in the FASTA"),
        ("NC_003070.9\t10\t20\n", ":1: a labelled BED needs at least 4 columns"),
        ("NC_003070.9\t299990\t300020\tpeak\n", ":1: interval ends at 300020, beyond the end"),
        ("NC_003070.9\t10\t20\tpeak\t0\t+\nNC_003070.9\t30\t40\tpeak\t0\tx\n",
         ":2: strand 'x' is not '+', '-' or '.'"),
        ("NC_003070.9\t10\t20\tpeak\t0\tplus\n", ":1: strand 'plus' is not"),
        ("NC_003070.9\t10\t20\tpeak\thigh\t+\n", ":1: score 'high' is not a number"),
    ],
)
def test_bad_bed_is_refused_and_nothing_written(tmp_path, bed_text, message):
    bed = tmp_path / "bad.bed"
    bed.write_text(bed_text)
    out = tmp_path / "out.h5"
    with pytest.raises(InputError) as err:
        build_dataset(out, TINY_FASTA, bed=bed)
    assert str(err.value).startswith(str(bed)) and message in str(err.value)
    assert list(tmp_path.iterdir()) == [bed]


def test_fasta_and_gff_names_must_match(tmp_path):
    fasta = tmp_path / "g.fa"
    fasta.write_text(">chr1\n" + "ACGT" * 3000 + "\n")
    with pytest.raises(InputError) as err:
        build_dataset(tmp_path / "o.h5", fasta, annotation=TINY_GFF)
    message = str(err.value)
    assert f"{TINY_GFF}:9: sequence 'NC_003070.9' is not in the FASTA." in message
    assert "FASTA has: chr1; tiny.gff3 has: NC_003070.9." in message
    assert "--chrom-aliases" in message
    assert not (tmp_path / "o.h5").exists()


def test_chrom_aliases_reconcile_names(tmp_path):
    """A FASTA renamed to 'chr1' plus an alias file gives the same dataset as the original."""
    fasta = tmp_path / "g.fa"
    fasta.write_text(TINY_FASTA.read_text().replace(">NC_003070.9", ">chr1", 1))
    aliases = tmp_path / "aliases.txt"
    aliases.write_text("# GFF name, FASTA name\nNC_003070.9\tchr1\n")
    renamed = build_dataset(tmp_path / "a.h5", fasta, annotation=TINY_GFF, chrom_aliases=aliases)
    original = build_dataset(tmp_path / "b.h5", TINY_FASTA, annotation=TINY_GFF)
    for key in ("windows", "sites", "transcripts"):
        assert renamed[key] == original[key]
    import h5py

    with h5py.File(tmp_path / "a.h5") as a, h5py.File(tmp_path / "b.h5") as b:
        assert np.array_equal(a["x"][:], b["x"][:]) and np.array_equal(a["y"][:], b["y"][:])


def test_empty_fasta_is_refused(tmp_path):
    fasta = tmp_path / "empty.fa"
    fasta.write_text("")
    with pytest.raises(InputError, match="no sequences"):
        Genome(fasta)


def test_bed_header_row_is_skipped_but_a_malformed_first_record_is_refused(tmp_path):
    from sparling_genomics.genome.labels import read_bed

    header = tmp_path / "h.bed"
    header.write_text("chrom\tstart\tend\tname\nchr1\t5\t6\ty\n")
    assert [(r.seqid, r.start, r.end) for r in read_bed(header, {"chr1": 100})] == [("chr1", 5, 6)]
    bad = tmp_path / "b.bed"
    bad.write_text("chr1\t1,500\t1,501\tx\nchr1\t5\t6\ty\n")
    with pytest.raises(InputError, match=r"b.bed:1: start/end must be integers"):
        read_bed(bad, {"chr1": 100})


def test_read_takes_any_order_and_repeated_windows(tiny_dataset):
    data = SiteDataset(tiny_dataset)
    x, y = data.read(np.array([5, 2, 5, 0]))
    one = [data.read(np.array([i])) for i in (5, 2, 0)]
    for got, want in zip(range(4), (0, 1, 0, 2)):
        assert np.array_equal(x[got], one[want][0][0]) and np.array_equal(y[got], one[want][1][0])


@pytest.fixture(scope="module")
def donor_first(tmp_path_factory):
    """The tiny dataset built with the other label order (``--labels donor,acceptor``)."""
    path = tmp_path_factory.mktemp("order") / "donor_first.h5"
    build_dataset(
        path, TINY_FASTA, annotation=TINY_GFF, spec=DatasetSpec(kinds=["donor", "acceptor"])
    )
    return path


def test_a_reader_in_a_models_class_order_matches_classes_by_name(tiny_dataset, donor_first):
    ours = SiteDataset(tiny_dataset)
    other = SiteDataset(donor_first)
    assert ours.classes == ["none", "acceptor", "donor"]
    assert other.classes == ["none", "donor", "acceptor"]
    matched = SiteDataset(donor_first, class_order=ours.classes)
    assert matched.classes == ours.classes and matched.file_classes == other.classes
    index = ours.indices("test")[:20]
    _, y_ours = ours.read(index)
    _, y_other = other.read(index)
    _, y_matched = matched.read(index)
    assert (y_other != y_ours).any()  # the raw codes of the two files differ...
    np.testing.assert_array_equal(y_matched, y_ours)  # ... and match once read by name
    np.testing.assert_array_equal(matched.labels(index), ours.labels(index))


def test_a_class_the_model_lacks_or_the_data_lacks_is_one_error_naming_both(tmp_path, tiny_dataset):
    donor_only = tmp_path / "donor.h5"
    build_dataset(donor_only, TINY_FASTA, annotation=TINY_GFF, spec=DatasetSpec(kinds=["donor"]))
    with pytest.raises(InputError) as err:
        SiteDataset(donor_only, class_order=["none", "acceptor", "donor"])
    assert str(err.value) == (
        f"{donor_only}: its site classes (donor) are not the model's (acceptor, donor); "
        "rebuild the dataset with --labels acceptor,donor"
    )
    with pytest.raises(InputError, match=r"\(acceptor, donor\) are not the model's \(donor\)"):
        SiteDataset(tiny_dataset, class_order=["none", "donor"])


def test_bed_scores_and_strands_in_their_domain_pass(tmp_path):
    """'.', integers and floats as scores; '+', '-' and '.' as strands; BED6+ columns unread
    (a narrowPeak's floats where BED12 has thickStart)."""
    bed = tmp_path / "sites.bed"
    bed.write_text("NC_003070.9\t1000\t1001\tdonor\t.\t+\n"
                   "NC_003070.9\t2000\t2001\tacceptor\t12.5\t-\t3.2\t0.01\t-1\t5\n"
                   "NC_003070.9\t3000\t3001\tdonor\t900\t.\n")  # fmt: skip
    records = read_bed(bed, {"NC_003070.9": 300_000})
    assert [r.strand for r in records] == ["+", "-", "."]


def test_a_missing_dataset_says_how_to_build_one_and_a_folder_is_named_as_such(tmp_path):
    missing = tmp_path / "none.h5"
    with pytest.raises(InputError, match=r"dataset file not found \(build it with `sparling"):
        SiteDataset(missing)
    with pytest.raises(InputError, match=r"^.*: dataset file expected, but this is a folder$"):
        SiteDataset(tmp_path)
    assert not missing.exists()
