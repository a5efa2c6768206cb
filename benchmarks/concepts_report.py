"""The concepts benchmark's BENCHMARKS.md section, rebuilt from the parts' JSON
(``concepts.py`` runs the parts)."""

from __future__ import annotations

from pathlib import Path

from .concepts_splicing import splicing_markdown
from .labels import CONCEPT_LABELS
from .report import machine_line, pct

PAPER_R2 = "BSF ~0.93-0.97, SAE ~0.53"


def _f(value, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def markdown(found: dict, out: Path) -> str:
    machine = next(iter(found.values()))["machine"] if found else {}
    lines = ["## Concepts after training vs Sparling's trained-in motifs (issue 21)", "",
             f"`python -m benchmarks concepts --out {out}` (parts: "
             f"{', '.join(found) or 'none yet'}); JSON: `{out}/bench_concepts_<part>.json`. "
             f"{machine_line(machine) if machine else ''}"]  # fmt: skip
    syn = found.get("synthetic")
    if syn:
        d = syn["data"]
        lines += ["", "### Seed 002's synthetic test", "",
                  f"{len(d['manifolds'])} manifolds (4 circles, 4 spheres, 4 flat tori) in "
                  f"{d['dim']}-D, {d['active']} active per row, {d['rows']:,} rows, noise "
                  f"{d['noise']}; {syn['steps']} Adam steps per fit. Recovery R^2 per manifold: "
                  "the best single concept's contribution (its code times its block) against "
                  f"the manifold's own (paper: {PAPER_R2}). FVU: of the concepts as read out "
                  "(Grassmannian: the kept blocks' joint least-squares coordinates; "
                  "Group-Lasso: the relaxed fit), in brackets of the fit's own codes (tied "
                  "projections; shrunk codes)."
                  + (f" Extractors: `sparling_genomics/concepts` as of {syn['concepts_code']}."
                     if syn.get("concepts_code") else ""), "",
                  "| extractor | concepts x block | k | chosen by | R^2 mean | circles | "
                  "spheres | tori | worst | FVU | seconds |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
        for r in syn["methods"]:
            kinds = r["r2_by_kind"]
            lines.append(f"| {r['method']} | {r['concepts']} x {r['block']} | {r['k'] or '-'} "
                         f"| {r['chosen_by']} | {r['r2_mean']:.3f} | {kinds['circle']:.3f} "
                         f"| {kinds['sphere']:.3f} | {kinds['torus']:.3f} | {min(r['r2']):.3f} "
                         f"| {_f(r['fvu'])}"
                         + (f" ({_f(r['fit_fvu'])})" if r.get("fit_fvu") is not None else "")
                         + f" | {r['seconds']:.0f} |")  # fmt: skip
        finals = [f"{r['method']}: " + ", ".join(f"b{f['block']} k{f['k']} {f['bits_per_row']:.1f}"
                                                 for f in r["mdl_finalists"])
                  for r in syn["methods"] if r.get("mdl_finalists")]  # fmt: skip
        if finals:
            lines += ["", "MDL's finalists (full fits of each block size's best k after short "
                      "scouts of blocks 1, 2, 4, 8 x k 1, 2, 3, 4, 6, 8; bits per row, the "
                      "shortest chosen): "
                      + "; ".join(finals) + "."]  # fmt: skip
    planted = found.get("planted")
    if planted:
        lines += ["", "### Planted motifs, head to head", "",
                  "Per motif set: a Sparling run and the same network without the sparse layer "
                  "(`--preset cpu`, seed 0, one torch thread each; the budget is stated per "
                  "set); Sparling's channels exported by "
                  "`export`; the non-sparse run's `hidden` "
                  "layer (g's 32 last features, both strands) given to each extractor "
                  f"(`concepts`, one concept per motif, {planted['steps']} steps, block and k "
                  f"by MDL) and to saturation mutagenesis of its expected site count + "
                  f"TF-MoDISco-lite ({planted['modisco_windows']} test windows). Recovered: "
                  "planted motifs that are some exported motif's best Tomtom match among the "
                  "planted PWMs at q < 0.01 (Tomtom against the truth, as TF-MoDISco's "
                  "benchmarks compare patterns; both strands, q by Benjamini-Hochberg over the "
                  "planted motifs); spurious: exported motifs matching no planted PWM at "
                  "q < 0.01; control: column-shuffled copies of the exported motifs that would "
                  "have recovered one. Named exactly: planted motifs that are some exported "
                  "motif's best match in all of JASPAR 2024 plants at q < 0.01 (stricter: a "
                  "planted TCP9 found as a PWM whose best JASPAR match is its sibling TCP8 "
                  "does not count).",
                  ""]  # fmt: skip
        for name, entry in planted["sets"].items():
            tr = entry["training"]
            sp = tr["sparling"]
            cap = entry.get("budget")
            budget = (f"Sparling by its schedule, the non-sparse run as many samples "
                      f"({cap['cap_seconds']:.0f} s cap)" if cap else
                      f"{entry.get('train_seconds') or planted['train_seconds']:.0f} s each "
                      "(the design before 2026-12-03)")
            lines += [f"**{name}** ({len(entry['motifs'])} motifs: {', '.join(entry['motifs'])}; "
                      f"budget: {budget}). "
                      f"Sparling: test exact match {pct(sp['exact_match'])}, "
                      f"{sp['samples']:,} samples in {sp['seconds']:.0f} s "
                      f"(stopped by {sp['stopped_by']}), final density "
                      f"{_f(sp['density'], 5)} (true {_f(sp['true_density'], 5)}); "
                      f"non-sparse: {pct(tr['baseline']['exact_match'])}, "
                      f"{tr['baseline']['samples']:,} samples."
                      + (" Extractors: `sparling_genomics/concepts` as of "
                         f"{entry['concepts_code']}." if entry.get("concepts_code") else ""), "",
                      "| motifs from | recovered | spurious / exported | control | "
                      "named exactly | extraction s |",
                      "|---|---|---|---|---|---|"]  # fmt: skip
            n = len(entry["motifs"])
            for method, r in entry["methods"].items():
                t = r.get("truth")
                truth = (f"{t['recovered_count']} / {n} | {t['spurious']} / {t['exported']} "
                         f"| {t['control_false_matches']}" if t else "- | - | -")  # fmt: skip
                lines.append(f"| {CONCEPT_LABELS.get(method, method)} | {truth} "
                             f"| {r['recovered_count']} / {n} | {r['seconds']:.0f} |")
            lines.append("")
    meas = found.get("measures")
    if meas:
        lines += ["", "### Seed 004's measures (default set)", "",
                  f"{meas['windows']} test windows ({meas['positions']:,} positions). Probe loss: "
                  "mean held-out binary cross-entropy (nats) of one logistic probe per planted "
                  "motif, from the concept activations (max over strands, then max over "
                  f"+-{meas.get('pool', 0)} positions, g's half receptive field) to the motif's "
                  "presence at the position (lower is better; the base rate is the loss of "
                  "a constant prediction). MPPC: mean over concepts "
                  "of the best |Pearson r| with another extractor seed's concepts, averaged over "
                  "the 3 seed pairs."
                  + (f" Extractors: `sparling_genomics/concepts` as of {meas['concepts_code']}."
                     if meas.get("concepts_code") else ""), "",
                  "| features | probe loss | MPPC (3 seeds) | block, k |",
                  "|---|---|---|---|"]  # fmt: skip
        for method, r in meas["methods"].items():
            bk = f"{r.get('block') or '-'}, {r.get('k') or '-'}" if "block" in r else "-"
            lines.append(f"| {CONCEPT_LABELS.get(method, method)} | {_f(r['probe_loss'], 4)} "
                         f"| {_f(r['mppc'])} | {bk} |")  # fmt: skip
    if found.get("splicing"):
        lines += splicing_markdown(found["splicing"], CONCEPT_LABELS)
    return "\n".join(lines)
