"""The solver layer: run a built program, verify the answer, line search over ε, sweeps.

Every answer is checked before it is returned: the mechanism is cleaned (tiny negatives
zeroed, rows renormalised), re-measured with the numpy measures, and — if the raw solver
output overshoots the level by more than the tolerance — repaired by mixing it with a
zero-leakage mechanism (the smallest weight that restores the constraint, found by bisection;
the constraint set of every convex notion here is convex and contains constant mechanisms).
A result is ``verified`` only when its re-measured level and distortion meet the request.
"""

from __future__ import annotations

import dataclasses
import math
import time
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import cvxpy as cp
import numpy as np

from privopt import measures
from privopt.algorithms import ALGORITHMS, Algorithm
from privopt.builder import DesignRequest, PrivacyProblem, prepare_request
from privopt.errors import InfeasibleError, InputError, SolverError, VerificationError
from privopt.model import Mechanism
from privopt.notions import STANDARD_NOTIONS, get_notion

__all__ = [
    "DesignResult",
    "Curve",
    "design",
    "solve_problem",
    "sweep",
    "leakage_report",
    "SOLVER_CHAINS",
    "available_solvers",
]

#: Solver order by problem class (first that answers wins; later ones are fallbacks).
SOLVER_CHAINS = {
    "linear": ("HIGHS", "CLARABEL", "ECOS", "SCS"),
    "exponential_cone": ("CLARABEL", "ECOS", "SCS"),
}

#: Absolute slack allowed on the re-measured level and distortion (nats / distortion units).
LEVEL_TOL = 1e-9
DISTORTION_TOL = 1e-7
#: From this many mechanism entries on, linear programs go to Clarabel before HiGHS.
LARGE_LP_ENTRIES = 4096
#: Relative agreement required between a solver's objective and the re-measured answer.
OBJECTIVE_RTOL = 1e-6
#: Above this level (e^30 ≈ 1e13) the constraint is imposed by repair, not by the solver.
LARGE_EPSILON = 30.0
#: Largest ε the line search tries for notions whose level is unbounded (e^40 ≈ 2e17).
EPSILON_CAP = 40.0


def available_solvers() -> list[str]:
    """cvxpy solvers installed here plus privopt's own algorithms."""
    return sorted(set(cp.installed_solvers()) | set(ALGORITHMS))


@dataclass
class DesignResult:
    """A verified answer to a design request.

    Attributes
    ----------
    status : str
        ``"optimal"``, ``"optimal_inaccurate"`` (accepted only when verified) or
        ``"infeasible"``.
    notion, mode : str
    epsilon : float
        The re-measured level of :attr:`mechanism` under the notion (nats).
    distortion : float
        The re-measured ``E[d]`` of :attr:`mechanism`.
    mechanism : Mechanism or None
    requested : dict
        What was asked (``epsilon`` or ``max_distortion``).
    leakage : Mapping
        Every standard notion measured on the mechanism (nats; ``inf`` where unbounded),
        measured when first read.
    solver : dict
        Name, timings, iterations, fallbacks tried, repair weight.
    verified : bool
    least_achievable : float or None
        For infeasible requests: the least achievable level or distortion.
    line_search : dict or None
        Bracket, iterations and tolerance of the ε line search.
    warm_state : object or None
        What a later solve of the same instance by the same fast path can start from (an
        output pmf and slope, a simplex basis); not serialised.
    """

    status: str
    notion: str
    mode: str
    epsilon: float | None
    distortion: float | None
    mechanism: Mechanism | None
    requested: dict
    leakage: Mapping[str, float] = field(default_factory=dict)
    solver: dict = field(default_factory=dict)
    verified: bool = False
    least_achievable: float | None = None
    message: str = ""
    line_search: dict | None = None
    objective: float | None = None
    extra: dict = field(default_factory=dict)
    warm_state: Any = field(default=None, repr=False, compare=False)

    def __getstate__(self) -> dict:
        # the warm start may hold solver objects (a HiGHS basis) that do not pickle; a copy
        # or an unpickled result simply starts cold
        state = self.__dict__.copy()
        state["warm_state"] = None
        return state

    def to_dict(self) -> dict:
        """The JSON object of spec/problem-format.md (``privopt solve --json``)."""
        out: dict[str, Any] = {
            "status": self.status,
            "notion": self.notion,
            "epsilon": _json_number(self.epsilon),
            "distortion": _json_number(self.distortion),
        }
        if self.mechanism is not None:
            out["mechanism"] = self.mechanism.matrix.tolist()
            out["inputs"] = list(self.mechanism.input_labels)
            out["outputs"] = list(self.mechanism.output_labels)
        else:
            out["mechanism"] = None
        out["leakage"] = {k: _json_number(v) for k, v in self.leakage.items()}
        out["solver"] = {
            k: _json_number(v) if isinstance(v, float) else v for k, v in self.solver.items()
        }
        out["verified"] = bool(self.verified)
        out["mode"] = self.mode
        out["requested"] = {k: _json_number(v) for k, v in self.requested.items()}
        if self.least_achievable is not None:
            out["least_achievable"] = _json_number(self.least_achievable)
        if self.message:
            out["message"] = self.message
        if self.line_search is not None:
            out["line_search"] = {
                k: _json_number(v) if isinstance(v, float) else v
                for k, v in self.line_search.items()
            }
        return out

    def __repr__(self) -> str:
        return (
            f"DesignResult(status={self.status!r}, notion={self.notion!r}, "
            f"epsilon={self.epsilon!r}, distortion={self.distortion!r}, verified={self.verified})"
        )


