"""Scan a genome with a finished run's model and write its motif tracks: BED9 (+ .track),
bigBed, per-motif bigWigs, the files that open them in a genome browser (a BED with its track
line, an IGV session, an igv.js config, a UCSC hub) and the ``scan.json`` summary (the
``scan`` verb).

``export.scan`` finds the sites, ``export.tracks`` writes them, ``export.browser`` the browser
files; this module joins them to a run directory and its exported motifs.

On a cluster the scan scatters: ``part=(i, n)`` scans the i-th of n jobs of about equal bases
(``export.scan.plan_pieces``) into ``OUT/parts/part-i-of-n.npz``; ``gather=n`` joins the n
parts and writes the same files as one whole scan would, byte for byte.

Sites go to disk as they are found (``export.site_store``, ``OUT/.sites`` while the scan
runs) and the files are written from there one sequence at a time: a scan's memory does not
grow with the genome.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..export.browser import BrowserTracks, write_browser_files
from ..export.formats import ExportedMotif
from ..export.motif_summary import exported_motifs
from ..export.scan import (
    SiteTable,
    activation_track,
    plan_pieces,
    scan_genome,
    scan_pieces,
)
from ..export.site_store import SiteStore
from ..export.tracks import motif_colour_map, track_line, write_bigwig, write_tracks
from ..genome.fasta import Genome
from ..io import atomic_path, safe_child, write_json_atomic
from ..progress import Counter
from ..rundir import SCAN_SUMMARY
from ..rundir import motifs_dir as run_motifs_dir
from ..train.loading import load_run, recorded_sources

PARTS_DIR = "parts"  # OUT/parts/part-I-of-N.npz: a scattered scan's jobs
STORE_DIR = ".sites"  # OUT/.sites: the scan's sites on disk until the files are written


def scan_run_to_tracks(
    run,
    fasta,
    out,
    *,
    motifs_dir=None,
    chunk: int = 50_000,
    device: str | None = None,
    dataset: Path | None = None,
    bigwig: bool = True,
    part: tuple[int, int] | None = None,
    gather: int | None = None,
    precision: str = "float32",
) -> dict:
    """Scan ``fasta`` (None: the genome the run's dataset was built from; an error where the
    run records none) with run ``run``'s model; write BED9 (+ .track), bigBed, per-motif
    bigWigs, the browser files (``export.browser``) and, last, ``scan.json`` (this summary,
    the mark of a finished scan) to ``out``. Motifs (ids, names, trimmed spans) come from
    ``motifs_dir`` (default ``RUN/motifs``, made by ``export``). ``part=(i, n)``: scan only
    job i of n into ``OUT/parts/``; ``gather=n``: write the files from those n parts;
    ``precision``: the model's arithmetic (``export.scan.PRECISIONS``)."""
    run, out = Path(run), Path(out)
    motifs, offsets = _exported_motifs(run, motifs_dir, out)
    loaded = load_run(run, device=device, dataset=dataset)
    task, model = loaded.task, loaded.model
    fasta, _ = recorded_sources(run, task, fasta, annotation=False)
    genome = Genome(fasta)
    rf = int(model.g.receptive_field)
    began = time.perf_counter()
    if part is not None:
        return _scan_part(model, genome, out, part, chunk, loaded.device, precision)
    made = not out.exists()
    out.mkdir(parents=True, exist_ok=True)
    try:
        with SiteStore(out / STORE_DIR, list(genome.lengths)) as store:
            if gather is not None:
                scan_seconds = _gather_parts(genome, out, gather, chunk, precision, store)
            else:
                with Counter("scan", total=sum(genome.lengths.values()), unit="bp") as counter:
                    scan_genome(model, genome, chunk=chunk, device=loaded.device,
                                progress=counter.update, precision=precision,
                                keep=store.add)  # fmt: skip
                scan_seconds = time.perf_counter() - began
            return _write_scan(run, out, fasta, genome, store, motifs, offsets, rf,
                               bigwig=bigwig, device=loaded.device, precision=precision,
                               gather=gather, scan_seconds=scan_seconds, began=began)  # fmt: skip
    except BaseException:
        if made:  # a failed or killed scan leaves no folder it made
            shutil.rmtree(out, ignore_errors=True)
        raise


def _write_scan(run: Path, out: Path, fasta: Path, genome: Genome, tables: SiteStore,
                motifs: list[ExportedMotif], offsets: dict[int, int], rf: int, *, bigwig: bool,
                device, precision: str, gather: int | None, scan_seconds: float,
                began: float) -> dict:  # fmt: skip
    """The scan's files from its stored sites, and, last, ``scan.json``."""
    bed = out / "motif_sites.bed"
    track_name = f"sparling {run.name}"
    n_rows = write_tracks(bed, out / "motif_sites.bb", tables, motifs, offsets, rf,
                          genome.lengths, track_name=track_name)  # fmt: skip
    wigs, colours, shown = [], motif_colour_map(motifs), []
    if bigwig:
        for m in motifs:

            def values(channel=m.channel):
                for t in tables:
                    yield (t.seqid, *activation_track(t, channel))

            wig = write_bigwig(safe_child(out, m.id, ".bw"), genome.lengths, values())
            if wig is not None:
                wigs.append(wig)
                shown.append((m.id, wig, colours[m.id]))
    browser = write_browser_files(out, fasta, genome, BrowserTracks(
        run.name, bed, track_line(track_name), out / "motif_sites.bb" if n_rows else None,
        shown))  # fmt: skip
    result = {
        "run": str(run),
        "fasta": str(fasta),
        "sequences": len(genome.lengths),
        "bases": int(sum(genome.lengths.values())),
        "device": str(device),
        "precision": precision,
        "motifs": len(motifs),
        "sites": int(tables.sites),
        "bed_rows": n_rows,
        "scan_seconds": round(scan_seconds, 2),  # a gathered scan: its parts' seconds summed
        **({"parts": gather} if gather is not None else {}),
        "total_seconds": round(time.perf_counter() - began, 2),
        "files": [
            bed.name,
            bed.name + ".track",
            *(["motif_sites.bb"] if n_rows else []),
            *[w.name for w in wigs],
            *browser.pop("files"),
        ],  # fmt: skip
        "browser": browser,
        "motifs_without_sites": [
            m.id for m in motifs if not any(w.name == f"{m.id}.bw" for w in wigs)
        ]
        if bigwig
        else None,  # fmt: skip
    }
    write_json_atomic(out / SCAN_SUMMARY, result)
    return result


