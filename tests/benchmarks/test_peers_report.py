"""The peers section: its table and its verdicts, from a result of the benchmark's shape."""

from pathlib import Path

from benchmarks.headlines import SUMMARIES
from benchmarks.peer_comparison import agreement, loss_rates
from benchmarks.peers_report import markdown, verdicts


def result(sparling=0.85, baseline=0.90, spliceai=0.80, osai=0.905):
    e2e = lambda m: {"mean_topk": m, "donor_topk": m, "acceptor_topk": m,  # noqa: E731
                     "donor_pr_auc": m, "acceptor_pr_auc": m}
    return {
        "benchmark": "peers", "reference": "tair10-chr1", "context": 400,
        "command": "python -m benchmarks peers --out X",
        "machine": {"cpu": "cpu", "cores": 2, "torch_threads": 2, "memory_gb": 24,
                    "cuda": None, "python": "3.11", "torch": "2", "date": "2026-12-06"},
        "keras_check": {"worst": 3e-7, "inputs": 3, "outputs_each": 500},
        "models": {
            "sparling": {"e2e": e2e(sparling), "wall_seconds": 1380},
            "baseline": {"e2e": e2e(baseline), "wall_seconds": 1380},
            "spliceai": {"e2e": e2e(spliceai)},
            "openspliceai400": {"e2e": e2e(osai)},
        },
        "openspliceai_training": {"openspliceai400": {
            "seconds": 1380, "global_batch": 300, "batches_per_epoch": 600}},
        "variants": {"site_mutations": 4, "random_variants": 0, "allele_strands": 4, "models": {
            "baseline": {"allele_strands_per_second": 300.0, "loss": {
                "donor": {"sites": 2, "fraction_loss_at_least_0.5": 0.95},
                "acceptor": {"sites": 2, "fraction_loss_at_least_0.5": 0.91}},
                "agreement_with_spliceai": {"pooled": 0.8}},
        }},
    }  # fmt: skip


def test_verdicts_state_each_comparison_with_its_figures():
    lines = "\n".join(verdicts(result()))
    assert "0.850 vs 0.800 mean top-k: **met**" in lines
    assert "0.900 vs 0.905 (gap +0.005): **met**" in lines
    assert "baseline 91.0%" in lines and "**met**" in lines.splitlines()[-2]
    lines = "\n".join(verdicts(result(sparling=0.79, osai=0.93)))
    assert "0.790 vs 0.800 mean top-k: **not met**" in lines
    assert "(gap +0.030): **not met**" in lines


def test_the_long_preset_counts_for_the_in_silico_floor():
    r = result()
    rates = r["variants"]["models"]
    rates["baseline"]["loss"]["acceptor"]["fraction_loss_at_least_0.5"] = 0.88
    assert "**not met**" in [x for x in verdicts(r) if "In-silico" in x][0]
    rates["baseline_long"] = {"loss": {
        "donor": {"sites": 2, "fraction_loss_at_least_0.5": 0.93},
        "acceptor": {"sites": 2, "fraction_loss_at_least_0.5": 0.92}}}  # fmt: skip
    line = [x for x in verdicts(r) if "In-silico" in x][0]
    assert "baseline_long 92.0%" in line and line.endswith("**met**.")


def test_the_table_has_a_row_per_model_and_the_summary_reads_it():
    text = markdown(result(), Path("bench_runs/peers/bench_peers.json"))
    rows = [line for line in text.splitlines() if line.startswith("| ") and "---" not in line]
    assert len(rows) == 1 + 4
    assert "OpenSpliceAI retrained, our baseline's wall time | 400 |" in text
    assert "23.0 (0.50 epochs)" in text
    assert "95.0% of 2" in text
    headline = SUMMARIES["peers"]([result()], "peers")
    assert headline.met is True and "SpliceAI 0.800" in headline.figure
    assert SUMMARIES["peers"]([result(spliceai=0.9)], "peers").met is False