def _json_number(value):
    """Floats for JSON: ``inf`` and ``nan`` become ``None`` (JSON has no infinity)."""
    if value is None:
        return None
    if isinstance(value, (float, np.floating)):
        value = float(value)
        return value if math.isfinite(value) else None
    return value


# --- measurement ---------------------------------------------------------------------------
def leakage_report(
    prior, mechanism, neighbors=None, notions: Iterable[str] = STANDARD_NOTIONS
) -> dict[str, float]:
    """Every notion of the spec's table measured on ``mechanism`` (nats).

    ``dp`` and ``identifiability`` use ``neighbors`` (default: Hamming on databases, all pairs
    otherwise).
    """
    out = {}
    for name in notions:
        notion = get_notion(name)
        out[name] = float(
            notion.measure(prior, mechanism, neighbors if notion.uses_neighbors else None)
        )
    return out


class LeakageReport(Mapping):
    """:func:`leakage_report` of a mechanism, measured on first access (a read-only mapping
    notion → level in nats). Results of a sweep pay for it only where it is read."""

    def __init__(self, prior, matrix: np.ndarray, neighbors=None):
        self._args: tuple | None = (prior, matrix, neighbors)
        self._values: dict[str, float] | None = None

    def _load(self) -> dict[str, float]:
        if self._values is None:
            self._values = leakage_report(*self._args)
            self._args = None
        return self._values

    def __getitem__(self, name: str) -> float:
        return self._load()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._load())

    def __len__(self) -> int:
        return len(self._load())

    def __repr__(self) -> str:
        return repr(self._load())


def _measure(pp: PrivacyProblem, matrix: np.ndarray) -> tuple[float, float]:
    level = pp.notion.measure(pp.prior, matrix, pp.neighbors, **pp.options)
    distortion = measures.expected_distortion(pp.prior, matrix, pp.distortion)
    return float(level), float(distortion)


def _extra_ok(pp: PrivacyProblem, matrix: np.ndarray) -> bool:
    for extra, budget in pp.extra_distortions:
        if measures.expected_distortion(pp.prior, matrix, extra) > budget + DISTORTION_TOL * (
            1 + budget
        ):
            return False
    return all(
        c.violation() is None or np.max(np.atleast_1d(c.violation())) <= 1e-6
        for c in pp.user_constraints
    )


def _level_tol(eps: float) -> float:
    return LEVEL_TOL * (1.0 + abs(eps))


def _repair_level(pp: PrivacyProblem, matrix: np.ndarray, eps: float) -> tuple[np.ndarray, float]:
    """Mix ``matrix`` with a zero-leakage (constant-row) mechanism until the re-measured level is
    within ε. Returns the repaired matrix and the mixing weight (0 if none was needed)."""
    level, _ = _measure(pp, matrix)
    if level <= eps + _level_tol(eps):
        return matrix, 0.0
    # two zero-leakage anchors: the constant mechanism with the answer's own output law (close
    # to the answer when it is nearly constant) and the uniform one (slack on every column)
    candidates = [pp.prior.input_probs @ matrix, np.full(matrix.shape[1], 1.0 / matrix.shape[1])]
    best = None
    for row in candidates:
        anchor = np.broadcast_to(row, matrix.shape)
        if _measure(pp, np.array(anchor))[0] > eps + _level_tol(eps):
            continue
        lo, hi = 0.0, 1.0
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            if _measure(pp, (1 - mid) * matrix + mid * anchor)[0] <= eps + _level_tol(eps):
                hi = mid
            else:
                lo = mid
            if hi - lo < 1e-15:
                break
        repaired = (1 - hi) * matrix + hi * anchor
        dist = _measure(pp, repaired)[1]
        if best is None or dist < best[2]:
            best = (repaired, hi, dist)
    if best is None:
        raise VerificationError(
            f"the solver's mechanism has {pp.notion.name} level {level:.9g} > ε = {eps:.9g} and "
            "no zero-leakage mechanism is available to repair it"
        )
    return best[0], best[1]


def _repair_distortion(
    pp: PrivacyProblem, matrix: np.ndarray, budget: float, slack: float | None = None
) -> tuple[np.ndarray, float]:
    """Mix with the least-distortion deterministic mechanism until ``E[d] ≤ budget`` (an
    excess up to ``slack``, default ``DISTORTION_TOL·(1 + budget)``, is left alone)."""
    _, dist = _measure(pp, matrix)
    if dist <= budget + (DISTORTION_TOL * (1 + budget) if slack is None else slack):
        return matrix, 0.0
    best = np.zeros_like(matrix)
    best[np.arange(matrix.shape[0]), pp.distortion.matrix.argmin(axis=1)] = 1.0
    d_best = _measure(pp, best)[1]
    if d_best >= dist:
        return matrix, 0.0
    weight = min(1.0, (dist - budget) / (dist - d_best))
    return (1 - weight) * matrix + weight * best, weight


# --- running one program -------------------------------------------------------------------
_ACCEPTED = {cp.OPTIMAL: "optimal", cp.OPTIMAL_INACCURATE: "optimal_inaccurate"}
_INFEASIBLE = {cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE}


