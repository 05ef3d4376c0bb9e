"""Identifiability on a neighbour relation (Hamming neighbours on Dⁿ by default).

Wang et al. [Wang-Ying-Zhang] Def. 2 and PD-I (eqs 8–13), rewritten as an LP in the mechanism:
``p(x) p(u|x) ≤ e^ε p(x') p(u|x')`` for ``x ~ x'``. Infeasible below
``ε_X = max_{x~x'} ln p(x)/p(x')`` ([Wang-Ying-Zhang] Lemma 3), which the constant mechanism
attains.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from privopt import measures
from privopt.notions._pairwise import (
    pairwise_repair_weight,
    ratio_constraints,
    ratio_lagrangian,
)
from privopt.notions.base import DesignContext, LagrangeTerms, Notion, register

if TYPE_CHECKING:  # pragma: no cover
    import cvxpy as cp

    from privopt.model import DatabasePrior, JointPrior, NeighborRelation, Prior
    from privopt.notions.base import LagrangeContext, RepairPoint


@register
class Identifiability(Notion):
    """ε-identifiability: the posteriors of neighbouring inputs stay within ``e^ε`` of each
    other, ``p(y) p(u|y) ≤ e^ε p(y') p(u|y')`` (Wang, Ying & Zhang 2016, Def. 2; see the
    module docstring)."""

    name = "identifiability"
    convexity = "linear"
    uses_neighbors = True
    pairwise = True
    parameter = "exp"
    source = "Wang et al. Def. 2 (PD-I)"
    #: The identifiability level ``ln max_{s~s', u} p(s|u)/p(s'|u)`` (Wang, Ying & Zhang
    #: 2016, Def. 2).
    level_function = staticmethod(measures.identifiability_level)

    def constraints(self, ctx: DesignContext, level: cp.Parameter) -> list[cp.Constraint]:
        """``p(s) p(u|s) ≤ e^ε p(s') p(u|s')`` for every pair ``s ~ s'`` of the support (Wang,
        Ying & Zhang 2016, Def. 2, written as an LP in the mechanism).

        Returns
        -------
        list of cvxpy.Constraint
            The ratio constraints on ``p(s, u)``: for all pairs, two constraints through an
            auxiliary column minimum; otherwise one over the pair list; none when there is no pair.
        """
        return ratio_constraints(ctx.joint, level, ctx.neighbors)

    def min_level(
        self,
        prior: Prior | JointPrior | DatabasePrior,
        neighbors: NeighborRelation | None = None,
    ) -> float:
        """``ε_X`` over the relation restricted to the support (Wang, Ying & Zhang 2016,
        eq. (18) and Lemma 3): :func:`privopt.measures.least_identifiability_level`.

        Returns
        -------
        float
            ``ε_X = max_{s~s'} ln p(s)/p(s')`` in nats, ``≥ 0``.
        """
        return measures.least_identifiability_level(prior, neighbors)

    def closed_form_repair(self, point: RepairPoint) -> float:
        """The weight of the anchor that restores ``p(s) p(u|s) ≤ e^ε p(s') p(u|s')`` on every pair
        of the support, in closed form (for all pairs, a sufficient weight from the largest and
        smallest ``p(s)``).

        Entries where the anchor itself is not strictly feasible (at ``ε = ε_X``) are left to the
        re-measurement.

        Returns
        -------
        float
            ``θ`` in ``[0, 1)``; 0 when the answer already meets the level.
        """
        return pairwise_repair_weight(
            point.channel,
            point.anchor,
            point.level,
            point.neighbors,
            point.support,
            scale=point.prior.secret_probs,
        )

    def lagrangian(self, lctx: LagrangeContext, duals: list) -> LagrangeTerms:
        """The terms of ``Σ λ (p(s) p(u|s) − e^ε p(s') p(u|s'))`` over the pairs (with the auxiliary
        column minimum for all pairs), linear in the channel.

        Returns
        -------
        LagrangeTerms
            Channel coefficients only (the output coefficients and the constant are 0).
        """
        shape = lctx.channel.shape
        coef = ratio_lagrangian(duals, shape, lctx.level_value, lctx.neighbors, lctx.p_secret)
        return LagrangeTerms(coef, np.zeros(shape[1]))
