"""Files that open a scan's tracks in a genome browser: a BED with its track line inside, an
IGV desktop session, an igv.js config and a UCSC track hub (all written atomically).

* ``motif_sites.track.bed``: the track line, then the rows of ``motif_sites.bed``. A copy
  beside the plain BED rather than a track line inside it: the plain BED stays what its
  readers expect (one site a line: the bedtools sort checks, line readers in the tests and
  pipelines, the bigBed made from the same rows), and the copy is what a user pastes or
  uploads into UCSC's custom tracks, or opens in IGV, with its name and colours on. It costs
  the BED's size again on disk.
* ``igv_session.xml``: IGV desktop's session (File > Open Session): the genome FASTA (IGV
  needs its ``.fai`` beside it; a gzip or unindexable FASTA is replaced by the hub's 2bit,
  which IGV 2.17 and later open), the bigBed (the plain BED when the scan found no sites, as
  there is no bigBed then) and one bigWig per motif in the motif's track colour. Paths are
  relative to the session where they lie under OUT, absolute otherwise.
* ``igv.json``: the same for igv.js (``igv.createBrowser(div, config)``) on a static page
  served from OUT (relative URLs resolve against the page). Its reference is the FASTA where
  that lies under OUT with its index, else the hub's 2bit: a page can fetch nothing outside
  the folder it is served from.
* ``hub/``: a UCSC assembly hub, ``hub.txt``, ``genomes.txt``, ``trackDb.txt`` and the genome
  as ``hub/GENOME.2bit`` (``export.twobit``: no Python package writes 2bit), for the
  genomes UCSC does not have: put OUT on a web server and give UCSC the URL of ``hub.txt``.
  trackDb holds the bigBed (``type bigBed 9``, ``itemRgb on``) and a composite of the
  bigWigs, as ``../FILE`` relative to the hub's folder (UCSC resolves a ``bigDataUrl``
  against the trackDb's URL). With ``ucsc_db`` (an assembly UCSC has, e.g. ``hg38``) it is a
  plain track hub on that assembly and no 2bit is written. ``email`` in hub.txt is a
  placeholder to replace before the hub is shared.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError
from ..io import atomic_write, is_gzip, safe_child, write_text_atomic
from .twobit import write_twobit

TRACK_BED = "motif_sites.track.bed"
IGV_SESSION = "igv_session.xml"
IGV_CONFIG = "igv.json"
HUB_DIR = "hub"
HUB_EMAIL = "your.name@example.org"  # hub.txt must name one; the user puts theirs
LOCUS_SPAN = 2000  # bases shown first: around the first site


@dataclass
class BrowserTracks:
    """The scan's track files, for the browser files (paths under OUT)."""

    name: str  # the run's name, in labels
    bed: Path  # plain BED9, rows only
    track_line: str  # the BED's track line
    bigbed: Path | None  # None where the scan found no sites (no bigBed then)
    wigs: list[tuple[str, Path, str]] = field(default_factory=list)  # (motif id, bigWig, R,G,B)


def write_browser_files(
    out: Path, fasta: Path, genome, tracks: BrowserTracks, *, ucsc_db: str | None = None
) -> dict:
    """Write the BED with its track line, ``igv_session.xml``, ``igv.json`` and ``hub/`` for
    ``tracks`` in folder ``out``; ``genome`` is the scanned FASTA's ``Genome`` (lengths, and
    bases for the 2bit). Returns ``files`` (paths relative to ``out``, as written) and the
    names of each piece, for ``scan.json``."""
    out, fasta = Path(out), Path(fasta)
    hub = out / HUB_DIR
    if ucsc_db is not None and not re.fullmatch(r"[A-Za-z][A-Za-z0-9_.]*", ucsc_db):
        raise InputError(f"{ucsc_db!r}: not a UCSC assembly name (e.g. hg38, mm39, araTha1)")
    files = [write_track_bed(tracks.bed, tracks.track_line, out / TRACK_BED)]
    locus = first_locus(tracks.bed, genome.lengths)
    twobit = None
    if ucsc_db is None:
        twobit = write_twobit(safe_child(hub, hub_genome_name(fasta), ".2bit"), genome)
    for old in hub.glob("*.2bit"):  # hub/ is the scan's: an old genome's 2bit would mislead
        if old != twobit:
            old.unlink()
    files += write_hub(hub, tracks, ucsc_db or hub_genome_name(fasta), twobit, locus)
    session_genome = fasta if indexed_fasta(fasta) or twobit is None else twobit
    files.append(write_igv_session(out / IGV_SESSION, session_genome, tracks, locus))
    files.append(write_igv_config(out / IGV_CONFIG, fasta, twobit, tracks, locus))
    if twobit is not None:
        files.append(twobit)
    return {
        "files": [path_ref(p, out) for p in files],
        "track_bed": TRACK_BED,
        "igv_session": IGV_SESSION,
        "igv_config": IGV_CONFIG,
        "hub": f"{HUB_DIR}/hub.txt",
        "hub_genome": ucsc_db or hub_genome_name(fasta),
    }