def _solver_chain(pp: PrivacyProblem, solver: str | Sequence[str] | None) -> list[str]:
    if solver is None:
        chain = SOLVER_CHAINS[pp.notion.convexity]
        if pp.notion.convexity == "linear" and _dense_size(pp) >= LARGE_LP_ENTRIES:
            # HiGHS (simplex) gives exact vertices but slows down sharply on large Hamming LPs
            # (benchmarks/: 9 s against 0.3 s for Clarabel at 64 x 64); the repair and the
            # objective check keep Clarabel's answer verified
            chain = ("CLARABEL", "HIGHS", "ECOS", "SCS")
    elif isinstance(solver, str):
        chain = (solver,)
    else:
        chain = tuple(solver)
    installed = set(cp.installed_solvers())
    out = []
    for name in chain:
        upper = name.upper()
        if upper not in installed:
            if solver is not None:
                raise InputError(
                    f"unknown or uninstalled solver {name!r}; available: "
                    f"{', '.join(available_solvers())}",
                    "solver.name",
                )
            continue
        out.append(upper)
    return out


def _run(
    pp: PrivacyProblem,
    chain: list[str],
    warm_start: bool = False,
    solver_options: dict | None = None,
    accept=None,
) -> tuple[dict, dict | None]:
    """Solve with the solvers of ``chain`` in turn until one gives a verified answer.

    A solver that errors, stops early (iteration or time limit) or returns an answer that fails
    verification hands over to the next one. Returns ``(info, answer)``; ``answer`` is None when
    the program is infeasible, and unverified only when every solver failed verification.
    """
    tried: list[str] = []
    last_error = ""
    unverified = None
    inaccurate = None
    for name in chain:
        start = time.perf_counter()
        tried.append(name)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                pp.problem.solve(
                    solver=name, warm_start=warm_start, **(solver_options or {}).get(name, {})
                )
        except (cp.SolverError, ValueError, ArithmeticError) as exc:
            last_error = f"{name}: {exc}"
            continue
        wall = time.perf_counter() - start
        status = pp.problem.status
        stats = pp.problem.solver_stats
        info = {
            "name": name,
            "status": status,
            "solve_time_s": float(stats.solve_time) if stats and stats.solve_time else wall,
            "wall_time_s": wall,
            "iterations": int(stats.num_iters) if stats and stats.num_iters is not None else None,
            "tried": list(tried),
        }
        if status in _INFEASIBLE:
            info["infeasible"] = True
            return info, None
        if status not in _ACCEPTED or pp.W.value is None:
            last_error = f"{name}: status {status}"
            continue
        info["objective"] = float(pp.problem.value)
        info["matrix"] = np.array(pp.W.value)
        try:
            answer = accept(info)
        except VerificationError as exc:
            last_error = f"{name}: {exc}"
            continue
        if answer["verified"] and answer.get("accurate", True):
            return info, answer
        if answer["verified"]:
            # feasible but not certified optimal: keep the best such answer as a fallback
            best = _final_objective(pp, inaccurate[1]) if inaccurate else math.inf
            if _final_objective(pp, answer) < best:
                inaccurate = (dict(info, status=cp.OPTIMAL_INACCURATE), answer)
            last_error = f"{name}: answer not certified optimal"
        else:
            unverified = (info, answer)
            last_error = f"{name}: answer failed verification"
    if inaccurate is not None:
        return inaccurate
    if unverified is not None:
        return unverified
    raise SolverError(
        f"no solver could solve the {pp.notion.name} program (tried {', '.join(tried) or 'none'}"
        f"; last: {last_error})"
    )


def _accept(pp: PrivacyProblem, info: dict, eps: float | None, budget: float | None) -> dict:
    """Clean, repair and verify one raw solver answer; return measured values."""
    try:
        mech = Mechanism.from_solver(info["matrix"], pp.prior.input_labels, _output_labels(pp))
    except InputError as exc:
        raise VerificationError(f"{info['name']} returned an invalid mechanism: {exc}") from None
    matrix = mech.matrix
    raw_level, raw_dist = _measure(pp, matrix)
    weight = 0.0
    if eps is not None and math.isfinite(eps):
        matrix, weight = _repair_level(pp, matrix, eps)
    if budget is not None:
        matrix, w2 = _repair_distortion(pp, matrix, budget)
        weight = max(weight, w2)
    level, dist = _measure(pp, matrix)
    ok = _extra_ok(pp, matrix)
    if eps is not None and math.isfinite(eps):
        ok &= level <= eps + _level_tol(eps)
    if budget is not None:
        ok &= dist <= budget + DISTORTION_TOL * (1 + budget)
    # The solver's objective must agree with the re-measured raw answer (this catches a wrong
    # program or a sloppy solve), and the repair may cost only solver-accuracy amounts (else
    # the answer is feasible but not certified optimal).
    objective = info["objective"]
    if pp.mode == "max_distortion" and pp.notion.direct_level:
        objective = pp.notion.level_from_objective(objective)
        raw, final = raw_level, level
    else:
        raw, final = raw_dist, dist
    scale = OBJECTIVE_RTOL * (1 + abs(objective))
    agree = abs(raw - objective) <= scale
    cheap_repair = final - raw <= scale
    return {
        "mechanism": Mechanism(matrix, pp.prior.input_labels, _output_labels(pp)),
        "level": level,
        "distortion": dist,
        "verified": bool(ok),  # the mechanism meets the request, re-measured
        "accurate": bool(agree and cheap_repair),  # and its optimality is certified
        "repair_weight": weight,
        "repair_cost": final - raw,
        "objective": objective,
    }


