"""Differential privacy on a neighbour relation (Hamming neighbours on Dⁿ by default).

Wang et al. [Wang-Ying-Zhang] Def. 3 and PD-DP (eqs 14–17); Calmon–Fawaz [Calmon-Fawaz] Def. 5;
[Saeidian-Rethinking] Def. 4.1. Linear and prior-free: ``p(u|x) ≤ e^ε p(u|x')`` for ``x ~ x'``.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np

from privopt import measures
from privopt.notions._pairwise import (
    pairwise_repair_weight,
    ratio_constraints,
    ratio_lagrangian,
)
from privopt.notions.base import DesignContext, LagrangeTerms, Notion, register


@register
class DifferentialPrivacy(Notion):
    """ε-differential privacy of the mechanism's rows over neighbouring inputs: ``p(u|y) ≤
    e^ε p(u|y')`` (Wang, Ying & Zhang 2016, Def. 3; see the module docstring)."""

    name = "dp"
    aliases = ("differential_privacy",)
    convexity = "linear"
    uses_neighbors = True
    parameter = "exp"
    source = "Wang et al. Def. 3 (PD-DP)"

    def independent_at_zero(self, neighbors=None) -> bool:
        return neighbors is not None and neighbors.kind == "all"

    def measure(self, prior, mechanism, neighbors=None, **options) -> float:
        return measures.dp_level(prior, mechanism, neighbors)

    def constraints(self, ctx: DesignContext, level: cp.Parameter) -> list[cp.Constraint]:
        return ratio_constraints(ctx.channel, level, ctx.neighbors)

    def repair_weight(self, prior, channel, anchor, level, neighbors=None, **options):
        support = np.flatnonzero(prior.secret_probs > 0)
        return pairwise_repair_weight(channel, anchor, level, neighbors, support)

    def lagrangian(self, lctx, duals):
        shape = lctx.channel.shape
        coef = ratio_lagrangian(duals, shape, lctx.level_value, lctx.neighbors)
        return LagrangeTerms(coef, np.zeros(shape[1]))
