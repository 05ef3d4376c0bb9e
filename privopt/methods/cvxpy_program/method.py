"""The cvxpy program solved by one cvxpy solver, as a :class:`~privopt.methods.base.Method`.

One method is registered per installed cvxpy solver, under cvxpy's own name (``CLARABEL``,
``HIGHS``, ``ECOS``, ``SCS``, …; names are matched case-insensitively). The program is built
once per run and kept in the task's cache, so the points of a line search or a sweep re-solve
it through its parameter (DPP) without recompiling.

Registering the methods does not import cvxpy (0.7–0.9 s): which solvers are installed is
read from :data:`CVXPY_SOLVERS` (each solver's Python package, found with
:func:`~privopt.methods.base.installed` without importing it), and cvxpy is imported when a
cvxpy method first solves a point (``tests/repository/test_imports.py`` checks both against
cvxpy's own ``installed_solvers()``).
"""

from __future__ import annotations

__all__ = [
    "CvxpyMethod",
    "CVXPY_CHAINS",
    "CVXPY_SOLVERS",
    "LAST_RESORT_SOLVERS",
    "TIME_LIMIT_OPTIONS",
    "exp_cone_solvers",
    "installed_cvxpy_solvers",
]

import math
import time
import warnings
from typing import TYPE_CHECKING

import numpy as np

from privopt.methods._native import silence_highs_banner
from privopt.methods.base import (
    Answer,
    Certificate,
    Method,
    Stopping,
    Task,
    installed,
    register,
)
from privopt.methods.multipliers import offer, wanted
from privopt.status import Status

if TYPE_CHECKING:
    from privopt.methods.cvxpy_program.program import PrivacyProblem
    from privopt.request import DesignRequest

#: The cvxpy solvers tried by default, in order, per kind of program (later ones are fallbacks).
CVXPY_CHAINS = {
    "linear": ("HIGHS", "CLARABEL", "ECOS", "SCS"),
    "linear_large": ("CLARABEL", "HIGHS", "ECOS", "SCS"),
    "exponential_cone": ("CLARABEL", "ECOS", "SCS"),
    "power_cone": ("CLARABEL", "SCS"),
}
#: Solvers of the default chains whose answers seldom certify to the tolerance (SCS is
#: first-order; ECOS stops short on ill-conditioned programs): the methods that rescue a
#: point (:meth:`privopt.methods.Method.rescues`) are tried before them.
LAST_RESORT_SOLVERS = frozenset({"ECOS", "SCS"})
#: From this many mechanism entries on, linear programs go to Clarabel before HiGHS (HiGHS
#: simplex was 15–30× slower on Hamming LPs from 64 × 64 on; benchmarks/README.md).
LARGE_LP_ENTRIES = 4096
#: Largest number of mechanism entries given to the dense cvxpy program.
MAX_ENTRIES = 2**24
#: The name of each solver's time-limit option (seconds), where it has one: the driver's
#: time left is handed to it (cvxpy's compilation before it cannot be interrupted).
TIME_LIMIT_OPTIONS = {
    "CLARABEL": "time_limit",
    "HIGHS": "time_limit",
    "SCS": "time_limit_secs",
    "OSQP": "time_limit",
}
_LP = frozenset({"linear"})
_EXP = frozenset({"linear", "exponential_cone"})
_EXP_POW = frozenset({"linear", "exponential_cone", "power_cone"})
#: The solvers cvxpy can call (its conic solvers, then its QP solvers, in cvxpy's order), each
#: with the Python package cvxpy imports for it and the cones privopt gives it
#: (:data:`privopt.notions.base.CONES`: ``exponential_cone`` where cvxpy's ``ExpCone``,
#: ``power_cone`` where its ``PowCone3D`` is among the solver's supported constraints;
#: mixed-integer solvers get LPs only). A solver is registered when its package is
#: installed. Not listed: cvxpy's nonlinear (NLP) solvers, which solve none of privopt's
#: programs, and its GPU solvers (CUCLARABEL, CUOPT, PDCS, MPAX).
CVXPY_SOLVERS: dict[str, tuple[str, frozenset[str]]] = {
    "MOSEK": ("mosek", _LP),
    "CLARABEL": ("clarabel", _EXP_POW),
    "SCS": ("scs", _EXP_POW),
    "ECOS": ("ecos", _EXP),
    "MOREAU": ("moreau", _EXP_POW),
    "SDPA": ("sdpap", _LP),
    "CPLEX": ("cplex", _LP),
    "GUROBI": ("gurobipy", _LP),
    "COPT": ("coptpy", _LP),
    "GLPK": ("cvxopt", _LP),
    "NAG": ("naginterfaces", _LP),
    "GLPK_MI": ("cvxopt", _LP),
    "CBC": ("cylp", _LP),
    "CVXOPT": ("cvxopt", _LP),
    "XPRESS": ("xpress", _LP),
    "DIFFCP": ("diffcp", _EXP_POW),
    "SCIP": ("pyscipopt", _LP),
    "SCIPY": ("scipy", _LP),
    "HIGHS": ("highspy", _LP),
    "GLOP": ("ortools", _LP),
    "PDLP": ("ortools", _LP),
    "QOCO": ("qoco", _LP),
    "ECOS_BB": ("ecos", _LP),
    "KNITRO": ("knitro", _LP),
    "COSMO": ("cosmopy", _EXP_POW),
    "OSQP": ("osqp", _LP),
    "PIQP": ("piqp", _LP),
    "PROXQP": ("proxsuite", _LP),
    "QPALM": ("qpalm", _LP),
    "DAQP": ("daqp", _LP),
}
#: Solvers without a time limit whose runs are bounded by an iteration cap (ECOS: 100
#: interior-point iterations by default).
ITERATION_CAPPED = frozenset({"ECOS"})

