"""Scan a genome with a finished run's model and write its motif tracks: BED9 (+ .track),
bigBed, per-motif bigWigs, the files that open them in a genome browser (a BED with its track
line, an IGV session, an igv.js config, a UCSC hub) and the ``scan.json`` summary (the
``scan`` verb).

``export.scan`` finds the sites, ``export.tracks`` writes them, ``export.browser`` the browser
files; this module joins them to a run directory and its exported motifs.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from ..errors import InputError
from ..export.browser import BrowserTracks, write_browser_files
from ..export.formats import ExportedMotif, read_meme_motifs
from ..export.scan import activation_track, scan_genome
from ..export.tracks import motif_colour_map, track_line, write_bigwig, write_tracks
from ..genome.fasta import Genome
from ..io import safe_child, write_json_atomic
from ..progress import Counter
from ..rundir import MOTIFS_MEME, MOTIFS_SUMMARY, SCAN_SUMMARY
from ..rundir import motifs_dir as run_motifs_dir
from ..train.loading import load_run, recorded_sources


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
) -> dict:
    """Scan ``fasta`` (None: the genome the run's dataset was built from; an error where the
    run records none) with run ``run``'s model; write BED9 (+ .track), bigBed, per-motif
    bigWigs, the browser files (``export.browser``) and, last, ``scan.json`` (this summary,
    the mark of a finished scan) to ``out``. Motifs (ids, names, trimmed spans) come from
    ``motifs_dir`` (default ``RUN/motifs``, made by ``export``)."""
    run, out = Path(run), Path(out)
    motifs_dir = Path(motifs_dir) if motifs_dir else run_motifs_dir(run)
    summary_path = motifs_dir / MOTIFS_SUMMARY
    if not summary_path.is_file():
        raise InputError(f"{motifs_dir}: no {MOTIFS_SUMMARY}; run `sparling-genomics export` first")
    summary = json.loads(summary_path.read_text())
    meme = read_meme_motifs(motifs_dir / MOTIFS_MEME)
    listed = [m["id"] for m in summary["motifs"]]
    if [key.split()[0] for key in meme] != listed:
        raise InputError(
            f"{motifs_dir / 'motifs.meme'}: motifs do not match motifs.json "
            f"({len(meme)} vs {len(listed)}); export again"
        )
    _, task, model, torch_device = load_run(run, device=device, dataset=dataset)
    fasta, _ = recorded_sources(run, task, fasta, annotation=False)
    genome = Genome(fasta)
    rf = int(model.g.receptive_field)
    motifs, offsets = [], {}
    for entry, probs in zip(summary["motifs"], meme.values()):
        safe_child(out, entry["id"], ".bw")  # refuse ids that could leave OUT, before any work
        motifs.append(ExportedMotif(entry["id"], probs, entry["nsites"],
                                    (entry["name"] or "").replace(" ", "_"),
                                    entry["channel"], entry["offset"],
                                    entry.get("family") or ""))  # fmt: skip
        offsets[entry["channel"]] = int(entry["offset"])
    out.mkdir(parents=True, exist_ok=True)
    began = time.perf_counter()
    with Counter("scan", total=sum(genome.lengths.values()), unit="bp") as counter:
        tables = scan_genome(model, genome, chunk=chunk, device=torch_device,
                             progress=counter.update)  # fmt: skip
    scan_seconds = time.perf_counter() - began
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
        "device": str(torch_device),
        "motifs": len(motifs),
        "sites": int(sum(len(t) for t in tables)),
        "bed_rows": n_rows,
        "scan_seconds": round(scan_seconds, 2),
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
