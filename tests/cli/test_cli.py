import json

import pytest

from sparling_genomics.runners.stability import seed_stability
from tests.runners.test_stability import exported_family_run


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
    assert "identifiability: conditions" in result.stdout  # a tiny run: its verdict, a line


def test_the_installed_cli_has_user_verbs_only(cli):
    """The benchmarks left the package (``python -m benchmarks``); no ``bench`` verb."""
    result = cli("--help")
    assert result.returncode == 0, result.stderr
    verbs = result.stdout.split("Commands:", 1)[1]
    assert "train" in verbs and "report" in verbs and "bench" not in verbs
    result = cli("bench", "planted", "--out", "x")
    assert result.returncode == 2 and "no such verb 'bench'" in result.stderr


def test_stability_verb_writes_the_table(tmp_path, cli):
    runs = [exported_family_run(tmp_path, s) for s in range(3)]
    out = tmp_path / "stability.json"
    result = cli("stability", *[a for r in runs for a in ("--model", r)], "--out", out)
    assert result.returncode == 0, result.stderr
    assert "seed0: 1 of 3 families in every seed" in result.stdout
    assert "consensus: 2 families in 2 or more seeds, 1 in every seed; 3 in one seed only" \
        in result.stdout
    written = json.loads(out.read_text())
    assert written == seed_stability(runs)
    assert written["fraction_reproduced"] == pytest.approx(0.375, abs=1e-4)
    assert written["consensus"]["groups"][0]["recurs"] == "3 of 3"


def test_stability_verb_refuses_runs_of_another_task_and_measures_nothing_for_one(tmp_path,
                                                                                  cli):  # fmt: skip
    runs = [exported_family_run(tmp_path, 0), exported_family_run(tmp_path, 1, task="splicing")]
    out = tmp_path / "stability.json"
    result = cli("stability", *[a for r in runs for a in ("--model", r)], "--out", out)
    assert result.returncode == 2 and not out.exists()
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {runs[1]}: another task than")
    result = cli("stability", "--model", runs[0], "--out", out)
    assert result.returncode == 0, result.stderr
    assert "reproducibility was not measured" in result.stdout
    assert json.loads(out.read_text())["consensus"]["measured"] is False


def test_stability_verb_refuses_a_run_without_motifs(tmp_path, cli):
    good = exported_family_run(tmp_path, 0)
    bare = tmp_path / "bare"
    bare.mkdir()
    out = tmp_path / "stability.json"
    result = cli("stability", "--model", good, "--model", bare, "--out", out)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and str(bare) in lines[0] and "export" in lines[0]
    assert not out.exists()


def test_export_refuses_a_family_setting_out_of_range(cli, tmp_path):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "config.yaml").write_text("task: planted\n")  # refused before it is read
    result = cli("export", "--model", tmp_path / "run", "--family", "tomtom_q=2")
    assert result.returncode == 2
    message = "error: config key 'family.tomtom_q' must be at most 1.0, got 2.0"
    assert result.stderr.strip() == message
