"""Command line of the benchmarks: ``python -m benchmarks NAME [options]``.

Each benchmark writes its JSON and replaces its section of BENCHMARKS.md (``tidy`` only puts
the file in order and rewrites its summary). The benchmarks live
outside the installed package (they encode the issues' floors, not the library); errors are
reported as by ``sparling-genomics`` (a fixable one is one line and exit 2). Each command
imports its benchmark when it runs, so ``--help`` stays fast (no torch); the options several
commands share are in ``cli_options.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from sparling_genomics.cli.main import VerbGroup
from sparling_genomics.cli.options import CONTEXT_SETTINGS, model_option, output_options
from sparling_genomics.cli.train import overrides_of

from .cli_options import (
    benchmarks_md_option,
    finished_run_options,
    parse_default_flanks,
    parse_flanks,
    parse_fractions,
    parse_optional_seeds,
    parse_seeds,
    parse_sizes,
)


@click.group(cls=VerbGroup, context_settings=CONTEXT_SETTINGS)
def main() -> None:
    """Benchmarks: write JSON and update BENCHMARKS.md."""


main.params += output_options()  # --quiet, --verbose, --debug before the benchmark's name


@main.command("planted")
@click.option("--out", required=True, type=click.Path(path_type=Path), help="Folder for runs.")
@click.option("--seeds", default="0,1,2", show_default=True, callback=parse_seeds,
              help="Comma-separated seeds.")  # fmt: skip
@click.option("--preset", default="cpu", show_default=True)
@click.option("--ablations/--no-ablations", default=True, show_default=True)
@click.option("--draws", default="", callback=parse_optional_seeds,
              help="Comma-separated draws of a random JASPAR motif set (seed 0 each).")
@click.option("--block-size", "block_sizes", default="",
              callback=parse_optional_seeds,
              help="Comma-separated motif block sizes to train beside (every seed).")  # fmt: skip
@benchmarks_md_option
@click.option("--set", "sets", multiple=True, help="Override one key for every run.")
def bench_planted(out, seeds, preset, ablations, draws, block_sizes, benchmarks_md, sets) -> None:
    """Planted-motif quality: 3 seeds + ablations (fixed density, global threshold, motif
    blocks) and random motif draws."""
    from .planted import run_planted_benchmark

    result = run_planted_benchmark(
        out,
        seeds,
        preset=preset,
        ablations=ablations,
        draws=draws,
        benchmarks_md=benchmarks_md,
        overrides=overrides_of(None, None, sets),
        block_sizes=block_sizes,
        sets=list(sets),
    )
    click.echo(f"wrote {result}")


@main.command("grokking")
@click.option("--out", required=True, type=click.Path(path_type=Path), help="Folder for runs.")
@click.option("--permutations", default="0,0.1,0.2", show_default=True,
              callback=parse_fractions, help="Label-permutation fractions.")  # fmt: skip
@click.option("--planted-seeds", default="0,1,2", show_default=True, callback=parse_seeds,
              help="Seeds of the planted runs diagnosed through annealing.")  # fmt: skip
@click.option("--max-points", default=600, show_default=True, help="Points per motif cloud.")
@benchmarks_md_option
def bench_grokking(out, permutations, planted_seeds, max_points, benchmarks_md) -> None:
    """Grokking's topological signature (modular addition) + motif-layer diagnostics."""
    from .grokking import run_grokking_benchmark

    result = run_grokking_benchmark(out, permutations, planted_seeds, max_points=max_points,
                                    benchmarks_md=benchmarks_md)  # fmt: skip
    click.echo(f"wrote {result}")


@main.command("concepts")
@click.option("--out", required=True, type=click.Path(path_type=Path), help="Folder for runs.")
@click.option("--parts", default="synthetic,planted,measures", show_default=True,
              help="Comma-separated parts to run: synthetic, planted (or one set: "
              "planted-default, planted-draw1, planted-draw2), measures, splicing, rejudge (the "
              "planted sets' recovery recomputed from the motif files on disk, no training); "
              "the section shows every part on disk.")
