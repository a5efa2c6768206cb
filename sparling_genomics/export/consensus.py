"""Consensus families across seeds: which of a setting's motif families come back when it is
trained again, matched by logo and, beside it, by where they fire.

Each seed's exported families (representatives with their effects, merged sites on the test
block; ``export/families.py``) are compared with every other seed's in two ways:

* **by logo** (the verdict): Tomtom of the representatives (``tomtom_between``: both
  strands, any offset, the JASPAR-padded null), q by Benjamini-Hochberg over the other seed's
  families; family ``f`` matches ``g`` when ``f`` as the query finds ``g`` at q <
  ``q_threshold``. A family *recurs* when it matches a family in every other seed (the
  ``stability`` verb's test since it exists).
* **by sites** (reported beside it, never in its place): two families of seeds trained on
  the same dataset share a site when their spans in the same test window overlap by at least
  ``site_span`` of the shorter one; the overlap is the share of the smaller site set with
  such a partner (``site_overlap`` on doubled span centres). Two families match when it is at
  least ``site_overlap`` and ``site_over_null`` times the null: the same overlap with the
  other family's sites moved to another window, which is what a shared position preference
  (or a family firing everywhere) gives alone.

**Consensus groups** join matched families over all seeds, so one signal split over two or
three families in one seed and one family in another is one group. Nodes are (seed, family);
two are linked when either matches the other by logo. Groups merge by average linkage over
the pairs of *different* seeds (families of one seed are never compared): while more than
``linkage`` of those pairs between two groups are linked. As in ``export/families.py``, a
family that matches two signals (AGGT between an acceptor AGG and a donor GGT) cannot chain
them, as connected components would.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from ..config import bounded, merge
from ..errors import InputError
from .families import Similarity, key_overlap, site_keys, tomtom_between
from .formats import ExportedMotif

NOT_MEASURED = ("one seed: reproducibility was not measured (train the setting with 2 or more "
                "seeds and give every seed's run)")  # fmt: skip


@dataclass
class ConsensusSettings:
    """How families of different seeds are matched (every value with its reason)."""

    # The threshold: a family must recur unmistakably; short splicing motifs (2-4
    # informative columns) match many others at looser q.
    q_threshold: float = bounded(0.01, above=0.0, max=1.0)
    # Two sites are one place when their spans share half of the shorter span: seeds trim
    # the same signal differently (tgcAG vs cAGnnnn), so starts or centres alone differ.
    site_span: float = bounded(0.5, above=0.0, max=1.0)
    # Half of the smaller family's sites at the other's places: as export/families.py links
    # channels by sites.
    site_overlap: float = bounded(0.5, above=0.0, max=1.0)
    # ... and twice what the other family's sites moved to another window give: a family
    # firing everywhere (a composition family) overlaps anything.
    site_over_null: float = bounded(2.0, min=1.0)
    # Groups merge while more than half of their cross-seed pairs are linked.
    linkage: float = bounded(0.5, min=0.0, max=1.0)


def consensus_settings(**values) -> ConsensusSettings:
    """:class:`ConsensusSettings` with ``values`` checked against their ranges (a one-line
    ConfigError naming ``consensus.<key>``, as ``export --family`` does)."""
    return merge(ConsensusSettings(), values, "consensus")


@dataclass
class SeedFamilies:
    """One seed's exported families: representatives (``effect``: the family's effect on the
    prediction, or None), their merged sites (family id -> (window, start, strand) rows on
    the test block; None where the export wrote none) and composition labels."""

    label: str
    families: list[ExportedMotif]
    sites: dict[str, np.ndarray] | None = None
    composition: dict[str, str | None] = field(default_factory=dict)


def check_same_setting(runs: list[tuple[str, dict]]) -> None:
    """One-line :class:`InputError` naming the first run whose setting (``task``,
    ``dataset``, ``channels``, ``split``: what ``runners/stability.py`` reads) differs from
    the first run's: seeds of different genomes, tasks or models are not one setting, and
    their sites are not on the same windows. A value a run does not record (None) passes."""
    if not runs:
        return
    first, reference = runs[0]
    what = {"task": "task", "dataset": "dataset (genome)", "channels": "motif channel count",
            "split": "exported split"}  # fmt: skip
    for run, setting in runs[1:]:
        for key, words in what.items():
            a, b = setting.get(key), reference.get(key)
            if a == b or a is None or b is None:  # unknown (an older run): not different
                continue
            if isinstance(a, dict) and isinstance(b, dict):
                keys = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
                how = f"data.{', data.'.join(keys[:4])} differ"
            else:
                how = f"{_shown(a)} vs {_shown(b)}"
            raise InputError(f"{run}: another {words} than {first} ({how}); a consensus "
                             "compares the seeds of one setting")


def _shown(value) -> str:
    """A value for a one-line message; a long one by its end (paths differ there)."""
    text = json.dumps(value)
    return text if len(text) <= 60 else "..." + text[-57:]


def centre_keys(sites: np.ndarray, width: int) -> np.ndarray:
    """Sorted :func:`site_keys` of sites (window, start, strand) at twice their span's centre
    (an integer for any width)."""
    sites = np.asarray(sites, np.int64).reshape(-1, 3)
    return site_keys(np.stack([sites[:, 0], 2 * sites[:, 1] + width, sites[:, 2]], axis=1))


def span_window(width_a: int, width_b: int, span: float) -> int:
    """How far (in doubled nt) two span centres may lie when the spans share at least
    ``span`` of the shorter width h: overlap >= h exactly when the centres lie within
    (width_a + width_b) / 2 - h."""
    h = max(1, int(np.ceil(span * min(width_a, width_b))))
    return width_a + width_b - 2 * h


def shared_sites(a: np.ndarray, width_a: int, b: np.ndarray, width_b: int, span: float) -> float:
    """Share of the smaller of site sets ``a``, ``b`` (window, start, strand; spans of
    ``width_a``, ``width_b``) with a site of the other in the same window whose span shares
    at least ``span`` of the shorter width (``site_overlap`` of doubled centres)."""
    return key_overlap(centre_keys(a, width_a), centre_keys(b, width_b),
                       span_window(width_a, width_b, span))  # fmt: skip


def other_windows(sites: np.ndarray) -> np.ndarray:
    """``sites`` with each window's sites moved to the next window that has some (the last
    one's to the first): the null of :func:`shared_sites`, same positions, other windows."""
    sites = np.asarray(sites, np.int64).reshape(-1, 3).copy()
    windows = np.unique(sites[:, 0])
    if len(windows) > 1:
        sites[:, 0] = np.roll(windows, -1)[np.searchsorted(windows, sites[:, 0])]
    else:
        sites[:, 0] = -1  # one window: no other to move to, nothing matches by chance
    return sites


