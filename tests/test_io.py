"""Atomic writes: a failed or killed writer never leaves a file a re-run would trust."""

import errno
import gzip
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sparling_genomics import io
from sparling_genomics.errors import InputError, OutputError


def test_failed_write_leaves_nothing(tmp_path):
    target = tmp_path / "out.json"
    with pytest.raises(RuntimeError), io.atomic_path(target) as tmp:
        tmp.write_text("half")
        raise RuntimeError("crash")
    assert list(tmp_path.iterdir()) == []


def test_temp_of_a_killed_writer_is_removed_by_the_next_write(tmp_path):
    target = tmp_path / "tracks.bb"
    code = (
        "import os, sys\n"
        "from pathlib import Path\n"
        "from sparling_genomics.io import atomic_path\n"
        "ctx = atomic_path(Path(sys.argv[1]))\n"
        "tmp = ctx.__enter__()\n"
        "tmp.write_text('partial')\n"
        "os.kill(os.getpid(), 9)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code, str(target)])
    assert proc.returncode == -9
    left = [p.name for p in tmp_path.iterdir()]
    assert len(left) == 1 and left[0].startswith(".tracks.bb.tmp-") and not target.exists()
    io.write_text_atomic(target, "whole")
    assert [p.name for p in tmp_path.iterdir()] == ["tracks.bb"]
    assert target.read_text() == "whole"


def test_temp_of_a_live_writer_is_kept(tmp_path):
    target = tmp_path / "x.txt"
    with io.atomic_path(target) as tmp:
        io.write_text_atomic(tmp_path / "other.txt", "x")
        io.write_text_atomic(tmp_path / "y.txt", "y")
        assert tmp.exists()  # another write beside it does not touch a live temp
        tmp.write_text("done")
    assert target.read_text() == "done"
    assert os.path.exists(tmp_path / "other.txt")


@pytest.mark.parametrize("name", ["../x", "a/b", "..", "", ".hidden", "x\0y", "/abs"])
def test_safe_child_refuses_names_that_leave_the_folder(tmp_path, name):
    with pytest.raises(InputError):
        io.safe_child(tmp_path, name, ".bw")


def test_safe_child_accepts_motif_ids(tmp_path):
    assert io.safe_child(tmp_path, "motif_03", ".bw") == tmp_path / "motif_03.bw"


def test_require_file_says_what_the_path_is_instead(tmp_path):
    """A reader's input must be a regular file; the error says whether it is missing, a
    folder, or a device or pipe (``/dev/null``, which used to be called "not found")."""
    (tmp_path / "a.fa").write_text(">a\nACGT\n")
    assert io.require_file(tmp_path / "a.fa", "FASTA file") == tmp_path / "a.fa"
    cases = [(tmp_path / "gone.fa", "FASTA file not found"),
             (tmp_path, "FASTA file expected, but this is a folder"),
             ("/dev/null", "not a regular file (a device or pipe)")]  # fmt: skip
    for path, message in cases:
        with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
            io.require_file(path, "FASTA file")


def test_a_device_given_as_fasta_is_named_as_such(tmp_path):
    from tests.conftest import run_cli

    result = run_cli("dataset", "--fasta", "/dev/null", "--gff", "/dev/null", "--out",
                     tmp_path / "d.h5")  # fmt: skip
    assert result.returncode == 2 and not (tmp_path / "d.h5").exists()
    assert "/dev/null: FASTA file expected, but this is not a regular file" in result.stderr


def test_record_path_is_relative_inside_the_working_folder_and_absolute_outside(
    tmp_path, monkeypatch
):
    project = tmp_path / "project"
    (project / "results" / "run").mkdir(parents=True)
    monkeypatch.chdir(project)
    assert io.record_path("results/ds.h5", "results/run") == "../ds.h5"
    outside = tmp_path / "shared" / "genome.fa"
    assert io.record_path(outside, "results/run") == str(outside)


def test_recorded_paths_are_found_from_their_folder_then_as_old_records_were(
    tmp_path, monkeypatch
):
    run = tmp_path / "moved" / "run"
    run.mkdir(parents=True)
    (tmp_path / "moved" / "ds.h5").write_text("x")
    monkeypatch.chdir(tmp_path)
    assert io.resolve_recorded("../ds.h5", run) == tmp_path / "moved" / "ds.h5"
    (tmp_path / "old.h5").write_text("x")  # an old run's record: relative to the working folder
    assert io.resolve_recorded("old.h5", run) == Path("old.h5")
    assert io.resolve_recorded("/abs/x.h5", run) == Path("/abs/x.h5")
    assert io.recorded_candidates("gone.h5", run) == [run / "gone.h5", Path("gone.h5")]
    assert io.resolve_recorded("gone.h5", run) == run / "gone.h5"  # where it looked first


def test_json_text_puts_arrays_of_numbers_on_one_line_and_loads_back_equal():
    data = {"pwm": [[0.1, 0.9], [1e-05, -2]], "n": [1, None], "s": "a [1,\n 2]", "e": [],
            "nan": [float("nan")]}
    text = io.json_text(data)
    assert '"pwm": [\n    [0.1, 0.9],\n    [1e-05, -2]\n  ]' in text
    assert '"n": [\n    1,\n    null\n  ]' in text  # not only numbers: left as json writes it
    back = json.loads(text)
    assert back["pwm"] == data["pwm"] and back["n"] == data["n"] and back["s"] == data["s"]
    assert math.isnan(back["nan"][0])


@pytest.mark.parametrize("code, why", [(errno.EACCES, "permission denied"),
                                       (errno.EPERM, "operation not permitted"),
                                       (errno.EROFS, "read-only file system")])  # fmt: skip
def test_a_denied_write_names_the_nearest_folder_that_exists(tmp_path, monkeypatch, code, why):
    """EACCES, EPERM or EROFS on a path being made (a temp file, a folder two levels down)
    is an OutputError naming the folder that would have to be written, relative to the
    working folder where it lies under it; on an existing file, the file."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ro").mkdir()
    for made in (tmp_path / "ro" / ".out.h5.tmp-host-1-x.h5", "ro/tracks/parts"):
        error = io.denied_error(OSError(code, os.strerror(code), str(made)))
        assert isinstance(error, OutputError)
        assert str(error) == (f"ro: cannot write in this folder ({why}); write the output "
                              "elsewhere or make the folder writable")
    (tmp_path / "ro" / "old.json").write_text("{}")
    error = io.denied_error(OSError(code, os.strerror(code), "ro/old.json"))
    assert str(error) == f"ro/old.json: cannot write this file ({why})"


def test_other_os_errors_and_ones_without_a_path_are_not_the_users(tmp_path):
    assert io.denied_error(OSError(errno.ENOSPC, "No space left", str(tmp_path / "x"))) is None
    assert io.denied_error(PermissionError(errno.EPERM, "Operation not permitted")) is None


def test_check_writable_names_the_folder_this_user_cannot_write(tmp_path, monkeypatch):
    """Checked on the nearest existing folder (os.access: root's override and a read-only
    file system included); a folder that can be written passes."""
    (tmp_path / "ro").mkdir()
    io.check_writable(tmp_path / "ro" / "new" / "x.json")
    denied = {str(tmp_path / "ro")}
    monkeypatch.setattr(io.os, "access", lambda path, mode: str(path) not in denied)
    with pytest.raises(OutputError, match=r"ro: cannot write in this folder \(permission denied"):
        io.check_writable(tmp_path / "ro" / "new" / "x.json")
    io.check_writable(tmp_path / "elsewhere.json")


def test_open_text_drops_a_byte_order_mark_plain_or_gzipped(tmp_path):
    for name, data in (("a.txt", b"\xef\xbb\xbfchr1\t1\n"),
                       ("a.txt.gz", gzip.compress(b"\xef\xbb\xbfchr1\t1\n"))):  # fmt: skip
        (tmp_path / name).write_bytes(data)
        with io.open_text(tmp_path / name) as handle:
            assert handle.read() == "chr1\t1\n"
        assert io.starts_with_bom(tmp_path / name)
