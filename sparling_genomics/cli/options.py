"""Options the verbs share, spelt once: ``--model RUN`` (checked to be a run folder when the
command line is parsed), ``--device``, ``--threads``, ``--motifs``, ``--split``, and the
output options every verb accepts before or after its name (``--quiet``, ``--verbose``,
``--debug``)."""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import RunDirectoryError
from ..progress import NORMAL, QUIET, VERBOSE, set_verbosity
from ..rundir import CONFIG_NAME

#: ``-h`` beside ``--help`` (samtools', bedtools' and most of the field's habit).
CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
#: ``ctx.meta`` key of ``--debug`` (read by the group's error handling).
DEBUG_KEY = "sparling_genomics.debug"


def check_run_folder(path: Path) -> Path:
    """``path`` when it is a run folder (a folder holding ``config.yaml``); a one-line
    error naming what it is instead."""
    path = Path(path)
    if not path.exists():
        raise RunDirectoryError(f"{path}: no such run folder (a run is the --out of `train`)")
    if not path.is_dir():
        raise RunDirectoryError(f"{path}: is a file, not a run folder")
    if not (path / CONFIG_NAME).is_file():
        raise RunDirectoryError(f"{path}: not a run folder (no {CONFIG_NAME})")
    return path


class RunFolder(click.ParamType):
    """A click type for ``--model``: a run folder (:func:`check_run_folder`)."""

    name = "RUN"

    def convert(self, value, param, ctx) -> Path:
        return check_run_folder(Path(value))


RUN = RunFolder()


def model_option(help: str = "Run folder of a trained model (the --out of `train`).", **kw):
    """``--model RUN``: the run a verb reads (required unless ``required=False``)."""
    return click.option("--model", "run", required=kw.pop("required", True), type=RUN,
                        metavar="RUN", help=help, **kw)  # fmt: skip


def device_option(default_help: str = "auto (default)"):
    """``--device``: where the model runs."""
    return click.option("--device", help=f"{default_help}, cpu, cuda or cuda:N.")


def _set_threads(ctx: click.Context, param: click.Parameter, value: int | None) -> int | None:
    if value is not None:
        import torch  # only when asked: the verbs import it after parsing anyway

        torch.set_num_threads(value)
    return value


def threads_option(verb_help: str = "Torch threads (default: torch's, one a core)."):
    """``--threads N``: the CPU threads a compute verb uses (a cluster job's slots)."""
    return click.option("--threads", type=click.IntRange(min=1), callback=_set_threads,
                        expose_value=False, help=verb_help)  # fmt: skip


def run_dataset_option():
    """``--dataset``: the run's own dataset where it has moved (the run records where it was)."""
    return click.option("--dataset", "run_dataset", type=click.Path(path_type=Path),
                        help="The run's dataset, where it has moved (default: where the run "
                        "records it).")  # fmt: skip


motifs_option = click.option(
    "--motifs",
    "motifs_dir",
    type=click.Path(path_type=Path),
    help="Folder written by `export` (default RUN/motifs).",
)
split_option = click.option(
    "--split", type=click.Choice(["val", "test"]), default="test", show_default=True
)


def _set_level(level: int):
    def callback(ctx: click.Context, param: click.Parameter, value: bool) -> None:
        if value:
            set_verbosity(level)

    return callback


def _set_debug(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value:
        ctx.meta[DEBUG_KEY] = True


def output_options() -> list[click.Option]:
    """``--quiet``/``-q``, ``--verbose``/``-v``, ``--debug``: accepted before the verb (on
    the group) and after it (each verb gets its own copies)."""
    return [
        click.Option(["-q", "--quiet"], is_flag=True, expose_value=False, is_eager=True,
                     callback=_set_level(QUIET),
                     help="Only results and errors: no progress, no notes."),
        click.Option(["-v", "--verbose"], is_flag=True, expose_value=False, is_eager=True,
                     callback=_set_level(VERBOSE), help="More detail while working."),
        click.Option(["--debug"], is_flag=True, expose_value=False, is_eager=True,
                     callback=_set_debug, help="Show tracebacks of unexpected errors."),
    ]  # fmt: skip


def reset_output_level() -> None:
    """Back to the default verbosity (each command line starts there)."""
    set_verbosity(NORMAL)

