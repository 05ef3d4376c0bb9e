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

import dataclasses
import math
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from privopt.closed_form_checks import MAX_DENSE as MAX_CHECKED_ROWS
from privopt.closed_form_checks import identifiability_bound
from privopt.errors import (
    InfeasibleError,
    InputError,
    PrivoptError,
    SolverError,
    VerificationError,
)
from privopt.methods.base import Answer, Certificate, Deadline, Method, ProgressEvent, Task
from privopt.model import Distortion
from privopt.request import DesignRequest
from privopt.resources import max_memory as memory_bound
from privopt.solve.isolation import run_isolated, should_isolate
from privopt.solve.results import (
    Attempt,
    DesignResult,
    LeakageReport,
    LineSearchInfo,
    SolverRun,
)
from privopt.solve.verification import (
    Verified,
    distortion_tolerance,
    objective_floor,
    verify,
)
from privopt.status import Status

__all__ = ["Run", "PointOutcome", "solve_request", "solve_in_process", "MAX_LEAKAGE_ENTRIES"]

#: The leakage report is offered for mechanisms of at most this many entries.
MAX_LEAKAGE_ENTRIES = 2**22
#: The name under which closed-form answers are reported.
CLOSED_FORM = "closed form"
#: Relative tolerance of the closed-form checks of an answer (the certification tolerance).
CLOSED_FORM_TOL = 1e-6


@dataclass
class PointOutcome:
    """How one point ended.

    Attributes
    ----------
    status : Status
        ``OPTIMAL``, ``OPTIMAL_INACCURATE``, ``INFEASIBLE`` or ``TIME_LIMIT``.
    verified : Verified or None
        The accepted answer (``None`` when infeasible, or a time limit without one; with
        ``TIME_LIMIT``, the verified point a method stopped by the limit handed over).
    answer : Answer or None
        The method's raw answer.
    method : str
    least_achievable : float or None
        With ``INFEASIBLE``, when the method knew it.
    closed_form : list of ClosedFormCheck
        The papers' closed forms that apply to the point, checked on the answer (all
        passed: an answer that fails one is not accepted).
    """

    status: Status
    verified: Verified | None = None
    answer: Answer | None = None
    method: str = ""
    least_achievable: float | None = None
    closed_form: list = field(default_factory=list)

    @property
    def feasible(self) -> bool:
        """Whether the point has an accepted (feasible) answer, as a ``bool``."""
        return self.verified is not None and self.verified.feasible


