"""Our dataset's split in OpenSpliceAI's format: its ``datafile_{train,validation,test}.h5``.

OpenSpliceAI's ``create-data`` has two stages: stage 1 reads a GFF with gffutils (it keeps
genes whose ``gene_biotype`` is ``protein_coding``, an NCBI attribute TAIR10's GFF lacks) and
splits whole chromosomes into train and test (one chromosome cannot be split); stage 2 one-hot
encodes the stage-1 records into ``SL + CL_max`` blocks. The peers benchmark writes stage 1
from our own dataset instead, so OpenSpliceAI trains on exactly our train block, validates on
our validation block and is tested on our test block, with our labels (every site of every
selected transcript), then runs OpenSpliceAI's own stage 2 on it (``scripts/peers/``).

A record is one gene cluster as our dataset tiles it: the maximal stretch of labelled
positions of one strand of one sequence, in transcript orientation, its bases read back from
the dataset's one-hot windows; labels ``0`` none, ``1`` acceptor, ``2`` donor (stage 1's
codes). Written as stage 1 writes them (UTF-8 string datasets NAME, CHROM, STRAND, TX_START,
TX_END, SEQ, LABEL; TX_START 1-based).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from sparling_genomics.errors import InputError
from sparling_genomics.genome.dataset import SiteDataset
from sparling_genomics.io import atomic_path

from .peer_positions import true_stretches, window_runs

SPLIT_FILES = {"train": "train", "val": "validation", "test": "test"}
LETTERS = np.frombuffer(b"ACGTN", dtype=np.uint8)
CODES = {"acceptor": "1", "donor": "2"}


def cluster_records(dataset: SiteDataset, split: str, batch: int = 256) -> list[tuple]:
    """(name, seqid, strand, start, end, sequence, labels) of the split's gene clusters."""
    label_of = np.full(len(dataset.classes), ord("0"), dtype=np.uint8)
    for i, name in enumerate(dataset.classes[1:], 1):
        if name not in CODES:
            raise InputError(f"{dataset.path}: OpenSpliceAI learns donor and acceptor sites "
                             f"only; the dataset also has {name!r}")  # fmt: skip
        label_of[i] = ord(CODES[name])
    index = dataset.indices(split)
    where = dataset.windows(index)
    seqids = [dataset.seqids[s] for s in where["seqid"]]
    window, half = dataset.window, dataset.context // 2
    runs = window_runs(seqids, where["strand"], where["start"], window)
    records = []
    for run in runs:
        bases = np.full(run.hi - run.lo, 4, dtype=np.uint8)  # genome order, N until read
        labels = np.full(run.hi - run.lo, -1, dtype=np.int16)
        rows = [row for row, _ in run.windows]
        for lo in range(0, len(rows), batch):
            part = rows[lo : lo + batch]
            x, y = dataset.read(index[part])
            for k, row in enumerate(part):
                own = x[k, :, half : half + window]
                codes = np.where(own.any(axis=0), own.argmax(axis=0), 4).astype(np.uint8)
                lab = y[k]
                if run.strand == -1:  # the window is reverse complemented: back to genome order
                    codes, lab = np.where(codes < 4, 3 - codes, 4)[::-1], lab[::-1]
                at = int(where["start"][row]) - run.lo
                keep = lab >= 0
                bases[at : at + window][keep] = codes[keep]
                labels[at : at + window][keep] = lab[keep]
        if run.strand == -1:
            bases = np.where(bases < 4, 3 - bases, 4)[::-1]
            labels = labels[::-1]
        for s, e in true_stretches(labels >= 0):
            start, end = (run.lo + s, run.lo + e) if run.strand == 1 else (
                run.hi - e, run.hi - s)  # fmt: skip
            strand = "+" if run.strand == 1 else "-"
            records.append((
                f"{run.seqid}:{start + 1}-{end}({strand})", run.seqid, strand, str(start + 1),
                str(end), LETTERS[bases[s:e]].tobytes().decode(),
                label_of[labels[s:e]].tobytes().decode(),
            ))  # fmt: skip
    return records


def write_datafiles(dataset_path: Path, out: Path) -> dict:
    """OpenSpliceAI's stage-1 files of our split in ``out``; returns records and sites per
    split."""
    import h5py

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    dataset = SiteDataset(dataset_path)
    summary = {}
    try:
        for split, name in SPLIT_FILES.items():
            records = cluster_records(dataset, split)
            columns = list(zip(*records)) if records else [[] for _ in range(7)]
            text = h5py.string_dtype(encoding="utf-8")
            with atomic_path(out / f"datafile_{name}.h5") as tmp, h5py.File(tmp, "w") as h5:
                for key, values in zip(("NAME", "CHROM", "STRAND", "TX_START", "TX_END", "SEQ",
                                        "LABEL"), columns):  # fmt: skip
                    h5.create_dataset(key, data=np.asarray(values, dtype=text), dtype=text)
            labels = "".join(r[6] for r in records)
            summary[name] = {
                "records": len(records),
                "positions": len(labels),
                "acceptor": labels.count("1"),
                "donor": labels.count("2"),
            }
    finally:
        dataset.close()
    return summary
