"""A scan part records where it came from, and a gather refuses, in one line naming the part,
one that is missing, copied over another's name, or scanned by another model, from another
FASTA (names, lengths or bases), chunk size or precision."""

import json
import shutil
from dataclasses import replace

import numpy as np
import pytest

from sparling_genomics.errors import InputError
from sparling_genomics.export.scan import plan_pieces
from sparling_genomics.export.scan_parts import (
    PartOrigin,
    bases_fingerprint,
    check_parts,
    part_path,
    scan_part,
)
from sparling_genomics.genome.fasta import Genome
from sparling_genomics.genome.fingerprint import codes_digest
from sparling_genomics.train.loading import load_run
from sparling_genomics.train.provenance import run_fingerprint

PARTS = 3
CHUNK = 4000


def _fasta(path, mask: str = "soft"):
    """Two sequences with soft-masked stretches; ``mask="hard"``: the same, hard-masked."""
    rng = np.random.default_rng(7)
    lines = []
    for name, length in (("chr1", 12_000), ("chr2", 5000)):
        seq = "".join(rng.choice(list("ACGTacgt"), length))
        if mask == "hard":
            seq = "".join("N" if c.islower() else c for c in seq)
        lines += [f">{name}", *(seq[i : i + 60] for i in range(0, length, 60))]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def scanned(planted_tiny, tmp_path_factory):
    """Every part of a 3-way scan of a soft-masked FASTA, and what they were made with."""
    base = tmp_path_factory.mktemp("parts")
    loaded = load_run(planted_tiny.run)
    model, device = loaded.model, loaded.device
    origin = PartOrigin(run_fingerprint(planted_tiny.run), Genome(_fasta(base / "soft.fa")),
                        CHUNK, "float32")  # fmt: skip
    out = base / "scan"
    results = [scan_part(model, origin, out, (i, PARTS), device) for i in range(1, PARTS + 1)]
    return base, model, device, origin, out, results


def _copy(scanned, tmp_path):
    """A fresh copy of the scan's parts folder, to break."""
    out = tmp_path / "scan"
    shutil.copytree(scanned[4], out)
    return out


def _refused(out, origin, words):
    with pytest.raises(InputError) as refused:
        check_parts(out, PARTS, origin)
    message = str(refused.value)
    assert words in message and "\n" not in message, message
    return message


def test_each_part_records_its_model_index_fasta_and_bases(scanned):
    _, _, _, origin, out, results = scanned
    assert [r["part"] for r in results] == [1, 2, 3]
    plan = plan_pieces(origin.genome.lengths, PARTS, CHUNK)
    for index in range(1, PARTS + 1):
        with np.load(part_path(out, index, PARTS)) as z:
            meta = json.loads(str(z["meta"]))
        assert (meta["part"], meta["parts"], meta["chunk"]) == (index, PARTS, CHUNK)
        assert meta["model"] == origin.model and meta["precision"] == "float32"
        assert json.loads(meta["genome"]) == [["chr1", 12_000], ["chr2", 5000]]
        pieces = plan[index - 1]
        digests = {p: codes_digest([origin.genome.fetch(p.seqid, p.start, p.end)])
                   for p in pieces}  # fmt: skip
        assert meta["bases"] == bases_fingerprint(pieces, digests)
    assert check_parts(out, PARTS, origin) >= 0  # they belong together


def test_a_missing_part_is_named(scanned, tmp_path):
    out = _copy(scanned, tmp_path)
    part_path(out, 2, PARTS).unlink()
    _refused(out, scanned[3], "part-0002-of-0003.npz: missing; scan it first (scan --part 2/3)")


def test_a_part_copied_over_another_is_refused(scanned, tmp_path):
    out = _copy(scanned, tmp_path)
    shutil.copy(part_path(out, 1, PARTS), part_path(out, 2, PARTS))  # part 1's sites twice
    _refused(out, scanned[3], "part-0002-of-0003.npz: holds part 1 of 3, not 2 of 3 (a part "
                              "copied or renamed); scan it again (scan --part 2/3)")


def test_a_part_scanned_by_another_model_is_refused(scanned, tmp_path):
    _, model, device, origin, _, _ = scanned
    out = _copy(scanned, tmp_path)
    other = replace(origin, model="f" * 64)  # another run's final checkpoint digest
    scan_part(model, other, out, (3, PARTS), device)
    _refused(out, origin, "part-0003-of-0003.npz: scanned by another model (fingerprint "
                          "ffffffffffff, this run's")


def test_a_part_scanned_from_other_bases_under_the_same_names_is_refused(scanned, tmp_path):
    _, model, device, origin, _, _ = scanned
    out = _copy(scanned, tmp_path)
    hard = replace(origin, genome=Genome(_fasta(tmp_path / "hard.fa", mask="hard")))
    scan_part(model, hard, out, (2, PARTS), device)
    message = _refused(out, origin, "part-0002-of-0003.npz: scanned from other bases than ")
    assert "same sequence names and lengths (chr1:" in message


def test_a_part_of_another_fasta_chunk_or_precision_is_refused(scanned, tmp_path):
    _, model, device, origin, _, _ = scanned
    out = _copy(scanned, tmp_path)
    _refused(out, replace(origin, chunk=5000), "scanned with --chunk 4000, this gather has 5000")
    renamed = tmp_path / "renamed.fa"
    renamed.write_text(origin.genome.path.read_text().replace(">chr2", ">chrB"))
    _refused(out, replace(origin, genome=Genome(renamed)),
             "part-0001-of-0003.npz: scanned from a FASTA with other sequence names or lengths")
    scan_part(model, replace(origin, precision="bfloat16"), out, (1, PARTS), device)
    _refused(out, origin, "scanned with --precision bfloat16, this gather has float32")


def test_a_broken_or_old_part_is_refused(scanned, tmp_path):
    out = _copy(scanned, tmp_path)
    part_path(out, 3, PARTS).write_bytes(b"not a part")
    _refused(out, scanned[3], "part-0003-of-0003.npz: not a scan part (unreadable: ")
    out = _copy(scanned, tmp_path / "old")
    with np.load(part_path(out, 1, PARTS)) as z:
        arrays = dict(z)
    meta = json.loads(str(arrays["meta"]))
    del meta["model"], meta["bases"]  # a part written before parts recorded them
    arrays["meta"] = np.array(json.dumps(meta))
    np.savez(part_path(out, 1, PARTS), **arrays)
    _refused(out, scanned[3], "part-0001-of-0003.npz: records neither the model nor the bases")
