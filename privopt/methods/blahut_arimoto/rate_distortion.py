"""Blahut–Arimoto for the mutual-information privacy–distortion trade-off.

The problem is rate–distortion for the prior ``p`` and the distortion ``d``:

* ``max_distortion = D`` — PD-MIP (Wang, Ying & Zhang (2016), eqs. (31)–(34);
  Calmon & Fawaz (2012), Thm 1 / Corollary 1):
  ``R(D) = min I(X;U)`` s.t. ``Σ p(x) W[x,u] d(x,u) ≤ D``;
* ``epsilon = ε`` — the dual trade-off ``min E[d]`` s.t. ``I(X;U) ≤ ε``.

Calmon & Fawaz (2012), Remark 2, notes that an alternating (Blahut–Arimoto) scheme solves it;
this module is that scheme, made exact and certified:

1. **Fixed slope** ``s ≥ 0`` (Blahut 1972, Thm 6; Cover & Thomas §10.8). With the kernel
   ``K[x,u] = e^{−s d(x,u)}`` and an output pmf ``q``, the BA step is
   ``Z(x) = Σ_u q(u) K[x,u]``, ``c(u) = Σ_x p(x) K[x,u] / Z(x)``, ``q ← q·c`` and the
   mechanism is ``W[x,u] = q(u) K[x,u] / Z(x)``. It is EM for
   ``min_q Φ(q) = −Σ_x p(x) ln Z(x) + Σ_u q(u)`` over ``q ≥ 0``, whose optimum has
   ``c ≤ 1`` with equality on ``supp q`` (and ``Σ q = 1``). Plain BA converges sublinearly
   when outputs leave the support (tens of thousands of steps at k = 200, measured), so a
   few BA steps are followed by second-order methods on ``Φ`` (gradient ``1 − c``, Hessian
   ``H = Kᵀ diag(p/Z²) K``): an **active-set Newton** method from a warm start (the
   support changes little between nearby slopes), else a **primal-dual interior point**
   method (Mehrotra predictor–corrector) with a crossover to active-set Newton. From 400
   outputs on, **column generation** comes first: the optimum uses few outputs (10–70 of
   5,000 on ``|x − u|``), so ``Φ`` is minimised over a small working set of outputs by the
   interior point and priced by ``c`` on every output; outputs with ``c(u) > 1`` join the
   set until Blahut's gap over all outputs meets the target (k = 5,000: 294 s → 14–16 s,
   benchmarks/README.md).
2. **Numerics** (performance notes: the naive version underflows at k ≈ 100). Each row of
   ``K`` is scaled by ``e^{s·min_u d(x,u)}`` so that its largest entry is 1; the scaling
   cancels in ``K/Z``, ``c`` and ``W``. A row whose ``Z`` still underflows (its nearest
   output carries no mass) is recomputed in the log domain (log-sum-exp).
3. **Certificate** (Blahut 1972, Thm 8; Csiszár 1974 dual of ``R(D)``). For every ``s ≥ 0``
   and every ``q``, with ``λ(x) = 1 / (Z(x) max_u c(u))`` the dual constraint
   ``Σ_x p(x) λ(x) e^{−s d(x,u)} ≤ 1`` holds, so
   ``R(D) ≥ −s D − Σ_x p(x) ln Z(x) − ln max_u c(u)`` for **every** ``D``. The mechanism at
   a slope lies on (or above) the curve, so its ``I`` is an upper bound at its own distortion.
4. **Slope search.** ``D(s)`` decreases from ``D_max = min_u Σ_x p(x) d(x,u)`` (``s → 0``,
   constant output) to ``D_min = Σ_x p(x) min_u d(x,u)`` (``s → ∞``). A bracket
   ``s_lo < s* < s_hi`` is narrowed by Newton steps in ``ln s`` (the derivative ``dD/ds``
   comes from the implicit function theorem on the support), safeguarded by Illinois regula
   falsi. The answer is the time-sharing mixture of the two bracketing mechanisms that meets
   the budget exactly (``E[d]`` is linear and ``I`` convex in ``W``, so the mixture's ``I``
   is at most the chord); this also covers straight segments of ``R(D)``, where ``D(s)``
   jumps. The search stops when the chord minus the best lower bound (the duality gap) is
   below ``tol / 10`` and the bracket is tight (the gap is second order in the slope error,
   the mechanism is not).
"""

from __future__ import annotations

