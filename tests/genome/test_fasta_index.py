"""A FASTA's .fai is checked against the file whatever the modification times say: a stale one
is rebuilt (or refused in one line where it cannot be), and bases read through it are the
file's."""

import os
from pathlib import Path

import numpy as np
import pytest

from sparling_genomics.errors import InputError
from sparling_genomics.genome.fasta import Genome
from sparling_genomics.genome.fasta_index import (
    IndexedFasta,
    drop_stale_index,
    fai_path,
    index_mismatch,
    read_fai,
)
from sparling_genomics.genome.sequence import decode

RNG = np.random.default_rng(3)
A = "".join(RNG.choice(list("ACGTacgtN"), 1000))
B = "".join(RNG.choice(list("ACGT"), 700))
OLD = (1_000_000_000, 1_000_000_000)  # 2001: older than any index made today


def write(path: Path, records: dict[str, str], width: int = 60, eol: str = "\n") -> Path:
    lines = []
    for name, seq in records.items():
        lines += [f">{name} some description"]
        lines += [seq[i : i + width] for i in range(0, len(seq), width)]
    path.write_bytes((eol.join(lines) + eol).encode())
    return path


def replace_keeping_an_old_time(path: Path, records: dict[str, str], **kwargs) -> None:
    """The FASTA replaced at the same path, with an older modification time than its .fai
    (as `cp -p`, `rsync -a`, `wget -N` or `tar x` leave it)."""
    write(path, records, **kwargs)
    os.utime(path, OLD)
    assert os.path.getmtime(path) < os.path.getmtime(fai_path(path))


def test_a_replaced_fasta_with_more_sequences_and_an_older_time_is_read_whole(tmp_path):
    path = write(tmp_path / "g.fa", {"a": A})
    assert Genome(path).lengths == {"a": 1000}  # makes g.fa.fai
    replace_keeping_an_old_time(path, {"a": A, "b": B})
    genome = Genome(path)
    assert genome.lengths == {"a": 1000, "b": 700}  # was {"a": 1000}: the stale index
    assert decode(genome.sequence("b")) == B
    assert read_fai(fai_path(path))[1].name == "b"  # rebuilt


@pytest.mark.parametrize("width,eol", [(80, "\n"), (50, "\r\n")])
def test_a_replaced_fasta_with_another_line_width_reads_its_own_bases(tmp_path, width, eol):
    path = write(tmp_path / "g.fa", {"a": A, "b": B})
    Genome(path)
    replace_keeping_an_old_time(path, {"a": A, "b": B}, width=width, eol=eol)
    genome = Genome(path)  # the stale index read past line ends (a numpy broadcast error)
    assert decode(genome.sequence("a")) == A.upper() and decode(genome.sequence("b")) == B


def test_a_renamed_or_shortened_record_is_seen(tmp_path):
    path = write(tmp_path / "g.fa", {"a": A, "b": B})
    records = read_fai(fai_path(path)) if Genome(path) else None
    write(path, {"a": A, "c": B})
    assert "no header '>b'" in index_mismatch(path, records)
    write(path, {"a": A[:-1], "b": B})
    assert "no header '>b'" in index_mismatch(path, records)  # b moved
    write(path, {"a": A, "b": B[:-5]})
    assert "'b' would end at byte" in index_mismatch(path, records)
    write(path, {"a": A, "b": B})
    assert index_mismatch(path, records) is None


def test_a_fresh_index_of_each_accepted_layout_fits(tmp_path):
    layouts = {
        "no-final-eol": b">a\nACGTACGT\nACG",
        "crlf": b">a\r\nACGTACGT\r\nACG\r\n>b x\r\nAC\r\n",
        "empty-record": b">a\n>b\nACGT\n",
        "full-last-line": b">a\nACGT\nACGT\n>b\nAC\n",
        "blank-between": b">a\nACGT\n\n>b\nAC\n",
    }
    for name, data in layouts.items():
        path = tmp_path / f"{name}.fa"
        path.write_bytes(data)
        genome = Genome(path)
        assert genome._indexed is not None, name  # indexed, not read whole
        assert index_mismatch(path, read_fai(fai_path(path))) is None, name


def test_an_index_that_cannot_be_rebuilt_is_refused_in_one_line(tmp_path, monkeypatch):
    path = write(tmp_path / "g.fa", {"a": A})
    Genome(path)
    replace_keeping_an_old_time(path, {"a": A, "b": B})

    def read_only(self, missing_ok=False):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "unlink", read_only)  # a shared reference folder (root writes
    with pytest.raises(InputError) as refused:  # anywhere, so chmod cannot show it here)
        Genome(path)
    message = str(refused.value)
    assert message.startswith(f"{fai_path(path)}: stale index of {path} (the file goes on")
    assert "Permission denied" in message and "samtools faidx" in message
    assert "\n" not in message


def test_an_unreadable_index_is_rebuilt(tmp_path):
    path = write(tmp_path / "g.fa", {"a": A, "b": B})
    fai_path(path).write_text("not an index\n")
    os.utime(path, OLD)
    assert read_fai(fai_path(path)) is None
    drop_stale_index(path)
    assert not fai_path(path).exists()
    assert Genome(path).lengths == {"a": 1000, "b": 700}


def test_bases_read_through_the_index_are_the_files(tmp_path):
    for eol in ("\n", "\r\n"):
        path = write(tmp_path / "g.fa", {"a": A, "b": B}, width=61, eol=eol)
        fai_path(path).unlink(missing_ok=True)
        Genome(path)
        reader = IndexedFasta(path, read_fai(fai_path(path)))
        spans = [(0, 1), (0, 1000), (60, 62), (61, 122), (999, 1000), (17, 17), (500, 950)]
        for start, end in spans:
            assert reader.raw("a", start, end).tobytes().decode() == A[start:end], (eol, start)
        assert reader.raw("b", 0, 700).tobytes().decode() == B
