"""Running HiGHS on an assembled :class:`~privopt.methods.sparse_lp.assembly.LinearProgram`.

The LP is passed straight to :class:`highspy.Highs` as a ``HighsLp`` (no modelling layer).
The run honours the task's deadline (HiGHS's ``time_limit``), reports its iterations through
HiGHS's interrupt callbacks, and returns the primal point, the dual bound (from the row and
column duals) and, for simplex vertices, the basis for warm starts. A simplex vertex whose
residual is above round-off is polished by a sparse LU solve of its basis.
"""

from __future__ import annotations

__all__ = ["HighsRun", "run_highs", "highs_model", "HIGHS_METHODS"]

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import highspy
import numpy as np

from privopt.errors import InputError
from privopt.methods._native import silence_highs_banner
from privopt.methods.sparse_lp.assembly import LinearProgram

#: HiGHS algorithms offered: dual simplex, interior point (with or without crossover), PDLP.
HIGHS_METHODS = ("simplex", "ipm", "pdlp")


@dataclass
class HighsRun:
    """What one HiGHS run produced.

    Attributes
    ----------
    status : str
        ``"optimal"``, ``"infeasible"``, ``"time_limit"`` or ``"failed"``.
    highs_status : str
        HiGHS's own model status.
    x : numpy.ndarray or None
        The primal point.
    objective, dual_objective : float
        HiGHS's primal objective, and the rigorous lower bound privopt computes from its row
        duals (:meth:`LinearProgram.lower_bound`; ``nan`` without duals).
    iterations : int
    solve_time : float
    max_primal_infeasibility : float
    warm_started, crossover, polished : bool
    row_dual : numpy.ndarray or None
        HiGHS's row duals (for a bound on another LP the run's LP was reduced from).
    basis : highspy.HighsBasis or None
        A valid basis (simplex or crossover), for warm starts.
    """

    status: str
    highs_status: str
    x: np.ndarray | None
    objective: float
    dual_objective: float = float("nan")
    iterations: int = 0
    solve_time: float = 0.0
    max_primal_infeasibility: float = float("nan")
    warm_started: bool = False
    crossover: bool = False
    polished: bool = False
    row_dual: np.ndarray | None = field(default=None, repr=False)
    basis: Any = field(default=None, repr=False)


def highs_model(lp: LinearProgram) -> highspy.HighsLp:
    """``lp`` as a :class:`highspy.HighsLp` (column-wise matrix, infinite bounds mapped).

    Parameters
    ----------
    lp : LinearProgram

    Returns
    -------
    highspy.HighsLp
    """
    inf = highspy.kHighsInf
    model = highspy.HighsLp()
    n_row, n_col = lp.A.shape
    model.num_col_ = n_col
    model.num_row_ = n_row
    model.col_cost_ = lp.cost
    model.col_lower_ = lp.col_lo
    model.col_upper_ = np.where(np.isinf(lp.col_hi), inf, lp.col_hi)
    model.row_lower_ = np.where(np.isinf(lp.row_lo), -inf, lp.row_lo)
    model.row_upper_ = np.where(np.isinf(lp.row_hi), inf, lp.row_hi)
    model.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    model.a_matrix_.num_col_ = n_col
    model.a_matrix_.num_row_ = n_row
    model.a_matrix_.start_ = lp.A.indptr.astype(np.int32)
    model.a_matrix_.index_ = lp.A.indices.astype(np.int32)
    model.a_matrix_.value_ = lp.A.data
    return model


