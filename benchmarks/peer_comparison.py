"""The peers benchmark's variant step: the same alleles through our ``variants`` verb and each
peer with SpliceAI's delta rule; loss rates, agreement with SpliceAI and speed.

Alleles: a random sample of the test block's donor GT->CA and acceptor AG->TC mutations
(canonical sites of the selected transcripts, ``benchmarks/variants.py``'s), and random SNVs
and 1-3 nt indels from the test block's start. Our verb decides which strands an allele is
scored on (its gene's strand, both where no gene); every peer scores exactly those
allele-strands, so each rate below is allele-strands per second, start-up included for our
verb (a subprocess, as a user runs it) and the peers' forward passes alone (in this process).
"""

from __future__ import annotations

import csv
import time
from pathlib import Path

import numpy as np

from sparling_genomics.genome.dataset import SiteDataset
from sparling_genomics.genome.dataset_source import source_file
from sparling_genomics.train.device import pick_device

from .peer_variants import SCORES, peer_variant_scores
from .variants import random_variants as make_random_variants
from .variants import run_variants_verb, site_mutations, write_vcf

LOSS = 0.5  # the in-silico floor's threshold on DS_DL / DS_AL
SPACING = 30  # random variants: one per this many bases on average (the variants benchmark's)


def read_scores(path: Path) -> dict[tuple[str, str], tuple[float, ...]]:
    """(id, strand) -> (DS_AG, DS_AL, DS_DG, DS_DL) of our verb's ``variant_scores.tsv``."""
    with open(path) as fh:
        return {(r["id"], r["strand"]): tuple(float(r[k]) for k in SCORES)
                for r in csv.DictReader(fh, delimiter="\t")}  # fmt: skip


def loss_rates(scores: dict) -> dict:
    """Share of site mutations, on their own strand, whose matching loss is >= 0.5."""
    out = {}
    for kind, column, at in (("donor", 3, 5), ("acceptor", 1, 8)):
        own = [s[column] for (vid, strand), s in scores.items()
               if s is not None and vid.startswith(kind) and vid[at] == strand]  # fmt: skip
        out[kind] = {"sites": len(own),
                     "fraction_loss_at_least_0.5": round(float(np.mean(np.array(own) >= LOSS)), 4)
                     if own else None}  # fmt: skip
    return out


def agreement(scores: dict, reference: dict) -> dict:
    """Pearson r of each DS score (and all four pooled) over the allele-strands both scored."""
    keys = [k for k in scores if scores[k] is not None and reference.get(k) is not None]
    if len(keys) < 3:
        return {"allele_strands": len(keys)}
    a = np.array([scores[k] for k in keys])
    b = np.array([reference[k] for k in keys])
    out: dict = {"allele_strands": len(keys)}
    for i, name in enumerate(SCORES):
        out[name] = _pearson(a[:, i], b[:, i])
    out["pooled"] = _pearson(a.ravel(), b.ravel())
    return out


def _pearson(a: np.ndarray, b: np.ndarray) -> float | None:
    if a.std() == 0 or b.std() == 0:
        return None
    return round(float(np.corrcoef(a, b)[0, 1]), 4)


def prepare_variants(out: Path, dataset: Path, genome, *, site_mutations_n: int = 400,
                     random_variants_n: int = 300) -> dict:  # fmt: skip
    """The benchmark's VCF (a seeded sample of the test block's site mutations, then random
    variants) and the files our verb needs."""
    folder = Path(out) / "variants"
    folder.mkdir(parents=True, exist_ok=True)
    data = SiteDataset(dataset)
    blocks = {s: (int(b[1]), None) for s, b in data.boundaries.items()}
    fasta = source_file(data.source, "fasta", dataset)
    gff = source_file(data.source, "annotation", dataset)
    data.close()
    sites, _ = site_mutations(genome, gff, blocks)
    rng = np.random.default_rng(0)
    keep = np.sort(rng.choice(len(sites), min(site_mutations_n, len(sites)), replace=False))
    rows = [sites[i] for i in keep]
    rows += make_random_variants(genome, blocks, random_variants_n, SPACING, seed=2)
    vcf = folder / "peers.vcf"
    write_vcf(vcf, rows)
    return {"vcf": str(vcf), "fasta": str(fasta), "gff": str(gff), "site_mutations": len(keep),
            "site_mutations_in_block": len(sites), "random_variants": random_variants_n,
            "rows": [list(r) for r in rows]}  # fmt: skip


def our_variants(out: Path, name: str, run: Path, prepared: dict) -> dict:
    """Our ``variants`` verb on the VCF (a subprocess, as a user runs it): its scores."""
    folder = Path(out) / "variants" / name
    done = run_variants_verb(Path(run), Path(prepared["vcf"]), folder, Path(prepared["fasta"]),
                             Path(prepared["gff"]))  # fmt: skip
    scores = read_scores(folder / "variant_scores.tsv")
    return {"seconds": done["seconds"], "peak_rss_gb": done["peak_rss_gb"],
            "scores": [[vid, strand, *ds] for (vid, strand), ds in scores.items()]}