@benchmarks_md_option
def bench_concepts(out, parts, benchmarks_md) -> None:
    """Concept extractors (SAE, BSFs, Deleuzian, TF-MoDISco) against Sparling's channels."""
    from .concepts import PARTS, REJUDGE, run_concepts_benchmark

    chosen = [p.strip() for p in parts.split(",") if p.strip()]
    sets = {f"planted-{name}" for name in ("default", "draw1", "draw2")}
    unknown = [p for p in chosen if p not in (*PARTS, *sets, REJUDGE)]
    if unknown:
        known = ", ".join((*PARTS, REJUDGE))
        raise click.BadParameter(f"unknown part(s) {', '.join(unknown)} (one of {known})",
                                 param_hint="--parts")  # fmt: skip
    click.echo(f"wrote {run_concepts_benchmark(out, chosen, benchmarks_md=benchmarks_md)}")


@main.command("identifiability")
@click.option("--runs", "folders", multiple=True, required=True,
              type=click.Path(path_type=Path, exists=True, file_okay=False),
              help="A folder of benchmark runs (searched recursively); repeatable.")
@click.option("--out", required=True, type=click.Path(path_type=Path), help="The JSON file.")
@benchmarks_md_option
def bench_identifiability(folders, out, benchmarks_md) -> None:
    """The identifiability check's verdict on every finished run under the folders."""
    from .identifiability import run_identifiability_benchmark

    written = run_identifiability_benchmark(list(folders), out, benchmarks_md=benchmarks_md)
    click.echo(f"wrote {written}")


@main.command("paper-domain")
@click.option(
    "--task", required=True, type=click.Choice(["digit_circle", "latex_ocr", "audio_sequence"])
)
@click.option("--out", required=True, type=click.Path(path_type=Path), help="Folder for the run.")
@click.option("--preset", default="cpu", show_default=True)
@click.option(
    "--seeds",
    default="0",
    show_default=True,
    callback=parse_seeds,
    help="Comma-separated seeds (with several, floors are judged on their mean).",
)
@benchmarks_md_option
@click.option("--set", "sets", multiple=True, help="Override one key (a.b=value).")
@click.option("--section", help="BENCHMARKS.md section to write (default: paper-TASK for the cpu "
              "preset as shipped, else named by the preset and --set keys); another name keeps "
              "the default one beside it.")  # fmt: skip
def bench_paper_domain(task, out, preset, seeds, benchmarks_md, sets, section) -> None:
    """A Sparling paper domain on the cpu preset, beside the paper's 9-seed means."""
    from .paper_domains import run_paper_domain_benchmark

    result = run_paper_domain_benchmark(
        task, out, preset=preset, seeds=seeds, overrides=overrides_of(None, None, sets),
        benchmarks_md=benchmarks_md, section=section,
    )  # fmt: skip
    click.echo(f"wrote {result}")


@main.command("splicing")
@click.option("--out", required=True, type=click.Path(path_type=Path), help="Folder for runs.")
@click.option("--reference", default="tair10-chr1", show_default=True)
@click.option("--preset", default="cpu", show_default=True)
@click.option("--seed", default=0, show_default=True)
@benchmarks_md_option
@click.option("--set", "sets", multiple=True, help="Override one key for every model.")
@click.option("--skip", multiple=True, metavar="MODEL",
              help="Leave out a Sparling variant (not baseline or sparling).")  # fmt: skip
def bench_splicing(out, reference, preset, seed, benchmarks_md, sets, skip) -> None:
    """Dataset build + non-sparse baseline + Sparling on a reference; motif channels."""
    from .splicing import run_splicing_benchmark

    result = run_splicing_benchmark(
        out,
        reference=reference,
        preset=preset,
        seed=seed,
        benchmarks_md=benchmarks_md,
        overrides=overrides_of(None, None, sets),
        skip=skip,
    )
    click.echo(f"wrote {result}")


@main.command("planted-data")
@click.option(
    "--out", default=Path("bench_runs/planted_data.json"), type=click.Path(path_type=Path)
)
@click.option("--draws", default="1,2,3", show_default=True, callback=parse_seeds,
              help="Random motif draws to time beside the default set.")  # fmt: skip
@click.option("--batches", default=20, show_default=True, help="Batches per repeat (3 repeats).")
@benchmarks_md_option
def bench_planted_data(out, draws, batches, benchmarks_md) -> None:
    """Planted batch time: conv1d site rejection vs the numpy gather it replaced."""
    from .planted_data import run_planted_data_benchmark

    run_planted_data_benchmark(out, benchmarks_md=benchmarks_md, draws=draws, batches=batches)
    click.echo(f"wrote {out}")


