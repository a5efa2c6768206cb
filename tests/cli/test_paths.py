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