@dataclass
class Run:
    """The state of one design run (one request, possibly many points).

    Parameters
    ----------
    request : DesignRequest
    chain : list of Method
        The methods to try at each point, in order.
    tol : float
        The line search's bracket width (methods are asked for ``min(tol, 1e-9)``).
    deadline : Deadline
    on_progress : callable, optional
        Receives :class:`~privopt.methods.ProgressEvent` objects.
    warm : dict, optional
        Method name → the ``warm`` of its previous answer on this instance.
    cache : dict, optional
        Scratch space shared with the methods (e.g. the built cvxpy program).
    named : bool
        The user named the methods (``solver=``): the near-optimal answer at the limit
        ε → ∞ does not take their place (the exact answer at level 0, independence, still
        does: every method's optimum is that one).
    max_memory : float, optional
        The memory bound (bytes; default :func:`privopt.resources.max_memory`): the address
        space a method run in a child process may take.
    """

    request: DesignRequest
    chain: list[Method]
    tol: float = 1e-7
    deadline: Deadline = field(default_factory=Deadline)
    on_progress: Callable[[ProgressEvent], None] | None = None
    warm: dict = field(default_factory=dict)
    cache: dict = field(default_factory=dict)
    max_memory: float | None = None
    attempts: list[Attempt] = field(default_factory=list)
    tried: list[str] = field(default_factory=list)
    solve_time: float = 0.0
    build_time: float = 0.0
    iterations: int = 0
    points: int = 0
    timed_out: bool = False
    named: bool = False

    # --- one point ----------------------------------------------------------------------------
    def point(self, *, epsilon: float | None = None, budget: float | None = None) -> PointOutcome:
        """Solve one point down the chain (see the module docstring).

        Parameters
        ----------
        epsilon : float, optional
            The level of an ε point (nats); the answer minimises ``E[d]`` at that level.
        budget : float, optional
            The distortion budget of a budget point; the answer minimises the level.

        Returns
        -------
        PointOutcome
            The first certified answer, else the best feasible uncertified one, else the
            infeasibility a method reported, else a ``TIME_LIMIT`` outcome.

        Raises
        ------
        SolverError
            When every method of the chain failed or gave an answer that could not be
            verified, and the time limit was not reached.
        """
        self.points += 1
        if epsilon is not None:
            if epsilon == 0 and _independence_applies(self.request):  # exact: U ⊥ X
                self._emit(CLOSED_FORM, "done")
                return _independent_outcome(self.request)
            # the limit answer is near-optimal only: it never replaces a named method
            limit = None if self.named else _limit_outcome(self.request, epsilon)
            if limit is not None:
                self._emit(limit.method, "done")
                return limit
        best: PointOutcome | None = None
        best_bound: tuple[float, str, str] | None = None  # (bound, source, method)
        infeasible: PointOutcome | None = None
        for method in self.chain:
            if self.deadline.expired():
                self.timed_out = True
                break
            if method.name not in self.tried:
                self.tried.append(method.name)
            task = Task(
                self.request,
                epsilon=epsilon,
                budget=budget,
                tol=min(self.tol, 1e-9),
                deadline=self.deadline,
                warm=self.warm.get(method.name) if method.warm_starts else None,
                cache=self.cache,
                report=self.on_progress,
            )
            start = time.perf_counter()
            answer = self._call(method, task)
            seconds = time.perf_counter() - start
            self.solve_time += answer.solve_time or seconds
            self.build_time = max(self.build_time, answer.build_time)
            self.iterations += answer.iterations or 0
            if answer.warm is not None:
                self.warm[method.name] = answer.warm
            if answer.status == Status.TIME_LIMIT:
                self.timed_out = True
                self.attempts.append(Attempt(method.name, "time_limit", answer.message, seconds))
                best = self._time_limited_point(answer, method, best, epsilon, budget)
                break
            if answer.status == Status.INFEASIBLE:
                if self._surely_feasible(epsilon, budget):
                    self._note(
                        method,
                        "infeasible",
                        "claimed infeasible, but a constant mechanism meets the point",
                        seconds,
                    )
                    continue
                infeasible = PointOutcome(
                    Status.INFEASIBLE, None, answer, method.name, answer.least_achievable
                )
                break
            if not answer.status.has_answer:
                self._note(method, "failed", answer.message or str(answer.status), seconds)
                continue
            checked = verify(self.request, answer, epsilon=epsilon, budget=budget)
            if not checked.feasible:
                self._note(method, "unverified", checked.message, seconds)
                continue
            checks = point_checks(self.request, checked, epsilon=epsilon, budget=budget)
            failed = [c for c in checks if not c.passed]
            if failed:  # a closed form contradicts the answer: as good as a failed verification
                self._note(method, "closed_form_mismatch", _mismatch_text(failed), seconds)
                continue
            outcome = PointOutcome(
                Status.OPTIMAL if checked.certified else Status.OPTIMAL_INACCURATE,
                checked,
                answer,
                method.name,
                closed_form=checks,
            )
            if checked.certified:
                self._emit(method.name, "done")
                return outcome
            self._note(method, "optimal_inaccurate", checked.message, seconds)
            bound = checked.certificate.lower_bound
            if bound is not None and math.isfinite(bound):
                if best_bound is None or bound > best_bound[0]:
                    best_bound = (float(bound), checked.certificate.source, method.name)
            if best is None or checked.objective < best.verified.objective:
                best = outcome
            combined = _combined(
                best, best_bound, objective_floor(self.request, budget is not None)
            )
            if combined is not None:
                self._emit(combined.method, "done")
                return combined
        if best is not None:
            return best
        if infeasible is not None:
            return infeasible
        if self.timed_out or self.deadline.expired():
            self.timed_out = True
            return PointOutcome(Status.TIME_LIMIT)
        detail = "; ".join(f"{a.method}: {a.message}" for a in self.attempts[-len(self.chain) :])
        raise SolverError(
            f"no method could solve the {self.request.notion.name} point "
            f"{_point_text(epsilon, budget)} (tried {', '.join(m.name for m in self.chain)}"
            f"{'; ' + detail if detail else ''})"
        )

    def _surely_feasible(self, epsilon, budget) -> bool:
        request = self.request
        if epsilon is not None:
            return request.feasible_without_extras(epsilon)
        return request.is_plain and budget >= request.least_distortion() - 1e-12

    def _time_limited_point(
        self,
        answer: Answer,
        method: Method,
        best: PointOutcome | None,
        epsilon: float | None,
        budget: float | None,
    ) -> PointOutcome | None:
        """The better of ``best`` and the point a method stopped by the time limit handed
        over (its best iterate, e.g. ``block-ipm``'s), verified like any answer: the run then
        ends with that mechanism and its certificate's gap instead of nothing.

        Uncertified, it is a ``TIME_LIMIT`` outcome that carries the verified mechanism: a
        line search stops there and does not read its distortion as the optimum's."""
        if answer.matrix is None and answer.structured is None:
            return best
        checked = verify(self.request, answer, epsilon=epsilon, budget=budget)
        if not checked.feasible:
            return best
        if best is not None and not checked.objective < best.verified.objective:
            return best
        if not checked.certified:  # feasible, not optimal: no closed form can be expected
            return PointOutcome(Status.TIME_LIMIT, checked, answer, method.name)
        checks = point_checks(self.request, checked, epsilon=epsilon, budget=budget)
        if not all(c.passed for c in checks):
            return best
        return PointOutcome(Status.OPTIMAL, checked, answer, method.name, closed_form=checks)

    def _call(self, method: Method, task: Task) -> Answer:
        """Run ``method`` on ``task`` in this thread, or, when it cannot stop itself on a
        large request under a time limit, in a child process ended at the deadline
        (:func:`~privopt.solve.isolation.should_isolate`). No thread is started: a method
        that returns has stopped, so nothing runs on (and allocates) after the run."""
        self._emit(method.name, "start")
        if should_isolate(method, self.request, self.deadline):
            limit = memory_bound() if self.max_memory is None else self.max_memory
            answer = run_isolated(method, task, limit)
            if answer is not None:  # None: the task does not pickle (a caller's program)
                if answer.status == Status.FAILED and answer.message:
                    answer.message = plain_failure_text(answer.message)
                return answer
        return solve_in_process(method, task)

    def _note(self, method: Method, status: str, message: str, seconds: float) -> None:
        self.attempts.append(Attempt(method.name, status, message, seconds))
        self._emit(method.name, "fallback", message=f"{method.name}: {status}: {message}")

    def _emit(self, method: str, stage: str, message: str = "") -> None:
        if self.on_progress is not None:
            self.on_progress(ProgressEvent(stage, method, self.deadline.elapsed(), None, message))


