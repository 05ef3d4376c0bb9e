"""A primal–dual interior point for block-angular LPs, with a rigorous Lagrangian bound.

The LP (one block per output column ``u``, all blocks sharing the privacy rows ``G``)::

    min  Σ_u c_uᵀ v_u
    s.t. G v_u ≤ 0,  v_u ≥ 0                      for every column u
         Σ_u v_u[sel_i] (+ g_i) = b_i             coupling rows (the mechanism's row sums)

with an optional slack ``g_i ≥ 0`` on some coupling rows (an inequality). Mehrotra's
predictor–corrector ([Mehrotra]; [Wright-IPM] ch. 10) is run on it. The Newton system is
reduced to the normal matrices ``H_u`` of the columns
(:mod:`~privopt.methods.block_ipm.kernels`) and a Schur complement on the coupling rows
only, ``Σ_u (H_u⁻¹)[sel, sel]`` — so the work grows with the number of columns times the
cost of one column, not with the whole LP. Each direction is improved by iterative
refinement on the reduced system, which keeps the dual accurate close to the optimum.

**Certificate.** At every iterate privopt computes, from the duals ``y`` (coupling rows)
and ``z ≥ 0`` (privacy rows) alone, the weak-duality bound with every variable boxed
(``0 ≤ v ≤ upper``)::

    Σ_i b_i y_i + Σ_{u,j} upper_j · min(0, (c_u + Gᵀz_u − Eᵀy)_j) + Σ_slacks upper · min(0, −y_i)

which is a valid lower bound on the optimum for *any* ``y`` and ``z ≥ 0`` (inexact duals
weaken it, never falsify it). The run stops when the objective of a primal iterate is within
the asked relative gap of the best bound seen.
"""

from __future__ import annotations

import enum
import math
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import scipy.linalg as sla

from privopt.methods.base import Deadline, TimeLimitReached
from privopt.methods.block_ipm.kernels import ColumnKernel, SingularBlock
from privopt.methods.block_ipm.polish import column_duals
from privopt.validation import OBJECTIVE_RTOL

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable

__all__ = ["BlockLP", "BlockSolution", "StopReason", "solve_block_lp"]

#: Fraction of the step to the boundary (Mehrotra's η).
STEP_FRACTION = 0.99
#: Most centrality correctors per iteration.
CENTRALITY_CORRECTORS = 2
#: Primal regularisation added to the normal matrices (relative); iterative refinement
#: against the unregularised system removes its effect on the directions (measured on PD-DP
#: with an arbitrary prior, n = 7: without it and with two passes the duals lose accuracy
#: at a gap of 2e-6; with it and three passes the run reaches 1e-7).
PRIMAL_REGULARISATION = 1e-10
#: Dual regularisation of the Schur complement (relative to its mean diagonal).
DUAL_REGULARISATION = 1e-12
#: Times a step whose duals fell apart is taken again (each with 100× the regularisation).
MAX_RETRIES = 3
#: A dual residual below this (costs scaled to a largest entry of 1) is round-off, not a
#: step whose duals fell apart: it does not trigger a retry (the bound holds for any duals,
#: so it only weakens the bound a little). Measured on information privacy, k = 1,000: with
#: an absolute floor of 1e-12 the run stopped at a gap of 1.3e-5 on residuals of 3e-8.
DUAL_NOISE = 1e-7
#: The run stops when the certified gap has not halved in this many iterations (measured:
#: maximal leakage k = 300 reached a gap of 1.6e-9 at iteration 19 and ran on to 91).
STALL_ITERATIONS = 8
#: Within this gap (the solve driver's certification tolerance, measured as the driver does:
#: :meth:`BlockSolution.near_certified`) a stall ends the run after
#: :data:`STALL_ITERATIONS`; above it, after three times as many (the slow middle phase of
#: information privacy, k = 300, halves its gap only every ~10 iterations).
GOOD_GAP = OBJECTIVE_RTOL
#: Largest scaling ``z/s`` or ``ν/v`` in the normal matrices (their products must not
#: overflow; such a row is active to round-off anyway).
MAX_SCALING = 1e100
#: A run whose certified gap is within :data:`GOOD_GAP` stops for the polish once its
#: iterate's complementarity (its own duality gap) is below this fraction of the certified
#: gap: further steps only shrink the products (maximal leakage, k = 1,000: the bound stayed
#: at a gap of 1.4e-9 for 12 iterations while the products fell from 1e-15 to 1e-41).
LAGGING_BOUND = 1e-3
#: A run that stalls with a gap at most this is finished by the per-column LP duals
#: (:mod:`~privopt.methods.block_ipm.polish`).
POLISH_FROM = 1e-3
#: Iterative refinement of each direction on the reduced Newton system is driven by its
#: residual (the column equations' residual relative to their right-hand side): once the gap
#: is below 1e-3, passes are taken while the residual is above :data:`REFINED` and at least
#: halves, up to this many. Measured on PML, k = 1,000, ε = 0.5: close to the optimum the
#: low-rank columns' factors leave residuals of 1e-2 to 1e-1 (each pass gains ×3); with three
#: passes the step's duals fell apart, and whether a retry got through depended on round-off
#: (an ulp changed the end from a gap of 5.6e-8 to 1.2e-6, uncertified). Three passes were
#: once always taken; driven by the residual alone, PD-DP on 2⁷ and 3⁴ databases ran the same
#: iterations in 10 % less time.
MOST_REFINEMENT_PASSES = 15
#: The residual at which refinement stops once the gap is below 1e-3.
REFINED = 1e-9
#: The residual above which a direction is refined (once) while the gap is above 1e-3.
#: Measured: the first solve leaves 1e-10 to 1e-9 typically and up to 1e-6 (PML, k = 250,
#: ε = 2, Dirichlet prior); with no refinement at all there, that run's duals fell apart at a
#: gap of 3e-3; always refining once cost 5–20 % of the time on PD-DP 2⁷ and 3⁴ and the
#: single-alphabet notions at k = 200–300, for the same iterations.
EARLY_REFINED = 1e-8


