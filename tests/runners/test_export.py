"""`export` on a tiny planted run: the files, the summary, the families, the core channels."""

from sparling_genomics.export.motif_summary import read_motifs_summary


def test_export_writes_every_format_and_a_summary(planted_tiny):
    out = planted_tiny.run / "motifs"
    summary = read_motifs_summary(out)
    names = {"motifs.meme", "motifs.jaspar", "motifs.transfac", "motifs.homer", "tomtom.tsv",
             "motifs.json", "logos"}  # fmt: skip
    assert names <= {p.name for p in out.iterdir()}
    ids = [m["id"] for m in summary["motifs"]]
    assert len(ids) + len(summary["silent_channels"]) == 6
    for m in summary["motifs"]:
        assert (out / "logos" / f"{m['id']}.png").is_file()
        assert 0 < m["best_match"]["p_value"] <= 1
        assert m["name"] is None or m["best_match"]["q_value"] < 0.05
    assert 0.0 <= summary["shuffled_control"]["false_match_rate"] <= 1.0


def test_missing_checkpoint_is_one_line_error(cli, tmp_path):
    (tmp_path / "config.yaml").write_text("task: planted\n")
    result = cli("export", "--model", tmp_path)
    assert result.returncode == 2 and "has no checkpoints/final.pt" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_export_clusters_the_motifs_into_families(planted_tiny):
    from sparling_genomics.export.formats import read_meme_motifs

    out = planted_tiny.run / "motifs"
    summary = read_motifs_summary(out)
    block = summary["families"]
    members = [m["id"] for f in block["families"] for m in f["members"]]
    assert sorted(members) == sorted(m["id"] for m in summary["motifs"])  # each in one family
    for f in block["families"]:
        assert all(m["family"] == f["id"] for m in summary["motifs"] if m["id"] in
                   {x["id"] for x in f["members"]})  # fmt: skip
        assert 0 < f["nsites"] <= f["member_sites"]  # merged sites: de-duplicated
        assert (out / "families" / "logos" / f"{f['id']}.png").is_file()
    meme = read_meme_motifs(out / block["files"]["meme"])
    assert [k.split()[0] for k in meme] == [f["id"] for f in block["families"]]
    assert {"jaspar", "transfac", "homer", "sites", "tomtom"} <= set(block["files"])
    assert 0.0 <= block["near_copies"]["fraction"] <= 1.0


def test_core_channels_are_exported_marked_and_named_for_their_class(cli, tiny_dataset, tmp_path):
    run = tmp_path / "run"
    trained = cli("train", "--task", "splicing", "--preset", "tiny", "--dataset", tiny_dataset,
                  "--out", run, "--no-progress", "--set", "train.core_samples=2000")  # fmt: skip
    assert trained.returncode == 0, trained.stderr
    exported = cli("export", "--model", run, "--min-sites", "1")
    assert exported.returncode == 0, exported.stderr
    summary = read_motifs_summary(run / "motifs")
    marked = {m["channel"]: m["core"] for m in summary["motifs"] if m["core"]}
    assert marked == {8: "acceptor", 9: "donor"}  # after the 8 learned channels
    meme = (run / "motifs" / "motifs.meme").read_text()
    assert "MOTIF sparling_c08 core_acceptor" in meme and "MOTIF sparling_c09 core_donor" in meme
