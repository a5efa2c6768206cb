"""Motif families: a run's exported motifs clustered into groups that are one signal.

A Sparling run often learns the same signal several times (copies of a channel, the same
motif shifted by a few columns, or read on the other strand). Two motifs are *linked* when
(thresholds in :class:`FamilySettings`, each with its reason):

* **Tomtom**: the two motifs match, on either strand and at any offset, at q <
  ``tomtom_q`` (either motif as the query), aligned over at least ``min_overlap`` of the
  shorter one's columns; or
* **sites**: at least ``site_overlap`` of the smaller channel's sites have a site of the
  other channel in the same input window within +-``site_window`` nt (they fire at the same
  places, whatever their PWMs look like).

Families are groups of linked motifs by average linkage: groups merge while more than
``linkage`` (half) of the pairs between them are linked. Single linkage (connected
components) chained the 32 short splicing motifs of the benchmark run into one family through
motifs that share a column pair with two signals (AGG-AGGT-GGT).

Tomtom p-values take their null from the target columns, so with a run's 5-40 motifs alone
they depend on which motifs the run happens to have (memelite warns below 25 targets): the
targets are padded with a fixed JASPAR collection (its columns are a realistic motif
background; the padding is not reported), and q-values are Benjamini-Hochberg over the run's
other motifs, the comparisons actually made.

Each family has a representative PWM: every member aligned to the family's largest member at
their Tomtom offset and strand (members linked by sites only: at their site windows'
alignment), its probabilities times its site count summed column by
column (site-weighted merged counts), and the union span cut to the columns that members
holding at least ``min_coverage`` of the family's sites cover. Its sites are the members'
sites projected onto the representative's span and strand, de-duplicated (sites of the same
window and strand within +-``site_window`` nt are one).
"""

from __future__ import annotations

import csv
import gzip
import io
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from ..config import bounded
from ..evaluate.copies import near_copies
from ..genome.pwm import information_content
from ..io import atomic_write
from .formats import ExportedMotif
from .naming import DEFAULT_COLLECTION, benjamini_hochberg, load_jaspar_collection


@dataclass
class FamilySettings:
    """How motifs are linked into families (every value with its reason)."""

    # The seed-stability match threshold of the issue (q < 0.01): strict, because short
    # splicing motifs (2-4 informative columns) match many others at looser q.
    tomtom_q: float = bounded(0.01, above=0.0, max=1.0)
    # Tomtom must align at least half of the shorter motif: a 2-column match (e.g. a shared
    # 'AG') between two 10-column motifs is not the same motif.
    min_overlap: float = bounded(0.5, above=0.0, max=1.0)
    # Two activations this close (nt) are one site: the peak-only sparse layer can move a peak
    # by a base or two between channels reading the same motif.
    site_window: int = bounded(2, min=0)
    # Channels that share half of the smaller one's sites detect the same thing.
    site_overlap: float = bounded(0.5, above=0.0, max=1.0)
    # A motif joins a family when it is linked to more than half of its members (average
    # linkage): one motif that bridges two signals (an AGGT between acceptor AGG and donor
    # GGT motifs) cannot chain them into one family, as single linkage would.
    linkage: float = bounded(0.5, above=0.0, max=1.0)
    # The representative keeps the columns that members with at least half of the family's
    # sites cover: a column only a small member has would speak for few sites.
    min_coverage: float = bounded(0.5, above=0.0, max=1.0)
    # Near-copies (reported, not used for linkage; evaluate/copies.py): PWM columns correlated
    # at >= 0.9 at some offset and strand (the "PWM similarity >= 0.9"), or sharing
    # site_overlap of their sites within site_window nt.
    near_copy_similarity: float = bounded(0.9, above=0.0, max=1.0)


@dataclass
class Similarity:
    """Tomtom of every motif against every other (row = query): q, offset, overlap, strand."""

    q: np.ndarray
    p: np.ndarray
    offset: np.ndarray  # query column j <-> (target, reverse-complemented if strand) j + offset
    overlap: np.ndarray
    reverse: np.ndarray  # bool: the target matched reverse-complemented


