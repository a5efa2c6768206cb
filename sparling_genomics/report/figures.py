"""Training figures for the report, from a run's ``train_log.jsonl`` (``rundir.read_log``).

* The annealing curve: the sparse layer's target density (log scale) and the validation
  metric the annealer watches, against samples seen, with the annealer's bar where logged.
* Motif error against density (the Sparling paper's Figure 4 shape): FNE, FPE and CE on the
  validation set at each evaluation, against the density at that point, for tasks that know
  their true motifs (the trainer logs ``val_fne``/``val_fpe``/``val_ce`` for them).
* A motif's metaplot (site tasks): observed and expected site counts against signed distance
  to the nearest labelled site, one panel per site class, from its ``positions`` block
  (``evaluate/positions.py``), plus its exon / intron / intergenic shares where recorded.
* Channel glyphs (image and spectrogram tasks): each channel's mean input patch around its
  activations (``evaluate/glyphs.py``), titled with the symbol it was matched to.

Figures are matplotlib (Agg backend) PNG bytes, so the report can embed them.
"""

from __future__ import annotations

import io
import math

from ..evaluate.glyphs import glyph_image
from ..export.logos import pyplot


def png_bytes(fig) -> bytes:
    """A figure as PNG bytes (110 dpi, tight), for embedding in the report."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    return buffer.getvalue()


def annealing_curve(records: list[dict], metric: str) -> bytes | None:
    """PNG of density and ``val_<metric>`` (and the bar) against samples; None if no records."""
    rows = [r for r in records if "samples" in r and "density" in r]
    if not rows:
        return None
    plt = pyplot()
    fig, left = plt.subplots(figsize=(7.0, 3.2))
    try:
        samples = [r["samples"] for r in rows]
        left.plot(samples, [r["density"] for r in rows], color="tab:blue", label="density")
        left.set_yscale("log")
        left.set_xlabel("training samples seen")
        left.set_ylabel("sparse-layer density", color="tab:blue")
        right = left.twinx()
        key = f"val_{metric}"
        values = [(s, r[key]) for s, r in zip(samples, rows) if r.get(key) is not None]
        if values:
            right.plot(*zip(*values), color="tab:orange", label=f"validation {metric}")
        bars = [(s, r["bar"]) for s, r in zip(samples, rows) if r.get("bar") is not None]
        if bars:
            right.plot(*zip(*bars), color="tab:gray", linestyle="--", label="annealing bar")
        right.set_ylabel(f"validation {metric}", color="tab:orange")
        right.set_ylim(0, 1.02)
        handles = left.get_legend_handles_labels()[0] + right.get_legend_handles_labels()[0]
        left.legend(handles=handles, loc="center right", fontsize=8)
        left.set_title("Sparsity annealing")
        return png_bytes(fig)
    finally:
        plt.close(fig)


def motif_error_vs_density(records: list[dict]) -> bytes | None:
    """PNG of validation FNE/FPE/CE (and E2EE, the edit error of the output, and the
    spread of a motif's cell over channels, where logged) against density: the Sparling
    paper's Figure 4. None if the run logged no motif errors."""
    rows = [r for r in records if r.get("val_fne") is not None and r.get("density")]
    if not rows:
        return None
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7.0, 3.2))
    try:
        density = [r["density"] for r in rows]
        for key, colour in (("fne", "tab:red"), ("fpe", "tab:purple"), ("ce", "tab:green")):
            ax.plot(density, [r[f"val_{key}"] for r in rows], "o-", markersize=3,
                    color=colour, label=key.upper())  # fmt: skip
        if all(r.get("val_edit_error") is not None for r in rows):
            ax.plot(density, [r["val_edit_error"] for r in rows], "o-", markersize=3,
                    color="tab:blue", label="E2EE")  # fmt: skip
        if all(r.get("val_spread") is not None for r in rows):  # logged since 2026-12-06
            ax.plot(density, [r["val_spread"] for r in rows], "--", color="tab:gray",
                    label="spread (cell peaks off the winner)")  # fmt: skip
        ax.set_xscale("log")
        ax.invert_xaxis()  # annealing runs from dense to sparse: read left to right
        ax.set_xlabel("sparse-layer density (annealing moves left to right)")
        ax.set_ylabel("validation error")
        ax.set_ylim(0, 1.02)
        ax.legend(fontsize=8)
        ax.set_title("Motif and end-to-end errors against density")
        return png_bytes(fig)
    finally:
        plt.close(fig)