@main.command("sparse-layer")
@click.option(
    "--out", default=Path("bench_runs/sparse_layer.json"), type=click.Path(path_type=Path)
)
@benchmarks_md_option
@click.option("--repeats", default=20, show_default=True)
def bench_sparse_layer(out, benchmarks_md, repeats) -> None:
    """Forward+backward time of our sparse layer vs the `sparling` package's."""
    from .sparse_layer import run_sparse_layer_benchmark

    run_sparse_layer_benchmark(out, benchmarks_md=benchmarks_md, repeats=repeats)
    click.echo(f"wrote {out}")


@main.command("scan")
@model_option()
@click.option("--reference", default="tair10-chr1", show_default=True)
@click.option("--out", required=True, type=click.Path(path_type=Path), help="Output folder.")
@benchmarks_md_option
def bench_scan(run, reference, out, benchmarks_md) -> None:
    """Scan a whole reference (tracks included) and time memelite FIMO on the same PWMs."""
    from .scan import run_scan_benchmark

    click.echo(
        f"wrote {run_scan_benchmark(run, out, reference=reference, benchmarks_md=benchmarks_md)}"
    )


@main.command("scan-load")
@model_option()
@click.option("--reference", default="tair10-chr1", show_default=True)
@click.option("--out", required=True, type=click.Path(path_type=Path), help="Output folder.")
@benchmarks_md_option
def bench_scan_load(run, reference, out, benchmarks_md) -> None:
    """Scan 10,000 small contigs and one 30 Mb sequence: peak RSS, and sites identical to
    scanning the pieces separately."""
    from .scan_load import run_scan_load_benchmark

    path = run_scan_load_benchmark(run, out, reference=reference, benchmarks_md=benchmarks_md)
    click.echo(f"wrote {path}")


@main.command("scan-regression")
@model_option()
@click.option("--before", required=True, type=click.Path(exists=True, file_okay=False,
              path_type=Path), help="An earlier checkout (e.g. a git worktree) to time "
              "against.")  # fmt: skip
@click.option("--reference", "references", multiple=True, default=("tiny", "tair10-chr1"),
              show_default=True, help="Reference(s) to scan (repeatable).")  # fmt: skip
@click.option("--repeats", default=5, show_default=True, type=click.IntRange(min=1))
@click.option("--parts", default=3, show_default=True, type=click.IntRange(min=2))
@click.option("--out", required=True, type=click.Path(path_type=Path), help="Output folder.")
@benchmarks_md_option
def bench_scan_regression(run, before, references, repeats, parts, out, benchmarks_md) -> None:
    """Time `scan` (whole; parts + gather) of this checkout against an earlier one's, on the
    same weights, in turns; and check that the sites are the same."""
    from .scan_regression import run_scan_regression_benchmark

    try:
        path = run_scan_regression_benchmark(run, out, before=before, references=references,
                                             repeats=repeats, parts=parts,
                                             benchmarks_md=benchmarks_md)  # fmt: skip
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--before") from None
    click.echo(f"wrote {path}")


@main.command("motif-export")
@click.option(
    "--out", required=True, type=click.Path(path_type=Path), help="`planted` benchmark folder."
)
@click.option("--seeds", default="0,1,2", show_default=True, callback=parse_seeds,
              help="Comma-separated seeds.")  # fmt: skip
@click.option("--preset", default="cpu", show_default=True)
@benchmarks_md_option
def bench_motif_export(out, seeds, preset, benchmarks_md) -> None:
    """Export the planted runs and check the planted JASPAR motifs are named back."""
    from .motif_export import run_motif_export_benchmark

    path = run_motif_export_benchmark(out, seeds, preset=preset, benchmarks_md=benchmarks_md)
    click.echo(f"wrote {path}")


@main.command("pipeline")
@finished_run_options
@click.option("--section", default="pipeline", show_default=True,
              help="BENCHMARKS.md section to write (another config: e.g. 'pipeline composite').")
