"""The concepts benchmark's splicing part: one method's figures from its motifs.json-shaped
summary, and the section's rows."""

from benchmarks.concepts_splicing import method_figures, splicing_markdown
from benchmarks.labels import CONCEPT_LABELS


def _summary(prefix: str, core: bool = False) -> dict:
    donor = "annotated_donor donor (annotated, training block, 10 sites)"
    motifs = [{"id": f"{prefix}_c00", "name": donor, "core": None},
              {"id": f"{prefix}_c01", "name": None, "core": None},
              {"id": f"{prefix}_c02", "name": "annotated_acceptor acceptor",
               "core": "acceptor" if core else None}]  # fmt: skip
    families = [
        {"id": f"{prefix}_f00", "consensus": "GTAAG", "nsites": 50, "name": donor,
         "best_match": {"target_id": "annotated_donor"}, "members": [{"id": f"{prefix}_c00"}]},
        {"id": f"{prefix}_f01", "consensus": "TTTT", "nsites": 40, "name": None,
         "best_match": None, "members": [{"id": f"{prefix}_c01"}]},
        {"id": f"{prefix}_f02", "consensus": "CAG", "nsites": 30,
         "name": "annotated_acceptor acceptor", "best_match": None,
         "members": [{"id": f"{prefix}_c02"}]},
    ]  # fmt: skip
    return {"motifs": motifs, "silent_concepts": [3],
            "families": {"families": families, "near_copies": {"redundant": [f"{prefix}_c01"]}},
            "shuffled_control": {"false_matches": 1, "motifs": 3}}  # fmt: skip


def test_a_methods_figures_name_its_site_families():
    r = method_figures(_summary("sae"), 12.34)
    assert (r["exported"], r["silent"], r["learned_families"]) == (3, 1, 3)
    assert r["donor_families"] == ["sae_f00"] and r["acceptor_families"] == ["sae_f02"]
    assert r["branch_point_named"] == [] and r["redundant_learned"] == 1
    assert (r["named"], r["shuffled_named"], r["seconds"]) == (2, 1, 12.3)


def test_a_supplied_core_family_does_not_count_as_found():
    """Sparling's supplied acceptor core is not a motif the method found."""
    r = method_figures(_summary("sparling", core=True), 1.0)
    assert r["acceptor_families"] == [] and r["learned_families"] == 2


def test_the_section_has_a_row_and_families_per_method():
    training = {"mean_topk": 0.8, "seconds": 100.0, "samples": 1000, "stopped_by": "time",
                "density": 0.0017}  # fmt: skip
    part = {"training": {"sparling": training, "baseline": training}, "rows": 10, "fit_rows": 5,
            "steps": 3, "modisco_windows": 2,
            "methods": {"sparling": method_figures(_summary("sparling", core=True), 1.0),
                        "sae": method_figures(_summary("sae"), 2.0)}}  # fmt: skip
    text = "\n".join(splicing_markdown(part, CONCEPT_LABELS))
    assert "| non-sparse + TopK SAE | 3 (1) | 3 | f00 | f02 | - | - | - | 1 | 2 / 1 of 3 |" in text
    assert "| Sparling's own channels | 3 (1) | 2 | f00 | - |" in text
    assert "| non-sparse + TopK SAE | sae_f01 | `TTTT` | 40 | - (no) | - |" in text


def test_a_read_export_keeps_the_seconds_of_the_run_that_made_it(tmp_path):
    import json

    from benchmarks.concepts_splicing import earlier_export_seconds
    from sparling_genomics.export.motif_summary import write_motifs_summary

    assert earlier_export_seconds(tmp_path) is None  # nothing earlier
    (tmp_path / "bench_concepts_splicing.json").write_text(
        json.dumps({"methods": {"sparling": {"seconds": 238.4}}}))
    assert earlier_export_seconds(tmp_path) is None  # no export to read
    motifs = tmp_path / "splicing_sparling" / "motifs"
    motifs.mkdir(parents=True)
    write_motifs_summary(motifs, {"motifs": []})
    assert earlier_export_seconds(tmp_path) == 238.4
