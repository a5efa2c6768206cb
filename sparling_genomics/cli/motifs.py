"""The verbs from a trained model to motifs and tracks: ``export`` (motif files, logos,
names, families), ``scan`` (genome-wide sites), ``report`` (one HTML page), ``stability``
(families across seeds)."""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import InputError
from ..export.scan_plan import SCAN_CHUNK
from .options import (
    device_option,
    model_option,
    motifs_option,
    run_dataset_option,
    split_option,
    threads_option,
)
from .paths import OUT_FILE, OUT_FOLDER


@click.command()
@model_option()
@click.option("--out", type=OUT_FOLDER, help="Folder (default: RUN/motifs).")
@split_option
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
@device_option()
@threads_option()
@run_dataset_option()
@click.option("--family", "family_sets", multiple=True, metavar="KEY=VALUE",
              help="A motif-family setting (FamilySettings), e.g. tomtom_q=0.05; repeatable.")
def export(run, out, split, min_sites, jaspar_release, jaspar_collection, jaspar_tax_group,
           reference_motifs, max_distance, bin_width, device, run_dataset,
           family_sets) -> None:  # fmt: skip
    """Motifs of a trained model: PWM files, logos, names (Tomtom), families, where sites sit."""
    from ..config import merge, parse_override
    from ..evaluate.positions import PositionSettings
    from ..export.families import FamilySettings
    from ..runners.export import export_run_motifs

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
        dataset=run_dataset,
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


def _parse_part(ctx, param, value: str | None) -> tuple[int, int] | None:
    """``--part 2/8`` as (2, 8); a one-line error unless 1 <= I <= N."""
    if value is None:
        return None
    try:
        index, parts = (int(v) for v in value.split("/"))
    except ValueError:
        raise InputError(f"--part {value!r}: give I/N, e.g. 2/8") from None
    if not 1 <= index <= parts:
        raise InputError(f"--part {value!r}: I must be between 1 and N")
    return index, parts


@click.command()
@model_option("Run folder of a trained model (with RUN/motifs from `export`).")
@click.option(
    "--fasta",
    type=click.Path(path_type=Path),
    help="Sequences to scan (default: the genome the run's dataset was built from).",
)
@click.option("--reference", help="Named reference to scan instead of --fasta.")
@click.option("--out", required=True, type=OUT_FOLDER, help="Output folder.")
@motifs_option
@click.option("--chunk", default=SCAN_CHUNK, show_default=True, type=click.IntRange(min=1),
              help="Bases per chunk.")  # fmt: skip
@click.option("--no-bigwig", is_flag=True, help="Skip the per-motif activation bigWigs.")
@click.option("--precision", type=click.Choice(["float32", "bfloat16"]), default="float32",
              show_default=True,
              help="The model's arithmetic: bfloat16 is ~1.7x faster on CPUs with AVX512-BF16 "
              "or AMX; a few sites within rounding of a threshold differ (float32: exact).")
@click.option("--part", metavar="I/N", callback=_parse_part,
              help="Scan only job I of N (about equal bases; a cluster's scatter) into "
              "OUT/parts/; then `--gather N` writes the tracks.")  # fmt: skip
@click.option("--gather", type=click.IntRange(min=1), metavar="N",
              help="Write the tracks from the N parts in OUT/parts/ (the gather step).")
@click.option("--stability", type=click.Path(path_type=Path),
              help="The `stability` JSON of this run's seeds: each site's BED name starts with "
              "its consensus family across seeds (cNN/family/motif), the tracks coloured by "
              "it.")  # fmt: skip
@run_dataset_option()
@device_option()
@threads_option()
def scan(run, fasta, reference, out, motifs_dir, chunk, no_bigwig, precision, part, gather,
         stability, run_dataset, device) -> None:  # fmt: skip
    """Motif sites genome-wide: BED9 (+ .track), bigBed, per-motif activation bigWig."""
    import json

    from ..genome.references import load_reference
    from ..runners.scan import scan_run_to_tracks

    if fasta and reference:
        raise InputError("give --fasta or --reference, not both")
    if part and gather:
        raise InputError("give --part or --gather, not both")
    if reference:
        fasta = load_reference(reference).fasta
    result = scan_run_to_tracks(run, fasta, out, motifs_dir=motifs_dir, chunk=chunk,
                                device=device, bigwig=not no_bigwig, dataset=run_dataset,
                                part=part, gather=gather, precision=precision,
                                stability=stability)  # fmt: skip
    click.echo(json.dumps(result, indent=2))


@click.command()
@model_option()
@motifs_option
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


@click.command()
@click.option("--model", "runs", required=True, multiple=True, metavar="RUN",
              type=click.Path(path_type=Path),
              help="An exported run directory, one per seed of one setting (give it once per "
              "seed; one run: reproducibility is not measured).")  # fmt: skip
@click.option("--out", required=True, type=OUT_FILE, help="JSON file.")
@click.option("--q", "q_threshold", default=0.01, show_default=True, type=float,
              help="Tomtom q-value below which two families match.")  # fmt: skip
@click.option("--consensus", "consensus_sets", multiple=True, metavar="KEY=VALUE",
              help="A consensus setting (ConsensusSettings), e.g. site_overlap=0.6; "
              "repeatable.")  # fmt: skip
def stability(runs, out, q_threshold, consensus_sets) -> None:
    """Which motif families recur across seeds of one setting: matched by logo (Tomtom of the
    representatives) and by where they fire, grouped into consensus families."""
    from ..config import merge, parse_override
    from ..export.consensus import consensus_settings
    from ..runners.stability import seed_stability

    settings = consensus_settings(q_threshold=q_threshold)
    for text in consensus_sets:
        settings = merge(settings, parse_override(text), "consensus")
    result = seed_stability(list(runs), out, settings=settings)
    consensus = result["consensus"]
    if not consensus["measured"]:
        click.echo(consensus["note"])
        return
    for s in result["seeds"]:
        click.echo(f"{s['seed']}: {s['recurring']} of {s['families']} families in every seed")
    click.echo(f"fraction reproduced: {result['fraction_reproduced']}")
    full = sum(g["seeds"] == g["of"] for g in consensus["groups"])
    click.echo(f"consensus: {len(consensus['groups'])} families in 2 or more seeds, {full} in "
               f"every seed; {len(consensus['not_reproduced'])} in one seed only")
    sites = consensus["by_sites"]
    for name, figures in (("logo", consensus["by_logo"]), ("sites", sites)):
        if figures is not None:
            click.echo(f"by {name}: {figures['recurring']} of {figures['families']} families "
                       f"in every seed, carrying {figures['effect_reproduced']} of the effect")
