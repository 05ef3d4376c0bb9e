"""Maximal leakage ``L = ln Σ_u max_x p(u|x)`` (the average-case PML guarantee).

Saeidian et al. [Saeidian-PML] eq. (1) and Def. 6 (Issa et al.). "L ≤ ε" is the LP
``Σ_u max_x p(u|x) ≤ e^ε``; the least L within a budget minimises the sum directly.
"""

from __future__ import annotations

import math

import cvxpy as cp
import numpy as np

from privopt import measures
from privopt.model import as_prior
from privopt.notions._pairwise import repair_terms
from privopt.notions.base import DesignContext, LagrangeTerms, Notion, dual_array, register


@register
class MaximalLeakage(Notion):
    """Maximal leakage ``ln Σ_u max_s p(u|s) ≤ ε`` (Issa, Wagner & Kamath 2020; Saeidian et
    al. 2023, Def. 6)."""

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

    def level_program(self, ctx: DesignContext):
        # Σ_u t_u with t_u ≥ p(u|x): the auxiliary t keeps every constraint affine, so the
        # solver's dual values give a Lagrangian bound (level_lagrangian)
        t = cp.Variable(ctx.n_outputs, nonneg=True, name="column_max")
        return cp.sum(t), [ctx.channel <= ctx.broadcast_rows(t)]

    def level_from_objective(self, value: float) -> float:
        return math.log(max(value, 1.0))  # Σ_u max_x p(u|x) ≥ 1, so L ≥ 0

    def constraints(self, ctx: DesignContext, level: cp.Parameter) -> list[cp.Constraint]:
        objective, columns = self.level_program(ctx)
        return [*columns, objective <= level]

    def lagrangian(self, lctx, duals):
        # Σ λ (p(u|x) − t_u) + μ (Σ_u t_u − e^ε): the coefficient μ − Σ_x λ of t ≥ 0 must be
        # non-negative, so μ is raised where it is not
        lam = dual_array(duals[0], lctx.channel.shape)
        mu = max(float(dual_array(duals[1], ())), float(lam.sum(axis=0).max(initial=0.0)))
        return LagrangeTerms(lam, np.zeros(lam.shape[1]), -mu * lctx.level_value)

    def level_lagrangian(self, lctx, duals):
        # Σ_u t_u + Σ λ (p(u|x) − t_u): the coefficient 1 − Σ_x λ of t must be ≥ 0
        lam = dual_array(duals[0], lctx.channel.shape)
        total = lam.sum(axis=0)
        lam = lam / np.maximum(total, 1.0)[None, :]
        return LagrangeTerms(lam, np.zeros(lam.shape[1]))

    def max_level(self, prior) -> float:
        return math.log(len(as_prior(prior).secret_support))  # L ≤ ln |supp X|

    def repair_weight(self, prior, channel, anchor, level, neighbors=None, **options):
        # Σ_u max_x of the mixture ≤ (1−θ) Σ_u max_x p(u|x) + θ Σ_u anchor_u, with Σ anchor = 1
        total = float(channel[prior.secret_probs > 0].max(axis=0).sum())
        bound, slack = repair_terms(level)
        if total <= bound * (1.0 + slack) or total <= 1.0:
            return 0.0
        return (total - bound) / (total - 1.0)
