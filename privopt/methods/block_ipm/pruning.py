"""Output pruning: the interior point goes on without the outputs the optimum does not use.

An optimal mechanism of metric privacy on a map uses a fraction of the outputs (24 of 64 on
the 8 × 8 map of the benchmarks, 43 of 100 on the 10 × 10 map); the other columns go to
zero, and with them every one of their privacy rows: both sides of those complementarity
pairs vanish together, a degenerate part of the LP on which the interior point spends work
to the end (on the 8 × 8 map, the LP of the 24 outputs alone took 36 iterations and 0.35 s
from a cold start, the whole LP 71 iterations and 1.8 s). So the run is split in three:

1. **Probe.** The interior point on every column until ``objective − bound`` is at most
   :data:`PROBE_GAP` of ``|objective|`` (about a third of the iterations of a whole run).
   Its bound holds for the whole LP.
2. **Restricted run.** The columns whose mass at the probe's iterate is at least
   :data:`KEEP_FRACTION` of the largest are kept (when they are at most
   :data:`WORTH_PRUNING` of the columns); the interior point goes on from the probe's
   iterate restricted to them (an infeasible start: the row sums miss the dropped columns'
   mass, which the Newton steps restore). Its iterates, padded with zero columns, meet every
   row of the whole LP, so their objectives are those of feasible mechanisms.
3. **Pricing.** A bound for the whole LP at the restricted run's coupling duals ``y``: the
   kept columns' privacy-row duals as they are, and for each dropped column the exact
   duals of its own LP ``min {(c_u − Eᵀy)ᵀ v : G v ≤ 0, 0 ≤ v ≤ 1}``
   (:func:`~privopt.methods.block_ipm.polish.column_duals`). The box-bounded Lagrangian bound
   at these duals holds for any of them ([Bertsekas-NLP] §6.1, as for the polish); a dropped
   column that the optimum needs shows as a gap, never as a wrong certificate. When the
   gap is then above the tolerance, the dropped outputs whose own LPs lower the bound by at
   least 1 % of the most any one does are added for one more restricted run (from the
   default start), and only if that one is not certified either is the whole LP solved from
   the start (2⁸ databases with a later probe that dropped one needed output: 23.7 s with
   the second restricted run, 32.2 s going straight to the whole LP).

This is column generation over the outputs in the sense of [Dantzig-Wolfe]'s decomposition
of block-angular LPs (columns priced by their own LP at the coupling duals), with the
interior point choosing the columns once instead of a master problem choosing them round by
round. Measured (one BLAS thread, idle machine): the 8 × 8 exact map 1.77 → 1.30 s, 10 × 10
14.5 → 11.3 s, PD-DP on 3⁵ databases 15.5 → 12.8 s (93 of 243 outputs used); where most
outputs carry mass (a 20 × 20 Manhattan map: 259 of 400) the run goes on over all of them.
Starting a sweep's next point on the outputs the previous point used (restricted runs from
the default start, the outputs the pricing finds needed added) was tried and not kept: six
points of the 8 × 8 map took 12.0 s against 11.5 s, the restricted runs needing as many
iterations as the probe saves and often a second round.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

import numpy as np

from privopt.methods.base import Deadline
from privopt.methods.block_ipm import interior_point
from privopt.methods.block_ipm.interior_point import (
    BlockLP,
    BlockSolution,
    StopReason,
    _bound,
    _cost_unit,
    _Point,
    _Structure,
)
from privopt.methods.block_ipm.kernels import DenseColumns
from privopt.methods.block_ipm.polish import column_duals

__all__ = ["KEEP_FRACTION", "PROBE_GAP", "WORTH_PRUNING", "prunable", "solve_pruned"]

#: The certified gap at which the probe hands over (8 × 8 map: iteration 20 of 71; there the
#: 24 columns of largest mass were the 24 the optimum uses).
PROBE_GAP = 1e-2
#: A column is kept when its mass at the probe is at least this share of the largest (8 × 8
#: map at the probe: the least used column 0.19, the largest unused 0.17).
KEEP_FRACTION = 0.02
#: Pruning goes ahead only when at most this share of the columns is kept. PD-DP on 2⁸
#: databases (Dirichlet prior) keeps 204 of 256 outputs at the probe (131 used at the
#: optimum): pruned, 54 iterations and 16.8 s (27 s of CPU) against 57 iterations and
#: 20.1–21.0 s (32–34 s of CPU) over every output, certified by the pricing (was 0.75; the
#: other measured instances keep at most two thirds of their outputs and are unchanged).
WORTH_PRUNING = 0.85
#: Fewest columns for which a probe is worth its overhead (below, a run takes a few tenths of
#: a second, and one cut short by a time limit keeps the plain run's best iterate).
MIN_COLUMNS = 48


def prunable(lp: BlockLP) -> bool:
    """Whether ``lp``'s columns can be dropped: at least :data:`MIN_COLUMNS` columns, no
    slack on a coupling row, and a zero column meets its privacy rows (rows ``G v ≤ 0``
    with no auxiliary variable coupled to the other columns: the pair kernels).

    Parameters
    ----------
    lp : BlockLP

    Returns
    -------
    bool
    """
    return (
        isinstance(lp.kernel, DenseColumns)
        and lp.cost.shape[0] >= MIN_COLUMNS
        and np.asarray(lp.slack_rows).size == 0
    )


def solve_pruned(
    lp: BlockLP,
    *,
    tol: float = 1e-8,
    deadline: Deadline | None = None,
    on_iteration: Callable[[int, float, float], object] | None = None,
    gap_floor: float = 1.0,
) -> BlockSolution:
    """:func:`~privopt.methods.block_ipm.interior_point.solve_block_lp` with output pruning
    (see the module docstring).

    Parameters
    ----------
    lp : BlockLP
        A block LP for which :func:`prunable` holds.
    tol, deadline, on_iteration, gap_floor
        As for :func:`~privopt.methods.block_ipm.interior_point.solve_block_lp`; the bound
        reported to ``on_iteration`` during the restricted run is the probe's (the only one
        that holds for the whole LP before the pricing).

    Returns
    -------
    BlockSolution
        Over every column of ``lp`` (dropped columns zero), its bound for the whole LP.
    """
    start = time.perf_counter()
    deadline = deadline or Deadline()
    options = {"tol": tol, "deadline": deadline, "gap_floor": gap_floor}
    probe = interior_point.solve_block_lp(
        lp, on_iteration=on_iteration, stop_gap=PROBE_GAP, **options
    )
    if probe.stop is not StopReason.PROBE_GAP:
        return probe  # done (or out of time) before the probe's gap
    # the probe lets go of its iterate, handed on by pop() so that the continued run is its
    # only holder and lets it go at its first step. (A pruned run's peak is still a little
    # above a plain run's: a 30 × 30 spanner 2.43 GB against 2.27 GB, a 20 × 20 spanner
    # 601 MB against 570 MB traced.)
    held = [probe.point]
    probe.point = None
    mass = held[0].V.sum(axis=1)
    kept = _kept(mass)
    if kept.size > WORTH_PRUNING * mass.size:
        # most outputs carry mass: the whole LP goes on from the probe's iterate
        rest = interior_point.solve_block_lp(
            lp, on_iteration=_shifted(on_iteration, probe), start=held.pop(), **options
        )
        return _joined(probe, rest, start, tol)
    whole_lp = _Structure(lp)  # the whole LP's scaled costs, for the pricing
    unit = whole_lp.cost_unit
    held = [_restricted(held.pop(), kept, unit, _cost_unit(lp.cost[kept]))]
    rest = interior_point.solve_block_lp(
        replace(lp, cost=lp.cost[kept]),
        on_iteration=_shifted(on_iteration, probe, restricted=True),
        start=held.pop(),
        **options,
    )
    whole, needed = _priced(lp, whole_lp, rest, kept, deadline)
    answer = _joined(probe, whole, start, tol)
    if _settled(answer, gap_floor, deadline):
        return answer
    if needed.size and kept.size + needed.size <= WORTH_PRUNING * mass.size:
        # dropped outputs were needed after all: once more, cold, with them added
        kept = np.union1d(kept, needed)
        again = interior_point.solve_block_lp(
            replace(lp, cost=lp.cost[kept]),
            on_iteration=_shifted(on_iteration, probe, restricted=True, after=answer),
            **options,
        )
        whole, _ = _priced(lp, whole_lp, again, kept, deadline)
        whole.iterations += answer.iterations - probe.iterations - 1
        retried = _joined(probe, whole, start, tol)
        if _settled(retried, gap_floor, deadline):
            return retried
        answer = retried if retried.gap < answer.gap else answer
    # the pricing still leaves a gap, or the restricted run failed: the whole LP from the start
    again = interior_point.solve_block_lp(
        lp, on_iteration=_shifted(on_iteration, probe, after=answer), **options
    )
    if again.V is None or (answer.V is not None and again.gap > answer.gap):
        return answer
    again.iterations += answer.iterations
    again.seconds = time.perf_counter() - start
    return again


def _kept(mass: np.ndarray) -> np.ndarray:
    """The columns whose mass at the probe is at least :data:`KEEP_FRACTION` of the largest."""
    return np.flatnonzero(mass >= KEEP_FRACTION * mass.max())


def _settled(answer: BlockSolution, gap_floor: float, deadline: Deadline) -> bool:
    """Whether a pruned run's answer stands: certified (or within the driver's gap), or out
    of time."""
    return (
        answer.status in ("optimal", "time_limit")
        or (answer.V is not None and answer.near_certified(gap_floor))
        or deadline.expired()
    )


def _restricted(point: _Point, kept: np.ndarray, unit: float, sub_unit: float) -> _Point:
    """The probe's iterate on the kept columns, its duals rescaled from the whole LP's cost
    unit to the restricted LP's (the costs are scaled to a largest entry of 1 each).

    Each array keeps the memory order of the probe's (:func:`_rows`): the kernel's products
    over the privacy rows come out column-major (``(G Vᵀ)ᵀ``), and a row-major ``s`` or
    ``z`` among them made every elementwise pass of the restricted run stride across memory
    (10 × 10 map, 64 of 100 columns kept: 124 ms of CPU per iteration against 62 ms with
    the orders matched, the same iterates)."""
    scale = unit / sub_unit
    z = _rows(point.z, kept)
    z *= scale
    nu = _rows(point.nu, kept)
    nu *= scale
    return _Point(
        _rows(point.V, kept),
        _rows(point.s, kept),
        z,
        nu,
        point.g.copy(),
        point.nug * scale,
        point.y * scale,
    )


def _rows(array: np.ndarray, kept: np.ndarray) -> np.ndarray:
    """A copy of ``array[kept]`` in the memory order of ``array`` (indexing returns a
    row-major copy whatever the order of the original)."""
    order = "F" if array.flags.f_contiguous and not array.flags.c_contiguous else "C"
    return np.asarray(array[kept], order=order)


def _priced(
    lp: BlockLP, st: _Structure, rest: BlockSolution, kept: np.ndarray, deadline: Deadline
) -> tuple[BlockSolution, np.ndarray]:
    """The restricted run's answer over every column, with the bound of the whole LP at its
    coupling duals (the dropped columns' privacy-row duals from their own LPs; no bound,
    ``−∞``, when there are no duals or a column's LP did not solve in time), and the dropped
    columns whose own LP lowers that bound by at least 1 % of the most any one does (the
    outputs a larger restricted LP needs). ``st`` is the whole LP's structure."""
    U = lp.cost.shape[0]
    none = np.zeros(0, dtype=np.int64)
    whole = replace(rest, point=None, bound=-np.inf, row_duals=None)
    whole.status = "time_limit" if rest.status == "time_limit" else "stalled"
    if rest.V is None:
        return whole, none
    V = np.zeros((U, rest.V.shape[1]))
    V[kept] = rest.V
    whole.V = V
    if rest.row_duals is None or rest.coupling_duals is None:
        return whole, none
    unit = st.cost_unit
    y = rest.coupling_duals / unit
    dropped = np.setdiff1d(np.arange(U), kept)
    Z = np.zeros((U, rest.row_duals.shape[1]))
    Z[kept] = rest.row_duals / unit
    needed = none
    if dropped.size:
        found = column_duals(lp, st.C[dropped] - st.spread(y)[None, :], deadline)
        if found is None:
            return whole, none
        Z[dropped] = found
        # each dropped column's term of the bound, min over the box of its reduced costs
        terms = np.minimum(st.C[dropped] + st.K.apply_t(found) - st.spread(y)[None, :], 0.0)
        terms = terms @ st.upper
        if terms.min() < 0.0:
            needed = dropped[terms <= 0.01 * terms.min()]
    whole.bound = unit * _bound(st, Z, y)
    whole.row_duals = unit * Z
    whole.polished = True
    return whole, needed


def _joined(probe: BlockSolution, rest: BlockSolution, start: float, tol: float):
    """The continued run's answer with the probe's iterations and time, the probe's bound
    when better (it holds for the whole LP), and the status its gap gives."""
    joined = replace(rest, point=None)
    joined.iterations = probe.iterations + 1 + rest.iterations
    joined.seconds = time.perf_counter() - start
    if probe.bound > joined.bound:
        joined.bound, joined.row_duals = probe.bound, probe.row_duals
        joined.coupling_duals = probe.coupling_duals
    if joined.V is None or (probe.V is not None and probe.objective < joined.objective):
        joined.V, joined.objective = probe.V, probe.objective
        joined.primal_residual = probe.primal_residual
    if joined.V is None:
        joined.status = "time_limit" if rest.status == "time_limit" else "failed"
    elif joined.gap <= tol:
        joined.status, joined.stop = "optimal", StopReason.GAP_REACHED
    elif joined.status == "optimal":
        joined.status = "stalled"  # optimal for the restricted LP only
    return joined


def _shifted(
    on_iteration,
    probe: BlockSolution,
    restricted: bool = False,
    after: BlockSolution | None = None,
):
    """``on_iteration`` for a run after the probe: its iterations counted after the probe's
    (or after those of the answer ``after``, for a run after a restricted one), and while it
    is restricted the probe's bound, the one that holds for the whole LP."""
    if on_iteration is None:
        return None
    first = (probe if after is None else after).iterations + 1

    def report(iteration: int, objective: float, bound: float) -> None:
        shown = probe.bound if restricted else max(bound, probe.bound)
        on_iteration(first + iteration, objective, shown)

    return report
