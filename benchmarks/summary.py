"""BENCHMARKS.md's order and its summary table.

Every section of BENCHMARKS.md sits between ``<!-- bench:NAME:start -->`` and ``<!-- bench:NAME:end
-->`` markers; ``NAME`` is a benchmark's name (``planted``) or a variant of one (``planted
model.hidden=64``, ``variants 1M``, ``variants, longer run``). :data:`SECTION_ORDER` fixes the
order of the sections by benchmark: a variant follows its benchmark's main section (variants keep
their order among themselves), a name it does not know goes last, and the prose between two
sections travels with the section before it.

The summary table, right after the file's header, has one row per section: the headline figure,
the floor the section states, whether it is met, and the date of the measurement. Every figure is
read from the JSON the section cites when the file is written (a function per benchmark, keyed by
the JSON's ``benchmark`` field); a section whose figure cannot be read reliably says "see
section". :func:`tidy_text` rewrites a file in that order with a fresh summary, without rerunning
anything; ``update_section`` calls it after each benchmark, ``python -m benchmarks tidy`` on its
own.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

#: The sections' order, by benchmark: the product first, then the method, the paper's domains,
#: and the analyses.
SECTION_ORDER = (
    # the product: the pipeline and its verbs on real genomes
    "pipeline", "splicing", "splicing-seeds", "apply", "scale", "scan", "scan-load", "variants",
    "motif-export",
    # the field's tools beside ours
    "peers",
    # the method
    "planted", "planted-data", "identifiability", "sparse-layer",
    # the Sparling paper's domains
    "paper-digit_circle", "paper-audio_sequence", "paper-latex_ocr",
    # analyses
    "grokking", "concepts",
)  # fmt: skip

SUMMARY_START = "<!-- bench-summary:start -->"
SUMMARY_END = "<!-- bench-summary:end -->"
SUMMARY_HEADING = "## Summary"
_START = re.compile(r"<!-- bench:(.+?):start -->")
_SUMMARY = re.compile(re.escape(SUMMARY_START) + r".*?" + re.escape(SUMMARY_END) + r"\n*", re.S)
_DATE = re.compile(r"\b(\d{4}-\d{2}-\d{2})(?:[ T]\d{2}:\d{2}(?::\d{2})?(?: UTC)?)?\b")

# -- order ----------------------------------------------------------------------------------------


@dataclass
class Section:
    """One section: its name, its block (both markers included) and the prose after it."""

    name: str
    block: str
    prose: str = ""

    @property
    def heading(self) -> str | None:
        """The block's first Markdown heading's text, without its ``#``s."""
        for line in self.block.splitlines():
            if re.match(r"#{1,6} ", line):
                return line.lstrip("#").strip()
        return None


def base_name(name: str) -> str | None:
    """The benchmark of section ``name``: itself if it is one of :data:`SECTION_ORDER`, else
    the longest one it starts with followed by a space or a comma (``variants, longer run``);
    None for a name it does not know."""
    if name in SECTION_ORDER:
        return name
    bases = [b for b in SECTION_ORDER if name.startswith((b + " ", b + ","))]
    return max(bases, key=len) if bases else None


def order_key(name: str) -> tuple[int, int]:
    """Where section ``name`` goes: its benchmark's rank, then main section before variants."""
    base = base_name(name)
    rank = SECTION_ORDER.index(base) if base else len(SECTION_ORDER)
    return rank, 0 if name == base else 1


def split_sections(text: str) -> tuple[str, list[Section]]:
    """The text before the first section (the header; any summary block left out) and the
    sections in file order, each with the prose that follows it."""
    text = _SUMMARY.sub("", text)
    starts = list(_START.finditer(text))
    if not starts:
        return text, []
    sections = []
    for i, match in enumerate(starts):
        name = match.group(1)
        end_marker = f"<!-- bench:{name}:end -->"
        end = text.find(end_marker, match.end())
        if end < 0:
            raise ValueError(f"section {name!r} has no end marker")
        end += len(end_marker)
        following = starts[i + 1].start() if i + 1 < len(starts) else len(text)
        if end > following:
            raise ValueError(f"section {name!r} ends after the next one starts")
        sections.append(Section(name, text[match.start() : end], text[end:following]))
    return text[: starts[0].start()], sections


