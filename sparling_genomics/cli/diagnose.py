"""The ``diagnose`` verb: the topology of a run's representations
across its checkpoint series."""

from __future__ import annotations

import click

from .options import device_option, model_option, run_dataset_option, threads_option
from .paths import OUT_FOLDER


@click.command()
@model_option()
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
@run_dataset_option()
@device_option("auto (default: the run's)")
@threads_option()
def diagnose(run, out, layer, max_points, sample, max_eval, diagram_steps, run_dataset,
             device) -> None:  # fmt: skip
    """Persistent homology, intrinsic dimension (and Fourier spectrum) of RUN's checkpoints."""
    from ..errors import InputError
    from ..rundir import diagnostics_dir
    from ..runners.diagnose import describe, diagnose_run

    try:
        steps = [int(s) for s in diagram_steps.split(",")] if diagram_steps else None
    except ValueError:
        raise InputError(f"--diagram-steps {diagram_steps!r}: not a list of steps") from None
    summary = diagnose_run(run, out, layer=layer, max_points=max_points, sample=sample,
                           max_eval=max_eval, device=device, diagram_steps=steps,
                           dataset=run_dataset)  # fmt: skip
    click.echo(describe(summary))
    click.echo(f"wrote {out or diagnostics_dir(run)}")
