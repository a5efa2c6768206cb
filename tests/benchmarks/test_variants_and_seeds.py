"""The variants and seeds benchmarks' pure parts: site mutations change the right bases in
transcript orientation; the truth table reads the verb's files; seeds refuse mixed settings."""

import json

import pytest

from benchmarks.seeds import family_row, floor_verdict, run_seeds_benchmark, waste_figures
from benchmarks.variants import _markdown, _mean_spacing, _truth, random_variants, site_mutations
from sparling_genomics.errors import InputError
from sparling_genomics.export.motif_summary import write_motifs_summary
from sparling_genomics.genome.fasta import Genome
from sparling_genomics.genome.sequence import decode, encode, reverse_complement_codes
from tests.conftest import REPO, TINY_FASTA, TINY_GFF

#: The variants benchmark's record for the splicing preset's model (docs/bench-runs.md).
SAVED_VARIANTS = REPO / "bench_runs" / "variants_shared_budget" / "bench_variants.json"


def test_site_mutations_replace_gt_and_ag_on_the_transcript_strand():
    genome = Genome(TINY_FASTA)
    sites, introns = site_mutations(genome, TINY_GFF, {"NC_003070.9": (200_000, None)})
    assert sites and introns
    for seqid, pos, vid, ref, alt in sites:
        assert decode(genome.fetch(seqid, pos, pos + 2)) == ref
        strand = vid[5] if vid.startswith("donor") else vid[8]
        read = ref if strand == "+" else decode(reverse_complement_codes(encode(ref)))
        new = alt if strand == "+" else decode(reverse_complement_codes(encode(alt)))
        assert (read, new) in {("GT", "CA"), ("AG", "TC")}
        assert pos >= 200_000


def test_random_variants_report_the_spacing_they_got_not_the_one_asked():
    genome = Genome(TINY_FASTA)
    blocks = {"NC_003070.9": (200_000, None)}
    room = random_variants(genome, blocks, 1000, 30)  # 30 kb asked, 100 kb there
    assert 25 < _mean_spacing(room) <= 30 and all(200_000 <= r[1] < 230_000 for r in room)
    cramped = random_variants(genome, blocks, 10_000, 30)  # 300 kb asked, ~100 kb there
    assert 8 < _mean_spacing(cramped) <= 10
    assert _mean_spacing(cramped[:1]) is None


def test_markdown_names_the_spacing_got_and_a_named_sections_size():
    saved = json.loads(SAVED_VARIANTS.read_text())
    text = _markdown(saved, "RUN", "OUT", 100_000)
    assert "one per 30 bp" in text and "random variants" not in text.splitlines()[0]
    saved["throughput"]["mean_spacing"] = 9.1
    saved["section"] = "variants 1M"
    text = _markdown(saved, "RUN", "OUT", 1_000_000)
    assert "one per 9.1 bp" in text and text.splitlines()[0].endswith(", 1,000,000 random variants")


def test_markdown_without_truth_says_so_and_shows_no_truth_table():
    saved = json.loads(SAVED_VARIANTS.read_text())
    saved["truth"], saved["truth_compare"] = None, None
    text = _markdown(saved, "RUN", "OUT", 100_000)
    assert "in-silico truth" not in text.splitlines()[0] and "--no-truth" in text
    assert "core family named destroyed" not in text and "not run here" in text
    assert "peak RSS" in text


