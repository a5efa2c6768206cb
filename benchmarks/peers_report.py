"""The peers benchmark's section of BENCHMARKS.md: one table, same test positions, and the
issue's comparisons stated as met or not (figures read from ``bench_peers.json``)."""

from __future__ import annotations

from pathlib import Path

from .floors import PEERS_BASELINE_GAP, VARIANTS_LOSS_SHARE
from .labels import TRANSCRIPT, best_reading
from .report import machine_line, publish

ROWS = {
    "sparling": ("Sparling (ours)", "{context}", "this genome's train block"),
    "baseline": ("non-sparse baseline (ours)", "{context}", "this genome's train block"),
    "spliceai": ("SpliceAI, 5 models, off the shelf", "10,000", "human (GENCODE), as published"),
    "sparling_long": ("Sparling, long preset (ours)", "2,000", "this genome's train block"),
    "baseline_long": ("non-sparse baseline, long preset (ours)", "2,000",
                      "this genome's train block"),
}

OURS = ("sparling", "baseline", "sparling_long", "baseline_long")


def row_label(name: str, result: dict) -> tuple[str, str, str]:
    """(model, context, training data) of a table row."""
    if name.endswith(TRANSCRIPT):
        model, context, data = row_label(name.removesuffix(TRANSCRIPT), result)
        return f"{model}; each transcript alone, N beyond (as trained)", context, data
    if name in ROWS:
        model, context, data = ROWS[name]
        return model, context.format(context=result.get("context", "?")), data
    flank = name.removeprefix("openspliceai").split("_")[0]
    how = "its defaults (10 epochs)" if name.endswith("_default") else "our baseline's wall time"
    return f"OpenSpliceAI retrained, {how}", f"{int(flank):,}", "this genome's train block"


def training_minutes(name: str, result: dict) -> str:
    name = name.removesuffix(TRANSCRIPT)
    if name in OURS:
        return f"{result['models'][name]['wall_seconds'] / 60:.1f}"
    trained = result["openspliceai_training"].get(f"{name}")
    if trained is None:
        return "- (published)"
    epochs = trained["global_batch"] / trained["batches_per_epoch"]
    return f"{trained['seconds'] / 60:.1f} ({epochs:.2f} epochs)"


def _f(value, spec: str = ".3f") -> str:
    return "-" if value is None else format(value, spec)


def markdown(result: dict, json_path: Path) -> str:
    models, variants = result["models"], result.get("variants") or {"models": {}}
    lines = [
        "## Peers: SpliceAI and OpenSpliceAI on our test positions",
        "",
        f"`{result['command']}` ({machine_line(result['machine'])}); JSON: `{json_path}`.",
        "Every model is scored on the same labelled positions (the test block of "
        f"{result['reference']}, both strands, every site of every selected transcript) by the "
        "same top-k / PR-AUC code; variants are the same allele-strands for every model.",
        "",
        "| model | context (nt) | training data | training min on this machine | donor top-k "
        "| acceptor top-k | mean top-k | donor PR-AUC | acceptor PR-AUC | allele-strands/s "
        "| donor GT>CA loss >= 0.5 | acceptor AG>TC loss >= 0.5 | r with SpliceAI (DS, pooled) |",
        "|" + "---|" * 13,
    ]
    for name, m in models.items():
        label, context, data = row_label(name, {"context": result.get("context")})
        e2e, v = m["e2e"], variants["models"].get(name, {})
        loss = v.get("loss", {})
        agree = (v.get("agreement_with_spliceai") or {}).get("pooled")
        lines.append(
            f"| {label} | {context} | {data} | {training_minutes(name, result)} "
            f"| {_f(e2e.get('donor_topk'))} | {_f(e2e.get('acceptor_topk'))} "
            f"| {_f(e2e['mean_topk'])} | {_f(e2e.get('donor_pr_auc'))} "
            f"| {_f(e2e.get('acceptor_pr_auc'))} | {_rate(name, v)} "
            f"| {_share(loss, 'donor')} | {_share(loss, 'acceptor')} "
            f"| {'1 (itself)' if name == 'spliceai' else _f(agree)} |"
        )
    lines += ["", *verdicts(result)]
    check = result["keras_check"]
    lines += [
        "",
        f"The PyTorch port of SpliceAI's Keras models differs from Keras by at most "
        f"{check['worst']:.1e} in any probability ({check['inputs']} inputs of "
        f"{check['outputs_each']} outputs, each of the 5 models).",
    ]
    for name, trained in result.get("openspliceai_training", {}).items():
        if trained.get("started_from"):
            lines.append(f"{row_label(name, {})[0]} (flank {trained['flank']}) continued the "
                         f"state of the budget run `{trained['started_from']}` (the same seed "
                         "and 10-epoch schedule), its minutes included.")
    osai = result.get("openspliceai_check")
    if osai:
        lines.append(f"OpenSpliceAI checkpoints load into the same port: largest difference "
                     f"from OpenSpliceAI's own module {osai['worst']:.1e}.")
    if variants.get("allele_strands"):
        lines.append(
            f"Variants: {variants['site_mutations']} site mutations and "
            f"{variants['random_variants']} random variants, {variants['allele_strands']} "
            "allele-strands; our rates include the verb's start-up (a subprocess, as a user "
            "runs it), the peers' are forward passes in the benchmark's process. A peer read "
            "transcript by transcript scores only the allele-strands inside a test-block "
            "transcript on their own strand (SpliceAI's tool skips the others); its speed is "
            "its genome reading's."
            + (" OpenSpliceAI's default-epoch runs are scored on sites only: the variant "
               "comparison is of the runs on the same clock."
               if any(n.endswith("_default") for n in result.get("openspliceai_training", {}))
               else "")
        )
    return "\n".join(lines)


