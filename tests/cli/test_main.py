"""The command line's habits: -h, output options before or after the verb, --threads, a
misspelt verb, a run folder that is not there."""

import click
import pytest
from click.testing import CliRunner

from sparling_genomics import progress
from sparling_genomics.cli.main import main
from sparling_genomics.cli.options import threads_option

VERBS_WITH_A_RUN = ("evaluate", "export", "scan", "report", "compare", "variants", "diagnose",
                    "concepts")  # fmt: skip
COMPUTE_VERBS = ("train", "evaluate", "export", "scan", "variants", "diagnose", "concepts")


def _invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


@pytest.mark.parametrize("verb", [None, *sorted(main.commands)])
def test_dash_h_is_help_everywhere(verb):
    result = _invoke(*([verb] if verb else []), "-h")
    assert result.exit_code == 0 and result.output.startswith("Usage:"), result.output


@pytest.mark.parametrize("verb", sorted(main.commands))
def test_every_verb_takes_the_output_options(verb):
    opts = {o for p in main.commands[verb].params for o in getattr(p, "opts", [])}
    assert {"--quiet", "-q", "--verbose", "-v", "--debug"} <= opts


@pytest.mark.parametrize("verb", VERBS_WITH_A_RUN)
def test_every_verb_that_reads_a_run_takes_it_as_model(verb):
    params = {o: p for p in main.commands[verb].params for o in getattr(p, "opts", [])}
    assert "--model" in params and params["--model"].name == "run"
    assert not [p for p in main.commands[verb].params if isinstance(p, click.Argument)]


@pytest.mark.parametrize("verb", COMPUTE_VERBS)
def test_compute_verbs_take_threads(verb):
    assert "--threads" in {o for p in main.commands[verb].params for o in getattr(p, "opts", [])}


def test_threads_sets_torch_threads():
    import torch

    before = torch.get_num_threads()

    @click.command()
    @threads_option()
    def probe():
        click.echo(torch.get_num_threads())

    try:
        result = CliRunner().invoke(probe, ["--threads", "1"])
        assert result.exit_code == 0 and result.output.strip() == "1"
    finally:
        torch.set_num_threads(before)


@pytest.mark.parametrize("args, level", [
    (("--quiet", "scan", "-h"), progress.QUIET),
    (("scan", "-q", "-h"), progress.QUIET),
    (("scan", "--verbose", "-h"), progress.VERBOSE),
    (("scan", "-h"), progress.NORMAL),
])  # fmt: skip
def test_verbosity_before_or_after_the_verb(args, level):
    try:
        # -h is eager too; the verbosity options come first on the command line's order
        _invoke(*args)
        assert progress.verbosity() == level
    finally:
        progress.set_verbosity(progress.NORMAL)


@pytest.mark.parametrize("where", ["before", "after"])
def test_debug_before_or_after_the_verb_shows_the_traceback(monkeypatch, where):
    import sparling_genomics.genome.dataset as dataset

    def boom(*args, **kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(dataset, "build_dataset", boom)
    args = ["dataset", "--reference", "tiny", "--out", "/nonexistent-dir/x.h5"]
    args = ["--debug", *args] if where == "before" else [*args, "--debug"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1 and isinstance(result.exception, RuntimeError)
    result = CliRunner().invoke(main, [a for a in args if a != "--debug"])  # not kept
    assert result.exit_code == 1 and "rerun with --debug" in result.stderr


def test_a_misspelt_verb_names_the_nearest(cli):
    result = cli("scna", "--model", "x")
    assert result.returncode == 2
    assert result.stderr.strip() == ("error: no such verb 'scna' (did you mean 'scan'?); "
                                     "`sparling-genomics -h` lists them")  # fmt: skip


@pytest.mark.parametrize("make, message", [
    (lambda p: None, "no such run folder"),
    (lambda p: p.write_text("x"), "is a file, not a run folder"),
    (lambda p: p.mkdir(), "not a run folder (no config.yaml)"),
])  # fmt: skip
def test_a_run_that_is_not_one_is_named_as_such(tmp_path, make, message):
    run = tmp_path / "run"
    make(run)
    for verb in ("scan", "diagnose", "export"):
        result = CliRunner().invoke(main, [verb, "--model", str(run), "--out", str(tmp_path / "o")])
        assert result.exit_code == 2
        assert result.output.strip() == f"error: {run}: {message}" + (
            " (a run is the --out of `train`)" if message == "no such run folder" else ""
        ), result.output
        assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("debug", [False, True])
def test_a_denied_write_anywhere_in_a_verb_is_one_line_exit_2(monkeypatch, tmp_path, debug):
    """A PermissionError (or EPERM, EROFS) on a path, wherever a verb hits it, is the user's
    to fix: one line naming the folder, exit 2 -- with --debug too (no traceback needed)."""
    import errno

    import sparling_genomics.genome.dataset as dataset

    def denied(*args, **kwargs):
        raise PermissionError(errno.EACCES, "Permission denied", str(tmp_path / "ro" / "x.h5"))

    (tmp_path / "ro").mkdir()
    monkeypatch.setattr(dataset, "build_dataset", denied)
    args = [*(["--debug"] if debug else []), "dataset", "--reference", "tiny", "--out",
            str(tmp_path / "out.h5")]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert lines == [f"error: {tmp_path / 'ro'}: cannot write in this folder (permission denied); "
                     "write the output elsewhere or make the folder writable"]
