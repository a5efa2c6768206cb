"""Motif families on hand-made PWMs: copies, shifted and reverse-complement copies merge,
distinct motifs do not; site-overlap linkage; the representative PWM; files; BED names."""

import gzip
import json

import numpy as np
import pytest

from sparling_genomics.export.families import (
    FamilySettings,
    cluster_families,
    dedupe_sites,
    representative_pwm,
    reverse_complement,
    site_overlap,
)
from sparling_genomics.export.family_files import export_families
from sparling_genomics.export.formats import ExportedMotif, read_meme_motifs
from sparling_genomics.export.naming import load_jaspar_collection
from sparling_genomics.export.scan import SiteTable
from sparling_genomics.export.tracks import bed_frame

RF = 21


def pwm(seq: str, p: float = 0.85) -> np.ndarray:
    out = np.full((len(seq), 4), (1 - p) / 3)
    for i, base in enumerate(seq):
        out[i, "ACGT".index(base)] = p
    return out


LONG = "TGACCTAGGCATTC"  # not its own reverse complement
OTHER = "GGGAAACCCTTTGG"
THIRD = "ATATCGCGTAGCAA"


def motif(channel: int, probs: np.ndarray, nsites: int = 100) -> ExportedMotif:
    return ExportedMotif(f"sparling_c{channel:02d}", probs, nsites, channel=channel)


def groups(families) -> list[set[int]]:
    return sorted(({m.channel for m in f.members} for f in families), key=min)


def test_copies_shifted_and_reverse_complement_copies_merge_distinct_motifs_do_not():
    motifs = [
        motif(0, pwm(LONG[:10])),
        motif(1, pwm(LONG[:10])),  # exact copy
        motif(2, pwm(LONG[3:13])),  # shifted by 3
        motif(3, reverse_complement(pwm(LONG[1:11]))),  # other strand, shifted by 1
        motif(4, pwm(OTHER[:10])),
        motif(5, pwm(THIRD[:10])),
    ]
    families, links, _ = cluster_families(motifs, {}, rf=RF)
    assert groups(families) == [{0, 1, 2, 3}, {4}, {5}]
    assert all(link["by"] == ["tomtom"] for link in links)
    big = families[0]
    assert big.motif.id == "sparling_f00" and {m.family for m in big.members} == {"sparling_f00"}
    strands = dict(zip((m.channel for m in big.members), big.reverse))
    assert strands == {0: False, 1: False, 2: False, 3: True}
    shifts = dict(zip((m.channel for m in big.members), big.shifts))
    assert shifts[2] - shifts[0] == 3 and shifts[3] - shifts[0] == 1 and shifts[1] == shifts[0]


def test_sites_link_channels_that_fire_at_the_same_places():
    a, b = motif(0, pwm(OTHER[:10])), motif(1, pwm(THIRD[:10]))
    here = np.array([[w, 50, 1] for w in range(40)])
    near = here + [0, 2, 0]  # within +-2 nt
    far = here + [0, 9, 0]
    b.offset = 3  # b's PWM starts 3 columns further into the same site window
    linked, links, _ = cluster_families([a, b], {0: here, 1: near}, rf=RF)
    assert groups(linked) == [{0, 1}] and links[0]["by"] == ["sites"]
    # No Tomtom match: the members are aligned as their site windows are.
    assert linked[0].shifts == [0, 3] and linked[0].reverse == [False, False]
    apart, links, _ = cluster_families([a, b], {0: here, 1: far}, rf=RF)
    assert groups(apart) == [{0}, {1}] and links == []
    assert site_overlap(here, near, 2) == 1.0 and site_overlap(here, near, 1) == 0.0
    # Half of the smaller channel's sites is enough; fewer is not.
    half = np.concatenate([near[:20], far[20:]])
    assert site_overlap(here, half, 2) == 0.5
    settings = FamilySettings(site_overlap=0.6)
    assert len(cluster_families([a, b], {0: here, 1: half}, rf=RF, settings=settings)[0]) == 2


def test_a_motif_bridging_two_signals_does_not_chain_them_into_one_family():
    """A-B and B-C linked by shared sites, A-C not: average linkage keeps A and C apart
    (single linkage would make one family of three)."""
    a, b, c = motif(0, pwm(OTHER[:10])), motif(1, pwm(THIRD[:10])), motif(2, pwm(LONG[:10]))
    windows = np.arange(40)
    at = {0: 50, 1: 52, 2: 54}  # b is within 2 nt of both, a and c are 4 nt apart
    sites = {k: np.stack([windows, np.full(40, p), np.ones(40, int)], axis=1)
             for k, p in at.items()}  # fmt: skip
    families, links, _ = cluster_families([a, b, c], sites, rf=RF)
    assert {(e["a"], e["b"]) for e in links} == {("sparling_c00", "sparling_c01"),
                                                  ("sparling_c01", "sparling_c02")}  # fmt: skip
    assert groups(families) == [{0, 1}, {2}]
    assert len(cluster_families([a, b, c], sites, rf=RF,
                                settings=FamilySettings(linkage=0.3))[0]) == 1  # fmt: skip


