"""Score a VCF with a finished site run (the ``variants`` verb): delta scores per site class in
SpliceAI's convention and the motif sites each allele creates or destroys, streamed in batches
(memory does not grow with the VCF), written to ``OUT/``:

- ``variants.vcf.gz`` (+ ``.tbi`` when sorted): the input records with INFO ``SPARLING``
  (``ALLELE|STRAND|GENES|DS_AG|DS_AL|DS_DG|DS_DL|DP_AG|DP_AL|DP_DG|DP_DL``, one entry per allele
  and strand; other site classes get their own letters) and ``SPARLING_MOTIF``
  (``ALLELE|STRAND|FAMILY|CHANNEL|OFFSET|EFFECT|BEFORE|AFTER``, the largest changes);
- ``variant_scores.tsv``: one row per allele and strand; ``motif_changes.tsv``: one row per
  touched motif site; ``variants.json``: counts (scored and every skip reason), settings,
  throughput, delta histograms and the top variants (what the report shows).

Records are copied as text (htslib's own formatting of each record) with the INFO entries
appended, rather than through ``pysam.VariantFile`` writing, so records on sequences the
header does not declare pass through unchanged. The strand: from the annotation (``--gff``,
else the run's dataset's), both where no gene overlaps (``genome/gene_strands.py``).
"""

from __future__ import annotations

import heapq
import time
from collections import Counter
from contextlib import ExitStack
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..evaluate.variant_effects import Allele, score_alleles
from ..export.motif_summary import motifs_summary_path, read_motifs_summary
from ..genome.annotation import read_annotation
from ..genome.chromosomes import sequence_names
from ..genome.fasta import Genome
from ..genome.gene_strands import GeneStrands
from ..genome.sequence import decode
from ..genome.vcf import SKIP_REASONS, VcfReader
from ..io import atomic_path, write_json_atomic
from ..progress import Counter as ProgressCounter
from ..rundir import VARIANTS_SUMMARY
from ..rundir import motifs_dir as run_motifs_dir
from ..train.loading import load_run, recorded_sources
from ..train.provenance import check_same_model, run_fingerprint

TOP_VARIANTS = 25
VCF_MOTIFS = 5  # motif changes per allele and strand in the VCF INFO (all in the TSV)
BINS = np.round(np.linspace(0, 1, 21), 2)


def delta_keys(classes: list[str]) -> list[tuple[str, str, str]]:
    """Per site class: (class, gain key, loss key) as SpliceAI names them (A: acceptor,
    D: donor; another class by its upper-case name): ``("acceptor", "AG", "AL")``."""
    short = {"acceptor": "A", "donor": "D"}
    return [(c, f"{short.get(c, c.upper())}G", f"{short.get(c, c.upper())}L") for c in classes[1:]]


def motif_labels(motifs_dir: Path, channels: int, model: tuple[Path, str] | None = None,
                 ) -> tuple[list[str], list[str], bool]:  # fmt: skip
    """Per channel: its family label (family id, and name where it has one) and motif id,
    from ``export``'s ``motifs.json``; ``c<channel>`` ids when the run is not exported.
    ``model``: (run, its model fingerprint): motifs exported from other weights are refused."""
    ids = [f"c{c:02d}" for c in range(channels)]
    family = list(ids)
    summary = read_motifs_summary(motifs_dir, missing_ok=True)
    if summary is None:
        return family, ids, False
    if model is not None:
        check_same_model(summary.get("model"), *model, motifs_summary_path(motifs_dir),
                         "export the run again")  # fmt: skip
    names = {f["id"]: (f.get("name") or "").split(" ")[0]
             for f in (summary.get("families") or {}).get("families", [])}  # fmt: skip
    for m in summary.get("motifs", []):
        c = int(m["channel"])
        if c < channels:
            ids[c] = m["id"]
            fam = m.get("family") or m["id"]
            family[c] = f"{fam}:{names[fam]}" if names.get(fam) else fam
    return family, ids, True