def ordered(sections: list[Section]) -> list[Section]:
    """``sections`` in :data:`SECTION_ORDER` (a stable sort: variants and unknown names keep
    their order among themselves)."""
    return sorted(sections, key=lambda s: order_key(s.name))


# -- anchors --------------------------------------------------------------------------------------


def github_anchor(heading: str, seen: dict[str, int]) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped (``_`` and ``-`` kept),
    spaces as hyphens; the n-th repeat of an anchor gets ``-n``. ``seen`` counts the anchors
    of the headings above."""
    slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
    count = seen.get(slug, 0)
    seen[slug] = count + 1
    return slug if count == 0 else f"{slug}-{count}"


def _headings(text: str) -> list[str]:
    """The Markdown headings of ``text`` in order (none inside code fences)."""
    found, fenced = [], False
    for line in text.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced and re.match(r"#{1,6} ", line):
            found.append(line.lstrip("#").strip())
    return found


# -- the summary's figures ------------------------------------------------------------------------


@dataclass(frozen=True)
class Headline:
    """A section's headline figure, the floor its section states and the verdict: True (met),
    False (not met), None (no floor), or a verdict of its own words."""

    figure: str
    floor: str = "no floor"
    met: bool | str | None = None

    @property
    def verdict(self) -> str:
        if isinstance(self.met, str):
            return self.met
        return {True: "met", False: "not met", None: "no floor"}[self.met]


SEE_SECTION = Headline("see section", "-", "-")


def _pct(value: float) -> str:
    return f"{100 * value:.2f}%"


def _share(value: float) -> str:
    return f"{value:.0%}"


def _planted(results: list[dict], name: str) -> Headline:
    """The lowest test exact match over the seeds and the draws (not the ablations) against
    the floor each of them must meet."""
    from .planted import FLOOR_EXACT_MATCH

    (r,) = results
    runs = [(run, row) for run, rows in r["runs"].items() if run == "sparling" or
            run.startswith("draw") for row in rows]  # fmt: skip
    low_run, low = min(runs, key=lambda x: x[1]["exact_match"])
    label = f"seed {low['seed']}" if low_run == "sparling" else low_run
    seeds = sum(run == "sparling" for run, _ in runs)
    draws = len(runs) - seeds
    counted = f"{seeds} seed{'s' * (seeds != 1)}" + (
        f", {draws} draw{'s' * (draws != 1)}" if draws else "")  # fmt: skip
    return Headline(
        f"lowest exact match {_pct(low['exact_match'])} ({label}; {counted})",
        f">= {_share(FLOOR_EXACT_MATCH)} exact match on every seed and draw",
        all(row["exact_match"] >= FLOOR_EXACT_MATCH for _, row in runs),
    )


def _pipeline(results: list[dict], name: str) -> Headline:
    from .pipeline import FLOOR_MINUTES

    (r,) = results
    minutes = r["wall_seconds"] / 60
    return Headline(f"{minutes:.1f} min wall clock", f"<= {FLOOR_MINUTES} min",
                    minutes <= FLOOR_MINUTES)  # fmt: skip


def _splicing(results: list[dict], name: str) -> Headline:
    (r,) = results
    return Headline(f"Sparling / baseline mean top-k {r['topk_ratio']:.3f}")


def _seeds(results: list[dict], name: str) -> Headline:
    (r,) = results
    m = r["mean_topk"]
    return Headline(f"mean top-k {m['mean']:.3f} over {len(r['seeds'])} seeds (sd "
                    f"{m['sd']:.3f}), / baseline {r['ratio_mean']:.3f}")  # fmt: skip


def _apply(results: list[dict], name: str) -> Headline:
    (r,) = results
    parts = []
    for a in r["applied"]:
        s, b = a["sparling"], a.get("baseline")
        text = f"{a['genome']}: other / own genome mean top-k, Sparling " + (
            f"{s['other']['mean_topk'] / s['own']['mean_topk']:.3f}")  # fmt: skip
        if b:
            text += f", baseline {b['other']['mean_topk'] / b['own']['mean_topk']:.3f}"
        parts.append(text)
    if not parts:
        return SEE_SECTION
    return Headline("; ".join(parts))


def _scale(results: list[dict], name: str) -> Headline:
    """The issue's floors as ``benchmarks/scale.py::floors`` judges them."""
    from .scale import floors, measured_sizes

    (r,) = results
    found = floors(r)
    sizes = [size for size, _ in measured_sizes(r)]
    failed = [f for f in found if f["met"] is False]
    passed = [f for f in found if f["met"] is True]
    pending = [f for f in found if f["met"] is None]
    figure = f"sizes measured: {', '.join(sizes) or 'none'}; floors met {len(passed)} of " + (
        f"{len(found)}")  # fmt: skip
    if failed:
        figure += "; not met: " + "; ".join(f"{f['floor']} ({f['value']})" for f in failed)
    if pending:
        figure += f"; {len(pending)} not measured yet"
    provisional = any(not f["final"] for f in failed + passed) or bool(pending)
    if failed:
        verdict = "not met" + (" (provisional)" if provisional else "")
    elif passed:
        verdict = "met" + (" (provisional)" if provisional else "")
    else:
        verdict = "not measured yet"
    return Headline(figure, f"issue 55's {len(found)} floors (see section)", verdict)