def test_loss_rates_use_each_site_on_its_own_strand():
    scores = {("donor+0", "+"): (0, 0, 0, 0.7), ("donor+0", "-"): (0, 0, 0, 0.0),
              ("acceptor-1", "-"): (0, 0.2, 0, 0), ("r5", "+"): (0.9, 0.9, 0.9, 0.9)}
    rates = loss_rates(scores)
    assert rates["donor"] == {"sites": 1, "fraction_loss_at_least_0.5": 1.0}
    assert rates["acceptor"] == {"sites": 1, "fraction_loss_at_least_0.5": 0.0}


def test_agreement_is_pearson_over_shared_allele_strands():
    a = {(str(i), "+"): (i, 2 * i, i % 3, -i) for i in range(10)}
    b = dict(a) | {("x", "+"): (1, 1, 1, 1)}
    b[("0", "+")] = None
    out = agreement(a, b)
    assert out["allele_strands"] == 9 and out["pooled"] == 1.0 and out["DS_AG"] == 1.0


def test_a_step_is_kept_unless_the_data_it_made_is_gone(tmp_path):
    from benchmarks.peers import step

    calls = []
    data = tmp_path / "dataset.h5"

    def build():
        calls.append(1)
        data.write_text("x")
        return {"n": len(calls)}

    assert step(tmp_path, "dataset", build, needs=data) == {"n": 1}
    assert step(tmp_path, "dataset", build, needs=data) == {"n": 1}  # kept
    data.unlink()  # a fresh clone: the JSON is committed, the data ignored
    assert step(tmp_path, "dataset", build, needs=data) == {"n": 2}


def test_default_epoch_runs_are_set_beside_our_baselines():
    r = result()
    r["models"]["openspliceai400_default"] = {"e2e": {"mean_topk": 0.93}}
    r["models"]["baseline_long"] = {"e2e": {"mean_topk": 0.92}, "wall_seconds": 4140}
    r["openspliceai_training"]["openspliceai400_default"] = {
        "seconds": 2100, "global_batch": 600, "batches_per_epoch": 60, "flank": 400,
        "started_from": "bench_runs/peers/openspliceai400"}  # fmt: skip
    line = [x for x in verdicts(r) if "its defaults" in x][0]
    assert "(flank 400, 35.0 (10.00 epochs) min): 0.930" in line
    assert "non-sparse baseline (ours) 0.900 (23.0 min, gap +0.030)" in line
    assert "long preset (ours) 0.920 (69.0 min, gap +0.010)" in line
    text = markdown(r, Path("bench_runs/peers/bench_peers.json"))
    assert "continued the state of the budget run `bench_runs/peers/openspliceai400`" in text
    assert "default-epoch runs are scored on sites only" in text
    assert "default-epoch runs" not in markdown(result(), Path("bench_peers.json"))


def test_the_command_states_every_option_that_is_not_a_default():
    from benchmarks.peers import peers_command

    plain = peers_command(Path("P"), "tair10-chr1", 23.0, 0, (400, 2000), (), 400, 300, 0.0)
    assert plain == "python -m benchmarks peers --out P --reference tair10-chr1"
    full = peers_command(Path("P"), "tair10-chr1", 23.0, 0, (400,), (400,), 400, 300, 69.0)
    assert full.endswith("--long-minutes 69 --flanks 400 --default-epochs 400")


def test_default_epochs_take_flanks_of_the_retrained_ones():
    from click.testing import CliRunner

    from benchmarks.cli import main

    result = CliRunner().invoke(main, ["peers", "--out", "P", "--flanks", "400",
                                       "--default-epochs", "2000"])  # fmt: skip
    assert result.exit_code == 2 and "2000 not in --flanks" in result.output
    result = CliRunner().invoke(main, ["peers", "--out", "P", "--default-epochs", "80,x"])
    assert result.exit_code == 2 and "not a comma-separated list of flanks" in result.output


