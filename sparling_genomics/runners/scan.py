"""Scan a genome with a finished run's model and write its motif tracks: BED9 (+ .track),
bigBed, per-motif bigWigs, the files that open them in a genome browser (a BED with its track
line, an IGV session, an igv.js config, a UCSC hub) and the ``scan.json`` summary (the
``scan`` verb).

``export.scan`` finds the sites, ``export.tracks`` writes them, ``export.browser`` the browser
files; this module joins them to a run directory and its exported motifs.

On a cluster the scan scatters: ``part=(i, n)`` scans the i-th of n jobs of about equal bases
(``export.scan.plan_pieces``) into ``OUT/parts/part-i-of-n.npz``; ``gather=n`` joins the n
parts and writes the same files as one whole scan would, byte for byte. Each part records the
model, FASTA, precision and index it was scanned with, and a gather refuses one that does not
belong (``export.scan_parts``); a scan refuses motifs exported from other weights than the
run's (``train/provenance.py``).

Sites go to disk as they are found (``export.site_store``, ``OUT/.sites`` while the scan
runs) and the files are written from there one sequence at a time: a scan's memory does not
grow with the genome.
"""

from __future__ import annotations

import shutil
import time
from dataclasses import replace
from pathlib import Path

from ..export.browser import BrowserTracks, write_browser_files
from ..export.formats import ExportedMotif
from ..export.motif_summary import exported_motifs, motifs_summary_path, read_motifs_summary
from ..export.scan import activation_track, scan_genome
from ..export.scan_parts import PartOrigin, check_parts, gather_parts, scan_part
from ..export.scan_plan import SCAN_CHUNK, check_job_count
from ..export.site_store import SiteStore
from ..export.tracks import motif_colour_map, track_line, write_bigwig, write_tracks
from ..genome.fasta import Genome
from ..io import safe_child, write_json_atomic
from ..progress import Counter
from ..rundir import SCAN_SUMMARY, read_run_json
from ..rundir import motifs_dir as run_motifs_dir
from ..train.loading import load_run, recorded_sources
from ..train.provenance import check_same_model, run_fingerprint

STORE_DIR = ".sites"  # OUT/.sites: the scan's sites on disk until the files are written


def scan_run_to_tracks(
    run,
    fasta,
    out,
    *,
    motifs_dir=None,
    chunk: int = SCAN_CHUNK,
    device: str | None = None,
    dataset: Path | None = None,
    bigwig: bool = True,
    part: tuple[int, int] | None = None,
    gather: int | None = None,
    precision: str = "float32",
    stability: Path | None = None,
) -> dict:
    """Scan ``fasta`` (None: the genome the run's dataset was built from; an error where the
    run records none) with run ``run``'s model; write BED9 (+ .track), bigBed, per-motif
    bigWigs, the browser files (``export.browser``) and, last, ``scan.json`` (this summary,
    the mark of a finished scan) to ``out``. Motifs (ids, names, trimmed spans) come from
    ``motifs_dir`` (default ``RUN/motifs``, made by ``export``). ``part=(i, n)``: scan only
    job i of n into ``OUT/parts/``; ``gather=n``: write the files from those n parts;
    ``precision``: the model's arithmetic (``export.scan.PRECISIONS``); ``stability``: the
    ``stability`` verb's JSON over the seeds of the run's setting, to put each site's
    consensus family first in its BED name and colour the tracks by it."""
    run, out = Path(run), Path(out)
    fingerprint = run_fingerprint(run)
    motifs, offsets = _exported_motifs(run, motifs_dir, out, fingerprint)
    if stability is not None:
        motifs = _with_groups(motifs, Path(stability), run)
    loaded = load_run(run, device=device, dataset=dataset)
    task, model = loaded.task, loaded.model
    fasta, _ = recorded_sources(run, task, fasta, annotation=False)
    genome = Genome(fasta)
    if part is not None or gather is not None:
        parts, bases = part[1] if part is not None else gather, sum(genome.lengths.values())
        asked = f"--part {part[0]}/{parts}" if part is not None else f"--gather {parts}"
        check_job_count(parts, bases, f"{asked} would make {parts:,} scan jobs for the "
                                      f"{bases:,} bases of {fasta}")  # fmt: skip
    origin = PartOrigin(fingerprint, genome, chunk, precision)
    rf = int(model.g.receptive_field)
    began = time.perf_counter()
    if part is not None:
        return scan_part(model, origin, out, part, loaded.device)
    if gather is not None:
        scan_seconds = check_parts(out, gather, origin)  # before anything is written
    made = not out.exists()
    out.mkdir(parents=True, exist_ok=True)
    try:
        with SiteStore(out / STORE_DIR, list(genome.lengths)) as store:
            if gather is not None:
                gather_parts(out, gather, store)
            else:
                with Counter("scan", total=sum(genome.lengths.values()), unit="bp") as counter:
                    scan_genome(model, genome, chunk=chunk, device=loaded.device,
                                progress=counter.update, precision=precision,
                                keep=store.add)  # fmt: skip
                scan_seconds = time.perf_counter() - began
            return _write_scan(run, out, fasta, genome, store, motifs, offsets, rf,
                               bigwig=bigwig, device=loaded.device, precision=precision,
                               gather=gather, scan_seconds=scan_seconds, began=began,
                               model=fingerprint)  # fmt: skip
    except BaseException:
        if made:  # a failed or killed scan leaves no folder it made
            shutil.rmtree(out, ignore_errors=True)
        raise


def _write_scan(run: Path, out: Path, fasta: Path, genome: Genome, tables: SiteStore,
                motifs: list[ExportedMotif], offsets: dict[int, int], rf: int, *, bigwig: bool,
                device, precision: str, gather: int | None, scan_seconds: float,
                began: float, model: str) -> dict:  # fmt: skip
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
        "model": model,  # the run's model fingerprint (train/provenance.py)
        "fasta": str(fasta),
        "sequences": len(genome.lengths),
        "bases": int(sum(genome.lengths.values())),
        "device": str(device),
        "precision": precision,
        "motifs": len(motifs),
        **({"consensus": {m.id: m.group for m in motifs}} if any(m.group for m in motifs)
           else {}),  # fmt: skip
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


def _exported_motifs(run: Path, motifs_dir, out: Path,
                     fingerprint: str) -> tuple[list[ExportedMotif], dict]:  # fmt: skip
    """The run's exported motifs (``export.motif_summary``: ``motifs.json`` + ``motifs.meme``
    of ``motifs_dir``, default ``RUN/motifs``) and each channel's trimmed offset; one-line
    errors for an export of other weights than the run's (``fingerprint``) and for an id that
    would leave ``out``, before any work."""
    folder = Path(motifs_dir) if motifs_dir else run_motifs_dir(run)
    check_same_model(read_motifs_summary(folder).get("model"), run, fingerprint,
                     motifs_summary_path(folder), "export the run again")  # fmt: skip
    motifs = exported_motifs(folder)
    for m in motifs:
        safe_child(out, m.id, ".bw")
    return motifs, {m.channel: int(m.offset) for m in motifs}


def _with_groups(motifs: list[ExportedMotif], stability: Path, run: Path) -> list[ExportedMotif]:
    """``motifs`` with their families' consensus families (``export.consensus.run_groups``;
    imported here: the scan without it does not pay for the consensus code's imports)."""
    from ..export.consensus import run_groups

    groups = run_groups(read_run_json(stability, "made by `stability`"), stability, run,
                        {m.family for m in motifs if m.family})  # fmt: skip
    return [replace(m, group=groups.get(m.family, "")) for m in motifs]
