"""Sections of the run report: motif families, seed stability, and where motifs (or families)
sit relative to the labelled sites. Each returns HTML text (or parts of it) for
:func:`~sparling_genomics.report.page.build_report`."""

from __future__ import annotations

import html
import os
from pathlib import Path
from urllib.parse import quote

import numpy as np

from ..evaluate.identifiability import idle_channels
from ..io import safe_child
from ..rundir import FAMILIES_DIR, MOTIFS_MEME
from .figures import positional_metaplot
from .html import figure, fmt, logo_cell, meme_pwms


def positions_section(motifs: list[dict], heading: str = "Where the motifs sit") -> str:
    """Per entry of ``motifs`` (``motifs.json`` entries: channels, or families, anything with
    ``id``, ``consensus`` and a ``positions`` block) its one-line summary and metaplot; a KL
    table where entries were compared with the annotated site PWMs."""
    placed = [m for m in motifs if m.get("positions")]
    if not placed:
        return ""
    first = placed[0]["positions"]
    parts = [
        f"<h2>{html.escape(heading)}</h2>",
        f"<p>Signed distance (transcript orientation, negative = upstream) of each motif's "
        f"sites to the nearest labelled site of each class, within &plusmn;"
        f"{first['max_distance']} nt, against a matched null ({html.escape(first['null'])}); "
        f"{html.escape(first['test'])}.</p>",
    ]
    if not first["regions"].get("available"):
        parts.append("<p class=muted>Exon / intron / intergenic share: unavailable (the "
                     "dataset records no regions: a BED source, or built before they were "
                     "recorded; rebuild it with <code>sparling-genomics dataset</code>).</p>")
    for m in placed:
        block = m["positions"]
        png = positional_metaplot(block, f"{m['id']} ({block['n_sites']} sites)")
        parts += [
            f"<h3><code>{html.escape(m['id'])}</code> <code>{html.escape(m['consensus'])}"
            f"</code></h3><p>{html.escape(block['summary'])}</p>",
            *([f"<p>{html.escape(m['intron_positions']['summary'])}.</p>"]
              if (m.get("intron_positions") or {}).get("summary") else []),
            figure(png, f"metaplot of {m['id']}", "No site classes."),
        ]
    with_kl = [m for m in motifs if m.get("kl_to_annotated")]
    if with_kl:
        kinds = list(with_kl[0]["kl_to_annotated"])
        head = "<tr><th>motif</th>" + "".join(
            f"<th>KL to annotated {html.escape(k)} (bits/column)</th>" for k in kinds) + "</tr>"
        rows = "".join(
            f"<tr><td><code>{html.escape(m['id'])}</code></td>"
            + "".join(f"<td class=num>{fmt(m['kl_to_annotated'][k]['bits_per_column'], 3)}</td>"
                      for k in kinds)
            + "</tr>"
            for m in with_kl
        )  # fmt: skip
        parts.append("<p>Each motif against the annotated site PWMs of the training block "
                     "(mean KL per column at the best alignment):</p>"
                     f"<table>{head}{rows}</table>")  # fmt: skip
    return "\n".join(parts)