def score_vcf(run, vcf, out, *, fasta=None, gff=None, distance: int = 50, batch: int = 64,
              skip_ref_mismatch: bool = False, skip_unknown: bool = False, chrom_aliases=None,
              motifs_dir=None, device: str | None = None,
              dataset: Path | None = None) -> dict:  # fmt: skip
    """Score every allele of ``vcf`` with run ``run``; write ``out``/ (see the module); return
    the summary (``variants.json``)."""
    began = time.perf_counter()
    run, out = Path(run), Path(out)
    if distance < 0:
        raise InputError(f"--distance {distance}: must be >= 0")
    loaded = load_run(run, device=device, dataset=dataset)
    config, task, model = loaded.config, loaded.task, loaded.model
    if getattr(task, "scoring", None) != "sites":
        raise InputError(f"{run}: a {config.task} run has no site classes to score variants on")
    fasta, gff = recorded_sources(run, task, fasta, gff)
    genome = Genome(fasta)
    names = sequence_names(genome, chrom_aliases, skip_unknown=skip_unknown)
    genes = GeneStrands.from_annotation(read_annotation(gff, names)) if gff else GeneStrands([])
    names.skipped.clear()  # the annotation's skipped lines are not the VCF's
    classes = list(task.classes)
    keys = delta_keys(classes)
    channels = int(model.channels) if model.sparse is not None else 0
    fingerprint = run_fingerprint(run)
    family, motif_ids, exported = motif_labels(Path(motifs_dir or run_motifs_dir(run)), channels,
                                               (run, fingerprint))  # fmt: skip
    reader = VcfReader(Path(vcf), names, genome.fetch, skip_ref_mismatch=skip_ref_mismatch)
    context = int(task.data.context)
    stats = _Stats(keys)
    created = not out.exists()
    out.mkdir(parents=True, exist_ok=True)
    paths = {n: out / n for n in ("variants.vcf.gz", "variant_scores.tsv", "motif_changes.tsv")}
    try:
        with ExitStack() as stack:
            tmp = {n: stack.enter_context(atomic_path(p)) for n, p in paths.items()}
            counter = stack.enter_context(ProgressCounter("variants", unit="allele"))
            writer = _Writer(stack, tmp, keys, family, motif_ids, stats)
            writer.headers(reader.header_text, run.name, distance)

            def flush(records):
                jobs = _jobs(records, genes)
                alleles = [j[1] for j in jobs]
                effects = score_alleles(model, genome.fetch, alleles, classes, context=context,
                                        distance=distance, device=loaded.device)  # fmt: skip
                writer.write(records, jobs, effects, genome)
                counter.update(sum(a.skip is None for r in records for a in r.alleles))

            pending, n_alleles = [], 0
            for record in reader.records():
                pending.append(record)
                n_alleles += sum(a.skip is None for a in record.alleles)
                if n_alleles >= batch:
                    flush(pending)
                    pending, n_alleles = [], 0
            flush(pending)
            writer.vcf.close()
    except BaseException:
        if created and not any(out.iterdir()):
            out.rmdir()  # nothing half-written: not even the folder
        raise
    finally:
        reader.close()
    indexed = _index(paths["variants.vcf.gz"])
    seconds = time.perf_counter() - began
    counts = {k: int(reader.counts[k]) for k in ("records", "alleles", "scored")}
    summary = {
        "run": str(run), "vcf": str(vcf), "fasta": str(fasta),
        "annotation": str(gff) if gff else None,
        "strands": "of the overlapping genes; both where none" if gff else
                   "both (no annotation)",  # fmt: skip
        "distance": distance, "classes": classes, "delta_keys": [[c, g, s] for c, g, s in keys],
        "model": fingerprint, "device": str(loaded.device), "families_exported": exported,
        "counts": counts | {"scored_strands": stats.rows},
        "skipped": {k: {"alleles": int(reader.counts[k]), "why": SKIP_REASONS[k]}
                    for k in SKIP_REASONS},  # fmt: skip
        "vcf_indexed": indexed, "seconds": round(seconds, 2),
        "alleles_per_second": round(counts["scored"] / max(seconds, 1e-9), 1),
        **stats.summary(),
        "files": [*paths, *(["variants.vcf.gz.tbi"] if indexed else []), VARIANTS_SUMMARY],
    }  # fmt: skip
    write_json_atomic(out / VARIANTS_SUMMARY, summary)
    return summary


def _index(path: Path) -> bool:
    """Tabix-index the bgzipped VCF (False, and no index, when its records are unsorted)."""
    import pysam

    index = Path(f"{path}.tbi")
    index.unlink(missing_ok=True)
    try:
        pysam.tabix_index(str(path), preset="vcf", force=True, keep_original=True)
    except (OSError, ValueError):
        index.unlink(missing_ok=True)
        return False
    return True