def _exported_motifs(run: Path, motifs_dir, out: Path) -> tuple[list[ExportedMotif], dict]:
    """The run's exported motifs (``export.motif_summary``: ``motifs.json`` + ``motifs.meme``
    of ``motifs_dir``, default ``RUN/motifs``) and each channel's trimmed offset; a one-line
    error for an id that would leave ``out``, before any work."""
    motifs = exported_motifs(Path(motifs_dir) if motifs_dir else run_motifs_dir(run))
    for m in motifs:
        safe_child(out, m.id, ".bw")
    return motifs, {m.channel: int(m.offset) for m in motifs}


def part_path(out: Path, part: int, parts: int) -> Path:
    """``OUT/parts/part-I-of-N.npz``: job ``part`` (1-based) of a scan scattered ``parts``
    ways."""
    return Path(out) / PARTS_DIR / f"part-{part:04d}-of-{parts:04d}.npz"


def _genome_key(genome: Genome) -> str:
    """The sequences and lengths a part was scanned from (a gather refuses other ones)."""
    return json.dumps(list(genome.lengths.items()))


def _scan_part(model, genome: Genome, out: Path, part: tuple[int, int], chunk: int,
               device, precision: str) -> dict:  # fmt: skip
    """Scan job ``part = (i, n)`` and keep its sites in ``OUT/parts/`` (atomically)."""
    index, parts = part
    pieces = plan_pieces(genome.lengths, parts, chunk)[index - 1]
    began = time.perf_counter()
    bases = sum(p.end - p.start for p in pieces)
    with Counter(f"scan part {index}/{parts}", total=bases, unit="bp") as counter:
        tables = scan_pieces(model, genome, pieces, chunk=chunk, device=device,
                             progress=counter.update, precision=precision)  # fmt: skip
    seconds = time.perf_counter() - began
    path = part_path(out, index, parts)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp, open(tmp, "wb") as handle:
        np.savez(handle, seqid=np.array([t.seqid for t in tables], dtype=str),
                 count=np.array([len(t) for t in tables], np.int64),
                 position=_joined(tables, "position", np.int64),
                 channel=_joined(tables, "channel", np.int16),
                 strand=_joined(tables, "strand", np.int8),
                 score=_joined(tables, "score", np.float32),
                 meta=np.array(json.dumps({"part": index, "parts": parts, "chunk": chunk,
                                           "precision": precision,
                                           "genome": _genome_key(genome),
                                           "seconds": seconds})))  # fmt: skip
    return {"part": index, "parts": parts, "pieces": len(pieces), "bases": int(bases),
            "sites": int(sum(len(t) for t in tables)), "seconds": round(seconds, 2),
            "file": str(path)}  # fmt: skip


def _joined(tables: list[SiteTable], field: str, dtype) -> np.ndarray:
    arrays = [getattr(t, field) for t in tables]
    return np.concatenate(arrays).astype(dtype) if arrays else np.zeros(0, dtype)


def _gather_parts(genome: Genome, out: Path, parts: int, chunk: int, precision: str,
                  store: SiteStore) -> float:  # fmt: skip
    """The sites of the ``parts`` jobs in ``OUT/parts/`` into ``store`` (one part in memory
    at a time), and the seconds the jobs scanned for; a one-line error for a missing part or
    one scanned from another genome, chunk size or precision (every part is checked before
    any is read, so a refused gather has read nothing)."""
    paths = [part_path(out, index, parts) for index in range(1, parts + 1)]
    seconds = 0.0
    for index, path in enumerate(paths, 1):
        if not path.is_file():
            raise InputError(f"{path}: missing; scan it first (scan --part {index}/{parts})")
        with np.load(path) as z:
            meta = json.loads(str(z["meta"]))
        if meta["genome"] != _genome_key(genome) or meta["chunk"] != chunk:
            raise InputError(f"{path}: scanned from another genome or --chunk than this "
                             "gather's; scan the parts again")  # fmt: skip
        if meta.get("precision", "float32") != precision:
            raise InputError(f"{path}: scanned with --precision {meta['precision']}, "
                             f"this gather has {precision}; give the same precision")
        seconds += float(meta["seconds"])
    for path in paths:
        with np.load(path) as z:
            arrays = {k: z[k] for k in ("position", "channel", "strand", "score")}
            ends = np.cumsum(z["count"])
            for seqid, end, count in zip(z["seqid"], ends, z["count"]):
                pick = slice(int(end - count), int(end))
                store.add(SiteTable(str(seqid), *(arrays[k][pick] for k in
                                                  ("position", "channel", "strand", "score"))))
    return seconds
