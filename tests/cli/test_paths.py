import pytest

from sparling_genomics.cli.paths import check_output_path
from sparling_genomics.errors import InputError


def test_an_output_path_of_the_other_kind_or_under_a_file_is_refused(tmp_path):
    (tmp_path / "notes.txt").write_text("x")
    (tmp_path / "folder").mkdir()
    with pytest.raises(InputError, match="notes.txt: exists and is not a folder"):
        check_output_path(tmp_path / "notes.txt", folder=True)
    with pytest.raises(InputError, match="folder: is a folder; --out names the output file"):
        check_output_path(tmp_path / "folder", folder=False)
    with pytest.raises(InputError, match="notes.txt is a file, not a folder"):
        check_output_path(tmp_path / "notes.txt" / "a" / "b.json", folder=False)


def test_new_and_reusable_output_paths_pass(tmp_path):
    (tmp_path / "folder").mkdir()
    (tmp_path / "old.json").write_text("{}")
    for path, folder in [(tmp_path / "folder", True), (tmp_path / "new" / "deeper", True),
                         (tmp_path / "old.json", False), (tmp_path / "new" / "x.json", False)]:
        assert check_output_path(path, folder=folder) == path  # fmt: skip


def test_an_output_in_a_folder_this_user_cannot_write_is_refused_naming_it(tmp_path,
                                                                           monkeypatch):
    """Checked before any work (os.access, so a read-only file system and root's override
    count as they would for the write); tests/bad_inputs.py runs each verb for real."""
    from sparling_genomics import io
    from sparling_genomics.errors import OutputError

    (tmp_path / "ro").mkdir()
    monkeypatch.setattr(io.os, "access", lambda path, mode: str(path) != str(tmp_path / "ro"))
    for path, folder in [(tmp_path / "ro" / "x.json", False), (tmp_path / "ro" / "t", True),
                         (tmp_path / "ro", True)]:  # fmt: skip
        with pytest.raises(OutputError, match="ro: cannot write in this folder"):
            check_output_path(path, folder=folder)
    assert check_output_path(tmp_path / "x.json", folder=False) == tmp_path / "x.json"
