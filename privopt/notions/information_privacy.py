"""Information privacy (Calmon–Fawaz) = local information privacy (LIP).

Calmon–Fawaz [Calmon-Fawaz] Def. 6; Saeidian et al. [Saeidian-PML] Def. 15. Linear:
``e^{−ε} p(u) ≤ p(u|s) ≤ e^{ε} p(u)``, written as ``p(u) ≤ e^ε p(u|s)`` so that the single
Parameter ``c = e^ε`` keeps the program DPP.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np

from privopt import measures
from privopt.notions._pairwise import mixing_weight, repair_terms
from privopt.notions.base import DesignContext, LagrangeTerms, Notion, dual_array, register


@register
class InformationPrivacy(Notion):
    """ε-information privacy (local information privacy): ``e^{−ε} ≤ p(u|s)/p(u) ≤ e^ε``
    (Calmon & Fawaz 2012, Def. 6; Saeidian et al. 2023, Def. 15)."""

    name = "information_privacy"
    aliases = ("lip",)
    convexity = "linear"
    parameter = "exp"
    source = "Calmon-Fawaz Def. 6; Saeidian et al. Def. 15 (LIP)"

    def independent_at_zero(self, neighbors=None) -> bool:
        return True

    def measure(self, prior, mechanism, neighbors=None, **options) -> float:
        return measures.information_privacy_level(prior, mechanism)

    def constraints(self, ctx: DesignContext, level: cp.Parameter) -> list[cp.Constraint]:
        p_u_rows = ctx.broadcast_rows(ctx.p_u)
        return [ctx.channel <= level * p_u_rows, p_u_rows <= level * ctx.channel]

    def repair_weight(self, prior, channel, anchor, level, neighbors=None, **options):
        p = prior.secret_probs
        ch = channel[p > 0]
        q = np.broadcast_to(p[p > 0] @ ch, ch.shape)  # p(u)
        c = np.broadcast_to(anchor, ch.shape)
        ratio, slack = repair_terms(level)
        upper = mixing_weight(ch, q, c, c, ratio, slack)  # p(u|s) ≤ e^ε p(u)
        lower = mixing_weight(q, ch, c, c, ratio, slack)  # p(u) ≤ e^ε p(u|s)
        return max(upper, lower)

    def lagrangian(self, lctx, duals):
        # Σ λ₁ (p(u|s) − c p(u)) + Σ λ₂ (p(u) − c p(u|s))
        c = lctx.level_value
        upper = dual_array(duals[0], lctx.channel.shape)
        lower = dual_array(duals[1], lctx.channel.shape)
        return LagrangeTerms(upper - c * lower, lower.sum(axis=0) - c * upper.sum(axis=0))
