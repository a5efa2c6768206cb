"""The families table: ranked by effect, with "no measurable effect" and the composition
label where motifs.json has them, and without those columns where it does not."""

from sparling_genomics.report.sections import families_section


def _summary(with_blocks: bool) -> dict:
    fams = [
        {"id": "r_f01", "consensus": "AGGTAAG", "width": 7, "bits": 9.1, "nsites": 50,
         "members": [{"id": "r_c03", "channel": 3, "nsites": 50, "shift": 0, "strand": "+"}]},
        {"id": "r_f00", "consensus": "nnTnnn", "width": 6, "bits": 1.2, "nsites": 900,
         "members": [{"id": "r_c01", "channel": 1, "nsites": 900, "shift": 0, "strand": "+"}]},
    ]  # fmt: skip
    block = {"count": 2, "families": fams, "settings": {}, "near_copies": {}}
    if with_blocks:
        fams[0]["effect"] = {"effect": 1.234, "measurable": True, "share": 0.9,
                             "drop": {"mean_topk": 0.2}}  # fmt: skip
        fams[1]["effect"] = {"effect": 0.0001, "measurable": False, "share": 0.0,
                             "drop": {"mean_topk": 0.0}}  # fmt: skip
        fams[0]["composition"] = {"label": "motif", "ratio": 0.05, "bits_per_column": 1.3}
        fams[1]["composition"] = {"label": "composition", "ratio": 0.97, "bits_per_column": 0.2}
        block["effects"] = {"windows": 64, "intact": {"mean_topk": 0.8}}
        block["composition"] = {"windows": 32, "threshold": 0.5}
    return {"families": block, "motifs": [{}, {}], "split": "test"}


def test_effect_and_composition_columns_follow_motifs_json(tmp_path):
    html = "\n".join(families_section(_summary(True), tmp_path))
    assert "effect (nats; top-k drop; share)" in html and "Ranked by effect" in html
    assert "1.234; 0.200; 90%" in html and "no measurable effect" in html
    assert ">motif</span> (0.05; 1.30)" in html and ">composition</span> (0.97; 0.20)" in html
    assert html.index("r_f01") < html.index("r_f00")  # motifs.json's order: by effect
    plain = "\n".join(families_section(_summary(False), tmp_path))
    assert "effect (nats" not in plain and "reads (shuffled" not in plain


def test_the_grammar_section_lists_preferred_spacings_and_marks_overlaps():
    from sparling_genomics.report.sections import grammar_section

    assert grammar_section({}) == ""
    grammar = {"bin_width": 5, "max_spacing": 100, "null": "B moved", "test": "Poisson",
               "pairs_tested": 4, "enriched": [
                   {"a": "f01", "b": "f00", "spacing": [20, 24], "observed": 40,
                    "expected": 4.2, "ratio": 9.5, "q": 1e-9, "overlap": False},
                   {"a": "f00", "b": "f02", "spacing": [0, 4], "observed": 90,
                    "expected": 3.0, "ratio": 30.0, "q": 1e-20, "overlap": True}]}  # fmt: skip
    html = grammar_section({"grammar": grammar})
    assert "Grammar between families" in html and "20..24" in html and "overlap" in html
    assert "No pair" in grammar_section({"grammar": {**grammar, "enriched": []}})


def test_a_family_logo_is_drawn_wide_from_its_pwm(tmp_path):
    import numpy as np

    from sparling_genomics.report.html import logo_cell

    pwm = np.full((6, 4), 0.1)
    pwm[np.arange(6), [0, 2, 2, 3, 0, 1]] = 0.7
    cell = logo_cell({"id": "r_f00", "nsites": 10}, tmp_path, {"r_f00": pwm}, css="family-logo")
    assert cell.startswith("<img class=family-logo") and "data:image/png;base64," in cell
