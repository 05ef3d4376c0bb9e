"""Maximal leakage ``L = ln Σ_u max_x p(u|x)`` (the average-case PML guarantee).

Saeidian et al. [Saeidian-PML] eq. (1) and Def. 6 (Issa et al.). "L ≤ ε" is the LP
``Σ_u max_x p(u|x) ≤ e^ε``; the least L within a budget minimises the sum directly.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from privopt import measures
from privopt.model import as_prior
from privopt.notions._pairwise import sum_repair_weight
from privopt.notions.base import DesignContext, LagrangeTerms, Notion, dual_array, register

if TYPE_CHECKING:  # pragma: no cover
    import cvxpy as cp

    from privopt.model import DatabasePrior, JointPrior, Prior
    from privopt.notions.base import LagrangeContext, RepairPoint


@register
class MaximalLeakage(Notion):
    """Maximal leakage ``ln Σ_u max_s p(u|s) ≤ ε`` (Issa, Wagner & Kamath 2020; Saeidian et
    al. 2023, Def. 6)."""

    name = "maximal_leakage"
    convexity = "linear"
    zero_means_independent = True  # Σ_u max_s p(u|s) ≤ 1 forces equal rows
    direct_level = True
    parameter = "exp"
    source = "Saeidian et al. Def. 6 (Issa et al.)"
    #: The maximal leakage ``L = ln Σ_u max_s p(u|s)`` over the support (Issa, Wagner & Kamath
    #: 2020; Saeidian et al. 2023, eq. (1) and Def. 6), in ``[0, ln |supp S|]``.
    level_function = staticmethod(measures.maximal_leakage)

    def level_objective(self, ctx: DesignContext) -> cp.Expression:
        """``Σ_u max_s p(u|s)`` over the support, ``e^L`` (Saeidian et al. 2023, eq. (1)).

        Returns
        -------
        cvxpy.Expression
            A convex scalar, ``≥ 1`` on mechanisms (:meth:`level_from_objective` takes its log).
        """
        import cvxpy as cp

        return cp.sum(cp.max(ctx.channel, axis=0))

    def level_program(self, ctx: DesignContext) -> tuple[cp.Expression, list[cp.Constraint]]:
        """``Σ_u t_u`` subject to ``p(u|s) ≤ t_u`` on the support: :meth:`level_objective` with
        affine constraints only, so that their dual values give a bound (:meth:`level_lagrangian`).

        Returns
        -------
        tuple of (cvxpy.Expression, list of cvxpy.Constraint)
            ``Σ_u t_u`` (``t ≥ 0`` an auxiliary variable of length ``|U|``) and the one constraint
            ``p(u|s) ≤ t_u``, ``|supp S| × |U|``.
        """
        import cvxpy as cp

        # Σ_u t_u with t_u ≥ p(u|x): the auxiliary t keeps every constraint affine, so the
        # solver's dual values give a Lagrangian bound (level_lagrangian)
        t = cp.Variable(ctx.n_outputs, nonneg=True, name="column_max")
        return cp.sum(t), [ctx.channel <= ctx.broadcast_rows(t)]

    def level_from_objective(self, value: float) -> float:
        """The maximal leakage ``L = ln v`` of the optimal value ``v`` of ``Σ_u max_s p(u|s)``.

        Returns
        -------
        float
            ``ln max(value, 1)`` in nats (values below 1 are round-off), ``≥ 0``.
        """
        return math.log(max(value, 1.0))  # Σ_u max_x p(u|x) ≥ 1, so L ≥ 0

    def constraints(self, ctx: DesignContext, level: cp.Parameter) -> list[cp.Constraint]:
        """``Σ_u t_u ≤ e^ε`` with ``p(u|s) ≤ t_u`` on the support: maximal leakage ``≤ ε`` as an LP
        (Saeidian et al. 2023, eq. (1)).

        Returns
        -------
        list of cvxpy.Constraint
            ``p(u|s) ≤ t_u`` (``|supp S| × |U|``), then ``Σ_u t_u ≤ e^ε``.
        """
        objective, columns = self.level_program(ctx)
        return [*columns, objective <= level]

    def lagrangian(self, lctx: LagrangeContext, duals: list) -> LagrangeTerms:
        """The terms of ``Σ λ (p(u|s) − t_u) + μ (Σ_u t_u − e^ε)``, with ``μ`` raised to
        ``max_u Σ_s λ`` where it is below, so that the coefficient of ``t ≥ 0`` is non-negative and
        ``t`` drops out.

        Returns
        -------
        LagrangeTerms
            Channel coefficients ``λ``, output coefficients 0 and the constant ``−μ e^ε``.
        """
        # Σ λ (p(u|x) − t_u) + μ (Σ_u t_u − e^ε): the coefficient μ − Σ_x λ of t ≥ 0 must be
        # non-negative, so μ is raised where it is not
        lam = dual_array(duals[0], lctx.channel.shape)
        mu = max(float(dual_array(duals[1], ())), float(lam.sum(axis=0).max(initial=0.0)))
        return LagrangeTerms(lam, np.zeros(lam.shape[1]), -mu * lctx.level_value)

    def level_lagrangian(self, lctx: LagrangeContext, duals: list) -> LagrangeTerms:
        """A lower bound on ``Σ_u max_s p(u|s)``: the terms of ``Σ_u t_u + Σ λ (p(u|s) − t_u)``
        with every column of ``λ`` scaled down to a sum of at most 1, so that ``t`` drops out.

        Returns
        -------
        LagrangeTerms
            Channel coefficients ``λ`` (scaled), output coefficients and constant 0.
        """
        # Σ_u t_u + Σ λ (p(u|x) − t_u): the coefficient 1 − Σ_x λ of t must be ≥ 0
        lam = dual_array(duals[0], lctx.channel.shape)
        total = lam.sum(axis=0)
        lam = lam / np.maximum(total, 1.0)[None, :]
        return LagrangeTerms(lam, np.zeros(lam.shape[1]))

    def max_level(self, prior: Prior | JointPrior | DatabasePrior) -> float:
        """``ln |supp S|``: ``Σ_u max_s p(u|s) ≤ Σ_s Σ_u p(u|s) = |supp S|`` for every mechanism.

        Returns
        -------
        float
            ``ln |supp S|`` in nats.
        """
        return math.log(len(as_prior(prior).secret_support))  # L ≤ ln |supp X|

    def closed_form_repair(self, point: RepairPoint) -> float:
        """A weight of the anchor that restores ``Σ_u max_s p(u|s) ≤ e^ε`` on the support, in
        closed form: mixing gives at most ``(1−θ) T + θ`` with ``T`` the answer's sum, so
        ``θ = (T − e^ε)/(T − 1)`` suffices.

        Returns
        -------
        float
            ``θ`` in ``[0, 1)``; 0 when ``T ≤ e^ε`` (up to the repair slack) or ``T ≤ 1``.
        """
        # Σ_u max_x of the mixture ≤ (1−θ) Σ_u max_x p(u|x) + θ Σ_u anchor_u, with Σ anchor = 1
        total = float(point.channel[point.prior.secret_probs > 0].max(axis=0).sum())
        return sum_repair_weight(total, point.level)