@dataclass
class BlockLP:
    """A block-angular LP (see the module docstring).

    Attributes
    ----------
    kernel : ColumnKernel
        The privacy rows ``G`` shared by the columns.
    cost : numpy.ndarray
        ``U × n``: ``c_u`` per column.
    upper : numpy.ndarray
        ``n``: an upper bound on every variable of a column at any feasible point (for the
        certificate; e.g. 1 for mechanism entries).
    coupled : numpy.ndarray of int
        ``c``: the variable of a column that coupling row ``i`` sums over the columns.
    rhs : numpy.ndarray
        ``c``: the coupling rows' right-hand sides.
    start : numpy.ndarray
        ``n``: a positive starting value of every column's variables.
    slack_rows : numpy.ndarray of int
        Coupling rows that are ``≤`` (a slack ``g_i ≥ 0`` is added).
    slack_upper : numpy.ndarray
        An upper bound of each slack at a feasible point (for the certificate).
    """

    kernel: ColumnKernel
    cost: np.ndarray
    upper: np.ndarray
    coupled: np.ndarray
    rhs: np.ndarray
    start: np.ndarray
    slack_rows: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    slack_upper: np.ndarray = field(default_factory=lambda: np.zeros(0))


class StopReason(str, enum.Enum):
    """Why :func:`solve_block_lp` stopped (a structured value: tests and callers compare it,
    never the wording of :attr:`BlockSolution.message`)."""

    #: The certified gap reached the tolerance.
    GAP_REACHED = "gap_reached"
    #: The certified bound lags far behind the iterate's own complementarity.
    BOUND_LAGS = "bound_lags"
    #: The certified gap stopped halving.
    NO_PROGRESS = "no_progress"
    #: A step's duals fell apart on every regularised retry.
    DUALS_FELL_APART = "duals_fell_apart"
    #: The Newton system could not be factorised, even regularised.
    NOT_FACTORISABLE = "not_factorisable"
    #: The deadline passed, or the next iteration would have ended after it.
    TIME_LIMIT = "time_limit"
    #: The iteration limit was reached.
    ITERATION_LIMIT = "iteration_limit"
    #: The gap reached the ``stop_gap`` asked for (a probe: the run goes on from its point,
    #: :mod:`~privopt.methods.block_ipm.pruning`).
    PROBE_GAP = "probe_gap"


