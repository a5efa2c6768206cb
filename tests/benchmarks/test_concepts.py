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


def test_rejudge_adds_recovery_against_the_planted_pwms_from_the_motif_files(tmp_path):
    import shutil

    from benchmarks.concepts import rejudge_planted

    # The default set as first benchmarked (both runs stopped at 1200 s), kept in the archive.
    saved = REPO / "bench_runs" / "archive" / "concepts_i21_default_1200s"
    found = json.loads((saved / "bench_concepts_planted-default.json").read_text())
    entry = found["sets"]["default"]
    entry["methods"] = {m: {k: v for k, v in entry["methods"][m].items() if k != "truth"}
                        for m in ("sparling", "modisco")}  # as judged before the truth rule
    (tmp_path / "bench_concepts_planted-default.json").write_text(json.dumps(found))
    for source, target in (("default_sparling/motifs", "default_sparling/motifs"),
                           ("default_concepts/modisco", "default_concepts/modisco")):
        (tmp_path / target).mkdir(parents=True)
        shutil.copy(saved / source / "motifs.meme", tmp_path / target / "motifs.meme")
    older = markdown({"planted": {**found, "train_seconds": 1.0}}, Path("OUT"))
    assert "| Sparling's own channels | - | - | - | 2 / 6 |" in older
    assert rejudge_planted(tmp_path) == ["default"]
    again = json.loads((tmp_path / "bench_concepts_planted-default.json").read_text())
    methods = again["sets"]["default"]["methods"]
    assert methods["modisco"]["truth"]["recovered_count"] == 6
    assert methods["modisco"]["truth"]["spurious"] == 0
    # Sparling's TCP and bZIP channels best match a sibling in JASPAR, yet are the planted ones.
    assert methods["sparling"]["recovered_count"] == 2
    assert methods["sparling"]["truth"]["recovered_count"] >= 4
    text = markdown({"planted": {**again, "train_seconds": 1.0}}, Path("OUT"))
    assert "| non-sparse + ISM + TF-MoDISco-lite | 6 / 6 | 0 / 6 | 0 | 3 / 6 |" in text


def test_head_to_head_gives_the_non_sparse_run_as_many_samples_as_sparling_saw(monkeypatch):
    import benchmarks.concepts as bench

    seen = []

    def fake_run(out, config):
        seen.append((out.name, config))
        return {"samples_seen": 123_456}

    monkeypatch.setattr(bench, "run_or_resume", fake_run)
    runs = bench.trained_runs(Path("OUT"), "default", ["MA0573.2"])
    assert list(runs) == ["sparling", "baseline"]
    (first, sparse), (second, dense) = seen
    assert first == "default_sparling" and second == "default_baseline"
    assert dense.train.max_samples == 123_456 and not dense.model.sparse_layer
    assert sparse.train.max_samples > 1_000_000 and sparse.model.sparse_layer
    assert sparse.train.max_seconds == dense.train.max_seconds == bench.TRAIN_SECONDS


def test_each_planted_set_names_the_extractor_code_it_was_run_with():
    path = REPO / "bench_runs" / "concepts_i21" / "bench_concepts_planted-default.json"
    saved = json.loads(path.read_text())
    code = saved["sets"]["default"]["concepts_code"]
    assert f"Extractors: `sparling_genomics/concepts` as of {code}." in markdown(
        {"planted": saved}, Path("OUT"))
    del saved["sets"]["default"]["concepts_code"]  # sets run before it was recorded
    assert "Extractors:" not in markdown({"planted": saved}, Path("OUT"))
