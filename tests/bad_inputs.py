"""The catalogue of bad (and merely messy) inputs tried against the CLI, and its docs table.

Each case writes its files into an empty folder, runs one ``sparling-genomics`` command there
(in process, through click's test runner) and states the exit code and the words the user
must see. ``tests/test_bad_inputs.py`` runs every case; ``python -m tests.bad_inputs`` writes
``docs/bad-inputs.md`` from what the commands print, and a test checks that file is current.
"""

from __future__ import annotations

import codecs
import gzip
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "bad-inputs.md"


def _random_dna(length: int, seed: int) -> str:
    return "".join(np.random.default_rng(seed).choice(list("ACGT"), size=length))


CHR1 = _random_dna(6000, 1)
CHR2 = _random_dna(3000, 2)


def fasta(records: dict[str, str] | None = None, width: int = 60, eol: str = "\n") -> bytes:
    records = records or {"chr1": CHR1, "chr2": CHR2}
    out = []
    for name, seq in records.items():
        out.append(f">{name}")
        out += [seq[i : i + width] for i in range(0, len(seq), width)]
    return (eol.join(out) + eol).encode()


GFF_LINES = [
    "##gff-version 3",
    "chr1\t.\tgene\t1001\t4000\t.\t+\t.\tID=g1;gene_biotype=protein_coding",
    "chr1\t.\tmRNA\t1001\t4000\t.\t+\t.\tID=t1;Parent=g1",
    "chr1\t.\texon\t1001\t1500\t.\t+\t.\tParent=t1",
    "chr1\t.\texon\t2001\t2500\t.\t+\t.\tParent=t1",
    "chr1\t.\texon\t3001\t4000\t.\t+\t.\tParent=t1",
    "chr1\t.\tCDS\t1101\t1500\t.\t+\t0\tParent=t1",
    "chr2\t.\tgene\t501\t2500\t.\t-\t.\tID=g2",
    "chr2\t.\tmRNA\t501\t2500\t.\t-\t.\tID=t2;Parent=g2",
    "chr2\t.\texon\t501\t900\t.\t-\t.\tParent=t2",
    "chr2\t.\texon\t1501\t2500\t.\t-\t.\tParent=t2",
]


def gff(lines: list[str] | None = None, rename: dict[str, str] | None = None) -> bytes:
    lines = GFF_LINES if lines is None else lines
    text = "\n".join(lines) + "\n"
    for old, new in (rename or {}).items():
        text = text.replace(f"{old}\t", f"{new}\t")
    return text.encode()


GTF = "\n".join(
    [
        'chr1\t.\ttranscript\t1001\t4000\t.\t+\t.\tgene_id "g1"; transcript_id "t1";',
        'chr1\t.\texon\t1001\t1500\t.\t+\t.\tgene_id "g1"; transcript_id "t1";',
        'chr1\t.\texon\t2001\t2500\t.\t+\t.\tgene_id "g1"; transcript_id "t1";',
        'chr1\t.\texon\t3001\t4000\t.\t+\t.\tgene_id "g1"; transcript_id "t1";',
    ]
).encode()

BED = (
    b"chr1\t1499\t1500\tdonor\t0\t+\nchr1\t2000\t2001\tacceptor\t0\t+\nchr2\t899\t900\tsite\t0\t-\n"
)


@dataclass
class Case:
    """One input tried: files to write, a command, the exit code and words to see."""

    id: str
    group: str
    given: str  # what the user gives, for the docs table
    files: dict[str, bytes | Callable[[Path], None]]
    args: list[str]
    exit: int = 2
    expect: list[str] = field(default_factory=list)
    # The folder gets ``run/``: a copy of a tiny trained run (True: planted; "sites": a
    # splicing run on the tiny reference, for the variants cases).
    needs_run: bool | str = False
    env: dict[str, str] = field(default_factory=dict)  # environment during the command
    # Folders made read-only before the command, which then runs in a subprocess as a user
    # the permissions bind (root's override dropped): ``run_read_only``.
    read_only: tuple[str, ...] = ()


def _dataset(*extra: str) -> list[str]:
    return ["dataset", *extra, "--out", "out.h5"]


def _tamper_checkpoint(folder: Path) -> None:
    path = folder / "run" / "checkpoints" / "final.pt"
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))


def _truncate_checkpoint(folder: Path) -> None:
    path = folder / "run" / "checkpoints" / "final.pt"
    path.write_bytes(path.read_bytes()[:1000])


def _pickle_checkpoint(folder: Path) -> None:
    import torch

    class Exploit:
        def __reduce__(self):
            return (os.system, ("touch PWNED",))

    torch.save({"format": "sparling-genomics-checkpoint-2", "x": Exploit()},
               folder / "run" / "checkpoints" / "final.pt")  # fmt: skip


def _escaping_motif_id(folder: Path) -> None:
    from sparling_genomics.export.motif_summary import read_motifs_summary, write_motifs_summary

    motifs = folder / "run" / "motifs"
    summary = read_motifs_summary(motifs)
    old = summary["motifs"][0]["id"]
    summary["motifs"][0]["id"] = "../../escaped"
    write_motifs_summary(motifs, summary)
    meme = (motifs / "motifs.meme").read_text()
    (motifs / "motifs.meme").write_text(meme.replace(f"MOTIF {old}", "MOTIF ../../escaped", 1))


def _torn_metrics(folder: Path) -> None:
    (folder / "run" / "metrics.json").write_text('{"task": "planted", "e2e": {')


def _dataset_gone(folder: Path) -> None:
    config = folder / "run" / "config.yaml"
    lines = [("  dataset: ../moved/dataset.h5" if line.startswith("  dataset: ") else line)
             for line in config.read_text().splitlines()]  # fmt: skip
    config.write_text("\n".join(lines) + "\n")


def _no_motifs(folder: Path) -> None:
    shutil.rmtree(folder / "run" / "motifs")


def _scaffolds(folder: Path, count: int = 10_000) -> None:
    """``genome.fa``: ``count`` gene-free 100 bp scaffolds (an unplaced-scaffold assembly)."""
    seq = CHR1[:100]
    (folder / "genome.fa").write_text("".join(f">scaffold_{i}\n{seq}\n" for i in range(count)))


def _with_scaffolds(folder: Path) -> None:
    """``genome.fa``: chr1 and chr2 (genes), 20 gene-free scaffolds and a ChrC."""
    extra = {f"scaffold_{i}": CHR2[100 * i : 100 * i + 800] for i in range(1, 21)}
    (folder / "genome.fa").write_bytes(fasta({"chr1": CHR1, "chr2": CHR2, **extra,
                                              "ChrC": CHR2[:2000]}))  # fmt: skip


def wav(digit: int = 0, rate: int = 48000) -> bytes:
    """A 0.2 s 16-bit mono WAV (a tone standing in for a spoken digit)."""
    import io

    from scipy.io import wavfile

    t = np.arange(int(0.2 * rate)) / rate
    buffer = io.BytesIO()
    pcm = (8000 * np.sin(2 * np.pi * (300 + 100 * digit) * t)).astype(np.int16)
    wavfile.write(buffer, rate, pcm)
    return buffer.getvalue()


def audiomnist(folder: str, digits=range(10), speaker: int = 1) -> dict[str, bytes]:
    """One speaker's clips in AudioMNIST's layout: FOLDER/<ss>/<digit>_<ss>_0.wav."""
    return {f"{folder}/{speaker:02d}/{d}_{speaker:02d}_0.wav": wav(d) for d in digits}


GOOD = {"genome.fa": fasta(), "genes.gff3": gff()}

TINY_SEQ = "".join((REPO / "reference" / "tiny" / "tiny.fa").read_text().splitlines()[1:])


def vcf(*rows: str, header: bool = True) -> bytes:
    """A VCF on the tiny reference (sequence NC_003070.9) with these record lines."""
    head = ["##fileformat=VCFv4.2", "##contig=<ID=NC_003070.9,length=300000>",
            "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO"] if header else []  # fmt: skip
    return ("\n".join(head + list(rows)) + "\n").encode()


def snv(pos: int, chrom: str = "NC_003070.9", ref: str | None = None, alt: str | None = None,
        text_pos: str | None = None) -> str:  # fmt: skip
    """A record line: by default the tiny reference's base at ``pos`` (1-based) -> another."""
    base = TINY_SEQ[pos - 1].upper()
    ref = ref or base
    alt = alt or "ACGT"[("ACGT".index(base) + 1) % 4]
    return f"{chrom}\t{text_pos or pos}\t.\t{ref}\t{alt}\t.\t.\t."


def _other_base(pos: int) -> str:
    return "ACGT"[("ACGT".index(TINY_SEQ[pos - 1].upper()) + 2) % 4]


_VARIANTS = ["variants", "--model", "run", "--vcf", "calls.vcf", "--out", "effects"]

