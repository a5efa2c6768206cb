import pytest


@pytest.mark.parametrize(
    "args,message",
    [
        (["--task", "nope"], "unknown task 'nope'"),
        (["--task", "planted", "--preset", "huge"], "unknown preset 'huge'"),
        (["--task", "planted", "--set", "annealing.stop_density=0"], "density"),
        (["--task", "planted", "--set", "annealing.start_density=1.5"], "density"),
        (["--task", "planted", "--set", "train.nope=1"], "unknown config key"),
        (["--task", "planted", "--set", "model.motif_channels=-3"],
         "config key 'model.motif_channels' must not be negative, got -3"),
    ],
)
def test_bad_input_is_one_line_exit_2_nothing_written(cli, tmp_path, args, message):
    out = tmp_path / "run"
    result = cli("train", *args, "--out", out, "--no-progress")
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], lines
    assert not out.exists()


def test_existing_run_directory_exit_2(cli, tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    (out / "x").write_text("x")
    result = cli("train", "--task", "planted", "--preset", "tiny", "--out", out, "--no-progress")
    assert result.returncode == 2 and "exists" in result.stderr
    assert [p.name for p in out.iterdir()] == ["x"]


def test_corrupt_checkpoint_exit_2(cli, tmp_path):
    out = tmp_path / "run"
    (out / "checkpoints").mkdir(parents=True)
    (out / "config.yaml").write_text("task: planted\n")
    (out / "checkpoints" / "last.pt").write_bytes(b"\x00garbage")
    result = cli("train", "--resume", "--out", out, "--no-progress")
    assert result.returncode == 2, result.stderr
    assert "last.pt" in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_train_tiny_end_to_end(cli, tmp_path):
    out = tmp_path / "run"
    result = cli(
        "train",
        "--task",
        "planted",
        "--preset",
        "tiny",
        "--out",
        out,
        "--seed",
        "1",
        "--no-progress",
        "--set",
        "data.background=iid",
    )
    assert result.returncode == 0, result.stderr
    assert "exact_match=" in result.stdout and (out / "metrics.json").is_file()


@pytest.mark.parametrize("command", [["paper-domain", "--task", "digit_circle"], ["planted"]])
def test_bench_seeds_that_are_not_integers_are_a_usage_error(cli, tmp_path, command):
    out = tmp_path / "bench"
    result = cli("bench", *command, "--out", out, "--seeds", "0,x")
    assert result.returncode == 2
    assert "'0,x' is not a comma-separated list of integers" in result.stderr
    assert not out.exists()
