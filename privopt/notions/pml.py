"""ε-pointwise maximal leakage (almost-sure guarantee).

Saeidian et al. [Saeidian-PML] Def. 4 and Thm 1; [Saeidian-Rethinking] Def. 2.3. Linear:
``p(u|x) ≤ e^ε p(u)`` for every x in the support and every u.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np

from privopt import measures
from privopt.notions._pairwise import mixing_weight, repair_terms
from privopt.notions.base import DesignContext, LagrangeTerms, Notion, dual_array, register


@register
class PointwiseMaximalLeakage(Notion):
    """Pointwise maximal leakage ``ln max_s p(u|s)/p(u) ≤ ε`` for every output (Saeidian et
    al. 2023, Def. 4 and Thm 1)."""

    name = "pml"
    convexity = "linear"
    parameter = "exp"
    source = "Saeidian et al. Def. 4, Thm 1"

    def independent_at_zero(self, neighbors=None) -> bool:
        return True

    def measure(self, prior, mechanism, neighbors=None, **options) -> float:
        return measures.pml_level(prior, mechanism)

    def constraints(self, ctx: DesignContext, level: cp.Parameter) -> list[cp.Constraint]:
        return [ctx.channel <= level * ctx.broadcast_rows(ctx.p_u)]

    def max_level(self, prior) -> float:
        return measures.epsilon_max(prior)  # every mechanism is ε_max-PML ([Saeidian-PML] Lemma 2)

    def repair_weight(self, prior, channel, anchor, level, neighbors=None, **options):
        p = prior.secret_probs
        ch = channel[p > 0]
        q = np.broadcast_to(p[p > 0] @ ch, ch.shape)  # p(u)
        c = np.broadcast_to(anchor, ch.shape)
        return mixing_weight(ch, q, c, c, *repair_terms(level))

    def lagrangian(self, lctx, duals):
        # Σ λ (p(u|s) − c p(u))
        lam = dual_array(duals[0], lctx.channel.shape)
        return LagrangeTerms(lam, -lctx.level_value * lam.sum(axis=0))