CASES: list[Case] = [
    # --- FASTA ---------------------------------------------------------------------------
    Case("fasta-missing", "FASTA", "a FASTA path that does not exist",
         {"genes.gff3": gff()}, _dataset("--fasta", "nope.fa", "--gff", "genes.gff3"),
         expect=["nope.fa: FASTA file not found"]),
    Case("fasta-device", "FASTA", "a device or pipe given as the FASTA (`/dev/null`)",
         {"genes.gff3": gff()}, _dataset("--fasta", "/dev/null", "--gff", "genes.gff3"),
         expect=["/dev/null: FASTA file expected, but this is not a regular file"]),
    Case("fasta-folder", "FASTA", "a folder given as the FASTA",
         {"genes.gff3": gff(), "genome/keep.txt": b""},
         _dataset("--fasta", "genome", "--gff", "genes.gff3"),
         expect=["genome: FASTA file expected, but this is a folder"]),
    Case("fasta-empty", "FASTA", "an empty FASTA file",
         {"genome.fa": b"", "genes.gff3": gff()},
         _dataset("--fasta", "genome.fa", "--gff", "genes.gff3"),
         expect=["genome.fa: FASTA holds no sequences"]),
    Case("fasta-not-fasta", "FASTA", "a file that is not FASTA (e.g. a GFF given as FASTA)",
         {"genome.fa": gff(), "genes.gff3": gff()},
         _dataset("--fasta", "genome.fa", "--gff", "genes.gff3"),
         expect=["genome.fa: not a FASTA file"]),
    Case("fasta-protein", "FASTA", "a protein FASTA",
         {"genome.fa": b">p1\n" + b"MKVLLAEEQRSTWYPHGFIKL" * 20 + b"\n", "genes.gff3": gff()},
         _dataset("--fasta", "genome.fa", "--gff", "genes.gff3"),
         expect=["genome.fa:", "protein FASTA"]),
    Case("fasta-duplicate", "FASTA", "two records with the same name",
         {"genome.fa": fasta() + b">chr1\nACGT\n", "genes.gff3": gff()},
         _dataset("--fasta", "genome.fa", "--gff", "genes.gff3"),
         expect=["genome.fa:", "duplicate sequence name 'chr1' (first at line 1)"]),
    Case("fasta-bare-header", "FASTA", "a '>' line without a name",
         {"genome.fa": fasta() + b">\nACGT\n", "genes.gff3": gff()},
         _dataset("--fasta", "genome.fa", "--gff", "genes.gff3"),
         expect=["genome.fa:", "record without a name"]),
    Case("fasta-digits", "FASTA", "digits inside a sequence (a gzip FASTA, read whole)",
         {"genome.fa.gz": gzip.compress(fasta({"chr1": CHR1[:1200] + "1234" + CHR1[1204:],
                                               "chr2": CHR2})),
          "genes.gff3": gff()},
         _dataset("--fasta", "genome.fa.gz", "--gff", "genes.gff3"),
         expect=["genome.fa.gz:22: '1' in sequence 'chr1' is not a nucleotide code"]),
    Case("fasta-digits-indexed", "FASTA", "the same in a plain FASTA (indexed, read by window)",
         {"genome.fa": fasta({"chr1": CHR1[:1200] + "1234" + CHR1[1204:], "chr2": CHR2}),
          "genes.gff3": gff()},
         _dataset("--fasta", "genome.fa", "--gff", "genes.gff3"),
         expect=["genome.fa: position 1201 of '1' in sequence 'chr1' is not a nucleotide code"]),
    Case("fasta-soft-masked", "FASTA", "soft-masked (lower-case) bases",
         {"genome.fa": fasta({"chr1": CHR1[:3000].lower() + CHR1[3000:], "chr2": CHR2}),
          "genes.gff3": gff()},
         _dataset("--fasta", "genome.fa", "--gff", "genes.gff3"), exit=0,
         expect=["wrote out.h5"]),
    Case("fasta-iupac", "FASTA", "IUPAC codes (R, Y, ...) and N runs",
         {"genome.fa": fasta({"chr1": CHR1[:100] + "RYKMSWN" * 20 + "N" * 500 + CHR1[740:],
                              "chr2": CHR2}), "genes.gff3": gff()},
         _dataset("--fasta", "genome.fa", "--gff", "genes.gff3"), exit=0,
         expect=["wrote out.h5"]),
    Case("fasta-gzip", "FASTA", "a gzip-compressed FASTA",
         {"genome.fa.gz": gzip.compress(fasta()), "genes.gff3": gff()},
         _dataset("--fasta", "genome.fa.gz", "--gff", "genes.gff3"), exit=0,
         expect=["wrote out.h5"]),
    Case("fasta-crlf", "FASTA", "Windows line endings (CRLF)",
         {"genome.fa": fasta(eol="\r\n"), "genes.gff3": gff()},
         _dataset("--fasta", "genome.fa", "--gff", "genes.gff3"), exit=0,
         expect=["wrote out.h5"]),
    Case("fasta-ragged", "FASTA", "lines of unequal length and blank lines (not indexable)",
         {"genome.fa": fasta().replace(b"\n", b"\n\n", 3).replace(CHR1[:60].encode(),
                                                                  CHR1[:30].encode() + b"\n"
                                                                  + CHR1[30:60].encode()),
          "genes.gff3": gff()},
         _dataset("--fasta", "genome.fa", "--gff", "genes.gff3"), exit=0,
         expect=["wrote out.h5"]),
    Case("fasta-as-reference", "FASTA", "a FASTA given as --reference (SpliceAI's habit)",
         GOOD, _dataset("--reference", "genome.fa"),
         expect=["genome.fa: is a FASTA file, not a reference manifest; give it with --fasta "
                 "(and the annotation with --gff)"]),
    Case("fasta-gzip-as-reference", "FASTA", "the same, gzip-compressed",
         {"genome.fa.gz": gzip.compress(fasta())}, _dataset("--reference", "genome.fa.gz"),
         expect=["genome.fa.gz: is a FASTA file, not a reference manifest", "--fasta"]),
    # --- names -----------------------------------------------------------------------------
    Case("names-chr-prefix", "chromosome names", "GFF says '1', FASTA says 'chr1'",
         {"genome.fa": fasta(), "genes.gff3": gff(rename={"chr1": "1", "chr2": "2"})},
         _dataset("--fasta", "genome.fa", "--gff", "genes.gff3"),
         expect=["genes.gff3:2: sequence '1' is not in the FASTA", "FASTA has: chr1, chr2",
                 "genes.gff3 has: 1, 2", "'1<TAB>chr1'", "--chrom-aliases"]),
    Case("names-refseq", "chromosome names",
         "FASTA from RefSeq ('NC_003070.9 ... chromosome 1'), BED from UCSC ('chr1')",
         {"genome.fa": fasta({"NC_003070.9 Arabidopsis thaliana chromosome 1": CHR1}),
          "sites.bed": b"chr1\t1499\t1500\tdonor\n"},
         _dataset("--fasta", "genome.fa", "--bed", "sites.bed"),
         expect=["sites.bed:1: sequence 'chr1' is not in the FASTA", "'chr1<TAB>NC_003070.9'"]),
    Case("names-aliases", "chromosome names", "the same GFF with an alias file",
         {"genome.fa": fasta(), "genes.gff3": gff(rename={"chr1": "1", "chr2": "2"}),
          "aliases.txt": b"# GFF name, FASTA name\n1\tchr1\nchr2 2\n"},
         _dataset("--fasta", "genome.fa", "--gff", "genes.gff3", "--chrom-aliases",
                  "aliases.txt"), exit=0, expect=["wrote out.h5"]),
    Case("names-alias-unknown", "chromosome names", "an alias line naming no FASTA sequence",
         {**GOOD, "aliases.txt": b"1\tchrOne\n"},
         _dataset("--fasta", "genome.fa", "--gff", "genes.gff3", "--chrom-aliases",
                  "aliases.txt"),
         expect=["aliases.txt:1: none of '1', 'chrOne' is a sequence of the FASTA"]),
    Case("names-extra-sequences", "chromosome names",
         "a GFF that also covers sequences the FASTA lacks (organelles), told to skip them",
         {"genome.fa": fasta(), "genes.gff3": gff([
             *GFF_LINES, "ChrC\t.\tgene\t1\t900\t.\t+\t.\tID=gc",
             "ChrC\t.\tmRNA\t1\t900\t.\t+\t.\tID=tc;Parent=gc",
             "ChrC\t.\texon\t1\t900\t.\t+\t.\tParent=tc"])},
         _dataset("--fasta", "genome.fa", "--gff", "genes.gff3", "--skip-unknown-sequences"),
         exit=0, expect=['"ChrC": 3', "wrote out.h5"]),
    # --- many sequences, and the split ------------------------------------------------------
    Case("split-chromosomes", "many sequences and the split",
         "whole held-out chromosomes, beside 20 gene-free scaffolds and an organelle",
         {"genome": _with_scaffolds, "genes.gff3": gff()},
         _dataset("--fasta", "genome.fa", "--gff", "genes.gff3", "--split", "chromosomes",
                  "--test-sequences", "chr2", "--val-fraction", "0"), exit=0,
         expect=["split: whole held-out sequences: train chr1 (", "test chr2, named (",
                 "21 sequences skipped (no labelled site on them: scaffold_1, ", "wrote out.h5"]),
    Case("split-unknown-sequence", "many sequences and the split",
         "a held-out sequence the FASTA does not have",
         GOOD, _dataset("--fasta", "genome.fa", "--gff", "genes.gff3", "--split", "chromosomes",
                        "--test-sequences", "chr9"),
         expect=["--test-sequences: 'chr9' is not a sequence of genome.fa (did you mean"]),
    Case("split-names-without-mode", "many sequences and the split",
         "held-out sequences named without `--split chromosomes`",
         GOOD, _dataset("--fasta", "genome.fa", "--gff", "genes.gff3", "--test-sequences", "chr2"),
         expect=["--test-sequences/--val-sequences name whole held-out sequences: give them "
                 "with --split chromosomes"]),
    Case("split-too-few-chromosomes", "many sequences and the split",
         "`--split chromosomes` on a genome with genes on two sequences",
         GOOD, _dataset("--fasta", "genome.fa", "--gff", "genes.gff3", "--split", "chromosomes"),
         expect=["genome.fa: --split chromosomes needs 3 sequences with labelled sites",
                 "use --split blocks"]),
    Case("scaffolds-no-genes", "many sequences and the split",
         "a FASTA of 10,000 scaffolds and a GFF with no gene on them (repeats only)",
         {"genome": _scaffolds, "genes.gff3": gff([
             f"scaffold_{i}\t.\trepeat_region\t1\t50\t.\t+\t.\tID=r{i}"
             for i in range(0, 10_000, 7)])},
         _dataset("--fasta", "genome.fa", "--gff", "genes.gff3"),
         expect=["genes.gff3: no protein-coding transcripts with exons on any of the 10,000 "
                 "sequences of genome.fa (scaffold_0, ", "repeat_region 1,429"]),
    Case("scaffolds-other-assembly", "many sequences and the split",
         "the same FASTA beside a GFF of another assembly, its lines skipped on request",
         {"genome": _scaffolds, "genes.gff3": gff()},
         _dataset("--fasta", "genome.fa", "--gff", "genes.gff3", "--skip-unknown-sequences"),
         expect=["genes.gff3: no protein-coding transcripts with exons on any of the 10,000",
                 "10 lines on sequences the FASTA lacks skipped (chr1, chr2)"]),
    # --- GFF / GTF ---------------------------------------------------------------------------
    Case("gff-past-end", "GFF/GTF", "a feature past the end of its sequence",
         {"genome.fa": fasta(), "genes.gff3": gff([*GFF_LINES[:5],
                                                   "chr1\t.\texon\t3001\t6100\t.\t+\t.\tParent=t1"])},
         _dataset("--fasta", "genome.fa", "--gff", "genes.gff3"),
         expect=["genes.gff3:6: exon ends at 6100, beyond the end of chr1 (length 6000)"]),
    Case("gff-missing-parent", "GFF/GTF", "an exon whose Parent is never defined",
         {"genome.fa": fasta(), "genes.gff3": gff([*GFF_LINES,
                                                   "chr1\t.\texon\t5001\t5100\t.\t+\t.\tParent=t9"])},
         _dataset("--fasta", "genome.fa", "--gff", "genes.gff3"),
         expect=["genes.gff3:12: exon has Parent 't9', which no feature defines"]),
    Case("gff-unsorted", "GFF/GTF", "lines in any order (exons before their mRNA and gene)",
         {"genome.fa": fasta(), "genes.gff3": gff(list(reversed(GFF_LINES)))},
         _dataset("--fasta", "genome.fa", "--gff", "genes.gff3"), exit=0,
         expect=["wrote out.h5"]),
    Case("gff-fasta-section", "GFF/GTF", "a GFF with a ##FASTA section at its end",
         {"genome.fa": fasta(), "genes.gff3": gff() + b"##FASTA\n" + fasta()},
         _dataset("--fasta", "genome.fa", "--gff", "genes.gff3"), exit=0,
         expect=["wrote out.h5"]),
    Case("gff-is-gtf", "GFF/GTF", "a GTF file named .gff3",
         {"genome.fa": fasta(), "genes.gff3": GTF},
         _dataset("--fasta", "genome.fa", "--gff", "genes.gff3"), exit=0,
         expect=["wrote out.h5"]),
    Case("gff-spaces", "GFF/GTF", "columns separated by spaces, not tabs",
         {"genome.fa": fasta(), "genes.gff3": gff().replace(b"\t", b" ")},
         _dataset("--fasta", "genome.fa", "--gff", "genes.gff3"),
         expect=["genes.gff3:2: expected 9 tab-separated columns"]),
    Case("gff-reversed", "GFF/GTF", "a feature with start > end",
         {"genome.fa": fasta(), "genes.gff3": gff([*GFF_LINES[:3],
                                                   "chr1\t.\texon\t1500\t1001\t.\t+\t.\tParent=t1"])},
         _dataset("--fasta", "genome.fa", "--gff", "genes.gff3"),
         expect=["genes.gff3:4: bad coordinates 1500..1001"]),
    Case("gff-bad-strand", "GFF/GTF", "an exon whose strand is not '+', '-', '.' or '?'",
         {"genome.fa": fasta(), "genes.gff3": gff([*GFF_LINES[:4],
                                                   GFF_LINES[4].replace("\t+\t", "\tplus\t"),
                                                   *GFF_LINES[5:]])},
         _dataset("--fasta", "genome.fa", "--gff", "genes.gff3"),
         expect=["genes.gff3:5: strand 'plus' is not '+', '-', '.' or '?'"]),
    Case("gff-bad-phase", "GFF/GTF", "a CDS phase outside 0, 1, 2",
         {"genome.fa": fasta(), "genes.gff3": gff([*GFF_LINES[:6],
                                                   GFF_LINES[6].replace("\t0\t", "\t3\t"),
                                                   *GFF_LINES[7:]])},
         _dataset("--fasta", "genome.fa", "--gff", "genes.gff3"),
         expect=["genes.gff3:7: phase '3' is not 0, 1, 2 or '.'"]),
    Case("gff-no-coding", "GFF/GTF", "an annotation without protein-coding transcripts",
         {"genome.fa": fasta(), "genes.gff3": gff([
             "chr1\t.\tncRNA_gene\t1001\t4000\t.\t+\t.\tID=g1",
             "chr1\t.\tlnc_RNA\t1001\t4000\t.\t+\t.\tID=t1;Parent=g1"])},
         _dataset("--fasta", "genome.fa", "--gff", "genes.gff3"),
         expect=["genes.gff3: no protein-coding transcripts with exons"]),
    Case("gff-bad-gzip", "GFF/GTF", "a truncated gzip annotation",
         {"genome.fa": fasta(), "genes.gff3.gz": gzip.compress(gff() * 50)[:200]},
         _dataset("--fasta", "genome.fa", "--gff", "genes.gff3.gz"),
         expect=["genes.gff3.gz: cannot read annotation"]),
    # --- BED -----------------------------------------------------------------------------------
    Case("bed-headers", "BED", "track/browser/# lines and a header row",
         {"genome.fa": fasta(),
          "sites.bed": b'browser position chr1:1-100\ntrack name="sites"\n# mine\n'
                       b"chrom\tstart\tend\tname\n" + BED},
         _dataset("--fasta", "genome.fa", "--bed", "sites.bed"), exit=0,
         expect=["wrote out.h5"]),
    Case("bed-one-based", "BED", "a 1-based single base (start = end)",
         {"genome.fa": fasta(), "sites.bed": b"chr1\t1500\t1500\tdonor\n"},
         _dataset("--fasta", "genome.fa", "--bed", "sites.bed"),
         expect=["sites.bed:1: empty or reversed interval 1500-1500", "'1499<TAB>1500'"]),
    Case("bed-reversed", "BED", "start > end",
         {"genome.fa": fasta(), "sites.bed": b"chr1\t1600\t1500\tdonor\n"},
         _dataset("--fasta", "genome.fa", "--bed", "sites.bed"),
         expect=["sites.bed:1: empty or reversed interval 1600-1500", "swapped"]),
    Case("bed-unknown-chrom", "BED", "a chromosome the FASTA does not have",
         {"genome.fa": fasta(), "sites.bed": BED + b"chrM\t10\t11\tsite\n"},
         _dataset("--fasta", "genome.fa", "--bed", "sites.bed"),
         expect=["sites.bed:4: sequence 'chrM' is not in the FASTA"]),
    Case("bed-three-columns", "BED", "a BED3 (no name/class column)",
         {"genome.fa": fasta(), "sites.bed": b"chr1\t1499\t1500\n"},
         _dataset("--fasta", "genome.fa", "--bed", "sites.bed"),
         expect=["sites.bed:1: a labelled BED needs at least 4 columns"]),
    Case("bed-not-integer", "BED", "a non-integer coordinate inside the file",
         {"genome.fa": fasta(), "sites.bed": BED + b"chr1\t1,500\t1,501\tdonor\n"},
         _dataset("--fasta", "genome.fa", "--bed", "sites.bed"),
         expect=["sites.bed:4: start/end must be integers, got '1,500', '1,501'"]),
    Case("bed-bad-strand", "BED", "a strand that is not '+', '-' or '.'",
         {"genome.fa": fasta(), "sites.bed": BED + b"chr1\t1499\t1500\tdonor\t0\tforward\n"},
         _dataset("--fasta", "genome.fa", "--bed", "sites.bed"),
         expect=["sites.bed:4: strand 'forward' is not '+', '-' or '.'"]),
    Case("bed-bad-score", "BED", "a score that is not a number",
         {"genome.fa": fasta(), "sites.bed": BED + b"chr1\t1499\t1500\tdonor\thigh\t+\n"},
         _dataset("--fasta", "genome.fa", "--bed", "sites.bed"),
         expect=["sites.bed:4: score 'high' is not a number"]),
    # --- configs -------------------------------------------------------------------------------
    Case("config-unknown-key", "config", "an unknown config key, close to a known one",
         {}, ["train", "--task", "planted", "--preset", "tiny", "--set", "train.max_sample=10",
              "--out", "run"],
         expect=["unknown config key 'train.max_sample'; did you mean 'train.max_samples'? "
                 "(known here: "]),
    Case("config-unknown-key-yaml", "config", "a misspelt key in a YAML config file",
         {"my.yaml": b"model:\n  sparse:\n    momentm: 0.9\n"},
         ["train", "--task", "planted", "--preset", "tiny", "--config", "my.yaml", "--out", "run"],
         expect=["unknown config key 'model.sparse.momentm'; did you mean "
                 "'model.sparse.momentum'?"]),
    Case("config-unknown-key-far", "config", "an unknown config key like no known one",
         {}, ["train", "--task", "planted", "--preset", "tiny", "--set", "train.colour=red",
              "--out", "run"], expect=["unknown config key 'train.colour' (known here: "]),
    Case("config-unknown-task", "config", "a misspelt task name",
         {}, ["train", "--task", "splicng", "--preset", "tiny", "--out", "run"],
         expect=["unknown task 'splicng' (did you mean 'splicing'?); choose from: "]),
    Case("config-nan", "config", "a learning rate of nan",
         {}, ["train", "--task", "planted", "--preset", "tiny", "--set", "train.lr=nan",
              "--out", "run"], expect=["config key 'train.lr' must be a finite number"]),
    Case("config-negative-seed", "config", "a negative seed",
         {}, ["train", "--task", "planted", "--preset", "tiny", "--set", "seed=-1",
              "--out", "run"], expect=["config key 'seed' must not be negative, got -1"]),
    Case("config-zero-dilation", "config", "a dilation of 0 in a list of them",
         {}, ["train", "--task", "splicing", "--preset", "tiny", "--set",
              "model.head_dilations=[1,0]", "--out", "run"],
         expect=["config key 'model.head_dilations[1]' must be at least 1, got 0"]),
    Case("config-blocks-unsupported", "config", "motif blocks for a task that has none",
         {}, ["train", "--task", "digit_circle", "--preset", "tiny", "--set",
              "model.sparse.block_size=2", "--out", "run"],
         expect=["motif blocks are built for the planted and splicing tasks only"]),
    Case("config-strand-rule-one-strand", "config", "the strand rule for a model that reads one "
         "strand", {}, ["train", "--task", "planted", "--preset", "tiny", "--set",
                        "model.reverse_complement=false", "--set", "model.sparse.strand_window=8",
                        "--out", "run"],
         expect=["the strand rule needs a motif model that reads both strands"]),
    Case("config-wrong-type", "config", "a value of the wrong type (YAML file)",
         {"my.yaml": b"train:\n  max_samples: lots\n"},
         ["train", "--task", "planted", "--preset", "tiny", "--config", "my.yaml", "--out", "run"],
         expect=["'train.max_samples' must be a number, got 'lots'"]),
    Case("config-python-tag", "config", "YAML that asks to run code (!!python/object)",
         {"my.yaml": b'train:\n  max_samples: !!python/object/apply:os.system ["touch PWNED"]\n'},
         ["train", "--task", "planted", "--preset", "tiny", "--config", "my.yaml", "--out", "run"],
         expect=["my.yaml: line 2 is not valid YAML"]),
    Case("config-broken-yaml", "config", "YAML with a syntax error",
         {"my.yaml": b"train: [unclosed\n"},
         ["train", "--task", "planted", "--preset", "tiny", "--config", "my.yaml", "--out", "run"],
         expect=["my.yaml: line 2 is not valid YAML"]),
    # --- runs, checkpoints, motifs --------------------------------------------------------------
    Case("checkpoint-flipped-byte", "trained runs", "a checkpoint with one byte changed",
         {"tamper": _tamper_checkpoint}, ["export", "--model", "run", "--out", "motifs"],
         expect=["run/checkpoints/final.pt:"], needs_run=True),
    Case("checkpoint-truncated", "trained runs", "a truncated checkpoint",
         {"tamper": _truncate_checkpoint}, ["export", "--model", "run", "--out", "motifs"],
         expect=["run/checkpoints/final.pt: not a readable checkpoint"], needs_run=True),
    Case("checkpoint-pickle", "trained runs", "a checkpoint whose pickle would run a command",
         {"tamper": _pickle_checkpoint}, ["export", "--model", "run", "--out", "motifs"],
         expect=["run/checkpoints/final.pt: refused", "could run code"], needs_run=True),
    Case("run-torn-metrics", "trained runs", "a run whose metrics.json was cut off",
         {"tamper": _torn_metrics}, ["evaluate", "--model", "run", "--out", "scores.json"],
         expect=["run/metrics.json: not valid JSON"], needs_run=True),
    Case("run-no-checkpoint", "trained runs", "a folder that is not a finished run",
         {"run/config.yaml": b"task: planted\n"}, ["export", "--model", "run", "--out", "m"],
         expect=["run:"]),
    Case("run-dataset-gone", "trained runs", "a run whose dataset was moved away",
         {"tamper": _dataset_gone}, ["scan", "--model", "run", "--out", "tracks"],
         expect=["run: data.dataset ../moved/dataset.h5 is not there (looked for moved/dataset.h5",
                 "give --dataset PATH"], needs_run="sites"),
    Case("run-missing", "trained runs", "a run folder that does not exist",
         {}, ["scan", "--model", "nothere", "--out", "tracks"],
         expect=["nothere: no such run folder"]),
    Case("run-is-a-file", "trained runs", "a file given as the run",
         {"notes.txt": b"x"}, ["export", "--model", "notes.txt"],
         expect=["notes.txt: is a file, not a run folder"]),
    Case("verb-misspelt", "trained runs", "a misspelt verb",
         {}, ["scna", "--model", "run", "--out", "tracks"],
         expect=["no such verb 'scna' (did you mean 'scan'?)"]),
    Case("diagnose-not-a-run", "trained runs", "diagnose a folder that is not a run",
         {"notarun/notes.txt": b"x"}, ["diagnose", "--model", "notarun"],
         expect=["notarun: not a run folder (no config.yaml)"]),
    Case("diagnose-no-series", "trained runs", "diagnose a run trained without a checkpoint series",
         {}, ["diagnose", "--model", "run"],
         expect=["run: no checkpoint series", "keep_checkpoints_every"], needs_run=True),
    Case("diagnose-unknown-layer", "trained runs", "diagnose a layer the model does not have",
         {}, ["diagnose", "--model", "run", "--layer", "encoder.9"],
         expect=["run: --layer 'encoder.9' is not a layer of this model (motifs, g, "],
         needs_run=True),
    Case("concepts-not-a-run", "trained runs", "concepts of a folder that is not a run",
         {"notarun/notes.txt": b"x"}, ["concepts", "--model", "notarun"], expect=["notarun"]),
    Case("concepts-unknown-layer", "trained runs", "concepts of a layer the model does not have",
         {}, ["concepts", "--model", "run", "--layer", "encoder.9"],
         expect=["run: --layer 'encoder.9' is not a layer of this model (one of hidden, g)"],
         needs_run=True),
    Case("concepts-k-too-large", "trained runs", "concepts with k larger than the concepts",
         {}, ["concepts", "--model", "run", "--concepts", "3", "--k", "5", "--method", "sae"],
         expect=["k=5 must be between 1 and the number of concepts (3)"], needs_run=True),
    Case("concepts-more-than-rows", "trained runs", "more concepts than activation rows",
         {}, ["concepts", "--model", "run", "--concepts", "500", "--fit-rows", "100", "--method",
              "deleuzian"],
         expect=["500 concepts from 100 activation rows"], needs_run=True),
    Case("scan-chunk-zero", "trained runs", "a scan chunk of 0 bases",
         {"genome.fa": fasta()},
         ["scan", "--model", "run", "--fasta", "genome.fa", "--out", "tracks", "--chunk", "0"],
         expect=["Invalid value for '--chunk': 0 is not in the range x>=1"], needs_run=True),
    Case("scan-gather-missing-part", "trained runs", "a gather before every part was scanned",
         {"genome.fa": fasta()},
         ["scan", "--model", "run", "--fasta", "genome.fa", "--out", "tracks", "--gather", "2"],
         expect=["tracks/parts/part-0001-of-0002.npz: missing; scan it first (scan --part 1/2)"],
         needs_run=True),
    Case("scan-part-out-of-range", "trained runs", "a scan part beyond the parts",
         {"genome.fa": fasta()},
         ["scan", "--model", "run", "--fasta", "genome.fa", "--out", "tracks", "--part", "3/2"],
         expect=["--part '3/2': I must be between 1 and N"], needs_run=True),
    Case("scan-no-motifs", "trained runs", "scan before export (no motifs)",
         {"genome.fa": fasta(), "tamper": _no_motifs},
         ["scan", "--model", "run", "--fasta", "genome.fa", "--out", "tracks"],
         expect=["run/motifs/motifs.json: missing (run `sparling-genomics export` first)"],
         needs_run=True),
    Case("stability-no-motifs", "trained runs", "seed stability over a run not yet exported",
         {"tamper": _no_motifs},
         ["stability", "--model", "run", "--model", "run", "--out", "stability.json"],
         expect=["run/motifs/motifs.json: missing (run `sparling-genomics export` first)"],
         needs_run=True),
    Case("scan-escaping-id", "trained runs", "edited motif files whose motif id is '../../escaped'",
         {"genome.fa": fasta(), "tamper": _escaping_motif_id},
         ["scan", "--model", "run", "--fasta", "genome.fa", "--out", "tracks"],
         expect=["'../../escaped' cannot be a file name in tracks"], needs_run=True),
    # --- variants (VCF) --------------------------------------------------------------------
    Case("vcf-not-vcf", "variants (VCF)", "a file that is not a VCF",
         {"calls.vcf": b"chr1\t100\t200\n"}, _VARIANTS,
         expect=["calls.vcf: not a VCF file"], needs_run="sites"),
    Case("vcf-empty", "variants (VCF)", "an empty VCF file", {"calls.vcf": b""}, _VARIANTS,
         expect=["calls.vcf: empty file, not a VCF"], needs_run="sites"),
    Case("vcf-no-records", "variants (VCF)", "a VCF header without records",
         {"calls.vcf": vcf()}, _VARIANTS,
         expect=["calls.vcf: the VCF holds no variant records"], needs_run="sites"),
    Case("vcf-pos-zero", "variants (VCF)", "POS 0", {"calls.vcf": vcf(snv(1000, text_pos="0"))},
         _VARIANTS, expect=["calls.vcf:4: POS 0 is not a position"], needs_run="sites"),
    Case("vcf-pos-text", "variants (VCF)", "POS that is not a number",
         {"calls.vcf": vcf(snv(1000), snv(1000, text_pos="12x4"))}, _VARIANTS,
         expect=["calls.vcf:5: not a VCF record"], needs_run="sites"),
    Case("vcf-bad-ref", "variants (VCF)", "a REF that is not DNA",
         {"calls.vcf": vcf(snv(1000, ref="AXG"))}, _VARIANTS,
         expect=["calls.vcf:4: REF 'AXG' is not a DNA allele"], needs_run="sites"),
    Case("vcf-bad-alt", "variants (VCF)", "an ALT that is not an allele",
         {"calls.vcf": vcf(snv(1000, alt="A-C"))}, _VARIANTS,
         expect=["calls.vcf:4: ALT 'A-C' is not an allele"], needs_run="sites"),
    Case("vcf-id-space", "variants (VCF)", "an ID holding a space",
         {"calls.vcf": vcf(snv(1000).replace("\t.\t", "\trs 12\t", 1))}, _VARIANTS,
         expect=["calls.vcf:4: ID 'rs 12' holds whitespace"], needs_run="sites"),
    Case("vcf-qual-text", "variants (VCF)", "a QUAL that is not a number (htslib reads it as 0)",
         {"calls.vcf": vcf(snv(1000), snv(2000).replace("\t.\t.\t.", "\thigh\t.\t."))},
         _VARIANTS, expect=["calls.vcf:5: QUAL 'high' is not a Phred quality"],
         needs_run="sites"),
    Case("vcf-ref-mismatch", "variants (VCF)", "a REF that does not match the FASTA",
         {"calls.vcf": vcf(snv(1000, ref=_other_base(1000)))}, _VARIANTS,
         expect=["calls.vcf:4: REF", "does not match the FASTA at NC_003070.9:1000",
                 "--skip-ref-mismatch"], needs_run="sites"),
    Case("vcf-ref-mismatch-skipped", "variants (VCF)", "the same with --skip-ref-mismatch",
         {"calls.vcf": vcf(snv(1000, ref=_other_base(1000)), snv(2000))},
         [*_VARIANTS, "--skip-ref-mismatch"], exit=0,
         expect=["scored 1 of 2 alleles (2 records); skipped: ref_mismatch 1"], needs_run="sites"),
    Case("vcf-past-end", "variants (VCF)", "a REF past the end of its sequence",
         {"calls.vcf": vcf(snv(300_000, ref=TINY_SEQ[-1].upper() + "AC", alt="A"))}, _VARIANTS,
         expect=["calls.vcf:4: REF ends at 300002, beyond the end of NC_003070.9"],
         needs_run="sites"),
    Case("vcf-unknown-sequence", "variants (VCF)", "a record on a sequence the FASTA lacks",
         {"calls.vcf": vcf(snv(1000), snv(1000, chrom="chrM"))}, _VARIANTS,
         expect=["calls.vcf:5: sequence 'chrM' is not in the FASTA", "--skip-unknown-sequences"],
         needs_run="sites"),
    Case("vcf-unknown-sequence-skipped", "variants (VCF)",
         "the same with --skip-unknown-sequences",
         {"calls.vcf": vcf(snv(1000), snv(1000, chrom="chrM"))},
         [*_VARIANTS, "--skip-unknown-sequences"], exit=0,
         expect=["scored 1 of 2 alleles (2 records); skipped: unknown_sequence 1"],
         needs_run="sites"),
    Case("vcf-symbolic-and-long", "variants (VCF)",
         "symbolic, breakend, '*' and > 50 bp alleles beside an SNV",
         {"calls.vcf": vcf(snv(1000, alt="<DEL>"), snv(1000, alt="*"), snv(1000, alt="G]chr2:5]"),
                           snv(2000, alt=TINY_SEQ[1999].upper() + "A" * 60), snv(3000))},
         _VARIANTS, exit=0,
         expect=["scored 1 of 5 alleles (5 records); skipped: symbolic 3, too_long 1"],
         needs_run="sites"),
    Case("vcf-plain-gzip", "variants (VCF)", "a gzip (not bgzip) VCF",
         {"calls.vcf": gzip.compress(vcf(snv(1000)))}, _VARIANTS, exit=0,
         expect=["scored 1 of 1 alleles (1 records)"], needs_run="sites"),
    Case("variants-planted-run", "variants (VCF)", "a run of a task without site classes",
         {"calls.vcf": vcf(snv(1000))}, _VARIANTS,
         expect=["run: a planted run has no site classes to score variants on"], needs_run=True),
    # --- output paths ----------------------------------------------------------------------
    Case("out-folder-is-a-file", "output paths", "a file as the output folder",
         {"motifs": b"notes\n"}, ["export", "--model", "run", "--out", "motifs"],
         expect=["motifs: exists and is not a folder; --out names the output folder"],
         needs_run=True),
    Case("out-file-is-a-folder", "output paths", "a folder as the output file",
         {"scores.json/keep": b""}, ["evaluate", "--model", "run", "--out", "scores.json"],
         expect=["scores.json: is a folder; --out names the output file"], needs_run=True),
    Case("out-under-a-file", "output paths", "an output folder under a file",
         {"notes": b"x\n", "calls.vcf": vcf(snv(1000))},
         ["variants", "--model", "run", "--vcf", "calls.vcf", "--out", "notes/effects"],
         expect=["notes/effects: notes is a file, not a folder"], needs_run="sites"),
    # --- audio (AudioMNIST) ----------------------------------------------------------------
    Case("audio-no-wavs", "audio corpora", "an AudioMNIST folder without WAV files",
         {"audio/README.md": b"# AudioMNIST\n"}, ["audio-check", "audio"],
         expect=["audio: no .wav files", "sparling-genomics audio-corpus"]),
    Case("audio-flat", "audio corpora", "WAVs not in speaker folders",
         {"audio/0_01_0.wav": wav(0)}, ["audio-check", "audio"],
         expect=["audio/0_01_0.wav: not in a speaker folder",
                 "<speaker>/<digit>_<speaker>_<repetition>.wav"]),
    Case("audio-bad-name", "audio corpora", "a WAV not named <digit>_<speaker>_<repetition>.wav",
         {**audiomnist("audio"), "audio/01/zero_01_1.wav": wav(0)}, ["audio-check", "audio"],
         expect=["audio/01/zero_01_1.wav: name is not <digit>_<speaker>_<repetition>.wav"]),
    Case("audio-wrong-folder", "audio corpora", "a speaker's WAV in another speaker's folder",
         {**audiomnist("audio"), "audio/01/3_02_0.wav": wav(3)}, ["audio-check", "audio"],
         expect=["audio/01/3_02_0.wav: speaker 02 in the name but folder 01"]),
    Case("audio-corrupt", "audio corpora", "a truncated WAV file",
         {**audiomnist("audio"), "audio/01/4_01_0.wav": wav(4)[:30]}, ["audio-check", "audio"],
         expect=["audio/01/4_01_0.wav: not a readable WAV file", "re-download or remove it"]),
    Case("audio-digit-missing", "audio corpora", "no speaker has a clip of one digit",
         audiomnist("audio", digits=[d for d in range(10) if d != 7]), ["audio-check", "audio"],
         expect=["audio: no clip of digit 7 for any speaker"]),
    Case("audio-data-folder", "audio corpora", "the AudioMNIST download (48 kHz, under data/)",
         {**audiomnist("AudioMNIST/data"), **audiomnist("AudioMNIST/data", speaker=2),
          "AudioMNIST/data/audioMNIST_meta.txt": b"{}\n"},
         ["audio-check", "AudioMNIST"], exit=0,
         expect=["20 clips of 2 speakers, read at 8000 Hz", "48000 Hz (20 clips)"]),
    Case("audio-no-espeak", "audio corpora", "building a corpus without espeak-ng on PATH",
         {}, ["audio-corpus", "--out", "corpus"], env={"PATH": "/nonexistent-bin"},
         expect=["espeak-ng not found: install it (apt-get install espeak-ng) or give a real "
                 "AudioMNIST directory"]),
    Case("audio-corpus-not-empty", "audio corpora", "building a corpus into a folder in use",
         {"corpus/notes.txt": b"mine\n"}, ["audio-corpus", "--out", "corpus"],
         expect=["corpus: not empty and not an espeak-ng corpus build"]),
]  # fmt: skip


