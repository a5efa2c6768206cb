"""Which part of a genome trains, validates and tests: per-sequence blocks or whole sequences.

Two modes (``DatasetSpec.split``; ``dataset --split``):

* ``blocks`` (the default): every sequence is cut into contiguous blocks ``train |
  validation | test`` (70/10/20% of its length by default). A boundary that would fall inside
  a gene cluster moves to the nearer end of it, so no gene is cut. Every chromosome then
  contributes to every split, and a genome of one chromosome still has a test set.
* ``chromosomes``: whole sequences are held out, as SpliceAI holds out chromosomes. The test
  and validation sequences are named (``--test-sequences chr1,chr3 --val-sequences chr5``) or,
  where not named, chosen greedily by labelled-site count to come near the fractions: the
  sequence whose count is nearest what the split still lacks, until one more would take it
  further from its share. A held-out split with a fraction above 0 gets at least one sequence,
  training keeps at least one. The choice is a function of the counts and names only, so a
  rebuild makes the same split.

Both are recorded the same way, as per-sequence boundaries ``[val_start, test_start]`` in the
dataset's ``attrs['split']``: a whole sequence of length L in training is ``[L, L]``, in
validation ``[0, L]``, in test ``[0, 0]``; readers need not know the mode. Sequences without a
labelled site (unannotated scaffolds, organelles) have no windows and are listed as skipped in
the summary's ``split`` block, which :func:`describe_split` turns into one line.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError, close_match

SPLIT_MODES = ("blocks", "chromosomes")
SPLITS = ("train", "val", "test")
#: Sequence names listed per split in the summary; past this, the count and the first ones.
NAMES_SHOWN = 20


@dataclass
class SplitRule:
    """How to split: the mode, the held-out fractions and any named held-out sequences."""

    mode: str = "blocks"
    val_fraction: float = 0.1
    test_fraction: float = 0.2
    test_sequences: list[str] = field(default_factory=list)
    val_sequences: list[str] = field(default_factory=list)

    def check(self) -> None:
        """One-line :class:`InputError` for a mode or a naming that cannot be built."""
        if self.mode not in SPLIT_MODES:
            raise InputError(f"split must be one of {', '.join(SPLIT_MODES)}, got {self.mode!r}")
        fractions = (self.val_fraction, self.test_fraction)
        if min(fractions) < 0 or sum(fractions) >= 1:
            raise InputError("val_fraction + test_fraction must lie in [0, 1)")
        named = self.test_sequences or self.val_sequences
        if named and self.mode != "chromosomes":
            raise InputError("--test-sequences/--val-sequences name whole held-out sequences: "
                             "give them with --split chromosomes")  # fmt: skip
        both = sorted(set(self.test_sequences) & set(self.val_sequences))
        if both:
            raise InputError(f"{both[0]!r} is named both as a test and as a validation sequence")


def block_boundaries(
    length: int, clusters: list[tuple[int, int]], val_fraction: float, test_fraction: float
) -> list[int]:
    """[val_start, test_start] of one sequence, moved out of every cluster."""
    out = []
    for frac in (1.0 - val_fraction - test_fraction, 1.0 - test_fraction):
        b = int(round(length * frac))
        for s, e in clusters:
            if s < b < e:
                b = e if (e - b) <= (b - s) else s
                break
        out.append(b)
    out[1] = max(out[1], out[0])
    return out


def block_of(position: int, bounds: list[int]) -> int:
    """The split (0 train, 1 validation, 2 test) of ``position`` under ``bounds``."""
    return 0 if position < bounds[0] else (1 if position < bounds[1] else 2)


def whole_sequence(split: int, length: int) -> list[int]:
    """The boundaries that put a whole sequence of ``length`` in ``split`` (0, 1 or 2)."""
    return [[length, length], [0, length], [0, 0]][split]


def choose_held_out(
    weights: dict[str, int],
    val_fraction: float,
    test_fraction: float,
    fixed: dict[str, int] | None = None,
) -> dict[str, int]:
    """The split (0, 1, 2) of every sequence of ``weights`` (its labelled sites): ``fixed``
    ones as given; a held-out split none of ``fixed`` is in, with a fraction above 0, filled
    greedily from the rest (test first): each time the sequence whose weight is nearest what
    the split still lacks (ties: the lighter, then the first by name), the first always, the
    next while it brings the split nearer its share; the rest train."""
    fixed = dict(fixed or {})
    total = sum(weights.values())
    free = sorted((w, s) for s, w in weights.items() if s not in fixed)
    todo = [(split, f) for split, f in ((2, test_fraction), (1, val_fraction))
            if f > 0 and split not in fixed.values()]  # fmt: skip
    chosen = dict(fixed)
    for rank, (split, fraction) in enumerate(todo):
        keep = 1 + (len(todo) - rank - 1)  # one for training, one per split still to fill
        need, got, picked = fraction * total, 0, False
        while len(free) > keep:
            short = need - got
            at = bisect_left(free, (short, ""))  # the first at least as heavy as ``short``
            near = free[at : at + 1]
            if at:  # the first of the lighter neighbours' weight
                near.append(free[bisect_left(free, (free[at - 1][0], ""))])
            w, s = min(near, key=lambda c: (abs(c[0] - short), c))
            if picked and abs(got + w - need) >= abs(got - need):
                break
            picked = True
            free.remove((w, s))
            chosen[s] = split
            got += w
    chosen.update({s: 0 for _, s in free})
    return chosen


def split_genome(
    rule: SplitRule,
    genome_lengths: dict[str, int],
    clusters: dict[str, list[tuple[int, int]]],
    sites: Iterable[tuple[str, int]],
    *,
    fasta: Path,
    labels: Path,
    aliases: dict[str, str] | None = None,
) -> tuple[dict[str, list[int]], list[int]]:
    """(``[val_start, test_start]`` of every labelled sequence, labelled sites per split)
    under ``rule``. ``clusters``: each labelled sequence's merged labelled spans; ``sites``:
    (seqid, position) of every labelled site; ``fasta`` and ``labels`` (the annotation or
    BED) name the files in errors; ``aliases`` map other names of the FASTA's sequences
    (``--chrom-aliases``) to its own."""
    sites = list(sites)
    weights = Counter({seqid: 0 for seqid in clusters})
    weights.update(seqid for seqid, _ in sites)
    bounds = split_boundaries(rule, genome_lengths, clusters, dict(weights), fasta=fasta,
                              labels=labels, aliases=aliases)  # fmt: skip
    return bounds, count_by_split(sites, bounds)


def split_boundaries(
    rule: SplitRule,
    genome_lengths: dict[str, int],
    clusters: dict[str, list[tuple[int, int]]],
    weights: dict[str, int],
    *,
    fasta: Path,
    labels: Path,
    aliases: dict[str, str] | None = None,
) -> dict[str, list[int]]:
    """``[val_start, test_start]`` of every labelled sequence (the keys of ``clusters``) under
    ``rule``; ``weights``: labelled sites per sequence (see :func:`split_genome`)."""
    rule.check()
    if rule.mode == "blocks":
        return {
            seqid: block_boundaries(
                genome_lengths[seqid], spans, rule.val_fraction, rule.test_fraction
            )  # fmt: skip
            for seqid, spans in sorted(clusters.items())
        }
    fixed: dict[str, int] = {}
    for split, option, names in ((2, "--test-sequences", rule.test_sequences),
                                 (1, "--val-sequences", rule.val_sequences)):  # fmt: skip
        found = [_named(n, option, genome_lengths, aliases or {}, fasta) for n in names]
        if found and not any(n in weights for n in found):
            verb = "carries" if len(found) == 1 else "carry"
            raise InputError(
                f"{option}: {', '.join(found)} {verb} no labelled site in {labels} "
                "(no gene or labelled record on it); name sequences that have them"
            )
        fixed.update({n: split for n in found if n in weights})
    _check_enough(rule, weights, fixed, fasta)
    chosen = choose_held_out(weights, rule.val_fraction, rule.test_fraction, fixed)
    return {s: whole_sequence(chosen[s], genome_lengths[s]) for s in sorted(clusters)}


def _named(name: str, option: str, lengths: dict[str, int], aliases: dict[str, str],
           fasta: Path) -> str:  # fmt: skip
    """The FASTA name of a sequence named on the command line, or a one-line error."""
    found = aliases.get(name, name)
    if found in lengths:
        return found
    near = close_match(name, lengths)
    hint = f" (did you mean {near!r}?)" if near else ""
    raise InputError(f"{option}: {name!r} is not a sequence of {fasta}{hint}; it has "
                     f"{len(lengths):,}: {few(lengths)}")  # fmt: skip


def _check_enough(rule: SplitRule, weights: dict[str, int], fixed: dict[str, int],
                  fasta: Path) -> None:  # fmt: skip
    """Enough labelled sequences for training and each held-out split to get one."""
    held = {split for split, f in ((1, rule.val_fraction), (2, rule.test_fraction)) if f > 0}
    held |= set(fixed.values())
    free = len(weights) - len(fixed)
    wanted = 1 + len(held - set(fixed.values()))
    if free < wanted:
        what = "the named held-out sequences leave" if fixed else "it has"
        raise InputError(
            f"{fasta}: --split chromosomes needs {wanted} sequences with labelled sites "
            f"(training, and one per held-out split not named); {what} {free} "
            f"({few(s for s in sorted(weights) if s not in fixed)}); use --split blocks, name "
            "fewer sequences, or set --val-fraction 0"
        )


def few(names: Iterable[str], n: int = 5) -> str:
    """The first ``n`` of ``names``, comma-separated, with '...' when there are more."""
    names = list(names)
    return ", ".join(names[:n]) + (", ..." if len(names) > n else "")


def _listing(names: list[str]) -> dict:
    shown = names[:NAMES_SHOWN]
    out: dict = {"sequences": len(names), "names": shown}
    if len(names) > len(shown):
        out["names_not_shown"] = len(names) - len(shown)
    return out


def count_by_split(sites: Iterable[tuple[str, int]], bounds: dict[str, list[int]]) -> list[int]:
    """Labelled sites per split (train, val, test) from their (seqid, position)."""
    counts = Counter(block_of(p, bounds[s]) for s, p in sites if s in bounds)
    return [int(counts[i]) for i in range(3)]


def split_summary(rule: SplitRule, genome_lengths: dict[str, int],
                  windows: list[tuple], sites: list[int]) -> dict:  # fmt: skip
    """The summary's ``split`` block: the mode, per split its sequences (names, or the count
    and the first :data:`NAMES_SHOWN`), windows and labelled sites; the sequences skipped for
    want of a labelled site. ``windows``: the dataset's ``(seqid, strand, start, split, end)``;
    ``sites``: labelled sites per split (:func:`count_by_split`)."""
    per_split: list[set[str]] = [set(), set(), set()]
    counts = [0, 0, 0]
    for w in windows:
        per_split[w[3]].add(w[0])
        counts[w[3]] += 1
    order = list(genome_lengths)  # the FASTA's order
    used = set().union(*per_split)
    block: dict = {"mode": rule.mode,
                   "fractions": {"val": rule.val_fraction, "test": rule.test_fraction}}  # fmt: skip
    if rule.mode == "chromosomes":
        block["held_out"] = {
            name: "named" if named else ("by labelled-site count" if fraction else "fraction 0")
            for name, named, fraction in (
                ("test", rule.test_sequences, rule.test_fraction),
                ("val", rule.val_sequences, rule.val_fraction),
            )
        }
    for i, name in enumerate(SPLITS):
        names = [s for s in order if s in per_split[i]]
        block[name] = {**_listing(names), "windows": counts[i], "sites": int(sites[i])}
    skipped = [s for s in order if s not in used]
    block["skipped"] = {**_listing(skipped), "why": "no labelled site on them"}
    return block


def describe_split(summary: dict) -> str:
    """One line stating a dataset's split (without a leading "split:"), from its ``summary``
    attribute; a dataset built before the split block was recorded is per-sequence blocks."""
    block = summary.get("split")
    if not block:
        windows = summary.get("windows") or {}
        counts = ", ".join(f"{k} {v:,}" for k, v in windows.items())
        return f"per-sequence blocks; windows {counts}"
    fractions = block.get("fractions") or {}
    if block["mode"] == "chromosomes":
        head = "whole held-out sequences"
    else:
        head = (
            f"per-sequence blocks (validation {fractions.get('val', 0):.0%}, "
            f"test {fractions.get('test', 0):.0%} of each sequence)"
        )
    parts = []
    for name in SPLITS:
        part = block[name]
        if block["mode"] == "chromosomes":
            how = (block.get("held_out") or {}).get(name)
            where = _names_text(part) + (f", {how}" if how else "")
            if how == "fraction 0" and not part["sequences"]:
                where = "none (fraction 0)"
        else:
            where = _sequences(part["sequences"])
        parts.append(f"{name} {where} ({part['windows']:,} windows, {part['sites']:,} sites)")
    skipped = block["skipped"]
    tail = ""
    if skipped["sequences"]:
        names = few(skipped["names"])
        tail = f"; {_sequences(skipped['sequences'])} skipped ({skipped['why']}: {names})"
    return f"{head}: " + "; ".join(parts) + tail


def _names_text(part: dict) -> str:
    names = part["names"]
    if part["sequences"] <= 5:
        return ", ".join(names) or "none"
    return f"{_sequences(part['sequences'])} ({few(names)})"


def _sequences(n: int) -> str:
    return f"{n:,} sequence" + ("" if n == 1 else "s")


def nothing_labelled(annotation: Path, fasta: Path, genome_lengths: dict[str, int], *,
                     skipped_lines: Counter | None = None,
                     other: Counter | None = None) -> InputError:  # fmt: skip
    """The one-line error when no sequence of the FASTA carries a gene of the annotation (an
    assembly of 10,000 scaffolds beside a GFF of another assembly, or of repeats only): both
    files, what the annotation held instead, and the fix. ``skipped_lines``: lines skipped per
    unknown sequence (``--skip-unknown-sequences``); ``other``: feature types not read."""
    n = len(genome_lengths)
    text = (f"{annotation}: no protein-coding transcripts with exons on any of the {n:,} "
            f"sequences of {fasta} ({few(genome_lengths)})")  # fmt: skip
    found = []
    if other:
        found.append("other features: " +
                     ", ".join(f"{k} {v:,}" for k, v in other.most_common(3)))  # fmt: skip
    if skipped_lines:
        found.append(f"{sum(skipped_lines.values()):,} lines on sequences the FASTA lacks "
                     f"skipped ({few(skipped_lines)})")  # fmt: skip
    if found:
        text += f"; {'; '.join(found)}"
    return InputError(
        f"{text}; give this genome's gene annotation (gene, mRNA and exon lines "
        "named as the FASTA's sequences)"
    )