def _output_labels(pp: PrivacyProblem):
    if pp.distortion.output_labels is not None:
        return pp.distortion.output_labels
    if pp.distortion.n_outputs == pp.prior.n_inputs:
        return pp.prior.input_labels
    return None


def _least_distortion(pp: PrivacyProblem) -> float:
    """``D*(∞) = Σ_y p(y) min_u d(y,u)``: the least distortion of any mechanism."""
    if pp.distortion.is_database_hamming:
        return 0.0  # d(x, x) = 0: the identity mechanism
    return float(pp.prior.input_probs @ pp.distortion.matrix.min(axis=1))


def _without_privacy_constraint(pp: PrivacyProblem) -> cp.Problem:
    """The ε-mode program with its privacy constraint dropped: rows sum to 1, and the extra
    distortion budgets and the user's constraints stay."""
    weights = pp.prior.input_probs[:, None]
    budgets = [
        cp.sum(cp.multiply(weights * extra.matrix, pp.W)) <= budget
        for extra, budget in pp.extra_distortions
    ]
    return cp.Problem(
        pp.problem.objective, [cp.sum(pp.W, axis=1) == 1, *budgets, *pp.user_constraints]
    )


def _final_objective(pp, answer: dict) -> float:
    """The re-measured objective of an accepted answer (level or distortion)."""
    if pp.mode == "max_distortion" and pp.notion.direct_level:
        return answer["level"]
    return answer["distortion"]


def _solve_at(
    pp: PrivacyProblem, eps: float, chain: list[str], warm: bool, solver_options: dict | None
) -> tuple[dict, dict | None]:
    """Solve the ε-mode program at ``eps``; return (solver info, accepted answer or None)."""
    if eps >= pp.notion.max_level(pp.prior) and math.isfinite(pp.notion.max_level(pp.prior)):
        eps_used = pp.notion.max_level(pp.prior)
    else:
        eps_used = eps
    if math.isfinite(eps_used) and eps_used <= LARGE_EPSILON:
        pp.set_epsilon(eps_used)
        return _run(pp, chain, warm, solver_options, lambda info: _accept(pp, info, eps, None))
    # e^ε beyond ~1e13 wrecks any solver's scaling: solve without the privacy constraint, then
    # the repair step mixes in the least weight of a constant mechanism that meets level ε.
    # The distortion is then within (weight × max d) of D*(∞) ≤ D*(ε): optimal to that bound.
    kept = pp.problem
    pp.problem = _without_privacy_constraint(pp)
    try:
        info, answer = _run(
            pp, chain, warm, solver_options, lambda info: _accept(pp, info, eps, None)
        )
    finally:
        pp.problem = kept
    if answer is not None:
        info["note"] = (
            f"ε > {LARGE_EPSILON:g}: solved unconstrained, then mixed with weight "
            f"{answer['repair_weight']:.3g} of a constant mechanism"
        )
        info["optimality_gap_bound"] = answer["repair_weight"] * float(pp.distortion.matrix.max())
    return info, answer


def _infeasible_result(pp, requested: dict, exc: InfeasibleError) -> DesignResult:
    """The result of an infeasible request when the caller asked not to raise."""
    return DesignResult(
        status="infeasible",
        notion=pp.notion.name,
        mode=pp.mode,
        epsilon=None,
        distortion=None,
        mechanism=None,
        requested=requested,
        least_achievable=exc.least_achievable,
        message=str(exc),
        extra={"quantity": exc.quantity},
    )


def _require_verified(pp, name: str, answer: dict, requested: dict) -> None:
    """Raise :class:`VerificationError` unless the answer meets the request, re-measured."""
    if not answer["verified"]:
        raise VerificationError(
            f"{name} answer failed verification: {pp.notion.name} level "
            f"{answer['level']:.12g}, distortion {answer['distortion']:.12g}, requested "
            f"{requested}, solver objective {answer['objective']:.12g}"
        )