# --- issue 75, items 5-6: byte-order marks, read-only outputs, scan job plans ----------------
# A block of its own (cases of other issues are added beside it); its cases join the groups
# above in docs/bad-inputs.md. A byte-order mark gives what the file without it gives (the
# split line below is the clean files' own); an output in a folder that cannot be written is
# one line naming the folder, checked before any work where the folder is --out's and where
# the write fails otherwise (the CLI maps EACCES, EPERM and EROFS to exit 2).

BOM = codecs.BOM_UTF8
_GFF_SPLIT = "train 2 sequences (5 windows, 6 sites)"  # the split line of GOOD, without a BOM
_DENIED = "cannot write in this folder (permission denied); write the output elsewhere"


def _train(*extra: str) -> list[str]:
    return ["train", "--task", "planted", "--preset", "tiny", *extra]


def _folder(name: str) -> Callable[[Path], None]:
    """A case file entry that makes the empty folder ``name``."""
    return lambda folder: (folder / name).mkdir(parents=True, exist_ok=True)


CASES += [
    Case("fasta-bom", "FASTA", "a FASTA that starts with a UTF-8 byte-order mark",
         {"genome.fa": BOM + fasta(), "genes.gff3": gff()},
         _dataset("--fasta", "genome.fa", "--gff", "genes.gff3"), exit=0,
         expect=[_GFF_SPLIT, "wrote out.h5"]),
    Case("fasta-bom-gzip", "FASTA", "the same, gzip-compressed",
         {"genome.fa.gz": gzip.compress(BOM + fasta()), "genes.gff3": gff()},
         _dataset("--fasta", "genome.fa.gz", "--gff", "genes.gff3"), exit=0,
         expect=[_GFF_SPLIT, "wrote out.h5"]),
    Case("gff-bom", "GFF/GTF", "a GFF3 that starts with a UTF-8 byte-order mark",
         {"genome.fa": fasta(), "genes.gff3": BOM + gff()},
         _dataset("--fasta", "genome.fa", "--gff", "genes.gff3"), exit=0,
         expect=[_GFF_SPLIT, "wrote out.h5"]),
    Case("gtf-bom", "GFF/GTF", "a gzip GTF that starts with a byte-order mark",
         {"genome.fa": fasta(), "genes.gtf.gz": gzip.compress(BOM + GTF)},
         _dataset("--fasta", "genome.fa", "--gff", "genes.gtf.gz"), exit=0,
         expect=["train 1 sequence (3 windows, 4 sites)", "wrote out.h5"]),
    Case("bed-bom", "BED", "a BED that starts with a UTF-8 byte-order mark",
         {"genome.fa": fasta(), "sites.bed": BOM + BED},
         _dataset("--fasta", "genome.fa", "--bed", "sites.bed"), exit=0,
         expect=["train 2 sequences (5 windows, 3 sites)", "wrote out.h5"]),
    Case("names-aliases-bom", "chromosome names", "an alias file with a byte-order mark",
         {"genome.fa": fasta(), "genes.gff3": gff(rename={"chr1": "1", "chr2": "2"}),
          "aliases.txt": BOM + b"1\tchr1\n2\tchr2\n"},
         _dataset("--fasta", "genome.fa", "--gff", "genes.gff3", "--chrom-aliases",
                  "aliases.txt"), exit=0, expect=[_GFF_SPLIT, "wrote out.h5"]),
    Case("vcf-bom", "variants (VCF)", "a VCF that starts with a UTF-8 byte-order mark",
         {"calls.vcf": BOM + vcf(snv(1000), snv(2000))}, _VARIANTS, exit=0,
         expect=["scored 2 of 2 alleles (2 records)"], needs_run="sites"),
    Case("vcf-bom-gzip", "variants (VCF)", "the same, gzip-compressed",
         {"calls.vcf.gz": gzip.compress(BOM + vcf(snv(1000), snv(2000)))},
         [*_VARIANTS[:4], "calls.vcf.gz", *_VARIANTS[5:]], exit=0,
         expect=["scored 2 of 2 alleles (2 records)"], needs_run="sites"),
    Case("config-bom", "config", "a YAML config with a byte-order mark (read past it)",
         {"my.yaml": BOM + b"train:\n  max_sample: 10\n"},
         _train("--config", "my.yaml", "--out", "run"),
         expect=["unknown config key 'train.max_sample'; did you mean 'train.max_samples'?"]),
    Case("config-not-text", "config", "a config file holding bytes that are not text",
         {"my.yaml": b"train:\n  lr: \xff\xfe\n"}, _train("--config", "my.yaml", "--out", "run"),
         expect=["my.yaml: is not valid YAML"]),
    Case("config-set-not-yaml", "config", "a --set value that is not YAML (an unclosed list)",
         {}, _train("--set", "model.head_dilations=[1,2", "--out", "run"),
         expect=["--set 'model.head_dilations=[1,2': the value is not valid YAML"]),
    # One case a verb that writes, its --out in a read-only folder (checked before any work);
    # then the run folder itself read-only (report's default output: refused where the write
    # fails) and an existing --out folder.
    Case("read-only-dataset", "output folders that cannot be written",
         "dataset's --out in a read-only folder",
         {**GOOD, "ro": _folder("ro")},
         ["dataset", "--fasta", "genome.fa", "--gff", "genes.gff3", "--out", "ro/out.h5"],
         expect=[f"ro: {_DENIED}"], read_only=("ro",)),
    Case("read-only-train", "output folders that cannot be written",
         "train's --out in a read-only folder", {"ro": _folder("ro")},
         _train("--out", "ro/run"),
         expect=[f"ro: {_DENIED}"], read_only=("ro",)),
    Case("read-only-evaluate", "output folders that cannot be written",
         "evaluate's --out in a read-only folder", {"ro": _folder("ro")},
         ["evaluate", "--model", "run", "--out", "ro/scores.json"],
         expect=[f"ro: {_DENIED}"], needs_run=True, read_only=("ro",)),
    Case("read-only-export", "output folders that cannot be written",
         "export's --out in a read-only folder", {"ro": _folder("ro")},
         ["export", "--model", "run", "--out", "ro/motifs"],
         expect=[f"ro: {_DENIED}"], needs_run=True, read_only=("ro",)),
    Case("read-only-scan", "output folders that cannot be written",
         "scan's --out in a read-only folder", {"genome.fa": fasta(), "ro": _folder("ro")},
         ["scan", "--model", "run", "--fasta", "genome.fa", "--out", "ro/tracks"],
         expect=[f"ro: {_DENIED}"], needs_run=True, read_only=("ro",)),
    Case("read-only-variants", "output folders that cannot be written",
         "variants' --out in a read-only folder",
         {"calls.vcf": vcf(snv(1000)), "ro": _folder("ro")},
         [*_VARIANTS[:-1], "ro/effects"],
         expect=[f"ro: {_DENIED}"], needs_run="sites", read_only=("ro",)),
    Case("read-only-report", "output folders that cannot be written",
         "report's --out in a read-only folder", {"ro": _folder("ro")},
         ["report", "--model", "run", "--out", "ro/report.html"],
         expect=[f"ro: {_DENIED}"], needs_run=True, read_only=("ro",)),
    Case("read-only-run", "output folders that cannot be written",
         "a read-only run folder, report written into it (its default)", {},
         ["report", "--model", "run"],
         expect=[f"run: {_DENIED}"], needs_run=True, read_only=("run",)),
    Case("read-only-out-folder", "output folders that cannot be written",
         "an existing read-only folder as scan's --out", {"genome.fa": fasta(),
                                                          "tracks": _folder("tracks")},
         ["scan", "--model", "run", "--fasta", "genome.fa", "--out", "tracks"],
         expect=[f"tracks: {_DENIED}"], needs_run=True, read_only=("tracks",)),
    # A scan scattered over more jobs than a cluster queues (the pipeline's scan_job_bases and
    # scan_jobs, checked when it plans: tests/pipelines/test_workflow.py).
    Case("scan-part-too-many", "trained runs", "a scan scattered over more than 10,000 jobs",
         {"genome.fa": fasta()},
         ["scan", "--model", "run", "--fasta", "genome.fa", "--out", "tracks", "--part",
          "3/20000"],
         expect=["--part 3/20000 would make 20,000 scan jobs for the 9,000 bases of genome.fa, "
                 "more than the 10,000 a cluster queues by default"], needs_run=True),
]  # fmt: skip


