"""Average information leakage / mutual-information privacy ``I(S;U)``.

Calmon–Fawaz [002] Def. 3 and Thm 1 (eq. 14); Wang et al. [004] Def. 4 and PD-MIP (eqs 31–34);
spec §1 rows 1 and 13, §2.2, §2.12. Written with ``rel_entr`` in perspective form, never as a
difference of entropies (spec §7.4).
"""

from __future__ import annotations

import cvxpy as cp
from scipy import stats

from privopt import measures
from privopt.model import as_prior
from privopt.notions.base import DesignContext, Notion, register


@register
class MutualInformation(Notion):
    name = "mutual_information"
    aliases = ("average_leakage",)
    convexity = "exponential_cone"
    direct_level = True
    parameter = "linear"
    source = "Calmon-Fawaz Def. 3, Thm 1; Wang et al. Def. 4"

    def independent_at_zero(self, neighbors=None) -> bool:
        return True

    def measure(self, prior, mechanism, neighbors=None, **options) -> float:
        return measures.mutual_information(prior, mechanism)

    def level_objective(self, ctx: DesignContext) -> cp.Expression:
        # I(S;U) = Σ_{s,u} p(s) rel_entr(p(u|s), p(u))   ([002] eq. 14)
        p_u_rows = ctx.broadcast_rows(ctx.p_u)
        return cp.sum(cp.multiply(ctx.p_secret[:, None], cp.rel_entr(ctx.channel, p_u_rows)))

    def constraints(self, ctx: DesignContext, level: cp.Parameter) -> list[cp.Constraint]:
        return [self.level_objective(ctx) <= level]

    def max_level(self, prior) -> float:
        p = as_prior(prior).secret_probs
        return float(stats.entropy(p[p > 0]))  # I(S;U) ≤ H(S)

    def min_level(self, prior, neighbors=None) -> float:
        return 0.0