def _combined(
    best: PointOutcome | None, bound: tuple[float, str, str] | None, floor: float = 1.0
) -> PointOutcome | None:
    """The least-objective verified answer of a point certified by the largest lower bound of
    any attempt (each bound is computed by privopt from a dual point of the same point's
    program, so any of them bounds the optimum), or ``None`` when their gap is still above
    the tolerance (or one method gave both: its own report already said so)."""
    if best is None or bound is None or bound[2] == best.method:
        return None
    report = best.verified.certificate
    objective = best.verified.objective
    gap = objective - bound[0]
    relative = max(gap, 0.0) / (floor + abs(objective))
    if not relative <= report.tolerance:
        return None
    certificate = dataclasses.replace(
        report,
        lower_bound=bound[0],
        gap=float(gap),
        relative_gap=float(relative),
        certified=True,
        source=f"{bound[1]} (the bound of {bound[2]}; the answer of {best.method})",
    )
    verified = dataclasses.replace(best.verified, certified=True, certificate=certificate)
    return dataclasses.replace(best, status=Status.OPTIMAL, verified=verified)


def point_checks(
    request: DesignRequest,
    checked: Verified | None,
    *,
    epsilon: float | None = None,
    budget: float | None = None,
    status: str = "optimal",
    least_achievable: float | None = None,
    tol: float = CLOSED_FORM_TOL,
) -> list:
    """The papers' closed forms that apply to one point, checked on its answer (the notion's
    :meth:`~privopt.notions.Notion.closed_form_checks`).

    Parameters
    ----------
    request : DesignRequest
        The request the point belongs to.
    checked : Verified or None
        The verified answer (``None`` when there is none, e.g. an infeasible point).
    epsilon : float, optional
        The level of an ε point (nats).
    budget : float, optional
        The distortion budget of a budget point (when ``epsilon`` is not given).
    status : str
        The point's status; ``"infeasible"`` means no method found a solution.
    least_achievable : float, optional
        With ``status="infeasible"``, the least achievable value reported.
    tol : float
        Relative tolerance of every comparison.

    Returns
    -------
    list of ClosedFormCheck
        The checks that apply, each evaluated (empty for notions without closed forms and for
        requests with extra budgets or added constraints).
    """
    if not request.is_plain:
        return []
    matrix = None
    if checked is not None and checked.mechanism is not None:
        if checked.mechanism.matrix.shape[0] <= MAX_CHECKED_ROWS:
            matrix = checked.mechanism.matrix
    return request.notion.closed_form_checks(
        request.prior,
        request.distortion,
        "epsilon" if epsilon is not None else "max_distortion",
        options=request.options,
        neighbors=request.neighbors,
        requested=epsilon if epsilon is not None else budget,
        level=checked.level if checked is not None else None,
        expected_distortion=checked.distortion if checked is not None else None,
        mechanism=matrix,
        status=status,
        least_achievable=least_achievable,
        tol=tol,
    )