@click.option("--title", help="The section's heading (default: the default config's).")
def bench_pipeline(workdir, out, wall_seconds, command_line, benchmarks_md, section,
                   title) -> None:  # fmt: skip
    """Per-rule time and memory of a finished pipeline run, into BENCHMARKS.md."""
    from .pipeline import DEFAULT_TITLE, run_pipeline_benchmark

    path = run_pipeline_benchmark(workdir, out, wall_seconds=wall_seconds, command=command_line,
                                  benchmarks_md=benchmarks_md, section=section,
                                  title=title or DEFAULT_TITLE)  # fmt: skip
    click.echo(f"wrote {path}")


@main.command("apply")
@finished_run_options
def bench_apply(workdir, out, wall_seconds, command_line, benchmarks_md) -> None:
    """A trained run applied to another genome (pipeline apply:), beside its baseline."""
    from .apply_genome import run_apply_benchmark

    path = run_apply_benchmark(workdir, out, wall_seconds=wall_seconds, command=command_line,
                               benchmarks_md=benchmarks_md)  # fmt: skip
    click.echo(f"wrote {path}")


@main.command("variants")
@model_option()
@click.option("--out", required=True, type=click.Path(path_type=Path), help="Output folder.")
@click.option("--variants", "n_variants", type=click.IntRange(min=10), default=20_000,
              show_default=True, help="Random variants for the throughput runs.")  # fmt: skip
@click.option("--spacing", type=click.IntRange(min=1), default=30, show_default=True,
              help="Bases per random variant (30: 1M variants over TAIR10 chr1).")  # fmt: skip
@click.option("--reference", help="Named reference holding the run's genome (default: the "
              "FASTA and annotation its dataset names).")  # fmt: skip
@click.option("--compare", type=click.Path(path_type=Path),
              help="Another run (e.g. the non-sparse baseline) put through the same truth set.")
@click.option("--section", default="variants", show_default=True,
              help="BENCHMARKS.md section to write; another name keeps the default one beside it.")
@click.option("--truth/--no-truth", default=True, show_default=True,
              help="Also score every test-block site mutation (off: throughput and memory only, "
              "e.g. for a briefly trained model).")  # fmt: skip
@benchmarks_md_option
def bench_variants(run, out, n_variants, spacing, reference, compare, section, truth,
                   benchmarks_md) -> None:  # fmt: skip
    """Variant effects: alleles/s and memory of `variants`, in-silico truth on the test block."""
    from .variants import run_variants_benchmark

    path = run_variants_benchmark(run, out, variants=n_variants, spacing=spacing,
                                  reference=reference, compare=compare, section=section,
                                  truth=truth, benchmarks_md=benchmarks_md)  # fmt: skip
    click.echo(f"wrote {path}")


@main.command("peers")
@click.option("--out", required=True, type=click.Path(path_type=Path),
              help="Folder for the dataset, the runs, the peers' models and bench_peers.json.")
@click.option("--reference", default="tair10-chr1", show_default=True,
              help="Bundled reference whose test block every model is scored on.")
@click.option("--minutes", type=click.FloatRange(min=0.1), default=23.0, show_default=True,
              help="Training minutes of each of our models (the pipeline's); OpenSpliceAI "
              "gets our baseline's measured wall time.")  # fmt: skip
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--flanks", default="400,2000", show_default=True, callback=parse_flanks,
              help="OpenSpliceAI flanks to retrain.")
@click.option("--default-epochs", "default_epochs", default="", callback=parse_default_flanks,
              metavar="FLANKS",
              help="Also train OpenSpliceAI for its default 10 epochs at these of --flanks, "
              "e.g. 400,2000 (hours on 2 cores; resumable: rerun the command to "
              "continue).")  # fmt: skip
@click.option("--site-mutations", type=click.IntRange(min=10), default=400, show_default=True,
              help="Test-block donor/acceptor site mutations scored by every model.")
@click.option("--random-variants", type=click.IntRange(min=0), default=300, show_default=True,
              help="Random SNVs and indels scored by every model.")
@click.option("--long-minutes", type=click.FloatRange(min=0), default=0.0, show_default=True,
              help="Also train our long preset (2,000 nt) this many minutes each (0: not).")
@click.option("--transcript-context/--no-transcript-context", default=True, show_default=True,
              help="Also score each peer as it was trained: each transcript alone, N beyond "
              "it, for sites and variants (SpliceAI: ~50 min on 2 cores).")  # fmt: skip