# cvxpy warns when a solver's answer "may be inaccurate"; the driver re-measures every answer
# and reports its status itself, and catch_warnings() is not thread-safe (a caller may solve
# in several threads, e.g. solve_many over a thread pool), so this one message is silenced
# for good.
warnings.filterwarnings("ignore", message="Solution may be inaccurate", category=UserWarning)

#: Accuracy asked of the conic solvers on exponential-cone programs: the certificate's
#: linear minorant of the information measures is first-order sensitive to the answer's
#: small posterior entries, and with the solvers' default tolerances (~1e-8) the bound stays
#: ~1e-5 short of the optimum; at these settings it closes to ~1e-8 (measured on random
#: instances of mutual information and maximum information leakage). Power-cone programs
#: (maximal α-leakage) are solved at the same settings: their bound from the cone's
#: multipliers closes to ~1e-9 relative on random 6 × 6 instances.
EXP_CONE_OPTIONS = {
    "CLARABEL": {
        "tol_gap_abs": 1e-10,
        "tol_gap_rel": 1e-10,
        "tol_feas": 1e-10,
        "tol_ktratio": 1e-8,
    },
    "ECOS": {"abstol": 1e-10, "reltol": 1e-10, "feastol": 1e-10},
}
#: Settings of a second attempt at a cone program whose first solve failed: Clarabel can
#: stop with "insufficient progress" on power-cone programs (maximal α-leakage, 49 secrets,
#: α = 1.5, a distortion scaled into [1, 2): failed at its default and at the tight settings
#: above), and the same program with steps cut at 95 % of the way to the cone's boundary
#: solved in 100 iterations, certified (relative gap 2.2e-7).
CONE_RETRY_OPTIONS = {"CLARABEL": {"max_step_fraction": 0.95}}


def _status(cvxpy_status: str) -> Status:
    """privopt's status for a cvxpy status string (``FAILED`` for any other)."""
    import cvxpy as cp

    return {
        cp.OPTIMAL: Status.OPTIMAL,
        cp.OPTIMAL_INACCURATE: Status.OPTIMAL_INACCURATE,
        cp.INFEASIBLE: Status.INFEASIBLE,
        cp.INFEASIBLE_INACCURATE: Status.INFEASIBLE,
    }.get(cvxpy_status, Status.FAILED)


