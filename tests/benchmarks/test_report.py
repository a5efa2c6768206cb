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


def test_a_run_killed_before_its_first_checkpoint_is_trained_afresh(tmp_path):
    """Its folder holds a config and no checkpoint: neither resumable nor a fresh --out, so
    the benchmark used to stop there ("run directory exists and is not empty")."""
    from benchmarks.report import run_or_resume
    from sparling_genomics.train.run_config import resolve_config

    config = resolve_config("planted", "tiny", overrides=[
        {"train": {"max_samples": 64, "final_samples": 32, "eval_every": 32}}])  # fmt: skip
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.yaml").write_text("task: planted\n")
    (run / "checkpoints").mkdir()
    metrics = run_or_resume(run, config)
    assert metrics["samples_seen"] >= 64 and (run / "metrics.json").is_file()
    assert run_or_resume(run, config) == metrics  # finished: reused, not retrained
