"""Budget mode for notions without a convex level objective: the least ε with ``D*(ε) ≤ D``.

Calmon & Fawaz (2012), Theorem 2 and its proof: ``D*(ε)`` is non-increasing in ε, so the
least level whose optimal distortion meets the budget is found by bisection on ε, each step
an ε point of the solve driver. The predicate "the point is feasible and its distortion is
within the budget" is monotone in ε (the feasible sets grow with ε), which also covers extra
budgets and added constraints: below the least level at which they can be met, points are
infeasible and the search moves up. The answer is the feasible end of the final bracket.
"""

from __future__ import annotations

__all__ = ["line_search", "budget_slack", "EPSILON_CAP", "BUDGET_RTOL"]

import math

import numpy as np

from privopt.errors import InfeasibleError
from privopt.papers.closed_form_checks import identifiability_least_level
from privopt.solve.point import PointOutcome, Run, least_distortion_with_extras
from privopt.solve.results import LineSearchInfo
from privopt.solve.verification import distortion_tolerance, repair_distortion, verify
from privopt.status import Status

#: Largest ε the search tries for notions whose level is unbounded (e^40 ≈ 2e17).
EPSILON_CAP = 40.0


def line_search(run: Run) -> tuple[PointOutcome, LineSearchInfo]:
    """The least ε whose optimal distortion meets ``run.request.max_distortion``.

    Parameters
    ----------
    run : Run
        A budget-mode run.

    Returns
    -------
    tuple
        The outcome at the returned level and the bracket.

    Raises
    ------
    InfeasibleError
        When no finite level meets the budget.
    """
    request = run.request
    budget = request.max_distortion
    least_d = request.least_distortion()
    tol = run.tol
    if budget < least_d - distortion_tolerance(least_d):
        raise InfeasibleError(
            f"no mechanism has expected distortion ≤ {budget:.6g}",
            least_d if request.is_plain else least_distortion_with_extras(run),
            "distortion",
        )
    slack = budget_slack(request, budget)
    lo = request.least_level()
    top = request.max_level()

    def meets(outcome: PointOutcome) -> bool:
        return outcome.feasible and outcome.verified.distortion <= budget + slack

    def done(outcome: PointOutcome, lo: float, hi: float) -> tuple:
        return outcome, LineSearchInfo((lo, hi), run.points, tol)

    def stopped(outcome: PointOutcome) -> PointOutcome:
        # a point stopped by the time limit may carry the feasible mechanism a method had
        # reached at that level: an answer to the request only if it meets the budget
        return outcome if meets(outcome) else PointOutcome(Status.TIME_LIMIT)

    if math.isinf(top) and budget <= least_d + slack and request.is_plain:
        _check_unbounded_optimum(request, budget, least_d)
    exact = _closed_form_level(request, budget)
    if exact is not None:  # the least level is known: its point, if it meets the budget
        at_exact = run.point(epsilon=exact)
        if at_exact.status == Status.TIME_LIMIT:
            return done(stopped(at_exact), exact, exact)
        if meets(at_exact):
            return done(at_exact, exact, exact)
    first = run.point(epsilon=lo)
    if first.status == Status.TIME_LIMIT:
        return done(stopped(first), lo, lo)
    if meets(first):
        return done(first, lo, lo)
    hi = top if math.isfinite(top) else max(lo, 0.0) + 1.0
    while True:
        at_hi = run.point(epsilon=hi)
        if at_hi.status == Status.TIME_LIMIT:
            return done(stopped(at_hi), lo, hi)
        if meets(at_hi):
            break
        if math.isfinite(top) and hi >= top:
            mixed = _repair_at_top(run, at_hi, budget, slack, hi)
            if mixed is not None:
                at_hi = mixed
                break
            if at_hi.status == Status.INFEASIBLE or not at_hi.feasible:
                raise InfeasibleError(
                    "the extra budgets and constraints cannot be met together with "
                    f"E[d] ≤ {budget:.6g} at any level",
                    None,
                    "distortion",
                )
            raise InfeasibleError(
                f"even the unconstrained optimum has distortion "
                f"{at_hi.verified.distortion:.9g} > {budget:.6g}",
                at_hi.verified.distortion,
                "distortion",
            )
        lo, hi = hi, hi * 2.0
        if hi > EPSILON_CAP:
            least = at_hi.verified.distortion if at_hi.feasible else None
            raise InfeasibleError(
                f"the budget {budget:.6g} needs a {request.notion.name} level above "
                f"{EPSILON_CAP} nats (D*(ε) only approaches {least_d:.9g} as ε → ∞)",
                least,
                "distortion",
            )
    best = at_hi
    while hi - lo > tol:
        mid = 0.5 * (lo + hi)
        at_mid = run.point(epsilon=mid)
        if at_mid.status == Status.TIME_LIMIT:
            break  # the best feasible answer so far is the upper end
        if meets(at_mid):
            hi, best = mid, at_mid
        else:
            lo = mid
    return done(best, lo, hi)