def _scan(results: list[dict], name: str) -> Headline:
    from .scan import FLOOR_SECONDS

    (r,) = results
    seconds = r["ours"]["total_seconds"]
    return Headline(f"{seconds:.1f} s, whole `scan` of {r['bases'] / 1e6:.1f} Mb",
                    f"<= {FLOOR_SECONDS} s", seconds <= FLOOR_SECONDS)  # fmt: skip


def _scan_load(results: list[dict], name: str) -> Headline:
    (r,) = results
    inputs = r["inputs"]
    rss = ", ".join(f"{k} {v['scan']['peak_rss_gb']:.2f} GB" for k, v in inputs.items())
    same = "yes" if all(v.get("identical") for v in inputs.values()) else "no"
    return Headline(f"peak RSS {rss}; sites identical to the pieces scanned apart: {same}")


def _variants(results: list[dict], name: str) -> Headline:
    """The marginal rate against its floor and, where the section ran it, the in-silico
    truth of the section's model against its three floors."""
    from .variants import (
        FLOOR_ALLELES_PER_SECOND,
        FLOOR_CORE_DESTROYED,
        FLOOR_LOSS_SHARE,
        FLOOR_MIDPOINT_DELTA,
    )

    (r,) = results
    rate = r["throughput"]["marginal_alleles_per_second"]
    figure = [f"{rate:.0f} alleles/s (marginal)"]
    floor = [f">= {FLOOR_ALLELES_PER_SECOND} alleles/s"]
    failed = [] if rate >= FLOOR_ALLELES_PER_SECOND else ["throughput"]
    truth = r.get("truth")
    if truth:
        kinds = [k for k in ("donor", "acceptor") if truth.get(k)]
        loss = [truth[k]["fraction_loss_at_least_0.5"] for k in kinds]
        sites = [f"loss >= 0.5 {' / '.join(f'{v:.1%}' for v in loss)}"]
        limits = [f"loss >= 0.5 on >= {_share(FLOOR_LOSS_SHARE)}"]
        failed += [] if min(loss) >= FLOOR_LOSS_SHARE else ["loss >= 0.5"]
        if truth.get("core_families"):
            core = [truth[k]["fraction_core_destroyed"] for k in kinds]
            sites.append(f"core destroyed {' / '.join(f'{v:.1%}' for v in core)}")
            limits.append(f"core destroyed on >= {_share(FLOOR_CORE_DESTROYED)}")
            failed += [] if min(core) >= FLOOR_CORE_DESTROYED else ["core destroyed"]
        figure.append(f"in silico ({' / '.join(kinds)}): " + ", ".join(sites))
        floor.append(", ".join(limits))
        mid = (truth.get("intron_midpoints") or {}).get("median_max_delta")
        if mid is not None:
            figure.append(f"intron mid-point median {mid:g}")
            floor.append(f"median <= {FLOOR_MIDPOINT_DELTA:g}")
            failed += [] if mid <= FLOOR_MIDPOINT_DELTA else ["intron mid-points"]
    verdict = "met" if not failed else "not met: " + ", ".join(failed)
    return Headline("; ".join(figure), "; ".join(floor), verdict)


