"""Options and click callbacks the benchmarks' commands share (``cli.py`` holds the commands).

A callback turns bad input into a usage error (exit 2). Those that check against a benchmark's
own names import it when they run, as the commands do, so ``--help`` loads no benchmark.
"""

from __future__ import annotations

from pathlib import Path

import click


def parse_seeds(ctx, param, value: str) -> list[int]:
    """``--seeds 0,1,2`` as a list of ints (a click callback: bad input is a usage error)."""
    try:
        seeds = [int(s) for s in str(value).split(",") if s.strip()]
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a comma-separated list of integers") from None
    if not seeds:
        raise click.BadParameter("give at least one seed")
    return seeds


def parse_optional_seeds(ctx, param, value: str) -> list[int]:
    """As :func:`parse_seeds`, but an empty value is no seeds (an option left out)."""
    return parse_seeds(ctx, param, value) if value else []


def parse_fractions(ctx, param, value: str) -> list[float]:
    """``--permutations 0,0.1,0.2`` as fractions in [0, 1] (a click callback)."""
    try:
        fractions = [float(s) for s in str(value).split(",") if s.strip()]
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a comma-separated list of numbers") from None
    if not fractions or any(not 0 <= f <= 1 for f in fractions):
        raise click.BadParameter("give fractions between 0 and 1")
    return fractions


benchmarks_md_option = click.option(
    "--benchmarks-md",
    default=Path("BENCHMARKS.md"),
    type=click.Path(path_type=Path),
    show_default=True,
    help="Markdown file whose section the benchmark rewrites.",
)


def finished_run_options(f):
    """The options of a benchmark that reads a finished Snakemake run (pipeline, apply)."""
    for option in reversed([
        click.option("--workdir", default=Path("."), type=click.Path(path_type=Path),
                     show_default=True, help="Where the Snakemake run wrote results/ and "
                     "timings/."),
        click.option("--out", required=True, type=click.Path(path_type=Path),
                     help="Output folder."),
        click.option("--wall-seconds", required=True, type=float,
                     help="The run's wall-clock time."),
        click.option("--command", "command_line", required=True,
                     help="The command that was timed."),
        benchmarks_md_option,
    ]):  # fmt: skip
        f = option(f)
    return f


def parse_flanks(ctx, param, value: str) -> tuple[int, ...]:
    """``--flanks 400,2000`` as OpenSpliceAI flanks (a click callback)."""
    from .spliceai_net import ARCHITECTURES

    try:
        flanks = tuple(int(f) for f in str(value).split(",") if f.strip())
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a comma-separated list of flanks") from None
    bad = [f for f in flanks if f not in ARCHITECTURES]
    if bad or not flanks:
        raise click.BadParameter(f"flanks are {', '.join(map(str, sorted(ARCHITECTURES)))}")
    return flanks


def parse_default_flanks(ctx, param, value: str) -> tuple[int, ...]:
    """``--default-epochs 400`` as flanks of ``--flanks`` to train for 10 epochs too."""
    if not str(value).strip():
        return ()
    flanks = parse_flanks(ctx, param, value)
    others = [f for f in flanks if f not in ctx.params.get("flanks", flanks)]
    if others:
        raise click.BadParameter(f"{', '.join(map(str, others))} not in --flanks")
    return flanks


def parse_sizes(ctx, param, value: str) -> list[str]:
    """``--sizes 100M,300M,1G`` as size labels (a click callback: bad input is a usage error)."""
    from .scale_genome import parse_size, size_label

    try:
        sizes = [size_label(parse_size(s)) for s in str(value).split(",") if s.strip()]
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None
    if not sizes:
        raise click.BadParameter("give at least one size")
    return list(dict.fromkeys(sizes))

