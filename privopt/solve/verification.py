"""Verification, repair and certification of one method's answer (numpy only).

Every answer is checked before it is returned, whatever method produced it:

1. **Clean**: tiny negatives are zeroed and rows renormalised (an entry below −1e-7 or a row
   far from summing to 1 is not rounding: the answer is rejected).
2. **Re-measure** the level and ``E[d]`` with :mod:`privopt.measures` (or, for a structured
   answer too large to hold densely, with the method's own structured re-measurement).
3. **Repair** a level that exceeds ε by more than the tolerance: mix in the least weight of a
   constant mechanism (level 0), exactly for the linear notions
   (:meth:`~privopt.notions.Notion.repair_weight`), else by bisection on the re-measured
   level (:func:`~privopt.notions._mixing.least_mixing_weight`). A distortion above the
   budget is repaired by mixing in the least-distortion mechanism.
4. **Feasible** means: a channel, level ``≤ ε + 1e-9·(1 + ε)``, ``E[d] ≤ D + 1e-7·(1 + D)``
   (so a verified, even certified, answer may exceed ε by up to ``1e-9·(1 + ε)`` nats: this,
   not an exact inequality, is what "meets its constraint" promises),
   extra budgets and added constraints met.
5. **Certified** means: the method gave a lower bound on the optimum and the re-measured
   objective is within ``1e-6·(floor + |objective|)`` of it, the floor tied to the
   problem's own scale (:meth:`~privopt.request.DesignRequest.objective_floor`: 1 nat for a
   level, ``max d / 8`` for a distortion, so that "optimal" does not depend on the unit of
   ``d``). A method without a bound never certifies (the report says why there is no bound
   and whether its own objective at least agrees with the re-measured one); the driver then
   tries the next method. The cvxpy programs bound constraints added with ``add_constraints``
   too when they are affine in ``W``.
"""

from __future__ import annotations

__all__ = [
    "Verified",
    "verify",
    "LEVEL_TOL",
    "DISTORTION_TOL",
    "OBJECTIVE_RTOL",
    "level_tolerance",
    "output_labels",
]

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from privopt.errors import InputError
from privopt.methods.base import Answer
from privopt.model import Mechanism
from privopt.notions._mixing import least_mixing_weight
from privopt.request import DesignRequest
from privopt.solve.results import CertificateReport
from privopt.validation import DISTORTION_TOL, LEVEL_TOL, OBJECTIVE_RTOL, level_tolerance

#: A level above ``ε + REPAIR_TOL·(1 + ε)`` is repaired (to within that much of ε), so that
#: verified answers keep a margin inside :data:`LEVEL_TOL`.
REPAIR_TOL = 1e-10


def distortion_tolerance(budget: float) -> float:
    """The slack accepted on a budget D.

    Parameters
    ----------
    budget : float
        The distortion budget.

    Returns
    -------
    float
        ``DISTORTION_TOL·(1 + |D|)``: a re-measured ``E[d]`` up to ``D`` plus this is
        feasible.
    """
    return DISTORTION_TOL * (1.0 + abs(budget))


@dataclass
class Verified:
    """An answer after verification.

    Attributes
    ----------
    mechanism : Mechanism or None
        The (repaired) dense mechanism.
    structured : object or None
        The structured mechanism, when the method gave one.
    level, distortion : float
        Re-measured.
    feasible : bool
        Meets the point (level, budget, extra budgets, constraints).
    certified : bool
        Optimal within :data:`OBJECTIVE_RTOL` (see the module docstring).
    objective : float
        The re-measured objective (``E[d]`` at an ε point, the level at a budget point).
    repair_weight, repair_cost : float
    certificate : CertificateReport
    message : str
        Why it is not feasible or not certified.
    """

    mechanism: Mechanism | None
    structured: Any
    level: float
    distortion: float
    feasible: bool
    certified: bool
    objective: float
    repair_weight: float
    repair_cost: float
    certificate: CertificateReport
    message: str = ""