@benchmarks_md_option
def bench_peers(out, reference, minutes, seed, flanks, default_epochs, site_mutations,
                random_variants, long_minutes, transcript_context,
                benchmarks_md) -> None:  # fmt: skip
    """SpliceAI and OpenSpliceAI beside our models: same positions, variants and clock."""
    from .peers import run_peers_benchmark

    path = run_peers_benchmark(out, reference=reference, minutes=minutes, seed=seed,
                               flanks=flanks, default_epochs=default_epochs,
                               site_mutations=site_mutations, random_variants=random_variants,
                               long_minutes=long_minutes,
                               transcript_context=transcript_context,
                               benchmarks_md=benchmarks_md)  # fmt: skip
    click.echo(f"wrote {path}")


@main.command("scale")
@click.option("--out", required=True, type=click.Path(path_type=Path),
              help="Folder for the genomes, runs and bench_scale.json.")  # fmt: skip
@click.option("--sizes", default="100M,300M,1G", show_default=True, callback=parse_sizes,
              help="Comma-separated genome sizes (decimal units: 2M, 100M, 1G).")  # fmt: skip
@click.option("--resume/--no-resume", default=True, show_default=True,
              help="Keep the steps bench_scale.json has measured (off: a new file, every step "
              "measured again).")  # fmt: skip
@click.option("--variants", "n_variants", type=click.IntRange(min=1), default=100_000,
              show_default=True, help="Random SNVs scored by `variants` at every size.")
@click.option("--seed", default=0, show_default=True, help="Seed of the genomes and the SNVs.")
@click.option("--prune", is_flag=True, help="Remove a size's tracks and dataset once all its "
              "steps are measured (at 1 Gb they take ~25 GB).")  # fmt: skip
@click.option("--set", "sets", multiple=True, help="Another `train --set` for every size "
              "(after the benchmark's budget).")  # fmt: skip
@click.option("--bfloat16", is_flag=True, help="At the smallest size, also scan with "
              "`--precision bfloat16` and compare its sites with the float32 scan's.")
@benchmarks_md_option
def bench_scale(out, sizes, resume, n_variants, seed, prune, sets, bfloat16,
                benchmarks_md) -> None:  # fmt: skip
    """Time and peak memory of dataset, train, export, scan, variants and report on genomes
    of each size built from real sequence (resumable: finished steps are kept)."""
    import shlex

    from .scale import run_scale_benchmark

    command = shlex.join(["python", "-m", "benchmarks", *sys.argv[1:]]) if sys.argv[1:] else None
    path = run_scale_benchmark(out, sizes, benchmarks_md=benchmarks_md, resume=resume,
                               variants=n_variants, seed=seed, extra_settings=tuple(sets),
                               prune=prune, bfloat16=bfloat16, command=command,
                               log=click.echo)  # fmt: skip
    click.echo(f"wrote {path}")


@main.command("seeds")
@click.option("--model", "runs", required=True, multiple=True, type=click.Path(path_type=Path),
              help="An exported run of the setting (repeat: one per seed).")  # fmt: skip
@click.option("--baseline", type=click.Path(path_type=Path), help="The baseline's run directory.")
@click.option("--out", required=True, type=click.Path(path_type=Path), help="Output folder.")
@click.option("--section", default="splicing-seeds", show_default=True,
              help="The BENCHMARKS.md section it writes (one per setting).")  # fmt: skip
@benchmarks_md_option
def bench_seeds(runs, baseline, out, section, benchmarks_md) -> None:
    """One setting over seeds: top-k spread, family figures and seed stability."""
    from .seeds import run_seeds_benchmark

    path = run_seeds_benchmark(list(runs), out, baseline=baseline, name=section,
                               benchmarks_md=benchmarks_md)  # fmt: skip
    click.echo(f"wrote {path}")


@main.command("tidy")
@click.option(
    "--benchmarks-md",
    default=Path("BENCHMARKS.md"),
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    show_default=True,
    help="Markdown file to rewrite.",
)
def bench_tidy(benchmarks_md) -> None:
    """Put BENCHMARKS.md's sections in their order and rewrite its summary from the JSON they
    cite; no benchmark is rerun."""
    from .summary import tidy_file

    changed = tidy_file(benchmarks_md)
    click.echo(f"{'rewrote' if changed else 'already tidy:'} {benchmarks_md}")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
