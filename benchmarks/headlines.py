"""The summary table's figures: one function per benchmark reads the headline figure of a
section from the JSON it cites, the floor the section states and whether it is met.

Each function is keyed by the JSON's ``benchmark`` field (:data:`SUMMARIES`); the floors come
from :mod:`benchmarks.floors` and the names from :mod:`benchmarks.labels`, as the sections'
own text has them. A section whose figure cannot be read reliably says "see section".
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .floors import (
    PAPER_PERTURBATION,
    PEERS_BASELINE_GAP,
    PIPELINE_MINUTES,
    PLANTED_EXACT_MATCH,
    SCAN_SECONDS,
    VARIANTS_ALLELES_PER_SECOND,
    VARIANTS_CORE_DESTROYED,
    VARIANTS_LOSS_SHARE,
    VARIANTS_MIDPOINT_DELTA,
    paper_error_floors,
)
from .labels import CONCEPT_LABELS, TRANSCRIPT, best_reading
from .scale_growth import judged_floors, measured_sizes
from .sections import Section

_DATE = re.compile(r"\b(\d{4}-\d{2}-\d{2})(?:[ T]\d{2}:\d{2}(?::\d{2})?(?: UTC)?)?\b")


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
        f">= {_share(PLANTED_EXACT_MATCH)} exact match on every seed and draw",
        all(row["exact_match"] >= PLANTED_EXACT_MATCH for _, row in runs),
    )


def _pipeline(results: list[dict], name: str) -> Headline:
    (r,) = results
    minutes = r["wall_seconds"] / 60
    return Headline(f"{minutes:.1f} min wall clock", f"<= {PIPELINE_MINUTES} min",
                    minutes <= PIPELINE_MINUTES)  # fmt: skip


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
    """The issue's floors as ``scale_growth.judged_floors`` judges them."""
    (r,) = results
    found = judged_floors(r)
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
    (r,) = results
    seconds = r["ours"]["total_seconds"]
    return Headline(f"{seconds:.1f} s, whole `scan` of {r['bases'] / 1e6:.1f} Mb",
                    f"<= {SCAN_SECONDS} s", seconds <= SCAN_SECONDS)  # fmt: skip


def _scan_load(results: list[dict], name: str) -> Headline:
    (r,) = results
    inputs = r["inputs"]
    rss = ", ".join(f"{k} {v['scan']['peak_rss_gb']:.2f} GB" for k, v in inputs.items())
    same = "yes" if all(v.get("identical") for v in inputs.values()) else "no"
    return Headline(f"peak RSS {rss}; sites identical to the pieces scanned apart: {same}")


def worst_scan_ratio(result: dict) -> float:
    """scan-regression's largest median ratio (ours / before) over references and ways of
    scanning (whole; parts + gather)."""
    return max(ref[way]["ratio"] for ref in result["references"].values()
               for way in ("whole", "scattered"))  # fmt: skip


def _scan_regression(results: list[dict], name: str) -> Headline:
    (r,) = results
    worst = worst_scan_ratio(r)
    same = all(all(m["same_sites"].values()) for m in r["references"].values())
    floor = r["floor_ratio"]
    figure = (f"ours / {r['before']['commit']}: worst median {worst:.3f} ("
              f"{', '.join(r['references'])}; whole and parts + gather); same sites: "
              f"{'yes' if same else 'no'}")  # fmt: skip
    return Headline(figure, f"<= {floor}", worst <= floor and same)


def _variants(results: list[dict], name: str) -> Headline:
    """The marginal rate against its floor and, where the section ran it, the in-silico
    truth of the section's model against its three floors."""
    (r,) = results
    rate = r["throughput"]["marginal_alleles_per_second"]
    figure = [f"{rate:.0f} alleles/s (marginal)"]
    floor = [f">= {VARIANTS_ALLELES_PER_SECOND} alleles/s"]
    failed = [] if rate >= VARIANTS_ALLELES_PER_SECOND else ["throughput"]
    truth = r.get("truth")
    if truth:
        kinds = [k for k in ("donor", "acceptor") if truth.get(k)]
        loss = [truth[k]["fraction_loss_at_least_0.5"] for k in kinds]
        sites = [f"loss >= 0.5 {' / '.join(f'{v:.1%}' for v in loss)}"]
        limits = [f"loss >= 0.5 on >= {_share(VARIANTS_LOSS_SHARE)}"]
        failed += [] if min(loss) >= VARIANTS_LOSS_SHARE else ["loss >= 0.5"]
        if truth.get("core_families"):
            core = [truth[k]["fraction_core_destroyed"] for k in kinds]
            sites.append(f"core destroyed {' / '.join(f'{v:.1%}' for v in core)}")
            limits.append(f"core destroyed on >= {_share(VARIANTS_CORE_DESTROYED)}")
            failed += [] if min(core) >= VARIANTS_CORE_DESTROYED else ["core destroyed"]
        figure.append(f"in silico ({' / '.join(kinds)}): " + ", ".join(sites))
        floor.append(", ".join(limits))
        mid = (truth.get("intron_midpoints") or {}).get("median_max_delta")
        if mid is not None:
            figure.append(f"intron mid-point median {mid:g}")
            floor.append(f"median <= {VARIANTS_MIDPOINT_DELTA:g}")
            failed += [] if mid <= VARIANTS_MIDPOINT_DELTA else ["intron mid-points"]
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
    (r,) = results
    task, ours, met = r["task"], r["ours"], r.get("floors_met") or {}
    limits = {k: ("<=", v) for k, v in paper_error_floors(task).items()}
    limits |= {k: (">=", v) for k, v in PAPER_PERTURBATION.get(task, {}).items()}
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
        label = CONCEPT_LABELS.get(best, best)
        figure += f"; best after training: {label} {others[best]} / {total}"
    return Headline(figure)


def _peers(results: list[dict], name: str) -> Headline:
    """Sparling against SpliceAI off the shelf, our baseline against OpenSpliceAI retrained
    for the same wall time (the peers section's first two comparisons)."""
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
    met = mean["sparling"] > spliceai and mean[best] - mean["baseline"] <= PEERS_BASELINE_GAP
    return Headline(figure, f"Sparling > SpliceAI; baseline within {PEERS_BASELINE_GAP} of "
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
    "scan-regression": _scan_regression,
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