#: Classes of bad input checked by tests that generate or break inputs (not one case each).
CLASS_TESTS = [
    ("FASTA, GFF3/GTF, BED, VCF and alias files broken at random: a byte-order mark, CRLF "
     "line ends, gzip (each read as the clean file), cut short, bytes that are not text, "
     "columns swapped, a gzip cut or with a byte flipped, empty: a typed one-line error naming "
     "the file, or a reading", "tests/genome/test_corrupted_inputs.py"),
    ("a feature's or interval's start and end swapped: refused, naming the line",
     "tests/genome/test_corrupted_inputs.py::test_a_feature_with_start_and_end_swapped_is_refused"),
    ("YAML config files broken the same ways: the clean file's config, or one typed line",
     "tests/test_corrupted_configs.py"),
    ("--set overrides of any text: a typed one-line error, or the value merged",
     "tests/test_corrupted_configs.py::test_any_set_override_is_merged_or_one_line"),
    ("every verb that writes, its output folder read-only: exit 2, one line naming the folder, "
     "nothing written", "tests/test_bad_inputs.py (the read-only-* cases above)"),
    ("a scan_job_bases or scan_jobs that plans more jobs than the genome has chunks: refused "
     "before any job with the number of jobs",
     "tests/pipelines/test_workflow_plan.py::test_bad_config_stops_before_any_job"),
    ("the tiny pipeline's jobs killed (SIGKILL) at random points: the rerun's outputs are an "
     "uninterrupted run's, no finished file lost",
     "tests/pipelines/test_workflow.py::test_jobs_killed_at_random_points_rerun_to_the_same_outputs"),
    ("a retried training (--resume-if-same) over a finished run, each way in (a dataset not "
     "there, a FASTA as the dataset, a device not there): one line, every file of the run kept",
     "tests/train/test_retry.py::test_a_retry_whose_inputs_are_wrong_fails_with_the_finished_run_intact"),
    ("a retry of another config, or on a dataset rebuilt since: the run moved aside whole, "
     "never deleted", "tests/train/test_retry.py"),
    ("a run's config.yaml edited after training: refused where the change matters (the model's "
     "keys to evaluate; any key but the budget's to resume), naming the key",
     "tests/train/test_run_config.py::test_a_config_edited_after_training_is_refused_where_it_matters"),
    ("scan parts, exported motifs or a dataset that do not belong together, and a .fai that no "
     "longer describes its FASTA: one line naming the piece, or the index rebuilt",
     "tests/export/test_scan_parts.py"),
]  # fmt: skip