def output_labels(request: DesignRequest):
    """The output labels of a request's mechanisms.

    Parameters
    ----------
    request : DesignRequest
        The validated request.

    Returns
    -------
    tuple of str or None
        The distortion's output labels; failing those, the prior's input labels when there
        are as many outputs as inputs; otherwise ``None``.
    """
    d = request.distortion
    if d.output_labels is not None:
        return d.output_labels
    if d.n_outputs == request.prior.n_inputs:
        return request.prior.input_labels
    return None


def _mix(matrix: np.ndarray, anchor: np.ndarray, theta: float) -> np.ndarray:
    return (1.0 - theta) * matrix + theta * anchor[None, :]


def repair_level(
    request: DesignRequest, matrix: np.ndarray, eps: float, level: float | None = None
) -> tuple[np.ndarray, float]:
    """Mix ``matrix`` with a constant mechanism until its level is within ε.

    Two anchors are tried, the constant mechanism with the answer's own output law (close to
    the answer when it is nearly constant) and the uniform one (slack on every column); the
    repaired mechanism of least distortion is kept.

    Parameters
    ----------
    request : DesignRequest
    matrix : numpy.ndarray
    eps : float
    level : float, optional
        ``matrix``'s level, when the caller has measured it (a measurement of metric
        privacy on a 20 × 20 map takes a second or more).

    Returns
    -------
    tuple
        The repaired matrix (``matrix`` itself when no repair was needed) and the mixing
        weight (0 if none was needed).
    """
    target = eps + REPAIR_TOL * (1.0 + abs(eps))
    if (request.level_of(matrix) if level is None else level) <= target:
        return matrix, 0.0
    prior, notion = request.prior, request.notion
    anchors = [prior.input_probs @ matrix, np.full(matrix.shape[1], 1.0 / matrix.shape[1])]
    best = None
    for anchor in anchors:
        if request.level_of(np.broadcast_to(anchor, matrix.shape).copy()) > target:
            continue
        theta = None
        channel = prior.induced_channel(matrix)
        exact = notion.repair_weight(
            prior, channel, anchor, eps, request.neighbors, **request.options
        )
        if exact is not None:
            exact = min(1.0, exact * (1 + 1e-12) + 1e-15)
            if request.level_of(_mix(matrix, anchor, exact)) <= target:
                theta = exact
        if theta is None:
            theta = least_mixing_weight(
                lambda t, anchor=anchor: request.level_of(_mix(matrix, anchor, t)), target
            )
        if theta is None:
            continue
        repaired = _mix(matrix, anchor, theta)
        dist = request.distortion_of(repaired)
        if best is None or dist < best[2]:
            best = (repaired, theta, dist)
    if best is None:
        return matrix, math.nan
    return best[0], best[1]


def repair_distortion(
    request: DesignRequest, matrix: np.ndarray, budget: float, slack: float | None = None
) -> tuple[np.ndarray, float]:
    """Mix with the least-distortion deterministic mechanism until ``E[d] ≤ budget`` (an
    excess up to ``slack``, default the distortion tolerance, is left alone).

    Parameters
    ----------
    request : DesignRequest
    matrix : numpy.ndarray
    budget : float
    slack : float, optional

    Returns
    -------
    tuple
        The repaired matrix and the mixing weight.
    """
    dist = request.distortion_of(matrix)
    if dist <= budget + (distortion_tolerance(budget) if slack is None else slack):
        return matrix, 0.0
    best = np.zeros_like(matrix)
    best[np.arange(matrix.shape[0]), request.distortion.matrix.argmin(axis=1)] = 1.0
    d_best = request.distortion_of(best)
    if d_best >= dist:
        return matrix, 0.0
    weight = min(1.0, (dist - budget) / (dist - d_best))
    return (1 - weight) * matrix + weight * best, weight