@dataclass
class MotifFamily:
    """One family: its representative, members (+ alignment to it) and merged sites."""

    motif: ExportedMotif  # the representative (nsites = merged sites)
    members: list[ExportedMotif]
    shifts: list[int]  # member column t (oriented) sits at representative column t + shift
    reverse: list[bool]  # the member is reverse-complemented against the representative
    sites: np.ndarray = field(default_factory=lambda: np.zeros((0, 3), np.int64))
    # sites: (window, start of the representative on the plus strand, strand +1/-1)


@lru_cache(maxsize=1)
def tomtom_background() -> tuple[np.ndarray, ...]:
    """The padding targets: the default JASPAR collection's PWMs (width, 4)."""
    return tuple(m.probs for m in load_jaspar_collection(**DEFAULT_COLLECTION))


def tomtom_between(queries: list[np.ndarray], targets: list[np.ndarray]) -> Similarity:
    """Tomtom (memelite) of ``queries`` against ``targets`` (both (width, 4)), both strands,
    with the JASPAR padding as extra null columns; q by BH over ``targets`` per query."""
    from memelite import tomtom

    pad = list(tomtom_background())
    p, _, offsets, overlaps, strands = tomtom(
        [np.asarray(q, np.float64).T for q in queries],
        [np.asarray(t, np.float64).T for t in [*targets, *pad]],
    )
    n = len(targets)
    p = np.clip(np.nan_to_num(np.asarray(p, float)[:, :n], nan=1.0), np.finfo(float).tiny, 1.0)
    q = np.stack([benjamini_hochberg(row) for row in p]) if n else p
    return Similarity(q, p, np.asarray(offsets)[:, :n].astype(int),
                      np.asarray(overlaps)[:, :n].astype(int),
                      np.asarray(strands)[:, :n].astype(bool))  # fmt: skip


def motif_similarity(motifs: list[ExportedMotif]) -> Similarity:
    """Tomtom of the run's motifs against each other; a motif's q-values are BH over the
    *other* motifs (its self-match would take the first rank)."""
    probs = [m.probs for m in motifs]
    sim = tomtom_between(probs, probs)
    for i in range(len(motifs)):
        others = np.arange(len(motifs)) != i
        sim.q[i, others] = benjamini_hochberg(sim.p[i, others]) if others.any() else []
        sim.q[i, i] = sim.p[i, i]
    return sim


def site_keys(sites: np.ndarray) -> np.ndarray:
    """Sorted integer keys ``window * 2^32 + position`` of (window, position, strand) rows."""
    sites = np.asarray(sites, np.int64).reshape(-1, 3)
    return np.sort(sites[:, 0] * (1 << 32) + sites[:, 1])


def site_overlap(a: np.ndarray, b: np.ndarray, window: int) -> float:
    """Fraction of the smaller of site sets ``a``, ``b`` (rows window, position, ...) that
    have a site of the other in the same window within +-``window`` nt."""
    return key_overlap(site_keys(a), site_keys(b), window)


def key_overlap(ka: np.ndarray, kb: np.ndarray, window: int) -> float:
    """:func:`site_overlap` of sorted :func:`site_keys` (kept by a caller comparing the same
    sites many times)."""
    if len(ka) > len(kb):
        ka, kb = kb, ka
    if not len(ka):
        return 0.0
    lo = np.searchsorted(kb, ka - window, side="left")
    hi = np.searchsorted(kb, ka + window, side="right")
    return float(np.mean(hi > lo))


