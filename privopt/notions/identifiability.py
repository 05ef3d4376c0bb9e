"""Identifiability on a neighbour relation (Hamming neighbours on Dⁿ by default).

Wang et al. [004] Def. 2 and PD-I (eqs 8–13), rewritten as an LP in the mechanism
(spec §2.8): ``p(x) p(u|x) ≤ e^ε p(x') p(u|x')`` for ``x ~ x'``. Infeasible below
``ε_X = max_{x~x'} ln p(x)/p(x')`` ([004] Lemma 3), which the constant mechanism attains.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np

from privopt import measures
from privopt.notions._pairwise import ratio_constraints
from privopt.notions.base import DesignContext, Notion, register


@register
class Identifiability(Notion):
    name = "identifiability"
    convexity = "linear"
    uses_neighbors = True
    parameter = "exp"
    source = "Wang et al. Def. 2 (PD-I)"

    def measure(self, prior, mechanism, neighbors=None, **options) -> float:
        return measures.identifiability_level(prior, mechanism, neighbors)

    def constraints(self, ctx: DesignContext, level: cp.Parameter) -> list[cp.Constraint]:
        return ratio_constraints(ctx.joint, level, ctx.neighbors)

    def min_level(self, prior, neighbors=None) -> float:
        """``ε_X`` over the relation restricted to the support ([004] eq. 18, Lemma 3)."""
        if neighbors is None:
            return 0.0
        if getattr(prior, "is_iid", False) and neighbors.kind == "hamming":
            # product closed form, nothing enumerated: pairs inside the support differ in one
            # row whose two values both have positive mass (epsilon_x is +inf without full
            # support, since it does not restrict to the support)
            q = prior.row_probs[prior.row_probs > 0]
            return float(np.log(q.max() / q.min()))
        p = prior.secret_probs
        rel = neighbors.restricted(np.flatnonzero(p > 0))
        if rel.n_pairs == 0:
            return 0.0
        logp = np.log(p[rel.left]) - np.log(p[rel.right])
        return float(max(logp.max(), 0.0))
