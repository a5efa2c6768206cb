"""BENCHMARKS.md's sections and their order.

Every section of BENCHMARKS.md sits between ``<!-- bench:NAME:start -->`` and ``<!-- bench:NAME:end
-->`` markers; ``NAME`` is a benchmark's name (``planted``) or a variant of one (``planted
model.hidden=64``, ``variants 1M``, ``variants, longer run``). :data:`SECTION_ORDER` fixes the
order of the sections by benchmark: a variant follows its benchmark's main section (variants keep
their order among themselves), a name it does not know goes last, and the prose between two
sections travels with the section before it. The summary table between its own markers is left
out when the file is split (``summary.py`` writes it afresh).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: The sections' order, by benchmark: the product first, then the method, the paper's domains,
#: and the analyses.
SECTION_ORDER = (
    # the product: the pipeline and its verbs on real genomes
    "pipeline", "splicing", "splicing-seeds", "apply", "scale", "scan", "scan-load",
    "scan-regression", "variants", "motif-export",
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
_START = re.compile(r"<!-- bench:(.+?):start -->")
_SUMMARY = re.compile(re.escape(SUMMARY_START) + r".*?" + re.escape(SUMMARY_END) + r"\n*", re.S)

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


def headings(text: str) -> list[str]:
    """The Markdown headings of ``text`` in order (none inside code fences)."""
    found, fenced = [], False
    for line in text.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced and re.match(r"#{1,6} ", line):
            found.append(line.lstrip("#").strip())
    return found