def test_representative_of_two_shifted_copies_is_their_aligned_merge():
    strong, weak = pwm(LONG[:10], 0.85), pwm(LONG[2:12], 0.6)
    a, b = motif(0, strong, 100), motif(1, weak, 300)
    families, _, _ = cluster_families([a, b], {}, rf=RF)
    assert len(families) == 1
    rep = families[0].motif
    # Aligned: b's column t is a's column t + 2. Columns 0-1 are a's alone (100 of 400 sites,
    # under min_coverage 0.5): cut. Columns 2-11: counts summed, then normalised.
    counts = np.zeros((12, 4))
    counts[:10] += strong * 100
    counts[2:] += weak * 300
    expected = (counts / counts.sum(axis=1, keepdims=True))[2:]
    np.testing.assert_allclose(rep.probs, expected, atol=1e-9)
    # Equal weights keep the union span.
    probs, lo = representative_pwm([a, motif(1, weak, 100)], [0, 2], [False, False])
    assert lo == 0 and probs.shape == (12, 4)
    np.testing.assert_allclose(probs[:2], strong[:2]) and np.testing.assert_allclose(
        probs[10:], weak[8:]
    )


def test_merged_sites_are_projected_onto_the_representative_and_deduplicated():
    a = motif(0, pwm(LONG[:10]), 30)
    b = motif(1, pwm(LONG[3:13]), 30)  # same motif, 3 columns further: activates 3 nt later
    c = motif(2, reverse_complement(pwm(LONG[:10])), 30)  # read on the other strand
    starts = np.arange(30) * 40 + 30
    sites = {
        0: np.stack([np.zeros(30, int), starts + RF // 2, np.ones(30, int)], axis=1),
        1: np.stack([np.zeros(30, int), starts + 3 + RF // 2, np.ones(30, int)], axis=1),
        # the same occurrences seen on the minus strand: the span ends where a's ends
        2: np.stack([np.zeros(30, int), starts + 10 - 1 - RF // 2, -np.ones(30, int)], axis=1),
    }
    families, _, _ = cluster_families([a, b, c], sites, rf=RF)
    assert len(families) == 1
    f = families[0]
    assert len(f.sites) == 30 == f.motif.nsites  # three channels, one set of sites
    lo = f.motif.offset  # first kept column of the union span (a's column 0 is span column 0)
    np.testing.assert_array_equal(f.sites[:, 1], starts + lo)
    assert set(f.sites[:, 2]) == {1}
    dup = np.array([[0, 10, 1], [0, 12, 1], [0, 15, 1], [0, 12, -1], [1, 10, 1]])
    assert dedupe_sites(dup, 2).tolist() == [[0, 12, -1], [0, 10, 1], [0, 15, 1], [1, 10, 1]]


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    out = tmp_path_factory.mktemp("families")
    motifs = [motif(0, pwm(LONG[:10]), 40), motif(1, pwm(LONG[:10]), 20),
              motif(2, pwm(OTHER[:10]), 30)]  # fmt: skip
    sites = {c: np.array([[w, 20 + 20 * (c == 2) + c, 1] for w in range(m.nsites)])
             for c, m in enumerate(motifs)}  # fmt: skip
    targets = load_jaspar_collection("JASPAR2024", "CORE", "plants")
    block, _ = export_families(out / "families", motifs, sites, targets, rf=RF,
                            background=np.full(4, 0.25))  # fmt: skip
    return out, block, motifs


def test_family_files_are_written_and_read_back(written):
    from Bio import motifs as bio_motifs

    out, block, motifs = written
    assert block["count"] == 2 and [f["id"] for f in block["families"]] == [
        "sparling_f00", "sparling_f01"]  # fmt: skip
    assert [m["channel"] for m in block["families"][0]["members"]] == [0, 1]
    assert [m.family for m in motifs] == ["sparling_f00", "sparling_f00", "sparling_f01"]
    folder = out / "families"
    meme = read_meme_motifs(folder / "motifs.meme")
    assert [k.split()[0] for k in meme] == ["sparling_f00", "sparling_f01"]
    np.testing.assert_allclose(next(iter(meme.values())), pwm(LONG[:10]), atol=1e-5)
    with open(folder / "motifs.meme") as handle:
        assert len(bio_motifs.parse(handle, "minimal")) == 2
    with open(folder / "motifs.jaspar") as handle:
        assert [m.matrix_id for m in bio_motifs.parse(handle, "jaspar")] == [
            "sparling_f00", "sparling_f01"]  # fmt: skip
    with open(folder / "motifs.transfac") as handle:
        assert len(bio_motifs.parse(handle, "transfac")) == 2
    assert (folder / "motifs.homer").read_text().count(">") == 2
    assert (folder / "logos" / "sparling_f00.png").is_file()
    assert (folder / "tomtom.tsv").read_text().startswith("Query_ID")
    rows = gzip.decompress((folder / "sites.tsv.gz").read_bytes()).decode().splitlines()
    assert rows[0].split("\t") == ["family", "window", "start", "end", "strand"]
    # copies 0 and 1 fire at 20 and 21 in the same 20 windows: one site each there
    assert block["families"][0]["nsites"] == 40 and len(rows) == 1 + 40 + 30
    assert block["near_copies"]["redundant"] == ["sparling_c01"]
    assert block["near_copies"]["fraction"] == pytest.approx(1 / 3, abs=1e-4)
    json.dumps(block)  # the motifs.json block is plain JSON


def test_bed_names_carry_the_family(written):
    _, _, motifs = written
    table = SiteTable("chr1", np.array([100, 200, 300]), np.array([0, 1, 2], np.int16),
                      np.array([1, 1, -1], np.int8), np.ones(3, np.float32))  # fmt: skip
    frame = bed_frame([table], motifs, {m.channel: 0 for m in motifs}, RF, {"chr1": 1000})
    assert frame["name"].tolist() == ["sparling_f00/sparling_c00", "sparling_f00/sparling_c01",
                                      "sparling_f01/sparling_c02"]  # fmt: skip
    colours = frame["itemRgb"].tolist()
    assert colours[0] == colours[1] != colours[2]  # one colour per family