@dataclass
class BlockSolution:
    """What :func:`solve_block_lp` found.

    Attributes
    ----------
    status : str
        ``"optimal"`` (gap within the tolerance), ``"stalled"`` (the best iterate when
        progress stopped; its gap says how good it is), ``"time_limit"`` or ``"failed"``.
    V : numpy.ndarray or None
        ``U × n``: the best primal iterate (the least objective among the iterates that meet
        every row to ``1e-9``); ``None`` if none did.
    objective : float
        Its objective, in the units of ``cost`` (``inf`` without ``V``).
    bound : float
        The best certified lower bound, in the same units.
    iterations : int
        Newton steps taken (retried steps included).
    primal_residual : float
        The largest violation of a privacy or coupling row by ``V`` (``inf`` without ``V``).
    seconds : float
        Wall-clock duration of the run.
    message : str
        Why the run stopped, for a stall on the gap, the time limit or a failure (``""``
        otherwise).
    polished : bool
        Whether the bound comes from the per-column LP duals (a stalled run's finish).
    row_duals : numpy.ndarray or None
        ``U × m``: the privacy rows' duals the best bound was taken at, in the cost's units
        (dual points of certified curves, :mod:`privopt.methods.block_ipm.multipliers`).
    stop : StopReason
        Why the iterations stopped (before the polish).
    coupling_duals : numpy.ndarray or None
        ``c``: the coupling rows' duals the best bound was taken at, in the cost's units.
    point : object
        The last iterate (interior, for a run that goes on from it: :func:`solve_block_lp`'s
        ``start``), kept only by a run stopped at its ``stop_gap``.
    """

    status: str
    V: np.ndarray | None
    objective: float
    bound: float
    iterations: int
    primal_residual: float
    seconds: float
    message: str = ""
    polished: bool = False
    stop: StopReason = StopReason.ITERATION_LIMIT
    row_duals: np.ndarray | None = field(default=None, repr=False)
    coupling_duals: np.ndarray | None = field(default=None, repr=False)
    point: object = field(default=None, repr=False)

    @property
    def gap(self) -> float:
        """Relative gap ``(objective − bound)/(1 + |objective|)`` (``float``; ``nan`` or
        ``inf`` when there is no primal iterate or no finite bound)."""
        return (self.objective - self.bound) / (1.0 + abs(self.objective))

    def near_certified(self, floor: float) -> bool:
        """Whether the gap is within half the solve driver's certification gap:
        ``objective − bound ≤ GOOD_GAP/2 · (|objective| + floor)`` with the driver's floor of
        the objective's scale (:data:`~privopt.validation.DISTORTION_FLOOR` times the largest
        distortion), so that the answer the driver re-measures (rows clipped and
        renormalised) stays certified. (Against :attr:`gap`'s ``1 + |objective|``, a
        10 × 10 map whose objective was 0.32 with a floor of 0.19 stopped at a gap of 5.9e-7
        that the driver measured as 1.5e-6.)

        Parameters
        ----------
        floor : float
            The floor of the objective's scale, ``> 0``.

        Returns
        -------
        bool
        """
        return self.objective - self.bound <= 0.5 * GOOD_GAP * (abs(self.objective) + floor)


def _lagrangian_bound(
    CG: np.ndarray, y: np.ndarray, sel: np.ndarray, b: np.ndarray, upper: np.ndarray
) -> float:
    """The box-bounded Lagrangian bound at the duals ``(y − δ, z)``, with the shift
    ``δ ≥ 0`` of each coupling multiplier chosen optimally.

    ``CG = C + Gᵀz`` (``U × n``, ``z ≥ 0``). The bound is
    ``Σ_i b_i (y_i − δ_i) + Σ_{u,j} upper_j min(0, CG_uj − (Eᵀ(y − δ))_j)``; lowering
    ``y_i`` by ``δ_i`` costs ``b_i δ_i`` and lifts every column's reduced cost of the coupled
    variable by ``δ_i``. For a coupling row on its own variable (the row sums) the best
    ``δ_i`` leaves at most ``b_i / upper`` columns negative; it is computed exactly from the
    sorted reduced costs. Any ``y``, ``δ`` and ``z ≥ 0`` give a valid bound (weak duality
    with ``0 ≤ v ≤ upper``); the shift only removes the loss from inexact duals.
    """
    U, n = CG.shape
    Ey = np.zeros(n)
    np.add.at(Ey, sel, y)
    reduced = CG - Ey[None, :]
    unique = np.bincount(sel, minlength=n)[sel] == 1
    delta = np.zeros(sel.size)
    for i in np.flatnonzero(unique & (b > 0)):
        j = sel[i]
        negative = np.sort(-reduced[:, j][reduced[:, j] < 0])[::-1]  # largest first
        keep = int(np.floor(b[i] / upper[j]))  # columns left negative at the optimum shift
        if negative.size > keep:
            delta[i] = negative[keep]
    shifted = y - delta
    np.subtract.at(Ey, sel, delta)
    reduced = CG - Ey[None, :]
    return float(b @ shifted + np.sum(np.minimum(reduced, 0.0) * upper[None, :]))


@dataclass
class _Point:
    """A primal–dual iterate: columns ``V`` with privacy slacks ``s``, their duals ``z``
    and bound duals ``nu``; coupling slacks ``g`` with duals ``nug``; coupling duals ``y``."""

    V: np.ndarray
    s: np.ndarray
    z: np.ndarray
    nu: np.ndarray
    g: np.ndarray
    nug: np.ndarray
    y: np.ndarray

    def products(self) -> float:
        """The sum of the complementarity products."""
        return (
            float(np.sum(self.s * self.z))
            + float(np.sum(self.V * self.nu))
            + float(np.sum(self.g * self.nug))
        )