class _Stats:
    """Running figures for ``variants.json``: histograms, effect counts, the top variants."""

    def __init__(self, keys) -> None:
        self.keys = keys
        self.rows = 0
        self.hist = {k: np.zeros(len(BINS) - 1, np.int64) for _, g, s in keys for k in (g, s)}
        self.effects: Counter = Counter()
        self.by_family: Counter = Counter()
        self.with_change = 0
        self.top: list = []

    def add(self, row: dict, changes: list[dict], context) -> None:
        """Count one allele-strand; ``context()`` (its sequence, for the report) is read only
        when it enters the top list."""
        self.rows += 1
        for _, g, s in self.keys:
            for k in (g, s):
                i = min(int(row[f"DS_{k}"] * (len(BINS) - 1)), len(BINS) - 2)
                self.hist[k][i] += 1
        self.with_change += bool(changes)
        for c in changes:
            self.effects[c["effect"]] += 1
            self.by_family[(c["family"], c["effect"])] += 1
        key = (row["max_delta"], self.rows)
        if len(self.top) < TOP_VARIANTS or key > self.top[0][:2]:
            entry = row | {"motif_changes": changes[:VCF_MOTIFS], "context": context()}
            push = heapq.heappush if len(self.top) < TOP_VARIANTS else heapq.heapreplace
            push(self.top, (*key, entry))

    def summary(self) -> dict:
        return {
            "histogram": {"bins": BINS.tolist(), **{k: v.tolist() for k, v in self.hist.items()}},
            "with_motif_change": self.with_change,
            "motif_effects": dict(self.effects),
            "family_effects": [
                {"family": f, "effect": e, "count": n}
                for (f, e), n in self.by_family.most_common(40)
            ],  # fmt: skip
            "top": [t[2] for t in sorted(self.top, key=lambda t: (-t[0], t[1]))],
        }


def _context(genome, rec, flank: int = 12) -> dict:
    """The plus-strand sequence around a record's REF (1-based start), for the report."""
    lo = max(0, rec.pos - flank)
    return {"start": lo + 1,
            "ref": decode(genome.fetch(rec.seqid, lo, rec.pos + len(rec.ref) + flank))}  # fmt: skip


def _jobs(records, genes: GeneStrands) -> list[tuple[int, Allele, list[str]]]:
    """(record index, allele on one strand, gene ids) of every allele to score."""
    jobs = []
    for i, rec in enumerate(records):
        for a in rec.alleles:
            if a.skip is None:
                span = (rec.pos, rec.pos + len(rec.ref))
                for strand, ids in (genes.strands(rec.seqid, *span) or {1: [], -1: []}).items():
                    jobs.append((i, Allele(rec.seqid, rec.pos, rec.ref, a.alt, strand), ids))
    return jobs


def _info_value(text: str) -> str:
    """``text`` safe inside a VCF INFO entry (no separators or spaces)."""
    return "".join("_" if ch in ",;=| \t" else ch for ch in text)


