"""Budget mode for notions without a convex level objective: the least ε with ``D*(ε) ≤ D``.

Calmon & Fawaz (2012), Theorem 2 and its proof: ``D*(ε)`` is non-increasing in ε, so the
least level whose optimal distortion meets the budget is found by bisection on ε, each step
an ε point of the solve driver. The predicate "the point is feasible and its distortion is
within the budget" is monotone in ε (the feasible sets grow with ε), which also covers extra
budgets and added constraints: below the least level at which they can be met, points are
infeasible and the search moves up. The answer is the feasible end of the final bracket.
"""

from __future__ import annotations

import math

import numpy as np

from privopt.errors import InfeasibleError
from privopt.solve.driver import PointOutcome, Run, least_distortion_with_extras
from privopt.solve.results import LineSearchInfo
from privopt.solve.verification import distortion_tolerance, repair_distortion, verify
from privopt.status import Status

__all__ = ["line_search", "EPSILON_CAP"]

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
    slack = 1e-10 * (1 + budget)  # solver noise only: the answer stays on the feasible side
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
