"""Seed stability on hand-made families across three "seeds" (the verb: tests/cli/test_cli.py)."""

import numpy as np
import pytest

from sparling_genomics.errors import InputError
from sparling_genomics.export.families import reverse_complement
from sparling_genomics.export.formats import ExportedMotif, write_motif_files
from sparling_genomics.export.motif_summary import write_motifs_summary
from sparling_genomics.runners.stability import family_stability


def pwm(seq: str, p: float = 0.85) -> np.ndarray:
    out = np.full((len(seq), 4), (1 - p) / 3)
    for i, base in enumerate(seq):
        out[i, "ACGT".index(base)] = p
    return out


EVERYWHERE = "TGACCTAGGCAT"  # in all three seeds (on the other strand in one)
TWO_ONLY = "GGGAAACCCTTT"  # in seeds 0 and 1 only
SINGLE = ["ATATCGCGTAGC", "CCTTGAGTCAAG", "GTGTACACTTCA"]  # one of its own per seed


def families(seed: int) -> list[ExportedMotif]:
    out = [ExportedMotif(f"s{seed}_f00", pwm(EVERYWHERE) if seed != 2
                         else reverse_complement(pwm(EVERYWHERE[1:])), 100)]  # fmt: skip
    if seed < 2:
        out.append(ExportedMotif(f"s{seed}_f01", pwm(TWO_ONLY), 50))
    out.append(ExportedMotif(f"s{seed}_f02", pwm(SINGLE[seed]), 20))
    return out


def test_a_family_in_every_seed_counts_one_in_two_seeds_does_not():
    result = family_stability([(f"seed{s}", families(s)) for s in range(3)])
    table = {(r["seed"], r["family"]): r for r in result["table"]}
    assert table[("seed0", "s0_f00")]["in_every_seed"]
    assert table[("seed2", "s2_f00")]["matches"]["seed0"]["strand"] == "-"
    assert table[("seed0", "s0_f00")]["matches"]["seed1"]["family"] == "s1_f00"
    assert not table[("seed0", "s0_f01")]["in_every_seed"]
    assert table[("seed0", "s0_f01")]["matches"]["seed1"]["family"] == "s1_f01"
    assert table[("seed0", "s0_f01")]["matches"]["seed2"] is None
    assert not any(table[(f"seed{s}", f"s{s}_f02")]["in_every_seed"] for s in range(3))
    assert [s["recurring"] for s in result["seeds"]] == [1, 1, 1]
    assert [s["families"] for s in result["seeds"]] == [3, 3, 2]
    assert result["fraction_reproduced"] == pytest.approx(3 / 8, abs=1e-4)


def test_the_effect_carried_by_recurring_families_is_weighed_by_effect():
    seeds = [(f"seed{s}", families(s)) for s in range(3)]
    for _, fams in seeds:
        for f in fams:  # the recurring family carries most of each seed's effect
            f.effect = 3.0 if f.id.endswith("_f00") else 1.0
    result = family_stability(seeds)
    assert [s["effect_reproduced"] for s in result["seeds"]] == [0.6, 0.6, 0.75]
    assert result["effect_reproduced"] == pytest.approx(0.65, abs=1e-4)
    assert family_stability([(f"seed{s}", families(s)) for s in range(2)])["effect_reproduced"] \
        is None  # no effects measured: not a figure


def test_one_run_is_refused():
    with pytest.raises(InputError, match="at least 2 runs"):
        family_stability([("seed0", families(0))])


def exported_family_run(root, seed: int):
    """A run directory holding only what `stability` reads: config seed and the families."""
    run = root / f"seed{seed}"
    folder = run / "motifs" / "families"
    folder.mkdir(parents=True)
    (run / "config.yaml").write_text(f"seed: {seed}\n")
    fams = families(seed)
    write_motif_files(folder, fams)
    block = {"families": [{"id": f.id, "nsites": f.nsites, "name": None} for f in fams]}
    write_motifs_summary(run / "motifs", {"motifs": [], "families": block})
    return run
