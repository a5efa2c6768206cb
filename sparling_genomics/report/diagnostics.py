"""The training diagnostics' figures and report section (``runners/diagnose.py`` writes
``RUN/diagnostics/``): each measure against training step beside the run's accuracy, and the
persistence diagrams at the first checkpoint, the test jump and the last checkpoint."""

from __future__ import annotations

import html
from pathlib import Path

import numpy as np

from ..export.logos import pyplot
from ..rundir import DIAGNOSTICS_SUMMARY, read_run_json
from .figures import png_bytes
from .html import figure, fmt

PANELS = [
    ("h1_max", "H1 max persistence"),
    ("h1_total", "H1 total persistence"),
    ("h0_total", "H0 total persistence"),
    ("twonn_local", "local intrinsic dim. (TwoNN)"),
    ("fourier_top5_share", "power in top-5 frequencies"),
    ("density", "sparse layer density"),
]
ACCURACY_COLOURS = {"train": "tab:green", "val": "tab:orange", "test": "tab:red"}


def _events(ax, events: dict) -> None:
    for key, style in (("train_fit_step", ":"), ("test_jump_step", "--")):
        if events.get(key) is not None:
            ax.axvline(events[key], color="grey", ls=style, lw=0.8)


def measures_figure(summary: dict) -> bytes | None:
    """PNG: one panel per measure the series holds, each against step, with the accuracy of
    every scored split on a second axis (dotted: train fitted; dashed: test jump)."""
    series = summary["series"]
    panels = [(k, label) for k, label in PANELS
              if sum(r.get(k) is not None for r in series) >= 2]  # fmt: skip
    if not panels:
        return None
    plt = pyplot()
    cols = 2 if len(panels) > 1 else 1
    rows = (len(panels) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(5.2 * cols, 2.6 * rows), squeeze=False)
    steps = np.array([r["step"] for r in series])
    try:
        for ax, (key, label) in zip(axes.flat, panels):
            values = np.array([np.nan if r.get(key) is None else r[key] for r in series], float)
            ax.plot(steps, values, color="tab:blue", marker=".", ms=3)
            ax.set_ylabel(label, color="tab:blue", fontsize=8)
            ax.set_xlabel("training step", fontsize=8)
            if key == "density":
                ax.set_yscale("log")
            acc = ax.twinx()
            for split, colour in ACCURACY_COLOURS.items():
                ys = [r["accuracy"].get(split) for r in series]
                if any(y is not None for y in ys):
                    acc.plot(steps, [np.nan if y is None else y for y in ys], color=colour,
                             lw=0.9, alpha=0.8, label=f"{split} acc.")  # fmt: skip
            acc.set_ylim(-0.02, 1.02)
            acc.tick_params(labelsize=7)
            ax.tick_params(labelsize=7)
            _events(ax, summary["events"])
        axes.flat[0].figure.legend(*acc.get_legend_handles_labels(), loc="upper center",
                                   ncol=3, fontsize=7)  # fmt: skip
        for ax in list(axes.flat)[len(panels):]:
            ax.axis("off")
        fig.tight_layout(rect=(0, 0, 1, 0.95))
        return png_bytes(fig)
    finally:
        plt.close(fig)


def chosen_steps(summary: dict) -> list[int]:
    """The checkpoints whose diagrams are drawn: the nearest to each step the user asked for
    (``diagnose --diagram-steps``), else the first, the test jump (else train fit), the last."""
    steps = [r["step"] for r in summary["series"]]
    asked = summary["settings"].get("diagram_steps")
    if asked:
        return list(dict.fromkeys(min(steps, key=lambda s: abs(s - a)) for a in asked))
    e = summary["events"]
    middle = e.get("test_jump_step") or e.get("train_fit_step")
    picks = [steps[0]] + ([middle] if middle is not None else []) + [steps[-1]]
    return list(dict.fromkeys(picks))


def persistence_figure(summary: dict, diagrams: dict[str, dict]) -> bytes | None:
    """PNG: the H0 and H1 persistence diagrams at :func:`chosen_steps`."""
    picks = [s for s in chosen_steps(summary) if diagrams.get(f"step-{s:08d}", {}).get("h0")
             is not None]  # fmt: skip
    if not picks:
        return None
    plt = pyplot()
    fig, axes = plt.subplots(1, len(picks), figsize=(3.2 * len(picks), 3.2), squeeze=False)
    try:
        for ax, step in zip(axes.flat, picks):
            d = diagrams[f"step-{step:08d}"]
            top = max([1e-9] + [float(d[k][:, 1].max()) for k in ("h0", "h1") if len(d[k])])
            for k, colour in (("h0", "tab:blue"), ("h1", "tab:orange")):
                if len(d[k]):
                    ax.scatter(d[k][:, 0], d[k][:, 1], s=6, color=colour, label=k.upper())
            ax.plot([0, top], [0, top], color="grey", lw=0.6)
            ax.set_title(f"step {step}", fontsize=9)
            ax.set_xlabel("birth", fontsize=8)
            ax.set_ylabel("death", fontsize=8)
            ax.tick_params(labelsize=7)
            ax.legend(fontsize=7, loc="lower right")
        fig.tight_layout()
        return png_bytes(fig)
    finally:
        plt.close(fig)


def diagnostics_section(folder: Path) -> list[str]:
    """The report's "Training diagnostics" section from ``folder`` (written by ``diagnose``);
    none when the folder holds no ``diagnostics.json``."""
    path = Path(folder) / DIAGNOSTICS_SUMMARY
    if not path.is_file():
        return []
    summary = read_run_json(path, "made by `sparling-genomics diagnose`")
    e = summary["events"]
    split = e["accuracy_split"]
    parts = [
        "<h2>Training diagnostics</h2>",
        f"<p>Topology of layer <b>{html.escape(summary['layer'])}</b> at "
        f"{summary['checkpoints']} checkpoints (Vietoris-Rips persistence, TwoNN intrinsic "
        "dimension" + (", Fourier spectrum of the token embedding" if summary["cyclic"] else "")
        + f"). Train set fitted at step {fmt(e['train_fit_step'])}; {split} accuracy jump at "
        f"step {fmt(e['test_jump_step'])}; largest H1 rise at step {fmt(e['h1_rise_step'])}; "
        f"H1 max {fmt(e['h1_max_before_jump'], 3)} before the jump, "
        f"{fmt(e['h1_max_after_jump'], 3)} after.</p>",
    ]
    rows = "".join(
        f"<tr><td>{html.escape(k)}</td><td>{v['rho']:+.3f}</td><td>{v['p']:.2g}</td>"
        f"<td>{v['n']}</td></tr>"
        for k, v in summary["spearman"].items()
    )
    if rows:
        parts.append(f"<table><tr><th>measure</th><th>Spearman with {split} accuracy</th>"
                     f"<th>p</th><th>checkpoints</th></tr>{rows}</table>")  # fmt: skip
    for name, alt in (("measures.png", "measures against step"),
                      ("persistence.png", "persistence diagrams")):  # fmt: skip
        if (Path(folder) / name).is_file():
            parts.append(figure((Path(folder) / name).read_bytes(), alt, ""))
    return parts
