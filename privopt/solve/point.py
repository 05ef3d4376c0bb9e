"""One point of a run: the chain of methods tried in turn, each answer verified and certified.

:class:`Run` holds what a run shares across its points (the request, the chain, the deadline,
warm starts, the cache, the attempts so far); :meth:`Run.point` solves one ε point or budget
point:

* at level 0 on a single secret the answer is the best constant output, in closed form; from
  :data:`LIMIT_EPSILON` on, the closed-form answer at the limit ε → ∞ is offered first (never
  in place of a method the user named);
* otherwise each method of the chain is *tried* (:meth:`Run.try_method`: run in this thread,
  or in a child process ended at the deadline when it cannot stop itself on a large request,
  then re-measured by :func:`~privopt.solve.verification.verify` and checked against the
  closed forms) and its answer is *accepted or passed over* (:meth:`Run.point`): a certified
  answer ends the point; a feasible uncertified one is kept as the best so far (its bound may
  combine with another method's into a certificate); a failure, an unverifiable answer or a
  closed-form mismatch hands over to the next method; a claim of infeasibility is believed
  unless a constant mechanism meets the point.

The driver (:mod:`privopt.solve.driver`) and the budget-mode line search
(:mod:`privopt.solve.line_search`) both solve their points here.
"""

from __future__ import annotations

__all__ = [
    "Run",
    "PointOutcome",
    "point_checks",
    "solve_in_process",
    "least_distortion_with_extras",
    "MAX_LEAKAGE_ENTRIES",
]

import dataclasses
import math
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from privopt.errors import (
    InputError,
    PrivoptError,
    SolverError,
)
from privopt.methods.base import Answer, Certificate, Deadline, Method, ProgressEvent, Task
from privopt.papers.closed_form_checks import MAX_DENSE as MAX_CHECKED_ROWS
from privopt.papers.closed_form_checks import identifiability_bound
from privopt.request import DesignRequest
from privopt.resources import max_memory as memory_bound
from privopt.solve.isolation import run_isolated, should_isolate
from privopt.solve.results import (
    Attempt,
)
from privopt.solve.verification import (
    Verified,
    verify,
)
from privopt.status import Status

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
            answer, outcome, seconds = self.try_method(method, epsilon=epsilon, budget=budget)
            # accept the answer, or fall back to the next method
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
            if outcome is None:  # failed, unverified or contradicted by a closed form
                continue
            if outcome.status == Status.OPTIMAL:
                self._emit(method.name, "done")
                return outcome
            checked = outcome.verified
            self._note(method, "optimal_inaccurate", checked.message, seconds)
            bound = checked.certificate.lower_bound
            if bound is not None and math.isfinite(bound):
                if best_bound is None or bound > best_bound[0]:
                    best_bound = (float(bound), checked.certificate.source, method.name)
            if best is None or checked.objective < best.verified.objective:
                best = outcome
            combined = _combined(best, best_bound, self.request.objective_floor(budget is not None))
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

    def try_method(
        self, method: Method, *, epsilon: float | None = None, budget: float | None = None
    ) -> tuple[Answer, PointOutcome | None, float]:
        """Run one method on a point and check its answer, without deciding what to do next.

        The run's accounting (solve time, iterations, warm starts) is updated; an answer
        that is not used is noted as an attempt (failed, unverified, closed-form mismatch).

        Parameters
        ----------
        method : Method
            A method of the chain.
        epsilon, budget : float, optional
            The point, as for :meth:`point`.

        Returns
        -------
        answer : Answer
            What the method returned (its status says time limit or infeasibility).
        outcome : PointOutcome or None
            The verified answer, ``OPTIMAL`` when certified and ``OPTIMAL_INACCURATE``
            otherwise, with the closed-form checks that passed; ``None`` when there is no
            usable answer (the method failed, its answer did not verify, a closed form
            contradicts it, or it stopped at the time limit or claimed infeasibility).
        seconds : float
            The method's wall time.
        """
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
        if answer.status in (Status.TIME_LIMIT, Status.INFEASIBLE):
            return answer, None, seconds
        if not answer.status.has_answer:
            self._note(method, "failed", answer.message or str(answer.status), seconds)
            return answer, None, seconds
        checked = verify(self.request, answer, epsilon=epsilon, budget=budget)
        if not checked.feasible:
            self._note(method, "unverified", checked.message, seconds)
            return answer, None, seconds
        checks = point_checks(self.request, checked, epsilon=epsilon, budget=budget)
        failed = [c for c in checks if not c.passed]
        if failed:  # a closed form contradicts the answer: as good as a failed verification
            self._note(method, "closed_form_mismatch", mismatch_text(failed), seconds)
            return answer, None, seconds
        status = Status.OPTIMAL if checked.certified else Status.OPTIMAL_INACCURATE
        outcome = PointOutcome(status, checked, answer, method.name, closed_form=checks)
        return answer, outcome, seconds

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


def mismatch_text(failed: list) -> str:
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