def site_index(seed: SeedFamilies) -> list[tuple[np.ndarray, np.ndarray]] | None:
    """Per family of ``seed``: its sites' :func:`centre_keys`, and those of its sites moved
    to other windows (:func:`other_windows`); None where the seed has no sites."""
    if seed.sites is None:
        return None
    empty = np.zeros((0, 3), np.int64)
    return [(centre_keys(seed.sites.get(f.id, empty), f.width),
             centre_keys(other_windows(seed.sites.get(f.id, empty)), f.width))
            for f in seed.families]  # fmt: skip


def pair_tables(a: SeedFamilies, b: SeedFamilies, keys_a, keys_b,
                settings: ConsensusSettings) -> tuple[dict, dict]:  # fmt: skip
    """Seed ``a`` against seed ``b`` and ``b`` against ``a``: ``logo`` (Tomtom, the first
    seed's families as the queries; None without families) and ``sites``/``null`` (the
    share of shared sites, and with ``b``'s sites in other windows; one matrix for the pair,
    transposed for ``b``; None where either seed has no sites; the null is NaN where too few
    sites are shared for it to matter)."""
    if not a.families or not b.families:
        none = {"logo": None, "sites": None, "null": None}
        return none, dict(none)
    shared = null = None
    if keys_a is not None and keys_b is not None:
        shared = np.zeros((len(a.families), len(b.families)))
        null = np.full_like(shared, np.nan)  # needed only where enough sites are shared
        for (i, f), (mine, _) in zip(enumerate(a.families), keys_a):
            for (j, g), (theirs, moved) in zip(enumerate(b.families), keys_b):
                window = span_window(f.width, g.width, settings.site_span)
                shared[i, j] = key_overlap(mine, theirs, window)
                if shared[i, j] >= settings.site_overlap:
                    null[i, j] = key_overlap(mine, moved, window)
    forward = tomtom_between([f.probs for f in a.families], [f.probs for f in b.families])
    backward = tomtom_between([f.probs for f in b.families], [f.probs for f in a.families])
    return ({"logo": forward, "sites": shared, "null": null},
            {"logo": backward, "sites": None if shared is None else shared.T,
             "null": None if null is None else null.T})  # fmt: skip