def _mismatch_text(failed: list) -> str:
    return "; ".join(
        f"{c.name} ({c.statement}): expected {c.expected}, got {c.got}" for c in failed
    )


#: Longest failure message kept from a method (solver texts can run to pages).
MAX_FAILURE_TEXT = 300


def plain_failure_text(text: str) -> str:
    """A solver's failure text fit for a user: one line, internal structures (dict or list
    reprs such as solver option tables) replaced by ``…``, at most
    :data:`MAX_FAILURE_TEXT` characters.

    Parameters
    ----------
    text : str

    Returns
    -------
    str
    """
    line = " ".join(str(text).split())
    for _ in range(5):  # nested braces: innermost first
        shorter = re.sub(r"\{[^{}]{0,100000}\}|\[[^\[\]]{40,100000}\]", "…", line)
        if shorter == line:
            break
        line = shorter
    if len(line) > MAX_FAILURE_TEXT:
        line = line[: MAX_FAILURE_TEXT - 1] + "…"
    return line


def solve_in_process(method: Method, task: Task) -> Answer:
    """Run a method in this process; any failure other than bad input becomes a ``FAILED``
    answer (with its text made plain by :func:`plain_failure_text`).

    Parameters
    ----------
    method : Method
    task : Task

    Returns
    -------
    Answer
    """
    answer = _solve_or_fail(method, task)
    if answer.status == Status.FAILED and answer.message:
        answer.message = plain_failure_text(answer.message)
    return answer


