"""BENCHMARKS.md's summary table, and the whole file put in order.

The summary table, right after the file's header, has one row per section: the headline figure,
the floor the section states, whether it is met, and the date of the measurement. Every figure is
read from the JSON the section cites when the file is written (``headlines.py``); the sections
keep the order ``sections.py`` fixes. :func:`tidy_text` rewrites a file in that order with a
fresh summary, without rerunning anything; ``update_section`` calls it after each benchmark,
``python -m benchmarks tidy`` on its own.
"""

from __future__ import annotations

from pathlib import Path

from sparling_genomics.io import write_text_atomic

from .headlines import headline
from .sections import (
    SUMMARY_END,
    SUMMARY_START,
    Section,
    github_anchor,
    headings,
    ordered,
    split_sections,
)

SUMMARY_HEADING = "## Summary"


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
        for h in headings(text):
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
    """``text`` (a BENCHMARKS.md) with its sections in ``sections.SECTION_ORDER``, each
    followed by its prose, and a fresh summary right after the header; JSON paths relative to
    ``root``."""
    preamble, sections = split_sections(text)
    sections = ordered(sections)
    preamble = preamble.strip()
    seen: dict[str, int] = {}
    for h in headings(preamble):
        github_anchor(h, seen)
    chunks = [preamble] if preamble else []
    chunks.append(summary_block(sections, root, seen))
    for section in sections:
        prose = section.prose.strip()
        chunks.append(section.block.strip() + (f"\n\n{prose}" if prose else ""))
    return "\n\n".join(chunks) + "\n"


def tidy_file(path: Path) -> bool:
    """Rewrite the markdown file at ``path`` with :func:`tidy_text`; True if it changed."""
    path = Path(path)
    text = path.read_text()
    tidied = tidy_text(text, path.parent)
    if tidied != text:
        write_text_atomic(path, tidied)
    return tidied != text
