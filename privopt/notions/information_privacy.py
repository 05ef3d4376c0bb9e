"""Information privacy (Calmon–Fawaz) = local information privacy (LIP).

Calmon–Fawaz [Calmon-Fawaz] Def. 6; Saeidian et al. [Saeidian-PML] Def. 15. Linear:
``e^{−ε} p(u) ≤ p(u|s) ≤ e^{ε} p(u)``, written as ``p(u) ≤ e^ε p(u|s)`` so that the single
Parameter ``c = e^ε`` keeps the program DPP.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from privopt import measures
from privopt.notions._pairwise import mixing_weight, output_law_rows, repair_terms
from privopt.notions.base import DesignContext, LagrangeTerms, Notion, dual_array, register

if TYPE_CHECKING:  # pragma: no cover
    import cvxpy as cp

    from privopt.notions.base import LagrangeContext, RepairPoint


@register
class InformationPrivacy(Notion):
    """ε-information privacy (local information privacy): ``e^{−ε} ≤ p(u|s)/p(u) ≤ e^ε``
    (Calmon & Fawaz 2012, Def. 6; Saeidian et al. 2023, Def. 15)."""

    name = "information_privacy"
    aliases = ("lip",)
    convexity = "linear"
    zero_means_independent = True  # level 0: every posterior is the prior
    parameter = "exp"
    source = "Calmon-Fawaz Def. 6; Saeidian et al. Def. 15 (LIP)"
    output_law_constraints = 2.0
    #: The information privacy (LIP) level ``max_{s, u} |ln p(u|s)/p(u)|`` (Calmon & Fawaz 2012,
    #: Def. 6).
    level_function = staticmethod(measures.information_privacy_level)

    def constraints(self, ctx: DesignContext, level: cp.Parameter) -> list[cp.Constraint]:
        """``p(u|s) ≤ e^ε p(u)`` and ``p(u) ≤ e^ε p(u|s)`` for every secret of the support and
        every output (Calmon & Fawaz 2012, Def. 6).

        Returns
        -------
        list of cvxpy.Constraint
            The upper bound, then the lower one, each ``|supp S| × |U|``.
        """
        p_u_rows = ctx.broadcast_rows(ctx.p_u)
        return [ctx.channel <= level * p_u_rows, p_u_rows <= level * ctx.channel]

    def closed_form_repair(self, point: RepairPoint) -> float:
        """The least weight of the anchor that restores both ``p(u|s) ≤ e^ε p(u)`` and
        ``p(u) ≤ e^ε p(u|s)`` on the support, in closed form (the larger of the two weights).

        Returns
        -------
        float
            ``θ`` in ``[0, 1)``; 0 when the answer already meets the level.
        """
        ch, q, c = output_law_rows(point.prior.secret_probs, point.channel, point.anchor)
        ratio, slack = repair_terms(point.level)
        upper = mixing_weight(ch, q, c, c, ratio, slack)  # p(u|s) ≤ e^ε p(u)
        lower = mixing_weight(q, ch, c, c, ratio, slack)  # p(u) ≤ e^ε p(u|s)
        return max(upper, lower)

    def lagrangian(self, lctx: LagrangeContext, duals: list) -> LagrangeTerms:
        """The terms of ``Σ λ₁ (p(u|s) − e^ε p(u)) + Σ λ₂ (p(u) − e^ε p(u|s))``, linear in the
        channel and the output law.

        Returns
        -------
        LagrangeTerms
            Channel coefficients ``λ₁ − e^ε λ₂`` and output coefficients
            ``Σ_s λ₂ − e^ε Σ_s λ₁`` (constant 0).
        """
        # Σ λ₁ (p(u|s) − c p(u)) + Σ λ₂ (p(u) − c p(u|s))
        c = lctx.level_value
        upper = dual_array(duals[0], lctx.channel.shape)
        lower = dual_array(duals[1], lctx.channel.shape)
        return LagrangeTerms(upper - c * lower, lower.sum(axis=0) - c * upper.sum(axis=0))
