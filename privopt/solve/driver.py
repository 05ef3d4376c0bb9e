"""The one solve driver: modes, infeasibility, the line search, fallback, time limits.

:func:`solve_request` answers a validated :class:`~privopt.request.DesignRequest` with a
chain of methods (:func:`~privopt.solve.selection.choose_methods`):

* **ε mode** — one ε point (least ``E[d]`` at level ε). Below the notion's least level the
  request is infeasible (``ε_X`` for identifiability); at level 0 on a single secret the
  answer is the best constant output, in closed form.
* **budget mode** — one budget point for the notions whose level is a convex objective (or
  when the method solves budget points itself); otherwise the least ε with ``D*(ε) ≤ D`` by
  bisection over ε points (:mod:`privopt.solve.line_search`).
* **each point** goes down the chain: a method that fails, whose answer fails verification,
  or whose answer cannot be certified hands over to the next one; the best feasible
  uncertified answer is returned as ``optimal_inaccurate`` if no method certifies. A method
  that claims infeasibility where a constant mechanism is known to be feasible is not
  believed.
* **time limits** — every method gets the time left and honours it as it declares
  (:class:`~privopt.methods.base.Stopping`): privopt's own loops check it, native solvers get
  it as their own limit, and a method whose set-up cannot be interrupted runs, on a large
  request, in a child process that the driver ends at the deadline
  (:mod:`privopt.solve.isolation`). Every method runs in the caller's thread or in that
  child: no work is left running when a run returns. A run that hits the limit ends with
  status ``time_limit`` (and the best feasible answer found, if any).
"""

from __future__ import annotations

__all__ = ["solve_request", "solve_unscaled", "distortion_scale", "scaled_request"]

import dataclasses
import math
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from privopt._docstrings import sections_of
from privopt.errors import (
    InfeasibleError,
    InputError,
    VerificationError,
)
from privopt.methods.base import Answer, Deadline, Method, ProgressEvent
from privopt.model import Distortion
from privopt.request import DesignRequest
from privopt.solve.line_search import line_search
from privopt.solve.point import (
    CLOSED_FORM_TOL,
    MAX_LEAKAGE_ENTRIES,
    PointOutcome,
    Run,
    least_distortion_with_extras,
    mismatch_text,
    point_checks,
)
from privopt.solve.results import (
    DesignResult,
    LeakageReport,
    LineSearchInfo,
    SolverRun,
)
from privopt.solve.verification import (
    distortion_tolerance,
)
from privopt.status import Status

#: The name a result gives for its solver when the request was found infeasible before any
#: method ran (the least achievable level or distortion is known in closed form).
LEAST_VALUE_CHECK = "least-value check"


def _infeasible_result(request: DesignRequest, exc: InfeasibleError, run: Run) -> DesignResult:
    point = request.requested
    checks = point_checks(
        request,
        None,
        epsilon=point.get("epsilon"),
        budget=point.get("max_distortion"),
        status="infeasible",
        least_achievable=exc.least_achievable,
    )
    return DesignResult(
        closed_form=checks,
        status=Status.INFEASIBLE,
        notion=request.notion.name,
        mode=request.mode,
        epsilon=None,
        distortion=None,
        mechanism=None,
        requested=request.requested,
        least_achievable=exc.least_achievable,
        least_achievable_quantity=exc.quantity,
        message=str(exc),
        solver=SolverRun(
            name=run.tried[-1] if run.tried else LEAST_VALUE_CHECK,
            solve_time_s=run.solve_time,
            wall_time_s=run.deadline.elapsed(),
            tried=list(run.tried),
            attempts=list(run.attempts),
        ),
    )


