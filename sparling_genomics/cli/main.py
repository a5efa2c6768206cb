"""Command line: ``sparling-genomics VERB ...``. Thin: parse, then call library functions.

Errors the user can fix (``SparlingError``) print one ``error: ...`` line and exit 2;
anything else prints a short message and exits 1 (the traceback only with ``--debug``).
Heavy imports (torch) happen inside the verbs, after argument parsing.
"""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import SparlingError
from .audio import audio_check, audio_corpus
from .concepts import concepts
from .diagnose import diagnose
from .paths import OUT_FILE, OUT_FOLDER
from .variants import variants


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
    from ..config import parse_override

    overrides = [parse_override(text) for text in sets]
    if seed is not None:
        overrides.append({"seed": seed})
    if device is not None:
        overrides.append({"device": device})
    return overrides


_model_option = click.option(
    "--model", "run", required=True, type=click.Path(path_type=Path),
    help="Run directory of a trained model.",
)  # fmt: skip
_motifs_option = click.option(
    "--motifs",
    "motifs_dir",
    type=click.Path(path_type=Path),
    help="Folder written by `export` (default RUN/motifs).",
)
_split_option = click.option(
    "--split", type=click.Choice(["val", "test"]), default="test", show_default=True
)


@main.command()
@click.option("--reference", help="Named reference (reference/NAME.yaml) or a manifest path.")
@click.option("--fasta", type=click.Path(path_type=Path), help="Genome FASTA (plain or gzip).")
@click.option("--gff", type=click.Path(path_type=Path), help="Annotation: GFF3 or GTF.")
@click.option("--bed", type=click.Path(path_type=Path), help="Labelled sites/regions (BED4+).")
@click.option(
    "--chrom-aliases",
    type=click.Path(path_type=Path),
    help="File pairing the GFF/BED's sequence names with the FASTA's (two columns per line).",
)
@click.option(
    "--skip-unknown-sequences",
    is_flag=True,
    help="Skip GFF/BED lines on sequences the FASTA lacks (e.g. organelles) instead of failing.",
)
@click.option("--out", required=True, type=OUT_FILE, help="Output .h5 file.")
@click.option(
    "--labels",
    default="acceptor,donor",
    show_default=True,
    help="Site kinds from the annotation: acceptor, donor, tss, polya, start_codon, stop_codon.",
)
@click.option(
    "--transcripts",
    type=click.Choice(["longest", "all"]),
    default="longest",
    show_default=True,
    help="Per gene: the longest transcript, or all.",
)
@click.option("--window", default=1000, show_default=True, help="Output positions per window.")
@click.option("--context", default=400, show_default=True, help="Context bases (both sides).")
@click.option("--val-fraction", default=0.1, show_default=True)
@click.option("--test-fraction", default=0.2, show_default=True)
@click.option("--force", is_flag=True, help="Replace an existing --out file.")
def dataset(
    reference,
    fasta,
    gff,
    bed,
    chrom_aliases,
    skip_unknown_sequences,
    out,
    labels,
    transcripts,
    window,
    context,
    val_fraction,
    test_fraction,
    force,
) -> None:
    """Build a labelled-site HDF5 dataset from a genome + annotation (or a BED)."""
    import json

    from ..errors import InputError
    from ..genome.dataset import DatasetSpec, build_dataset
    from ..genome.references import DEFAULT_REFERENCE, load_reference

    if out.exists() and not force:
        raise InputError(f"{out}: exists already (use --force to replace it)")
    if reference and fasta:
        raise InputError("give --reference or --fasta, not both")
    if not fasta:
        ref = load_reference(reference or DEFAULT_REFERENCE)
        fasta = ref.fasta
        if gff is None and bed is None:
            gff = ref.annotation
    if gff is not None and bed is not None:
        raise InputError("give --gff or --bed, not both")
    if gff is None and bed is None:
        raise InputError("no labels: give --gff (annotation) or --bed (labelled sites)")
    spec = DatasetSpec(
        window=window,
        context=context,
        kinds=[k.strip() for k in labels.split(",") if k.strip()],
        transcripts=transcripts,
        val_fraction=val_fraction,
        test_fraction=test_fraction,
    )
    summary = build_dataset(
        out,
        fasta,
        annotation=gff,
        bed=bed,
        spec=spec,
        chrom_aliases=chrom_aliases,
        skip_unknown_sequences=skip_unknown_sequences,
    )
    click.echo(json.dumps(summary, indent=2))
    click.echo(f"wrote {out}")


@main.command()
@click.option(
    "--task",
    help="Task to train: planted, splicing, digit_circle, latex_ocr, audio_sequence, or any "
    "other name in tasks/registry.py (an unknown name lists them).",
)
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
@click.option(
    "--dataset",
    "dataset_path",
    type=click.Path(path_type=Path),
    help="Dataset (.h5) for the splicing task (same as --set data.dataset=PATH).",
)
@click.option("--baseline", is_flag=True,
              help="Train without the sparse layer (the non-sparse baseline; splicing, planted).")