__all__ = ["rate_distortion", "distortion_rate", "RateDistortionSolution"]

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from privopt.errors import InputError
from privopt.methods.base import Deadline, TimeLimitReached
from privopt.methods.blahut_arimoto.kernel import BlasThreads, SlopePoint, mutual_information
from privopt.methods.blahut_arimoto.search import (
    RateDistortion,
    initial_slope,
    search,
    warm_start_data,
)
from privopt.model import JointPrior
from privopt.validation import as_distortion, check_prior

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from privopt.model import Distortion, Prior


@dataclass
class RateDistortionSolution:
    """What :func:`rate_distortion` and :func:`distortion_rate` return.

    Attributes
    ----------
    status : str
        ``"optimal"`` (duality gap within the target), ``"infeasible"`` (budget below
        ``D_min``), ``"failed"`` (gap above the target) or ``"time_limit"``.
    objective : float
        ``I(X;U)`` (nats) for :func:`rate_distortion`, ``E[d]`` for :func:`distortion_rate`.
    mechanism : numpy.ndarray or None
    level, distortion : float or None
        ``I(X;U)`` and ``E[d]`` of the mechanism.
    iterations : int
    certificate : dict
        ``lower_bound`` on the objective and ``duality_gap`` (Blahut 1972, Thm 8).
    info : dict
        Slopes, ``output_marginal`` (for warm starts), timings, ``least_achievable``.
    carried : tuple
        The ``s = ∞`` point and the final bracket's two slopes (output laws, no mechanisms),
        which the next solve of the same instance warm-started from this result reuses once
        (a sweep's next point).
    """

    status: str
    objective: float = float("nan")
    mechanism: np.ndarray | None = None
    level: float | None = None
    distortion: float | None = None
    iterations: int = 0
    certificate: dict = field(default_factory=dict)
    info: dict = field(default_factory=dict)
    carried: tuple = field(default=(), repr=False)


def _prepare(prior, distortion) -> tuple[np.ndarray, np.ndarray]:
    """The prior's pmf and the dense distortion, validated (a single secret only)."""
    prior = check_prior(prior)
    if isinstance(prior, JointPrior):
        raise InputError(
            "Blahut–Arimoto here handles a single secret (Prior or DatabasePrior); for a joint "
            "prior p(s, y) use the cvxpy program",
            "prior",
        )
    d = as_distortion(distortion, prior)
    return np.asarray(prior.probs, dtype=float), np.asarray(d.matrix, dtype=float)


#: Inputs with less prior mass than this (relative to the largest) are left out of the
#: optimisation and sent to their closest output: they change I by at most ``p ln(1/p)``
#: (≈ 3e-14 nats here) but make the kernel ratios overflow at large slopes.
_NEGLIGIBLE = 1e-15


