"""A lower bound on the optimum of a solved cvxpy program, computed by privopt from the
solver's dual values (numpy; cvxpy only to read added constraints).

Weak Lagrangian duality with the row-stochastic constraints kept: for any multipliers
``μ ≥ 0`` of the other constraints ``g_j(W) ≤ 0``,

    D*  ≥  min_{W row-stochastic}  E d(W) + Σ_j μ_j ℓ_j(W)  =  const + Σ_y min_u coef[y, u],

where ``ℓ_j ≤ g_j`` is ``g_j`` itself for the affine constraints and a linear minorant for the
exponential-cone ones (each notion writes its terms, :meth:`~privopt.notions.Notion.lagrangian`).
Constraints added by the user
(:meth:`~privopt.methods.cvxpy_program.PrivacyProblem.add_constraints`) enter the same way
when each is affine in ``W`` alone (``a(W) == 0``, ``a(W) ≤ 0`` or ``a(W) ≥ 0``): with its
multipliers ``λ`` (free for an equality, clipped to ``≥ 0`` for an inequality) the term
``±λ·a(W)`` is ``0`` or ``≤ 0`` on every feasible ``W``, so adding it to the Lagrangian keeps
the minimum over the row-stochastic matrices a lower bound, and it is linear in ``W``, so the
minimum still splits by rows. Other added constraints (not affine, or on other variables)
give no bound.
Every step is a valid inequality whatever the multipliers, so the bound does not rest on the
solver being right: a sloppy solve gives a weak bound (and the answer is not certified), never
a wrong one. Solver noise in the multipliers (a slightly negative dual, an auxiliary variable
whose coefficient has the wrong sign) is repaired before the bound is taken.
"""

from __future__ import annotations

__all__ = ["lagrangian_bound", "SEARCH_GAP"]

import cvxpy as cp
import numpy as np

from privopt.methods.cvxpy_program.program import PrivacyProblem
from privopt.notions.base import LagrangeContext, LagrangeTerms, dual_array

#: The multipliers are searched (scaled) only when the first bound leaves a relative gap
#: above this (half the certification tolerance: below it the answer is certified already).
SEARCH_GAP = 5e-7


def _channel_coefficients(pp: PrivacyProblem, terms: LagrangeTerms) -> np.ndarray:
    """``terms`` (on p(u|s) and p(u)) as coefficients on the mechanism ``W[y, u]``."""
    prior = pp.prior
    n_y, n_u = pp.distortion.shape
    coef = np.outer(prior.input_probs, terms.output)  # p(u) = Σ_y p(y) W[y, u]
    support = prior.secret_support
    observation = prior.observation  # p(y|s), or None when the secret is the input
    if observation is None:
        coef[support] += terms.channel
        if terms.channel_all is not None:
            coef += terms.channel_all
    else:
        coef += observation[support].T @ terms.channel
        if terms.channel_all is not None:
            coef += observation.T @ terms.channel_all
    return coef


def lagrangian_bound(
    pp: PrivacyProblem, *, epsilon: float | None, relaxed: bool = False
) -> float | None:
    """A lower bound on the optimum of the point just solved on ``pp``.

    The solver's multipliers of the privacy constraints (or, at a budget point, of the
    distortion budget) are also scaled by 0 and by a factor searched in ``[1/4, 4]`` (golden
    section: the dual function is concave along that ray) when the first bound leaves a gap;
    every bound evaluated is valid, the best is kept.

    Parameters
    ----------
    pp : PrivacyProblem
        Solved (its variables and constraints hold the solver's values).
    epsilon : float or None
        The ε of an ε point (``None``: the budget point of a ``direct_level`` notion).
    relaxed : bool
        The program was solved without its privacy constraint (large ε).

    Returns
    -------
    float or None
        ``E[d]`` at an ε point, the level (nats) at a budget point; ``None`` when no bound
        can be given (an added constraint that is not affine in ``W`` alone, a missing dual
        value, or a notion without Lagrangian terms).
    """
    if pp.W.value is None:
        return None
    user = user_terms(pp)
    if user is None:
        return None

    first = _bound(pp, epsilon, relaxed, 1.0, user)
    if first is None or relaxed or pp.problem.value is None:
        return first
    target = float(pp.problem.value)
    if epsilon is None:
        target = float(pp.notion.level_from_objective(target))
    if target - first <= SEARCH_GAP * (1 + abs(target)):
        return first
    # scale 0: the privacy constraint dropped (a good bound where it does not bind)
    dropped = _bound(pp, epsilon, relaxed, 0.0, user)
    best = first if dropped is None else max(first, dropped)
    lo, hi = np.log(0.25), np.log(4.0)
    golden = (np.sqrt(5) - 1) / 2
    a, b = hi - golden * (hi - lo), lo + golden * (hi - lo)
    fa = _bound(pp, epsilon, relaxed, np.exp(a), user)
    fb = _bound(pp, epsilon, relaxed, np.exp(b), user)
    for _ in range(30):
        fa_, fb_ = -np.inf if fa is None else fa, -np.inf if fb is None else fb
        best = max(best, fa_, fb_)
        if fa_ >= fb_:
            hi, b, fb = b, a, fa
            a = hi - golden * (hi - lo)
            fa = _bound(pp, epsilon, relaxed, np.exp(a), user)
        else:
            lo, a, fa = a, b, fb
            b = lo + golden * (hi - lo)
            fb = _bound(pp, epsilon, relaxed, np.exp(b), user)
        if hi - lo < 1e-6:
            break
    return float(best)


_EQUALITIES = (cp.constraints.Equality, cp.constraints.Zero)
_INEQUALITIES = (cp.constraints.Inequality, cp.constraints.NonPos, cp.constraints.NonNeg)