#: Relative slack of the line search on the budget: solver noise only, so that the answer
#: stays on the feasible side (``E[d] ≤ D·(1 + 1e-10)``, with a floor of ``1e-22`` times the
#: distortion's largest entry for ``D = 0``).
BUDGET_RTOL = 1e-10


def budget_slack(request, budget: float) -> float:
    """How far above the budget the line search accepts a point's distortion.

    Relative to the budget, so that a budget of ``1e-12`` is met to the same relative
    accuracy as a budget of 1 (an absolute slack would let a tiny budget be exceeded many
    times over and the least level be found too low); the floor for ``D = 0`` is tied to the
    distortion's scale (its largest entry).

    Parameters
    ----------
    request : DesignRequest
    budget : float

    Returns
    -------
    float
        ``BUDGET_RTOL·(D + 1e-12·max d)``.
    """
    d = request.distortion
    top = float(d.params.get("n", 1)) if d.is_database_hamming else float(d.matrix.max())
    return BUDGET_RTOL * (abs(budget) + 1e-12 * max(top, 0.0))


def _closed_form_level(request, budget: float) -> float | None:
    """The least level in closed form, where a theorem gives it: identifiability in Wang,
    Ying & Zhang's setting, ``ε*_I(D) = h⁻¹(D)`` for ``0 < D ≤ h(ε̃_X)`` (Thm 1). The search
    then solves that one point (and bisects only if it does not meet the budget)."""
    if request.notion.name != "identifiability" or not request.is_plain or request.options:
        return None
    level = identifiability_least_level(
        request.prior, request.distortion, request.neighbors, budget
    )
    if level is None or not math.isfinite(level) or level < request.least_level():
        return None
    return level


def _check_unbounded_optimum(request, budget: float, least_d: float) -> None:
    """Only the least-distortion mechanisms meet the budget: is one of them of finite level?

    That is decided by the argmin mechanism only when it is unique, i.e. every input of
    positive mass has a single least-distortion output; with ties another choice may have a
    finite level (e.g. a shared output for every input), which the search finds.
    """
    d = request.distortion.matrix
    exact = np.zeros(d.shape)
    exact[np.arange(d.shape[0]), d.argmin(axis=1)] = 1.0
    used = d[request.prior.input_probs > 0]
    unique = ((used == used.min(axis=1, keepdims=True)).sum(axis=1) == 1).all()
    if unique and math.isinf(request.level_of(exact)):
        raise InfeasibleError(
            f"E[d] ≤ {budget:.6g} = D*(∞) is met only by mechanisms of unbounded "
            f"{request.notion.name} level; at every finite level D*(ε) > {least_d:.9g}",
            None,
            "epsilon",
        )


def _repair_at_top(run: Run, outcome: PointOutcome, budget, slack, level) -> PointOutcome | None:
    """At the notion's largest level no mechanism is excluded, so ``D*(top) = D*(∞) ≤ D``
    unless extra constraints bind: an excess of solver noise only (budget ≈ D*(∞)) is removed
    by mixing in the least-distortion mechanism, which qualifies at that level."""
    if not outcome.feasible or outcome.verified.mechanism is None:
        return None
    matrix = outcome.verified.mechanism.matrix
    mixed, weight = repair_distortion(run.request, matrix, budget, slack)
    if weight <= 0:
        return None
    answer = outcome.answer
    from dataclasses import replace

    checked = verify(run.request, replace(answer, matrix=mixed), epsilon=level)
    if checked.feasible and checked.distortion <= budget + slack:
        return PointOutcome(outcome.status, checked, answer, outcome.method)
    return None
