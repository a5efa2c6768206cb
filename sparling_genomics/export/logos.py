"""Sequence logos with logomaker: information-content logos as PNG and SVG, plus one sheet.

Figures are drawn with matplotlib's Agg backend (no display needed), always on an explicit
``ax``, closed after saving, and written atomically.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..genome.sequence import ALPHABET
from ..io import atomic_write, safe_child
from .formats import ExportedMotif


def pyplot():
    """matplotlib.pyplot on the Agg backend (no display needed)."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def information_frame(probs: np.ndarray):
    """logomaker's information matrix (bits per base) of a ``(width, 4)`` probability matrix."""
    import logomaker
    import pandas as pd

    df = pd.DataFrame(np.asarray(probs, dtype=float), columns=list(ALPHABET))
    df = df.div(df.sum(axis=1), axis=0)
    return logomaker.transform_matrix(df, from_type="probability", to_type="information")


def draw_logo(ax, motif: ExportedMotif) -> None:
    import logomaker

    logomaker.Logo(information_frame(motif.probs), ax=ax, color_scheme="classic")
    ax.set_ylim(0, 2)
    ax.set_ylabel("bits")
    title = f"{motif.id}  {motif.name}" if motif.name else motif.id
    ax.set_title(f"{title}  (n={motif.nsites})", fontsize=9)
    ax.set_xticks(range(motif.width))
    ax.set_xticklabels([str(i + 1) for i in range(motif.width)], fontsize=6)


def _save(fig, path: Path, fmt: str) -> None:
    atomic_write(path, lambda h: fig.savefig(h, format=fmt, dpi=150, bbox_inches="tight"), "wb")


def logo_png(motif: ExportedMotif) -> bytes:
    """The PNG bytes of ``motif``'s logo, drawn as :func:`write_logos` draws it (the report
    redraws a logo that is not on disk from the motif's PWM)."""
    import io

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(max(3.0, 0.35 * motif.width), 1.8))
    try:
        draw_logo(ax, motif)
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=150, bbox_inches="tight")
    finally:
        plt.close(fig)
    return buffer.getvalue()


def write_logos(folder: Path, motifs: list[ExportedMotif]) -> dict[str, list[Path]]:
    """``folder/<id>.png`` and ``.svg`` per motif and ``folder/all_motifs.png``: a sheet of
    the PNGs, two a row (pasted with Pillow, not drawn again: drawing is most of a logo's
    time)."""
    plt = pyplot()
    folder = Path(folder)
    written: dict[str, list[Path]] = {"png": [], "svg": [], "sheet": []}
    for m in motifs:
        fig, ax = plt.subplots(figsize=(max(3.0, 0.35 * m.width), 1.8))
        try:
            draw_logo(ax, m)
            for fmt in ("png", "svg"):
                path = safe_child(folder, m.id, f".{fmt}")
                _save(fig, path, fmt)
                written[fmt].append(path)
        finally:
            plt.close(fig)
    if motifs:
        path = folder / "all_motifs.png"
        atomic_write(path, lambda h: logo_sheet(written["png"]).save(h, format="png"), "wb")
        written["sheet"].append(path)
    return written


def logo_sheet(pngs: list[Path], cols: int = 2):
    """The logos ``pngs`` on one white Pillow image, ``cols`` a row, each in a cell of the
    widest and tallest logo's size, left-aligned."""
    from PIL import Image

    images = []
    for png in pngs:
        with Image.open(png) as image:
            images.append(image.convert("RGB"))
    width, height = max(i.width for i in images), max(i.height for i in images)
    rows = -(-len(images) // cols)
    sheet = Image.new("RGB", (cols * width, rows * height), "white")
    for k, image in enumerate(images):
        sheet.paste(image, ((k % cols) * width, (k // cols) * height))
    return sheet