def test_a_peer_is_judged_by_its_better_reading():
    r = result(spliceai=0.70, osai=0.85)
    e2e = lambda m: {"mean_topk": m}  # noqa: E731
    r["models"]["spliceai_transcript"] = {"e2e": e2e(0.84)}
    r["models"]["openspliceai400_transcript"] = {"e2e": e2e(0.80)}  # worse: not used
    lines = verdicts(r)
    assert "SpliceAI off the shelf, read transcript by transcript (its better reading): " \
        "0.850 vs 0.840 mean top-k: **met**." in lines[0]
    assert "0.900 vs 0.850 (gap -0.050)" in lines[1] and "transcript" not in lines[1]
    r["models"]["spliceai_transcript"] = {"e2e": e2e(0.86)}
    assert verdicts(r)[0].endswith("**not met**.")
    assert SUMMARIES["peers"]([r], "peers").met is False
    text = markdown(r, Path("bench_runs/peers/bench_peers.json"))
    assert "| SpliceAI, 5 models, off the shelf; each transcript alone, N beyond (as trained) " \
        "| 10,000 |" in text


def test_variant_steps_keep_four_decimals():
    from benchmarks.peers import rounded

    assert rounded({"s": [["id", "+", 0.123456789, 1e-9]], "n": 3}) == {
        "s": [["id", "+", 0.1235, 0.0]], "n": 3}


def test_a_rate_counts_the_allele_strands_a_model_scored():
    from benchmarks.peer_comparison import summarize_variants

    prepared = {"site_mutations": 1, "random_variants": 1, "vcf": "v"}
    both = [["a", "+", 0, 0, 0, 0], ["r", "+", 0, 0, 0, 0]]
    one = [["a", "+", 0, 0, 0, 0], ["r", "+", None, None, None, None]]
    scored = {"spliceai": {"seconds": 2.0, "scores": both},
              "spliceai_transcript": {"seconds": 2.0, "scores": one}}
    models = summarize_variants(prepared, scored)["models"]
    assert models["spliceai"]["allele_strands_per_second"] == 1.0
    assert models["spliceai_transcript"]["allele_strands_per_second"] == 0.5
    assert models["spliceai_transcript"]["unscored"] == 1
    r = result()
    r["models"]["spliceai_transcript"] = {"e2e": {"mean_topk": 0.8}}
    r["variants"]["models"]["spliceai_transcript"] = {"allele_strands_per_second": 0.5, "loss": {}}
    row = [x for x in markdown(r, Path("x")).splitlines() if "(as trained)" in x][0]
    assert "| - |" in row and "0.5" not in row


def test_a_peer_step_stores_scores_in_the_order_of_the_allele_strands():
    import pytest

    from benchmarks.peer_comparison import compact_scores, expand_scores

    keys = [("a", "+"), ("a", "-"), ("r", "+")]
    full = {"seconds": 1.0, "scores": [["a", "+", 0.1, 0.2, 0.3, 0.4],
                                       ["a", "-", None, None, None, None],
                                       ["r", "+", 0, 0, 0, 0.5]]}  # fmt: skip
    small = compact_scores(full, keys)
    assert small["scores"] == [[0.1, 0.2, 0.3, 0.4], None, [0, 0, 0, 0.5]]
    assert expand_scores(small, keys) == full
    assert expand_scores(full, keys) is full  # a step written before: rows as they are
    with pytest.raises(ValueError, match="order"):
        compact_scores(full, keys[::-1])


def test_a_run_is_needed_again_only_for_the_steps_that_read_it():
    from benchmarks.peers import steps_of_run

    both = ("genome", "transcript")
    assert steps_of_run("openspliceai400", both) == [
        "openspliceai400", "openspliceai400_transcript", "variants_openspliceai400",
        "variants_openspliceai400_transcript"]  # fmt: skip
    assert steps_of_run("openspliceai2000_default", ("genome",)) == ["openspliceai2000_default"]
