"""The README stays a newcomer's page, the documentation's relative links lead somewhere, and
the presets table of docs/method.md states the defaults the code sets."""

import re

import pytest

from tests.conftest import REPO

README = REPO / "README.md"
PAGES = [README, *sorted((REPO / "docs").glob("*.md")),
         REPO / "pipelines" / "config" / "README.md",
         REPO / "pipelines" / "profiles" / "README.md"]  # fmt: skip
README_MAX_LINES = 250

FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)
CODE_SPAN = re.compile(r"(`+).*?\1", re.S)
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def relative_links(text: str) -> list[str]:
    """The targets of the Markdown links in TEXT outside code, without their anchors; links
    with a scheme (https:, mailto:) and links to an anchor of the page itself are left out."""
    prose = CODE_SPAN.sub("", FENCE.sub("", text))
    targets = []
    for match in LINK.finditer(prose):
        target = match.group(1).split("#", 1)[0]
        if target and not re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target):
            targets.append(target)
    return targets


def test_the_readme_is_a_newcomer_s_page():
    lines = README.read_text().splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines; move detail to docs/"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_points_at_a_file_that_exists(page):
    missing = [t for t in relative_links(page.read_text()) if not (page.parent / t).exists()]
    assert not missing, f"{page.relative_to(REPO)} links to missing files: {missing}"


def test_the_link_reader_sees_links_and_skips_code_urls_and_anchors():
    text = ("See [usage](docs/usage.md#training) and ![logo](img/a.png \"title\").\n"
            "`[not](a-link.md)` [web](https://example.org) [here](#top)\n"
            "```\n[in](fence.md)\n```\n")  # fmt: skip
    assert relative_links(text) == ["docs/usage.md", "img/a.png"]


def test_the_presets_table_states_the_planted_final_phase_the_code_sets():
    from sparling_genomics.tasks.planted_motifs import DEFAULTS

    final = DEFAULTS["train"]["final_samples"]
    row = next(line for line in (REPO / "docs" / "method.md").read_text().splitlines()
               if line.startswith("| `cpu` |"))  # fmt: skip
    assert f"{final // 1000}k final samples at the true density" in row
