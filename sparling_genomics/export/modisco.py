"""The post-hoc genomics baseline: in-silico saturation mutagenesis of a trained DNA model
(``tangermeme``), then TF-MoDISco-lite (``modisco-lite``) patterns, exported as motifs the
way ``concepts`` exports its concepts.

The attributed output is the model's expected number of called sites (or CTC symbols) in a
window: the sum over output positions of ``1 - p(no site)`` (class 0: the background class,
or the CTC blank). Attributions are hypothetical (each base's effect, mean-centred over the
four bases at each position), as TF-MoDISco wants them; the observed base's share is the
contribution. Patterns of the positive metacluster (bases that raise the output) are the
motifs; negative patterns are counted in the summary, not exported. Each pattern's PPM is
trimmed against the sequences' base composition and named by Tomtom against the run's
reference; its seqlets are its sites (``sites.bed``)."""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from ..evaluate.positions import PositionSettings, enrichment_by_motif
from ..genome.pwm import trim
from ..io import write_text_atomic
from .concept_sites import bed_line, concept_families, motif_entry, sorted_bed
from .formats import ExportedMotif, write_motif_files
from .logos import write_logos
from .naming import name_motifs, write_tomtom


class ExpectedSites(nn.Module):
    """``(N, 4, L) -> (N, 1)``: a model's expected count of non-background calls."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        logits = self.model(x)["logits"].float()
        return (1.0 - torch.softmax(logits, dim=1)[:, 0]).sum(-1, keepdim=True)


def hypothetical_attributions(model: nn.Module, x: np.ndarray, *, batch_size: int = 64,
                              device=None) -> np.ndarray:  # fmt: skip
    """Saturation-mutagenesis hypothetical attributions ``(N, 4, L)`` of the expected site
    count of ``model`` on one-hot ``x``."""
    import warnings

    from tangermeme.saturation_mutagenesis import saturation_mutagenesis

    wrapped = ExpectedSites(model).eval()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its fast-path notices; results are checked there
        out = saturation_mutagenesis(wrapped, torch.from_numpy(np.ascontiguousarray(x)).float(),
                                     batch_size=batch_size, hypothetical=True, device=device)
    return out.detach().cpu().numpy().astype(np.float32)


def modisco_patterns(x: np.ndarray, hyp: np.ndarray, *, max_seqlets: int = 20_000,
                     window: int = 21) -> tuple[list, list]:  # fmt: skip
    """TF-MoDISco-lite's (positive, negative) patterns of inputs ``x`` (N, 4, L) and
    hypothetical attributions ``hyp`` (N, 4, L)."""
    from modiscolite.tfmodisco import TFMoDISco

    one_hot = np.ascontiguousarray(x.transpose(0, 2, 1), np.float32)
    contribs = np.ascontiguousarray(hyp.transpose(0, 2, 1), np.float32)
    pos, neg = TFMoDISco(one_hot=one_hot, hypothetical_contribs=contribs,
                         max_seqlets_per_metacluster=max_seqlets, sliding_window_size=window,
                         flank_size=5, verbose=False)  # fmt: skip
    return list(pos or []), list(neg or [])


def pattern_motifs(patterns: list, background: np.ndarray, *, trim_bits: float = 0.25,
                   min_sites: int = 10) -> tuple[list[ExportedMotif], dict]:  # fmt: skip
    """Exported motifs of the patterns (PPMs trimmed) and per motif its seqlets as rows
    (window, begin, width, strand) of the trimmed span in the window's forward coordinates."""
    motifs, sites = [], {}
    for i, pattern in enumerate(patterns):
        if len(pattern.seqlets) < min_sites:
            continue
        probs = np.asarray(pattern.sequence, np.float64)
        probs = probs / np.maximum(probs.sum(1, keepdims=True), 1e-12)
        lo, hi = trim(probs, trim_bits, background)
        m = ExportedMotif(f"modisco_p{i:02d}", probs[lo:hi], len(pattern.seqlets), channel=i,
                          offset=lo)  # fmt: skip
        rows = []
        for s in pattern.seqlets:
            if s.is_revcomp:  # the pattern reads the seqlet's reverse strand
                rows.append((s.example_idx, s.end - hi, hi - lo, -1))
            else:
                rows.append((s.example_idx, s.start + lo, hi - lo, 1))
        motifs.append(m)
        sites[i] = np.asarray(rows, np.int64)
    return motifs, sites


def seqlet_rows(sites: np.ndarray, motif: ExportedMotif, rf: int) -> np.ndarray:
    """A pattern's seqlets (window, begin, width, strand) as the (window, position, strand)
    rows a channel's sites are given in (a site window of ``rf`` bases centred on position,
    read on the strand, the motif ``offset`` bases into it), so that the families code
    places them as it places a channel's sites."""
    sites = np.asarray(sites, np.int64).reshape(-1, 4)
    window, begin, width, strand = sites.T
    half = rf // 2
    pos = np.where(strand == 1, begin + half - motif.offset,
                   begin - half + motif.offset + width - 1)  # fmt: skip
    return np.stack([window, pos, strand], axis=1)


def export_modisco(folder, x: np.ndarray, hyp: np.ndarray, background: np.ndarray, targets,
                   decoys, place, *, rf: int = 21, context=None,
                   offset: int = 0) -> dict:  # fmt: skip
    """Patterns -> motifs, logos, tomtom.tsv, sites.bed in ``folder``, their families and
    (``context``: a site task's positional context) where motifs and families sit relative
    to the labelled sites; the method's entry."""
    positive, negative = modisco_patterns(x, hyp)
    motifs, sites = pattern_motifs(positive, background)
    naming = name_motifs(motifs, targets, decoys=decoys)
    for m in motifs:
        named = naming["named"].get(m.id)
        m.name = named.replace(" ", "_") if named else ""
    folder.mkdir(parents=True, exist_ok=True)
    files, families, placed = {}, None, {}
    if motifs:
        files = {k: v.name for k, v in write_motif_files(folder, motifs, background).items()}
        write_logos(folder / "logos", motifs)
        write_tomtom(folder / "tomtom.tsv", naming)
        families = concept_families(folder, motifs, {m.channel: seqlet_rows(sites[m.channel], m, rf)
                                                     for m in motifs},
                                    targets, decoys, rf, background, context, offset,
                                    prefix="modisco")  # fmt: skip
    if context is not None and motifs:
        placed = enrichment_by_motif(context, {  # each seqlet at its span's centre
            m.id: np.stack([sites[m.channel][:, 0],
                            sites[m.channel][:, 1] + sites[m.channel][:, 2] // 2 - offset], 1)
            for m in motifs}, PositionSettings())  # fmt: skip
    lines = [bed_line(place, m.id, int(w), int(b), int(width), int(strand), 1000)
             for m in motifs for w, b, width, strand in sites[m.channel]]  # fmt: skip
    write_text_atomic(folder / "sites.bed", sorted_bed(lines))
    files["sites"] = "sites.bed"
    return {
        "info": {"positive_patterns": len(positive), "negative_patterns": len(negative),
                 "windows": int(len(x))},  # fmt: skip
        "block": 1,
        "count": len(positive),
        "motifs": [{**motif_entry(m, naming),
                    **({"positions": placed[m.id]} if m.id in placed else {})}
                   for m in motifs],  # fmt: skip
        "silent_concepts": [],
        "shuffled_control": naming["control"],
        "files": files,
        **({"families": families} if families is not None else {}),
    }