def _drop_root_override() -> None:
    """In a child about to run as root: drop the capabilities that let root write where the
    permissions say no (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER) from its bounding
    set, so the exec'd program holds them no more (Linux ``prctl(PR_CAPBSET_DROP)``)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    for capability in (1, 2, 3):
        if libc.prctl(24, capability, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) failed")


#: The child's first act: check that each read-only folder really refuses a new file (exit
#: 97 when one does not), then run the command line.
_PROBE_THEN_RUN = """import os, sys
count = int(sys.argv[1])
for folder in sys.argv[2 : 2 + count]:
    try:
        os.close(os.open(os.path.join(folder, ".probe"), os.O_CREAT | os.O_WRONLY))
    except PermissionError:
        continue
    os.unlink(os.path.join(folder, ".probe"))
    sys.exit(97)
sys.argv = ["sparling-genomics", *sys.argv[2 + count :]]
from sparling_genomics.cli.main import main
main()
"""


def run_read_only(case: Case, folder: Path) -> tuple[int, str, str]:
    """Run ``case``'s command in ``folder`` with its ``read_only`` folders made read-only (mode
    0555), in a subprocess; as root, without root's override of permissions (tests run as root
    in CI). A folder the child could still write is an error: the case would prove nothing."""
    for name in case.read_only:
        (folder / name).chmod(0o555)
    try:
        result = subprocess.run(
            [sys.executable, "-c", _PROBE_THEN_RUN, str(len(case.read_only)), *case.read_only,
             *case.args], cwd=folder, capture_output=True, text=True, timeout=300,
            env={**os.environ, **case.env, "OMP_NUM_THREADS": "1"},
            preexec_fn=_drop_root_override if os.geteuid() == 0 else None)  # fmt: skip
    finally:
        for name in case.read_only:
            (folder / name).chmod(0o755)
    if result.returncode == 97:
        raise RuntimeError(f"{case.id}: {case.read_only} could still be written by the command's "
                           "user: the read-only case cannot be run here")  # fmt: skip
    return result.returncode, result.stdout, result.stderr


# === provenance and stale indexes (issue 75, items 1 and 3) =================================
# Pieces that do not belong together (scan parts, exported motifs, a run's dataset) and an
# index that no longer describes its file. Kept in one block of their own.


def _stale_index(width: int):
    """``genome.fa`` indexed when it held chr1 only, then replaced (lines of ``width``) by
    chr1 + chr2 with an older modification time, as ``cp -p`` or ``rsync -a`` leave it."""

    def make(folder: Path) -> None:
        from sparling_genomics.genome.fasta import Genome

        path = folder / "genome.fa"
        path.write_bytes(fasta({"chr1": CHR1}))
        Genome(path)  # an earlier command's genome.fa.fai
        path.write_bytes(fasta(width=width))
        os.utime(path, (1_000_000_000, 1_000_000_000))

    return make


# Part 1 of 2 is chr1 (6,000 bases), part 2 chr2 (3,000), its middle soft- or hard-masked.
SOFT = fasta({"chr1": CHR1, "chr2": CHR2[:1000] + CHR2[1000:2000].lower() + CHR2[2000:]})
HARD = fasta({"chr1": CHR1, "chr2": CHR2[:1000] + "N" * 1000 + CHR2[2000:]})
_PARTS = ["--chunk", "3000"]


def _scan_part(folder: Path, index: int, run: str = "run", genome: str = "genome.fa") -> None:
    from sparling_genomics.runners.scan import scan_run_to_tracks

    scan_run_to_tracks(folder / run, folder / genome, folder / "tracks", chunk=3000,
                       part=(index, 2))


def _copied_part(folder: Path) -> None:
    """Both parts scanned, then part 1 copied over part 2's name."""
    _scan_part(folder, 1)
    _scan_part(folder, 2)
    parts = folder / "tracks" / "parts"
    shutil.copy(parts / "part-0001-of-0002.npz", parts / "part-0002-of-0002.npz")