@dataclass
class _Step(_Point):
    """A search direction, with :class:`_Point`'s fields."""

    def __add__(self, other: _Step) -> _Step:
        return _Step(*(a + b for a, b in zip(self.fields(), other.fields(), strict=True)))

    def add(self, other: _Step) -> None:
        """Add ``other`` to this step in place (its arrays must be its own)."""
        for mine, theirs in zip(self.fields(), other.fields(), strict=True):
            mine += theirs

    def fields(self) -> tuple:
        return (self.V, self.s, self.z, self.nu, self.g, self.nug, self.y)

    def lengths(self, point: _Point) -> tuple[float, float]:
        """The longest primal and dual steps (≤ 1) that keep ``point`` non-negative."""
        primal = min(
            _max_step(point.s, self.s), _max_step(point.V, self.V), _max_step(point.g, self.g)
        )
        dual = min(
            _max_step(point.z, self.z), _max_step(point.nu, self.nu), _max_step(point.nug, self.nug)
        )
        return primal, dual

    def products_after(self, point: _Point, primal: float, dual: float) -> list[np.ndarray]:
        """The complementarity products after a step of the given lengths."""
        return [
            (point.s + primal * self.s) * (point.z + dual * self.z),
            (point.V + primal * self.V) * (point.nu + dual * self.nu),
            (point.g + primal * self.g) * (point.nug + dual * self.nug),
        ]


def _max_step(x: np.ndarray, dx: np.ndarray) -> float:
    """The largest ``α ≤ 1`` with ``x + α dx ≥ 0``, for ``x ≥ 0``: ``1 / max(−dx/x)``.

    One division and one reduction over the arrays (masking the negative entries first
    took 7 % of a run on 2⁸ databases); ``fmin`` skips the ``0/0`` of an entry at zero that
    does not move, and an entry at zero that decreases gives ``−∞``, a step of 0.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        worst = -float(np.fmin.reduce(np.divide(dx, x), axis=None, initial=0.0))
    return 1.0 if worst <= 1.0 else 1.0 / worst


def _cost_unit(cost: np.ndarray) -> float:
    """The unit the costs are scaled by: their largest magnitude (1 for zero costs)."""
    return float(np.max(np.abs(cost), initial=0.0)) or 1.0


class _Structure:
    """The LP's fixed data and the maps between columns and coupling rows."""

    def __init__(self, lp: BlockLP):
        self.K = lp.kernel
        cost = np.asarray(lp.cost, dtype=float)
        # the costs are scaled to a largest entry of 1 (objective and bound are reported
        # unscaled): with costs p(x)·d(x,u) ~ 1e-3, PML and information privacy at k = 1,000
        # stalled at gaps of 1e-6 to 6e-7; scaled, they reach 7e-8 and 4e-8
        self.cost_unit = _cost_unit(cost)
        self.C = cost / self.cost_unit
        self.U, self.n = self.C.shape
        self.sel = np.asarray(lp.coupled, dtype=np.int64)
        self.b = np.asarray(lp.rhs, dtype=float)
        self.srows = np.asarray(lp.slack_rows, dtype=np.int64)
        self.supper = np.asarray(lp.slack_upper, dtype=float)
        self.upper = np.asarray(lp.upper, dtype=float)
        self.n_c, self.n_g = self.sel.size, self.srows.size

    def couple(self, V: np.ndarray, g: np.ndarray) -> np.ndarray:
        """``Σ_u V[u, sel] (+ g on the slack rows)``."""
        total = V[:, self.sel].sum(axis=0)
        total[self.srows] += g
        return total

    def spread(self, y: np.ndarray) -> np.ndarray:
        """``Eᵀy`` for one column."""
        out = np.zeros(self.n)
        np.add.at(out, self.sel, y)
        return out