def site_matched(shared: float, null: float, settings: ConsensusSettings) -> bool:
    """Two families fire at the same places: enough shared sites, and well over the null."""
    return bool(shared >= settings.site_overlap and shared >= settings.site_over_null * null)


def family_matches(i: int, k: int, seeds: list[SeedFamilies], tables: dict,
                   settings: ConsensusSettings) -> dict:  # fmt: skip
    """Family ``k`` of seed ``i`` against every other seed: its logo matches (q, strand;
    best first) and the best q, its site matches (shared share, null; most shared first) and
    the best share (None where sites were not exported)."""
    out = {}
    for j, other in enumerate(seeds):
        if j == i:
            continue
        t = tables[i, j]
        entry: dict = {"logo": [], "best_q": None, "sites": [], "best_overlap": None}
        sim: Similarity | None = t["logo"]
        if sim is not None:
            entry["best_q"] = float(sim.q[k].min())
            for m in np.argsort(sim.q[k], kind="stable"):
                if sim.q[k, m] < settings.q_threshold:
                    entry["logo"].append({"family": other.families[m].id,
                                          "q_value": float(sim.q[k, m]),
                                          "strand": "-" if sim.reverse[k, m] else "+"})
        if t["sites"] is not None:
            row, null = t["sites"][k], t["null"][k]
            entry["best_overlap"] = round(float(row.max()), 4)
            for m in np.argsort(-row, kind="stable"):
                if site_matched(row[m], null[m], settings):
                    entry["sites"].append({"family": other.families[m].id,
                                           "overlap": round(float(row[m]), 4),
                                           "null": round(float(null[m]), 4)})  # fmt: skip
        elif seeds[i].sites is None or other.sites is None:
            entry["sites"] = None
        out[other.label] = entry
    return out


def consensus_groups(seed_of: list[int], links: set[tuple[int, int]],
                     cutoff: float) -> list[list[int]]:  # fmt: skip
    """Groups of nodes (``seed_of[n]``: node n's seed) by average linkage over the pairs of
    different seeds: merge the two groups with the largest share of linked cross-seed pairs
    while it is > ``cutoff`` (ties: the first pair in node order). Counts are kept per group,
    so a merge costs one pass over the groups."""
    n = len(seed_of)
    seed_of = np.asarray(seed_of)
    linked = np.zeros((n, n))
    for a, b in links:
        linked[a, b] = linked[b, a] = 1.0
    compared = (seed_of[:, None] != seed_of[None, :]).astype(float)
    groups = [[i] for i in range(n)]
    while len(groups) > 1:
        with np.errstate(invalid="ignore", divide="ignore"):
            share = np.where(compared > 0, linked / np.where(compared > 0, compared, 1), -1.0)
        share[np.tril_indices(len(groups))] = -1.0
        x, y = np.unravel_index(int(np.argmax(share)), share.shape)
        if share[x, y] <= cutoff:
            break
        for matrix in (linked, compared):
            matrix[x, :] += matrix[y, :]
            matrix[:, x] += matrix[:, y]
        linked = np.delete(np.delete(linked, y, 0), y, 1)
        compared = np.delete(np.delete(compared, y, 0), y, 1)
        groups[x] = sorted(groups[x] + groups[y])
        del groups[y]
    return sorted(groups, key=lambda g: g[0])


def effect_share(families: list[ExportedMotif], carried: list[bool]) -> float | None:
    """Share of the summed family effect (negative effects as 0) carried by the families
    marked in ``carried``; None where no family has a positive effect."""
    weights = [max(0.0, f.effect or 0.0) for f in families]
    total = sum(weights)
    return round(sum(w for w, c in zip(weights, carried) if c) / total, 4) if total > 0 else None