def installed_cvxpy_solvers() -> list[str]:
    """The solvers of :data:`CVXPY_SOLVERS` whose package is installed, without importing
    cvxpy or the packages.

    Returns
    -------
    list of str
        cvxpy solver names, in the order of :data:`CVXPY_SOLVERS`; empty without cvxpy.
    """
    if not installed("cvxpy"):
        return []
    return [name for name, (package, _) in CVXPY_SOLVERS.items() if installed(package)]


def exp_cone_solvers() -> set[str]:
    """Installed cvxpy solvers that handle exponential cones.

    Returns
    -------
    set of str
        Names of the installed conic solvers (mixed-integer ones excluded) that accept
        ``ExpCone`` constraints (:data:`CVXPY_SOLVERS`).
    """
    return {name for name in installed_cvxpy_solvers() if cone_accepted(name, "exponential_cone")}


def cone_accepted(solver: str, cone: str) -> bool:
    """Whether privopt gives ``solver`` programs of ``cone`` (:data:`CVXPY_SOLVERS`).

    Parameters
    ----------
    solver : str
        A cvxpy solver name.
    cone : str
        One of :data:`privopt.notions.base.CONES`.

    Returns
    -------
    bool
        ``False`` for a solver privopt does not list.
    """
    return cone in CVXPY_SOLVERS.get(solver, ("", _LP))[1]


