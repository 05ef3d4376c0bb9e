"""Identifiability on a neighbour relation (Hamming neighbours on Dⁿ by default).

Wang et al. [Wang-Ying-Zhang] Def. 2 and PD-I (eqs 8–13), rewritten as an LP in the mechanism:
``p(x) p(u|x) ≤ e^ε p(x') p(u|x')`` for ``x ~ x'``. Infeasible below
``ε_X = max_{x~x'} ln p(x)/p(x')`` ([Wang-Ying-Zhang] Lemma 3), which the constant mechanism
attains.
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
class Identifiability(Notion):
    """ε-identifiability: the posteriors of neighbouring inputs stay within ``e^ε`` of each
    other, ``p(y) p(u|y) ≤ e^ε p(y') p(u|y')`` (Wang, Ying & Zhang 2016, Def. 2; see the
    module docstring)."""

    name = "identifiability"
    convexity = "linear"
    uses_neighbors = True
    parameter = "exp"
    source = "Wang et al. Def. 2 (PD-I)"

    def measure(self, prior, mechanism, neighbors=None, **options) -> float:
        return measures.identifiability_level(prior, mechanism, neighbors)

    def constraints(self, ctx: DesignContext, level: cp.Parameter) -> list[cp.Constraint]:
        return ratio_constraints(ctx.joint, level, ctx.neighbors)

    def min_level(self, prior, neighbors=None) -> float:
        """``ε_X`` over the relation restricted to the support (Wang, Ying & Zhang 2016,
        eq. (18) and Lemma 3): :func:`privopt.measures.least_identifiability_level`."""
        return measures.least_identifiability_level(prior, neighbors)

    def repair_weight(self, prior, channel, anchor, level, neighbors=None, **options):
        p = prior.secret_probs
        support = np.flatnonzero(p > 0)
        return pairwise_repair_weight(channel, anchor, level, neighbors, support, scale=p)

    def lagrangian(self, lctx, duals):
        shape = lctx.channel.shape
        coef = ratio_lagrangian(duals, shape, lctx.level_value, lctx.neighbors, lctx.p_secret)
        return LagrangeTerms(coef, np.zeros(shape[1]))