def families_section(summary: dict, motifs_dir: Path) -> list[str]:
    """The report's families section (before the per-channel motifs): per family its
    representative's logo, consensus, merged sites, members and name; how they were linked."""
    block = summary.get("families")
    if not block or not block.get("families"):
        return []
    folder = Path(motifs_dir) / FAMILIES_DIR
    logos = folder / "logos"
    pwms: dict[str, np.ndarray] = {}
    if any(not safe_child(logos, f["id"], ".png").is_file() for f in block["families"]):
        pwms = meme_pwms(folder / MOTIFS_MEME)
    settings = block.get("settings") or {}
    copies = block.get("near_copies") or {}
    rows = []
    placed = any(f.get("positions") for f in block["families"])
    for f in block["families"]:
        members = ", ".join(
            f"<code>{html.escape(m['id'])}</code>{' (&minus;)' if m['strand'] == '-' else ''}"
            f" {m['nsites']:,}"
            for m in f["members"]
        )
        best = f.get("best_match") or {}
        if f.get("name"):
            name = f"<span class=named>{html.escape(f['name'])}</span>"
        elif best:
            name = (f"<span class=unnamed>unnamed (nearest {html.escape(best['target_id'])} "
                    f"{html.escape(best['target_name'])}, q {fmt(best.get('q_value'))})</span>")
        else:
            name = "<span class=unnamed>unnamed</span>"
        rows.append(
            f"<tr><td><code>{html.escape(f['id'])}</code></td>"
            f"<td>{logo_cell(f, logos, pwms, css='family-logo')}</td>"
            f"<td><code>{html.escape(f['consensus'])}</code></td>"
            f"<td class=num>{f['nsites']:,}</td><td class=num>{len(f['members'])}</td>"
            f"<td>{members}</td><td>{name}</td>{_effect_cell(f.get('effect'))}"
            f"{composition_cell(f.get('composition'))}{where_cell(f, placed)}</tr>"
        )  # fmt: skip
    exported = len(summary.get("motifs") or [])
    effects = block.get("effects")
    ranked = ("" if not effects else
              f" Ranked by effect: each family's channels silenced (zeroed at every position) "
              f"on {effects['windows']:,} {html.escape(summary.get('split', 'test'))} windows; "
              "the effect is the mean drop in the log-odds of each class at its annotated "
              "sites (nats), beside the drop in mean top-k (intact: "
              f"{fmt(effects['intact'].get('mean_topk'), 3)}) and the family's share of the "
              "summed effect.")  # fmt: skip
    mixed = block.get("composition")
    if mixed:
        ranked += (f" Reads: a family that fires at least {_percent(mixed['threshold'])} as "
                   "often on its windows dinucleotide-shuffled (same base and dinucleotide "
                   "composition, words broken) reads composition, not a sequence motif "
                   f"({mixed['windows']:,} windows).")  # fmt: skip
    return [
        "<h2>Motif families</h2>",
        f"<p>{block['count']} families among {exported} exported motifs. Two motifs are linked "
        f"when Tomtom matches them (both strands, any offset) at q &lt; "
        f"{settings.get('tomtom_q')} over at least {_percent(settings.get('min_overlap'))} "
        f"of the shorter one, or when at least {_percent(settings.get('site_overlap'))} of the "
        f"smaller channel's sites lie within &plusmn;{settings.get('site_window')} nt of the "
        f"other's; a family is a group in which more than {_percent(settings.get('linkage'))} "
        "of the pairs are linked (average linkage). Its logo is the site-weighted merge of "
        "its aligned members; its sites are theirs, de-duplicated. Near-copies (PWM columns "
        f"correlated &ge; {fmt(settings.get('near_copy_similarity'), 2)} at some offset and "
        "strand, or shared sites): "
        f"{len(copies.get('redundant') or [])} of {exported} channels "
        f"({fmt(copies.get('fraction'), 3)}).{ranked}</p>",
        "<div class=wide><table><tr><th>family</th><th>representative</th><th>consensus</th>"
        "<th>sites</th>"
        "<th>members</th><th>member channels (strand, sites)</th><th>name (q &lt; 0.05)</th>"
        f"{'<th>effect (nats; top-k drop; share)</th>' if effects else ''}"
        f"{'<th>reads (shuffled / real sites; bits a column)</th>' if mixed else ''}"
        f"{'<th>where (against the window null)</th>' if placed else ''}"
        f"</tr>{''.join(rows)}</table></div>",
    ]


def where_cell(family: dict, placed: bool) -> str:
    """A family's one-line position summary (its ``positions`` block), if families have
    them."""
    if not placed:
        return ""
    block = family.get("positions") or {}
    return f"<td class=where>{html.escape(block.get('summary') or '')}</td>"


def composition_cell(composition: dict | None) -> str:
    """A family's label ("motif", "short word" or "composition"), its shuffled/real ratio
    and bits a column."""
    if composition is None:
        return ""
    label = composition.get("label") or "&ndash;"
    css = "unnamed" if label == "composition" else "named"
    return (f"<td><span class={css}>{label}</span> ({fmt(composition.get('ratio'), 2)}; "
            f"{fmt(composition.get('bits_per_column'), 2)})</td>")


def _effect_cell(effect: dict | None) -> str:
    """A family's effect: the log-odds drop, the mean top-k drop and its share, or "no
    measurable effect"."""
    if effect is None:
        return ""
    if not effect.get("measurable"):
        return "<td class=unnamed>no measurable effect</td>"
    drop = (effect.get("drop") or {}).get("mean_topk")
    return (f"<td class=num>{fmt(effect['effect'], 3)}; {fmt(drop, 3)}; "
            f"{_percent(effect.get('share'))}</td>")


def _percent(value) -> str:
    return "&ndash;" if value is None else f"{100 * value:.0f}%"


