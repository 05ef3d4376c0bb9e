"""Maximal leakage ``L = ln Σ_u max_x p(u|x)`` (the average-case PML guarantee).

Saeidian et al. [003] eq. (1) and Def. 6 (Issa et al.); spec §1 row 6. "L ≤ ε" is the LP
``Σ_u max_x p(u|x) ≤ e^ε``; the least L within a budget minimises the sum directly.
"""

from __future__ import annotations

import math

import cvxpy as cp
import numpy as np

from privopt import measures
from privopt.model import as_prior
from privopt.notions._pairwise import REPAIR_SLACK
from privopt.notions.base import DesignContext, Notion, register


@register
class MaximalLeakage(Notion):
    name = "maximal_leakage"
    convexity = "linear"
    direct_level = True
    parameter = "exp"
    source = "Saeidian et al. Def. 6 (Issa et al.)"

    def independent_at_zero(self, neighbors=None) -> bool:
        return True

    def measure(self, prior, mechanism, neighbors=None, **options) -> float:
        return measures.maximal_leakage(prior, mechanism)

    def level_objective(self, ctx: DesignContext) -> cp.Expression:
        return cp.sum(cp.max(ctx.channel, axis=0))

    def level_from_objective(self, value: float) -> float:
        return math.log(max(value, 1.0))  # Σ_u max_x p(u|x) ≥ 1, so L ≥ 0

    def constraints(self, ctx: DesignContext, level: cp.Parameter) -> list[cp.Constraint]:
        return [self.level_objective(ctx) <= level]

    def max_level(self, prior) -> float:
        return math.log(len(as_prior(prior).secret_support))  # L ≤ ln |supp X|

    def repair_weight(self, prior, channel, anchor, level, neighbors=None, **options):
        # Σ_u max_x of the mixture ≤ (1−θ) Σ_u max_x p(u|x) + θ Σ_u anchor_u, with Σ anchor = 1
        total = float(channel[prior.secret_probs > 0].max(axis=0).sum())
        bound = float(np.exp(level))
        if total <= bound * (1.0 + REPAIR_SLACK * (1 + level)) or total <= 1.0:
            return 0.0
        return (total - bound) / (total - 1.0)
