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
    """``folder/<id>.png`` and ``.svg`` per motif and ``folder/all_motifs.png`` (a sheet)."""
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
        cols = 2
        rows = (len(motifs) + cols - 1) // cols
        width = max(m.width for m in motifs)
        fig, axes = plt.subplots(rows, cols, figsize=(cols * max(3.0, 0.3 * width), 1.9 * rows),
                                 squeeze=False)  # fmt: skip
        try:
            for ax, m in zip(axes.flat, motifs):
                draw_logo(ax, m)
            for ax in list(axes.flat)[len(motifs) :]:
                ax.axis("off")
            fig.tight_layout()
            path = folder / "all_motifs.png"
            _save(fig, path, "png")
            written["sheet"].append(path)
        finally:
            plt.close(fig)
    return written