def solve_problem(
    pp: PrivacyProblem,
    solver: str | Sequence[str] | None = None,
    *,
    tol: float = 1e-7,
    raise_on_infeasible: bool = True,
    warm_start: bool = False,
    solver_options: dict | None = None,
) -> DesignResult:
    """Solve a built :class:`~privopt.builder.PrivacyProblem` and verify the answer.

    Parameters
    ----------
    pp : PrivacyProblem
    solver : str or sequence of str, optional
        A cvxpy solver name or a chain of them; default by problem class
        (:data:`SOLVER_CHAINS`).
    tol : float
        Tolerance of the ε line search (nats).
    raise_on_infeasible : bool
        Raise :class:`InfeasibleError` (default) or return a result with status
        ``"infeasible"`` and :attr:`DesignResult.least_achievable`.

    Raises
    ------
    InfeasibleError, SolverError, VerificationError
    """
    chain = _solver_chain(pp, solver)
    if not chain:
        raise SolverError("none of the solvers of the chain is installed")
    requested = (
        {"epsilon": pp.epsilon} if pp.mode == "epsilon" else {"max_distortion": pp.max_distortion}
    )
    try:
        if pp.mode == "epsilon":
            answer, info, search = _solve_epsilon_mode(pp, chain, warm_start, solver_options)
        elif pp.notion.direct_level:
            answer, info, search = _solve_direct_budget(pp, chain, warm_start, solver_options)
        else:
            answer, info, search = _line_search(
                pp, lambda eps: _solve_at(pp, eps, chain, True, solver_options), tol
            )
    except InfeasibleError as exc:
        if raise_on_infeasible:
            raise
        return _infeasible_result(pp, requested, exc)
    _require_verified(pp, info["name"], answer, requested)
    status = _ACCEPTED.get(info["status"], "optimal")
    if not answer.get("accurate", True):
        status = "optimal_inaccurate"
    solver_info = {
        "name": info["name"],
        "solve_time_s": info["solve_time_s"],
        "build_time_s": pp.build_time,
        "iterations": info.get("iterations"),
        "tried": info.get("tried"),
        "repair_weight": answer["repair_weight"],
        "repair_cost": answer["repair_cost"],
    }
    return DesignResult(
        status=status,
        notion=pp.notion.name,
        mode=pp.mode,
        epsilon=answer["level"],
        distortion=answer["distortion"],
        mechanism=answer["mechanism"],
        requested=requested,
        leakage=LeakageReport(pp.prior, answer["mechanism"].matrix, pp.neighbors)
        if pp.prior.n_inputs * pp.distortion.n_outputs <= 2**22
        else {},
        solver=solver_info,
        verified=True,
        line_search=search,
        objective=answer["objective"],
    )


def _independence_applies(pp) -> bool:
    return (
        not pp.prior.is_joint
        and pp.notion.independent_at_zero(pp.neighbors)
        and not pp.extra_distortions
        and not pp.user_constraints
    )


def _independent_answer(pp):
    """Level 0 on a single secret forces ``U ⊥ X``: the best constant output is optimal,
    ``D*(0) = min_u Σ_y p(y) d(y,u)`` (spec §2.5; exact, no solver needed)."""
    costs = pp.prior.input_probs @ pp.distortion.matrix
    matrix = np.zeros(pp.distortion.shape)
    matrix[:, int(np.argmin(costs))] = 1.0
    info = {
        "name": "closed form (independence at level 0)",
        "status": cp.OPTIMAL,
        "solve_time_s": 0.0,
        "iterations": 0,
        "tried": [],
        "objective": float(costs.min()),
        "matrix": matrix,
    }
    return _accept(pp, info, 0.0, None), info, None


def _solve_epsilon_mode(pp, chain, warm, solver_options):
    eps = pp.epsilon
    least = pp.notion.min_level(pp.prior, pp.neighbors)
    if eps < least - 1e-12:
        raise InfeasibleError(
            f"no mechanism has {pp.notion.name} level {eps:.6g}", least, "epsilon"
        )
    if eps == 0 and _independence_applies(pp):
        return _independent_answer(pp)
    info, answer = _solve_at(pp, max(eps, least), chain, warm, solver_options)
    if answer is None:
        raise InfeasibleError(
            f"the {pp.notion.name} program at ε = {eps:.6g} is infeasible (extra constraints?)",
            None,
            "epsilon",
        )
    return answer, info, None


def _solve_direct_budget(pp, chain, warm, solver_options):
    budget = pp.max_distortion
    least = _least_distortion(pp)
    if budget < least - DISTORTION_TOL:
        raise InfeasibleError(
            f"no mechanism has expected distortion ≤ {budget:.6g}", least, "distortion"
        )
    info, answer = _run(
        pp, chain, warm, solver_options, lambda info: _accept(pp, info, None, budget)
    )
    if answer is None:
        raise InfeasibleError(
            f"the budget {budget:.6g} cannot be met (extra constraints?)", least, "distortion"
        )
    return answer, info, None


