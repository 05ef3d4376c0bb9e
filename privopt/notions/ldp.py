"""Local differential privacy: DP over all pairs of secrets (= leakage capacity ≤ ε).

Saeidian et al. [Saeidian-PML] Def. 14; [Saeidian-Rethinking] Def. 2.7 and Thm 2.8.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np

from privopt import measures
from privopt.model import all_pairs
from privopt.notions._pairwise import (
    pairwise_repair_weight,
    ratio_constraints,
    ratio_lagrangian,
)
from privopt.notions.base import DesignContext, LagrangeTerms, Notion, register


@register
class LocalDifferentialPrivacy(Notion):
    """ε-local differential privacy: ``p(u|s) ≤ e^ε p(u|s')`` for every pair of secrets
    (Saeidian et al. 2023, Def. 14)."""

    name = "ldp"
    aliases = ("local_differential_privacy",)
    convexity = "linear"
    parameter = "exp"
    source = "Saeidian et al. Def. 14"

    def independent_at_zero(self, neighbors=None) -> bool:
        return True

    def measure(self, prior, mechanism, neighbors=None, **options) -> float:
        return measures.ldp_level(prior, mechanism)

    def constraints(self, ctx: DesignContext, level: cp.Parameter) -> list[cp.Constraint]:
        return ratio_constraints(ctx.channel, level, all_pairs(ctx.n_secrets))

    def repair_weight(self, prior, channel, anchor, level, neighbors=None, **options):
        support = np.flatnonzero(prior.secret_probs > 0)
        return pairwise_repair_weight(channel, anchor, level, all_pairs(channel.shape[0]), support)

    def lagrangian(self, lctx, duals):
        shape = lctx.channel.shape
        coef = ratio_lagrangian(duals, shape, lctx.level_value, all_pairs(shape[0]))
        return LagrangeTerms(coef, np.zeros(shape[1]))