def _solve_or_fail(method: Method, task: Task) -> Answer:
    try:
        return method.solve(task)
    except InputError:
        raise
    except (KeyboardInterrupt, SystemExit):
        raise
    except MemoryError:
        return Answer(Status.FAILED, method.name, message="out of memory")
    except (PrivoptError, ArithmeticError, ValueError, RuntimeError, np.linalg.LinAlgError) as exc:
        return Answer(Status.FAILED, method.name, message=f"{type(exc).__name__}: {exc}")


def _point_text(epsilon, budget) -> str:
    return f"at ε = {epsilon:.6g}" if epsilon is not None else f"at budget D = {budget:.6g}"


# --- closed forms ----------------------------------------------------------------------------
def _independence_applies(request: DesignRequest) -> bool:
    return (
        not request.prior.is_joint
        and request.notion.independent_at_zero(request.neighbors)
        and request.is_plain
        and request.entries <= MAX_LEAKAGE_ENTRIES  # dense; structured methods handle the rest
    )


def _independent_outcome(request: DesignRequest) -> PointOutcome:
    """Level 0 on a single secret forces ``U ⊥ X``: the best constant output is optimal,
    ``D*(0) = min_u Σ_y p(y) d(y,u)`` (exact, no solver needed)."""
    costs = request.prior.input_probs @ request.distortion.matrix
    matrix = np.zeros(request.distortion.shape)
    matrix[:, int(np.argmin(costs))] = 1.0
    value = float(costs.min())
    answer = Answer(
        Status.OPTIMAL,
        f"{CLOSED_FORM} (independence at level 0)",
        matrix=matrix,
        objective=value,
        certificate=Certificate(value, "closed form: level 0 forces U independent of X"),
    )
    checked = verify(request, answer, epsilon=0.0)
    return PointOutcome(Status.OPTIMAL, checked, answer, answer.method)


#: From this level on, an ε point is first offered the closed-form answer at the limit.
LIMIT_EPSILON = 12.0


def _limit_outcome(request: DesignRequest, eps: float) -> PointOutcome | None:
    """The answer at the limit ε → ∞, when it is certified at ``eps``.

    ``D*(∞) = Σ_y p(y) min_u d(y,u)`` bounds ``D*(ε)`` from below for every notion. The
    least-distortion deterministic mechanism, mixed with the least weight of a constant
    mechanism that brings its level down to ε (exactly, for the linear notions), is feasible
    and within ``O(e^{−ε})`` of that bound: from ε ≈ 15 on it is certified, with no solver
    and none of the ``e^{±ε}`` coefficients that wreck a solver's scaling. Beyond the
    notion's largest level (finite for PML, maximal leakage and the information measures)
    the deterministic mechanism itself is optimal.

    For identifiability in Wang, Ying & Zhang's setting the bound is ``h(ε)`` instead (their
    Lemma 1), and from ``ε̃_X`` on there is no shortcut: E_i is the optimum itself (the
    ``wang-identifiability`` method). The driver offers this answer only when no method was
    named (:attr:`Run.named`).
    """
    if not request.is_plain or request.entries > MAX_LEAKAGE_ENTRIES:
        return None
    if request.distortion.is_database_hamming and request.prior.size > 2**12:
        return None
    cap = request.max_level()
    if not (eps >= LIMIT_EPSILON or eps >= cap):
        return None
    lower = request.least_distortion()
    source = "D*(∞) = Σ_y p(y) min_u d(y,u): no mechanism does better"
    if request.notion.name == "identifiability" and not request.options:
        wang = identifiability_bound(request.prior, request.distortion, request.neighbors, eps)
        if wang is not None:
            h_eps, exact = wang
            if exact:  # E_i (wang-identifiability) is the optimum itself: no shortcut
                return None
            if h_eps > lower:  # the bound that holds here, and the tighter one
                lower = h_eps
                source = "h(ε) (Wang, Ying & Zhang 2016, Lemma 1: R-PD relaxes PD-I)"
    d = request.distortion.matrix
    matrix = np.zeros(d.shape)
    matrix[np.arange(d.shape[0]), d.argmin(axis=1)] = 1.0
    answer = Answer(
        Status.OPTIMAL,
        f"{CLOSED_FORM} (the limit ε → ∞)",
        matrix=matrix,
        objective=lower,
        certificate=Certificate(lower, source),
    )
    checked = verify(request, answer, epsilon=eps)
    if not (checked.feasible and checked.certified):
        return None
    checks = point_checks(request, checked, epsilon=eps)
    if any(not c.passed for c in checks):
        return None
    return PointOutcome(Status.OPTIMAL, checked, answer, answer.method, closed_form=checks)