def _epsilon_mode(run: Run) -> PointOutcome:
    request = run.request
    eps = request.epsilon
    least = request.least_level()
    if eps < least - 1e-12:
        raise InfeasibleError(
            f"no mechanism has {request.notion.name} level {eps:.6g}", least, "epsilon"
        )
    outcome = run.point(epsilon=max(eps, least))  # level 0: the closed form (Run.point)
    if outcome.status == Status.INFEASIBLE:
        why = " with the extra budgets and constraints" if not request.is_plain else ""
        raise InfeasibleError(
            f"no mechanism meets {request.notion.name} level {eps:.6g}{why}",
            outcome.least_achievable,
            "epsilon",
        )
    return outcome


def _budget_point(run: Run) -> PointOutcome:
    request = run.request
    budget = request.max_distortion
    least = request.least_distortion()
    if budget < least - distortion_tolerance(least):
        raise InfeasibleError(
            f"no mechanism has expected distortion ≤ {budget:.6g}",
            least if request.is_plain else least_distortion_with_extras(run),
            "distortion",
        )
    outcome = run.point(budget=budget)
    if outcome.status == Status.INFEASIBLE:
        known = outcome.least_achievable
        raise InfeasibleError(
            f"no mechanism meets the budget {budget:.6g} with the extra budgets and constraints",
            (least if known is None else known)
            if request.is_plain
            else least_distortion_with_extras(run),
            "distortion",
        )
    return outcome


def distortion_scale(distortion: Distortion) -> float:
    """The power of two by which a distortion is divided before it reaches the methods.

    ``E[d]`` is linear in ``d``, so the program with ``d/s`` and budgets ``D/s`` has the same
    optimal mechanisms, and its distortions times ``s`` are the answer's. Every distortion is
    brought to a largest entry in ``[1, 2)`` (a power of two keeps the division exact), so
    that every tolerance of the solvers and of the certificate, which are stated for numbers
    near 1, is relative to the problem's own scale: a distortion given in other units
    (``d·2ᵏ``) is solved as exactly the same program, and its answer, certificate and status
    are those of ``d`` times ``2ᵏ``. (Solvers work with absolute tolerances near 1e-8 and fail
    outright on entries near 1e300 or round entries of 1e-12 to nothing.) The database
    Hamming distortion (whole numbers of changed rows, read by the structured methods) is
    solved as it is.

    Parameters
    ----------
    distortion : Distortion

    Returns
    -------
    float
        ``s`` (1.0 when no rescaling is needed).
    """
    if distortion.is_database_hamming:
        return 1.0
    top = float(distortion.matrix.max())
    if not (top > 0 and math.isfinite(top)) or 1.0 <= top < 2.0:
        return 1.0
    return float(2.0 ** math.floor(math.log2(top)))


def scaled_request(request: DesignRequest) -> tuple[DesignRequest, float]:
    """``request`` with its distortions divided by :func:`distortion_scale` (and budgets
    with them), and the scale of the main distortion.

    Parameters
    ----------
    request : DesignRequest

    Returns
    -------
    tuple of (DesignRequest, float)
        The request as the methods see it (``request`` itself when nothing is rescaled)
        and ``s``.
    """
    scale = distortion_scale(request.distortion)
    extras = []
    for extra, budget in request.extra_distortions:
        s = distortion_scale(extra)
        if s != 1.0:
            extra = Distortion(extra.matrix / s, extra.output_labels, extra.kind, copy=False)
        extras.append((extra, budget / s))
    if scale == 1.0 and tuple(extras) == tuple(request.extra_distortions):
        return request, 1.0
    d = request.distortion
    scaled = dataclasses.replace(
        request,
        distortion=Distortion(d.matrix / scale, d.output_labels, d.kind, copy=False),
        max_distortion=None if request.max_distortion is None else request.max_distortion / scale,
        extra_distortions=tuple(extras),
    )
    return scaled, scale


