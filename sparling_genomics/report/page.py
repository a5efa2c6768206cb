"""One self-contained HTML report of a run: metrics, training figures, motifs, names, tracks.

Everything is embedded (PNG images as ``data:`` URIs, inline CSS, no scripts, no external
URL), so the file opens offline and can be mailed. Sections:

* the run (task, preset, seed, device, samples, wall time) and its test metrics, beside a
  non-sparse baseline's when one is given;
* for tasks with truth (the planted task): FNE, FPE, CE and which true motif each channel
  found;
* whether the identifiability theorem's conditions held (``evaluate.identifiability``);
* the annealing curve and, where logged, the motif-error-against-density figure;
* motif families (representative logo, members, merged sites, name) and, where the run's
  seeds were compared, which families recur in every seed;
* per exported motif: its logo, consensus, sites, information, best match (JASPAR, or the
  splicing reference for site tasks) with p/E/q and whether it is named (q < 0.05), plus the
  silent channels and the shuffled control;
* site tasks: where each motif sits (metaplot against distance to the labelled sites, region
  shares, one-line summary) and each motif's KL to the annotated site PWMs;
* where a scan folder is given: its site counts, its track files (linked relative to the
  report) and how to open them in IGV, igv.js or UCSC;
* where evaluations are given (``evaluate --out`` on other datasets, e.g. another genome):
  their metrics per site class.

The page is built with ``html.escape`` and f-strings: a template engine would be one more
dependency for a single fixed page. The families, seed-stability and positions sections are
built in ``report_sections.py``; the pieces they share with this page in ``report_html.py``.
"""

from __future__ import annotations

import html
from pathlib import Path

import numpy as np