def test_truth_counts_losses_and_the_core_family(tmp_path):
    scores = tmp_path / "variant_scores.tsv"
    head = "chrom\tpos\tid\tref\talt\tstrand\tgenes\tDS_AG\tDS_AL\tDS_DG\tDS_DL\tmax_delta"
    scores.write_text("\n".join([head,
        "c\t1\tdonor+0\tGT\tCA\t+\tg\t0\t0\t0\t0.9\t0.9",
        "c\t1\tdonor+0\tGT\tCA\t-\tg\t0\t0\t0\t0.1\t0.1",  # the other strand: not counted
        "c\t9\tdonor-1\tAC\tTG\t-\tg\t0\t0\t0.2\t0.3\t0.3",
        "c\t5\tacceptor+2\tAG\tTC\t+\tg\t0\t0.7\t0\t0\t0.7",
        "c\t7\tintron+3\tA\tC\t+\tg\t0.004\t0\t0\t0\t0.004"]) + "\n")  # fmt: skip
    changes = tmp_path / "motif_changes.tsv"
    changes.write_text("id\tstrand\tfamily\teffect\n" "donor+0\t+\tf1:annotated_donor\tdestroyed\n"
                       "acceptor+2\t+\tf2\tweakened\n")  # fmt: skip
    write_motifs_summary(tmp_path, {"motifs": [{"core": "donor", "family": "f1"},
                                               {"core": "acceptor", "family": "f2"},
                                               {"core": None}]})  # fmt: skip
    t = _truth(scores, changes, tmp_path)
    assert t["donor"] == {"sites": 2, "loss_at_least_0.5": 1, "core_destroyed": 1,
                          "fraction_loss_at_least_0.5": 0.5, "fraction_core_destroyed": 0.5}
    assert t["acceptor"]["loss_at_least_0.5"] == 1 and t["acceptor"]["core_destroyed"] == 0
    assert t["intron_midpoints"] == {"snvs": 1, "median_max_delta": 0.004,
                                     "p95_max_delta": 0.004}  # fmt: skip


def test_seeds_refuses_runs_of_different_settings(tmp_path):
    for name, channels in (("a", 8), ("b", 16)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "config.yaml").write_text(
            f"task: splicing\nseed: 0\nmodel:\n  motif_channels: {channels}\n")
    with pytest.raises(InputError, match="differs from .* beyond the seed: model.motif_channels"):
        run_seeds_benchmark([tmp_path / "a", tmp_path / "b"], tmp_path / "out")


def test_waste_figures_count_copies_never_needed_learned_channels_and_the_biggest_family():
    summary = {
        "motifs": [{"id": f"m{c}", "channel": c, "core": None} for c in range(4)]
        + [{"id": "m4", "channel": 4, "core": "donor"}],
        "families": {"near_copies": {"fraction": 0.2},
                     "families": [{"members": [{"id": "m0"}, {"id": "m1"}, {"id": "m4"}]},
                                  {"members": [{"id": "m2"}]}]},
    }  # fmt: skip
    metrics = {"identifiability": {"conditions": {"necessity": {
        "inputs": 64, "unnecessary": ["1", "3", "4"]}}}}  # fmt: skip
    figures = waste_figures(metrics, summary)
    # channel 4 is the core's: not counted; the first family holds 2 of the 4 learned
    assert figures == {"near_copy_fraction": 0.2, "never_needed": 2, "never_needed_inputs": 64,
                       "largest_family_share": 0.5}
    assert waste_figures({}, summary)["never_needed"] is None
    seeds = [{"seed": 0, "x": 0.1}, {"seed": 1, "x": 0.3}]
    assert floor_verdict(seeds, "x", 0.25) == "missed on seed 1"
    assert floor_verdict(seeds[:1], "x", 0.25) == "met"
    assert floor_verdict([{"seed": 0, "x": None}], "x", 1) == "not measured on every seed"


def test_family_row_names_composition_families_the_branch_window_and_the_top_spacing():
    seed = {"seed": 1, "composition_families": ["f00"], "composition_channels": {"f00": 12},
            "composition_effect_share": 0.163, "intron_branch_families": ["f02", "f07"],
            "top_spacing": {"a": "f08", "b": "f01", "spacing": [-10, -6], "ratio": 3.302,
                            "q": 0.0}, "consensus": {"f00": "nnTaan", "f08": "gtAA"}}  # fmt: skip
    assert family_row(seed) == ("| 1 | `nnTaan` (12) | 16% | f02, f07 | f01 -10..-6 nt from "
                                "`gtAA` (x3.3) |")
    assert family_row({"seed": 2}) == "| 2 | - | - | - | - |"