def _extras_ok(request: DesignRequest, matrix: np.ndarray) -> bool:
    for extra, budget in request.extra_distortions:
        value = float(np.sum(request.prior.input_probs[:, None] * matrix * extra.matrix))
        if value > budget + distortion_tolerance(budget):
            return False
    if request.constraint_check is not None:
        return bool(request.constraint_check(matrix))
    return True


def _independent_bound(
    request: DesignRequest, answer: Answer, epsilon: float | None
) -> tuple[float, str]:
    """The method's lower bound, and where it comes from: where the method stated the dual
    point of its bound (:attr:`~privopt.methods.base.Certificate.dual_point`), the smaller of
    its own value and the value of that dual point evaluated through the notion's own
    Lagrangian terms (weak duality on the notion's constraints, not the method's program).
    """
    cert = answer.certificate
    bound, source = float(cert.lower_bound), cert.source
    point = cert.dual_point
    if point is None or epsilon is None or not math.isfinite(epsilon):
        return bound, source
    from privopt.solve.curve_band import dual_point_bound  # curve_band imports this module

    again = dual_point_bound(request, point, epsilon)
    if again is None:
        return bound, source + "; its dual point could not be evaluated again"
    if again >= bound:
        return bound, source + "; its dual point gives it again through the notion's constraints"
    # weaker (or nan): the method's program was not the notion's, or its duals were off
    bound = again if not math.isnan(again) else -math.inf
    return bound, source + "; kept as its dual point evaluated through the notion's constraints"


def _certify(
    answer: Answer,
    objective: float,
    raw_objective: float,
    repair_cost: float,
    added_constraints: bool = False,
    floor: float = 1.0,
    request: DesignRequest | None = None,
    epsilon: float | None = None,
) -> CertificateReport:
    scale = floor + abs(objective)
    cert = answer.certificate
    if cert is not None and cert.lower_bound is not None and math.isfinite(cert.lower_bound):
        bound, source = cert.lower_bound, cert.source
        if request is not None:
            bound, source = _independent_bound(request, answer, epsilon)
        gap = objective - bound
        relative = max(gap, 0.0) / scale
        return CertificateReport(
            objective=objective,
            lower_bound=float(bound),
            gap=float(gap),
            relative_gap=float(relative),
            tolerance=OBJECTIVE_RTOL,
            certified=bool(relative <= OBJECTIVE_RTOL),
            source=source,
        )
    # no bound: the method's objective must agree with the re-measured raw answer (this
    # catches a wrong program or a sloppy solve) and the repair may cost only that much
    claimed = answer.objective
    agree = math.isfinite(claimed) and abs(raw_objective - claimed) <= OBJECTIVE_RTOL * scale
    cheap = repair_cost <= OBJECTIVE_RTOL * scale
    why = f"no lower bound from {answer.method}"
    if added_constraints:
        why += (
            " (with added constraints, a bound needs each to be ==, <= or >= of an expression"
            " affine in W alone)"
        )
    if not agree:
        verdict = f"disagrees with the re-measured {raw_objective:.12g}"
    elif not cheap:
        verdict = f"agrees with the re-measured answer, but its repair cost {repair_cost:.3g}"
    else:
        verdict = "agrees with the re-measured answer, which is not a certificate"
    return CertificateReport(
        objective=objective,
        lower_bound=None,
        gap=None,
        relative_gap=None,
        tolerance=OBJECTIVE_RTOL,
        certified=False,
        source=f"none: {why}; {answer.method}'s objective {claimed:.12g} {verdict}",
    )


