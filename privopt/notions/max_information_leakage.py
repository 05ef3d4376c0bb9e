"""Maximum information leakage ``max_{u: p(u)>0} H(S) − H(S|U=u)``.

Calmon–Fawaz [Calmon-Fawaz] Def. 4 and Thm 2. "≤ ε" is convex only in the
multiplied form (32): ``(H(S) − ε) p(u) + Σ_s p(s,u) ln(p(s,u)/p(u)) ≤ 0`` for every u, which
is vacuous when ``p(u) = 0``. As an objective it is quasi-convex: the least level within a
distortion budget is found by the line search over ε ([Calmon-Fawaz] Thm 2's procedure).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from privopt import measures
from privopt.model import as_prior
from privopt.notions.base import (
    DesignContext,
    LagrangeTerms,
    Notion,
    best_over_row_signs,
    dual_array,
    register,
)

if TYPE_CHECKING:  # pragma: no cover
    import cvxpy as cp

    from privopt.model import DatabasePrior, JointPrior, Prior
    from privopt.notions.base import LagrangeContext


@register
class MaxInformationLeakage(Notion):
    """Maximum information leakage ``max_u H(S) − H(S|U=u) ≤ ε`` (Calmon & Fawaz 2012, Def.
    4 and Thm 2, eq. (32))."""

    name = "max_information_leakage"
    convexity = "exponential_cone"
    zero_means_independent = True  # level 0: every posterior is the prior
    direct_level = False
    parameter = "linear"
    source = "Calmon-Fawaz Def. 4, Thm 2 (eq. 32)"
    output_law_constraints = 1.0
    #: The maximum information leakage ``max_{u: p(u)>0} H(S) − H(S|U=u)`` (Calmon & Fawaz 2012,
    #: Def. 4), in ``[0, H(S)]``.
    level_function = staticmethod(measures.max_information_leakage)

    def constraints(self, ctx: DesignContext, level: cp.Parameter) -> list[cp.Constraint]:
        """``(H(S) − ε) p(u) + Σ_s p(s,u) ln(p(s,u)/p(u)) ≤ 0`` for every output (Calmon & Fawaz
        2012, eq. (32)), written with ``rel_entr``.

        Returns
        -------
        list of cvxpy.Constraint
            One exponential-cone constraint of length ``|U|``.
        """
        import cvxpy as cp

        h_s = measures.shannon_entropy(ctx.p_secret)
        p_u_rows = ctx.broadcast_rows(ctx.p_u)
        # Σ_s rel_entr(p(s,u), p(u)) = −p(u) H(S|U=u)      ([Calmon-Fawaz] eq. 32)
        neg_cond_entropy = cp.sum(cp.rel_entr(ctx.joint, p_u_rows), axis=0)
        return [cp.multiply(h_s - level, ctx.p_u) + neg_cond_entropy <= 0]

    def max_level(self, prior: Prior | JointPrior | DatabasePrior) -> float:
        """``H(S)`` over the support: ``H(S) − H(S|U=u) ≤ H(S)`` for every output.

        Returns
        -------
        float
            ``H(S)`` in nats.
        """
        p = as_prior(prior).secret_probs
        return measures.shannon_entropy(p[p > 0])  # H(S) − H(S|U=u) ≤ H(S)

    def lagrangian(self, lctx: LagrangeContext, duals: list) -> LagrangeTerms:
        """The terms of ``Σ_u μ_u g_u`` with ``g_u`` the constraint of output ``u``, bounded below
        through the answer's posterior ``r`` (Gibbs' inequality:
        ``Σ_s p(s,u) ln p(s|u) ≥ Σ_s p(s,u) ln r_u(s)``), linear in the channel.

        Returns
        -------
        LagrangeTerms
            Channel coefficients ``μ_u p(s) ln r_u(s)`` and output coefficients
            ``μ_u (H(S) − ε)`` (constant 0).
        """
        # g_u = (H(S) − ε) p(u) + Σ_s p(s,u) ln p(s|u) ≥ (H(S) − ε) p(u) + Σ_s p(s,u) ln r_u(s)
        # for any posterior r (Gibbs' inequality), linear in the channel
        p = lctx.p_secret
        h_s = float(-(p * np.log(p)).sum())
        mu = dual_array(duals[0], (lctx.channel.shape[1],))
        channel = p[:, None] * np.log(lctx.posterior()) * mu[None, :]
        return LagrangeTerms(channel, mu * (h_s - lctx.level_value))

    def decomposition_bound(self, lctx: LagrangeContext, scale: float = 1.0) -> float | None:
        """The decomposition bound (:meth:`Notion.decomposition_bound`) for posteriors of entropy at
        least ``H(S) − ε``: per output, ``τh − τ ln Σ_s e^{−a_u(s)/τ}`` maximised over ``τ > 0``
        (the dual of the least cost at that entropy).

        Returns
        -------
        float or None
            A lower bound on ``D*(ε)``, in the distortion's units; ``None`` without row duals or
            when no bound is finite.
        """
        # each used output's posterior r_u has H(r_u) ≥ H(S) − ε; for any τ > 0,
        # min {a·r : H(r) ≥ h} ≥ τh − τ ln Σ_s e^{−a(s)/τ} (Lagrangian dual of the inner
        # problem, Gibbs), maximised over τ per output
        if lctx.row_duals is None:
            return None
        p = lctx.p_secret
        h = float(-(p * np.log(p)).sum()) - lctx.level_value
        return best_over_row_signs(lctx, lambda a: _least_cost_at_entropy(a, h), 0.0)


def _least_cost_at_entropy(a: np.ndarray, h: float, steps: int = 80) -> np.ndarray:
    """A lower bound on ``min {a_u · r : r a pmf, H(r) ≥ h}`` for every column ``a_u``.

    Each ``τ > 0`` gives the valid bound ``τh − τ ln Σ_s e^{−a(s)/τ}`` (concave in ``τ``);
    ``ln τ`` is searched by golden section, for all columns at once, and the result is
    never below ``min_s a(s)`` (the bound without the entropy condition).
    """
    from scipy.special import logsumexp

    floor = a.min(axis=0)
    if h <= 0:
        return floor

    excess = a - floor[None, :]  # ≥ 0; each column's least entry gives e⁰ in the sum

    def value(log_tau: np.ndarray) -> np.ndarray:
        # τh − τ ln Σ e^{−a/τ} = τh + min a − τ ln Σ e^{−(a − min a)/τ}: the same value, and a
        # quotient that overflows is +∞, a term e^{−∞} = 0 (written with −a/τ, a large
        # distortion overflowed every term to −∞ and the bound to +∞)
        tau = np.exp(log_tau)
        with np.errstate(over="ignore"):
            scaled = excess / tau[None, :]
        return tau * h + floor - tau * logsumexp(-scaled, axis=0)

    golden = (np.sqrt(5.0) - 1.0) / 2.0
    lo, hi = np.full(a.shape[1], -30.0), np.full(a.shape[1], 10.0)
    x1, x2 = hi - golden * (hi - lo), lo + golden * (hi - lo)
    f1, f2 = value(x1), value(x2)
    best = np.maximum(f1, f2)
    for _ in range(steps):
        left = f1 >= f2  # the maximum lies in [lo, x2]
        hi = np.where(left, x2, hi)
        lo = np.where(left, lo, x1)
        x1, x2 = hi - golden * (hi - lo), lo + golden * (hi - lo)
        f1, f2 = value(x1), value(x2)
        best = np.maximum(best, np.maximum(f1, f2))
    return np.maximum(floor, best)