def _part_of_another_model(folder: Path) -> None:
    """Part 2 scanned by another run (its weights retrained, its motifs exported again)."""
    import json

    from sparling_genomics.train.provenance import run_fingerprint
    from tests.conftest import retrain_in_place

    _scan_part(folder, 1)
    other = retrain_in_place(Path(shutil.copytree(folder / "run", folder / "other")))
    summary = other / "motifs" / "motifs.json"
    summary.write_text(json.dumps({**json.loads(summary.read_text()),
                                   "model": run_fingerprint(other)}))
    _scan_part(folder, 2, run="other")


def _part_of_other_bases(folder: Path) -> None:
    """Part 2 scanned from the hard-masked assembly (same names and lengths)."""
    _scan_part(folder, 1)
    _scan_part(folder, 2, genome="hard.fa")


def _retrained(folder: Path) -> None:
    from tests.conftest import retrain_in_place

    retrain_in_place(folder / "run")


def _other_dataset(folder: Path) -> None:
    """``other.h5``: the tiny reference's dataset with another split."""
    from sparling_genomics.genome.dataset import DatasetSpec, build_dataset
    from tests.conftest import TINY_FASTA, TINY_GFF

    build_dataset(folder / "other.h5", TINY_FASTA, annotation=TINY_GFF,
                  spec=DatasetSpec(test_fraction=0.3))


