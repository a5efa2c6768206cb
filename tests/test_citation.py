"""CITATION.cff: valid Citation File Format fields, the package's version, the method's paper."""

import tomllib
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]


def test_citation_names_the_package_version_and_the_sparling_paper():
    cff = yaml.safe_load((REPO / "CITATION.cff").read_text())
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert cff["cff-version"] == "1.2.0" and cff["message"] and cff["authors"]
    assert cff["title"] == project["name"] and cff["version"] == project["version"]
    paper = cff["preferred-citation"]
    assert paper["type"] == "conference-paper" and paper["authors"] and paper["year"] == 2026
    assert paper["title"].startswith("Sparling: End-to-End Spatial Concept Learning")
    assert paper["url"].endswith("id=yfBs0GQxx9")
