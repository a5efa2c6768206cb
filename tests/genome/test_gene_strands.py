from sparling_genomics.genome.gene_strands import GeneStrands


def test_strands_of_overlapping_genes_and_none_between_them():
    genes = GeneStrands([("c", 100, 5000, 1, "long"), ("c", 200, 300, -1, "short"),
                         ("c", 6000, 6100, 1, "far"), ("d", 0, 10, -1, "other")])  # fmt: skip
    assert genes.strands("c", 250, 251) == {1: ["long"], -1: ["short"]}
    assert genes.strands("c", 4000, 4001) == {1: ["long"]}  # a later start, an earlier gene
    assert genes.strands("c", 5000, 5001) == {}  # end is exclusive
    assert genes.strands("c", 4999, 6001) == {1: ["long", "far"]}
    assert genes.strands("x", 0, 1) == {}
    assert len(genes) == 4
