"""The report's "Concepts after training" section (``runners/concepts.py`` writes
``RUN/concepts/``): per extractor its fit, and for DNA models each concept's motif logo, sites,
best Tomtom match and (site tasks) where it sits."""

from __future__ import annotations

import html
from pathlib import Path

from ..rundir import CONCEPTS_SUMMARY, read_run_json
from .html import fmt, logo_cell, meme_pwms
from .sections import positions_section

NAMES = {"sae": "TopK SAE", "bsf_vanilla": "block-sparse (vanilla)",
         "bsf_grassmannian": "block-sparse (Grassmannian)",
         "bsf_group_lasso": "block-sparse (Group-Lasso)", "deleuzian": "Deleuzian",
         "modisco": "saturation mutagenesis + TF-MoDISco-lite"}  # fmt: skip


def concepts_section(folder: Path) -> list[str]:
    """The section from ``folder`` (written by ``concepts``); none without concepts.json."""
    path = Path(folder) / CONCEPTS_SUMMARY
    if not path.is_file():
        return []
    summary = read_run_json(path, "made by `sparling-genomics concepts`")
    parts = [
        "<h2>Concepts after training</h2>",
        f"<p>Layer <b>{html.escape(summary['layer'])}</b> ({summary['features']} features), "
        f"{summary['rows']:,} rows of the {html.escape(summary['split'])} split, extractors "
        f"fitted on {summary['fit_rows']:,} of them, {summary['concepts']} concepts each. "
        "A concept's sites are the local maxima of its activation among its top rows; its "
        "motif is counted from their windows, as Sparling's channels are.</p>",
    ]
    for method, entry in summary["methods"].items():
        info = entry.get("info", {})
        fit = ", ".join(f"{k} {fmt(info[k])}" for k in ("block", "k", "fvu") if k in info)
        parts.append(f"<h3>{html.escape(NAMES.get(method, method))}</h3>"
                     f"<p>{entry['count']} concepts; {fit or 'no fit figures'}; "
                     f"{entry['seconds']:.1f} s.</p>")  # fmt: skip
        motifs = entry.get("motifs")
        if motifs is None:
            continue
        if not motifs:
            parts.append("<p class=muted>No concept had enough sites to make a motif.</p>")
            continue
        folder_m = Path(folder) / method
        pwms = meme_pwms(folder_m / "motifs.meme")
        rows = []
        for m in motifs:
            best = m.get("best_match") or {}
            match = (f"{html.escape(str(best.get('target_id')))} "
                     f"{html.escape(str(best.get('target_name')))} (q {fmt(best.get('q_value'))})"
                     if best else "&ndash;")  # fmt: skip
            rows.append(f"<tr><td>{html.escape(m['id'])}</td>"
                        f"<td>{logo_cell(m, folder_m / 'logos', pwms)}</td>"
                        f"<td>{m['nsites']}</td><td>{fmt(m['bits'], 2)}</td>"
                        f"<td>{match}</td></tr>")  # fmt: skip
        parts.append("<table><tr><th>concept</th><th>logo</th><th>sites</th><th>bits</th>"
                     f"<th>best match</th></tr>{''.join(rows)}</table>")  # fmt: skip
        if any("positions" in m for m in motifs):
            parts.append(positions_section(motifs, "Where the concepts sit"))
    return parts