def _motif_export(results: list[dict], name: str) -> Headline:
    (r,) = results
    runs = r["runs"]
    passed = sum(bool(x["passed"]) for x in runs)
    recovered = sum(x["recovered"] for x in runs)
    planted = sum(x["planted"] for x in runs)
    controls = sum(x["control_false_matches"] for x in runs)
    return Headline(
        f"{passed} of {len(runs)} seeds pass (planted motifs named back {recovered} / "
        f"{planted}; shuffled controls matched {controls})",
        "every seed passes (every planted motif named back, no shuffled control matched)",
        passed == len(runs),
    )


def _planted_data(results: list[dict], name: str) -> Headline:
    (r,) = results
    speedups = [x["speedup"] for x in r["rows"]]
    return Headline(f"batch {min(speedups):.1f}-{max(speedups):.1f}x faster than the numpy "
                    f"gather ({len(speedups)} motif sets)")  # fmt: skip


def _sparse_layer(results: list[dict], name: str) -> Headline:
    (r,) = results
    speedups = [x["speedup"] for x in r["rows"]]
    return Headline(f"{min(speedups):.2f}-{max(speedups):.2f}x faster than `sparling`'s "
                    f"layer ({len(speedups)} shapes)")  # fmt: skip


def _identifiability(results: list[dict], name: str) -> Headline:
    (r,) = results
    c = r["counts"]
    n = len(r["runs"])
    return Headline(f"{n} run{'s' * (n != 1)}: met {c['met']}, fails {c['fails']}, no sparse "
                    f"layer {c['not_applicable']}, not checked {c['not_checked']}")  # fmt: skip


_PAPER_LABELS = {"fne": "FNE", "fpe": "FPE", "ce": "CE", "edit_error": "E2EE",
                 "perturbation": "consistency",
                 "perturbation_single_channel": "consistency (winning channel)"}  # fmt: skip


def _paper(results: list[dict], name: str) -> Headline:
    """The errors (and consistency where it has a floor) on the mean over seeds; the floors
    and whether each is met as the JSON's ``floors_met`` says."""
    from .paper_domains import PERTURBATION_FLOORS, error_floors

    (r,) = results
    task, ours, met = r["task"], r["ours"], r.get("floors_met") or {}
    limits = {k: ("<=", v) for k, v in error_floors(task).items()}
    limits |= {k: (">=", v) for k, v in PERTURBATION_FLOORS.get(task, {}).items()}
    keys = [k for k in _PAPER_LABELS if k in ("fne", "fpe", "ce", "edit_error") or k in met]
    figure = ", ".join(f"{_PAPER_LABELS[k]} {_pct(ours[k])}" for k in keys
                       if ours.get(k) is not None)  # fmt: skip
    seeds = len(r.get("seeds") or [])
    if seeds > 1:
        figure += f" (mean of {seeds} seeds)"
    groups: dict[tuple[str, float], list[str]] = {}
    for k in met:
        if k in limits:
            groups.setdefault(limits[k], []).append(_PAPER_LABELS.get(k, k))
    floor = "; ".join(f"{', '.join(labels)} {op} {_share(v)}" for (op, v), labels in groups.items())
    if not met:
        return Headline(figure)
    kept = sum(bool(v) for v in met.values())
    verdict = "met" if kept == len(met) else f"not met ({kept} of {len(met)} met)"
    return Headline(figure, floor, verdict)


def _grokking(results: list[dict], name: str) -> Headline:
    (r,) = results
    (plain,) = [x for x in r["modular_addition"] if not x["label_permutation"]]
    before, after = plain["h1_max_before_jump"], plain["h1_max_after_jump"]
    return Headline(f"unpermuted: test accuracy {_pct(plain['test_exact_match'])}, H1 max "
                    f"{before:.3f} -> {after:.3f} ({after / before:.2f}x)")  # fmt: skip


def _concepts(results: list[dict], name: str) -> Headline:
    """Planted motifs recovered (Tomtom against the truth) over the planted sets on disk:
    Sparling's channels against the best extractor after training."""
    from .concepts_report import LABELS

    sets = [s for r in results if r.get("part", "").startswith("planted") and r.get("sets")
            for s in r["sets"].values()]  # fmt: skip
    if not sets:
        return SEE_SECTION
    total = sum(len(s["motifs"]) for s in sets)
    found: dict[str, int] = {}
    for s in sets:
        for method, m in s["methods"].items():
            found[method] = found.get(method, 0) + (m.get("truth") or m)["recovered_count"]
    others = {k: v for k, v in found.items() if k != "sparling"}
    figure = f"planted motifs recovered ({len(sets)} sets): Sparling's channels " + (
        f"{found.get('sparling', 0)} / {total}")  # fmt: skip
    if others:
        best = max(others, key=others.get)
        figure += f"; best after training: {LABELS.get(best, best)} {others[best]} / {total}"
    return Headline(figure)