def allele_strands(prepared: dict, ours: dict) -> list[tuple[str, str]]:
    """The (id, strand) pairs our verb scored: what every peer scores too."""
    return sorted({(row[0], row[1]) for row in ours["scores"]})


def compact_scores(result: dict, keys: list[tuple[str, str]]) -> dict:
    """A peer's variant result with its rows' (id, strand) left out: they are ``keys``, in
    order (what every peer scores), so a step file holds only the four scores a row."""
    if [(r[0], r[1]) for r in result["scores"]] != [tuple(k) for k in keys]:
        raise ValueError("a peer's scores are not in the order of the allele-strands")
    rows = [None if r[2] is None else r[2:] for r in result["scores"]]
    return result | {"scores": rows, "keys": "allele_strands"}


def expand_scores(result: dict, keys: list[tuple[str, str]]) -> dict:
    """The rows of :func:`compact_scores` with their (id, strand) back."""
    if result.get("keys") != "allele_strands":
        return result
    rows = [[vid, strand, *(ds or [None] * 4)] for (vid, strand), ds in
            zip(keys, result["scores"], strict=True)]  # fmt: skip
    return {k: v for k, v in result.items() if k != "keys"} | {"scores": rows}


def peer_variants(net, genome, prepared: dict, keys: list[tuple[str, str]],
                  stretches: list | None = None) -> dict:  # fmt: skip
    """A peer's scores of the allele-strands (SpliceAI's rule), and the seconds they took;
    with ``stretches`` (``peer_positions.labelled_stretches`` of the test block), each allele
    is read within its transcript on its strand, N beyond it, and one in none is not scored
    (SpliceAI's tool)."""
    by_id = {row[2]: row for row in prepared["rows"]}
    alleles = [(by_id[i][0], int(by_id[i][1]), by_id[i][3], by_id[i][4],
                1 if s == "+" else -1) for i, s in keys]  # fmt: skip
    bounds = None if stretches is None else transcript_bounds(alleles, stretches)
    device = pick_device()
    began = time.perf_counter()
    found = peer_variant_scores(net.to(device), genome.fetch, alleles, device=device,
                                bounds=bounds)  # fmt: skip
    seconds = round(time.perf_counter() - began, 2)
    return {"seconds": seconds, "device": str(device),
            "scores": [[vid, strand, *(ds or [None] * 4)] for (vid, strand), ds in
                       zip(keys, found)]}  # fmt: skip


def transcript_bounds(alleles: list[tuple], stretches: list) -> list[tuple[int, int] | None]:
    """Each allele's labelled stretch ``[lo, hi)`` on its own strand holding its first base,
    or None."""
    by_strand: dict[tuple[str, int], list[tuple[int, int]]] = {}
    for run, _ in stretches:
        by_strand.setdefault((run.seqid, run.strand), []).append((run.lo, run.hi))
    starts = {k: np.array(sorted(v)) for k, v in by_strand.items()}
    out: list[tuple[int, int] | None] = []
    for seqid, pos, _, _, strand in alleles:
        spans = starts.get((seqid, strand))
        at = -1 if spans is None else int(np.searchsorted(spans[:, 0], pos, side="right")) - 1
        hit = at >= 0 and pos < spans[at, 1]
        out.append((int(spans[at, 0]), int(spans[at, 1])) if hit else None)
    return out


def summarize_variants(prepared: dict, scored: dict[str, dict]) -> dict:
    """Every model on the same allele-strands: rates, loss >= 0.5 shares, r against SpliceAI."""
    tables = {name: {(r[0], r[1]): (None if r[2] is None else tuple(r[2:]))
                     for r in entry["scores"]} for name, entry in scored.items()}  # fmt: skip
    keys = sorted(set.intersection(*(set(t) for t in tables.values()))) if tables else []
    reference = tables.get("spliceai")
    result: dict = {"site_mutations": prepared["site_mutations"],
                    "random_variants": prepared["random_variants"], "allele_strands": len(keys),
                    "vcf": prepared["vcf"], "models": {}}  # fmt: skip
    for name, table in tables.items():
        shared = {k: table[k] for k in keys}
        seconds = scored[name]["seconds"]
        result["models"][name] = {
            "seconds": seconds,
            "allele_strands_per_second": round(sum(v is not None for v in table.values())
                                               / seconds, 2) if seconds else None,  # fmt: skip
            "loss": loss_rates(shared),
            "agreement_with_spliceai": agreement(shared, reference) if reference else None,
            "unscored": sum(v is None for v in shared.values()),
        }
    return result