def _unscaled_result(result: DesignResult, request: DesignRequest, scale: float) -> DesignResult:
    """``result`` of the rescaled request in the user's units (distortions times ``scale``)."""
    result.requested = request.requested
    if result.distortion is not None:
        result.distortion *= scale
    if result.least_achievable is not None and result.least_achievable_quantity == "distortion":
        result.least_achievable *= scale
        result.message = (
            f"no mechanism meets the distortion budget {request.max_distortion:.6g} (least "
            f"achievable distortion: {result.least_achievable:.12g})"
        )
    elif result.message and request.mode == "max_distortion":
        result.message += _scale_note(scale)
    if request.mode == "epsilon":
        if result.objective is not None:
            result.objective *= scale
        if result.solver is not None:
            result.solver.repair_cost *= scale
        cert = result.certificate
        if cert is not None and cert.objective is not None:
            result.certificate = dataclasses.replace(
                cert,
                objective=cert.objective * scale,
                lower_bound=None if cert.lower_bound is None else cert.lower_bound * scale,
                gap=None if cert.gap is None else cert.gap * scale,
            )
    return result


def _scale_note(scale: float) -> str:
    return f" [distortions in this message are divided by {scale:g}, as solved]"


def solve_request(
    request: DesignRequest,
    chain: Sequence[Method],
    **settings,
) -> DesignResult:
    """Answer ``request`` with the methods of ``chain``, its distortions rescaled when their
    magnitude would defeat the solvers (:func:`distortion_scale`).

    Parameters
    ----------
    request : DesignRequest
    chain : sequence of Method
        From :func:`~privopt.solve.selection.choose_methods`.
    **settings
        ``tol``, ``time_limit``, ``deadline``, ``raise_on_infeasible``, ``warm``, ``cache``,
        ``on_progress``, ``max_memory``: see :func:`solve_unscaled`.

    Returns
    -------
    DesignResult

    Raises
    ------
    InfeasibleError, SolverError
    """
    scaled, scale = scaled_request(request)
    if scale == 1.0 and scaled is request:
        return solve_unscaled(request, chain, **settings)
    try:
        result = solve_unscaled(scaled, chain, **settings)
    except InfeasibleError as exc:
        if exc.quantity != "distortion" or exc.least_achievable is None:
            if request.mode == "max_distortion":
                raise InfeasibleError(
                    str(exc) + _scale_note(scale), exc.least_achievable, exc.quantity
                ) from None
            raise
        raise InfeasibleError(
            f"no mechanism meets the distortion budget {request.max_distortion:.6g}",
            exc.least_achievable * scale,
            "distortion",
        ) from None
    return _unscaled_result(result, request, scale)


@sections_of(solve_request, ("Returns", "Raises"))
def solve_unscaled(
    request: DesignRequest,
    chain: Sequence[Method],
    *,
    tol: float = 1e-7,
    time_limit: float | None = None,
    deadline: Deadline | None = None,
    raise_on_infeasible: bool = True,
    warm: dict | None = None,
    cache: dict | None = None,
    on_progress: Callable[[ProgressEvent], None] | None = None,
    max_memory: float | None = None,
) -> DesignResult:
    """Answer ``request`` with the methods of ``chain`` (see the module docstring).

    Parameters
    ----------
    request : DesignRequest
    chain : sequence of Method
        From :func:`~privopt.solve.selection.choose_methods`.
    tol : float
        The line search's bracket width on ε (nats).
    time_limit : float, optional
        Seconds for the whole run (ignored when ``deadline`` is given).
    deadline : Deadline, optional
        A deadline shared with other runs (a sweep's).
    raise_on_infeasible : bool
        Raise :class:`~privopt.errors.InfeasibleError` (default) or return a result with
        status ``infeasible``.
    warm : dict, optional
        The ``warm_state`` of a previous result on the same instance.
    cache : dict, optional
        Scratch space shared with the methods across runs (a sweep's).
    on_progress : callable, optional
        Receives :class:`~privopt.methods.ProgressEvent` objects.
    max_memory : float, optional
        The memory bound (bytes) of a method run in a child process (default
        :func:`privopt.resources.max_memory`).
    """
    start = time.perf_counter()
    run = Run(
        request,
        list(chain),
        tol=tol,
        deadline=deadline or Deadline(time_limit),
        on_progress=on_progress,
        warm=dict(warm or {}),
        cache=cache if cache is not None else {},
        named=bool(getattr(chain, "named", False)),
        max_memory=max_memory,
    )
    search = None
    try:
        if request.mode == "epsilon":
            outcome = _epsilon_mode(run)
        elif not request.uses_line_search:
            outcome = _budget_point(run)
        else:
            outcome, search = line_search(run)
    except InfeasibleError as exc:
        if raise_on_infeasible:
            raise
        return _infeasible_result(request, exc, run)
    if search is not None and outcome.feasible and not run.timed_out:
        # the budget-mode statements (e.g. ε*(D) = h⁻¹(D)) on the least level found, to the
        # accuracy of the line search (a search the time limit cut short found an upper end
        # of the bracket, not the least level: they do not apply to it)
        outcome.closed_form = point_checks(
            request,
            outcome.verified,
            budget=request.max_distortion,
            tol=max(CLOSED_FORM_TOL, 2 * tol),
        )
        failed = [c for c in outcome.closed_form if not c.passed]
        if failed:
            raise VerificationError(
                f"the least {request.notion.name} level found contradicts a closed form: "
                f"{mismatch_text(failed)}"
            )
    return _result(run, outcome, search, time.perf_counter() - start)