def _rate(name: str, v: dict) -> str:
    """Allele-strands a second; a transcript reading runs the same network on windows of the
    same length, so its speed is its genome reading's (shown once, on that row)."""
    return "-" if name.endswith(TRANSCRIPT) else _f(v.get("allele_strands_per_second"), ".1f")


def _which(name: str) -> str:
    """Which reading of a peer a verdict used (its better one)."""
    return ", read transcript by transcript (its better reading)" if name.endswith(
        TRANSCRIPT) else ""  # fmt: skip


def _share(loss: dict, kind: str) -> str:
    entry = loss.get(kind) or {}
    value = entry.get("fraction_loss_at_least_0.5")
    return "-" if value is None else f"{value:.1%} of {entry['sites']}"


def verdicts(result: dict) -> list[str]:
    """The issue's comparisons, each stated with its figures and met / not met."""
    models = result["models"]
    mean = {name: m["e2e"]["mean_topk"] for name, m in models.items()}
    out = []
    peers = [n for n in mean if n.startswith("openspliceai") and not n.endswith(TRANSCRIPT)]
    if "spliceai" in mean:
        best = best_reading(mean, "spliceai")
        met = mean["sparling"] > mean[best]
        out.append(f"- Sparling ahead of SpliceAI off the shelf{_which(best)}: "
                   f"{mean['sparling']:.3f} vs {mean[best]:.3f} mean top-k: "
                   f"**{'met' if met else 'not met'}**.")
    for name in [n for n in peers if not n.endswith("_default")]:
        best = best_reading(mean, name)
        gap = mean[best] - mean["baseline"]
        met = gap <= PEERS_BASELINE_GAP
        out.append(f"- Baseline within {PEERS_BASELINE_GAP} of {row_label(name, {})[0]} "
                   f"(flank {name.removeprefix('openspliceai')}){_which(best)}: "
                   f"{mean['baseline']:.3f} vs {mean[best]:.3f} (gap {gap:+.3f}): "
                   f"**{'met' if met else 'not met'}**.")
    for name in [best_reading(mean, n) for n in peers if n.endswith("_default")]:
        ours = [n for n in ("baseline", "baseline_long", "sparling_long") if n in mean]
        against = "; ".join(f"{row_label(n, {'context': result.get('context', '?')})[0]} "
                            f"{mean[n]:.3f} ({training_minutes(n, result)} min, "
                            f"gap {mean[name] - mean[n]:+.3f})" for n in ours)  # fmt: skip
        flank = name.removeprefix("openspliceai").split("_")[0]
        out.append(f"- {row_label(name.removesuffix(TRANSCRIPT), {})[0]}{_which(name)} "
                   f"(flank {flank}, "
                   f"{training_minutes(name, result)} min): {mean[name]:.3f}; {against}.")
    rates = {}
    for name, v in (result.get("variants") or {}).get("models", {}).items():
        shares = [(v["loss"].get(k) or {}).get("fraction_loss_at_least_0.5") for k in
                  ("donor", "acceptor")]  # fmt: skip
        if None not in shares:
            rates[name] = min(shares)
    if rates:
        ours = {n: r for n, r in rates.items() if n in OURS}
        met = any(r >= VARIANTS_LOSS_SHARE for r in ours.values())
        listed = ", ".join(f"{n} {r:.1%}" for n, r in rates.items())
        out.append(f"- In-silico floor (loss >= 0.5 on >= {VARIANTS_LOSS_SHARE:.0%} of both "
                   f"classes' site mutations) by one of our models: lower class share {listed}: "
                   f"**{'met' if met else 'not met'}**.")
    out.append(f"- Sparling / baseline mean top-k at {result.get('context', '?')} nt: "
               f"{mean['sparling'] / mean['baseline']:.3f}.")
    if "sparling_long" in mean and "baseline_long" in mean:
        out.append(f"- Sparling / baseline mean top-k at 2,000 nt (long preset): "
                   f"{mean['sparling_long'] / mean['baseline_long']:.3f}.")
    return out


def publish_peers(result: dict, out: Path, benchmarks_md: Path) -> Path:
    json_path = Path(out) / "bench_peers.json"
    return publish(result, json_path, benchmarks_md, "peers", markdown(result, json_path))