def headline(seeds: list[SeedFamilies], recurs: list[list[bool | None]]) -> dict | None:
    """Families recurring (``recurs[seed][family]``) and the share of each seed's summed
    family effect they carry, per seed and mean; None where any verdict is missing."""
    if any(v is None for row in recurs for v in row):
        return None
    total = sum(len(row) for row in recurs)
    per_seed = {s.label: effect_share(s.families, row) for s, row in zip(seeds, recurs)}
    shares = [v for v in per_seed.values() if v is not None]
    recurring = sum(sum(row) for row in recurs)
    return {"families": total, "recurring": recurring,
            "fraction_recurring": round(recurring / total, 4) if total else None,
            "effect_reproduced": round(float(np.mean(shares)), 4) if shares else None,
            "effect_reproduced_per_seed": per_seed}  # fmt: skip


def group_entry(members: list[tuple[int, int]], seeds: list[SeedFamilies], tables: dict,
                settings: ConsensusSettings) -> dict:  # fmt: skip
    """One consensus group: k of n seeds, its members and effect per seed (mean and sample
    sd over the seeds it is found in), the largest-effect member's consensus and labels, and
    ``site_support``: the share of its logo-linked cross-seed pairs that also share sites."""
    by_seed: dict[str, list[ExportedMotif]] = {s.label: [] for s in seeds}
    for i, k in members:
        by_seed[seeds[i].label].append(seeds[i].families[k])
    effects = {}
    for label, fams in by_seed.items():
        measured = [f.effect for f in fams if f.effect is not None]
        effects[label] = round(float(sum(measured)), 5) if measured else None
    present = [effects[label] for label, fams in by_seed.items() if fams]
    values = [v for v in present if v is not None]
    def weight(member: tuple[int, int]) -> tuple:
        f = seeds[member[0]].families[member[1]]
        return (-np.inf if f.effect is None else f.effect, f.nsites, -member[0], -member[1])

    i, k = max(members, key=weight)
    lead = seeds[i].families[k]
    support = []
    for a, (i1, k1) in enumerate(members):
        for i2, k2 in members[a + 1:]:
            if i1 == i2 or not logo_linked(tables, i1, k1, i2, k2, settings.q_threshold):
                continue
            shared = tables[i1, i2]["sites"]
            if shared is not None:
                support.append(site_matched(shared[k1, k2], tables[i1, i2]["null"][k1, k2],
                                            settings))  # fmt: skip
    seen = sum(1 for fams in by_seed.values() if fams)
    return {
        "seeds": seen, "of": len(seeds), "recurs": f"{seen} of {len(seeds)}",
        "label": lead.consensus, "name": lead.name or None,
        "composition": seeds[i].composition.get(lead.id),
        "lead": {"seed": seeds[i].label, "family": lead.id},
        "members": {label: [f.id for f in fams] for label, fams in by_seed.items()},
        "effect": {"per_seed": effects,
                   "mean": round(float(np.mean(values)), 5) if values else None,
                   "sd": round(float(np.std(values, ddof=1)), 5) if len(values) > 1 else None},
        "site_support": round(float(np.mean(support)), 4) if support else None,
    }  # fmt: skip


def logo_linked(tables: dict, i1: int, k1: int, i2: int, k2: int, q: float) -> bool:
    """Either family matches the other by logo at q < ``q``."""
    forward, backward = tables[i1, i2]["logo"], tables[i2, i1]["logo"]
    return bool(forward.q[k1, k2] < q or backward.q[k2, k1] < q)


