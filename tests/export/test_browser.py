"""Browser files of a scan (``export.browser``) and the 2bit writer (``export.twobit``).

The 2bit files are read back with Biopython's 2bit reader (``Bio.SeqIO``, format
``twobit``), written independently of ours. The session XML is parsed with ElementTree, the
hub's files are read as UCSC's stanza format, and every file they name is checked to exist
where the name points (relative to the session, to ``igv.json``, to ``hub/``).
"""

import gzip
import json
import shutil
import struct
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sparling_genomics.errors import InputError
from sparling_genomics.export import twobit as twobit_module
from sparling_genomics.export.browser import (
    BrowserTracks,
    hub_genome_name,
    write_browser_files,
)
from sparling_genomics.export.formats import ExportedMotif
from sparling_genomics.export.scan import SiteTable
from sparling_genomics.export.tracks import track_line, write_bigwig, write_tracks
from sparling_genomics.export.twobit import write_twobit
from sparling_genomics.genome.fasta import Genome

SEQUENCES = {
    "chr1": "ACGTACGTNNNNACGTTTGCA" * 20 + "acgtRYKMacgt" + "N" * 7,
    "scaffold_2": "NNNNACGTTGCAATGC" * 3 + "G",
    "Mt": "GATTACA",
}


def _fasta(path: Path, sequences: dict[str, str], width: int = 60) -> Path:
    path.write_text("".join(
        f">{name} test\n" + "".join(seq[i : i + width] + "\n" for i in range(0, len(seq), width))
        for name, seq in sequences.items()
    ))  # fmt: skip
    return path


def _twobit_records(path: Path) -> dict[str, str]:
    from Bio import SeqIO

    with open(path, "rb") as handle:
        return {r.id: str(r.seq) for r in SeqIO.parse(handle, "twobit")}


def _as_2bit_text(seq: str) -> str:
    """What a 2bit holds of a sequence we read: upper case, anything but ACGT as N."""
    return "".join(c if c in "ACGT" else "N" for c in seq.upper())


@pytest.mark.parametrize("window", [8, 4 << 20])
def test_twobit_reads_back_in_biopython(tmp_path, monkeypatch, window):
    """Every sequence, N runs (at ends, across read windows) and IUPAC codes as N."""
    monkeypatch.setattr(twobit_module, "WINDOW", window)
    genome = Genome(_fasta(tmp_path / "g.fa", SEQUENCES))
    out = write_twobit(tmp_path / "g.2bit", genome)
    got = _twobit_records(out)
    assert list(got) == list(SEQUENCES)
    assert got == {name: _as_2bit_text(seq) for name, seq in SEQUENCES.items()}


@settings(max_examples=40, deadline=None)
@given(st.lists(st.text(alphabet="ACGTNacgtnRY", min_size=1, max_size=70), min_size=1,
                max_size=4))  # fmt: skip
def test_twobit_of_random_sequences_reads_back(seqs):
    import tempfile

    sequences = {f"s{i}": seq for i, seq in enumerate(seqs)}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        genome = Genome(_fasta(folder / "r.fa", sequences, width=7))
        got = _twobit_records(write_twobit(folder / "r.2bit", genome))
    assert got == {name: _as_2bit_text(seq) for name, seq in sequences.items()}


def test_twobit_version_1_has_64_bit_index_offsets_and_the_same_records(tmp_path, monkeypatch):
    genome = Genome(_fasta(tmp_path / "g.fa", SEQUENCES))
    small = write_twobit(tmp_path / "v0.2bit", genome).read_bytes()
    monkeypatch.setattr(twobit_module, "_V0_LIMIT", 0)
    wide = write_twobit(tmp_path / "v1.2bit", genome).read_bytes()
    assert struct.unpack("<4I", small[:16]) == (0x1A412743, 0, 3, 0)
    assert struct.unpack("<4I", wide[:16]) == (0x1A412743, 1, 3, 0)

    def records(data: bytes, width: int) -> dict[str, bytes]:
        at, offsets = 16, {}
        for _ in range(3):
            size = data[at]
            name = data[at + 1 : at + 1 + size].decode()
            at += 1 + size
            offsets[name] = int.from_bytes(data[at : at + width], "little")
            at += width
        ends = sorted(offsets.values())[1:] + [len(data)]
        return {n: data[o : ends[sorted(offsets.values()).index(o)]] for n, o in offsets.items()}

    assert records(wide, 8) == records(small, 4)
    assert len(wide) == len(small) + 3 * 4


def test_twobit_refuses_a_name_longer_than_255_bytes(tmp_path):
    genome = Genome(_fasta(tmp_path / "g.fa", {"x" * 300: "ACGT"}))
    with pytest.raises(InputError) as error:
        write_twobit(tmp_path / "g.2bit", genome)
    assert "1-255 bytes" in str(error.value) and "\n" not in str(error.value)
    assert not (tmp_path / "g.2bit").exists()