def positional_metaplot(block: dict, title: str = "") -> bytes | None:
    """PNG of a motif's ``positions`` block: per site class, observed and matched-null
    expected counts per distance bin (bins with q < 0.05 and more than expected starred);
    a last panel with region shares when the dataset records them. None without classes."""
    classes = block.get("classes") or {}
    if not classes:
        return None
    edges = block["bin_edges"]
    centres = [(lo + hi - 1) / 2 for lo, hi in zip(edges[:-1], edges[1:])]
    regions = block.get("regions") or {}
    panels = len(classes) + int(bool(regions.get("available")))
    plt = pyplot()
    fig, axes = plt.subplots(1, panels, figsize=(3.3 * panels, 2.6), squeeze=False)
    try:
        for ax, (name, c) in zip(axes[0], classes.items()):
            ax.step(centres, c["observed"], where="mid", color="tab:blue", label="observed")
            ax.plot(centres, c["expected"], color="tab:gray", linestyle="--", label="expected")
            top = max(max(c["observed"]), max(c["expected"]), 1)
            for x, o, e, q in zip(centres, c["observed"], c["expected"], c["q"]):
                if q < 0.05 and o > e:
                    ax.text(x, o + 0.02 * top, "*", ha="center", color="tab:red")
            ax.axvline(0, color="k", linewidth=0.5)
            beyond = c["beyond"]
            ax.set_title(f"{name} (beyond: {beyond['observed']} / {beyond['expected']:.0f})",
                         fontsize=9)  # fmt: skip
            ax.set_xlabel(f"distance to nearest {name} (nt, - = upstream)", fontsize=8)
            ax.set_ylabel("sites", fontsize=8)
            ax.tick_params(labelsize=7)
        axes[0][0].legend(fontsize=7)
        if regions.get("available"):
            ax = axes[0][-1]
            names = [n for n in ("exon", "intron", "intergenic") if n in regions]
            x = range(len(names))
            ax.bar([i - 0.2 for i in x], [regions[n]["share"] for n in names], 0.4,
                   color="tab:blue", label="observed")  # fmt: skip
            ax.bar([i + 0.2 for i in x], [regions[n]["expected_share"] for n in names], 0.4,
                   color="tab:gray", label="expected")  # fmt: skip
            ax.set_xticks(list(x), names, fontsize=8)
            ax.set_ylabel("share of sites", fontsize=8)
            ax.set_title("region", fontsize=9)
            ax.legend(fontsize=7)
        if title:
            fig.suptitle(title, fontsize=10)
        fig.tight_layout()
        return png_bytes(fig)
    finally:
        plt.close(fig)


def channel_glyphs_figure(glyphs: dict | None) -> bytes | None:
    """PNG grid of each channel's mean input patch (a picture: dark is ink; a spectrogram:
    frequency up), titled ``channel: symbol (activations)``; None if no channel fired."""
    if not glyphs:
        return None
    shape = glyphs["shape"]
    entries = [(c, e, glyph_image(e, shape)) for c, e in glyphs["channels"].items()]
    if not any(image is not None for _, _, image in entries):
        return None
    columns = min(8, len(entries))
    rows = math.ceil(len(entries) / columns)
    plt = pyplot()
    fig, axes = plt.subplots(rows, columns, figsize=(1.3 * columns, 1.5 * rows), squeeze=False)
    try:
        for ax in axes.flat:
            ax.axis("off")
        for ax, (channel, entry, image) in zip(axes.flat, entries):
            ax.set_title(f"{channel}: {entry.get('symbol', '-')} ({entry['fires']:,})",
                         fontsize=7)  # fmt: skip
            if image is None:
                continue
            if image.shape[0] == 1:  # one input channel: a grey picture, ink dark
                ax.imshow(image[0], cmap="gray_r", interpolation="nearest")
            else:  # input channels are rows (a spectrogram's frequencies)
                ax.imshow(image.reshape(image.shape[0], -1), cmap="magma", origin="lower",
                          aspect="auto", interpolation="nearest")  # fmt: skip
        fig.suptitle("What each channel fires on (mean input around its activations)",
                     fontsize=9)  # fmt: skip
        return png_bytes(fig)
    finally:
        plt.close(fig)
