"""The report's variants section, from the ``variants`` verb's ``variants.json``: the counts
(scored, and every skip reason), the distribution of each delta score, and the top variants
with the motif each touches and its sequence before and after (letters, the allele shaded),
beside the logo of the touched family."""

from __future__ import annotations

import html
from pathlib import Path

import numpy as np

from ..export.logos import pyplot
from ..genome.sequence import encode, one_hot
from ..rundir import FAMILIES_DIR, MOTIFS_MEME
from .figures import png_bytes
from .html import data_uri, figure, fmt, logo_cell, meme_pwms

SHOWN = 15


def delta_histogram(summary: dict) -> bytes | None:
    """PNG: allele-strands per delta-score bin, one line per delta (log count)."""
    hist = summary.get("histogram") or {}
    bins = hist.get("bins")
    keys = [k for k in hist if k != "bins"]
    if not bins or not keys or not summary["counts"].get("scored_strands"):
        return None
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.0, 2.8))
    centres = (np.asarray(bins[:-1]) + np.asarray(bins[1:])) / 2
    for key in keys:
        counts = np.asarray(hist[key], dtype=float)
        ax.plot(centres, np.where(counts > 0, counts, np.nan), marker="o", ms=3, label=f"DS_{key}")
    ax.set_yscale("log")
    ax.set_xlabel("delta score")
    ax.set_ylabel("allele-strands")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    try:
        return png_bytes(fig)
    finally:
        plt.close(fig)


def before_after(entry: dict) -> bytes | None:
    """PNG: the reference and the alternative sequence around the allele as letter rows
    (plus strand), the allele shaded, and the touched motif site marked."""
    import logomaker
    import pandas as pd

    context = entry.get("context") or {}
    ref_text = context.get("ref")
    if not ref_text:
        return None
    at = entry["pos"] - context["start"]
    alt_text = ref_text[:at] + entry["alt"] + ref_text[at + len(entry["ref"]) :]
    plt = pyplot()
    width = max(len(ref_text), len(alt_text))
    fig, axes = plt.subplots(2, 1, figsize=(0.22 * width + 0.8, 1.5))
    for ax, text, span, label in ((axes[0], ref_text, len(entry["ref"]), "ref"),
                                  (axes[1], alt_text, len(entry["alt"]), "alt")):  # fmt: skip
        frame = pd.DataFrame(one_hot(encode(text)).T, columns=list("ACGT"))
        logomaker.Logo(frame, ax=ax, show_spines=False)
        ax.axvspan(at - 0.5, at + span - 0.5, color="#ffd27f", alpha=0.6, zorder=-1)
        ax.set_xlim(-0.5, width - 0.5)
        ax.set_yticks([])
        ax.set_xticks([])
        ax.set_ylabel(label, rotation=0, ha="right", va="center", fontsize=8)
    change = (entry.get("motif_changes") or [None])[0]
    if change is not None and 0 <= at + change["offset"] < len(ref_text):
        axes[0].plot([at + change["offset"]], [1.08], marker="v", color="#c0392b", ms=5,
                     clip_on=False)  # fmt: skip
    try:
        return png_bytes(fig)
    finally:
        plt.close(fig)


def _delta_text(entry: dict, keys: list[list[str]]) -> str:
    best = max(((entry[f"DS_{k}"], k) for _, g, s in keys for k in (g, s)), default=(0, ""))
    if not best[1]:
        return "&ndash;"
    return f"DS_{best[1]} {fmt(float(best[0]), 3)} at {entry[f'DP_{best[1]}']:+d}"


def variants_section(summary: dict, motifs_dir: Path | None) -> list[str]:
    """HTML parts: counts, the delta histogram and the top variants."""
    counts = summary["counts"]
    skipped = "; ".join(f"{html.escape(k)} {v['alleles']:,} ({html.escape(v['why'])})"
                        for k, v in summary["skipped"].items() if v["alleles"])  # fmt: skip
    parts = [
        "<h2>Variant effects</h2>",
        f"<p><code>{html.escape(summary['vcf'])}</code>: {counts['records']:,} records, "
        f"{counts['alleles']:,} alleles, {counts['scored']:,} scored "
        f"({counts['scored_strands']:,} allele-strands; strands "
        f"{html.escape(summary['strands'])}); skipped: {skipped or 'none'}. Delta scores "
        f"within &plusmn;{summary['distance']} nt as SpliceAI reports them (gain / loss per "
        f"site class, positions relative to POS); {summary['with_motif_change']:,} "
        f"allele-strands touch a motif site. {fmt(summary['alleles_per_second'], 1)} alleles/s "
        f"on {html.escape(summary['device'])}.</p>",
        figure(delta_histogram(summary), "delta score histogram", "No allele was scored."),
    ]
    top = [t for t in summary.get("top") or [] if t.get("max_delta", 0) > 0][:SHOWN]
    if not top:
        return parts
    family_dir = Path(motifs_dir) / FAMILIES_DIR if motifs_dir else None
    pwms = meme_pwms(family_dir / MOTIFS_MEME) if family_dir else {}
    rows = []
    for t in top:
        changes = t.get("motif_changes") or []
        touched = "<br>".join(
            f"{html.escape(c['family'])} {html.escape(c['effect'])} at {c['offset']:+d} "
            f"({fmt(c['before'], 3)} &rarr; {fmt(c['after'], 3)})" for c in changes[:3]
        ) or "<span class=muted>none</span>"  # fmt: skip
        logo = "&ndash;"
        if changes and family_dir is not None:
            fam = changes[0]["family"].split(":")[0]
            if fam in pwms:
                logo = logo_cell({"id": fam, "nsites": 1}, family_dir / "logos", pwms)
        seq = before_after(t)
        seq_cell = f'<img alt="sequence before and after" src="{data_uri(seq)}">' if seq else ""
        rows.append(
            f"<tr><td>{html.escape(str(t['chrom']))}:{t['pos']:,} "
            f"{html.escape(t['ref'])}&gt;{html.escape(t['alt'])} ({t['strand']})<br>"
            f"<span class=muted>{html.escape(str(t['id']))} {html.escape(t['genes'])}</span></td>"
            f"<td>{_delta_text(t, summary['delta_keys'])}</td><td>{touched}</td>"
            f"<td>{seq_cell}</td><td>{logo}</td></tr>"
        )
    parts.append(
        f"<h3>Top {len(rows)} variants by largest delta</h3><table><tr><th>variant</th>"
        "<th>largest delta</th><th>motif sites touched</th><th>before / after</th>"
        f"<th>family logo</th></tr>{''.join(rows)}</table>"
    )
    return parts
