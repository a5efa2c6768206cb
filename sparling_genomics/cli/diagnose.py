"""The ``diagnose`` verb (registered on ``cli.main``): the topology of a run's representations
across its checkpoint series. Kept out of ``cli.py`` only for length; as thin as the others."""

from __future__ import annotations

from pathlib import Path

import click

from .paths import OUT_FOLDER


@click.command()
@click.argument("run", type=click.Path(path_type=Path))
@click.option("--out", type=OUT_FOLDER, help="Folder (default RUN/diagnostics).")
@click.option("--layer", help="Point cloud: embedding, motifs, g, or a module's name "
              "(default: the task's; modular addition: embedding, others: motifs).")  # fmt: skip
@click.option("--max-points", default=1000, show_default=True, type=click.IntRange(min=4),
              help="Points per cloud (a seeded subsample beyond).")  # fmt: skip
@click.option("--sample", default=256, show_default=True, type=click.IntRange(min=1),
              help="Val examples whose activations make a layer's cloud.")  # fmt: skip
@click.option("--max-eval", default=4096, show_default=True, type=click.IntRange(min=1),
              help="Examples per split scored at each checkpoint.")  # fmt: skip
@click.option("--diagram-steps", help="Steps whose persistence diagrams are drawn, e.g. "
              "0,15000 (default: the first, the test jump, the last).")  # fmt: skip
@click.option("--device", help="auto (default: the run's), cpu, cuda or cuda:N.")
def diagnose(run, out, layer, max_points, sample, max_eval, diagram_steps, device) -> None:
    """Persistent homology, intrinsic dimension (and Fourier spectrum) of RUN's checkpoints."""
    from ..errors import InputError
    from ..rundir import diagnostics_dir
    from ..runners.diagnostics import describe, diagnose_run

    try:
        steps = [int(s) for s in diagram_steps.split(",")] if diagram_steps else None
    except ValueError:
        raise InputError(f"--diagram-steps {diagram_steps!r}: not a list of steps") from None
    summary = diagnose_run(run, out, layer=layer, max_points=max_points, sample=sample,
                           max_eval=max_eval, device=device, diagram_steps=steps)  # fmt: skip
    click.echo(describe(summary))
    click.echo(f"wrote {out or diagnostics_dir(run)}")