class _Newton:
    """The Newton system at one iterate, factorised once and solved for several
    right-hand sides (predictor, corrector, centrality correctors)."""

    def __init__(
        self,
        st: _Structure,
        pt: _Point,
        residuals: tuple,
        accurate: bool,
        regularisation: float,
        deadline: Deadline | None = None,
    ):
        self.st, self.pt, self.accurate = st, pt, accurate
        self.deadline = deadline or Deadline()
        self.rd, self.rdg, self.rp1, self.rp2 = residuals
        # per-iterate arrays over the privacy rows, used by every direction (each pass over
        # them is a memory-bound U × m sweep): z/s and its capped copy. (z·r_p1 is formed
        # by each direction instead of being kept: one U × m array less at the peak.)
        self.deadline.check()
        self.z_over_s = pt.z / pt.s
        self.D = np.minimum(self.z_over_s, MAX_SCALING)
        self.Dv = np.minimum(pt.nu / pt.V, MAX_SCALING)
        self.hg = pt.nug / pt.g if st.n_g else np.zeros(0)
        self.factor = st.K.factor(
            self.D, self.Dv + regularisation * (1.0 + self.Dv), stop=self.deadline.expired
        )
        schur = self.factor.coupled_block(st.sel)
        if st.n_g:
            schur[st.srows, st.srows] += 1.0 / self.hg
        mean_diagonal = max(float(np.trace(schur)) / st.n_c, 1e-300)
        shift = DUAL_REGULARISATION
        for _ in range(4):  # a larger shift when round-off left the complement indefinite
            try:
                self.schur = sla.cho_factor(
                    schur + shift * mean_diagonal * np.eye(st.n_c), check_finite=False
                )
                break
            except np.linalg.LinAlgError:
                shift *= 1e3
        else:
            raise SingularBlock("the Schur complement on the coupling rows is singular")

    def _reduced_solve(self, gv, gq, h):
        st = self.st
        hv = self.factor.solve(gv)
        rhs = h - hv[:, st.sel].sum(axis=0)
        if st.n_g:
            rhs[st.srows] -= gq / self.hg
        dy = sla.cho_solve(self.schur, rhs)
        dV = hv + self.factor.solve(st.spread(dy))
        dg = (gq + dy[st.srows]) / self.hg if st.n_g else np.zeros(0)
        return dV, dy, dg

    def direction(self, r_sz, r_vn, r_gn, homogeneous: bool = False) -> _Step:
        """The step with complementarity right-hand sides ``−r`` (``homogeneous``: zero
        primal and dual residuals, for a centrality corrector)."""
        st, pt = self.st, self.pt
        K = st.K
        self.deadline.check()  # a few passes over the U × m arrays each: seconds at large sizes
        if homogeneous:
            rd, rdg, rp1, rp2 = 0.0, 0.0, 0.0, np.zeros(st.n_c)
        else:
            rd, rdg, rp1, rp2 = self.rd, self.rdg, self.rp1, self.rp2
        # the privacy rows' dual step is dz = w + (z/s)·G dV with w = (z·r_p1 − r_sz)/s;
        # the U × m arrays are formed in place, each operation as before (the same values)
        if homogeneous:
            w = np.negative(r_sz)
        else:
            w = pt.z * self.rp1
            w -= r_sz
        w /= pt.s
        self.deadline.check()  # between the passes over the U × m arrays: 0.3-1.5 s each at
        gvec = -rd - K.apply_t(w) - r_vn / pt.V  # 20 × 20 (a direction took 6 s under load)
        gg = -rdg - (r_gn / pt.g if st.n_g else 0.0)
        dV, dy, dg = self._reduced_solve(gvec, gg, -rp2)
        most = MOST_REFINEMENT_PASSES if self.accurate else 1
        enough = REFINED if self.accurate else EARLY_REFINED
        scale = max(float(np.max(np.abs(gvec), initial=0.0)), 1e-300)
        residual = math.inf
        GdV = None
        for _ in range(most):
            self.deadline.check()
            GdV = K.apply(dV)  # kept for dz and ds when dV is not refined further
            HdV = K.apply_t(self.D * GdV) + self.Dv * dV
            r1 = gvec + st.spread(dy)[None, :] - HdV
            previous, residual = residual, float(np.max(np.abs(r1))) / scale
            if residual <= enough or residual > 0.5 * previous:
                break
            r1g = gg + dy[st.srows] - self.hg * dg if st.n_g else np.zeros(0)
            r2 = -rp2 - st.couple(dV, dg)
            cV, cy, cg = self._reduced_solve(r1, r1g, r2)
            dV, dy, dg = dV + cV, dy + cy, dg + cg
            GdV = None
        self.deadline.check()
        if GdV is None:  # the last pass refined dV (or there was none)
            GdV = K.apply(dV)
        dz = self.z_over_s * GdV
        dz += w
        del w
        ds = np.negative(GdV) if homogeneous else np.negative(rp1)
        if not homogeneous:
            ds -= GdV
        del GdV
        dnu = (-r_vn - pt.nu * dV) / pt.V
        dnug = (-r_gn - pt.nug * dg) / pt.g if st.n_g else np.zeros(0)
        return _Step(dV, ds, dz, dnu, dg, dnug, dy)


def _start(st: _Structure, lp: BlockLP) -> _Point:
    V = np.broadcast_to(np.asarray(lp.start, dtype=float), (st.U, st.n)).copy()
    GV = st.K.apply(V)
    floor = max(float(np.mean(np.abs(GV))), 1.0 / st.U) * 1e-2
    s = np.maximum(-GV, floor)
    if st.n_g:
        g = np.maximum(st.b[st.srows] - V[:, st.sel[st.srows]].sum(axis=0), floor)
    else:
        g = np.zeros(0)
    mu0 = max(float(np.mean(np.abs(st.C))), 1e-12)
    return _Point(V, s, mu0 / s, mu0 / V, g, mu0 / g if st.n_g else g, np.zeros(st.n_c))


