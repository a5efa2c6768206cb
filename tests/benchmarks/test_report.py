from benchmarks.report import machines_line, update_section


def test_sections_are_added_then_replaced(tmp_path):
    path = tmp_path / "BENCHMARKS.md"
    update_section(path, "a", "first A")
    update_section(path, "b", "first B")
    update_section(path, "a", "second A")
    text = path.read_text()
    assert text.startswith("# Benchmarks")
    assert "second A" in text and "first A" not in text and "first B" in text
    assert text.index("second A") < text.index("first B")
    assert text.count("<!-- bench:a:start -->") == 1


def test_runs_from_another_machine_or_an_unrecorded_one_are_named():
    assert machines_line([("a seed 0", "Intel"), ("b seed 0", "Intel")], "Intel") is None
    line = machines_line([("a seed 0", "Intel"), ("b seed 0", "AMD"), ("c seed 1", None),
                          ("d seed 2", "AMD")], "Intel")  # fmt: skip
    assert line.startswith("Runs trained on another CPU: b seed 0, d seed 2 on AMD. ")
    assert "Machine not recorded for c seed 1" in line and "a seed 0" not in line
    only_unknown = machines_line([("a seed 0", "Intel"), ("c seed 1", None)], "Intel")
    assert only_unknown.startswith("Machine not recorded for c seed 1")
    assert "another CPU" not in only_unknown