def motif_links(
    motifs: list[ExportedMotif],
    sites: dict[int, np.ndarray],
    settings: FamilySettings,
    sim: Similarity,
) -> list[dict]:
    """The graph's edges: ``{'a', 'b', 'tomtom_q', 'site_overlap', 'by'}`` per linked pair."""
    links = []
    for i in range(len(motifs)):
        for j in range(i + 1, len(motifs)):
            shorter = min(motifs[i].width, motifs[j].width)
            tomtom_ok = [
                sim.q[x, y] < settings.tomtom_q
                and sim.overlap[x, y] >= settings.min_overlap * shorter
                for x, y in ((i, j), (j, i))
            ]  # fmt: skip
            shared = site_overlap(sites.get(motifs[i].channel, np.zeros((0, 3))),
                                  sites.get(motifs[j].channel, np.zeros((0, 3))),
                                  settings.site_window)  # fmt: skip
            evidence = (("tomtom", any(tomtom_ok)), ("sites", shared >= settings.site_overlap))
            by = [name for name, ok in evidence if ok]
            if by:
                links.append({"a": motifs[i].id, "b": motifs[j].id,
                              "tomtom_q": float(min(sim.q[i, j], sim.q[j, i])),
                              "site_overlap": round(shared, 4), "by": by})  # fmt: skip
    return links


def average_linkage(n: int, edges: list[tuple[int, int]], cutoff: float) -> list[list[int]]:
    """Groups of ``n`` nodes by average linkage on the 0/1 link matrix: repeatedly merge the
    two groups with the largest share of linked pairs between them, while that share is >
    ``cutoff`` (ties: the pair with the smallest nodes). Each group sorted, in order of its
    smallest node. Hand-written: scipy's ``linkage`` wants a metric distance and breaks ties
    by its own order; here 32 nodes cost nothing."""
    linked = np.zeros((n, n))
    for a, b in edges:
        linked[a, b] = linked[b, a] = 1.0
    groups = [[i] for i in range(n)]
    while len(groups) > 1:
        best, pair = -1.0, None
        for x in range(len(groups)):
            for y in range(x + 1, len(groups)):
                share = float(linked[np.ix_(groups[x], groups[y])].mean())
                if share > best:
                    best, pair = share, (x, y)
        if pair is None or best <= cutoff:
            break
        x, y = pair
        groups[x] = sorted(groups[x] + groups[y])
        del groups[y]
    return sorted(groups, key=lambda g: g[0])


def reverse_complement(probs: np.ndarray) -> np.ndarray:
    """A (width, 4) A/C/G/T matrix read on the other strand."""
    return np.asarray(probs)[::-1, ::-1]


def representative_pwm(
    members: list[ExportedMotif],
    shifts: list[int],
    reverse: list[bool],
    min_coverage: float = 0.5,
) -> tuple[np.ndarray, int]:
    """Site-weighted merge of aligned members: ``(probs, first kept column)``.

    Member ``i`` (reverse-complemented if ``reverse[i]``) covers columns ``shifts[i]`` ..
    ``shifts[i] + width - 1`` of the union span (shifts >= 0); its counts are probs x nsites.
    Columns covered by members holding < ``min_coverage`` of the sites are cut from the
    ends (an uncovered inner column, possible only for members linked by sites, is uniform).
    """
    span = max(s + m.width for s, m in zip(shifts, members))
    counts = np.zeros((span, 4))
    cover = np.zeros(span)
    total = float(sum(max(m.nsites, 1) for m in members))
    for m, s, rc in zip(members, shifts, reverse):
        probs = reverse_complement(m.probs) if rc else np.asarray(m.probs)
        weight = max(m.nsites, 1)
        counts[s : s + m.width] += probs / probs.sum(axis=1, keepdims=True) * weight
        cover[s : s + m.width] += weight
    kept = np.flatnonzero(cover >= min_coverage * total)
    lo, hi = (int(kept[0]), int(kept[-1]) + 1) if len(kept) else (0, span)
    block = counts[lo:hi]
    sums = block.sum(axis=1, keepdims=True)
    probs = np.where(sums > 0, block / np.where(sums > 0, sums, 1.0), 0.25)
    return probs, lo


def family_alignment(
    group: list[int], motifs: list[ExportedMotif], sim: Similarity, q_threshold: float = 0.01
) -> tuple[list[int], list[bool]]:
    """Shifts (>= 0) and strands of each member against the group's largest member: Tomtom's
    offset and strand (largest member as the query) where it matches at q < ``q_threshold``;
    otherwise (a member linked by shared sites only, whose Tomtom alignment would be
    arbitrary) the alignment of their site windows, which are centred on the same
    activations: same strand, shifted by the difference of their trim offsets."""
    seed = max(group, key=lambda i: (motifs[i].nsites, -i))
    raw, reverse = [], []
    for i in group:
        if i == seed:
            raw.append(0)
            reverse.append(False)
        elif sim.q[seed, i] < q_threshold:
            # seed column j <-> member (oriented) column j + offset: member t at t - offset
            raw.append(-int(sim.offset[seed, i]))
            reverse.append(bool(sim.reverse[seed, i]))
        else:
            raw.append(motifs[i].offset - motifs[seed].offset)
            reverse.append(False)
    low = min(raw)
    return [r - low for r in raw], reverse