def _mehrotra_step(newton: _Newton, pt: _Point, n_compl: int) -> tuple[_Step, float, float]:
    """Predictor, corrector and Gondzio's centrality correctors ([Gondzio]): the last
    push the products of a longer trial step into ``[0.1 σμ, 10 σμ]``, each with one more
    solve of the same factorisation."""
    products = (pt.s * pt.z, pt.V * pt.nu, pt.g * pt.nug)
    mu = sum(float(np.sum(v)) for v in products) / n_compl
    affine = newton.direction(*products)
    ap, ad = affine.lengths(pt)
    newton.deadline.check()
    mu_aff = float(sum(np.sum(v) for v in affine.products_after(pt, ap, ad))) / n_compl
    newton.deadline.check()
    sigma = min(1.0, (mu_aff / mu) ** 3) if mu > 0 else 0.0
    target = sigma * mu
    # the corrector's right-hand sides; over the privacy rows (U × m) formed in place, and
    # the predictor's arrays let go before the correctors (three U × m arrays)
    rows = affine.s * affine.z
    rows += products[0]
    rows -= target
    others = (
        products[1] + affine.V * affine.nu - target,
        products[2] + affine.g * affine.nug - target,
    )
    del products, affine
    step = newton.direction(rows, *others)
    del rows, others
    ap, ad = step.lengths(pt)
    for _ in range(CENTRALITY_CORRECTORS):
        if min(ap, ad) >= 1.0:
            break
        trial_p, trial_d = min(1.0, 1.5 * ap + 0.1), min(1.0, 1.5 * ad + 0.1)
        corr = [_correction(v, target) for v in step.products_after(pt, trial_p, trial_d)]
        trial = newton.direction(*corr, homogeneous=True)
        del corr
        trial.add(step)  # step + the corrector's direction, in the corrector's arrays
        tp, td = trial.lengths(pt)
        if tp + td < ap + ad + 0.02:
            break
        step, ap, ad = trial, tp, td
    return step, STEP_FRACTION * ap, STEP_FRACTION * ad


def _correction(products: np.ndarray, target: float) -> np.ndarray:
    """``−max(clip(v, 0.1 t, 10 t) − v, −10 t)`` for the products ``v`` of a trial step,
    formed in place (the right-hand side of a centrality corrector)."""
    out = np.clip(products, 0.1 * target, 10.0 * target)
    out -= products
    np.maximum(out, -10.0 * target, out=out)
    return np.negative(out, out=out)


def _bound(st: _Structure, Z: np.ndarray, y: np.ndarray) -> float:
    """The box-bounded Lagrangian bound at duals ``y`` and ``Z ≥ 0`` (module docstring)."""
    return _bound_at(st, st.C + st.K.apply_t(Z), y)


def _bound_at(st: _Structure, CG: np.ndarray, y: np.ndarray) -> float:
    """:func:`_bound` from ``CG = C + GᵀZ`` for some ``Z ≥ 0`` (the iterate's, when its
    duals are all non-negative: the product is then the one its dual residual needs)."""
    bound = _lagrangian_bound(CG, y, st.sel, st.b, st.upper)
    if st.n_g:
        bound += float(np.sum(np.minimum(-y[st.srows], 0.0) * st.supper))
    return bound


def _polish_bound(
    lp: BlockLP, st: _Structure, best: BlockSolution, y: np.ndarray, deadline, tol: float
) -> None:
    """Replace the privacy-row duals by each column's exact LP duals at the coupling duals
    ``y`` (:mod:`~privopt.methods.block_ipm.polish`) and keep the bound if it is better."""
    Z = column_duals(lp, st.C - st.spread(y)[None, :], deadline)
    if Z is None:
        return
    polished = st.cost_unit * _bound(st, Z, y)
    if polished > best.bound:
        best.row_duals = st.cost_unit * np.maximum(Z, 0.0)
    best.bound = max(best.bound, polished)
    best.polished = True
    if best.gap <= tol:
        best.status = "optimal"


