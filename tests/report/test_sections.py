"""The report's identifiability section: a run from before the check says how to get it; a
checked run shows its verdict, each condition and each channel's alpha and density."""

from sparling_genomics.evaluate.identifiability import identifiability_verdict
from sparling_genomics.report.sections import identifiability_section


def test_a_run_from_before_the_check_is_marked_not_checked():
    text = "".join(identifiability_section(None))
    assert "<h2>Identifiability</h2>" in text and "Not checked" in text
    assert "sparling-genomics evaluate --model RUN" in text


def test_a_checked_run_shows_its_verdict_conditions_and_channels():
    block = identifiability_verdict(
        receptive_field=19, measured_density=0.004, true_density=0.002, error=0.05,
        necessity={"inputs": 512, "channels": ["0", "1", "core:donor"],
                   "alpha": [0.3, 0.0, 0.5], "density": [0.002, 0.0, 0.01]},
        annealing_complete=False,
    )  # fmt: skip
    assert block["status"] == "fails" and "annealing did not finish" in block["verdict"]
    assert "channel(s) 1 never change the output" in block["verdict"]
    text = "".join(identifiability_section(block))
    assert block["verdict"] in text
    for row in ("locality", "density = true density", "low end-to-end error",
                "motif necessity", "core:donor"):  # fmt: skip
        assert row in text
    assert "dead: 1;" in text and "annealing not complete" in text


def test_a_splicing_report_says_which_model_to_use_and_other_tasks_do_not():
    from sparling_genomics.report.sections import which_model_section

    text = "".join(which_model_section("splicing"))
    assert "<h2>Which model for a plant genome</h2>" in text
    for model in ("Sparling model", "non-sparse baseline", "<code>long</code> preset",
                  "OpenSpliceAI", "SpliceAI off the"):
        assert model in text
    assert 'section "Peers"' in text
    assert which_model_section("planted") == []