def stability_section(stability: dict, seed=None) -> list[str]:
    """The seed-stability section: per seed, how many of its families recur in every other
    seed; this seed's families with their matches."""
    per_seed = "".join(
        f"<tr><td>{html.escape(str(s['seed']))}</td><td class=num>{s['families']}</td>"
        f"<td class=num>{s['recurring']}</td>"
        f"<td class=num>{fmt(s['fraction_reproduced'], 3)}</td>"
        f"<td class=num>{fmt(s.get('effect_reproduced'), 3)}</td></tr>"
        for s in stability["seeds"]
    )
    weighted = stability.get("effect_reproduced")
    by_effect = ("" if weighted is None else
                 f" Weighted by effect: families in every seed carry {fmt(weighted, 3)} of the "
                 "summed family effect (mean over seeds).")  # fmt: skip
    mine = [r for r in stability["table"] if r["seed"] == f"seed{seed}"] or stability["table"]
    others = [str(s["seed"]) for s in stability["seeds"]]
    rows = []
    for r in mine:
        cells = []
        for label in others:
            if label == r["seed"]:
                continue
            m = r["matches"].get(label)
            cells.append(f"<td>{html.escape(m['family'])} (q {fmt(m['q_value'])})</td>"
                         if m else "<td class=muted>none</td>")  # fmt: skip
        rows.append(
            f"<tr><td>{html.escape(str(r['seed']))}</td><td><code>{html.escape(r['family'])}"
            f"</code></td><td><code>{html.escape(r['consensus'])}</code></td>"
            + "".join(cells)
            + f"<td>{'yes' if r['in_every_seed'] else 'no'}</td></tr>"
        )
    width = len(others) - 1
    return [
        "<h2>Seed stability</h2>",
        f"<p>Families matched across the seeds of this setting by Tomtom at q &lt; "
        f"{fmt(stability['q_threshold'])}: {fmt(stability['fraction_reproduced'], 3)} of all"
        f" families recur in every seed.{by_effect}</p>",
        "<table><tr><th>seed</th><th>families</th><th>in every seed</th><th>fraction</th>"
        "<th>share of the effect</th></tr>"
        f"{per_seed}</table>",
        f"<table><tr><th>seed</th><th>family</th><th>consensus</th>"
        f"<th colspan={width}>match in the other seeds</th><th>in every seed</th></tr>"
        f"{''.join(rows)}</table>",
    ]


def evaluations_section(evaluations: list[dict]) -> list[str]:
    """The run scored on other data (``evaluate --dataset ... --out`` JSONs, e.g. a genome
    it never saw): per dataset and split, the end-to-end metrics and each site class's."""
    if not evaluations:
        return []
    rows = []
    for e in evaluations:
        sites = e.get("sites") or {}
        per_class = "; ".join(
            f"{html.escape(str(name))}: top-k {fmt(s.get('topk'), 3)}, PR-AUC "
            f"{fmt(s.get('pr_auc'), 3)} ({s.get('sites', 0):,} sites)"
            for name, s in sites.items() if isinstance(s, dict)
        )  # fmt: skip
        e2e = e.get("e2e") or {}
        per_site = tuple(f"{name}_" for name in sites)  # shown in the last column
        main = ", ".join(f"{html.escape(k)} {fmt(v, 3)}" for k, v in e2e.items()
                         if isinstance(v, (int, float)) and not k.startswith(per_site))  # fmt: skip
        rows.append(
            f"<tr><td><code>{html.escape(str(e.get('dataset')))}</code></td>"
            f"<td>{html.escape(str(e.get('split')))}</td><td>{main}</td>"
            f"<td>{per_class or '-'}</td></tr>"
        )
    return [
        "<h2>Scored on other data</h2>",
        "<p>The trained model, unchanged, on datasets it was not trained on (classes matched "
        "by name).</p>",
        "<table><tr><th>dataset</th><th>split</th><th>end-to-end</th><th>per site class</th>"
        f"</tr>{''.join(rows)}</table>",
    ]


def split_section(run: Path) -> list[str]:
    """One line stating how the run's dataset split the genome (whole held-out sequences or
    per-sequence blocks; per split its sequences, windows and sites; the sequences skipped),
    so the test metrics above can be read; nothing for a task without a genome dataset."""
    from ..errors import SparlingError
    from ..genome.dataset import SiteDataset
    from ..genome.splits import describe_split
    from ..rundir import config_path
    from ..train.run_config import load_saved_config

    try:
        path = getattr(load_saved_config(config_path(run)).data, "dataset", None)
    except SparlingError:
        return []
    if not path:
        return []
    try:
        data = SiteDataset(Path(path))
    except SparlingError:
        return [f"<p class=muted>Split: not stated (the run's dataset <code>"
                f"{html.escape(str(path))}</code> cannot be read).</p>"]  # fmt: skip
    try:
        text = describe_split(data.summary)
    finally:
        data.close()
    return [f"<p>Split of <code>{html.escape(Path(path).name)}</code>: {html.escape(text)}.</p>"]