def _newton_step(
    st: _Structure,
    pt: _Point,
    residuals: tuple,
    accurate: bool,
    retrying: tuple[int, float],
    n_compl: int,
    deadline: Deadline,
) -> tuple | None:
    """One iteration's step: the Newton system factorised (again with a stronger
    regularisation while it cannot be, up to :data:`MAX_RETRIES` retries in all) and the
    Mehrotra step. ``None`` when it cannot be factorised; otherwise ``(step, primal length,
    dual length, retries, regularisation)``. Raises :class:`TimeLimitReached` from the
    factorisation or a direction when the deadline passes."""
    retries, regularisation = retrying
    newton = None
    while newton is None and retries <= MAX_RETRIES:
        # a system that cannot be factorised (round-off left a column's matrix or the
        # Schur complement indefinite) is factorised again with a stronger
        # regularisation, like a step whose duals fell apart (information privacy,
        # k = 200, Dirichlet prior: the Schur complement failed at a gap of 7e-6; one
        # retry, and the run ended at 2e-8)
        try:
            newton = _Newton(st, pt, residuals, accurate, regularisation, deadline)
        except (SingularBlock, np.linalg.LinAlgError):
            retries += 1
            regularisation *= 1e2
    if newton is None:
        return None
    step, ap, ad = _mehrotra_step(newton, pt, n_compl)
    return step, ap, ad, retries, regularisation


