"""Command line: ``sparling-genomics VERB ...``. Thin: parse, then call library functions.

Errors the user can fix (``SparlingError``; click's usage errors: a missing option, a
value out of range; and a path this user may not write or read -- EACCES, EPERM, EROFS --
named by its folder, ``io.denied_error``) print one ``error: ...`` line and exit 2;
anything else prints a short message and exits 1 (the traceback only with ``--debug``,
accepted before or after the verb, as ``--quiet`` and ``--verbose`` are). A misspelt verb
gets the nearest verbs. Heavy imports (torch) happen inside the verbs, after parsing.

SIGTERM (what ``kill``, ``timeout``, SLURM's ``scancel`` and its time limit, and Snakemake
send first) is raised as :class:`Terminated` inside the verb, so its clean-up runs as on
Ctrl-C: temporary files are removed and an output folder the verb made is taken back, then
the exit code is 143 (128 + 15). Python's default would end the process at once, leaving them.
"""

from __future__ import annotations

import difflib
import signal
import threading

import click

from ..errors import ConfigError, SparlingError
from ..io import denied_error
from .audio import audio_check, audio_corpus
from .concepts import concepts
from .data import dataset
from .diagnose import diagnose
from .motifs import export, report, scan, stability
from .options import CONTEXT_SETTINGS, DEBUG_KEY, output_options, reset_output_level
from .train import compare, evaluate, train
from .variants import variants


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the verb is (a KeyboardInterrupt, so clean-up that handles
    Ctrl-C handles it alike)."""


def _raise_terminated(signum, frame) -> None:
    raise Terminated


class VerbGroup(click.Group):
    """The verbs: each gets the output options; errors become one line and an exit code."""

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        have = {opt for p in cmd.params for opt in getattr(p, "opts", [])}
        cmd.params += [o for o in output_options() if not set(o.opts) & have]
        super().add_command(cmd, name)

    def resolve_command(self, ctx: click.Context, args: list[str]):
        name = args[0] if args else ""
        if name and not name.startswith("-") and self.get_command(ctx, name) is None:
            near = difflib.get_close_matches(name, self.list_commands(ctx), n=2, cutoff=0.6)
            hint = f" (did you mean {' or '.join(map(repr, near))}?)" if near else ""
            raise ConfigError(f"no such verb {name!r}{hint}; `{ctx.command_path} -h` lists them")
        return super().resolve_command(ctx, args)

    def make_context(self, info_name, args, parent=None, **extra):
        if parent is None:
            reset_output_level()  # each command line starts at the default verbosity
        return super().make_context(info_name, args, parent=parent, **extra)

    def invoke(self, ctx: click.Context):
        main_thread = threading.current_thread() is threading.main_thread()
        previous = signal.signal(signal.SIGTERM, _raise_terminated) if main_thread else None
        try:
            return super().invoke(ctx)
        except SparlingError as exc:
            click.echo(f"error: {exc}", err=True)
            ctx.exit(2)
        except click.UsageError as exc:  # a bad option value: one line too, with the way out
            where = exc.ctx.command_path if exc.ctx is not None else ctx.command_path
            message = exc.format_message().replace("\n", " ")
            click.echo(f"error: {message} (`{where} -h` lists the options)", err=True)
            ctx.exit(2)
        except (click.exceptions.Exit, click.ClickException, click.Abort):
            raise
        except Terminated:
            click.echo("terminated (SIGTERM)", err=True)
            ctx.exit(143)
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            ctx.exit(130)
        except Exception as exc:  # noqa: BLE001 - the CLI's last line of defence
            denied = denied_error(exc) if isinstance(exc, OSError) else None
            if denied is not None:  # a read-only folder: the user's to fix, wherever it was hit
                click.echo(f"error: {denied}", err=True)
                ctx.exit(2)
            if ctx.meta.get(DEBUG_KEY):
                raise
            click.echo(
                f"error: unexpected failure: {type(exc).__name__}: {exc} "
                "(rerun with --debug for the traceback)",
                err=True,
            )
            ctx.exit(1)
        finally:
            if main_thread:
                signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)


@click.group("sparling-genomics", cls=VerbGroup, context_settings=CONTEXT_SETTINGS)
@click.version_option(package_name="sparling-genomics")
def main() -> None:
    """Motif discovery in genomes with Sparling networks.

    A run: `dataset` (genome + annotation -> labelled windows), `train`, `export` (motifs),
    `scan` (genome tracks), `report`. `VERB -h` tells each verb's options.
    """


main.params += output_options()

for _verb in (dataset, train, evaluate, compare, export, scan, report, stability, variants,
              diagnose, concepts, audio_corpus, audio_check):  # fmt: skip
    main.add_command(_verb)
