"""The motif set a run's motifs are named against: JASPAR (DNA binding motifs), the splicing
reference (RNA-level signals), or a user's MEME file.

The splicing reference is the annotated site PWM of every labelled class, built from the
training block of the run's own dataset (``genome/site_pwms.py``), plus the cited consensus
motifs of ``reference/splicing_motifs.meme`` (branch point, plant exonic-enhancer hexamers;
sources in ``reference/splicing_motifs.md``). Naming a splice-site motif after a plant
transcription factor is noise; naming it against the signals splicing uses is not.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import InputError
from ..genome.dataset import SiteDataset
from ..genome.pwm import aligned_kl, trim
from ..genome.references import REFERENCE_DIR
from ..genome.site_pwms import annotated_site_pwm
from .formats import read_meme_motifs
from .naming import DatabaseMotif

SPLICING_MOTIFS = REFERENCE_DIR / "splicing_motifs.meme"
#: Named choices of ``--reference-motifs``; anything else is a MEME file path.
REFERENCE_CHOICES = ("splicing", "jaspar")
ANNOTATED_PREFIX = "annotated_"


def annotated_site_motifs(
    dataset: SiteDataset, background: np.ndarray | None = None, trim_bits: float = 0.25
) -> tuple[list[DatabaseMotif], dict[str, np.ndarray]]:
    """Per site class of ``dataset``: the trimmed annotated PWM as a naming target, and the
    untrimmed one (31 columns) for KL comparisons."""
    targets, full = [], {}
    for kind in dataset.classes[1:]:
        probs, n = annotated_site_pwm(dataset, kind)
        full[kind] = probs
        lo, hi = trim(probs, trim_bits, background)
        targets.append(DatabaseMotif(f"{ANNOTATED_PREFIX}{kind}",
                                     f"{kind} (annotated, training block, {n} sites)",
                                     probs[lo:hi]))  # fmt: skip
    return targets, full


def motif_file_targets(path: Path) -> list[DatabaseMotif]:
    """Every motif of a MEME file as a naming target (id, alt name or id)."""
    out = []
    for key, probs in read_meme_motifs(Path(path)).items():
        parts = key.split()
        out.append(DatabaseMotif(parts[0], " ".join(parts[1:]) or parts[0], probs))
    return out


def splicing_reference(
    dataset: SiteDataset | None, background: np.ndarray | None = None
) -> tuple[list[DatabaseMotif], dict[str, np.ndarray]]:
    """The splicing reference's targets and the untrimmed annotated PWMs per class."""
    if dataset is None:
        raise InputError(
            "--reference-motifs splicing needs a site task with a dataset (its annotated "
            "site PWMs come from the dataset's training block); use jaspar or a MEME file"
        )
    annotated, full = annotated_site_motifs(dataset, background)
    return annotated + motif_file_targets(SPLICING_MOTIFS), full


def kl_to_annotated(probs: np.ndarray, annotated: dict[str, np.ndarray]) -> dict[str, dict]:
    """``{class: {'bits_per_column', 'offset'}}``: mean ``KL(motif || annotated)`` per column
    at the best alignment (``genome.pwm.aligned_kl``); offset = annotated column of the
    motif's first column minus the labelled base's column."""
    out = {}
    for kind, ref in annotated.items():
        bits, offset = aligned_kl(probs, ref)
        out[kind] = {"bits_per_column": round(bits, 4), "offset": offset - len(ref) // 2}
    return out
