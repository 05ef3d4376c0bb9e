"""ε-pointwise maximal leakage (almost-sure guarantee).

Saeidian et al. [Saeidian-PML] Def. 4 and Thm 1; [Saeidian-Rethinking] Def. 2.3. Linear:
``p(u|x) ≤ e^ε p(u)`` for every x in the support and every u.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from privopt import measures
from privopt.notions._pairwise import mixing_weight, output_law_rows, repair_terms
from privopt.notions.base import DesignContext, LagrangeTerms, Notion, dual_array, register

if TYPE_CHECKING:  # pragma: no cover
    import cvxpy as cp

    from privopt.model import DatabasePrior, JointPrior, Prior
    from privopt.notions.base import LagrangeContext, RepairPoint


@register
class PointwiseMaximalLeakage(Notion):
    """Pointwise maximal leakage ``ln max_s p(u|s)/p(u) ≤ ε`` for every output (Saeidian et
    al. 2023, Def. 4 and Thm 1)."""

    name = "pml"
    convexity = "linear"
    zero_means_independent = True  # level 0 forces p(u|s) = p(u)
    parameter = "exp"
    source = "Saeidian et al. Def. 4, Thm 1"
    output_law_constraints = 1.0
    #: The PML level ``max_u ln max_s p(u|s)/p(u)`` over the support (Saeidian et al. 2023, Def. 4
    #: and Thm 1).
    level_function = staticmethod(measures.pml_level)

    def constraints(self, ctx: DesignContext, level: cp.Parameter) -> list[cp.Constraint]:
        """``p(u|s) ≤ e^ε p(u)`` for every secret of the support and every output (Saeidian et al.
        2023, Thm 1).

        Returns
        -------
        list of cvxpy.Constraint
            One constraint, ``|supp S| × |U|``.
        """
        return [ctx.channel <= level * ctx.broadcast_rows(ctx.p_u)]

    def max_level(self, prior: Prior | JointPrior | DatabasePrior) -> float:
        """``ε_max = −ln min_{s ∈ supp} p(s)``: every mechanism is ε_max-PML (Saeidian et al. 2023,
        Lemma 2), by :func:`privopt.measures.epsilon_max`.

        Returns
        -------
        float
            ``ε_max`` in nats, ``≥ 0``.
        """
        return measures.epsilon_max(prior)  # every mechanism is ε_max-PML ([Saeidian-PML] Lemma 2)

    def closed_form_repair(self, point: RepairPoint) -> float:
        """The least weight of the anchor that restores ``p(u|s) ≤ e^ε p(u)`` on the support, in
        closed form.

        Returns
        -------
        float
            ``θ`` in ``[0, 1)``; 0 when the answer already meets the level.
        """
        ch, q, c = output_law_rows(point.prior.secret_probs, point.channel, point.anchor)
        return mixing_weight(ch, q, c, c, *repair_terms(point.level))

    def lagrangian(self, lctx: LagrangeContext, duals: list) -> LagrangeTerms:
        """The terms of ``Σ λ (p(u|s) − e^ε p(u))``, linear in the channel and the output law.

        Returns
        -------
        LagrangeTerms
            Channel coefficients ``λ`` and output coefficients ``−e^ε Σ_s λ`` (constant 0).
        """
        # Σ λ (p(u|s) − c p(u))
        lam = dual_array(duals[0], lctx.channel.shape)
        return LagrangeTerms(lam, -lctx.level_value * lam.sum(axis=0))