def _negligible_inputs(p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mask of negligible inputs and the renormalised prior without them."""
    negligible = (p > 0) & (p < _NEGLIGIBLE * p.max())
    if not negligible.any():
        return negligible, p
    kept = np.where(negligible, 0.0, p)
    return negligible, kept / kept.sum()


def _restore_negligible(res: RateDistortionSolution, p, d, negligible, by_distortion: bool):
    """Put the negligible inputs back (one-hot at their closest output) and re-measure."""
    if not negligible.any() or res.status == "time_limit":
        return res
    if res.status == "infeasible" and "least_achievable" in res.info:
        pos = p > 0
        res.info = dict(res.info, least_achievable=float(p[pos] @ d[pos].min(axis=1)))
    if res.mechanism is None:
        return res
    W = res.mechanism.copy()
    W[negligible] = 0.0
    rows = np.flatnonzero(negligible)
    W[rows, np.argmin(d[rows], axis=1)] = 1.0
    level = mutual_information(p, W)
    dist = float(np.sum(p[:, None] * W * d))
    res.mechanism = W
    res.level, res.distortion = level, dist
    res.objective = dist if by_distortion else level
    res.certificate = dict(res.certificate)
    res.certificate["duality_gap"] = max(res.objective - res.certificate["lower_bound"], 0.0)
    res.info = dict(res.info, negligible_inputs=int(negligible.sum()), output_marginal=p @ W)
    return res


def _instance(p, d, tol, max_iter, warm_start, deadline):
    """The slope search's instance, with what the warm start lends: its output law and final
    slope (``known``) and, from a result of the same instance, its slope points (``reused``,
    already among the instance's points)."""
    q_warm, known = warm_start_data(warm_start, d.shape[1])
    rd = RateDistortion(p, d, tol / 10, max_iter, q_warm, deadline)
    reused = rd.reusable(_take_carried(warm_start))
    rd.points.extend(reused)
    return rd, known, reused


def _take_carried(warm_start) -> tuple:
    """The slope points a previous result carries, handed over once (they are small: output
    laws and numbers, no ``k × k`` mechanisms)."""
    if not isinstance(warm_start, RateDistortionSolution):
        return ()
    carried, warm_start.carried = warm_start.carried, ()
    return carried


def _guarded(solve, p, d, target, blas_threads, **kwargs) -> RateDistortionSolution:
    """Run ``solve`` with the BLAS thread guard; a passed deadline becomes a status."""
    with BlasThreads(blas_threads):
        try:
            return solve(p, d, target, **kwargs)
        except TimeLimitReached as exc:
            return RateDistortionSolution(status="time_limit", info={"message": str(exc)})


def rate_distortion(
    prior: Prior | ArrayLike,
    distortion: Distortion | ArrayLike,
    max_distortion: float,
    *,
    tol: float = 1e-9,
    warm_start: ArrayLike | dict | RateDistortionSolution | None = None,
    max_iter: int = 5_000,
    max_slopes: int = 200,
    blas_threads: int | None = 1,
    deadline: Deadline | None = None,
) -> RateDistortionSolution:
    """Least mutual information at an expected-distortion budget (PD-MIP, Wang, Ying & Zhang
    (2016), eq. (31)).

    Parameters
    ----------
    prior : Prior or DatabasePrior or array_like
        Single-secret prior ``p(x)`` (a dense pmf).
    distortion : Distortion or array_like
        ``|X| × |U|`` non-negative matrix; the output alphabet may differ from the input one.
    max_distortion : float
        The budget ``D``.
    tol : float
        The target duality gap is ``tol / 10`` nats (default ``1e-10``).
    warm_start : array_like or dict or RateDistortionSolution, optional
        A previous output pmf ``q`` (or a previous result / its ``info``, which also carries
        the slope), for sweeps.
    max_iter : int
        Limit on BA + Newton iterations per slope.
    max_slopes : int
        Limit on slope evaluations.
    blas_threads : int or None
        OpenBLAS threads during the solve (default 1; ``None`` leaves the setting alone).
    deadline : Deadline, optional
        A time limit: when it passes, the status is ``"time_limit"``.

    Returns
    -------
    RateDistortionSolution
        ``objective`` = ``I(X;U)`` in nats (also ``level``); ``distortion`` ≤ ``D``;
        ``certificate`` = ``{"duality_gap", "lower_bound"}`` (Blahut 1972, Thm 8);
        ``status = "infeasible"`` with ``info["least_achievable"] = D_min`` when
        ``D < D_min = Σ_x p(x) min_u d(x,u)``.
    """
    p, d = _prepare(prior, distortion)
    negligible, p_opt = _negligible_inputs(p)
    budget = float(max_distortion)
    if negligible.any():  # they go to their closest output; the others share the rest
        budget = (budget - float(p[negligible] @ d[negligible].min(axis=1))) / (
            1.0 - float(p[negligible].sum())
        )
    res = _guarded(
        _rate_distortion,
        p_opt,
        d,
        budget,
        blas_threads,
        tol=tol,
        warm_start=warm_start,
        max_iter=max_iter,
        max_slopes=max_slopes,
        deadline=deadline,
    )
    return _restore_negligible(res, p, d, negligible, by_distortion=False)


def _rate_distortion(
    prior,
    distortion,
    max_distortion: float,
    *,
    tol: float = 1e-9,
    warm_start=None,
    max_iter: int = 5_000,
    max_slopes: int = 200,
    deadline: Deadline | None = None,
) -> RateDistortionSolution:
    """Implementation of :func:`rate_distortion` (``prior`` and ``distortion`` arrays)."""
    start = time.perf_counter()
    p, d = prior, distortion
    D = float(max_distortion)
    if not np.isfinite(D):
        raise InputError(f"must be a finite number, got {max_distortion}", "max_distortion")
    rd, known, reused = _instance(p, d, tol, max_iter, warm_start, deadline)
    feas_tol = 1e-12 * max(1.0, rd.D_max)
    info = {"D_min": rd.D_min, "D_max": rd.D_max, "method": "blahut_arimoto+newton"}
    if D < rd.D_min - feas_tol:
        info.update(least_achievable=rd.D_min, solve_time_s=time.perf_counter() - start)
        return RateDistortionSolution(status="infeasible", info=info)
    if D >= rd.D_max:  # the constant output already meets D: I = 0
        pt = rd.constant_point()
        cert = {"duality_gap": 0.0, "lower_bound": 0.0}
        return _result(rd, pt.W, 0.0, pt.D, cert, info, start, slope=0.0)
    top = rd.infinite_slope(reused)
    if D <= rd.D_min + feas_tol:  # only outputs at distance d_min(x) are allowed
        cert = {"duality_gap": top.gap, "lower_bound": top.I - top.gap}
        return _end_point(rd, top, cert, info, start)

    def chord(lo, hi):
        alpha = 1.0 if lo.D == hi.D else (D - hi.D) / (lo.D - hi.D)
        return alpha, alpha * lo.I + (1 - alpha) * hi.I

    def f_of(pt):  # ln((D(s) − D_min)/(D − D_min)) is close to linear in ln s
        return np.log(max(pt.D - rd.D_min, 0.0) / (D - rd.D_min)) if pt.D > rd.D_min else -np.inf

    def df_of(pt):
        return pt.s * pt.dD_ds / (pt.D - rd.D_min)

    # the mixture of the bracket's ends meets E[d] = D
    return _searched(
        rd,
        top,
        known,
        max_slopes,
        chord,
        f_of,
        df_of,
        lambda: rd.lower_bound_rate(D),
        info,
        start,
        by_distortion=False,
    )


def distortion_rate(
    prior: Prior | ArrayLike,
    distortion: Distortion | ArrayLike,
    epsilon: float,
    *,
    tol: float = 1e-9,
    warm_start: ArrayLike | dict | RateDistortionSolution | None = None,
    max_iter: int = 5_000,
    max_slopes: int = 200,
    blas_threads: int | None = 1,
    deadline: Deadline | None = None,
) -> RateDistortionSolution:
    """Least expected distortion at a mutual-information budget ``I(X;U) ≤ ε`` (nats).

    The slope ``s`` is searched so that ``I(W_s) = ε``; the lower bound on the optimal
    distortion is ``max_s (a_s − ε)/s``, from Blahut's bound ``R(D) ≥ a_s − s D``.
    Parameters and return value as in :func:`rate_distortion`, with ``objective`` = ``E[d]``
    and the gap in distortion units (target ``tol / 10``).

    Parameters
    ----------
    prior : Prior or DatabasePrior or array_like
        As in :func:`rate_distortion`.
    distortion : Distortion or array_like
        As in :func:`rate_distortion`.
    epsilon : float
        The budget ε ≥ 0 on ``I(X;U)`` (nats; ``inf`` for no constraint).
    tol, warm_start, max_iter, max_slopes, blas_threads, deadline
        As in :func:`rate_distortion`.

    Returns
    -------
    RateDistortionSolution
        ``objective`` = ``E[d]``; ``certificate`` = ``{"duality_gap", "lower_bound"}`` in
        distortion units.
    """
    p, d = _prepare(prior, distortion)
    negligible, p_opt = _negligible_inputs(p)
    budget = float(epsilon)
    if negligible.any() and np.isfinite(budget):
        # I_full ≤ (1−m)(I' − ln(1−m)) + Σ_negl p ln(1/p) when the negligible inputs go to
        # their closest outputs, so this ε' keeps the full mutual information within ε
        m = float(p[negligible].sum())
        own = float(np.sum(p[negligible] * -np.log(p[negligible])))
        budget = max((budget - own) / (1.0 - m) + np.log1p(-m), 0.0)
    res = _guarded(
        _distortion_rate,
        p_opt,
        d,
        budget,
        blas_threads,
        tol=tol,
        warm_start=warm_start,
        max_iter=max_iter,
        max_slopes=max_slopes,
        deadline=deadline,
    )
    return _restore_negligible(res, p, d, negligible, by_distortion=True)


def _distortion_rate(
    prior,
    distortion,
    epsilon: float,
    *,
    tol: float = 1e-9,
    warm_start=None,
    max_iter: int = 5_000,
    max_slopes: int = 200,
    deadline: Deadline | None = None,
) -> RateDistortionSolution:
    """Implementation of :func:`distortion_rate` (``prior`` and ``distortion`` arrays)."""
    start = time.perf_counter()
    p, d = prior, distortion
    eps = float(epsilon)
    if np.isnan(eps) or eps < 0:  # ε = ∞ is allowed: the D_min problem (slope s = ∞)
        raise InputError(f"must be a number ≥ 0, got {epsilon}", "epsilon")
    rd, known, reused = _instance(p, d, tol, max_iter, warm_start, deadline)
    info = {"D_min": rd.D_min, "D_max": rd.D_max, "method": "blahut_arimoto+newton"}
    if eps == 0.0 or rd.D_max <= rd.D_min:  # independence: the best constant output
        pt = rd.constant_point()
        cert = {"duality_gap": 0.0, "lower_bound": rd.D_max if eps == 0.0 else rd.D_min}
        return _result(rd, pt.W, 0.0, pt.D, cert, info, start, slope=0.0, by_distortion=True)
    top = rd.infinite_slope(reused)
    if top.I <= eps:  # D_min is reachable within the budget
        cert = {"duality_gap": 0.0, "lower_bound": rd.D_min}
        return _end_point(rd, top, cert, info, start, by_distortion=True)

    def chord(lo, hi):
        # lo has I ≤ ε, hi has I > ε: mix so that the chord of I meets ε (I is convex in W)
        alpha = 1.0 if lo.I == hi.I else (hi.I - eps) / (hi.I - lo.I)
        return alpha, alpha * lo.D + (1 - alpha) * hi.D

    def f_of(pt):
        return eps - pt.I

    def df_of(pt):  # d(−I)/d ln s = s² dD/ds since R'(D) = −s
        return pt.s**2 * pt.dD_ds

    return _searched(
        rd,
        top,
        known,
        max_slopes,
        chord,
        f_of,
        df_of,
        lambda: rd.lower_bound_distortion(eps),
        info,
        start,
        by_distortion=True,
    )


def _searched(
    rd: RateDistortion,
    top: SlopePoint,
    known: dict,
    max_slopes: int,
    chord,
    f_of,
    df_of,
    lower_bound,
    info: dict,
    start: float,
    *,
    by_distortion: bool,
) -> RateDistortionSolution:
    """Both budgets' common end: narrow the slope bracket (:func:`search`), mix its two
    mechanisms at the chord's weight (``chord(lo, hi) = (α, chord value)``) and certify the
    mixture by the best Blahut bound over the slopes solved (``lower_bound()``: on the rate
    for a distortion budget, on the distortion for a rate budget)."""
    lo, hi, _ = search(
        rd,
        top,
        f_of,
        df_of,
        lambda lo, hi: chord(lo, hi)[1] - lower_bound(),
        initial_slope(rd, known, f_of, df_of),
        max_slopes,
    )
    alpha = min(max(chord(lo, hi)[0], 0.0), 1.0)
    W = alpha * rd.mechanism_of(lo) + (1 - alpha) * rd.mechanism_of(hi)
    level, dist = mutual_information(rd.p, W), rd.expected(W)
    lower = lower_bound()
    gap = (dist if by_distortion else level) - lower
    cert = {"duality_gap": max(gap, 0.0), "lower_bound": lower}
    return _result(
        rd,
        W,
        level,
        dist,
        cert,
        info,
        start,
        slope=hi if alpha < 0.5 else lo,
        bracket=(lo.s, hi.s),
        by_distortion=by_distortion,
        carry=rd.carry(top, lo, hi),
    )


def _end_point(rd, pt, cert, info, start, by_distortion=False) -> RateDistortionSolution:
    """The answer at the ``s = ∞`` end: its mechanism as it is, handed on to the next solve."""
    W = rd.mechanism_of(pt)
    return _result(
        rd,
        W,
        pt.I,
        pt.D,
        cert,
        info,
        start,
        slope=pt.s,
        by_distortion=by_distortion,
        carry=rd.carry(pt),
    )


def _result(
    rd: RateDistortion,
    W,
    level,
    dist,
    cert,
    info,
    start,
    *,
    slope,
    bracket=None,
    by_distortion=False,
    carry: tuple = (),
) -> RateDistortionSolution:
    info = dict(info)
    if isinstance(slope, SlopePoint):  # the final slope's data, for warm starts
        info.update(slope_I=float(slope.I), slope_D=float(slope.D), slope_dD_ds=slope.dD_ds)
        slope = slope.s
    info.update(
        slope=float(slope),
        output_marginal=rd.p @ W,
        slope_evaluations=rd.evaluations,
        solve_time_s=time.perf_counter() - start,
    )
    if bracket is not None:
        info["slope_bracket"] = tuple(float(b) for b in bracket)
    gap = cert["duality_gap"]
    status = "optimal" if gap <= 10 * rd.target_outer else "failed"
    if status == "failed":
        info["message"] = f"duality gap {gap:.3g} above the target {rd.target_outer:.3g}"
    return RateDistortionSolution(
        status=status,
        objective=float(dist if by_distortion else level),
        mechanism=W,
        level=float(level),
        distortion=float(dist),
        iterations=int(rd.iterations),
        certificate=cert,
        info=info,
        carried=carry,
    )
