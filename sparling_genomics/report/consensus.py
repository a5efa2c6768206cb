"""The report's first section when a setting was trained over several seeds: its motif
families as they come back across seeds (the ``consensus`` block of the ``stability`` verb's
JSON, ``export/consensus.py``).

Each consensus family gets how many seeds it recurs in, its effect (mean and spread over the
seeds it is in), the logos of its member families seed by seed, the label of its
largest-effect member, whether it reads as a motif or as composition, and where that member
sits; families seen in one seed only are listed apart, marked as not reproduced. One seed:
the section says that reproducibility was not measured.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..export.motif_summary import read_motifs_summary
from ..rundir import FAMILIES_DIR, MOTIFS_MEME
from ..rundir import motifs_dir as run_motifs_dir
from .html import fmt, logo_cell, meme_pwms
from .sections import composition_cell, where_cell

HEADING = "<h2>Families across seeds</h2>"


@dataclass
class SeedView:
    """What the report shows of one seed's families: each family's ``motifs.json`` entry
    (its positions), where its logo is, and the PWMs to redraw a logo not on disk."""

    families: dict[str, dict] = field(default_factory=dict)
    logos: Path | None = None
    pwms: dict[str, np.ndarray] = field(default_factory=dict)

    def logo(self, family: str) -> str:
        entry = self.families.get(family)
        if entry is None or self.logos is None:
            return "<span class=muted>no logo (run not found)</span>"
        return logo_cell(entry, self.logos, self.pwms, css="seed-logo")


def seed_view(run: str | Path | None) -> SeedView:
    """The exported families of ``run`` (as the ``stability`` verb recorded its path: relative
    to where it ran); empty when the run or its motifs are not there."""
    if run is None or not Path(run).is_dir():
        return SeedView()
    folder = run_motifs_dir(Path(run))
    summary = read_motifs_summary(folder, missing_ok=True) or {}
    families = (summary.get("families") or {}).get("families") or []
    return SeedView({f["id"]: f for f in families}, folder / FAMILIES_DIR / "logos",
                    meme_pwms(folder / FAMILIES_DIR / MOTIFS_MEME))  # fmt: skip


def consensus_section(stability: dict | None) -> list[str]:
    """The section (HTML parts) from the ``stability`` verb's JSON; a note when it measured
    nothing (one seed, or none given); empty for a JSON made before the consensus."""
    if stability is None:
        return [HEADING, "<p class=muted>Reproducibility was not measured: this run is one "
                "seed. Train the setting with several seeds (pipeline: <code>seeds: [0, 1, "
                "2]</code>) to see which families come back.</p>"]  # fmt: skip
    consensus = stability.get("consensus")
    if consensus is None:
        return []
    if not consensus.get("measured"):
        return [HEADING, f"<p class=muted>Reproducibility was not measured: "
                         f"{html.escape(consensus.get('note') or 'one seed')}.</p>"]
    labels = consensus["seeds"]
    views = {label: seed_view(run) for label, run in zip(labels, stability.get("runs") or [])}
    views = {label: views.get(label) or SeedView() for label in labels}
    return [HEADING, _headline(consensus),
            _groups_table(consensus["groups"], labels, views),
            *_apart(consensus["not_reproduced"], views)]  # fmt: skip


def _headline(consensus: dict) -> str:
    n = len(consensus["seeds"])
    groups = consensus["groups"]
    every = sum(g["seeds"] == n for g in groups)
    logo = consensus.get("by_logo") or {}
    sites = consensus.get("by_sites")
    q = (consensus.get("settings") or {}).get("q_threshold")
    q_text = "&ndash;" if q is None else f"{q:g}"
    by_sites = ("" if sites is None else
                f" Matched by where they fire instead (their sites on the test block), "
                f"{sites['recurring']} of {sites['families']} recur, carrying "
                f"{fmt(sites.get('effect_reproduced'), 2)} of the effect.")  # fmt: skip
    return (f"<p>{n} seeds of this setting. {len(groups)} families come back in 2 or more "
            f"seeds, <b>{every} in every seed</b>; seen in one seed only: "
            f"{len(consensus['not_reproduced'])} (listed apart). Families of two seeds match "
            f"when Tomtom finds one's logo in the other's at q &lt; {q_text}; matched "
            f"families of all "
            f"seeds are grouped, so a signal split over two families in one seed is one "
            f"family here. Share of the summed family effect carried by families that recur "
            f"in every seed: <b>{fmt(logo.get('effect_reproduced'), 2)}</b> (per seed "
            + ", ".join(f"{html.escape(k)} {fmt(v, 2)}" for k, v in
                        (logo.get("effect_reproduced_per_seed") or {}).items())
            + f").{by_sites}</p>")  # fmt: skip


def _effect(effect: dict) -> str:
    mean, sd = effect.get("mean"), effect.get("sd")
    if mean is None:
        return "<td class=unnamed>no measurable effect</td>"
    spread = "" if sd is None else f" &plusmn; {fmt(sd, 3)}"
    return f"<td class=num>{fmt(mean, 3)}{spread}</td>"


def _label(group: dict) -> str:
    text = f"<code>{html.escape(group.get('label') or '')}</code>"
    if group.get("name"):
        text += f"<br><span class=named>{html.escape(group['name'])}</span>"
    return f"<td>{text}</td>"


def _reads(label: str | None, view: SeedView, family: str) -> str:
    """The families table's "reads" cell of ``family`` (label, shuffled/real ratio, bits a
    column, from its seed's ``motifs.json``); the consensus's ``label`` alone where that run
    is not found; a dash where there is neither."""
    full = (view.families.get(family) or {}).get("composition")
    return composition_cell(full or ({"label": label} if label else None)) or (
        "<td class=muted>&ndash;</td>")


def _where(view: SeedView, family: str) -> str:
    return where_cell(view.families.get(family) or {}, placed=True)


def _logos(members: list[str], view: SeedView) -> str:
    if not members:
        return "<td class=muted>not found</td>"
    return "<td>" + "".join(
        f"<figure class=seed-logo>{view.logo(m)}<figcaption><code>{html.escape(m)}</code>"
        f"</figcaption></figure>" for m in members
    ) + "</td>"  # fmt: skip


def _groups_table(groups: list[dict], labels: list[str], views: dict[str, SeedView]) -> str:
    if not groups:
        return "<p>No family came back in a second seed.</p>"
    head = ("<tr><th>family</th><th>recurs</th><th>effect (nats; mean &plusmn; sd over its "
            "seeds)</th><th>label</th><th>reads</th>"
            + "".join(f"<th>{html.escape(label)}</th>" for label in labels)
            + "<th>where (its largest-effect member)</th></tr>")  # fmt: skip
    rows = []
    for g in groups:
        lead = g["lead"]
        full = g["seeds"] == g["of"]
        rows.append(
            f"<tr><td><code>{html.escape(g['id'])}</code></td>"
            f"<td class=num><span class={'named' if full else 'plain'}>"
            f"{html.escape(g['recurs'])}</span></td>{_effect(g['effect'])}{_label(g)}"
            f"{_reads(g.get('composition'), views[lead['seed']], lead['family'])}"
            + "".join(_logos(g["members"].get(label) or [], views[label]) for label in labels)
            + f"{_where(views[lead['seed']], lead['family'])}</tr>"
        )  # fmt: skip
    return f"<div class=wide><table class=consensus>{head}{''.join(rows)}</table></div>"


def _apart(groups: list[dict], views: dict[str, SeedView]) -> list[str]:
    if not groups:
        return []
    rows = []
    for g in groups:
        lead = g["lead"]
        view = views[lead["seed"]]
        rows.append(
            f"<tr><td>{html.escape(lead['seed'])}</td>{_logos(g['members'][lead['seed']], view)}"
            f"{_effect(g['effect'])}{_label(g)}"
            f"{_reads(g.get('composition'), view, lead['family'])}"
            f"{_where(view, lead['family'])}</tr>"
        )  # fmt: skip
    return [
        f"<h3>Not reproduced: seen in one seed only ({len(groups)})</h3>",
        "<div class=wide><table class=consensus><tr><th>seed</th><th>families</th><th>effect"
        "</th><th>label</th><th>reads</th><th>where</th></tr>"
        f"{''.join(rows)}</table></div>",
    ]