def solve_block_lp(
    lp: BlockLP,
    *,
    tol: float = 1e-8,
    max_iterations: int = 150,
    deadline: Deadline | None = None,
    on_iteration: Callable[[int, float, float], object] | None = None,
    gap_floor: float = 1.0,
    start: _Point | None = None,
    stop_gap: float = 0.0,
) -> BlockSolution:
    """Solve a :class:`BlockLP` by the structured interior point.

    Parameters
    ----------
    lp : BlockLP
        The LP.
    tol : float
        Relative gap between the objective and the certified bound at which to stop
        (:attr:`BlockSolution.gap`).
    max_iterations : int
        Most Newton steps, ``≥ 0``.
    deadline : Deadline, optional
        Stops with ``"time_limit"`` when it passes, or before an iteration that would end
        after it (estimated by the previous iteration's duration); the best iterate that
        meets the rows so far is kept in :attr:`BlockSolution.V`.
    on_iteration : callable, optional
        ``on_iteration(iteration, objective, bound)`` after each iteration: the iteration's
        index, the objective of its iterate and the best bound so far (unscaled); its return
        value is ignored.
    gap_floor : float
        The floor of the objective's scale in the solve driver's certification test
        (:meth:`BlockSolution.near_certified`): a stall ends the run early only within the
        gap the driver accepts.
    start : _Point, optional
        The iterate to start from (a probe's :attr:`BlockSolution.point`, restricted to the
        columns kept, :mod:`~privopt.methods.block_ipm.pruning`); the default start
        otherwise.
    stop_gap : float
        Stop (:attr:`StopReason.PROBE_GAP`, status ``"stalled"``, the last iterate kept in
        :attr:`BlockSolution.point`) once ``objective − bound`` is at most this share of
        ``|objective|`` (whatever the unit of the costs).

    Returns
    -------
    BlockSolution
        The best primal iterate and the best bound; ``status`` says how the run ended.
    """
    start_time = time.perf_counter()
    deadline = deadline or Deadline()
    st = _Structure(lp)
    K, C = st.K, st.C
    pt = _start(st, lp) if start is None else start
    start = None  # the first step replaces the iterate: let the given one go with it
    n_compl = st.U * (K.n_rows + st.n) + st.n_g
    best = BlockSolution("failed", None, math.inf, -math.inf, 0, math.inf, 0.0)
    least_dual_residual = math.inf
    iteration = 0
    previous = None
    retries = 0
    regularisation = PRIMAL_REGULARISATION
    progress_gap, progress_iteration = math.inf, 0
    best_y, best_z = pt.y, None
    iteration_start = start_time
    for iteration in range(max_iterations + 1):
        # the arrays over the privacy rows (U × m, 313 MB each on a 20 × 20 map) set the
        # run's memory: G v + s is formed in place of G v, and the step of the previous
        # iteration is let go before the next one is computed (22 such arrays at the peak
        # of an iteration before, measured with tracemalloc on a 10 × 10 map)
        rp1 = K.apply(pt.V)
        violation = float(np.max(rp1, initial=0.0))
        rp1 += pt.s
        # C + Gᵀz serves the dual residual and, when z ≥ 0 (always, inside the orthant),
        # the bound: one product over the privacy rows and no copy of z per iteration
        CG = C + K.apply_t(pt.z)
        rd = CG - st.spread(pt.y)[None, :] - pt.nu
        rdg = -pt.y[st.srows] - pt.nug
        rp2 = st.couple(pt.V, pt.g) - st.b
        objective = st.cost_unit * float(np.sum(C * pt.V))
        if float(np.min(pt.z, initial=0.0)) >= 0.0:
            bound = st.cost_unit * _bound_at(st, CG, pt.y)
        else:
            bound = st.cost_unit * _bound(st, np.maximum(pt.z, 0.0), pt.y)
        del CG
        if bound > best.bound:
            # the duals of the best bound; scaled and clipped once, after the iterations
            best_y, best_z = pt.y, pt.z
        best.bound = max(best.bound, bound)
        residual = max(violation, float(np.max(np.abs(rp2), initial=0.0)))
        if residual <= 1e-9 and objective < best.objective:
            best.V, best.objective, best.primal_residual = pt.V.copy(), objective, residual
            best.status = "stalled"
        if on_iteration is not None:
            on_iteration(iteration, objective, best.bound)
        if best.V is not None and best.gap <= tol:
            best.status = "optimal"
            best.stop = StopReason.GAP_REACHED
            break
        if best.V is not None and best.objective - best.bound <= stop_gap * abs(best.objective):
            best.stop, best.point = StopReason.PROBE_GAP, pt
            break
        if (
            best.V is not None
            and best.near_certified(gap_floor)
            and pt.products() < LAGGING_BOUND * (best.objective - best.bound) / st.cost_unit
        ):
            # the iterate's own duality gap is far below the certified one: the bound lags
            # behind the iterate (inexact duals), and only the polish can close it
            best.message = "the certified bound lags behind the iterate's complementarity"
            best.stop = StopReason.BOUND_LAGS
            break
        if best.V is not None and best.gap < 0.5 * progress_gap:
            progress_gap, progress_iteration = best.gap, iteration
        elif best.V is not None and iteration - progress_iteration >= (
            STALL_ITERATIONS if best.near_certified(gap_floor) else 3 * STALL_ITERATIONS
        ):
            best.message = f"no progress of the gap in {iteration - progress_iteration} iterations"
            best.stop = StopReason.NO_PROGRESS
            break
        dual_residual = float(np.max(np.abs(rd)))
        if dual_residual > max(1e3 * least_dual_residual, DUAL_NOISE) and previous is not None:
            # the last step's duals fell apart (round-off in a nearly singular system):
            # go back and take it again with a stronger regularisation
            retries += 1
            if retries > MAX_RETRIES:
                best.message = f"the step's duals fell apart after {MAX_RETRIES} retries"
                best.stop = StopReason.DUALS_FELL_APART
                break
            regularisation *= 1e2
            pt, rd, rdg, rp1, rp2 = previous
            dual_residual = least_dual_residual
        least_dual_residual = min(least_dual_residual, dual_residual)
        if iteration >= max_iterations:
            break
        if deadline.expired() or (
            deadline.limited and deadline.remaining() < time.perf_counter() - iteration_start
        ):
            # an iteration that would end after the deadline is not started: the caller gets
            # the best iterate in time (one that overran would be waited for by nobody)
            best.status = "time_limit"
            best.message = f"time limit of {deadline.seconds:g} s reached"
            best.stop = StopReason.TIME_LIMIT
            break
        iteration_start = time.perf_counter()
        previous = (pt, rd, rdg, rp1, rp2)  # (and the last iterate's arrays are let go)
        try:
            step = _newton_step(
                st,
                pt,
                (rd, rdg, rp1, rp2),
                best.gap < 1e-3,
                (retries, regularisation),
                n_compl,
                deadline,
            )
        except TimeLimitReached:
            # the deadline passed inside the factorisation or a direction (each checks it:
            # one iteration on a 20 × 20 map took 10-40 s): the best iterate so far stands
            best.status = "time_limit"
            best.message = f"time limit of {deadline.seconds:g} s reached"
            best.stop = StopReason.TIME_LIMIT
            break
        if step is None:
            best.message = "the Newton system could not be factorised"
            best.stop = StopReason.NOT_FACTORISABLE
            break
        step, ap, ad, retries, regularisation = step
        pt = _Point(
            pt.V + ap * step.V,
            pt.s + ap * step.s,
            pt.z + ad * step.z,
            pt.nu + ad * step.nu,
            pt.g + ap * step.g,
            pt.nug + ad * step.nug,
            pt.y + ad * step.y,
        )
        step = None  # not needed to evaluate the new iterate (nor while the next is formed)
    if best_z is not None:
        best.row_duals = st.cost_unit * np.maximum(best_z, 0.0)
    del best_z
    probing = best.stop is StopReason.PROBE_GAP
    if best.V is not None and best.status == "stalled" and best.gap <= POLISH_FROM and not probing:
        _polish_bound(lp, st, best, best_y, deadline, tol)
    best.seconds = time.perf_counter() - start_time
    best.iterations = iteration
    best.coupling_duals = st.cost_unit * best_y
    if best.V is None and best.status != "time_limit":
        best.status = "failed"
        best.message = "no primal iterate met the rows to 1e-9"
    return best