def _line_search(pp, solve_at, tol):
    """Least ε with ``D*(ε) ≤ D`` by bisection on the non-increasing ``D*(ε)`` ([002] Thm 2
    and its proof, generalised to every notion). The answer is the feasible end."""
    budget = pp.max_distortion
    least_d = _least_distortion(pp)
    if budget < least_d - DISTORTION_TOL:
        raise InfeasibleError(
            f"no mechanism has expected distortion ≤ {budget:.6g}", least_d, "distortion"
        )
    slack = 1e-10 * (1 + budget)  # solver noise only: the answer stays on the feasible side
    lo = pp.notion.min_level(pp.prior, pp.neighbors)
    top = pp.notion.max_level(pp.prior)
    solves = 0

    def at(eps):
        nonlocal solves
        solves += 1
        info, answer = solve_at(eps)
        if answer is None:
            raise SolverError(f"the {pp.notion.name} program is infeasible at ε = {eps:.6g}")
        return info, answer

    if math.isinf(top) and budget <= least_d + slack:
        # only the least-distortion mechanisms meet the budget: is one of them of finite level?
        # That is decided by the argmin mechanism only when it is the unique one, i.e. every
        # input of positive mass has a single least-distortion output; with ties another
        # choice may have a finite level (e.g. a shared output for every input), which the
        # search below finds.
        d = pp.distortion.matrix
        exact = np.zeros(d.shape)
        exact[np.arange(d.shape[0]), d.argmin(axis=1)] = 1.0
        used = d[pp.prior.input_probs > 0]
        unique = ((used == used.min(axis=1, keepdims=True)).sum(axis=1) == 1).all()
        if unique and math.isinf(_measure(pp, exact)[0]):
            raise InfeasibleError(
                f"E[d] ≤ {budget:.6g} = D*(∞) is met only by mechanisms of unbounded "
                f"{pp.notion.name} level; at every finite level D*(ε) > {least_d:.9g}",
                None,
                "epsilon",
            )
    info, answer = at(lo)
    if answer["distortion"] <= budget + slack:
        return answer, info, {"bracket": [lo, lo], "solves": solves, "tolerance": tol}
    hi = top if math.isfinite(top) else max(lo, 0.0) + 1.0
    while True:
        info_hi, ans_hi = at(hi)
        if ans_hi["distortion"] <= budget + slack:
            break
        if math.isfinite(top) and hi >= top:
            # No mechanism is excluded at `top`, so D*(top) = least_d ≤ budget unless the
            # user's constraints bind: an excess of solver noise only (budget ≈ least_d) is
            # removed by mixing in the least-distortion mechanism, which qualifies at `top`.
            if ans_hi.get("mechanism") is not None:
                mixed, weight = _repair_distortion(pp, ans_hi["mechanism"].matrix, budget, slack)
                if weight > 0:
                    ans_mix = _accept(pp, dict(info_hi, matrix=mixed), hi, None)
                    if ans_mix["verified"] and ans_mix["distortion"] <= budget + slack:
                        ans_hi = ans_mix
                        break
            raise InfeasibleError(
                f"even the unconstrained optimum has distortion {ans_hi['distortion']:.9g} > "
                f"{budget:.6g}",
                ans_hi["distortion"],
                "distortion",
            )
        lo, hi = hi, hi * 2.0
        if hi > EPSILON_CAP:
            raise InfeasibleError(
                f"the budget {budget:.6g} needs a {pp.notion.name} level above {EPSILON_CAP} "
                f"nats (D*(ε) only approaches {least_d:.9g} as ε → ∞)",
                ans_hi["distortion"],
                "distortion",
            )
    best = (info_hi, ans_hi)
    while hi - lo > tol:
        mid = 0.5 * (lo + hi)
        info_mid, ans_mid = at(mid)
        if ans_mid["distortion"] <= budget + slack:
            hi, best = mid, (info_mid, ans_mid)
        else:
            lo = mid
    return best[1], best[0], {"bracket": [lo, hi], "solves": solves, "tolerance": tol}


# --- the one-call entry point --------------------------------------------------------------
def design(
    prior,
    distortion,
    notion: str,
    *,
    epsilon: float | None = None,
    max_distortion: float | None = None,
    neighbors=None,
    solver: str | Sequence[str] | None = None,
    tol: float = 1e-7,
    extra_distortions: Sequence[tuple] = (),
    observe_secret: bool = False,
    priors: Sequence | None = None,
    raise_on_infeasible: bool = True,
) -> DesignResult:
    """Design the optimal mechanism for one request, verified.

    Give exactly one of ``epsilon`` (least ``E[d]`` at that level) and ``max_distortion``
    (least level within that budget). See :func:`privopt.builder.build_problem` for the
    other arguments and :func:`solve_problem` for ``solver``, ``tol`` and
    ``raise_on_infeasible``.

    Examples
    --------
    >>> import privopt as po
    >>> res = po.design([0.5, 0.3, 0.2], "hamming", "pml", epsilon=0.3)
    >>> res.verified, round(res.epsilon, 6) <= 0.3
    (True, True)
    """
    request = prepare_request(
        prior,
        distortion,
        notion,
        epsilon=epsilon,
        max_distortion=max_distortion,
        neighbors=neighbors,
        extra_distortions=extra_distortions,
        observe_secret=observe_secret,
        priors=priors,
    )
    algorithm = pick_algorithm(request, solver)
    if algorithm is not None:
        return solve_with_algorithm(
            request, algorithm, tol=tol, raise_on_infeasible=raise_on_infeasible
        )
    pp = PrivacyProblem.from_request(request)
    return solve_problem(pp, solver, tol=tol, raise_on_infeasible=raise_on_infeasible)


# --- fast paths ----------------------------------------------------------------------------
def _dense_size(request: DesignRequest) -> float:
    return float(request.prior.n_inputs) * float(request.distortion.n_outputs)


def pick_algorithm(request: DesignRequest, solver, *, sweep: bool = False) -> Algorithm | None:
    """The fast path to use.

    The one named by ``solver``; or, with ``solver=None``, the applicable one of highest
    priority among those whose :attr:`~privopt.algorithms.Algorithm.auto` rule picks this
    instance (for a design, or for a ``sweep``, where warm starts change the balance).
    ``None``: use the cvxpy program.
    """
    notion = request.notion.name
    plain = not request.extra_distortions and not request.options.get("priors")
    if isinstance(solver, str) and solver in ALGORITHMS:
        algorithm = ALGORITHMS[solver]
        if (
            notion not in algorithm.notions
            or not plain
            or not algorithm.applies(
                request.prior, request.distortion, notion, request.mode, neighbors=request.neighbors
            )
        ):
            raise InputError(
                f"the algorithm {solver!r} does not apply to this problem (it solves "
                f"{', '.join(algorithm.notions)}: {algorithm.description})",
                "solver.name",
            )
        return algorithm
    if solver is not None or not plain:
        return None
    size = _dense_size(request)
    usable = [
        a
        for a in ALGORITHMS.values()
        if notion in a.notions
        and a.priority > 0
        and a.auto(notion, size, sweep)
        and a.applies(
            request.prior, request.distortion, notion, request.mode, neighbors=request.neighbors
        )
    ]
    return max(usable, key=lambda a: a.priority) if usable else None