@click.option("--resume", is_flag=True, help="Continue the killed run in --out.")
@click.option(
    "--no-progress", is_flag=True,
    help="No progress report (by default a bar on a terminal, else a plain line every 30 s).",
)  # fmt: skip
def train(
    task,
    preset,
    out,
    seed,
    device,
    config_files,
    sets,
    dataset_path,
    baseline,
    resume,
    no_progress,
) -> None:
    """Train a Sparling model; writes the run directory OUT."""
    from ..errors import ConfigError
    from ..train.progress import summary_line
    from ..train.run_config import resolve_config
    from ..train.trainer import train as run_training

    if resume:
        if task or config_files or sets or seed is not None:
            raise ConfigError("--resume continues OUT with its saved config; drop other options")
        metrics = run_training({}, out, resume=True, progress=not no_progress)
    else:
        if not task:
            raise ConfigError("--task is required (e.g. --task planted)")
        overrides = _overrides(seed, device, sets)
        if dataset_path is not None:
            overrides.append({"data": {"dataset": str(dataset_path)}})
        if baseline:
            overrides.append({"model": {"sparse_layer": False}})
        config = resolve_config(task, preset, files=list(config_files), overrides=overrides)
        metrics = run_training(config, out, progress=not no_progress)
    click.echo(summary_line(metrics))


@main.command()
@_model_option
@click.option("--split", type=click.Choice(["val", "test", "all"]), default="test",
              show_default=True, help="'all': every window of the dataset (site tasks).")
@click.option("--dataset", "dataset_path", type=click.Path(path_type=Path),
              help="Score on this dataset instead of the run's own (splicing); its classes "
              "are matched to the run's by name.")  # fmt: skip
@click.option("--out", type=OUT_FILE, help="Write the metrics JSON here.")
@click.option("--device", help="auto (default), cpu, cuda or cuda:N.")
def evaluate(run, split, dataset_path, out, device) -> None:
    """Score a trained model on a split; prints (and optionally writes) metrics JSON."""
    import json

    from ..io import write_json_atomic
    from ..train.loading import evaluate_run

    metrics = evaluate_run(run, split=split, dataset=dataset_path, device=device)
    if out is not None:
        write_json_atomic(out, metrics)
    click.echo(json.dumps(metrics, indent=2))


@main.command()
@_model_option
@click.option("--out", type=OUT_FOLDER, help="Folder (default: RUN/motifs).")
@_split_option
@click.option("--min-sites", default=10, show_default=True, type=click.IntRange(min=0),
              help="Fewer sites: silent channel.")  # fmt: skip
@click.option(
    "--jaspar-release",
    help="pyjaspar release (default: the run's planted release, else JASPAR2026).",
)
@click.option("--jaspar-collection", default="CORE", show_default=True)
@click.option("--jaspar-tax-group", default="plants", show_default=True,
              help="JASPAR taxonomic group ('' for all).")  # fmt: skip
@click.option(
    "--reference-motifs",
    metavar="splicing|jaspar|FILE",
    help="What motifs are named against: 'splicing' (annotated site PWMs, branch point, "
    "plant ESE hexamers), 'jaspar', or a MEME file. Default: splicing for site tasks built "
    "from an annotation, jaspar otherwise.",
)
@click.option("--max-distance", type=click.IntRange(min=1), default=300, show_default=True,
              help="Site tasks: nt each side of a labelled site that motif positions are "
              "binned over.")  # fmt: skip
@click.option("--bin-width", type=click.IntRange(min=1), default=15, show_default=True,
              help="Site tasks: width (nt) of a distance bin.")  # fmt: skip
@click.option("--device", help="auto (default), cpu, cuda or cuda:N.")
@click.option("--family", "family_sets", multiple=True, metavar="KEY=VALUE",
              help="A motif-family setting (FamilySettings), e.g. tomtom_q=0.05; repeatable.")
def export(run, out, split, min_sites, jaspar_release, jaspar_collection, jaspar_tax_group,
           reference_motifs, max_distance, bin_width, device, family_sets) -> None:  # fmt: skip
    """Motifs of a trained model: PWM files, logos, names (Tomtom), families, where sites sit."""
    from ..config import merge, parse_override
    from ..evaluate.positions import PositionSettings
    from ..export.families import FamilySettings
    from ..runners.motifs import export_run_motifs

    family = FamilySettings()
    for text in family_sets:
        family = merge(family, parse_override(text), "family")

    summary = export_run_motifs(
        run,
        out,
        split=split,
        min_sites=min_sites,
        jaspar={
            "release": jaspar_release,
            "collection": jaspar_collection,
            "tax_group": jaspar_tax_group or None,
        },  # fmt: skip
        device=device,
        reference_motifs=reference_motifs,
        positions=PositionSettings(max_distance=max_distance, bin_width=bin_width),
        family_settings=family,
    )
    for m in summary["motifs"]:
        click.echo(f"{m['id']}\t{m['nsites']}\t{m['consensus']}\t{m['name'] or '(unnamed)'}")
    control = summary["shuffled_control"]
    click.echo(
        f"{len(summary['motifs'])} motifs in {summary['families']['count']} families, "
        f"{len(summary['silent_channels'])} silent channels; "
        f"named against {summary['reference_motifs']['kind']}; shuffled control: "
        f"{control.get('false_matches', 0)} of {control.get('motifs', 0)} named at q < 0.05"
    )
    for m in summary["motifs"]:
        if "positions" in m:
            click.echo(f"{m['id']}\t{m['positions']['summary']}")


