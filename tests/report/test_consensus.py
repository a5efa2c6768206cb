"""The report's consensus section on hand-made ``stability`` JSON: the groups with how often
they recur and their effect spread, families of one seed listed apart, and the one-seed note."""

from sparling_genomics.report.consensus import consensus_section


def _group(gid, seeds, of, members, effects, label="nnCAGg", reads="motif"):
    values = [v for v in effects.values() if v is not None]
    mean = sum(values) / len(values) if values else None
    sd = None
    if len(values) > 1:
        sd = (sum((v - mean) ** 2 for v in values) / (len(values) - 1)) ** 0.5
    lead = next(label for label, ids in members.items() if ids)
    return {"id": gid, "seeds": seeds, "of": of, "recurs": f"{seeds} of {of}", "label": label,
            "name": None, "composition": reads,  # a label, as stability.json holds it
            "lead": {"seed": lead, "family": members[lead][0]}, "members": members,
            "effect": {"per_seed": effects, "mean": mean, "sd": sd}}  # fmt: skip


def _stability(groups, apart):
    return {"runs": ["/nonexistent/seed0", "/nonexistent/seed1", "/nonexistent/seed2"],
            "consensus": {
                "measured": True, "seeds": ["seed0", "seed1", "seed2"],
                "settings": {"q_threshold": 0.01}, "groups": groups, "not_reproduced": apart,
                "by_logo": {"families": 7, "recurring": 4, "effect_reproduced": 0.625,
                            "effect_reproduced_per_seed": {"seed0": 0.5, "seed1": 0.75,
                                                           "seed2": 0.625}},
                "by_sites": None}}  # fmt: skip


def test_groups_first_then_one_seed_families_apart():
    groups = [
        _group("c00", 3, 3, {"seed0": ["f00"], "seed1": ["f01", "f03"], "seed2": ["f00"]},
               {"seed0": 0.4, "seed1": 0.6, "seed2": 0.5}),
        _group("c01", 2, 3, {"seed0": ["f02"], "seed1": [], "seed2": ["f01"]},
               {"seed0": 0.1, "seed1": None, "seed2": 0.3}, label="TTTTT", reads="composition"),
    ]  # fmt: skip
    apart = [_group("c02", 1, 3, {"seed0": [], "seed1": ["f02"], "seed2": []},
                    {"seed0": None, "seed1": 0.05, "seed2": None}, label="GGTAAG")]
    page = "".join(consensus_section(_stability(groups, apart)))
    assert page.startswith("<h2>Families across seeds</h2>")
    assert "2 families come back in 2 or more seeds, <b>1 in every seed</b>" in page
    assert "seen in one seed only: 1 (listed apart)" in page and "<b>0.62</b>" in page
    table, rest = page.split("Not reproduced")
    assert table.index("c00") < table.index("c01") and "c02" not in table
    assert "3 of 3" in table and "2 of 3" in table
    assert "0.500 &plusmn; 0.100" in table  # mean and sample sd over the seeds it is in
    assert "0.200 &plusmn; 0.141" in table
    assert table.count("<figure class=seed-logo>") == 6  # one per member family, seed by seed
    assert "not found" in table  # c01 has no family in seed1
    assert "run not found" in table  # the runs are not on this machine: said, no crash
    assert "<span class=unnamed>composition</span>" in table
    assert "(1)" in rest and "GGTAAG" in rest and "seed1" in rest and "0.050" in rest


def test_one_seed_says_reproducibility_was_not_measured():
    one = {"consensus": {"measured": False, "note": "one seed: reproducibility was not "
                         "measured (train the setting with 2 or more seeds)",
                         "seeds": ["seed0"], "groups": [], "not_reproduced": []}}  # fmt: skip
    for stability in (one, None):
        page = "".join(consensus_section(stability))
        assert "Reproducibility was not measured" in page and "<table" not in page
    assert consensus_section({"seeds": [], "table": []}) == []  # made before the consensus


def test_renders_the_consensus_the_stability_verb_builds():
    """The section reads the JSON the real consensus code makes (composition as the label
    string, groups and families as ``family_stability`` writes them), not only hand-made
    dicts."""
    from sparling_genomics.runners.stability import family_stability
    from tests.export.test_consensus import three_seeds

    seeds = three_seeds()
    for seed in seeds:
        seed.composition = {f.id: "composition" if k == 0 else "motif"
                            for k, f in enumerate(seed.families)}  # fmt: skip
    stability = {"runs": [], **family_stability(seeds)}
    page = "".join(consensus_section(stability))
    table = page.split("Not reproduced")[0]
    groups = stability["consensus"]["groups"]
    assert all(g["id"] in table and g["recurs"] in table for g in groups)
    assert "<span class=unnamed>composition</span>" in table  # seed0's f00 leads the first group
    consensus = stability["consensus"]
    shown = [ids for g in consensus["groups"] + consensus["not_reproduced"]
             for ids in g["members"].values()]  # fmt: skip
    assert page.count("run not found") == sum(map(len, shown))
