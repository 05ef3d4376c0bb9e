"""The one repair rule of privopt: mix an answer with a zero-leakage mechanism.

Every convex notion here has a convex constraint set that contains the constant mechanisms
(level 0; ``ε_X`` for identifiability), so an answer whose level slightly exceeds ε (solver
tolerance) is made feasible by the least weight ``θ`` of a constant mechanism. Linear
notions give ``θ`` in closed form (:meth:`~privopt.notions.Notion.repair_weight`); otherwise,
and to confirm the closed form, ``θ`` is found by bisection on the re-measured level, for a
dense matrix or for any structured mechanism that can be mixed.
"""

from __future__ import annotations

__all__ = ["least_mixing_weight"]

from collections.abc import Callable


def least_mixing_weight(
    level_of: Callable[[float], float], target: float, *, start: float = 0.0, steps: int = 60
) -> float | None:
    """The least ``θ ∈ [start, 1]`` whose mixture has level ``≤ target``, by bisection.

    Parameters
    ----------
    level_of : callable
        ``θ ↦`` the re-measured level of the mixture with weight ``θ`` on the anchor.
    target : float
        The level to meet (the caller adds its tolerance).
    start : float
        A weight known too small (or 0).
    steps : int
        Bisection steps (60 reach round-off).

    Returns
    -------
    float or None
        The weight, or ``None`` when even the anchor alone (``θ = 1``) misses ``target``.
    """
    if level_of(start) <= target:
        return start
    if level_of(1.0) > target:
        return None
    lo, hi = start, 1.0
    for _ in range(steps):
        mid = 0.5 * (lo + hi)
        if level_of(mid) <= target:
            hi = mid
        else:
            lo = mid
        if hi - lo < 1e-15:
            break
    return hi