def identifiability_section(block: dict | None) -> list[str]:
    """Whether the identifiability theorem's conditions held (``evaluate.identifiability``):
    the verdict, one row per condition, and each channel's alpha and density."""
    parts = ["<h2>Identifiability</h2>"]
    if not block:
        return parts + [
            "<p class=muted>Not checked: this run's metrics predate the check. "
            "<code>sparling-genomics evaluate --model RUN</code> prints it from the run's "
            "final weights.</p>"
        ]
    status = block.get("status")
    colour = {"met": "named", "fails": "unnamed"}.get(status, "muted")
    parts.append(f"<p><span class={colour}>{html.escape(str(block.get('verdict')))}</span></p>")
    conditions = block.get("conditions")
    if not conditions:
        return parts
    marks = {True: "met", False: "fails", None: "not checkable"}
    den, e2e, nec = conditions["density"], conditions["end_to_end"], conditions["necessity"]
    rows = [
        ("locality", conditions["locality"]["met"],
         f"receptive field {conditions['locality']['receptive_field']}"),
        ("density = true density", den["met"],
         f"measured {fmt(den['measured'], 3)}, true {fmt(den['true'], 3)}, ratio "
         f"{fmt(den['ratio'], 3)} (allowed within {fmt(den['tolerance'], 3)}x); annealing "
         + {True: "complete", False: "not complete", None: "&ndash;"}[den["annealing_complete"]]),
        ("low end-to-end error", e2e["met"],
         f"error {_percent(e2e['error'])} (at most {_percent(e2e['max_error'])})"),
        ("motif necessity", nec["met"],
         f"smallest alpha {fmt(nec['min_alpha'], 3)} over {nec['inputs']} inputs; never "
         f"needed: {html.escape(', '.join(nec['unnecessary'])) or 'none'}"),
    ]  # fmt: skip
    body = "".join(
        f"<tr><td>{name}</td><td>{marks[met]}</td><td>{detail}</td></tr>"
        for name, met, detail in rows
    )
    parts.append(f"<table><tr><th>condition</th><th></th><th>figures</th></tr>{body}</table>")
    parts.append(f"<p class=muted>{html.escape(block.get('assumed', ''))}.</p>")
    channels = block.get("channels") or {}
    alpha, density = channels.get("alpha") or {}, channels.get("density") or {}
    if alpha:
        cells = "".join(
            f"<tr><td>{html.escape(c)}</td><td class=num>{fmt(a, 3)}</td>"
            f"<td class=num>{fmt(density.get(c), 3)}</td></tr>"
            for c, a in alpha.items()
        )
        parts.append(
            "<p>Per channel: alpha = share of inputs whose output changes when the channel "
            "is dropped; density = share of its positions that are active "
            f"(dead: {html.escape(', '.join(channels.get('dead') or [])) or 'none'}; "
            f"idle, alpha under a fifth of the median: "
            f"{html.escape(', '.join(channels.get('idle', idle_channels(alpha)))) or 'none'}; "
            f"spread {fmt(channels.get('density_spread'), 3)}x).</p>"
            f"<table><tr><th>channel</th><th>alpha</th><th>density</th></tr>{cells}</table>"
        )
    return parts


