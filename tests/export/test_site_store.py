"""Sites spilled to disk: read back in genome order, pieces joined, the same tracks."""

import numpy as np

from sparling_genomics.export.formats import ExportedMotif
from sparling_genomics.export.scan import SiteTable, scan_genome
from sparling_genomics.export.site_store import SiteStore
from sparling_genomics.export.tracks import write_tracks
from sparling_genomics.genome.fasta import Genome
from tests.export.test_scan import model  # noqa: F401  (the module's scan model fixture)


def table(seqid, n, seed):
    rng = np.random.default_rng(seed)
    return SiteTable(seqid, np.sort(rng.integers(0, 1000, n)), rng.integers(0, 4, n, np.int16),
                     rng.choice([-1, 1], n).astype(np.int8), rng.random(n, np.float32))


def test_tables_come_back_in_genome_order_with_pieces_joined(tmp_path):
    folder = tmp_path / ".sites"
    with SiteStore(folder, ["a", "b", "c"]) as store:
        parts = [table("c", 5, 0), table("a", 3, 1), table("c", 4, 2), table("b", 0, 3)]
        for t in parts:
            store.add(t)
        assert store.sites == 12 and len(store) == 3
        for _ in range(2):  # read as often as the writers need
            back = list(store)
            assert [t.seqid for t in back] == ["a", "b", "c"]
            assert len(back[1]) == 0
            for field in ("position", "channel", "strand", "score"):
                want = np.concatenate([getattr(parts[0], field), getattr(parts[2], field)])
                assert np.array_equal(getattr(back[2], field), want)
                assert getattr(back[2], field).dtype == getattr(parts[0], field).dtype
        assert folder.is_dir()
    assert not folder.exists()


def test_a_folder_left_by_a_killed_scan_is_replaced(tmp_path):
    folder = tmp_path / ".sites"
    folder.mkdir()
    (folder / "position.bin").write_bytes(b"stale bytes")
    with SiteStore(folder, ["a"]) as store:
        store.add(table("a", 2, 0))
        assert len(next(iter(store))) == 2


def test_tracks_from_the_store_are_the_tracks_from_memory(model, tmp_path):  # noqa: F811
    rng = np.random.default_rng(5)
    letters = np.array(list("ACGT"))
    fasta = tmp_path / "g.fa"
    fasta.write_text("".join(f">{s}\n{''.join(letters[rng.integers(0, 4, n)])}\n"
                             for s, n in (("x", 3000), ("y", 120), ("z", 2200))))  # fmt: skip
    genome = Genome(fasta)
    in_memory = scan_genome(model, genome, chunk=1000)
    motifs = [ExportedMotif(id=f"m{c}", probs=np.full((5, 4), 0.25), nsites=10, channel=c)
              for c in range(4)]  # fmt: skip
    offsets = {c: 0 for c in range(4)}
    rf = int(model.g.receptive_field)
    with SiteStore(tmp_path / ".sites", list(genome.lengths)) as store:
        assert scan_genome(model, genome, chunk=1000, keep=store.add) == []
        assert store.sites == sum(len(t) for t in in_memory) > 0
        for name, tables in (("memory", in_memory), ("store", store)):
            write_tracks(tmp_path / f"{name}.bed", tmp_path / f"{name}.bb", tables, motifs,
                         offsets, rf, genome.lengths, track_name="t")  # fmt: skip
    assert (tmp_path / "memory.bed").read_bytes() == (tmp_path / "store.bed").read_bytes()
    assert (tmp_path / "memory.bb").read_bytes() == (tmp_path / "store.bb").read_bytes()