def _killed_run_on_a_changed_dataset(folder: Path) -> None:
    """The run killed before it finished (no metrics, no final checkpoint), its dataset
    rebuilt since with another split."""
    _other_dataset(folder)
    (folder / "run" / "metrics.json").unlink()
    (folder / "run" / "checkpoints" / "final.pt").unlink()
    config = folder / "run" / "config.yaml"
    lines = [("  dataset: ../other.h5" if line.startswith("  dataset: ") else line)
             for line in config.read_text().splitlines()]
    config.write_text("\n".join(lines) + "\n")


_GATHER = ["scan", "--model", "run", "--fasta", "genome.fa", "--out", "tracks", *_PARTS,
           "--gather", "2"]
PROVENANCE_CASES: list[Case] = [
    Case("fasta-stale-index", "provenance and stale indexes",
         "a FASTA replaced by one with more sequences and an older modification time, beside "
         "the .fai an earlier command made", {"stale": _stale_index(60), "genes.gff3": gff()},
         _dataset("--fasta", "genome.fa", "--gff", "genes.gff3"), exit=0,
         expect=["wrote out.h5"]),
    Case("fasta-stale-index-width", "provenance and stale indexes",
         "the same, the new FASTA in 80-column lines", {"stale": _stale_index(80),
                                                        "genes.gff3": gff()},
         _dataset("--fasta", "genome.fa", "--gff", "genes.gff3"), exit=0,
         expect=["wrote out.h5"]),
    Case("scan-gather-copied-part", "provenance and stale indexes",
         "a scan part copied over another part's file name",
         {"genome.fa": SOFT, "parts": _copied_part}, _GATHER,
         expect=["tracks/parts/part-0002-of-0002.npz: holds part 1 of 2, not 2 of 2 (a part "
                 "copied or renamed); scan it again (scan --part 2/2)"], needs_run=True),
    Case("scan-gather-other-model", "provenance and stale indexes",
         "a scan part scanned by another model", {"genome.fa": SOFT,
                                                  "parts": _part_of_another_model}, _GATHER,
         expect=["tracks/parts/part-0002-of-0002.npz: scanned by another model (fingerprint "],
         needs_run=True),
    Case("scan-gather-other-bases", "provenance and stale indexes",
         "a scan part scanned from another FASTA with the same names and lengths "
         "(hard-masked beside soft-masked)",
         {"genome.fa": SOFT, "hard.fa": HARD, "parts": _part_of_other_bases}, _GATHER,
         expect=["tracks/parts/part-0002-of-0002.npz: scanned from other bases than "
                 "genome.fa's under the same sequence names and lengths (chr2:1-3000;"],
         needs_run=True),
    Case("scan-motifs-other-weights", "provenance and stale indexes",
         "a scan of a run whose motifs were exported from other weights",
         {"genome.fa": fasta(), "tamper": _retrained},
         ["scan", "--model", "run", "--fasta", "genome.fa", "--out", "tracks"],
         expect=["run/motifs/motifs.json: made from other weights than run's (model "
                 "fingerprint ", "export the run again"], needs_run=True),
    Case("variants-motifs-other-weights", "provenance and stale indexes",
         "variants of a run whose motifs were exported from other weights",
         {"calls.vcf": vcf(snv(1000)), "tamper": _retrained}, _VARIANTS,
         expect=["run/motifs/motifs.json: made from other weights than run's"],
         needs_run="sites"),
    Case("run-dataset-other", "provenance and stale indexes",
         "another dataset given as the run's own (moved) dataset",
         {"tamper": _other_dataset}, ["export", "--model", "run", "--dataset", "other.h5",
                                      "--out", "m"],
         expect=["other.h5: not the dataset run run was trained on (content fingerprint "
                 "sha256:", "`evaluate --dataset` scores other data"], needs_run="sites"),
    Case("run-dataset-changed-resume", "provenance and stale indexes",
         "resuming a killed run whose dataset was rebuilt with another split",
         {"tamper": _killed_run_on_a_changed_dataset}, ["train", "--resume", "--out", "run"],
         expect=["other.h5: not the dataset run run was trained on", "run/inputs.json records"],
         needs_run="sites"),
]  # fmt: skip
CASES += PROVENANCE_CASES
# === end of the provenance and stale-index block ============================================


