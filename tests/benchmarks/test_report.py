from benchmarks.report import update_section


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