def _peers(results: list[dict], name: str) -> Headline:
    """Sparling against SpliceAI off the shelf, our baseline against OpenSpliceAI retrained
    for the same wall time (the peers section's first two comparisons)."""
    from .peers_report import BASELINE_GAP, TRANSCRIPT, best_reading

    (r,) = results
    mean = {n: m["e2e"]["mean_topk"] for n, m in r["models"].items()}
    same_time = [best_reading(mean, n) for n in mean if n.startswith("openspliceai")
                 and not n.endswith(("_default", TRANSCRIPT))]  # fmt: skip
    if "spliceai" not in mean or not same_time:
        return SEE_SECTION
    best = max(same_time, key=mean.get)
    spliceai = mean[best_reading(mean, "spliceai")]
    flank = best.removeprefix("openspliceai").removesuffix(TRANSCRIPT)
    figure = (f"mean top-k: Sparling {mean['sparling']:.3f} vs SpliceAI {spliceai:.3f}; "
              f"baseline {mean['baseline']:.3f} vs OpenSpliceAI-{flank}"
              f" {mean[best]:.3f} (same wall time)")  # fmt: skip
    met = mean["sparling"] > spliceai and mean[best] - mean["baseline"] <= BASELINE_GAP
    return Headline(figure, f"Sparling > SpliceAI; baseline within {BASELINE_GAP} of "
                    "OpenSpliceAI", met)  # fmt: skip

#: The summary function of each benchmark, by the ``benchmark`` field of its JSON.
SUMMARIES: dict[str, Callable[[list[dict], str], Headline]] = {
    "planted": _planted,
    "pipeline": _pipeline,
    "splicing": _splicing,
    "seeds": _seeds,
    "apply": _apply,
    "scale": _scale,
    "scan": _scan,
    "scan-load": _scan_load,
    "variants": _variants,
    "peers": _peers,
    "motif-export": _motif_export,
    "planted-data": _planted_data,
    "sparse-layer": _sparse_layer,
    "identifiability": _identifiability,
    "paper": _paper,
    "grokking": _grokking,
    "concepts": _concepts,
}

#: A JSON without a ``benchmark`` field: its benchmark by its file name.
_BY_FILE_NAME = {"sparse_layer.json": "sparse-layer", "planted_data.json": "planted-data"}


def benchmark_of(result: dict, path: Path) -> str | None:
    """The key of :data:`SUMMARIES` for a JSON: its ``benchmark`` field (``paper_<task>`` is
    ``paper``), else its file name (``bench_<name>.json``, ``bench_concepts_<part>.json``)."""
    name = result.get("benchmark") if isinstance(result, dict) else None
    if not name:
        name = _BY_FILE_NAME.get(path.name) or re.sub(r"^bench_|\.json$", "", path.name)
        name = "concepts" if name.startswith("concepts_") else name
    return "paper" if name.startswith("paper") else name


def cited_json(block: str, root: Path) -> list[Path]:
    """The JSON files a section cites: the ``JSON: `...``` it names (a ``<part>`` in it stands
    for every part on disk), else the first ``....json`` path it names that is a file (e.g.
    a command's ``--out``); paths relative to ``root`` (the markdown file's folder)."""

    def found(cited: str) -> list[Path]:
        path = Path(cited) if os.path.isabs(cited) else root / cited
        if "<" in path.name:
            return sorted(path.parent.glob(re.sub(r"<[^>]*>", "*", path.name)))
        return [path] if path.is_file() else []

    named = re.search(r"JSON: `([^`]+\.json)`", block)
    if named:
        return found(named.group(1))
    for cited in re.findall(r"(?<![\w./-])[\w./-]+\.json\b", block):
        if paths := found(cited):
            return paths
    return []


def _dates(value) -> list[str]:
    """Every date (``YYYY-MM-DD``) a JSON value holds, in any string."""
    if isinstance(value, str):
        return _DATE.findall(value)
    if isinstance(value, dict):
        return [d for v in value.values() for d in _dates(v)]
    if isinstance(value, list):
        return [d for v in value for d in _dates(v)]
    return []


