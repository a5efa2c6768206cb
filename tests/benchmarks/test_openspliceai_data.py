"""Our split in OpenSpliceAI's stage-1 format: the genome's bases and our labels, per split."""

import h5py
import numpy as np
import pytest

from benchmarks.openspliceai_data import write_datafiles
from sparling_genomics.errors import InputError
from sparling_genomics.genome.dataset import SiteDataset
from sparling_genomics.genome.fasta import Genome
from sparling_genomics.genome.sequence import reverse_complement_codes
from tests.conftest import TINY_FASTA

LETTERS = np.frombuffer(b"ACGTN", dtype=np.uint8)


def test_records_are_the_genome_and_our_labels(tiny_dataset, tmp_path):
    summary = write_datafiles(tiny_dataset, tmp_path)
    genome = Genome(TINY_FASTA)
    data = SiteDataset(tiny_dataset)
    canonical = 0
    for split, name in (("train", "train"), ("val", "validation"), ("test", "test")):
        with h5py.File(tmp_path / f"datafile_{name}.h5") as h5:
            records = list(zip(*(h5[k].asstr()[:] for k in
                                 ("CHROM", "STRAND", "TX_START", "TX_END", "SEQ", "LABEL"))))
        assert len(records) == summary[name]["records"]
        labels = data.labels(data.indices(split))
        for code, kind in ((1, "acceptor"), (2, "donor")):
            ours = int((labels == data.classes.index(kind)).sum())
            assert sum(r[5].count(str(code)) for r in records) == ours == summary[name][kind]
        assert sum(len(r[5]) for r in records) == int((labels >= 0).sum())
        for chrom, strand, start, end, seq, label in records:
            codes = genome.fetch(chrom, int(start) - 1, int(end))
            if strand == "-":
                codes = reverse_complement_codes(codes)
            assert seq == LETTERS[codes].tobytes().decode()
            assert len(label) == len(seq)
            # a donor labels the exon's last base: GT follows it in transcript orientation
            canonical += sum(seq[i + 1 : i + 3] == "GT" for i, c in enumerate(label) if c == "2")
    assert summary["test"]["records"] > 0
    sites = data.summary["sites"]["donor"]
    assert canonical == sites - data.summary["non_canonical"]["donor"] > 0


def test_a_dataset_with_other_sites_is_refused(tiny_dataset, tmp_path, monkeypatch):
    monkeypatch.setattr("benchmarks.openspliceai_data.CODES", {"donor": "2"})
    with pytest.raises(InputError, match="donor and acceptor sites only"):
        write_datafiles(tiny_dataset, tmp_path)
    assert not list(tmp_path.glob("*.h5"))