# --- the modes -------------------------------------------------------------------------------
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


#: Most mechanism entries of the LP of :func:`least_distortion_with_extras`.
MAX_EXTRAS_LP_ENTRIES = 2**20


def least_distortion_with_extras(run: Run) -> float | None:
    """The least distortion of a mechanism that meets the request's extra budgets and
    constraints: what an infeasible budget request reports as its least achievable value.

    ``request.least_distortion()`` (``Σ_y p(y) min_u d(y,u)``) ignores the extra budgets: it
    may lie below the budget just called infeasible. At the notion's largest level
    (:meth:`~privopt.request.DesignRequest.max_level`, e.g. ``H(S)`` for mutual information)
    the level excludes no mechanism, so the least distortion under the extras is that
    ε point's optimum, solved and verified by the run's chain (user constraints included).
    Without a finite largest level (dp, ldp, …) it is the infimum over ε, the LP
    ``min E[d]`` s.t. ``E[d_k] ≤ b_k`` over row-stochastic ``W`` (HiGHS through scipy),
    which takes no user constraints.

    Parameters
    ----------
    run : Run
        A budget-mode run whose request has extra budgets or constraints.

    Returns
    -------
    float or None
        ``None`` when it is not known: a time limit, extras that no mechanism meets, user
        constraints without a finite largest level, or a mechanism of more than
        :data:`MAX_EXTRAS_LP_ENTRIES` entries.
    """
    request = run.request
    top = request.max_level()
    if math.isfinite(top):
        if run.deadline.expired():
            return None
        at_top = run.point(epsilon=top)
        if not at_top.feasible or at_top.status == Status.TIME_LIMIT:
            return None
        return float(at_top.verified.distortion)
    if request.user_constraints or request.entries > MAX_EXTRAS_LP_ENTRIES:
        return None
    from scipy.optimize import linprog

    p = request.prior.input_probs
    d = request.distortion.matrix
    n_in, n_out = d.shape
    rows = [(p[:, None] * extra.matrix).ravel() for extra, _ in request.extra_distortions]
    budgets = [float(b) for _, b in request.extra_distortions]
    import scipy.sparse as sp

    res = linprog(
        (p[:, None] * d).ravel(),
        A_ub=np.array(rows),
        b_ub=np.array(budgets),
        A_eq=sp.kron(sp.identity(n_in), np.ones((1, n_out)), format="csr"),
        b_eq=np.ones(n_in),
        bounds=(0, 1),
        method="highs",
    )
    return float(res.fun) if res.status == 0 else None


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
            extra = Distortion(extra.matrix / s, extra.output_labels, extra.kind)
        extras.append((extra, budget / s))
    if scale == 1.0 and tuple(extras) == tuple(request.extra_distortions):
        return request, 1.0
    d = request.distortion
    scaled = dataclasses.replace(
        request,
        distortion=Distortion(d.matrix / scale, d.output_labels, d.kind),
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

    Returns
    -------
    DesignResult

    Raises
    ------
    InfeasibleError, SolverError
    """
    from privopt.solve.line_search import line_search

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
                f"{_mismatch_text(failed)}"
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