def consensus_families(seeds: list[SeedFamilies],
                       settings: ConsensusSettings | None = None) -> dict:  # fmt: skip
    """The consensus of ``seeds`` (one setting's seeds, labels unique): each family's matches
    in every other seed, the headline figures by logo (the verdict), by sites and by group,
    the consensus groups found in 2 or more seeds and, apart, those in one seed only. One
    seed: ``measured`` False and why (not an error)."""
    settings = settings or ConsensusSettings()
    labels = [s.label for s in seeds]
    if len(set(labels)) != len(labels):
        raise InputError(f"seed labels must be unique, got {labels}")
    base = {"settings": asdict(settings), "seeds": labels}
    if len(seeds) < 2:
        return {**base, "measured": False, "note": NOT_MEASURED, "by_logo": None,
                "by_sites": None, "by_group": None, "groups": [], "not_reproduced": [],
                "families": [family_row(s, k, None, {}, None, None)
                             for s in seeds for k in range(len(s.families))]}  # fmt: skip
    keys = [site_index(s) for s in seeds]
    tables = {}
    for i, j in itertools.combinations(range(len(seeds)), 2):
        tables[i, j], tables[j, i] = pair_tables(seeds[i], seeds[j], keys[i], keys[j], settings)
    nodes = [(i, k) for i, s in enumerate(seeds) for k in range(len(s.families))]
    index = {node: n for n, node in enumerate(nodes)}
    links = {(index[a], index[b]) for a in nodes for b in nodes
             if a[0] < b[0] and logo_linked(tables, *a, *b, settings.q_threshold)}  # fmt: skip
    groups = [[nodes[n] for n in g]
              for g in consensus_groups([i for i, _ in nodes], links, settings.linkage)]
    entries = [group_entry(g, seeds, tables, settings) for g in groups]
    order = sorted(range(len(groups)), key=lambda g: (
        -entries[g]["seeds"], -(entries[g]["effect"]["mean"] or 0.0),
        -sum(seeds[i].families[k].nsites for i, k in groups[g]), groups[g][0]))
    group_of = {}
    for rank, g in enumerate(order):
        entries[g] = {"id": f"c{rank:02d}", **entries[g]}
        group_of.update({node: entries[g]["id"] for node in groups[g]})
    rows, by_logo, by_sites, by_group = [], [], [], []
    for i, s in enumerate(seeds):
        verdicts = ([], [], [])
        for k in range(len(s.families)):
            matches = family_matches(i, k, seeds, tables, settings)
            logo = all(m["logo"] for m in matches.values())
            sites = (None if any(m["sites"] is None for m in matches.values())
                     else all(m["sites"] for m in matches.values()))  # fmt: skip
            group = next(e for e in entries if e["id"] == group_of[i, k])
            full = group["seeds"] == len(seeds)
            for verdict, value in zip(verdicts, (logo, sites, full)):
                verdict.append(value)
            rows.append(family_row(s, k, group["id"], matches, logo, sites))
        for store, verdict in zip((by_logo, by_sites, by_group), verdicts):
            store.append(verdict)
    ranked = [entries[g] for g in order]
    return {**base, "measured": True,
            "by_logo": headline(seeds, by_logo), "by_sites": headline(seeds, by_sites),
            "by_group": headline(seeds, by_group),
            "groups": [e for e in ranked if e["seeds"] > 1],
            "not_reproduced": [e for e in ranked if e["seeds"] == 1],
            "families": rows}  # fmt: skip


def family_row(seed: SeedFamilies, k: int, group: str | None, matches: dict,
               by_logo: bool | None, by_sites: bool | None) -> dict:  # fmt: skip
    """One family's line of the consensus: what it is, its group, verdicts and matches."""
    f = seed.families[k]
    return {"seed": seed.label, "family": f.id, "consensus": f.consensus, "nsites": f.nsites,
            "name": f.name or None, "effect": f.effect,
            "composition": seed.composition.get(f.id), "group": group,
            "recurs_by_logo": by_logo, "recurs_by_sites": by_sites, "matches": matches}


def run_groups(stability: dict, source, run, families: set[str]) -> dict[str, str]:
    """Family id -> consensus family id (``cNN``) of run ``run``'s seed in ``stability`` (the
    ``stability`` verb's JSON, read from ``source``), the run found by its path as the verb
    recorded it. One-line errors: a JSON without a measured consensus, a run that is not one
    of its runs, families (``families``: the run's exported ones) it does not know."""
    consensus = stability.get("consensus") or {}
    if not consensus.get("measured"):
        raise InputError(f"{source}: no consensus across seeds to label sites with (one seed, "
                         "or made before the consensus); run `stability` over the seeds' runs")
    runs = [str(Path(r).resolve()) for r in stability.get("runs") or []]
    here = str(Path(run).resolve())
    if here not in runs:
        raise InputError(f"{source}: {run} is not one of its runs ({len(runs)} seeds); give "
                         "the stability JSON of this run's seeds")  # fmt: skip
    label = consensus["seeds"][runs.index(here)]
    groups = {r["family"]: r["group"] for r in consensus["families"] if r["seed"] == label}
    unknown = sorted(families - set(groups))
    if unknown:
        raise InputError(f"{source}: families {', '.join(unknown[:3])} of {run} are not in it "
                         "(exported again since); run `stability` again")  # fmt: skip
    return groups