def measured_on(result: dict) -> str | None:
    """The day a JSON was measured: its ``machine.date``, else its ``date``, else the newest
    date it holds; None where it holds none."""
    machine = result.get("machine") if isinstance(result.get("machine"), dict) else {}
    for value in (machine.get("date"), result.get("date")):
        found = _dates(value) if value else []
        if found:
            return found[0]
    found = _dates(result)
    return max(found) if found else None


def headline(section: Section, root: Path) -> tuple[Headline, str]:
    """A section's headline and the date of its JSON (the newest of several); ``see
    section`` and ``-`` where the JSON is missing or its figures cannot be read."""
    results = []
    for path in cited_json(section.block, root):
        try:
            results.append((path, json.loads(path.read_text())))
        except (OSError, ValueError):
            continue
    if not results:
        return SEE_SECTION, "-"
    dates = [d for _, r in results if isinstance(r, dict) and (d := measured_on(r))]
    date = max(dates) if dates else "-"
    kinds = {benchmark_of(r, path) for path, r in results}
    summary = SUMMARIES.get(kinds.pop()) if len(kinds) == 1 else None
    if summary is None:
        return SEE_SECTION, date
    try:
        return summary([r for _, r in results], section.name), date
    except Exception:  # noqa: BLE001 (a JSON of another shape: the section says it)
        return SEE_SECTION, date


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def summary_block(sections: list[Section], root: Path, seen: dict[str, int]) -> str:
    """The summary between its markers: one row per section of ``sections`` (in their order),
    linked to its heading; ``seen`` counts the anchors of the headings above the summary and
    is advanced past the summary's own heading."""
    github_anchor(SUMMARY_HEADING.lstrip("#").strip(), seen)
    anchors: dict[int, str] = {}
    for i, section in enumerate(sections):
        text = section.block + section.prose
        heading = section.heading
        for h in _headings(text):
            slug = github_anchor(h, seen)
            if h == heading and i not in anchors:
                anchors[i] = slug
    lines = [
        SUMMARY_START,
        SUMMARY_HEADING,
        "",
        "One row per section below, in this file's order: its headline figure, the floor the "
        "section states and whether it is met, and the day it was measured. Every figure is "
        "read from the section's JSON each time the file is written (`benchmarks/summary.py`; "
        "`python -m benchmarks tidy` rewrites the summary and the order without rerunning "
        "anything); 'see section': no figure could be read from it reliably.",
        "",
        "| section | figure | floor | verdict | measured |",
        "|---|---|---|---|---|",
    ]
    for i, section in enumerate(sections):
        title = section.heading
        label = f"[{_cell(title)}](#{anchors[i]})" if title and i in anchors else (
            f"`{section.name}`")  # fmt: skip
        found, date = headline(section, root)
        lines.append(f"| {label} | {_cell(found.figure)} | {_cell(found.floor)} "
                     f"| {_cell(found.verdict)} | {date} |")  # fmt: skip
    lines.append(SUMMARY_END)
    return "\n".join(lines)


# -- the whole file -------------------------------------------------------------------------------


def tidy_text(text: str, root: Path) -> str:
    """``text`` (a BENCHMARKS.md) with its sections in :data:`SECTION_ORDER`, each followed by
    its prose, and a fresh summary right after the header; JSON paths relative to ``root``."""
    preamble, sections = split_sections(text)
    sections = ordered(sections)
    preamble = preamble.strip()
    seen: dict[str, int] = {}
    for h in _headings(preamble):
        github_anchor(h, seen)
    chunks = [preamble] if preamble else []
    chunks.append(summary_block(sections, root, seen))
    for section in sections:
        prose = section.prose.strip()
        chunks.append(section.block.strip() + (f"\n\n{prose}" if prose else ""))
    return "\n\n".join(chunks) + "\n"


def tidy_file(path: Path) -> bool:
    """Rewrite the markdown file at ``path`` with :func:`tidy_text`; True if it changed."""
    from sparling_genomics.io import write_text_atomic

    path = Path(path)
    text = path.read_text()
    tidied = tidy_text(text, path.parent)
    if tidied != text:
        write_text_atomic(path, tidied)
    return tidied != text
