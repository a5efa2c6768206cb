"""The sparse layer's position rules: each channel's local maximum (the peak rule), the
channel competition (the anti-copy rule) and the strand rule (one site of a palindrome, not
one per strand); ``layer.py``'s docstring says what the peak and strand rules are for.

The channel competition (``compete_window=r``): a candidate (a position of channel c above
c's threshold) is dropped when another channel has a candidate within ±r with a larger
normalised value ``z`` (ties go to the lower channel), so two channels never fire within r of
each other. It is the anti-copy rule: a channel that copies another can no longer fire where
the original fires (an exact copy is left the original's next-best sites), so a copy only
pays where it finds sites the original does not take. Values, not margins over the
thresholds, are compared: BatchNorm puts the channels on one scale, and a loser's threshold
falls as it loses, so margins would hand the contest back and forth between copies. A
competition, rather than a decorrelation penalty on the activation maps, because at
densities of 1e-3 a batch holds a few dozen hits per channel (too few for a stable
correlation estimate), while the rule is exact at every position, needs no weight to tune,
and costs a max-pool and two cumulative maxima. Like the peak rule, it starts once the
density is at most ``peak_below``: in the dense phase most windows hold several channels'
hits and the rule would starve them of gradient.

On DigitCircle (11 channels) a contest switched on at once broke the model whatever the
density it started at (validation exact match 94% -> under 4% in one step): ``h`` had learnt
to read digits from several channels at once. Variants that delayed it, kept a loser off, or
faded it in were tried and removed (docs/method.md, "Tried and removed"); the contest suits
splicing, where a copy should go and find sites of its own.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


def local_max(x: torch.Tensor, window: int, what: str) -> torch.Tensor:
    """Each channel's maximum within +-``window`` positions (per spatial dim) of 1-D
    ``(N, C, L)`` or 2-D ``(N, C, H, W)`` input."""
    size = 2 * window + 1
    if x.dim() == 3:
        return F.max_pool1d(x, size, stride=1, padding=window)
    if x.dim() == 4:
        return F.max_pool2d(x, size, stride=1, padding=window)
    raise ValueError(f"{what} needs 1-D or 2-D input")


def competition_winners(values: torch.Tensor, window: int) -> torch.Tensor:
    """Per position of ``values`` (N, C, ...) (1-D or 2-D spatial; -inf: not competing):
    True where the channel's value beats every other channel's values within ±``window``
    (per spatial dim), strictly for lower channels and or equal for higher ones (ties go to
    the lower channel)."""
    local = local_max(values, window, "channel competition")
    # Only the first channel holding the largest local value can win (any other is beaten by
    # a channel at least as large, lower or strictly larger); it wins when its own value beats
    # the best of the others: strictly if that one is a lower channel, or equally if higher.
    # Reductions over the channel axis, ~6x faster than running maxima from both ends.
    top, first = local.max(dim=1, keepdim=True)  # ties: the lowest channel
    others = local.scatter(1, first, float("-inf"))
    second, second_at = others.max(dim=1, keepdim=True)
    mine = values.gather(1, first)
    wins = torch.where(second_at < first, mine > second, mine >= second) & (mine > float("-inf"))
    return torch.zeros_like(values, dtype=torch.bool).scatter(1, first, wins)


def contest(z: torch.Tensor, thresholds: torch.Tensor, window: int) -> torch.Tensor:
    """``z`` (N, C, ...) with the candidates (``z > thresholds``) that lose the channel contest
    within ±``window`` (:func:`competition_winners`) set to -inf. Positions below threshold
    keep their values."""
    with torch.no_grad():
        candidate = z.detach() > thresholds
        values = torch.where(candidate, z.detach(), torch.full_like(z, float("-inf")))
        lose = candidate & ~competition_winners(values, window)
    return torch.where(lose, torch.full_like(z, float("-inf")), z)


def strand_winners(
    forward: torch.Tensor, reverse: torch.Tensor, window: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Per position of two strands' values (N, C, L) (-inf: no candidate there): True where
    the strand's value beats the other strand's values of the same channel within
    ±``window``, strictly for the reverse strand (ties go to the forward one)."""
    keep_forward = forward >= local_max(reverse, window, "strand rule")
    keep_reverse = reverse > local_max(forward, window, "strand rule")
    none = float("-inf")  # no candidate: never kept
    return keep_forward & (forward > none), keep_reverse & (reverse > none)


def strand_rule(values: torch.Tensor, reverse: torch.Tensor, window: int) -> torch.Tensor:
    """:func:`strand_winners` on one strand-merged map: ``values`` (N, C, L) holds at each
    position the value of the strand ``reverse`` (bool, same shape) names; True where that
    value survives the other strand's values of its channel within ±``window``."""
    minus = torch.full_like(values, float("-inf"))
    keep_f, keep_r = strand_winners(
        torch.where(reverse, minus, values), torch.where(reverse, values, minus), window
    )
    return torch.where(reverse, keep_r, keep_f)