def project_sites(
    sites: np.ndarray, motif: ExportedMotif, shift: int, reverse: bool, width: int,
    rf: int, lo: int
) -> np.ndarray:
    """A member's sites (window, activation position, read strand) as the representative's
    (window, plus-strand start, strand): the member's trimmed span on its read strand (as the
    BED writes it), moved by its alignment ``shift`` and the representative's first kept
    column ``lo``, flipped when the member is reverse-complemented."""
    sites = np.asarray(sites, np.int64).reshape(-1, 3)
    window, pos, strand = sites[:, 0], sites[:, 1], sites[:, 2]
    half = rf // 2
    u = np.where(strand == 1, pos - half + motif.offset,
                 pos + half - motif.offset - motif.width + 1)  # fmt: skip
    family_strand = -strand if reverse else strand
    s = shift - lo  # member column t sits at representative column t + s
    start = np.where(family_strand == 1, u - s, u + motif.width + s - width)
    return np.stack([window, start, family_strand], axis=1)


def dedupe_sites(sites: np.ndarray, window: int) -> np.ndarray:
    """Sites (window, start, strand) with those of the same window and strand within
    +-``window`` nt of the last kept one dropped; sorted."""
    sites = np.asarray(sites, np.int64).reshape(-1, 3)
    if not len(sites):
        return sites
    sites = sites[np.lexsort((sites[:, 1], sites[:, 2], sites[:, 0]))]
    keep = np.ones(len(sites), bool)
    last = sites[0]
    for i in range(1, len(sites)):
        row = sites[i]
        if row[0] == last[0] and row[2] == last[2] and row[1] - last[1] <= window:
            keep[i] = False
        else:
            last = row
    return sites[keep]


def cluster_families(
    motifs: list[ExportedMotif],
    sites: dict[int, np.ndarray],
    *,
    rf: int,
    settings: FamilySettings | None = None,
    prefix: str | None = None,
) -> tuple[list[MotifFamily], list[dict], Similarity | None]:
    """Families of ``motifs`` (``sites``: channel -> (window, position, strand) rows, ``rf``:
    the width of the site windows the PWMs were counted from). Families are ordered by merged
    sites (largest first) and named ``<prefix>_f00`` ... (prefix: the motif ids' part before
    ``_c``, e.g. ``sparling``); returns (families, links, Tomtom)."""
    settings = settings or FamilySettings()
    if not motifs:
        return [], [], None
    prefix = prefix or motifs[0].id.rsplit("_c", 1)[0]
    sim = motif_similarity(motifs)
    links = motif_links(motifs, sites, settings, sim)
    index = {m.id: i for i, m in enumerate(motifs)}
    groups = average_linkage(len(motifs), [(index[e["a"]], index[e["b"]]) for e in links],
                             settings.linkage)  # fmt: skip
    families = []
    for group in groups:
        shifts, reverse = family_alignment(group, motifs, sim, settings.tomtom_q)
        members = [motifs[i] for i in group]
        probs, lo = representative_pwm(members, shifts, reverse, settings.min_coverage)
        projected = [project_sites(sites.get(m.channel, np.zeros((0, 3))), m, s, r,
                                   len(probs), rf, lo)
                     for m, s, r in zip(members, shifts, reverse)]  # fmt: skip
        merged = dedupe_sites(np.concatenate(projected) if projected else np.zeros((0, 3)),
                              settings.site_window)  # fmt: skip
        nsites = len(merged) if len(merged) else sum(m.nsites for m in members)
        rep = ExportedMotif("", probs, int(nsites), channel=-1, offset=lo)
        families.append(MotifFamily(rep, members, shifts, reverse, merged))
    families.sort(key=lambda f: (-f.motif.nsites, f.members[0].channel))
    for k, f in enumerate(families):
        f.motif.id = f"{prefix}_f{k:02d}"
        for m in f.members:
            m.family = f.motif.id
    return families, links, sim