# === retries and edited runs (issue 75, items 2 and 4; the rules' config blocks, issue 72) ===
# A retried training must not lose the finished run it finds (its every file is kept: the
# catalogue's check that nothing the user had was removed), a run's config.yaml edited after
# training is refused where it changes the model, and the training rules' old flat keys name
# their new place.


def _swapped_dilations(folder: Path) -> None:
    """The run's config.yaml with h's two dilations in the other order (same tensor shapes)."""
    config = folder / "run" / "config.yaml"
    text = config.read_text()
    dilations = "  head_dilations:\n  - 1\n  - 4\n"
    assert dilations in text
    config.write_text(text.replace(dilations, "  head_dilations:\n  - 4\n  - 1\n"))


_RETRY = ["train", "--task", "splicing", "--preset", "tiny", "--resume-if-same", "--out", "run",
          "--no-progress"]  # fmt: skip
RETRY_CASES: list[Case] = [
    Case("retry-finished-run-dataset-gone", "retries and edited runs",
         "a retried training (--resume-if-same) over a finished run, its dataset not there",
         {}, [*_RETRY, "--dataset", "gone.h5"], needs_run="sites",
         expect=["gone.h5: dataset file not found"]),
    Case("retry-finished-run-fasta-as-dataset", "retries and edited runs",
         "the same, a FASTA given as the dataset", {"genome.fa": fasta()},
         [*_RETRY, "--dataset", "genome.fa"], needs_run="sites",
         expect=["genome.fa: not a sparling-genomics dataset"]),
    Case("run-config-edited-after-training", "retries and edited runs",
         "a finished run whose config.yaml was edited after training (h's dilations; the "
         "tensors keep their shapes)", {"edit": _swapped_dilations},
         ["evaluate", "--model", "run"], needs_run="sites",
         expect=["model.head_dilations is", "but the run was trained with",
                 "(recorded in final.pt); put it back, or train a new run"]),
    Case("set-renamed-rule-key", "retries and edited runs",
         "a training rule's setting by its old flat name",
         {}, ["train", "--task", "planted", "--preset", "tiny", "--set",
              "annealing.rollback_samples=5000", "--out", "run"],
         expect=["--set: config key 'annealing.rollback_samples' is now "
                 "'annealing.rollback.samples'"]),
    Case("set-removed-setting", "retries and edited runs",
         "a setting that was tried and removed (the co-firing penalty)",
         {}, ["train", "--task", "planted", "--preset", "tiny", "--set",
              "model.sparse.cofire_weight=0.1", "--out", "run"],
         expect=["--set: config key 'model.sparse.cofire_weight' was removed (docs/method.md, "
                 "'Tried and removed')"]),
]  # fmt: skip
CASES += RETRY_CASES
# === end of the retries and edited runs block ==============================================


@contextmanager
def _inside(folder: Path):
    before = Path.cwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)


@dataclass
class Outcome:
    exit: int
    stdout: str
    stderr: str
    files_after: list[str]
    files_gone: list[str] = field(default_factory=list)


def run_case(case: Case, folder: Path, run: Path | None = None,
             site_run: Path | None = None) -> Outcome:  # fmt: skip
    """Write the case's files into the empty ``folder``, run its command there (``run``: a
    tiny planted run, ``site_run``: a tiny splicing run, copied in as ``run/``)."""
    from click.testing import CliRunner

    from sparling_genomics.cli.main import main

    folder.mkdir(parents=True, exist_ok=True)
    if case.needs_run:
        source = site_run if case.needs_run == "sites" else run
        if source is None:
            raise ValueError(f"case {case.id} needs a trained run")
        shutil.copytree(source, folder / "run")
    for name, content in case.files.items():
        if callable(content):
            content(folder)
        else:
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_bytes(content)
    before = _listing(folder)
    if case.read_only:
        code, stdout, stderr = run_read_only(case, folder)
    else:
        with _inside(folder):
            result = CliRunner().invoke(main, case.args, catch_exceptions=False, env=case.env)
        code, stdout, stderr = result.exit_code, result.stdout, result.stderr
    after = _listing(folder)
    return Outcome(code, stdout, stderr, sorted(set(after) - set(before)),
                   sorted(set(before) - set(after)))


def _listing(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def shown(case: Case, outcome: Outcome) -> str:
    """What the user sees: the error line, or the last line of a success; a fingerprint's
    hex digits (a model's differ with every training) as '...'."""
    if outcome.exit == 0:
        lines = outcome.stdout.strip().splitlines()
        return "accepted: " + (lines[-1] if lines else "")
    return re.sub(r"\b[0-9a-f]{12}\b", "...", outcome.stderr.strip())


def _cell(text: str) -> str:
    """Text for a table cell: '|' escaped, and '<' so that '<TAB>' or '<speaker>' show."""
    return text.replace("|", "\\|").replace("<", "&lt;")


def markdown(rows: list[tuple[Case, Outcome]]) -> str:
    head = [
        "# Bad inputs: what was tried and what the user sees",
        "",
        "Generated by `python -m tests.bad_inputs` from the cases in `tests/bad_inputs.py`;",
        "`tests/test_bad_inputs.py` runs every case and checks this page is current. Files are",
        "named as in the case (`genome.fa`, `genes.gff3`, ...), each case in an empty folder.",
        "Exit code 2: the user's input is wrong, nothing was written (an uncompressed FASTA",
        "that was read gets its `.fai` index beside it, as with samtools); 0: accepted as",
        "documented in the FASTA/GFF/BED parsers (`sparling_genomics/genome/`) and the audio",
        "corpus loader (`sparling_genomics/domains/spoken_digits.py`). Unexpected",
        "failures exit 1 with one line; `sparling-genomics --debug ...` shows the traceback.",
        "The pipeline checks the same files (and its config against",
        "`pipelines/schemas/config.schema.yaml`) before any job starts.",
        "",
    ]
    groups: dict[str, list[str]] = {}
    for case, outcome in rows:
        command = "sparling-genomics " + " ".join(case.args)
        seen = _cell(shown(case, outcome).replace("\n", " "))
        groups.setdefault(case.group, []).append(
            f"| {_cell(case.given)} | `{command}` | {outcome.exit} | {seen} |"
        )
    blocks = [
        "\n".join(
            [
                f"## {group}",
                "",
                "| input | command | exit | the user sees |",
                "|---|---|---|---|",
                *lines,
            ]
        )  # fmt: skip
        for group, lines in groups.items()
    ]
    return "\n".join(head) + "\n" + "\n\n".join([*blocks, _class_tests()]) + "\n"


def _class_tests() -> str:
    """The table of :data:`CLASS_TESTS`; a test named there that does not exist is an error,
    so the page cannot list a check nobody runs."""
    rows = []
    for what, test in CLASS_TESTS:
        path, _, name = (REPO / test.split(" ")[0]).as_posix().partition("::")
        if not Path(path).is_file() or (name and f"def {name}(" not in Path(path).read_text()):
            raise ValueError(f"CLASS_TESTS names {test!r}, which does not exist")
        rows.append(f"| {_cell(what)} | `{test}` |")
    return "\n".join(["## Classes of bad input, and the test that looks for each", "",
                      "| class | test |", "|---|---|", *rows])  # fmt: skip


def tiny_run(folder: Path) -> Path:
    """A tiny exported planted run (for the checkpoint and scan cases)."""
    from tests.conftest import train_tiny_planted_run

    return train_tiny_planted_run(folder / "run")


def tiny_site_run(folder: Path) -> Path:
    """A tiny exported splicing run on the tiny reference (for the variants cases)."""
    from sparling_genomics.genome.dataset import build_dataset
    from tests.conftest import TINY_FASTA, TINY_GFF, train_tiny_splicing_run

    dataset = folder / "tiny.h5"
    build_dataset(dataset, TINY_FASTA, annotation=TINY_GFF)
    return train_tiny_splicing_run(folder / "site_run", dataset)


def render(run: Path, site_run: Path, work: Path) -> str:
    rows = [(case, run_case(case, work / case.id, run, site_run)) for case in CASES]
    return markdown(rows)


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        run = Path(sys.argv[1]) if len(sys.argv) > 1 else tiny_run(Path(tmp))
        site_run = Path(sys.argv[2]) if len(sys.argv) > 2 else tiny_site_run(Path(tmp))
        DOC.parent.mkdir(exist_ok=True)
        DOC.write_text(render(run, site_run, Path(tmp) / "cases"))
    print(f"wrote {DOC}")