def _run_algorithm(request: DesignRequest, algorithm: Algorithm, eps, budget, tol, warm=None):
    start = time.perf_counter()
    result = algorithm.solve(
        request.prior,
        request.distortion,
        request.notion.name,
        epsilon=eps,
        max_distortion=budget,
        neighbors=request.neighbors,
        tol=tol,
        warm_start=warm if algorithm.warm_starts else None,
    )
    info = {
        "name": algorithm.name,
        "status": result.status,
        "solve_time_s": time.perf_counter() - start,
        "iterations": result.iterations,
        "tried": [algorithm.name],
        "objective": float(result.objective),
        "certificate": result.certificate,
        "warm_state": result if result.status == "optimal" else None,
    }
    if result.status == "infeasible":
        info["least_achievable"] = result.info.get("least_achievable")
        return info, None
    if result.status != "optimal":
        raise SolverError(f"{algorithm.name} stopped with status {result.status!r}: {result.info}")
    # a fast path's own optimality certificate (a dual bound) must be as tight as the
    # agreement asked of the cvxpy answers; otherwise the answer is only feasible
    gap = result.certificate.get("duality_gap")
    certified = gap is None or gap <= OBJECTIVE_RTOL * (1 + abs(result.objective))
    if result.mechanism is not None:
        info["matrix"] = np.asarray(result.mechanism, dtype=float)
        answer = _accept(request, info, eps, budget)
        answer["accurate"] = answer["accurate"] and certified
        return info, answer
    # A structured answer too large to hold densely: verified by the algorithm's own
    # structured re-measurement (independent of its solve), against the same tolerances.
    check = result.certificate.get("verification") or {}
    level, dist = check.get("level"), check.get("distortion")
    ok = level is not None and dist is not None and bool(check.get("row_sums_ok", False))
    if ok and eps is not None and math.isfinite(eps):
        ok = level <= eps + _level_tol(eps)
    if ok and budget is not None:
        ok = dist <= budget + DISTORTION_TOL * (1 + budget)
    return info, {
        "mechanism": None,
        "structured": result.lazy_mechanism,
        "level": float(level) if level is not None else float("nan"),
        "distortion": float(dist) if dist is not None else float("nan"),
        "verified": ok,
        "repair_weight": 0.0,
        "repair_cost": 0.0,
        "objective": float(result.objective),
        "accurate": certified,
    }


def solve_with_algorithm(
    request: DesignRequest,
    algorithm: Algorithm,
    *,
    tol: float = 1e-7,
    raise_on_infeasible: bool = True,
    warm_start=None,
) -> DesignResult:
    """Solve with a fast path of :mod:`privopt.algorithms`, verified like any other answer.

    ``warm_start`` is a previous :class:`DesignResult` of the same algorithm on the same
    instance (its ``warm_state``), or ``None``. A line search warm-starts each bisection step
    from the previous one.
    """
    requested = (
        {"epsilon": request.epsilon}
        if request.mode == "epsilon"
        else {"max_distortion": request.max_distortion}
    )
    algo_tol = min(tol, 1e-9)
    if isinstance(warm_start, DesignResult):
        warm_start = warm_start.warm_state
    state = {"warm": warm_start}

    def run(eps, budget):
        info, answer = _run_algorithm(request, algorithm, eps, budget, algo_tol, state["warm"])
        if info.get("warm_state") is not None:
            state["warm"] = info["warm_state"]
        return info, answer

    try:
        if request.mode == "epsilon":
            least = request.notion.min_level(request.prior, request.neighbors)
            if request.epsilon < least - 1e-12:
                raise InfeasibleError(
                    f"no mechanism has {request.notion.name} level {request.epsilon:.6g}",
                    least,
                    "epsilon",
                )
            info, answer = run(request.epsilon, None)
            search = None
        elif request.notion.direct_level:
            info, answer = run(None, request.max_distortion)
            search = None
        else:
            answer, info, search = _line_search(request, lambda eps: run(eps, None), tol)
        if answer is None:
            raise InfeasibleError(
                f"{algorithm.name}: the request is infeasible",
                info.get("least_achievable"),
                "epsilon" if request.mode == "epsilon" else "distortion",
            )
    except InfeasibleError as exc:
        if raise_on_infeasible:
            raise
        return _infeasible_result(request, requested, exc)
    _require_verified(request, algorithm.name, answer, requested)
    mechanism = answer["mechanism"]
    leakage = {}
    if mechanism is not None and _dense_size(request) <= 2**22:
        leakage = LeakageReport(request.prior, mechanism.matrix, request.neighbors)
    return DesignResult(
        status="optimal" if answer.get("accurate", True) else "optimal_inaccurate",
        notion=request.notion.name,
        mode=request.mode,
        epsilon=answer["level"],
        distortion=answer["distortion"],
        mechanism=mechanism,
        requested=requested,
        leakage=leakage,
        solver={
            "name": algorithm.name,
            "solve_time_s": info["solve_time_s"],
            "iterations": info.get("iterations"),
            "tried": info.get("tried"),
            "repair_weight": answer["repair_weight"],
            "repair_cost": answer["repair_cost"],
            "certificate": {
                k: v
                for k, v in info.get("certificate", {}).items()
                if isinstance(v, (int, float, str, bool))
            },
        },
        verified=True,
        line_search=search,
        objective=answer["objective"],
        extra={"structured_mechanism": answer.get("structured")}
        if answer.get("structured") is not None
        else {},
        warm_state=info.get("warm_state"),
    )


