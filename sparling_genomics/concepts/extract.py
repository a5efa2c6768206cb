"""One entry point over the extractors: ``extract(x, method, ...)`` -> :class:`Concepts`.

Methods: ``sae`` (TopK SAE), ``bsf_vanilla``, ``bsf_grassmannian``, ``bsf_group_lasso``
(block-sparse featurizers) and ``deleuzian``. Where the caller leaves ``block`` or ``k`` unset
they are chosen by minimum description length (``mdl.py``; the SAE's k likewise, its block
being 1); the Grassmannian and Group-Lasso featurizers, which start from a vanilla fit, are
shortlisted by vanilla short fits and chosen by their own full fits."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..errors import ConfigError
from .base import Concepts, FitSettings, check_activations
from .block_sparse import WARM_STARTED, fit_block_sparse
from .deleuzian import fit_deleuzian
from .mdl import choose_block_and_k, description_length
from .sae import fit_topk_sae

METHODS = ("sae", "bsf_vanilla", "bsf_grassmannian", "bsf_group_lasso", "deleuzian")


def extract(
    x: np.ndarray,
    method: str,
    concepts: int,
    *,
    block: int | None = None,
    k: int | None = None,
    settings: FitSettings | None = None,
    where: str = "activations",
) -> Concepts:
    """Fit ``method`` with ``concepts`` concepts (blocks) to activations ``x`` (n, d)."""
    if method not in METHODS:
        raise ConfigError(f"unknown concept method {method!r} (one of {', '.join(METHODS)})")
    settings = settings or FitSettings()
    check_activations(x, concepts, where, k=k)
    if method == "deleuzian":
        return fit_deleuzian(x, concepts, seed=settings.seed, where=where)
    if block is not None and block > x.shape[1]:
        raise ConfigError(f"{where}: block size {block} is larger than the {x.shape[1]} "
                          "activation features")  # fmt: skip

    def fit(b: int, kk: int, s: FitSettings) -> Concepts:
        if method == "sae":
            return fit_topk_sae(x, concepts, kk, s, where=where)
        return fit_block_sparse(x, method.removeprefix("bsf_"), concepts, b, kk, s, where=where)

    def vanilla(b: int, kk: int, s: FitSettings) -> Concepts:
        return fit_block_sparse(x, "vanilla", concepts, b, kk, s, where=where)

    if k is None or (block is None and method != "sae"):
        blocks = (1,) if method == "sae" else ((block,) if block else (1, 2, 4, 8))
        ks = (k,) if k else (1, 2, 3, 4, 6, 8)
        # The warm-started featurizers are scouted by their vanilla start (see mdl.py).
        warm = method.removeprefix("bsf_") in WARM_STARTED
        result, table = choose_block_and_k(x, fit, concepts, settings, blocks=blocks, ks=ks,
                                           scout_fit=vanilla if warm else None)  # fmt: skip
        chosen = {"block": result.block, "k": result.info.get("k")}
        result.info["mdl_choice"] = {"chosen": chosen, "candidates": table}
    else:
        result = fit(block or 1, k, replace(settings))
    result.info["description_length"] = description_length(result, x)
    return result
