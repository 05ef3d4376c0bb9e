"""The ``block-ipm`` method: the structured interior point on the block-angular LP.

It answers ε points of the linear notions of :data:`~privopt.methods.block_ipm.programs.PROGRAMS`
for any prior and distortion (no symmetry needed). Its answer is the best primal iterate
(rows renormalised) and its certificate the box-bounded Lagrangian bound computed by privopt
from the iterate's duals (:mod:`~privopt.methods.block_ipm.interior_point`); the solve driver
re-measures the mechanism and checks the gap like any other answer.
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING

import numpy as np

from privopt.errors import InputError
from privopt.methods.base import (
    Answer,
    Certificate,
    Method,
    Stopping,
    Task,
    TimeLimitReached,
    plain_linear_reason,
    register,
)
from privopt.methods.block_ipm.multipliers import block_multipliers
from privopt.methods.block_ipm.ordering import SCHUR_CHUNK_BYTES, worker_count
from privopt.methods.block_ipm.programs import (
    PROGRAMS,
    band_width,
    block_program,
    program_name,
)
from privopt.methods.multipliers import offer, wanted
from privopt.methods.sparse_lp.encodings import WARM_SIMPLEX_ENTRIES
from privopt.request import DesignRequest
from privopt.resources import COLUMN_FACTOR_BYTES, dense_pair_columns, estimate_bytes
from privopt.status import Status
from privopt.validation import level_tolerance

if TYPE_CHECKING:  # pragma: no cover
    from privopt.methods.block_ipm.interior_point import BlockLP, BlockSolution

__all__ = ["BlockInteriorPoint", "MAX_PAIR_INPUTS"]

#: Largest support of a pair notion: one dense ``|X| × |X|`` inverse per output column.
MAX_PAIR_INPUTS = 1024
#: Most inputs for which a run of the one-auxiliary form of dp or identifiability over all
#: pairs that misses the level or the certification gap is tried again with the pairs
#: written out (``k(k − 1)`` rows per column).
MAX_PAIRS_REWRITTEN = 128
#: Most ordered neighbour pairs per input for which dp and identifiability pick ``block-ipm``
#: by themselves: each pair is a row of every column (database neighbours: ``n(m − 1)``,
#: 7–12 on the measured instances; all pairs on ``k`` symbols: ``k − 1``, where the cvxpy
#: program is an order of magnitude faster).
MAX_PAIR_DEGREE = 16


def _mechanism(request: DesignRequest, sol: BlockSolution, support: np.ndarray) -> np.ndarray:
    """The dense mechanism of a run's best iterate: the support's rows clipped at 0 and
    renormalised, the other inputs given the output law of the support."""
    probs = request.prior.probs
    Ws = _clean(sol.V[:, : support.size].T)
    W = np.empty((probs.size, Ws.shape[1]))
    W[support] = Ws
    W[np.setdiff1d(np.arange(probs.size), support)] = probs[support] @ Ws
    return W


def _meets(request: DesignRequest, sol: BlockSolution, support: np.ndarray, eps: float) -> bool:
    """Whether a run ended within the driver's certification gap
    (:meth:`~privopt.methods.block_ipm.interior_point.BlockSolution.near_certified`) with a
    mechanism whose re-measured level is within the driver's tolerance
    (:func:`~privopt.validation.level_tolerance`) of ``eps`` (both checked again by the
    driver)."""
    if sol.V is None or not sol.near_certified(request.objective_floor(False)):
        return False
    return request.level_of(_mechanism(request, sol, support)) <= eps + level_tolerance(eps)


def solve_block_lp(lp: BlockLP, **options) -> BlockSolution:
    """:func:`privopt.methods.block_ipm.interior_point.solve_block_lp`, imported at the first
    run (with scipy.linalg and the kernels), not when the method registers.

    Parameters
    ----------
    lp : BlockLP
        The block-angular LP.
    **options
        As for :func:`~privopt.methods.block_ipm.interior_point.solve_block_lp`.

    Returns
    -------
    BlockSolution
    """
    from privopt.methods.block_ipm import interior_point

    return interior_point.solve_block_lp(lp, **options)


def _clean(W: np.ndarray) -> np.ndarray:
    """Clip round-off negatives and renormalise the rows (the coupling rows hold to 1e-9)."""
    W = np.clip(W, 0.0, None)
    return W / W.sum(axis=1, keepdims=True)


#: The programs whose certificate the solve driver evaluates again from its dual point through
#: the notion's own constraints (:attr:`~privopt.methods.base.Certificate.dual_point`): the
#: pair programs, whose variables are the mechanism's entries alone, so that the notion's
#: Lagrangian at the same duals equals this method's box-bounded bound exactly (the best
#: shift of a row sum's dual leaves the least reduced cost of its row) and a difference can
#: only come from rows that are not the notion's. The programs with auxiliary variables
#: (an output law, a column's least entry or maximum) bound them by their boxes, which the
#: notion's terms do not: at inexact duals the two differ by more than the tolerance (PML at
#: a level where it binds nothing: 0.32 against 0.35), and their bound is the method's.
CHECKED_PROGRAMS = frozenset({"dp", "identifiability", "metric_dp"})


class BlockInteriorPoint(Method):
    """Structured interior point on the block-angular LP (see the module docstring)."""

    name = "block-ipm"
    description = (
        "interior point on the block-angular LP (one block per output column, a Schur "
        "complement on the row sums); any prior"
    )
    priority = 8
    memory_model = "columns"
    # solve_block_lp checks the deadline between iterations and does not start one that
    # would end after it; its best iterate is the answer
    stopping = Stopping.CHECKS

    def unsupported(self, request: DesignRequest) -> str | None:
        """Why the block interior point cannot take ``request``, or ``None``: it needs a plain
        single-secret request of a notion in
        :data:`~privopt.methods.block_ipm.programs.PROGRAMS`, and for a pair notion at most
        :data:`MAX_PAIR_INPUTS` inputs.

        Returns
        -------
        str or None
            ``None`` when the method takes the request, else one phrase saying why not.
        """
        reason = plain_linear_reason(request, PROGRAMS)
        if reason is not None:
            return reason
        if (
            dense_pair_columns(request)
            and request.prior.n_inputs > MAX_PAIR_INPUTS
            and band_width(request) is None
        ):
            return (
                f"{request.prior.n_inputs} inputs: a dense normal matrix per output column "
                f"is held only up to {MAX_PAIR_INPUTS} inputs"
            )
        return None

    def memory_bytes(self, request: DesignRequest, exact: bool = True) -> float:
        """The ``"columns"`` estimate (:func:`privopt.resources.estimate_bytes`), with the
        band kernel's factors (``2 b`` numbers per variable and column,
        :mod:`~privopt.methods.block_ipm.band`) in place of a dense normal matrix and its
        inverse per column where the pair rows are written in band form, and four
        :data:`~privopt.methods.block_ipm.ordering.SCHUR_CHUNK_BYTES` of work arrays per
        thread (the blocks being formed and their products in the factorisation, the
        inverses being summed into the Schur complement). Measured peak resident memory on
        king-graph spanners of n × n maps (metric privacy, ε = 0.5, two threads): 0.21 GB at
        n = 14, 0.63 GB at 20, 0.99 GB at 24, against 0.59, 0.79 and 1.08 GB estimated
        (the previous work term of two chunks in all gave 0.38 and 0.67 GB at 20 and 24).

        Parameters
        ----------
        request : DesignRequest
        exact : bool
            As in :meth:`Method.memory_bytes`.
        """
        need = estimate_bytes(request, self.memory_model, exact)
        width = band_width(request)
        if width is None:
            return need
        entries, inputs = float(request.entries), float(request.prior.n_inputs)
        dense_columns = COLUMN_FACTOR_BYTES * entries * inputs
        work = 4.0 * worker_count() * SCHUR_CHUNK_BYTES
        return need - dense_columns + 16.0 * entries * (width + 1) + work

    def solves_budget(self, request: DesignRequest) -> bool:
        """Never: the method answers ε points only.

        Parameters
        ----------
        request : DesignRequest
            The validated request (ignored).

        Returns
        -------
        bool
            Always ``False``; budget mode goes through the driver's line search.
        """
        return False  # ε points only; budget mode goes through the driver's line search

    def auto(self, request: DesignRequest, *, sweep: bool = False) -> bool:
        """Chosen where it measured fastest (benchmarks/README.md, "Block interior
        point"): dp and identifiability with 25 to 512 inputs, metric privacy with 20 to 160
        (5 × 5 to 8 × 8 maps: 0.08–1.9 s against 0.08–20 s for ``sparse-clarabel``, which
        stops short at ε·d near 20, and 0.12–14 s for ``sparse-highs``; random planar metrics
        on 40 secrets at ε = 14–30: 0.55–0.63 s, where both sparse LPs failed to certify),
        arbitrary priors (PD-DP against plain cvxpy with Clarabel in the same run: m = 2,
        n = 7: 1.3 s against 26 s; m = 3, n = 5: 15 s against 218 s; m = 2, n = 8: 20 s
        against 209 s); the single-alphabet notions from 60 × 60 on, single solves
        (k = 1,000: PML 11 s, LDP 11 s, maximal leakage 8 s, information privacy 23 s,
        where the sparse LPs do not fit in memory); sweeps of small alphabets keep the
        warm-started simplex (PML up to 200 × 200, the others up to 70 × 70; the pair notions
        excepted, see below). A budget request's line search counts as a sweep.

        Parameters
        ----------
        request : DesignRequest
        sweep : bool
            Whether the point is part of a sweep.

        Returns
        -------
        bool
        """
        if dense_pair_columns(request):
            # sweeps too: the warm simplex is no match here (12 points on a 7 × 7 map: 4.5 s
            # against 18.9 s; 5 points on an 8 × 8 map: 7.0 s against 53 s, one of them not
            # certified), and Clarabel through the cvxpy Parameter is slower (three points
            # on 2⁷ databases with an arbitrary prior: 10.4 s against 85.7 s)
            if request.notion.name == "metric_dp":
                # beyond 160 cells only where the pairs form a narrow band (a map's grid, a
                # road network: the block-tridiagonal kernel, band.py): 12 × 12 Manhattan
                # 4.9–6.2 s against 7.3–9.5 s with the dense kernel, 15 × 15 20 s against
                # 34 s, 20 × 20 148 s against 310 s (2 shared cores, under load); the sparse
                # LPs took 225 s at 15 × 15
                cells = request.prior.n_inputs
                return 20 <= cells <= 160 or (cells > 160 and band_width(request) is not None)
            # 2⁹ databases with a Dirichlet prior: 480 s, certified (4e-10), 3.7 GB, while
            # Clarabel through the cvxpy program had no answer at its 900 s time limit. From
            # 25 inputs on it beats the defaults below it on database neighbours (PD-DP,
            # Dirichlet prior, one point: 5² 33 ms against 68 ms for sparse-highs, 2⁵ 48
            # against 107 ms, 3³ 31 against 104 ms, 2⁶ 0.28–0.31 s against 0.38–0.44 s for
            # Clarabel, 3⁴ 0.42–0.56 against 0.96–1.2 s; 20-point sweeps: 5² 0.67 s against
            # 1.72 s for the warm simplex, 2⁵ 1.15 against 1.85 s, 2⁶ 3.2 against 6.1 s, 3⁴
            # 9.8 against 19.7 s for Clarabel); at 16 inputs sparse-highs is faster (14–15 ms
            # against 20–22 ms). Only for sparse neighbour graphs: a dense custom graph puts
            # up to k(k − 1) rows in a column (dp with every pair neighbours, k = 100, was
            # 2.3 s this way against 0.19 s for the cvxpy program; it is now written as LDP,
            # see programs.program_name, and follows the single-alphabet rules below)
            relation = request.neighbors
            if relation is None or relation.n_pairs > MAX_PAIR_DEGREE * relation.size:
                return False
            return 25 <= request.prior.n_inputs <= 512
        if sweep:
            # the warm-started simplex keeps sweeps (and line searches) of PML up to 200 × 200
            # and of the others up to 70 × 70; beyond, the cvxpy program with Clarabel was
            # the default, slower than this (10-point sweeps on 100 symbols with a Dirichlet
            # prior: information privacy 2.0 s against more than 120 s, a budget point 3.6 s
            # against over 60 s; LDP 0.66 s against 1.7 s; maximal leakage 1.2 s against
            # 1.8 s; at 160 symbols LDP 2.4 s against 5.3 s, maximal leakage 5.2 s
            # against 6.5 s)
            limits = WARM_SIMPLEX_ENTRIES
            limit = limits.get(program_name(request), limits.get(request.notion.name, 0))
            return request.entries > limit
        return request.entries >= 3600

    def rescues(self, request: DesignRequest) -> bool:
        """Always, where it applies: its dual bound is computed by privopt from the final
        iterate, and on the points where the sparse LPs and the cvxpy program stop short of a
        certificate (identifiability at ε = 20–30 with prior ratios near ``e^ε``: gaps of
        1e-6 to 1e-2) it certified all three that 1,000 fuzzed instances left uncertified.

        Parameters
        ----------
        request : DesignRequest

        Returns
        -------
        bool
        """
        return True

    def _run(self, task: Task, lp: BlockLP) -> BlockSolution:
        """:func:`solve_block_lp` on ``lp`` with the task's tolerance, deadline and progress
        reports."""
        from threadpoolctl import threadpool_limits

        from privopt.methods.block_ipm.kernels import DenseColumns
        from privopt.methods.block_ipm.pruning import prunable, solve_pruned

        def progress(iteration: int, objective: float, bound: float) -> None:
            task.emit(self.name, "iteration", iteration, f"E[d] {objective:.10g} ≥ {bound:.10g}")

        # the dense kernel works on many small matrices, where BLAS threads cost more than
        # they give (PD-DP n = 7: 4.0 s with one thread, 7.5 s with two)
        limit = 1 if isinstance(lp.kernel, DenseColumns) else None
        run = solve_pruned if prunable(lp) else solve_block_lp
        with threadpool_limits(limits=limit, user_api="blas"):
            return run(
                lp,
                tol=min(max(task.tol, 1e-10), 1e-7),
                deadline=task.deadline,
                on_iteration=progress if task.report is not None else None,
                gap_floor=task.request.objective_floor(False),
            )

    def solve(self, task: Task) -> Answer:
        """Run the block interior point at ``task.epsilon`` (capped at the request's largest
        level) and rebuild the dense mechanism from its best primal iterate.

        Parameters
        ----------
        task : Task
            An ε point; its tolerance is clipped to ``[1e-10, 1e-7]``.

        Returns
        -------
        Answer
            ``OPTIMAL`` with the mechanism (support rows clipped at 0 and renormalised, the
            other inputs given the output law of the support), its objective and, when
            finite, the Lagrangian bound as the certificate (the driver checks the gap);
            ``TIME_LIMIT`` when the deadline passed; ``FAILED`` when ε (after the cap) is
            infinite or above the notion's largest written level, or no iterate met the rows.

        Raises
        ------
        InputError
            If ``task`` is a budget point (field ``privacy``).
        """
        start = time.perf_counter()
        request = task.request
        if task.epsilon is None:
            raise InputError("block-ipm solves ε points only", "privacy")
        eps = float(task.epsilon)
        cap = request.max_level()
        if math.isfinite(cap) and eps > cap:
            eps = cap
        if not request.notion.writes_level(eps):  # e^30 would wreck the normal matrices
            limit = request.notion.largest_written_level
            return Answer(
                Status.FAILED,
                self.name,
                message=f"ε above {limit:g} nats is left to the other methods",
            )
        task.emit(self.name, "start")
        lp, support = block_program(request, eps)
        build = time.perf_counter() - start
        retried = False
        program = program_name(request)
        try:
            sol = self._run(task, lp)
            if (
                program_name(request) != request.notion.name
                and request.prior.n_inputs <= MAX_PAIRS_REWRITTEN
                and not _meets(request, sol, support, eps)
                and not task.deadline.expired()
            ):
                # the one-auxiliary form of the all-pairs rows holds its rows to 1e-9 in
                # absolute terms, which need not hold the ratios of entries near 1e-9 (a prior
                # whose support spans 1e-8 to 0.97, ε = 20: the level was exceeded and the
                # repaired answer 0.025 off); written pair by pair the rows are met
                pairs_lp, pairs_support = block_program(request, eps, pair_rows=True)
                again, retried = self._run(task, pairs_lp), True
                if _meets(request, again, pairs_support, eps) or sol.V is None:
                    lp, support, sol = pairs_lp, pairs_support, again
                    program = request.notion.name
        except TimeLimitReached as exc:
            return Answer(Status.TIME_LIMIT, self.name, message=str(exc))
        found = None
        if sol.row_duals is not None and (wanted(task) or program in CHECKED_PROGRAMS):
            found = block_multipliers(request, program, support, sol.row_duals, eps, self.name)
            if found is not None and wanted(task):  # a certified curve's dual point
                offer(task, found)
        # the certificate's dual point, which the driver evaluates again through the notion's
        # own constraints (CHECKED_PROGRAMS)
        dual_point = found if program in CHECKED_PROGRAMS else None
        details = {
            "iterations": sol.iterations,
            "columns": int(lp.cost.shape[0]),
            "column_variables": int(lp.cost.shape[1]),
            "privacy_rows_per_column": int(lp.kernel.n_rows),
            "kernel": type(lp.kernel).__name__,
            "relative_gap": sol.gap if math.isfinite(sol.gap) else None,
            "stop": sol.status,
            "bound_from_column_duals": sol.polished,
            "retried_pair_by_pair": retried,
        }
        answer = Answer(
            Status.FAILED,
            self.name,
            iterations=sol.iterations,
            solve_time=sol.seconds,
            build_time=build,
            details=details,
        )
        timed_out = sol.status == "time_limit"
        if timed_out:
            answer.status = Status.TIME_LIMIT
            answer.message = sol.message
        if sol.V is None:
            answer.message = answer.message or sol.message or "no iterate met the rows"
            return answer
        # a run stopped by the time limit still hands over its best iterate that meets the
        # rows, with its bound: the driver verifies it and returns it as the best feasible
        # mechanism found, with the certified gap
        objective, bound = float(sol.objective), float(sol.bound)
        W = _mechanism(request, sol, support)
        if not timed_out:
            answer.status = Status.OPTIMAL
        answer.matrix = W
        answer.objective = objective
        if math.isfinite(bound):
            answer.certificate = Certificate(
                bound,
                "box-bounded Lagrangian bound from the block interior point's duals"
                + (" (privacy-row duals from each column's LP)" if sol.polished else ""),
                {"relative_gap": sol.gap},
                dual_point,
            )
        return answer


register(BlockInteriorPoint())
