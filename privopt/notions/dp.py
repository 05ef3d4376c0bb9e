"""Differential privacy on a neighbour relation (Hamming neighbours on Dⁿ by default).

Wang et al. [Wang-Ying-Zhang] Def. 3 and PD-DP (eqs 14–17); Calmon–Fawaz [Calmon-Fawaz] Def. 5;
[Saeidian-Rethinking] Def. 4.1. Linear and prior-free: ``p(u|x) ≤ e^ε p(u|x')`` for ``x ~ x'``.
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

    from privopt.model import NeighborRelation
    from privopt.notions.base import LagrangeContext, RepairPoint


@register
class DifferentialPrivacy(Notion):
    """ε-differential privacy of the mechanism's rows over neighbouring inputs: ``p(u|y) ≤
    e^ε p(u|y')`` (Wang, Ying & Zhang 2016, Def. 3; see the module docstring)."""

    name = "dp"
    aliases = ("differential_privacy",)
    convexity = "linear"
    uses_neighbors = True
    pairwise = True
    parameter = "exp"
    source = "Wang et al. Def. 3 (PD-DP)"
    #: The DP level ``ln max_{s~s', u} p(u|s)/p(u|s')`` (Wang, Ying & Zhang 2016, Def. 3).
    level_function = staticmethod(measures.dp_level)

    def independent_at_zero(self, neighbors: NeighborRelation | None = None) -> bool:
        """True for the all-pairs relation: DP at level 0 then makes ``p(u|s)`` the same for
        every secret of the support.

        Returns
        -------
        bool
            ``True`` only when ``neighbors`` is of kind ``"all"``.
        """
        return neighbors is not None and neighbors.kind == "all"

    def constraints(self, ctx: DesignContext, level: cp.Parameter) -> list[cp.Constraint]:
        """``p(u|s) ≤ e^ε p(u|s')`` for every pair ``s ~ s'`` of the support (Wang, Ying & Zhang
        2016, Def. 3).

        Returns
        -------
        list of cvxpy.Constraint
            For all pairs, ``v ≤ p(u|s)`` and ``p(u|s) ≤ e^ε v`` with ``v`` an auxiliary column
            minimum; otherwise one constraint over the pair list; none when there is no pair.
        """
        return ratio_constraints(ctx.channel, level, ctx.neighbors)

    def closed_form_repair(self, point: RepairPoint) -> float:
        """The least weight of the anchor that restores ``p(u|s) ≤ e^ε p(u|s')`` on every pair of
        the support, in closed form.

        Returns
        -------
        float
            ``θ`` in ``[0, 1)``; 0 when the answer already meets the level.
        """
        return pairwise_repair_weight(
            point.channel, point.anchor, point.level, point.neighbors, point.support
        )

    def lagrangian(self, lctx: LagrangeContext, duals: list) -> LagrangeTerms:
        """The terms of ``Σ λ (p(u|s) − e^ε p(u|s'))`` over the pairs (with the auxiliary column
        minimum for all pairs), linear in the channel.

        Returns
        -------
        LagrangeTerms
            Channel coefficients only (the output coefficients and the constant are 0).
        """
        shape = lctx.channel.shape
        coef = ratio_lagrangian(duals, shape, lctx.level_value, lctx.neighbors)
        return LagrangeTerms(coef, np.zeros(shape[1]))