class _Writer:
    """The three streamed outputs (bgzipped VCF, scores TSV, motif changes TSV)."""

    def __init__(self, stack: ExitStack, tmp: dict, keys, family, motif_ids, stats) -> None:
        import pysam

        self.vcf = stack.enter_context(pysam.BGZFile(str(tmp["variants.vcf.gz"]), "wb"))
        self.scores = stack.enter_context(open(tmp["variant_scores.tsv"], "w"))  # noqa: SIM115
        self.changes = stack.enter_context(open(tmp["motif_changes.tsv"], "w"))  # noqa: SIM115
        self.keys, self.family, self.motif_ids, self.stats = keys, family, motif_ids, stats
        self.ds = [f"DS_{k}" for _, g, s in keys for k in (g, s)]
        self.dp = [f"DP_{k}" for _, g, s in keys for k in (g, s)]

    def headers(self, header_text: str, run_name: str, distance: int) -> None:
        fields = ["ALLELE", "STRAND", "GENES", *self.ds, *self.dp]
        info = [
            f'##INFO=<ID=SPARLING,Number=.,Type=String,Description="sparling-genomics '
            f"{run_name}: site delta scores within +-{distance} nt (gain/loss per site class, "
            f'positions relative to POS). Format: {"|".join(fields)}">',
            '##INFO=<ID=SPARLING_MOTIF,Number=.,Type=String,Description="Motif sites the '
            f"allele creates, destroys, strengthens or weakens (up to {VCF_MOTIFS} per allele "
            "and strand, largest first). Format: ALLELE|STRAND|FAMILY|CHANNEL|OFFSET|EFFECT|"
            'BEFORE|AFTER">',
        ]
        head = header_text.rstrip("\n").split("\n")
        self.vcf.write(("\n".join(head[:-1] + info + head[-1:]) + "\n").encode())
        columns = ["chrom", "pos", "id", "ref", "alt", "strand", "genes", *self.ds, *self.dp,
                   "max_delta", "motif_changes", "top_motif_change"]  # fmt: skip
        self.scores.write("\t".join(columns) + "\n")
        self.changes.write("chrom\tpos\tid\tref\talt\tstrand\tfamily\tmotif\tchannel\tsite\t"
                           "offset\teffect\tbefore\tafter\n")  # fmt: skip

    def _row(self, rec, allele: Allele, ids: list[str], eff) -> dict:
        row = {"chrom": rec.columns[0], "pos": rec.pos + 1, "id": rec.columns[2], "ref": rec.ref,
               "alt": allele.alt, "strand": "+" if allele.strand > 0 else "-",
               "genes": ",".join(ids) or "."}  # fmt: skip
        for c, g, s in self.keys:
            gain, loss, at_gain, at_loss = eff.deltas[c]
            row |= {f"DS_{g}": round(gain, 4), f"DS_{s}": round(loss, 4),
                    f"DP_{g}": at_gain, f"DP_{s}": at_loss}  # fmt: skip
        row["max_delta"] = round(eff.max_delta, 4)
        return row

    def write(self, records, jobs, effects, genome) -> None:
        """Write the scored rows, then every record with its INFO entries."""
        info: dict[int, tuple[list[str], list[str]]] = {}
        for (i, allele, ids), eff in zip(jobs, effects):
            rec = records[i]
            row = self._row(rec, allele, ids, eff)
            touched = sorted(eff.motifs, key=lambda m: -abs(m.after - m.before))
            listed = [{"family": self.family[m.channel], "motif": self.motif_ids[m.channel],
                       "channel": m.channel, "offset": m.offset, "effect": m.effect,
                       "before": m.before, "after": m.after} for m in touched]  # fmt: skip
            top = listed[0] if listed else None
            text = [str(row[k]) for k in ("chrom", "pos", "id", "ref", "alt", "strand", "genes")]
            summary = f"{top['family']} {top['effect']} {top['offset']:+d}" if top else "."
            text += [str(row[k]) for k in self.ds + self.dp]
            text += [str(row["max_delta"]), str(len(listed)), summary]
            self.scores.write("\t".join(text) + "\n")
            for m in listed:
                site = [m["family"], m["motif"], m["channel"], rec.pos + 1 + m["offset"],
                        m["offset"], m["effect"], m["before"], m["after"]]  # fmt: skip
                self.changes.write("\t".join(text[:6] + [str(v) for v in site]) + "\n")
            self.stats.add(row, listed, lambda rec=rec: _context(genome, rec))
            strand_ids = [allele.alt, row["strand"], _info_value("&".join(ids) or ".")]
            ds = "|".join(strand_ids + [f"{row[k]:.2f}" for k in self.ds]
                          + [str(row[k]) for k in self.dp])  # fmt: skip
            mt = ["|".join([allele.alt, row["strand"], _info_value(m["family"]), str(m["channel"]),
                            str(m["offset"]), m["effect"], f"{m['before']:.3g}",
                            f"{m['after']:.3g}"]) for m in listed[:VCF_MOTIFS]]  # fmt: skip
            entry = info.setdefault(i, ([], []))
            entry[0].append(ds)
            entry[1].extend(mt)
        for i, rec in enumerate(records):
            cols = list(rec.columns)
            ds, mt = info.get(i, ([], []))
            extra = ([f"SPARLING={','.join(ds)}"] if ds else []) + (
                [f"SPARLING_MOTIF={','.join(mt)}"] if mt else [])  # fmt: skip
            if extra:
                cols[7] = ";".join(([] if cols[7] == "." else [cols[7]]) + extra)
            self.vcf.write(("\t".join(cols) + "\n").encode())