def copy_block(
    motifs: list[ExportedMotif], sites: dict[int, np.ndarray] | None, settings: FamilySettings
) -> dict:
    """motifs.json's ``near_copies``: pairs of motifs that copy each other (``evaluate/copies.py``:
    PWM similarity at some offset and strand, or shared sites), and the redundant ones -- in
    each group of copies, every motif but the one with the most sites."""
    rows = {c: np.asarray(r, np.int64).reshape(-1, 3) for c, r in (sites or {}).items()}
    found = near_copies(
        {m.channel: m.probs for m in motifs},
        {c: (r[:, 0], r[:, 1]) for c, r in rows.items()} if sites is not None else None,
        similarity=settings.near_copy_similarity, overlap=settings.site_overlap,
        within=settings.site_window,
    )  # fmt: skip
    by_channel = {m.channel: m for m in motifs}
    order = {m.channel: (-m.nsites, i) for i, m in enumerate(motifs)}
    redundant = sorted(
        (c for group in found["groups"] for c in sorted(group, key=order.__getitem__)[1:]),
        key=order.__getitem__,
    )
    pairs = [{**p, "a": by_channel[p["a"]].id, "b": by_channel[p["b"]].id} for p in found["pairs"]]
    return {"pairs": pairs, "redundant": [by_channel[c].id for c in redundant],
            "fraction": round(len(redundant) / len(motifs), 4) if motifs else 0.0}  # fmt: skip


def sites_tsv(families: list[MotifFamily]) -> bytes:
    """The families' merged sites, gzipped TSV: family, window (index in the split's
    evaluation order), start and end (0-based, half-open, in the window's input), strand."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter="\t", lineterminator="\n")
    writer.writerow(["family", "window", "start", "end", "strand"])
    for f in families:
        for w, s, st in f.sites.tolist():
            writer.writerow([f.motif.id, w, s, s + f.motif.width, "+" if st == 1 else "-"])
    return gzip.compress(buffer.getvalue().encode(), mtime=0)


def write_family_sites(path: Path, families: list[MotifFamily]) -> Path:
    """:func:`sites_tsv` at ``path``, atomically."""
    data = sites_tsv(families)
    atomic_write(Path(path), lambda h: h.write(data), "wb")
    return Path(path)


def families_summary(
    families: list[MotifFamily],
    links: list[dict],
    motifs: list[ExportedMotif],
    settings: FamilySettings,
    naming: dict | None = None,
    sites: dict[int, np.ndarray] | None = None,
) -> dict:
    """The ``families`` block of ``motifs.json`` (``sites``: channel -> (window, position,
    strand) rows, for the near-copies that share sites)."""
    naming = naming or {"best": {}, "named": {}}
    out = []
    for f in families:
        best = naming["best"].get(f.motif.id)
        out.append({
            "id": f.motif.id,
            "consensus": f.motif.consensus,
            "width": f.motif.width,
            "bits": round(float(information_content(f.motif.probs).sum()), 3),
            "nsites": f.motif.nsites,
            "member_sites": int(sum(m.nsites for m in f.members)),
            "members": [{"id": m.id, "channel": m.channel, "nsites": m.nsites, "shift": s,
                         "strand": "-" if r else "+"}
                        for m, s, r in zip(f.members, f.shifts, f.reverse)],
            "name": naming["named"].get(f.motif.id),
            "best_match": None if best is None else {
                "target_id": best.target_id, "target_name": best.target_name,
                "p_value": best.p_value, "e_value": best.e_value, "q_value": best.q_value},
        })  # fmt: skip
    return {
        "settings": asdict(settings),
        "count": len(families),
        "families": out,
        "links": links,
        "near_copies": copy_block(motifs, sites, settings),
    }  # fmt: skip