def _result(
    run: Run, outcome: PointOutcome, search: LineSearchInfo | None, wall: float
) -> DesignResult:
    request = run.request
    checked = outcome.verified
    solver = SolverRun(
        name=outcome.method or (run.tried[-1] if run.tried else ""),
        solve_time_s=run.solve_time,
        build_time_s=run.build_time,
        wall_time_s=wall,
        iterations=run.iterations,
        tried=list(run.tried),
        attempts=list(run.attempts),
        repair_weight=checked.repair_weight if checked else 0.0,
        repair_cost=checked.repair_cost if checked else 0.0,
        details=_details(outcome.answer),
    )
    status = outcome.status
    if run.timed_out and status != Status.OPTIMAL:
        status = Status.TIME_LIMIT
    message = ""
    if status == Status.TIME_LIMIT:
        limit = run.deadline.seconds
        # without a limit of the run's own, a method stopped by one of its own (a solver's)
        reached = f"time limit of {limit:g} s" if limit is not None else "a method's time limit"
        message = f"{reached} reached" + (
            " (the mechanism is the best feasible one found)" if checked else ""
        )
    mechanism = checked.mechanism if checked else None
    leakage: Any = {}
    if mechanism is not None and request.entries <= MAX_LEAKAGE_ENTRIES:
        leakage = LeakageReport(request.prior, mechanism.matrix, request.neighbors)
    elif checked is not None and hasattr(checked.structured, "leakage"):
        try:  # measured on the structure (nothing of the full size is built)
            leakage = checked.structured.leakage(request.prior)
        except InputError:
            leakage = {}
    return DesignResult(
        status=status,
        notion=request.notion.name,
        mode=request.mode,
        epsilon=checked.level if checked else None,
        distortion=checked.distortion if checked else None,
        mechanism=mechanism,
        requested=request.requested,
        leakage=leakage,
        solver=solver,
        verified=bool(checked and checked.feasible),
        certificate=checked.certificate if checked else None,
        message=message,
        line_search=search,
        objective=outcome.answer.objective if outcome.answer is not None else None,
        structured_mechanism=checked.structured if checked else None,
        closed_form=list(outcome.closed_form),
        warm_state=run.warm or None,
    )


def _details(answer: Answer | None) -> dict:
    if answer is None:
        return {}
    return {
        k: v
        for k, v in answer.details.items()
        if isinstance(v, (int, float, str, bool)) and not isinstance(v, np.ndarray)
    }