def _scan_folder(out: Path, fasta: Path, *, sites: bool = True) -> BrowserTracks:
    """BED, bigBed and two bigWigs of a made-up scan of ``fasta``'s genome, in ``out``."""
    genome = Genome(fasta)
    motifs = [ExportedMotif("sparling_c00", np.full((4, 4), 0.25), 5, "", 0, 2, "fam0"),
              ExportedMotif("sparling_c03", np.full((3, 4), 0.25), 5, "", 3, 1, "")]  # fmt: skip
    n = 3 if sites else 0
    tables = [SiteTable("chr1", np.array([30, 100, 200][:n]), np.array([0, 3, 0][:n], np.int16),
                        np.array([1, -1, 1][:n], np.int8),
                        np.array([1.0, 2.0, 3.0][:n], np.float32))]  # fmt: skip
    out.mkdir(parents=True, exist_ok=True)
    bed, bb = out / "motif_sites.bed", out / "motif_sites.bb"
    rows = write_tracks(bed, bb, tables, motifs, {0: 2, 3: 1}, 9, genome.lengths,
                        track_name="sparling test")  # fmt: skip
    wigs = []
    for m, colour in zip(motifs, ["10,20,30", "40,50,60"]):
        values = [("chr1", np.array([30, 100]), np.array([1.0, 2.0]))]
        wig = write_bigwig(out / f"{m.id}.bw", genome.lengths, iter(values))
        wigs.append((m.id, wig, colour))
    return BrowserTracks("test", bed, track_line("sparling test"), bb if rows else None,
                         wigs if sites else [])  # fmt: skip


def _stanzas(path: Path) -> list[dict[str, str]]:
    """UCSC's ``key value`` stanzas (blank-line separated, indentation ignored)."""
    out = []
    for block in path.read_text().split("\n\n"):
        lines = [line.strip() for line in block.splitlines() if line.strip()]
        if lines:
            out.append(dict(line.split(" ", 1) for line in lines))
    return out


def _check_hub(hub: Path) -> tuple[dict, dict, list[dict]]:
    """hub.txt -> genomes.txt -> trackDb.txt; every file they name exists relative to hub/."""
    (hub_txt,) = _stanzas(hub / "hub.txt")
    assert {"hub", "shortLabel", "longLabel", "genomesFile", "email"} <= set(hub_txt)
    assert len(hub_txt["shortLabel"]) <= 17 and len(hub_txt["longLabel"]) <= 80
    (genome,) = _stanzas(hub / hub_txt["genomesFile"])
    tracks = _stanzas(hub / genome["trackDb"])
    named = [genome.get("twoBitPath")] + [t.get("bigDataUrl") for t in tracks]
    for name in filter(None, named):
        assert not Path(name).is_absolute() and (hub / name).is_file(), name
    assert len({t["track"] for t in tracks}) == len(tracks)
    return hub_txt, genome, tracks


def test_browser_files_for_a_fasta_outside_the_scan_folder(tmp_path):
    import pybedtools

    fasta = _fasta(tmp_path / "My Genome.fa", SEQUENCES)
    genome = Genome(fasta)  # writes its .fai
    out = tmp_path / "tracks"
    tracks = _scan_folder(out, fasta)
    result = write_browser_files(out, fasta, genome, tracks)
    assert result["hub_genome"] == "My_Genome"
    assert all((out / f).is_file() for f in result["files"])
    assert "hub/My_Genome.2bit" in result["files"]
    # The BED with its track line: the line, then the plain BED's bytes.
    track_bed = out / result["track_bed"]
    assert track_bed.read_text() == track_line("sparling test") + tracks.bed.read_text()
    parsed = [f.fields for f in pybedtools.BedTool(str(track_bed))]
    assert parsed == [line.split("\t") for line in tracks.bed.read_text().splitlines()]
    # IGV session: the FASTA (absolute: outside OUT), the bigBed and bigWigs (relative).
    session = ET.parse(out / result["igv_session"]).getroot()
    assert session.tag == "Session" and session.get("genome") == str(fasta.resolve())
    assert session.get("locus").startswith("chr1:")
    paths = [r.get("path") for r in session.iter("Resource")]
    assert paths == ["motif_sites.bb", "sparling_c00.bw", "sparling_c03.bw"]
    assert all((out / p).is_file() for p in paths)
    assert [t.get("id") for t in session.iter("Track")] == paths
    colours = [t.get("color") for t in session.iter("Track")]
    assert colours == [None, "10,20,30", "40,50,60"]
    # igv.json: the 2bit as reference (a page cannot fetch a file outside OUT).
    config = json.loads((out / result["igv_config"]).read_text())
    assert config["reference"]["twoBitURL"] == "hub/My_Genome.2bit"
    urls = [config["reference"]["twoBitURL"]] + [t["url"] for t in config["tracks"]]
    assert all((out / u).is_file() for u in urls)
    assert config["tracks"][0]["format"] == "bigbed" and config["tracks"][1]["type"] == "wig"
    # The hub: an assembly hub on the 2bit, the bigBed and a composite of the bigWigs.
    _, genome_stanza, stanzas = _check_hub(out / "hub")
    assert genome_stanza["genome"] == "My_Genome"
    assert genome_stanza["twoBitPath"] == "My_Genome.2bit"
    assert genome_stanza["defaultPos"] == session.get("locus")
    assert _twobit_records(out / "hub" / "My_Genome.2bit") == {
        n: _as_2bit_text(s) for n, s in SEQUENCES.items()}  # fmt: skip
    sites, composite, *subtracks = stanzas
    assert sites["type"] == "bigBed 9" and sites["itemRgb"] == "on"
    # ... and the bigBed says so: 9 fields, all standard BED (no bed3 autoSql).
    header = (out / "motif_sites.bb").read_bytes()[:44]
    assert struct.unpack("<HHQ", header[32:44]) == (9, 9, 0)
    assert sites["bigDataUrl"] == "../motif_sites.bb"
    assert composite["compositeTrack"] == "on" and composite["type"] == "bigWig"
    assert [s["parent"] for s in subtracks] == ["activation on"] * 2
    assert [s["bigDataUrl"] for s in subtracks] == ["../sparling_c00.bw", "../sparling_c03.bw"]
    assert [s["color"] for s in subtracks] == ["10,20,30", "40,50,60"]


