"""Seed stability on hand-made families across three "seeds": the table it has always
written, the consensus read from exported run folders (sites included), one run not
measured, runs of another setting refused (the verb: tests/cli/test_cli.py)."""

import json

import numpy as np
import pytest

from sparling_genomics.errors import InputError
from sparling_genomics.export.families import MotifFamily, reverse_complement, write_family_sites
from sparling_genomics.export.formats import ExportedMotif, write_motif_files
from sparling_genomics.export.motif_summary import exported_family_sites, write_motifs_summary
from sparling_genomics.runners.stability import family_stability, seed_stability


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


def test_one_run_is_not_measured_rather_than_refused():
    result = family_stability([("seed0", families(0))])
    assert result["consensus"]["measured"] is False
    assert "not measured" in result["consensus"]["note"]
    assert result["fraction_reproduced"] is None and result["seeds"][0]["recurring"] is None
    assert [r["in_every_seed"] for r in result["table"]] == [None, None, None]


def planted_sites(seed: int) -> dict[str, np.ndarray]:
    """Where each family of :func:`families` fires on 50 test windows: the families of one
    signal at the same places in every seed (seed 2's on the other strand), a seed's own
    family at places of its own."""
    rng = np.random.default_rng(7)
    windows = np.arange(50)

    def at(low: int) -> np.ndarray:
        return np.stack([windows, rng.integers(low, low + 60, 50), np.ones(50, int)], axis=1)

    everywhere, two_only = at(10), at(90)
    own = [at(150) for _ in range(3)]
    out = {f"s{seed}_f00": everywhere * [1, 1, -1 if seed == 2 else 1],
           f"s{seed}_f02": own[seed]}  # fmt: skip
    if seed < 2:
        out[f"s{seed}_f01"] = two_only
    return out


def exported_family_run(root, seed: int, *, sites: bool = False, task: str = "planted",
                        fingerprint: str | None = None, channels: int = 4, name=None):  # fmt: skip
    """A run directory holding only what `stability` reads: its config (seed, task, data),
    inputs.json where ``fingerprint`` is given, and the exported families (their merged sites
    with ``sites``)."""
    run = root / (name or f"seed{seed}")
    folder = run / "motifs" / "families"
    folder.mkdir(parents=True)
    data = "data: {dataset: data.h5}\n" if fingerprint else "data: {length: 200}\n"
    (run / "config.yaml").write_text(f"seed: {seed}\ntask: {task}\n{data}")
    if fingerprint:
        (run / "inputs.json").write_text(json.dumps({"data.dataset": fingerprint}))
    fams = families(seed)
    write_motif_files(folder, fams)
    if sites:
        placed = planted_sites(seed)
        write_family_sites(folder / "sites.tsv.gz",
                           [MotifFamily(f, [], [], [], placed[f.id]) for f in fams])  # fmt: skip
    block = {"families": [{"id": f.id, "nsites": f.nsites, "name": None,
                           "composition": {"label": "motif"}} for f in fams]}  # fmt: skip
    write_motifs_summary(run / "motifs", {"motifs": [], "families": block, "split": "test",
                                          "silent_channels": list(range(channels))})
    return run


def test_the_consensus_of_exported_runs_matches_by_logo_and_by_sites(tmp_path):
    runs = [exported_family_run(tmp_path, s, sites=True) for s in range(3)]
    read = exported_family_sites(runs[2] / "motifs")
    assert read["s2_f00"].tolist() == (planted_sites(2)["s2_f00"]).tolist()
    out = tmp_path / "stability.json"
    result = seed_stability(runs, out)
    assert json.loads(out.read_text()) == result
    assert result["fraction_reproduced"] == pytest.approx(3 / 8, abs=1e-4)  # as it always was
    consensus = result["consensus"]
    assert [g["recurs"] for g in consensus["groups"]] == ["3 of 3", "2 of 3"]
    assert [g["recurs"] for g in consensus["not_reproduced"]] == ["1 of 3"] * 3
    first = consensus["groups"][0]
    assert first["members"] == {"seed0": ["s0_f00"], "seed1": ["s1_f00"], "seed2": ["s2_f00"]}
    assert first["composition"] == "motif" and first["site_support"] == 1.0
    rows = {r["family"]: r for r in consensus["families"]}
    assert rows["s2_f00"]["matches"]["seed0"]["sites"][0]["family"] == "s0_f00"
    assert rows["s0_f00"]["recurs_by_logo"] and rows["s0_f00"]["recurs_by_sites"]
    assert not rows["s0_f01"]["recurs_by_sites"]
    assert rows["s0_f01"]["matches"]["seed1"]["sites"][0]["family"] == "s1_f01"
    assert consensus["by_sites"]["recurring"] == consensus["by_logo"]["recurring"] == 3


def test_one_exported_run_says_reproducibility_was_not_measured(tmp_path):
    result = seed_stability([exported_family_run(tmp_path, 0)])
    assert result["consensus"]["measured"] is False and result["runs"] == [str(tmp_path / "seed0")]


@pytest.mark.parametrize("differs, words", [
    ({"task": "splicing"}, "another task"),
    ({"channels": 8}, "another motif channel count"),
    ({"fingerprint": "sha256:bbbb"}, "another dataset (genome)"),
])  # fmt: skip
def test_runs_of_another_setting_are_refused_naming_the_run(tmp_path, differs, words):
    same = {"fingerprint": "sha256:aaaa"} if "fingerprint" in differs else {}
    runs = [exported_family_run(tmp_path, 0, **same), exported_family_run(tmp_path, 1, **same),
            exported_family_run(tmp_path, 2, **differs)]  # fmt: skip
    with pytest.raises(InputError) as caught:
        seed_stability(runs, tmp_path / "stability.json")
    message = str(caught.value)
    assert message.startswith(f"{runs[2]}: {words} than {runs[0]}") and "\n" not in message
    assert not (tmp_path / "stability.json").exists()