def user_terms(pp: PrivacyProblem) -> tuple[np.ndarray, float] | None:
    """The Lagrangian terms ``Σ_k ±λ_k·a_k(W) = <coef, W> + constant`` of the constraints
    added by the user, from the solver's dual values (zero without added constraints).

    Parameters
    ----------
    pp : PrivacyProblem
        Solved (its variables and constraints hold the solver's values).

    Returns
    -------
    tuple of (numpy.ndarray, float) or None
        ``(coef, constant)`` with ``coef`` of the shape of ``W``; ``None`` when a constraint is
        not ``==``, ``<=`` or ``>=`` of an expression affine in ``W`` alone, or has no dual value
        (no valid term is known for it).
    """
    coef = np.zeros(pp.W.shape)
    constant = 0.0
    for con in pp.user_constraints:
        expr = getattr(con, "expr", None)
        if not isinstance(con, _EQUALITIES + _INEQUALITIES):
            return None  # a cone (SOC, PSD, exponential…): no linear term is known
        if expr is None or con.dual_value is None or not expr.is_affine():
            return None
        if [v.id for v in expr.variables()] != [pp.W.id]:
            return None  # on another variable (or a constant): no term on W is known
        dual = np.nan_to_num(np.asarray(con.dual_value, dtype=float), posinf=0.0, neginf=0.0)
        if isinstance(con, cp.constraints.NonNeg):
            dual = -np.maximum(dual, 0.0)  # a(W) ≥ 0: the term −λ·a(W) ≤ 0
        elif not isinstance(con, _EQUALITIES):
            dual = np.maximum(dual, 0.0)  # a(W) ≤ 0: the term λ·a(W) ≤ 0
        dual = np.broadcast_to(dual, expr.shape)
        try:
            grad = expr.grad.get(pp.W)  # d a / d vec(W), column-major: (W.size, a.size)
            value = np.asarray(expr.value, dtype=float)
        except (ValueError, TypeError, AttributeError, NotImplementedError):
            return None
        if grad is None or value is None:
            return None
        # <dual, a(W)> = <G dual, vec W> + <dual, a(W0)> − <G dual, vec W0> (a is affine)
        linear = np.asarray(grad @ dual.ravel(order="F"), dtype=float).ravel()
        term = linear.reshape(pp.W.shape, order="F")
        coef += term
        constant += float(np.sum(dual * value)) - float(np.sum(term * pp.W.value))
    if not (np.isfinite(coef).all() and np.isfinite(constant)):
        return None
    return coef, constant


def _bound(
    pp: PrivacyProblem, epsilon, relaxed: bool, scale: float, user: tuple[np.ndarray, float]
) -> float | None:
    """The bound with the privacy multipliers (ε point) or the budget multiplier (budget
    point) scaled by ``scale``, and the user constraints' terms ``user``."""
    prior = pp.prior
    W0 = np.clip(np.asarray(pp.W.value, dtype=float), 0.0, None)
    W0 /= np.maximum(W0.sum(axis=1, keepdims=True), 1e-300)
    support = prior.secret_support
    weights = prior.input_probs[:, None] * pp.distortion.matrix  # E d = Σ weights ∘ W
    budget_point = epsilon is None
    coef = np.zeros_like(weights) if budget_point else weights.copy()
    coef += user[0]
    constant = user[1]
    for (extra, bound), con in zip(pp.extra_distortions, pp.extra_constraints, strict=True):
        nu = float(dual_array(con.dual_value, ()))
        coef += nu * prior.input_probs[:, None] * extra.matrix
        constant -= nu * bound
    if not (relaxed and not budget_point):
        mu = scale * float(dual_array(pp.budget_constraint.dual_value, ())) if budget_point else 1
        # the point a notion may linearise at (a Blahut–Arimoto step) is best taken for the
        # objective's whole linear part, the added constraints' terms included; any point
        # gives a valid bound
        refine = weights + user[0] / mu if mu > 0 else weights
        lctx = LagrangeContext(
            prior=prior,
            channel=prior.induced_channel(W0)[support],
            p_secret=prior.secret_probs[support],
            level=float(epsilon) if epsilon is not None else float("nan"),
            level_value=float(pp.level_parameter.value) if pp.level_parameter is not None else 0,
            neighbors=pp.context.neighbors,
            options=dict(pp.options),
            weights=refine[support] if prior.observation is None else None,
            distortion=pp.distortion.matrix,
            row_duals=pp.row_constraint.dual_value,
            multipliers=[con.dual_value for con in pp.notion_constraints],
        )
        duals = [con.dual_value for con in pp.notion_constraints]
        if budget_point:
            lctx.multiplier = mu
            terms = pp.notion.level_lagrangian(lctx, duals)
            coef += mu * weights
            constant -= mu * float(pp.budget_parameter.value)
        else:
            scaled = [None if d is None else scale * np.asarray(d, dtype=float) for d in duals]
            terms = pp.notion.lagrangian(lctx, scaled)
        decomposed = None
        if not budget_point and not pp.extra_distortions and lctx.row_duals is not None:
            # extra budgets only shrink the feasible set: a bound without them stays valid
            decomposed = pp.notion.decomposition_bound(lctx, scale)
        if terms is None:
            return decomposed
        coef += _channel_coefficients(pp, terms)
        constant += terms.constant
    else:
        decomposed = None
    value = constant + float(coef.min(axis=1).sum())
    if decomposed is not None:
        value = max(value, decomposed) if np.isfinite(value) else decomposed
    if not np.isfinite(value):
        return None
    if budget_point:
        return float(pp.notion.level_from_objective(value))
    return float(value)
