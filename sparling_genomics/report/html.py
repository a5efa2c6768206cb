"""The report's HTML building blocks: numbers as table text, embedded PNG figures, and motif
logos (read from ``logos/`` or redrawn from the PWMs of a MEME file)."""

from __future__ import annotations

import base64
import html
from pathlib import Path

import numpy as np

from ..export.formats import ExportedMotif, read_meme_motifs
from ..export.logos import logo_png
from ..io import safe_child


def data_uri(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def fmt(value, digits: int = 4) -> str:
    if value is None:
        return "&ndash;"
    if isinstance(value, float):
        if value != 0 and (abs(value) < 1e-3 or abs(value) >= 1e5):
            return f"{value:.2e}"
        return f"{value:.{digits}f}"
    return html.escape(str(value))


def figure(png: bytes | None, alt: str, missing: str) -> str:
    if png is None:
        return f"<p class=muted>{html.escape(missing)}</p>"
    return f'<p><img class=figure alt="{html.escape(alt)}" src="{data_uri(png)}"></p>'


def logo_cell(m: dict, logos: Path, pwms: dict[str, np.ndarray], css: str = "logo") -> str:
    """A motif's logo: ``logos/<id>.png`` if it is on disk, else redrawn from the PWM in
    ``motifs.meme`` beside ``logos/`` (logos are not kept with saved runs: bench_runs/)."""
    logo_path = safe_child(logos, m["id"], ".png")
    if logo_path.is_file():
        png = logo_path.read_bytes()
    elif m["id"] in pwms:
        name = (m.get("name") or "").replace(" ", "_")  # as export names the logo
        motif = ExportedMotif(m["id"], pwms[m["id"]], int(m["nsites"]), name)
        png = logo_png(motif)
    else:
        return "<span class=muted>no logo (neither logos/ nor motifs.meme has it)</span>"
    return f'<img class={css} alt="logo of {html.escape(m["id"])}" src="{data_uri(png)}">'


def meme_pwms(path: Path) -> dict[str, np.ndarray]:
    """``{motif id: (width, 4) probabilities}`` of a MEME file; empty if it is missing."""
    if not path.is_file():
        return {}
    return {key.split()[0]: probs for key, probs in read_meme_motifs(path).items()}
