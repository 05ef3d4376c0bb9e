"""Maximum information leakage ``max_{u: p(u)>0} H(S) − H(S|U=u)``.

Calmon–Fawaz [002] Def. 4 and Thm 2; spec §1 row 2, §2.5. "≤ ε" is convex only in the
multiplied form (32): ``(H(S) − ε) p(u) + Σ_s p(s,u) ln(p(s,u)/p(u)) ≤ 0`` for every u, which
is vacuous when ``p(u) = 0``. As an objective it is quasi-convex: the least level within a
distortion budget is found by the line search over ε ([002] Thm 2's procedure).
"""

from __future__ import annotations

import cvxpy as cp
from scipy import stats

from privopt import measures
from privopt.model import as_prior
from privopt.notions.base import DesignContext, Notion, register


@register
class MaxInformationLeakage(Notion):
    name = "max_information_leakage"
    convexity = "exponential_cone"
    direct_level = False
    parameter = "linear"
    source = "Calmon-Fawaz Def. 4, Thm 2 (eq. 32)"

    def independent_at_zero(self, neighbors=None) -> bool:
        return True

    def measure(self, prior, mechanism, neighbors=None, **options) -> float:
        return measures.max_information_leakage(prior, mechanism)

    def constraints(self, ctx: DesignContext, level: cp.Parameter) -> list[cp.Constraint]:
        h_s = float(stats.entropy(ctx.p_secret))
        p_u_rows = ctx.broadcast_rows(ctx.p_u)
        # Σ_s rel_entr(p(s,u), p(u)) = −p(u) H(S|U=u)      ([002] eq. 32)
        neg_cond_entropy = cp.sum(cp.rel_entr(ctx.joint, p_u_rows), axis=0)
        return [cp.multiply(h_s - level, ctx.p_u) + neg_cond_entropy <= 0]

    def max_level(self, prior) -> float:
        p = as_prior(prior).secret_probs
        return float(stats.entropy(p[p > 0]))  # H(S) − H(S|U=u) ≤ H(S)
