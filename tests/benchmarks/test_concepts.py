"""The concepts benchmark's section: the synthetic table, and MDL's finalists where a run
recorded them (runs from before the two-stage choice did not)."""

import json
from pathlib import Path

from benchmarks.concepts import markdown

REPO = Path(__file__).resolve().parents[2]


def test_synthetic_section_shows_mdl_finalists_when_recorded():
    saved = json.loads((REPO / "bench_runs" / "concepts_i21" / "bench_concepts_synthetic.json")
                       .read_text())  # fmt: skip
    older = {**saved, "methods": [{k: v for k, v in r.items() if k != "mdl_finalists"}
                                  for r in saved["methods"]]}  # fmt: skip
    text = markdown({"synthetic": older}, Path("OUT"))
    assert "| bsf_vanilla@b4k3 | 24 x 4 | 3 | given |" in text and "finalists" not in text
    older["methods"][2]["mdl_finalists"] = [{"block": 4, "k": 3, "bits_per_row": 101.25},
                                            {"block": 8, "k": 3, "bits_per_row": 110.5}]
    text = markdown({"synthetic": older}, Path("OUT"))
    method = older["methods"][2]["method"]
    assert "MDL's finalists" in text and f"{method}: b4 k3 101.2, b8 k3 110.5" in text
    assert "bsf_vanilla: " in markdown({"synthetic": saved}, Path("OUT"))  # today's run has them