def verify(
    request: DesignRequest,
    answer: Answer,
    *,
    epsilon: float | None = None,
    budget: float | None = None,
) -> Verified:
    """Clean, re-measure, repair and certify one answer to one point.

    Parameters
    ----------
    request : DesignRequest
    answer : Answer
        With ``matrix`` (dense) or ``measured`` (structured).
    epsilon : float, optional
        The point's level (an ε point).
    budget : float, optional
        The point's budget (a budget point).

    Returns
    -------
    Verified
    """
    if answer.matrix is None:
        return _verify_structured(request, answer, epsilon, budget)
    try:
        mech = Mechanism.from_solver(
            answer.matrix, request.prior.input_labels, output_labels(request)
        )
    except InputError as exc:
        return _rejected(answer, f"invalid mechanism: {exc}")
    matrix = mech.matrix
    raw_level, raw_dist = request.level_of(matrix), request.distortion_of(matrix)
    weight = 0.0
    if epsilon is not None and math.isfinite(epsilon):
        matrix, weight = repair_level(request, matrix, epsilon, raw_level)
        if math.isnan(weight):
            return _rejected(
                answer,
                f"level {raw_level:.9g} > ε = {epsilon:.9g} and no constant mechanism repairs it",
            )
    if budget is not None:
        matrix, w2 = repair_distortion(request, matrix, budget)
        weight = max(weight, w2)
    if matrix is mech.matrix:  # not repaired: measured above
        level, dist = raw_level, raw_dist
    else:
        level, dist = request.level_of(matrix), request.distortion_of(matrix)
    feasible = _extras_ok(request, matrix)
    if epsilon is not None and math.isfinite(epsilon):
        feasible &= level <= epsilon + level_tolerance(epsilon)
    if budget is not None:
        feasible &= dist <= budget + distortion_tolerance(budget)
    by_level = budget is not None
    objective = level if by_level else dist
    raw = raw_level if by_level else raw_dist
    report = _certify(
        answer,
        objective,
        raw,
        objective - raw,
        bool(request.user_constraints),
        request.objective_floor(by_level),
        request,
        None if by_level else epsilon,
    )
    message = ""
    if not feasible:
        message = (
            f"re-measured level {level:.12g}, distortion {dist:.12g} miss the point "
            f"(ε = {epsilon}, D = {budget})"
        )
    elif not report.certified:
        message = _uncertified(report)
    mechanism = Mechanism(matrix, request.prior.input_labels, output_labels(request))
    return Verified(
        mechanism,
        answer.structured if weight == 0 else None,
        float(level),
        float(dist),
        bool(feasible),
        bool(report.certified and feasible),
        float(objective),
        float(weight),
        float(objective - raw),
        report,
        message,
    )


def _uncertified(report: CertificateReport) -> str:
    if report.gap is not None:
        return (
            f"relative gap {report.relative_gap:.3g} to the lower bound {report.lower_bound:.12g}"
            f" above {report.tolerance:g}"
        )
    return f"not certified: {report.source.removeprefix('none: ')}"


def _rejected(answer: Answer, message: str) -> Verified:
    report = CertificateReport(math.nan, None, None, None, OBJECTIVE_RTOL, False, answer.method)
    return Verified(
        None, None, math.nan, math.nan, False, False, math.nan, 0.0, 0.0, report, message
    )


def _verify_structured(request, answer: Answer, epsilon, budget) -> Verified:
    """An answer held only in structured form: the method's structured re-measurement (made
    independently of its solve) against the same tolerances."""
    m = answer.measured
    if m is None or answer.structured is None:
        return _rejected(answer, "no mechanism in the answer")
    feasible = m.row_sum_error <= 1e-9 and request.is_plain
    if epsilon is not None and math.isfinite(epsilon):
        feasible &= m.level <= epsilon + level_tolerance(epsilon)
    if budget is not None:
        feasible &= m.distortion <= budget + distortion_tolerance(budget)
    objective = m.level if budget is not None else m.distortion
    report = _certify(
        answer, objective, objective, 0.0, floor=request.objective_floor(budget is not None)
    )
    message = "" if feasible else "the structured re-measurement misses the point"
    if feasible and not report.certified:
        message = _uncertified(report)
    return Verified(
        None,
        answer.structured,
        float(m.level),
        float(m.distortion),
        bool(feasible),
        bool(report.certified and feasible),
        float(objective),
        float(m.details.get("repair_weight", 0.0)),
        0.0,
        report,
        message,
    )
