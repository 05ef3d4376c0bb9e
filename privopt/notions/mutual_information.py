"""Average information leakage / mutual-information privacy ``I(S;U)``.

Calmon–Fawaz [Calmon-Fawaz] Def. 3 and Thm 1 (eq. 14); Wang et al. [Wang-Ying-Zhang] Def. 4 and
PD-MIP (eqs 31–34). Written with ``rel_entr`` in perspective form, never as a
difference of entropies.
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
class MutualInformation(Notion):
    """Mutual information ``I(S;U) ≤ ε`` nats (Calmon & Fawaz 2012, Def. 3 and Thm 1; Wang,
    Ying & Zhang 2016, Def. 4)."""

    name = "mutual_information"
    aliases = ("average_leakage",)
    convexity = "exponential_cone"
    zero_means_independent = True  # I(S;U) = 0 exactly at independence
    direct_level = True
    parameter = "linear"
    source = "Calmon-Fawaz Def. 3, Thm 1; Wang et al. Def. 4"
    output_law_constraints = 1.0
    #: The mutual information ``I(S;U)`` (Calmon & Fawaz 2012, Def. 3 and eq. (14)), in
    #: ``[0, H(S)]``.
    level_function = staticmethod(measures.mutual_information)

    def level_objective(self, ctx: DesignContext) -> cp.Expression:
        """``I(S;U) = Σ_{s,u} p(s) rel_entr(p(u|s), p(u))`` (Calmon & Fawaz 2012, eq. (14)).

        Returns
        -------
        cvxpy.Expression
            A convex scalar, in nats.
        """
        import cvxpy as cp

        # I(S;U) = Σ_{s,u} p(s) rel_entr(p(u|s), p(u))   ([Calmon-Fawaz] eq. 14)
        p_u_rows = ctx.broadcast_rows(ctx.p_u)
        return cp.sum(cp.multiply(ctx.p_secret[:, None], cp.rel_entr(ctx.channel, p_u_rows)))

    def constraints(self, ctx: DesignContext, level: cp.Parameter) -> list[cp.Constraint]:
        """``I(S;U) ≤ ε``, with :meth:`level_objective`.

        Returns
        -------
        list of cvxpy.Constraint
            One exponential-cone constraint.
        """
        return [self.level_objective(ctx) <= level]

    def max_level(self, prior: Prior | JointPrior | DatabasePrior) -> float:
        """``H(S)`` over the support: ``I(S;U) ≤ H(S)`` for every mechanism.

        Returns
        -------
        float
            ``H(S)`` in nats.
        """
        p = as_prior(prior).secret_probs
        return measures.shannon_entropy(p[p > 0])  # I(S;U) ≤ H(S)

    @staticmethod
    def _minorant(lctx, slope: float | None = None) -> LagrangeTerms:
        """``I(S;U) ≥ H(S) + Σ_{s,u} p(s,u) ln r_u(s)`` for any posterior ``r`` (Gibbs'
        inequality: the cross-entropy bounds ``H(S|U)``; the Barber–Agakov bound), linear in
        the channel.

        For a single secret and a slope ``s`` (the multiplier ratio), ``r`` is the posterior
        of one Blahut–Arimoto step from the answer's output law ``q``:
        ``r_u(y) ∝ p(y) q(u) e^{−s d(y,u)}``. The bound is then Csiszár's bound of the
        rate–distortion function (Blahut 1972, Thm 8), whose error is second order in the
        error of ``q``; otherwise ``r`` is the answer's own posterior."""
        p = lctx.p_secret
        h_s = float(-(p * np.log(p)).sum())
        posterior = lctx.posterior()
        single = lctx.prior.observation is None and p.size == lctx.prior.n_inputs
        if single and lctx.weights is not None and slope is not None and 0 < slope < np.inf:
            q = lctx.joint.sum(axis=0)
            with np.errstate(divide="ignore"):
                logits = np.log(q)[None, :] - slope * lctx.weights / p[:, None] + np.log(p)[:, None]
            logits = logits - logits.max(axis=1, keepdims=True)  # per row y (overflow guard)
            joint = np.exp(logits) * np.exp(
                np.log(p)[:, None] - np.log(np.exp(logits).sum(axis=1, keepdims=True))
            )
            col = joint.sum(axis=0)
            with np.errstate(invalid="ignore", divide="ignore"):
                refined = np.where(col > 0, joint / col, p[:, None])
            posterior = (1 - 1e-12) * refined + 1e-12 * p[:, None]
        coef = p[:, None] * np.log(posterior)
        return LagrangeTerms(coef, np.zeros(lctx.channel.shape[1]), h_s)

    def lagrangian(self, lctx: LagrangeContext, duals: list) -> LagrangeTerms:
        """The terms of ``μ (I(S;U) − ε)``, with ``I`` bounded below by the cross-entropy bound
        (when the secret is the input, at the posterior of one Blahut–Arimoto step of slope
        ``1/μ``, Blahut 1972), linear in the channel.

        Returns
        -------
        LagrangeTerms
            Channel coefficients ``μ p(s) ln r_u(s)``, output coefficients 0 and the constant
            ``μ (H(S) − ε)``.
        """
        mu = float(dual_array(duals[0], ()))
        bound = self._minorant(lctx, 1.0 / mu if mu > 0 else None)
        return LagrangeTerms(
            mu * bound.channel, bound.output, mu * (bound.constant - lctx.level_value)
        )

    def decomposition_bound(self, lctx: LagrangeContext, scale: float = 1.0) -> float | None:
        """The decomposition bound (:meth:`Notion.decomposition_bound`) at an ε point:
        ``E d + μ (I − ε) ≥ Σ_y p(y) λ(y) − μ ε + min_u −μ ln Σ_s p(s) e^{−a_u(s)/μ}`` (Gibbs'
        variational principle), with ``μ`` the constraint's multiplier times ``scale``.

        Returns
        -------
        float or None
            A lower bound on ``D*(ε)``, in the distortion's units; ``None`` at a budget point,
            without row duals or multipliers, when ``μ ≤ 0`` or when no bound is finite.
        """
        # E d + μ (I − ε) ≥ Σ_y p(y)λ(y) − με + Σ_u p(u) min_r [a_u·r + μ D(r‖p_S)], and the
        # inner minimum is −μ ln Σ_s p(s) e^{−a_u(s)/μ} (Gibbs' variational principle)
        if lctx.row_duals is None or not lctx.multipliers or lctx.multiplier is not None:
            return None
        mu = scale * float(dual_array(lctx.multipliers[0], ()))
        if not mu > 0:
            return None

        def inner(a: np.ndarray) -> np.ndarray:
            with np.errstate(over="ignore"):  # a tiny μ: ±inf exponents, a bound of −inf
                return -mu * _log_mean_exp(lctx.p_secret, -a / mu)

        return best_over_row_signs(lctx, inner, -mu * lctx.level_value)

    def level_lagrangian(self, lctx: LagrangeContext, duals: list) -> LagrangeTerms:
        """A lower bound on ``I(S;U)`` linear in the channel: the cross-entropy bound (when the
        secret is the input, at the posterior of one Blahut–Arimoto step of slope
        ``lctx.multiplier``, Blahut 1972).

        Returns
        -------
        LagrangeTerms
            Channel coefficients ``p(s) ln r_u(s)``, output coefficients 0 and the constant
            ``H(S)``.
        """
        mu = lctx.multiplier
        return self._minorant(lctx, mu if mu is not None and mu > 0 else None)


def _log_mean_exp(p: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``ln Σ_s p(s) e^{values[s, u]}`` per column ``u`` (stable)."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        top = values.max(axis=0)
        top = np.where(np.isfinite(top), top, 0.0)
        return top + np.log(np.sum(p[:, None] * np.exp(values - top[None, :]), axis=0))