from ..evaluate.compare import metric_ratios
from ..export.motif_summary import motifs_summary_path, read_motifs_summary
from ..io import safe_child, write_text_atomic
from ..rundir import (
    SCAN_SUMMARY,
    VARIANTS_SUMMARY,
    concepts_dir,
    diagnostics_dir,
    metrics_path,
    read_log,
    read_run_json,
)
from ..rundir import motifs_dir as run_motifs_dir
from ..tasks.registry import task_class
from ..train.provenance import check_outputs_of
from .concepts import concepts_section
from .consensus import consensus_section
from .diagnostics import diagnostics_section
from .figures import annealing_curve, channel_glyphs_figure, motif_error_vs_density
from .html import figure, fmt, logo_cell, meme_pwms
from .sections import (
    evaluations_section,
    families_section,
    grammar_section,
    identifiability_section,
    positions_section,
    scan_section,
    split_section,
    stability_section,
    which_model_section,
)
from .variants import variants_section

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:2em auto;max-width:1240px;
color:#222;padding:0 1em}
h1{font-size:1.6em;margin-bottom:.2em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;
margin-top:1.6em}
table{border-collapse:collapse;margin:.6em 0}td,th{border:1px solid #ddd;padding:.3em .6em;
text-align:left;vertical-align:middle;font-size:.92em}th{background:#f4f4f4}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.muted{color:#777}.named{color:#0a6d2c;font-weight:600}.unnamed{color:#999}
img.logo{height:70px}img.family-logo{height:64px;width:auto}
img.seed-logo{height:44px;width:auto}figure.seed-logo{display:inline-block;margin:0 .3em .2em 0}
figure.seed-logo figcaption{font-size:.8em}div.wide{overflow-x:auto;max-width:100%}
td.where{min-width:14em}
details>summary{cursor:pointer;font-weight:600;margin:1em 0 .5em}
img.figure{max-width:100%}code{font-size:.95em}
"""


def _metric_rows(metrics: dict) -> dict[str, object]:
    rows: dict[str, object] = {}
    for key, value in (metrics.get("e2e") or {}).items():
        rows[key] = value
    for key in ("fne", "fpe", "ce"):
        if metrics.get("motif"):
            rows[key.upper()] = metrics["motif"].get(key)
    perturbation = metrics.get("perturbation") or {}
    if perturbation.get("consistency") is not None:
        rows["perturbation consistency"] = perturbation["consistency"]
    if perturbation.get("consistency_single_channel") is not None:
        rows["perturbation consistency (winning channel only)"] = perturbation[
            "consistency_single_channel"
        ]
    rows["density (target)"] = metrics.get("density")
    rows["density (measured on test)"] = metrics.get("measured_density")
    rows["samples seen"] = metrics.get("samples_seen")
    rows["wall seconds"] = metrics.get("wall_seconds")
    rows["stopped by"] = metrics.get("stopped_by")
    return rows


def _fmt_metric(key: str, value) -> str:
    if isinstance(value, float) and key.startswith("density"):
        return f"{100 * value:.3g}%"
    if isinstance(value, float) and key == "wall seconds":
        return f"{value:,.0f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return fmt(value)


def _metrics_table(metrics: dict, baseline: dict | None) -> str:
    ours = _metric_rows(metrics)
    theirs = _metric_rows(baseline) if baseline else {}
    head = "<tr><th>metric</th><th>Sparling</th>"
    head += "<th>non-sparse baseline</th><th>Sparling / baseline</th></tr>" if baseline else "</tr>"
    body = []
    ratios = metric_ratios(metrics.get("e2e") or {}, baseline.get("e2e") or {}) if baseline else {}
    for key, value in ours.items():
        cells = f"<td>{html.escape(key)}</td><td class=num>{_fmt_metric(key, value)}</td>"
        if baseline:
            cells += (
                f"<td class=num>{_fmt_metric(key, theirs.get(key))}</td>"
                f"<td class=num>{fmt(ratios.get(key), 3)}</td>"
            )
        body.append(f"<tr>{cells}</tr>")
    return f"<table>{head}{''.join(body)}</table>"


def _motif_table(summary: dict, logos: Path, truth: dict[str, str]) -> str:
    rows = []
    pwms: dict[str, np.ndarray] = {}
    if any(not safe_child(logos, m["id"], ".png").is_file() for m in summary["motifs"]):
        pwms = meme_pwms(Path(logos).parent / (summary.get("files") or {}).get("meme", ""))
    for m in summary["motifs"]:
        logo = logo_cell(m, logos, pwms)
        best = m.get("best_match") or {}
        if m.get("name"):
            name = f"<span class=named>{html.escape(m['name'])}</span>"
        elif best:
            name = (
                "<span class=unnamed>unnamed (nearest "
                f"{html.escape(best['target_id'])} {html.escape(best['target_name'])})</span>"
            )
        else:
            name = "<span class=unnamed>unnamed</span>"
        true_motif = truth.get(str(m["channel"]))
        rows.append(
            "<tr>"
            f"<td><code>{html.escape(m['id'])}</code></td><td>{logo}</td>"
            f"<td><code>{html.escape(m['consensus'])}</code></td>"
            f"<td class=num>{m['nsites']}</td><td class=num>{fmt(m.get('bits'), 2)}</td>"
            f"<td>{name}</td>"
            f"<td class=num>{fmt(best.get('p_value'))}</td>"
            f"<td class=num>{fmt(best.get('e_value'))}</td>"
            f"<td class=num>{fmt(best.get('q_value'))}</td>"
            + (f"<td>{html.escape(true_motif) if true_motif else '&ndash;'}</td>" if truth else "")
            + "</tr>"
        )
    head = (
        "<tr><th>motif</th><th>logo</th><th>consensus</th><th>sites</th><th>bits</th>"
        "<th>name (q &lt; 0.05)</th><th>p</th><th>E</th><th>q</th>"
        + ("<th>true motif found</th>" if truth else "")
        + "</tr>"
    )
    return f"<table>{head}{''.join(rows)}</table>"


def build_report(
    run: Path,
    *,
    motifs_dir: Path | None = None,
    baseline: Path | None = None,
    scan_dir: Path | None = None,
    title: str | None = None,
    stability: Path | None = None,
    evaluations: list[Path] | None = None,
    variants: Path | None = None,
    link_from: Path | None = None,
) -> str:
    """The report's HTML text for run directory ``run`` (``stability``: the JSON of the
    ``stability`` verb over the run's seeds; ``evaluations``: JSONs of ``evaluate --out``
    on other datasets; ``variants``: the folder the ``variants`` verb wrote; ``link_from``:
    the report's folder, to link the scan's files relative to it)."""
    run = Path(run)
    metrics = read_run_json(metrics_path(run), "written when training finishes")
    base = read_run_json(metrics_path(baseline), "the baseline's") if baseline else None
    records = read_log(run)
    motifs_dir = Path(motifs_dir) if motifs_dir else run_motifs_dir(run)
    summary = read_motifs_summary(motifs_dir, missing_ok=True)
    scan = (
        read_run_json(Path(scan_dir) / SCAN_SUMMARY, "made by `sparling-genomics scan`")
        if scan_dir
        else None
    )
    found = (read_run_json(Path(variants) / VARIANTS_SUMMARY, "made by `variants`")
             if variants is not None else None)  # fmt: skip
    check_outputs_of(run, {motifs_summary_path(motifs_dir): summary,
                           Path(scan_dir or ".") / SCAN_SUMMARY: scan,
                           Path(variants or ".") / VARIANTS_SUMMARY: found})  # fmt: skip
    metric = getattr(task_class(metrics["task"]), "accuracy_metric", "exact_match")
    truth = (metrics.get("motif") or {}).get("channel_to_symbol") or {}
    title = title or f"Sparling motifs: {run.name}"
    parts = [
        "<!DOCTYPE html><html lang=en><head><meta charset=utf-8>",
        f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        f"<p class=muted>task <b>{html.escape(str(metrics['task']))}</b>, preset "
        f"{html.escape(str(metrics.get('preset')))}, seed {metrics.get('seed')}, device "
        f"{html.escape(str(metrics.get('device')))}; run <code>{html.escape(str(run))}</code></p>",
        "<h2>Test metrics</h2>",
        _metrics_table(metrics, base),
        *split_section(run),
        *which_model_section(str(metrics["task"])),
        *evaluations_section(
            [read_run_json(Path(p), "made by `sparling-genomics evaluate --out`")
             for p in evaluations or []]
        ),  # fmt: skip
    ]
    # A biologist reads top-down: the families (ranked by effect) first; the per-channel
    # tables and the checks below, collapsed.
    stable = read_run_json(Path(stability), "made by `stability`") if stability else None
    if summary is not None and summary.get("families"):
        # Whether the families come back when the setting is trained again comes first.
        parts += consensus_section(stable)
    if summary is not None:
        parts += families_section(summary, motifs_dir)
        family_list = (summary.get("families") or {}).get("families") or []
        parts.append(positions_section(family_list, "Where the families sit"))
        parts.append(grammar_section(summary.get("families")))
    if stable is not None and (stable.get("consensus") or {}).get("measured", True):
        parts += collapsed("Seed stability: each family's match in the other seeds",
                           stability_section(stable, metrics.get("seed")),
                           open_="consensus" not in stable)  # fmt: skip
    ann = metrics.get("annealing") or {}
    if ann.get("enabled"):
        parts.append(
            f"<p>Annealing: {ann.get('steps')} density steps, "
            f"{'complete' if ann.get('complete') else 'not complete (budget ran out)'}; "
            f"final bar {fmt(ann.get('final_bar'), 3)}.</p>"
        )
    if metrics.get("density") is not None or metrics.get("identifiability"):
        parts += collapsed("Identifiability check",
                           identifiability_section(metrics.get("identifiability")),
                           open_=summary is None)  # fmt: skip
    parts += [
        "<h2>Training</h2>",
        figure(annealing_curve(records, metric), "annealing curve", "No evaluations logged."),
    ]
    if metrics.get("motif") or any(r.get("val_fne") is not None for r in records):
        parts.append(
            figure(
                motif_error_vs_density(records),
                "motif errors against density",
                "This run did not log motif errors during training.",
            )
        )
    parts += diagnostics_section(diagnostics_dir(run))
    parts += concepts_section(concepts_dir(run))
    parts.append("<h2>Motifs</h2>")
    task = task_class(metrics["task"])
    rows = _metric_rows(metrics)
    if summary is None and not task.exports_motifs:
        parts.append(
            "<p>Motif logos, JASPAR names and genome tracks apply to DNA tasks; here the "
            "motif layer is scored against the known symbol boxes (FNE, FPE, CE above"
            + (", perturbation consistency" if "perturbation consistency" in rows else "")
            + ").</p>"
        )
        glyphs = (metrics.get("motif") or {}).get("glyphs")
        if glyphs:
            parts.append(figure(channel_glyphs_figure(glyphs), "channel glyphs",
                                "No channel fired on the test split."))  # fmt: skip
    elif summary is None:
        missing = html.escape(str(motifs_summary_path(motifs_dir)))
        parts.append(
            f"<p class=muted>No motifs exported yet ({missing} is missing): run "
            "<code>sparling-genomics export</code>.</p>"
        )
    else:
        jaspar = summary.get("jaspar") or {}
        reference = (summary.get("reference_motifs") or {}).get("description") or " ".join(
            str(v) for v in jaspar.values() if v)  # fmt: skip
        named = sum(1 for m in summary["motifs"] if m.get("name"))
        control = summary.get("shuffled_control") or {}
        parts += [
            f"<p>{len(summary['motifs'])} motifs exported from the {html.escape(summary['split'])}"
            f" split, {named} named by Tomtom against "
            f"{html.escape(reference)} at q &lt; 0.05. "
            f"Silent channels (too few sites to export): "
            f"{', '.join(str(c) for c in summary['silent_channels']) or 'none'}.</p>",
            f"<p>Shuffled control: {control.get('false_matches', 0)} of "
            f"{control.get('motifs', 0)} column-shuffled motifs would have been named "
            f"(false-match rate {fmt(control.get('false_match_rate'), 3)}).</p>",
            *collapsed("Per-channel table and positions", [
                _motif_table(summary, motifs_dir / "logos", truth),
                positions_section(summary["motifs"])], open_=not summary.get("families")),
        ]  # fmt: skip
    if found is not None:
        parts += variants_section(found, motifs_dir if summary is not None else None)
    if scan is not None:
        parts += scan_section(scan, Path(scan_dir), link_from)
    parts.append("</body></html>\n")
    return "\n".join(parts)


def collapsed(title: str, parts: list[str], *, open_: bool = False) -> list[str]:
    """``parts`` inside a ``<details>`` block titled ``title`` (open with ``open_``)."""
    if not any(parts):
        return []
    return [f"<details{' open' if open_ else ''}><summary>{html.escape(title)}</summary>",
            *parts, "</details>"]  # fmt: skip


def write_report(run: Path, out: Path, **kwargs) -> Path:
    """Write :func:`build_report` to ``out`` atomically; returns ``out``."""
    out = Path(out)
    kwargs.setdefault("link_from", out.parent)
    write_text_atomic(out, build_report(run, **kwargs))
    return out
