"""The scale benchmark's inputs at each size: sizes in decimal units, the size's genome (made by
``scripts/make_scale_genome.py``: copies of the bundled chromosomes, ~1% substitutions per
copy, ~45% of the bases annotated at every size; reused when its summary says it was made
with the same settings) and the random SNVs drawn uniformly over it (seeded; VCF sorted in
FASTA order, with ``##contig`` lines).
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

import numpy as np

from sparling_genomics.genome.fasta import Genome
from sparling_genomics.genome.fasta_index import fai_path
from sparling_genomics.genome.fasta_index import read_fai as read_index
from sparling_genomics.io import write_json_atomic, write_text_atomic

from .scale_steps import REPO, SizePaths, log_tail, measure_command, read_json_or_none

SCRIPT = REPO / "scripts" / "make_scale_genome.py"
UNITS = {"": 1, "K": 10**3, "M": 10**6, "G": 10**9}


def parse_size(text: str) -> int:
    """Bases of ``100M``, ``1G``, ``2.5M``, ``500k`` or ``1234`` (decimal units)."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kKmMgG]?)[bB]?\s*", str(text))
    if not match or float(match[1]) * UNITS[match[2].upper()] < 1:
        raise ValueError(f"{text!r} is not a size (e.g. 2M, 100M, 1G or a number of bases)")
    return int(round(float(match[1]) * UNITS[match[2].upper()]))


def size_label(bases: int) -> str:
    """``100M`` for 100,000,000 (the shortest exact decimal label)."""
    for unit in ("G", "M", "K"):
        if bases % UNITS[unit] == 0:
            return f"{bases // UNITS[unit]}{unit}"
    return str(bases)



_CODE = np.full(256, 4, dtype=np.uint8)
for _i, _b in enumerate(b"ACGT"):
    _CODE[_b] = _CODE[_b + 32] = _i


def read_fai(fasta: Path) -> list[tuple[str, int, int, int, int]]:
    """Rows of ``FASTA.fai``: name, length, offset, bases a line, bytes a line; the index
    checked against the FASTA first (``Genome``: a stale one is rebuilt, or refused)."""
    Genome(fasta)
    return [(r.name, r.length, r.offset, r.line_bases, r.line_bytes)
            for r in read_index(fai_path(fasta))]  # fmt: skip


def write_random_snvs(fasta: Path, vcf: Path, n: int, seed: int = 0) -> dict:
    """``n`` SNVs at distinct positions drawn uniformly over the genome (A/C/G/T reference
    bases only; the alternative one of the other three), as a VCF sorted in FASTA order with
    a ``##contig`` line per sequence. Bases are read through the ``.fai`` from a memory map:
    the genome is never loaded."""
    rows = read_fai(fasta)
    fai = np.array([r[1:] for r in rows], dtype=np.int64)  # length, offset, bases, bytes a line
    starts = np.concatenate([[0], np.cumsum(fai[:, 0])[:-1]])
    total = int(fai[:, 0].sum())
    if n > total // 2:
        raise ValueError(f"{n:,} SNVs is too many for a {total:,}-base genome")
    genome = np.memmap(fasta, dtype=np.uint8, mode="r")

    def locate(at: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Each genome-wide position's sequence, position in it and byte in the FASTA."""
        index = np.searchsorted(starts, at, side="right") - 1
        pos = at - starts[index]
        _, offset, per_line, width = fai[index].T
        return index, pos, offset + pos // per_line * width + pos % per_line

    rng = np.random.default_rng(seed)
    drawn = np.zeros(0, dtype=np.int64)
    kept = np.zeros(0, dtype=np.int64)
    while len(kept) < n:
        drawn = np.concatenate([drawn, rng.integers(0, total, size=n + 1000)])
        codes = _CODE[genome[locate(drawn)[2]]]
        _, first = np.unique(drawn, return_index=True)
        valid = np.zeros(len(drawn), dtype=bool)
        valid[first] = True
        kept = np.flatnonzero(valid & (codes < 4))[:n]  # first n distinct A/C/G/T draws
    index, pos, at_byte = locate(np.sort(drawn[kept]))
    ref = _CODE[genome[at_byte]]
    alt = (ref + rng.integers(1, 4, size=len(ref))) % 4
    letters = np.frombuffer(b"ACGT", dtype=np.uint8)
    header = ["##fileformat=VCFv4.2", "##source=sparling-genomics benchmarks scale (random SNVs, "
              f"seed {seed})", f"##reference=file://{Path(fasta).resolve()}"]  # fmt: skip
    header += [f"##contig=<ID={name},length={length}>" for name, length, *_ in rows]
    header.append("#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO")
    names = [r[0] for r in rows]
    body = [f"{names[s]}\t{p + 1}\tsnv{i}\t{chr(letters[r])}\t{chr(letters[a])}\t.\t.\t."
            for i, (s, p, r, a) in enumerate(zip(index, pos, ref, alt))]  # fmt: skip
    write_text_atomic(vcf, "\n".join(header + body) + "\n")
    return {"variants": len(body), "seed": seed, "sequences_hit": int(len(set(index.tolist())))}


def prepare_inputs(paths: SizePaths, bases: int, settings: dict, runner=measure_command) -> dict:
    """The size's genome (made now, or reused when its summary has the same size, seed and
    rate and its files are there: a clone keeps the summary alone) and its random SNVs
    (reused when made for that genome with the same count and seed); what was done and how
    long it took."""
    made: dict = {}
    summary = read_json_or_none(paths.genome_summary)
    files = (paths.fasta, Path(f"{paths.fasta}.fai"), paths.gff)
    same = summary is not None and all(f.is_file() for f in files) and (
        summary.get("requested_bases"), summary.get("seed"), summary.get("requested_rate")
    ) == (bases, settings["seed"], settings["substitution_rate"])
    if not same:
        paths.vcf_summary.unlink(missing_ok=True)  # SNVs of another genome
        command = [sys.executable, str(SCRIPT), "--size", str(bases), "--out",
                   str(paths.genome_dir), "--seed", str(settings["seed"]), "--quiet",
                   "--substitution-rate", str(settings["substitution_rate"])]  # fmt: skip
        measured = runner(command, paths.log("generate"))
        if measured["exit_code"] != 0:
            raise RuntimeError(f"making the {size_label(bases)} genome failed:\n"
                               f"{log_tail(paths.log('generate'))}")  # fmt: skip
        summary = read_json_or_none(paths.genome_summary)
        if summary is None:  # a mocked runner in tests writes nothing
            summary = {"bases": bases}
        made["generate"] = measured
    wanted = {"variants": settings["variants"], "seed": settings["seed"]}
    snvs = read_json_or_none(paths.vcf_summary)
    if not (snvs and paths.vcf.is_file() and {k: snvs.get(k) for k in wanted} == wanted):
        began = time.perf_counter()
        snvs = write_random_snvs(paths.fasta, paths.vcf, settings["variants"],
                                 seed=settings["seed"])  # fmt: skip
        snvs["seconds"] = round(time.perf_counter() - began, 2)
        write_json_atomic(paths.vcf_summary, snvs)
        made["vcf"] = snvs
    keep = ("bases", "sequences", "annotated_sequences", "annotated_bases", "genes", "mrnas",
            "substitutions", "substitution_rate", "seconds")  # fmt: skip
    return {"genome": {k: summary[k] for k in keep if k in summary}, **made}