@main.command()
@click.option(
    "--model",
    "run",
    required=True,
    type=click.Path(path_type=Path),
    help="Run directory of a trained model (with RUN/motifs from `export`).",
)
@click.option(
    "--fasta",
    type=click.Path(path_type=Path),
    help="Sequences to scan (default: the run's reference genome).",
)
@click.option("--reference", help="Named reference to scan instead of --fasta.")
@click.option("--out", required=True, type=OUT_FOLDER, help="Output folder.")
@_motifs_option
@click.option("--chunk", default=50_000, show_default=True, type=click.IntRange(min=1),
              help="Bases per chunk.")  # fmt: skip
@click.option("--no-bigwig", is_flag=True, help="Skip the per-motif activation bigWigs.")
@click.option("--device", help="auto (default), cpu, cuda or cuda:N.")
def scan(run, fasta, reference, out, motifs_dir, chunk, no_bigwig, device) -> None:  # fmt: skip
    """Motif sites genome-wide: BED9 (+ .track), bigBed, per-motif activation bigWig."""
    import json

    from ..errors import InputError
    from ..genome.references import DEFAULT_REFERENCE, load_reference
    from ..runners.tracks import scan_run_to_tracks

    if fasta and reference:
        raise InputError("give --fasta or --reference, not both")
    if not fasta:
        fasta = load_reference(reference or DEFAULT_REFERENCE).fasta
    result = scan_run_to_tracks(run, fasta, out, motifs_dir=motifs_dir, chunk=chunk,
                                device=device, bigwig=not no_bigwig)  # fmt: skip
    click.echo(json.dumps(result, indent=2))


@main.command()
@_model_option
@_motifs_option
@click.option(
    "--baseline",
    type=click.Path(path_type=Path),
    help="Run directory of the non-sparse baseline, shown beside the Sparling metrics.",
)
@click.option(
    "--scan",
    "scan_dir",
    type=click.Path(path_type=Path),
    help="Folder written by `scan` (its scan.json is summarised).",
)
@click.option("--out", type=OUT_FILE, help="HTML file (default RUN/report.html).")
@click.option("--title", help="Page title.")
@click.option(
    "--stability",
    type=click.Path(path_type=Path),
    help="JSON written by `stability` over this run's seeds (its table is shown).",
)
@click.option("--evaluation", "evaluations", multiple=True, type=click.Path(path_type=Path),
              help="JSON of `evaluate --dataset OTHER --out` (repeatable): the model scored "
              "on other data.")  # fmt: skip
@click.option("--variants", "variants_dir", type=click.Path(path_type=Path),
              help="Folder written by `variants` (its effects are summarised).")  # fmt: skip
def report(run, motifs_dir, baseline, scan_dir, out, title, stability, evaluations,
           variants_dir) -> None:  # fmt: skip
    """One self-contained HTML report: metrics, annealing figures, motifs, names, tracks."""
    from ..report.page import write_report
    from ..rundir import report_path

    path = write_report(run, out or report_path(run), motifs_dir=motifs_dir,
                        baseline=baseline, scan_dir=scan_dir, title=title,
                        stability=stability, evaluations=list(evaluations),
                        variants=variants_dir)  # fmt: skip
    click.echo(str(path))


@main.command()
@click.option("--model", "runs", required=True, multiple=True, type=click.Path(path_type=Path),
              help="An exported run directory, one per seed (give it 2 or more times).")
@click.option("--out", required=True, type=OUT_FILE, help="JSON file.")
@click.option("--q", "q_threshold", default=0.01, show_default=True, type=float,
              help="Tomtom q-value below which two families match.")  # fmt: skip
def stability(runs, out, q_threshold) -> None:
    """Which motif families recur across seeds of one setting (Tomtom of the representatives)."""
    from ..runners.stability import seed_stability

    result = seed_stability(list(runs), out, q_threshold=q_threshold)
    for s in result["seeds"]:
        click.echo(f"{s['seed']}: {s['recurring']} of {s['families']} families in every seed")
    click.echo(f"fraction reproduced: {result['fraction_reproduced']}")


@main.command()
@_model_option
@click.option("--baseline", type=click.Path(path_type=Path), help="The baseline's run directory.")
@click.option("--out", required=True, type=OUT_FILE, help="JSON file.")
def compare(run, baseline, out) -> None:
    """Test metrics of a Sparling run beside its non-sparse baseline (and their ratios)."""
    from ..evaluate.compare import compare_runs
    from ..io import write_json_atomic

    result = compare_runs(run, baseline)
    write_json_atomic(out, result)
    for key, value in (result.get("ratio") or {}).items():
        click.echo(f"{key}: Sparling / baseline = {value:.3f}")


# Verbs kept in modules of their own.
for _verb in (variants, diagnose, concepts, audio_corpus, audio_check):
    main.add_command(_verb)