# --- curves --------------------------------------------------------------------------------
@dataclass
class Curve:
    """A privacy–distortion curve: one record per point.

    Each record has ``epsilon`` (re-measured level), ``distortion`` (re-measured), ``status``,
    ``verified``, the requested value (``requested_epsilon`` or ``requested_max_distortion``),
    ``notion`` and ``solve_time_s``; failed points carry ``message``.
    """

    notion: str
    mode: str
    records: list[dict]
    results: list[DesignResult | None] = field(repr=False, default_factory=list)

    def to_frame(self):
        """The records as a pandas DataFrame (needs pandas)."""
        try:
            import pandas as pd
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError(
                "Curve.to_frame needs pandas: pip install pandas (or the [frames] extra)"
            ) from exc
        return pd.DataFrame.from_records(self.records)

    def column(self, key: str) -> np.ndarray:
        return np.array(
            [np.nan if r.get(key) is None else r[key] for r in self.records], dtype=float
        )

    def __len__(self) -> int:
        return len(self.records)


def sweep(
    prior,
    distortion,
    notion: str,
    *,
    epsilons: Sequence[float] | None = None,
    max_distortions: Sequence[float] | None = None,
    neighbors=None,
    solver: str | Sequence[str] | None = None,
    tol: float = 1e-7,
    priors: Sequence | None = None,
    observe_secret: bool = False,
    extra_distortions: Sequence[tuple] = (),
    progress=None,
) -> Curve:
    """Sweep the privacy–distortion curve over ``epsilons`` or ``max_distortions``.

    Where a fast path that warm-starts applies (Blahut–Arimoto for mutual information, the
    symmetric reduction, the HiGHS simplex for the single-alphabet LPs), each point starts
    from the previous one's answer; otherwise the cvxpy program is built once and re-solved
    through its Parameter (DPP: no recompilation). Every point is verified like a
    :func:`design` answer; a point that fails is recorded with its status and message,
    never silently. Sort the points (ascending or descending) for the best warm starts.

    Parameters
    ----------
    progress : callable, optional
        Wraps the iterable of points (e.g. ``tqdm.tqdm``).
    """
    if (epsilons is None) == (max_distortions is None):
        raise InputError("give exactly one of 'epsilons' and 'max_distortions'", "sweep")
    mode = "epsilon" if epsilons is not None else "max_distortion"
    points = [float(v) for v in (epsilons if epsilons is not None else max_distortions)]
    if not points:
        raise InputError("no points to sweep", "sweep")
    first = {"epsilon": points[0]} if mode == "epsilon" else {"max_distortion": points[0]}
    request = prepare_request(
        prior,
        distortion,
        notion,
        neighbors=neighbors,
        priors=priors,
        observe_secret=observe_secret,
        extra_distortions=extra_distortions,
        **first,
    )
    algorithm = pick_algorithm(request, solver, sweep=True)
    if algorithm is None:
        pp = PrivacyProblem.from_request(request)  # built once, re-solved through its Parameter

        def solve_point(value: float) -> DesignResult:
            if mode == "epsilon":
                pp.set_epsilon(value)
            else:
                pp.set_max_distortion(value)
            return solve_problem(
                pp, solver, tol=tol, raise_on_infeasible=False, warm_start=bool(results)
            )
    else:  # a fast path applies: each point warm-starts from the last one solved

        def solve_point(value: float) -> DesignResult:
            point = dataclasses.replace(request, **{mode: value})
            warm = next((r for r in reversed(results) if r and r.warm_state is not None), None)
            return solve_with_algorithm(
                point, algorithm, tol=tol, raise_on_infeasible=False, warm_start=warm
            )

    records, results = [], []
    iterator = progress(points) if progress is not None else points
    for value in iterator:
        record = {"notion": request.notion.name, f"requested_{mode}": value}
        try:
            if mode == "epsilon":
                if value < 0 or math.isnan(value):
                    raise InputError(f"must be ≥ 0, got {value}", "epsilon")
            result = solve_point(value)
        except (SolverError, VerificationError, InputError) as exc:
            record.update(
                epsilon=None, distortion=None, status="error", verified=False, message=str(exc)
            )
            records.append(record)
            results.append(None)
            continue
        record.update(
            epsilon=result.epsilon,
            distortion=result.distortion,
            status=result.status,
            verified=result.verified,
            solve_time_s=result.solver.get("solve_time_s"),
        )
        if result.status == "infeasible":
            record["least_achievable"] = result.least_achievable
            record["message"] = result.message
        records.append(record)
        results.append(result)
    return Curve(request.notion.name, mode, records, results)
