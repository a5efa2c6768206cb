"""What the sections and the summary table call the things they compare: the concept
extractors of the concepts benchmark, and the readings of a peer in the peers benchmark.

Kept apart from the benchmarks that write them, as :mod:`benchmarks.floors` is, so that the
summary reads results with the same names as their sections without importing a benchmark.
"""

from __future__ import annotations

#: concepts: each method's label (Sparling's channels, and the extractors run on a non-sparse
#: model after training).
CONCEPT_LABELS = {
    "sparling": "Sparling's own channels", "modisco": "non-sparse + ISM + TF-MoDISco-lite",
    "sae": "non-sparse + TopK SAE", "bsf_vanilla": "non-sparse + BSF vanilla",
    "bsf_grassmannian": "non-sparse + BSF Grassmannian",
    "bsf_group_lasso": "non-sparse + BSF Group-Lasso", "deleuzian": "non-sparse + Deleuzian",
}  # fmt: skip

#: peers: a peer's second reading, each transcript alone with N beyond it (how the peers were
#: trained), is the model's name with this appended.
TRANSCRIPT = "_transcript"


def best_reading(mean: dict[str, float], name: str) -> str:
    """``name`` or its transcript reading, whichever scored the higher mean top-k."""
    return max((n for n in (name, name + TRANSCRIPT) if n in mean), key=mean.get)