def test_a_fasta_inside_the_scan_folder_is_named_relative_to_it(tmp_path):
    out = tmp_path / "tracks"
    out.mkdir()
    fasta = _fasta(out / "genome.fa", SEQUENCES)
    genome = Genome(fasta)
    result = write_browser_files(out, fasta, genome, _scan_folder(out, fasta))
    assert ET.parse(out / result["igv_session"]).getroot().get("genome") == "genome.fa"
    config = json.loads((out / result["igv_config"]).read_text())
    assert config["reference"]["fastaURL"] == "genome.fa"
    assert config["reference"]["indexURL"] == "genome.fa.fai"


def test_a_gzip_fasta_opens_through_the_2bit(tmp_path):
    plain = _fasta(tmp_path / "plain.fa", SEQUENCES)
    fasta = tmp_path / "genome.fa.gz"
    with open(plain, "rb") as src, gzip.open(fasta, "wb") as dst:
        shutil.copyfileobj(src, dst)
    out = tmp_path / "tracks"
    result = write_browser_files(out, fasta, Genome(fasta), _scan_folder(out, fasta))
    assert result["hub_genome"] == "genome"
    session = ET.parse(out / result["igv_session"]).getroot()
    assert session.get("genome") == "hub/genome.2bit"


def test_a_scan_without_sites_shows_the_bed_and_an_empty_hub(tmp_path):
    fasta = _fasta(tmp_path / "g.fa", SEQUENCES)
    out = tmp_path / "tracks"
    tracks = _scan_folder(out, fasta, sites=False)
    assert tracks.bigbed is None
    result = write_browser_files(out, fasta, Genome(fasta), tracks)
    session = ET.parse(out / result["igv_session"]).getroot()
    assert [r.get("path") for r in session.iter("Resource")] == ["motif_sites.bed"]
    assert session.get("locus") == "chr1:1-439"
    assert (out / "motif_sites.track.bed").read_text() == track_line("sparling test")
    _, _, stanzas = _check_hub(out / "hub")
    assert stanzas == []


def test_a_genome_ucsc_has_gets_a_track_hub_without_2bit(tmp_path):
    fasta = _fasta(tmp_path / "g.fa", SEQUENCES)
    out = tmp_path / "tracks"
    tracks = _scan_folder(out, fasta)
    write_browser_files(out, fasta, Genome(fasta), tracks)
    assert (out / "hub" / "g.2bit").is_file()
    result = write_browser_files(out, fasta, Genome(fasta), tracks, ucsc_db="araTha1")
    assert not list((out / "hub").glob("*.2bit"))  # the old genome's 2bit is gone
    assert not any(f.endswith(".2bit") for f in result["files"])
    _, genome_stanza, _ = _check_hub(out / "hub")
    assert genome_stanza == {"genome": "araTha1", "trackDb": "trackDb.txt"}
    with pytest.raises(InputError, match="not a UCSC assembly name"):
        write_browser_files(out, fasta, Genome(fasta), tracks, ucsc_db="../x")


@pytest.mark.parametrize(
    "name, expected",
    [("TAIR10_chr1.fa", "TAIR10_chr1"), ("genome.fasta.gz", "genome"), ("1kb.fna", "genome_1kb"),
     ("a b+c.fa", "a_b_c"), ("GCF_000001735.4.fa", "GCF_000001735.4"), ("...fa", "genome"),
     ("a..b.fa", "a.b")],
)  # fmt: skip
def test_hub_genome_names(name, expected):
    assert hub_genome_name(Path(name)) == expected
