"""Command line: ``sparling-genomics VERB ...``. Thin: parse, then call library functions.

Errors the user can fix (``SparlingError``) print one ``error: ...`` line and exit 2;
anything else prints a short message and exits 1 (the traceback only with ``--debug``).
Heavy imports (torch) happen inside the verbs, after argument parsing.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from .errors import SparlingError


class _Group(click.Group):
    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except SparlingError as exc:
            click.echo(f"error: {exc}", err=True)
            ctx.exit(2)
        except (click.exceptions.Exit, click.ClickException, click.Abort):
            raise
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            ctx.exit(130)
        except Exception as exc:  # noqa: BLE001 - the CLI's last line of defence
            if ctx.params.get("debug"):
                raise
            click.echo(
                f"error: unexpected failure: {type(exc).__name__}: {exc} "
                "(rerun with --debug for the traceback)",
                err=True,
            )
            ctx.exit(1)


@click.group(cls=_Group)
@click.option("--debug", is_flag=True, help="Show tracebacks of unexpected errors.")
@click.version_option(package_name="sparling-genomics")
def main(debug: bool) -> None:
    """Motif discovery in genomes with Sparling networks."""


def _overrides(seed, device, sets) -> list[dict]:
    from .config import parse_override

    overrides = [parse_override(text) for text in sets]
    if seed is not None:
        overrides.append({"seed": seed})
    if device is not None:
        overrides.append({"device": device})
    return overrides


@main.command()
@click.option("--task", help="Task to train (planted).")
@click.option("--preset", default="cpu", show_default=True, help="Preset: cpu, paper, tiny.")
@click.option("--out", required=True, type=click.Path(path_type=Path), help="Run directory.")
@click.option("--seed", type=int, help="Seed of every random choice.")
@click.option("--device", help="auto (default), cpu, cuda or cuda:N.")
@click.option(
    "--config",
    "config_files",
    multiple=True,
    type=click.Path(path_type=Path),
    help="YAML config file(s) over the preset.",
)
@click.option("--set", "sets", multiple=True, help="Override one key: a.b=value (repeatable).")
@click.option("--resume", is_flag=True, help="Continue the killed run in --out.")
@click.option("--no-progress", is_flag=True, help="No progress bar.")
def train(task, preset, out, seed, device, config_files, sets, resume, no_progress) -> None:
    """Train a Sparling model; writes the run directory OUT."""
    from .config import resolve_config
    from .errors import ConfigError
    from .train.trainer import train as run_training

    if resume:
        if task or config_files or sets or seed is not None:
            raise ConfigError("--resume continues OUT with its saved config; drop other options")
        metrics = run_training({}, out, resume=True, progress=not no_progress)
    else:
        if not task:
            raise ConfigError("--task is required (e.g. --task planted)")
        config = resolve_config(
            task, preset, files=list(config_files), overrides=_overrides(seed, device, sets)
        )
        metrics = run_training(config, out, progress=not no_progress)
    click.echo(_summary_line(metrics))


def _summary_line(metrics: dict) -> str:
    e2e = metrics["e2e"]
    parts = [f"exact_match={e2e['exact_match']:.4f}", f"edit_error={e2e['edit_error']:.4f}"]
    if metrics.get("motif"):
        m = metrics["motif"]
        parts += [f"fne={m['fne']:.4f}", f"fpe={m['fpe']:.4f}", f"ce={m['ce']:.4f}"]
    if metrics.get("density") is not None:
        parts.append(f"density={metrics['density']:.3g}")
    parts.append(f"samples={metrics['samples_seen']}")
    parts.append(f"seconds={metrics['wall_seconds']:.0f}")
    return " ".join(parts)


@main.group()
def bench() -> None:
    """Benchmarks: write JSON and update BENCHMARKS.md."""


@bench.command("planted")
@click.option("--out", required=True, type=click.Path(path_type=Path), help="Folder for runs.")
@click.option("--seeds", default="0,1,2", show_default=True, help="Comma-separated seeds.")
@click.option("--preset", default="cpu", show_default=True)
@click.option("--ablations/--no-ablations", default=True, show_default=True)
@click.option(
    "--benchmarks-md",
    default=Path("BENCHMARKS.md"),
    type=click.Path(path_type=Path),
    show_default=True,
)
@click.option("--set", "sets", multiple=True, help="Override one key for every run.")
def bench_planted(out, seeds, preset, ablations, benchmarks_md, sets) -> None:
    """Planted-motif quality: 3 seeds + ablations (fixed density, global threshold)."""
    from .bench.planted import run_planted_benchmark

    seed_list = [int(s) for s in str(seeds).split(",") if s.strip()]
    result = run_planted_benchmark(
        out,
        seed_list,
        preset=preset,
        ablations=ablations,
        benchmarks_md=benchmarks_md,
        overrides=_overrides(None, None, sets),
    )
    click.echo(f"wrote {result}")


@bench.command("sparse-layer")
@click.option(
    "--out", default=Path("bench_runs/sparse_layer.json"), type=click.Path(path_type=Path)
)
@click.option(
    "--benchmarks-md",
    default=Path("BENCHMARKS.md"),
    type=click.Path(path_type=Path),
    show_default=True,
)
@click.option("--repeats", default=20, show_default=True)
def bench_sparse_layer(out, benchmarks_md, repeats) -> None:
    """Forward+backward time of our sparse layer vs the `sparling` package's."""
    from .bench.sparse_layer import run_sparse_layer_benchmark

    run_sparse_layer_benchmark(out, benchmarks_md=benchmarks_md, repeats=repeats)
    click.echo(f"wrote {out}")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