def write_track_bed(bed: Path, track_line: str, path: Path) -> Path:
    """``track_line`` then every row of ``bed`` at ``path`` (streamed: a BED may be GBs)."""

    def write(handle) -> None:
        handle.write(track_line.rstrip("\n").encode("utf-8") + b"\n")
        with open(bed, "rb") as rows:
            shutil.copyfileobj(rows, handle, 1 << 20)

    atomic_write(path, write, mode="wb")
    return Path(path)


def first_locus(bed: Path, lengths: dict[str, int], span: int = LOCUS_SPAN) -> str:
    """``chrom:start-end`` (1-based, inclusive) of ``span`` bases around the BED's first row,
    or the start of the first non-empty sequence where the BED has no rows."""
    with open(bed) as handle:
        line = handle.readline()
    if line.strip():
        chrom, start, end = line.split("\t")[:3]
        centre = (int(start) + int(end)) // 2
    else:
        chrom = next((name for name, n in lengths.items() if n > 0), next(iter(lengths)))
        centre = 0
    length = lengths[chrom]
    lo = max(0, min(centre - span // 2, length - span))
    return f"{chrom}:{lo + 1}-{min(length, lo + span)}"


def hub_genome_name(fasta: Path) -> str:
    """The hub's name of the scanned genome: the FASTA's file name without its extensions,
    kept to letters, digits, ``_`` and ``.`` (also the 2bit's file name)."""
    name = Path(fasta).name
    for suffixes in ((".gz", ".bgz", ".bgzf"), (".fa", ".fasta", ".fna", ".fas", ".seq")):
        for suffix in suffixes:
            if name.lower().endswith(suffix):
                name = name[: -len(suffix)]
                break
    name = re.sub(r"\.{2,}", ".", re.sub(r"[^A-Za-z0-9_.]+", "_", name)).strip("._")
    return name if name[:1].isalpha() else f"genome_{name}".rstrip("_")


def indexed_fasta(fasta: Path) -> bool:
    """Whether a browser can read ``fasta`` by its index: plain text with a ``.fai`` beside it
    (``Genome`` writes one where pyfaidx can index the file)."""
    fasta = Path(fasta)
    return Path(f"{fasta}.fai").is_file() and not is_gzip(fasta)


def path_ref(path: Path, base: Path) -> str:
    """``path`` relative to folder ``base`` (POSIX) where it lies under it, else absolute."""
    path, base = Path(path).resolve(), Path(base).resolve()
    try:
        return path.relative_to(base).as_posix()
    except ValueError:
        return str(path)


def _tracks(tracks: BrowserTracks) -> list[dict]:
    """Each track to show: path, name, kind (``sites`` or ``wig``) and colour."""
    sites = tracks.bigbed if tracks.bigbed is not None else tracks.bed
    shown = [{"path": sites, "name": f"Motif sites ({tracks.name})", "kind": "sites",
              "colour": None}]  # fmt: skip
    shown += [{"path": wig, "name": f"{motif} activation", "kind": "wig", "colour": colour}
              for motif, wig, colour in tracks.wigs]  # fmt: skip
    return shown


def write_igv_session(path: Path, genome: Path, tracks: BrowserTracks, locus: str) -> Path:
    """IGV desktop's XML session at ``path``: ``genome`` (FASTA or 2bit) and the tracks."""
    base = Path(path).parent
    root = ET.Element("Session", genome=path_ref(genome, base), locus=locus, version="8")
    resources = ET.SubElement(root, "Resources")
    panel = ET.Element("Panel", name="DataPanel")
    for track in _tracks(tracks):
        ref = path_ref(track["path"], base)
        ET.SubElement(resources, "Resource", name=track["name"], path=ref)
        if track["kind"] == "sites":
            ET.SubElement(panel, "Track", id=ref, name=track["name"], displayMode="EXPANDED")
        else:
            ET.SubElement(panel, "Track", id=ref, name=track["name"], autoScale="true",
                          color=track["colour"], altColor=track["colour"])  # fmt: skip
    root.append(panel)
    ET.indent(root)
    text = ET.tostring(root, encoding="unicode")
    write_text_atomic(path, f'<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n{text}\n')
    return Path(path)


def igv_config(
    base: Path, fasta: Path, twobit: Path | None, tracks: BrowserTracks, locus: str
) -> dict:
    """igv.js's browser config for a page in folder ``base``: reference, locus, tracks."""
    fasta_ref = path_ref(fasta, base)
    if indexed_fasta(fasta) and (twobit is None or not Path(fasta_ref).is_absolute()):
        reference = {"fastaURL": fasta_ref, "indexURL": path_ref(f"{fasta}.fai", base)}
    elif twobit is not None:
        reference = {"twoBitURL": path_ref(twobit, base)}
    else:
        reference = {"fastaURL": fasta_ref, "indexed": False}
    name = hub_genome_name(fasta)
    shown = []
    for track in _tracks(tracks):
        url = path_ref(track["path"], base)
        if track["kind"] == "sites":
            shown.append({"name": track["name"], "type": "annotation",
                          "format": "bigbed" if url.endswith(".bb") else "bed", "url": url,
                          "displayMode": "EXPANDED"})  # fmt: skip
        else:
            shown.append({"name": track["name"], "type": "wig", "format": "bigwig", "url": url,
                          "color": f"rgb({track['colour']})", "autoscale": True})  # fmt: skip
    return {
        "reference": {"id": name, "name": name, **reference},
        "locus": locus,
        "loadDefaultGenomes": False,
        "tracks": shown,
    }


def write_igv_config(
    path: Path, fasta: Path, twobit: Path | None, tracks: BrowserTracks, locus: str
) -> Path:
    """:func:`igv_config` as JSON at ``path``, for a page beside it."""
    config = igv_config(Path(path).parent, fasta, twobit, tracks, locus)
    write_text_atomic(path, json.dumps(config, indent=2) + "\n")
    return Path(path)


def _label(text: str, limit: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "~"


def _stanza(fields: list[tuple[str, str]], indent: str = "") -> str:
    return "".join(f"{indent}{key} {value}\n" for key, value in fields)


def write_hub(
    hub: Path, tracks: BrowserTracks, genome: str, twobit: Path | None, locus: str
) -> list[Path]:
    """``hub.txt``, ``genomes.txt`` and ``trackDb.txt`` in folder ``hub``: an assembly hub on
    ``twobit`` named ``genome``, or a track hub on UCSC's assembly ``genome`` (no 2bit)."""
    hub = Path(hub)
    name = re.sub(r"[^A-Za-z0-9_]+", "_", tracks.name).strip("_") or "run"
    hub_txt = _stanza([
        ("hub", f"sparling_{name}"),
        ("shortLabel", _label(f"Sparling {tracks.name}", 17)),
        ("longLabel", _label(f"Sparling motif sites and activations, run {tracks.name}", 80)),
        ("genomesFile", "genomes.txt"),
        ("email", HUB_EMAIL),
    ])  # fmt: skip
    genome_fields = [("genome", genome), ("trackDb", "trackDb.txt")]
    if twobit is not None:
        genome_fields += [
            ("twoBitPath", _hub_ref(twobit, hub)),
            ("organism", genome),
            ("scientificName", genome),
            ("description", _label(f"{genome}, as scanned by Sparling", 80)),
            ("defaultPos", locus),
            ("orderKey", "1"),
        ]
    stanzas = []
    if tracks.bigbed is not None:
        stanzas.append(_stanza([
            ("track", "motif_sites"),
            ("shortLabel", "Motif sites"),
            ("longLabel", _label(f"Sparling motif sites, run {tracks.name}", 80)),
            ("type", "bigBed 9"),
            ("itemRgb", "on"),
            ("visibility", "pack"),
            ("bigDataUrl", _hub_ref(tracks.bigbed, hub)),
            ("priority", "1"),
        ]))  # fmt: skip
    if tracks.wigs:
        stanzas.append(_stanza([
            ("track", "activation"),
            ("compositeTrack", "on"),
            ("shortLabel", "Activations"),
            ("longLabel", _label(f"Sparling activation of each motif, run {tracks.name}", 80)),
            ("type", "bigWig"),
            ("visibility", "full"),
            ("autoScale", "on"),
            ("maxHeightPixels", "64:32:8"),
            ("priority", "2"),
        ]))  # fmt: skip
        used: set[str] = set()
        for i, (motif, wig, colour) in enumerate(tracks.wigs):
            track = "activation_" + re.sub(r"[^A-Za-z0-9_]+", "_", motif)
            track = track if track not in used else f"{track}_{i}"
            used.add(track)
            stanzas.append(_stanza([
                ("track", track),
                ("parent", "activation on"),
                ("shortLabel", _label(motif, 17)),
                ("longLabel", _label(f"Sparling activation of motif {motif}", 80)),
                ("type", "bigWig"),
                ("bigDataUrl", _hub_ref(wig, hub)),
                ("color", colour),
                ("priority", str(i + 1)),
            ], indent="    "))  # fmt: skip
    written = []
    for file_name, text in (("hub.txt", hub_txt), ("genomes.txt", _stanza(genome_fields)),
                            ("trackDb.txt", "\n".join(stanzas))):  # fmt: skip
        write_text_atomic(hub / file_name, text)
        written.append(hub / file_name)
    return written


def _hub_ref(path: Path, hub: Path) -> str:
    """``path`` relative to the hub's folder (``../FILE`` for the scan's track files)."""
    return Path(os.path.relpath(Path(path).resolve(), Path(hub).resolve())).as_posix()