def scan_section(scan: dict, scan_dir: Path, link_from: Path | None = None) -> list[str]:
    """The genome scan: its counts, its files and how to open them in a genome browser.
    Files are links relative to ``link_from`` (the report's folder) where it is given."""

    def name(file: str) -> str:
        if link_from is None:
            return f"<code>{html.escape(file)}</code>"
        target = os.path.relpath((Path(scan_dir) / file).resolve(), Path(link_from).resolve())
        href = quote(Path(target).as_posix())
        return f'<a href="{html.escape(href)}"><code>{html.escape(file)}</code></a>'

    parts = [
        "<h2>Genome scan</h2>",
        f"<p>{scan['sites']:,} sites over {scan['sequences']} sequences "
        f"({scan['bases']:,} bases, both strands) of <code>{html.escape(scan['fasta'])}"
        f"</code> in {fmt(scan['scan_seconds'], 1)} s; files: "
        + ", ".join(name(f) for f in scan["files"])
        + ".</p>",
    ]
    browser = scan.get("browser")
    if browser:
        parts.append(
            "<p>View them in a genome browser: <b>IGV desktop</b>: File &gt; Open Session, "
            f"{name(browser['igv_session'])}. <b>igv.js</b>: serve the scan folder over HTTP "
            "(e.g. <code>python -m http.server</code> in it) and pass "
            f"{name(browser['igv_config'])} to <code>igv.createBrowser</code> on a page "
            "there. <b>UCSC</b>: put the scan folder on a web server and paste the URL of "
            f"{name(browser['hub'])} into My Data &gt; Track Hubs (an assembly hub of "
            f"<code>{html.escape(str(browser['hub_genome']))}</code>; set your address as "
            "its <code>email</code>), or, for an assembly UCSC has, upload "
            f"{name(browser['track_bed'])} (the sites with their track line) as a custom "
            "track.</p>"
        )
    return parts


def grammar_section(block: dict | None, rows: int = 12) -> str:
    """The families' preferred spacings (``motifs.json`` ``families.grammar``): the pairs
    enriched against the shuffled-position null, overlapping spacings marked."""
    grammar = (block or {}).get("grammar")
    if not grammar:
        return ""
    found = grammar.get("enriched") or []
    head = (f"<h2>Grammar between families</h2><p>Signed spacing b &minus; a between the sites "
            f"of two families in one window (transcript orientation; bins of "
            f"{grammar['bin_width']} nt within &plusmn;{grammar['max_spacing']} nt), against "
            f"{html.escape(grammar['null'])}; {html.escape(grammar['test'])} "
            f"({grammar['pairs_tested']} ordered pairs). A spacing shorter than the motifs "
            "(<em>overlap</em>) marks copies of one motif, not grammar.</p>")  # fmt: skip
    if not found:
        return head + "<p>No pair has a preferred spacing.</p>"
    body = "".join(
        f"<tr><td><code>{html.escape(r['a'])}</code></td><td><code>{html.escape(r['b'])}"
        f"</code></td><td class=num>{r['spacing'][0]}..{r['spacing'][1]}</td>"
        f"<td class=num>{r['observed']:,}</td><td class=num>{fmt(r['expected'], 1)}</td>"
        f"<td class=num>{fmt(r['ratio'], 2)}</td><td class=num>{fmt(r['q'], 2)}</td>"
        f"<td>{'overlap' if r['overlap'] else ''}</td></tr>"
        for r in found[:rows]
    )  # fmt: skip
    return (head + "<table><tr><th>a</th><th>b</th><th>spacing (nt)</th><th>pairs</th>"
            "<th>expected</th><th>ratio</th><th>q</th><th></th></tr>" + body + "</table>")


#: Which model to use for a plant genome, as the peers benchmark measured it (BENCHMARKS.md,
#: section "Peers": every model on the same TAIR10 chr1 test positions and the same clock).
#: Words only: the figures live in that section.
WHICH_MODEL = (
    "<h2>Which model for a plant genome</h2>"
    "<p>Measured on the same test positions of TAIR10 chr1 (this project's BENCHMARKS.md, "
    "section \"Peers\"): <b>this Sparling model</b> when you want the motifs: its channels "
    "are the sites and families in this report, and its site calls were ahead of SpliceAI's "
    "published (human) models and of OpenSpliceAI retrained on the same split for the same "
    "time. <b>The non-sparse baseline</b> (<code>train --baseline</code>) when you want the "
    "most accurate site calls for that time and no motifs. The <code>long</code> preset "
    "(2,000 nt of context) for a GPU or a budget of hours: on 2 CPU cores three times the "
    "baseline's time bought it little. <b>OpenSpliceAI</b> retrained on your annotation "
    "trailed both of ours at the same budget, at its 400- and 2,000-nt flanks, read on the "
    "genome or transcript by transcript as it was trained (its own 10 epochs: see that "
    "section). <b>SpliceAI off the shelf</b> only where there is no annotation of your "
    "species or a close relative to train on: trained on human genes, it trailed every model "
    "trained on the plant. None of these models yet calls 90% of canonical site mutations a "
    "loss of 0.5 or more.</p>"
)


def which_model_section(task: str) -> list[str]:
    """The guidance above, for a splicing run (other tasks have no peers to compare)."""
    return [WHICH_MODEL] if task == "splicing" else []