def run_highs(
    lp: LinearProgram,
    method: str,
    tol: float,
    *,
    crossover: bool = False,
    time_limit: float | None = None,
    warm_basis=None,
    warm_primal: bool = False,
    threads: int | None = None,
    presolve: str | None = None,
    verbose: bool = False,
    on_iteration: Callable[[int], None] | None = None,
) -> HighsRun:
    """Solve ``lp`` with HiGHS.

    Parameters
    ----------
    lp : LinearProgram
    method : {"simplex", "ipm", "pdlp"}
    tol : float
        Feasibility and optimality tolerance (clamped to HiGHS's ranges).
    crossover : bool
        IPM only: finish at a vertex.
    time_limit : float, optional
        Seconds.
    warm_basis : highspy.HighsBasis, optional
        A basis of an LP of the same shape (simplex only).
    warm_primal : bool
        Run the primal simplex (not the dual) from ``warm_basis``.
    threads : int, optional
    presolve : {"on", "off"}, optional
    verbose : bool
        Print HiGHS's log.
    on_iteration : callable, optional
        Called with the iteration count from HiGHS's interrupt callbacks.

    Returns
    -------
    HighsRun
    """
    if method not in HIGHS_METHODS:
        raise InputError(f"unknown HiGHS method {method!r}: use one of {HIGHS_METHODS}", "solver")
    silence_highs_banner()
    h = highspy.Highs()
    h.setOptionValue("output_flag", bool(verbose))
    h.passModel(highs_model(lp))
    feas = float(min(1e-7, max(tol, 1e-10)))
    settings: dict[str, Any] = {
        "primal_feasibility_tolerance": feas,
        "dual_feasibility_tolerance": feas,
    }
    if method == "simplex":
        settings["solver"] = "simplex"
    elif method == "ipm":
        settings.update(
            solver="ipm",
            ipm_optimality_tolerance=float(max(tol, 1e-12)),
            run_crossover="on" if crossover else "off",
        )
    else:
        settings.update(solver="pdlp", pdlp_optimality_tolerance=float(max(tol, 1e-10)))
    if lp.A.nnz > 1e6:  # presolve finds nothing to remove here and costs ~25 s at n = 10
        settings["presolve"] = "off"
    if presolve is not None:
        settings["presolve"] = presolve
    if threads is not None:
        settings["threads"] = int(threads)
    if time_limit is not None:
        settings["time_limit"] = float(max(time_limit, 1e-3))
    for key, value in settings.items():
        if h.setOptionValue(key, value) != highspy.HighsStatus.kOk:
            raise InputError(f"HiGHS rejected option {key} = {value!r}", "solver")
    warm_used = False
    n_row, n_col = lp.A.shape
    if warm_basis is not None and method == "simplex":
        if (
            isinstance(warm_basis, highspy.HighsBasis)
            and len(warm_basis.col_status) == n_col
            and len(warm_basis.row_status) == n_row
        ):
            warm_used = h.setBasis(warm_basis) == highspy.HighsStatus.kOk
            if warm_used and warm_primal:
                h.setOptionValue("simplex_strategy", 4)  # HiGHS's primal simplex
    if on_iteration is not None:

        def report(event) -> None:
            out = event.data_out
            count = sum(
                max(int(getattr(out, key, 0) or 0), 0)
                for key in (
                    "simplex_iteration_count",
                    "ipm_iteration_count",
                    "pdlp_iteration_count",
                )
            )
            on_iteration(count)

        for callback in (h.cbSimplexInterrupt, h.cbIpmInterrupt):
            callback.subscribe(report)
    start = time.perf_counter()
    h.run()
    solve_time = time.perf_counter() - start
    status = h.getModelStatus()
    info = h.getInfo()
    solution = h.getSolution()
    x = np.asarray(solution.col_value, dtype=float) if solution.value_valid else None
    code = {
        highspy.HighsModelStatus.kOptimal: "optimal",
        highspy.HighsModelStatus.kInfeasible: "infeasible",
        highspy.HighsModelStatus.kTimeLimit: "time_limit",
    }.get(status, "failed")
    run = HighsRun(
        status=code,
        highs_status=h.modelStatusToString(status),
        x=x,
        objective=float(info.objective_function_value),
        solve_time=solve_time,
        iterations=int(
            max(info.simplex_iteration_count, 0)
            + max(info.ipm_iteration_count, 0)
            + max(info.pdlp_iteration_count, 0)
            + max(info.crossover_iteration_count, 0)
        ),
        max_primal_infeasibility=float(info.max_primal_infeasibility),
        warm_started=warm_used,
        crossover=method == "ipm" and crossover,
    )
    if solution.dual_valid:
        run.row_dual = np.asarray(solution.row_dual, dtype=float)
        run.dual_objective = lp.lower_bound(run.row_dual)
    if info.basis_validity == highspy.kBasisValidityValid:
        run.basis = h.getBasis()
        # polish only a vertex with residuals above round-off (measured: 1e-16–2e-14 on
        # most instances, ~1e-9 on skewed identifiability; the LU costs ~30 % of a warm step)
        if x is not None and code == "optimal" and lp.A.nnz <= 5e6:
            residual = lp.residual(x)
            if residual > 1e-13:
                refined = polish_vertex(lp, run.basis)
                if refined is not None and lp.residual(refined) <= residual:
                    run.x = refined
                    run.polished = True
    return run


def polish_vertex(lp: LinearProgram, basis) -> np.ndarray | None:
    """Recompute a simplex vertex from its basis with a sparse LU solve.

    Nonbasic columns sit at a bound, nonbasic rows at a bound; the basic columns solve the
    square system ``A[N_rows, B_cols] x_B = bound − A[N_rows, N_cols] x_N``. This removes the
    ~1e-9 primal residuals of the simplex (its feasibility tolerance), which matter for ratio
    constraints between tiny entries (identifiability with skewed priors).

    Parameters
    ----------
    lp : LinearProgram
    basis : highspy.HighsBasis

    Returns
    -------
    numpy.ndarray or None
        The vertex, or ``None`` if the basis is unusable.
    """
    from scipy.sparse.linalg import splu

    col = np.fromiter((int(s) for s in basis.col_status), dtype=np.int8, count=lp.A.shape[1])
    row = np.fromiter((int(s) for s in basis.row_status), dtype=np.int8, count=lp.A.shape[0])
    basic_cols = np.flatnonzero(col == 1)
    tight_rows = np.flatnonzero(row != 1)
    if basic_cols.size != tight_rows.size:
        return None
    x = np.zeros(lp.A.shape[1])
    at_upper = col == 2
    x[at_upper] = lp.col_hi[at_upper]
    at_lower = (col == 0) | (col == 3) | (col == 4)
    x[at_lower] = np.where(np.isfinite(lp.col_lo[at_lower]), lp.col_lo[at_lower], 0.0)
    rhs = np.where(row[tight_rows] == 2, lp.row_hi[tight_rows], lp.row_lo[tight_rows])
    if not np.isfinite(rhs).all():
        return None
    A_rows = lp.A.tocsr()[tight_rows]
    rhs = rhs - A_rows @ x
    if basic_cols.size:
        try:
            lu = splu(A_rows[:, basic_cols].tocsc())
            x[basic_cols] = lu.solve(rhs)
        except (RuntimeError, ValueError):
            return None
    return x if np.isfinite(x).all() else None