class CvxpyMethod(Method):
    """The cvxpy program with the cvxpy solver ``solver``.

    Parameters
    ----------
    solver : str
        A cvxpy solver name (as in ``cvxpy.installed_solvers()``).
    """

    family = "cvxpy"
    memory_model = "cvxpy"

    def __init__(self, solver: str) -> None:
        """Name the method after ``solver``.

        Parameters
        ----------
        solver : str
            A cvxpy solver name (as in ``cvxpy.installed_solvers()``).
        """
        self.name = solver
        self.solver = solver
        # a native limit (or cap) on the solver's iterations, none on cvxpy's compilation
        bounded = solver in TIME_LIMIT_OPTIONS or solver in ITERATION_CAPPED
        self.stopping = Stopping.NATIVE if bounded else Stopping.NONE
        self.cones = CVXPY_SOLVERS.get(solver, ("", _LP))[1]
        kinds = {"linear": "LPs", "exponential_cone": "exponential", "power_cone": "power"}
        cones = " and ".join(
            [kinds["linear"]]
            + [f"{kinds[c]}-cone" for c in ("exponential_cone", "power_cone") if c in self.cones]
        )
        self.description = f"the cvxpy program solved by {solver} ({cones} programs)"

    def unsupported(self, request: DesignRequest) -> str | None:
        """See :meth:`~privopt.methods.base.Method.unsupported`."""
        cone = request.notion.cone(request.options)
        if cone not in self.cones:
            kind = cone.replace("_", " ")
            return f"{self.solver} does not handle the {kind} of {request.notion.name}"
        if request.entries > MAX_ENTRIES:
            return f"{request.entries:.0f} mechanism entries are too many for a dense program"
        if request.distortion.is_database_hamming and request.prior.size > 2**14:
            return "the dense database distortion would not fit in memory"
        return None

    # --- the program ------------------------------------------------------------------------
    @staticmethod
    def program(task: Task) -> PrivacyProblem:
        """The task's program, built once per run (kept in ``task.cache``).

        Parameters
        ----------
        task : Task
            One point of a request; its budget (or ε) picks the program's form.

        Returns
        -------
        PrivacyProblem
            The cached program of that form (its parameters are set by :meth:`solve`).
        """
        form = "budget" if task.budget is not None else "epsilon"
        key = ("cvxpy", form)
        pp = task.cache.get(key)
        if pp is None:
            from privopt.methods.cvxpy_program.program import PrivacyProblem

            request = task.request
            if form == "budget":
                request = request.at(max_distortion=task.budget)
            else:
                request = request.at(epsilon=task.epsilon)
            pp = PrivacyProblem(request)
            task.cache[key] = pp
        return pp

    def solve(self, task: Task) -> Answer:
        """See :meth:`~privopt.methods.base.Method.solve`."""
        import cvxpy as cp

        from privopt.methods.cvxpy_program.certificate import lagrangian_bound

        pp = self.program(task)
        relaxed = False
        if task.budget is not None:
            pp.set_max_distortion(task.budget)
            problem = pp.problem
        else:
            eps = task.epsilon
            cap = pp.notion.max_level(pp.prior)
            if math.isfinite(cap) and eps >= cap:
                eps = cap  # no mechanism is excluded beyond the notion's largest level
            pp.set_epsilon(eps)
            relaxed = not pp.notion.writes_level(eps)
            # e^ε beyond ~1e13 wrecks any solver's scaling: solve without the constraint and
            # let the driver mix in the least weight of a constant mechanism meeting ε
            problem = pp.without_privacy_constraint() if relaxed else pp.problem
        options = {}
        if pp.notion.cone(pp.options) != "linear":
            options.update(EXP_CONE_OPTIONS.get(self.solver, {}))
        options.update(task.cache.get(("options", self.name), {}))
        if task.deadline.limited and self.solver in TIME_LIMIT_OPTIONS:
            options[TIME_LIMIT_OPTIONS[self.solver]] = max(task.deadline.remaining(), 1e-3)
        warm = bool(task.cache.get(("solved", id(problem))))
        start = time.perf_counter()
        task.emit(self.name, "start")
        if self.solver == "HIGHS":
            silence_highs_banner()
        retry = (
            CONE_RETRY_OPTIONS.get(self.solver) if pp.notion.cone(pp.options) != "linear" else None
        )
        while True:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    problem.solve(solver=self.solver, warm_start=warm, **options)
                break
            except (cp.SolverError, ValueError, ArithmeticError) as exc:
                if retry is None or task.deadline.expired():
                    return Answer(
                        Status.FAILED,
                        self.name,
                        message=str(exc),
                        solve_time=time.perf_counter() - start,
                    )
                options, retry = {**options, **retry}, None  # once, with shorter steps
        task.cache[("solved", id(problem))] = True
        wall = time.perf_counter() - start
        stats = problem.solver_stats
        status = _status(problem.status)
        if problem.status == cp.USER_LIMIT and task.deadline.limited:
            # cvxpy's user_limit is also an iteration limit: a time limit only if time is up
            if task.deadline.remaining() <= 0.05 * task.deadline.seconds + 0.05:
                status = Status.TIME_LIMIT
        answer = Answer(
            status,
            self.name,
            solve_time=float(stats.solve_time) if stats and stats.solve_time else wall,
            build_time=pp.build_time,
            iterations=int(stats.num_iters) if stats and stats.num_iters is not None else None,
            details={"cvxpy_status": problem.status, "wall_time_s": wall},
        )
        if not status.has_answer:
            answer.message = f"{self.solver}: status {problem.status}"
            return answer
        if pp.W.value is None:
            answer.status = Status.FAILED
            answer.message = f"{self.solver}: status {problem.status} without a solution"
            return answer
        answer.matrix = np.array(pp.W.value)
        value = float(problem.value)
        if task.budget is not None:
            value = pp.notion.level_from_objective(value)
        answer.objective = value
        bound = lagrangian_bound(pp, epsilon=task.epsilon, relaxed=relaxed)
        if bound is not None:
            answer.certificate = Certificate(
                bound,
                f"Lagrangian bound from {self.solver}'s dual values"
                + (" (program without the privacy constraint)" if relaxed else ""),
            )
        if relaxed:
            answer.details["relaxed"] = (
                f"ε > {pp.notion.largest_written_level:g}: solved without the constraint"
            )
        elif wanted(task):  # a certified curve collects dual points (privopt.solve.curve_band)
            from privopt.methods.cvxpy_program.multipliers import program_multipliers

            found = program_multipliers(pp, self.name, epsilon=task.epsilon, budget=task.budget)
            if found is not None:
                offer(task, found)
        return answer


def register_installed() -> None:
    """Register one :class:`CvxpyMethod` per installed cvxpy solver
    (:func:`installed_cvxpy_solvers`; cvxpy is not imported)."""
    for name in installed_cvxpy_solvers():
        register(CvxpyMethod(name))


register_installed()
