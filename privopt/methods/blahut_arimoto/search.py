"""The slope search: one rate–distortion instance, its evaluated slopes and lower bounds."""

from __future__ import annotations

__all__ = ["RateDistortion", "search", "warm_start_data", "initial_slope"]

import dataclasses
from typing import TYPE_CHECKING

import numpy as np

from privopt.errors import InputError
from privopt.methods.base import Deadline
from privopt.methods.blahut_arimoto.kernel import Kernel, SlopePoint, mutual_information

if TYPE_CHECKING:
    from collections.abc import Callable


class RateDistortion:
    """Rate–distortion data of one instance: prior, distortion, end points, evaluated slopes."""

    def __init__(
        self,
        p: np.ndarray,
        d: np.ndarray,
        target: float,
        max_iter: int,
        q_init: np.ndarray | None = None,
        deadline: Deadline | None = None,
    ) -> None:
        """Compute the end points ``D_min`` and ``D_max``.

        Parameters
        ----------
        p : numpy.ndarray
            Prior pmf, shape ``(k,)``.
        d : numpy.ndarray
            Distortion ``d[x, u]``, shape ``(k, n)``.
        target : float
            Target duality gap of the slope search (nats); each slope is solved to
            ``target / 20``.
        max_iter : int
            Most iterations per slope.
        q_init : numpy.ndarray, optional
            Output pmf to start the first slope from (a warm start).
        deadline : Deadline, optional
            Checked before every slope.
        """
        self.deadline = deadline
        self.p = p
        self.d = d
        self.target_outer = target
        self.target_inner = max(target / 20, 1e-15)
        self.max_iter = max_iter
        self.q_init = q_init
        pos = p > 0
        # D_min = Σ p(x) min_u d(x,u); D_max = min_u Σ_x p(x) d(x,u) (constant output)
        self.dmin = d.min(axis=1)
        self.D_min = float(np.dot(p[pos], self.dmin[pos]))
        col = p[pos] @ d[pos]
        self.u_const = int(np.argmin(col))
        self.D_max = float(col[self.u_const])
        self.points: list[SlopePoint] = []
        self.evaluations = 0  # slopes solved here (not counting reused ones)
        self.iterations = 0
        self.scale = max(self.D_max - self.D_min, 1e-300)

    def expected(self, W: np.ndarray) -> float:
        """``E[d] = Σ p(x) W[x,u] d(x,u)`` (Wang, Ying & Zhang (2016), eq. (32)).

        Parameters
        ----------
        W : numpy.ndarray
            Mechanism, shape ``(k, n)``.

        Returns
        -------
        float
            The expected distortion.
        """
        return float(np.einsum("xu,xu->x", W, self.d) @ self.p)  # no k × k temporaries

    def constant_point(self) -> SlopePoint:
        """The ``s = 0`` end: every input sent to ``argmin_u Σ_x p(x) d(x,u)`` (I = 0).

        Returns
        -------
        SlopePoint
            The constant mechanism, with ``D = D_max`` and ``I = 0``.
        """
        W = np.zeros_like(self.d)
        W[:, self.u_const] = 1.0
        q = np.zeros(self.d.shape[1])
        q[self.u_const] = 1.0
        return SlopePoint(0.0, q, W, self.D_max, 0.0, -np.inf, 0.0, 0)

    def _start(self, s: float) -> tuple[np.ndarray, bool]:
        finite = [pt for pt in self.points if 0 < pt.s < np.inf]
        if finite and np.isfinite(s):
            return min(finite, key=lambda pt: abs(np.log(pt.s) - np.log(s))).q, True
        if self.q_init is not None:
            return self.q_init, True
        return np.full(self.d.shape[1], 1.0 / self.d.shape[1]), False

    def point(self, s: float) -> SlopePoint:
        """Solve at slope ``s`` (warm-started from the nearest slope already solved).

        Parameters
        ----------
        s : float
            Slope ``s > 0`` (``inf``: the ``D = D_min`` problem).

        Returns
        -------
        SlopePoint
            The solution, also appended to :attr:`points`.
        """
        from privopt.methods.blahut_arimoto.newton import slope_derivative, solve_slope

        if self.deadline is not None:
            self.deadline.check()
        kernel = Kernel(self.d, self.dmin, self.p, s)
        # outputs that no input of positive mass can reach (possible at s = ∞) stay at zero
        cols = np.flatnonzero(kernel.K[self.p > 0].max(axis=0) > 0)
        start, warm = self._start(s)
        q0 = np.zeros(self.d.shape[1])
        q0[cols] = start[cols]
        if not q0.sum() > 0:
            q0[cols], warm = 1.0 / cols.size, False
        q, gap, its, method = solve_slope(
            kernel, q0, cols, self.target_inner, self.max_iter, warm, deadline=self.deadline
        )
        self.iterations += its
        self.evaluations += 1
        W = kernel.mechanism(q)
        zt, logz, bad = kernel.z(q)
        c = kernel.c(zt, logz, bad)
        pos = self.p > 0
        deriv = np.nan
        if np.isfinite(s):
            # Blahut's lower bound: R(D') ≥ −Σ p ln Z − ln max c − s D' (true, unscaled Z)
            intercept = float(-np.dot(self.p[pos], logz[pos] + kernel.shift[pos]))
            intercept -= float(np.log(c.max()))
            deriv = slope_derivative(kernel, q)
        else:
            intercept = -np.inf
        pt = SlopePoint(
            s,
            q,
            W,
            self.expected(W),
            mutual_information(self.p, W),
            intercept,
            gap,
            its,
            deriv,
            method,
        )
        self.points.append(pt)
        return pt

    def reusable(self, carried: tuple | None) -> list[SlopePoint]:
        """The slope points of an earlier solve that hold for this instance.

        ``carried`` is what :meth:`carry` returned for a previous solve (a sweep's previous
        point). They are kept only for the same prior and distortion and when they were
        solved at least as accurately as this solve asks; they then serve as bracket ends
        and their intercepts as lower bounds, which hold for every budget.

        Parameters
        ----------
        carried : tuple or None
            ``(p, d, points)`` from :meth:`carry`, or ``None``/empty.

        Returns
        -------
        list of SlopePoint
            The reusable points (empty when the instance differs).
        """
        if not carried:
            return []
        p, d, points = carried
        same = (p is self.p or np.array_equal(p, self.p)) and (
            d is self.d or np.array_equal(d, self.d)
        )
        if not same:
            return []
        return [pt for pt in points if pt.q is not None and pt.gap <= self.target_inner]

    def carry(self, *points: SlopePoint) -> tuple:
        """What a later solve of the same instance may reuse: ``(p, d, points)``, the points
        without their ``k × k`` mechanisms (a result keeps only output laws; a reused point
        that ends a bracket gets its mechanism back from :meth:`mechanism_of`).

        Parameters
        ----------
        *points : SlopePoint
            The points to carry (others, and points without an output law, are dropped).

        Returns
        -------
        tuple
            ``(p, d, points)`` with every point's ``W`` set to ``None``.
        """
        kept = [
            dataclasses.replace(pt, W=None)
            for pt in points
            if isinstance(pt, SlopePoint) and pt.q is not None
        ]
        return (self.p, self.d, kept)

    def mechanism_of(self, pt: SlopePoint) -> np.ndarray:
        """``pt``'s mechanism, rebuilt from its output law when it was carried without it.

        Parameters
        ----------
        pt : SlopePoint
            A point of this instance (its ``W`` is filled in place when missing).

        Returns
        -------
        numpy.ndarray
            The mechanism, shape ``(k, n)``.
        """
        if pt.W is None:
            pt.W = Kernel(self.d, self.dmin, self.p, pt.s).mechanism(pt.q)
        return pt.W

    def infinite_slope(self, reused: list[SlopePoint]) -> SlopePoint:
        """The ``s = ∞`` point, reused when an earlier solve carried it.

        Parameters
        ----------
        reused : list of SlopePoint
            Points carried from an earlier solve.

        Returns
        -------
        SlopePoint
            The ``s = ∞`` point (solved here when none was carried).
        """
        for pt in reused:
            if np.isinf(pt.s):
                return pt
        return self.point(np.inf)

    def lower_bound_rate(self, D: float) -> float:
        """Best ``R(D) ≥ a_s − s D`` over the slopes evaluated so far (and ``R ≥ 0``).

        Parameters
        ----------
        D : float
            Distortion budget.

        Returns
        -------
        float
            Lower bound on ``R(D)`` in nats, ``≥ 0``.
        """
        vals = [pt.intercept - pt.s * D for pt in self.points if 0 < pt.s < np.inf]
        return max([0.0, *vals])

    def lower_bound_distortion(self, eps: float) -> float:
        """Best ``D*(ε) ≥ (a_s − ε)/s`` (from ``a_s − s D ≤ R(D) ≤ ε``) and ``D ≥ D_min``.

        Parameters
        ----------
        eps : float
            Information budget ε (nats).

        Returns
        -------
        float
            Lower bound on the least distortion, ``≥ D_min``.
        """
        vals = [(pt.intercept - eps) / pt.s for pt in self.points if 0 < pt.s < np.inf]
        return max([self.D_min, *vals])


def search(
    rd: RateDistortion,
    hi: SlopePoint,
    f_of: Callable[[SlopePoint], float],
    df_of: Callable[[SlopePoint], float],
    gap_of: Callable[[SlopePoint, SlopePoint], float],
    s0: float,
    max_slopes: int,
) -> tuple[SlopePoint, SlopePoint, float]:
    """Narrow the slope bracket ``[lo, hi]`` until ``gap_of(lo, hi) ≤ rd.target_outer``.

    ``f_of(pt)`` is a function of the slope that is non-increasing in ``t = ln s`` and
    vanishes at the wanted slope (``≥ 0`` at ``lo``, ``< 0`` at ``hi``); ``df_of(pt)`` is its
    derivative in ``t``. Steps: Newton in ``t`` from the latest slope when it lands inside
    the bracket and the previous step at least halved ``|f|``; otherwise Illinois regula
    falsi, or factor-4 expansion while one end is still ``s = 0`` or ``s = ∞``.

    Parameters
    ----------
    rd : RateDistortion
        The instance (its :meth:`~RateDistortion.point` solves each slope).
    hi : SlopePoint
        The upper bracket end (usually ``s = ∞``); the lower end starts at ``s = 0``.
    f_of : callable
        ``f_of(pt) -> float``, as above.
    df_of : callable
        ``df_of(pt) -> float``, the derivative of ``f`` in ``ln s``.
    gap_of : callable
        ``gap_of(lo, hi) -> float``, the duality gap of the bracket (nats or distortion).
    s0 : float
        First slope to try (``> 0``).
    max_slopes : int
        Most slopes solved.

    Returns
    -------
    lo, hi : SlopePoint
        The final bracket ends (``f ≥ 0`` at ``lo``, ``f < 0`` at ``hi``).
    gap : float
        ``gap_of(lo, hi)``.
    """
    lo = rd.constant_point()
    for pt in rd.points:  # points reused from an earlier solve narrow the first bracket
        if 0 < pt.s < np.inf and pt.q is not None:
            f = f_of(pt)
            if f >= 0 and pt.s > lo.s:
                lo = pt
            elif f < 0 and pt.s < hi.s:
                hi = pt
    flo, fhi = f_of(lo), f_of(hi)
    gap = gap_of(lo, hi)
    kept = 0  # Illinois: +1 if lo was replaced last, −1 if hi was
    s_max = 1e12 / rd.scale
    last, f_last, newton_ok = None, np.inf, True
    for _ in range(max_slopes):
        a = np.log(lo.s) if lo.s > 0 else -np.inf
        b = np.log(hi.s) if np.isfinite(hi.s) else np.inf
        if np.isfinite(a) and np.isfinite(b) and b - a <= 4e-16 * max(1.0, abs(a)):
            break
        # the gap is second order in the slope error, the mechanism is not: also ask for a
        # tight bracket (or a straight segment of R(D), where D(s) jumps at one slope)
        if gap <= rd.target_outer and (
            b - a <= 1e-10 or abs(lo.D - hi.D) <= 1e-11 * max(1.0, rd.scale)
        ):
            break
        t = None
        if last is not None and newton_ok and np.isfinite(f_last):
            deriv = df_of(last)
            if np.isfinite(deriv) and deriv < 0:
                here = np.log(last.s)
                # Newton, damped to a factor 30 in s per step; once converged, an 8e-11 step
                # across the root closes the bracket to below the 1e-10 asked above (it was
                # 2e-10, which cost one more slope per solve)
                step = -f_last / deriv
                crossing = abs(step) < 1e-10 and abs(f_last) <= 1e-9
                if crossing:
                    step = 8e-11 if f_last >= 0 else -8e-11
                cand = here + min(max(step, -np.log(30.0)), np.log(30.0))
                if a < cand < b and (crossing or abs(step) >= 1e-10):
                    t = cand
        open_end = (lo.s == 0) != np.isinf(hi.s)
        if t is None and last is not None and newton_ok and open_end and np.isfinite(f_last):
            # one end still open: overshoot Newton (twice its step, at least 1e-10 in ln s)
            # to close the bracket with a warm, cheap solve instead of a factor-4 jump
            deriv = df_of(last)
            if np.isfinite(deriv) and deriv < 0:
                step = min(2 * abs(f_last / deriv), np.log(30.0))
                if step >= 1e-10 or abs(f_last) <= 1e-9:
                    step = max(step, 1e-10)
                    t = np.log(last.s) + (step if np.isinf(hi.s) else -step)
        if t is None and last is None and a < np.log(s0) < b:
            t = np.log(s0)  # the first slope: the caller's estimate, when in the bracket
        if t is None:
            if lo.s == 0 and np.isinf(hi.s):
                t = np.log(s0)
            elif lo.s == 0:
                t = b - np.log(4.0)
            elif np.isinf(hi.s):
                t = a + np.log(4.0)
            elif flo == fhi or not (np.isfinite(flo) and np.isfinite(fhi)):
                t = 0.5 * (a + b)
            else:  # Illinois (regula falsi in ln s), kept in the middle 98 %
                t = b - fhi * (b - a) / (fhi - flo)
                t = min(max(t, a + 0.01 * (b - a)), b - 0.01 * (b - a))
        s = float(np.exp(t))
        if not (1e-300 < s < s_max):
            break
        pt = rd.point(s)
        f = f_of(pt)
        newton_ok = last is None or abs(f) < 0.5 * abs(f_last)
        last, f_last = pt, f
        if f >= 0:
            lo, flo = pt, f
            if kept == 1:
                fhi *= 0.5
            kept = 1
        else:
            hi, fhi = pt, f
            if kept == -1:
                flo *= 0.5
            kept = -1
        gap = gap_of(lo, hi)
    return lo, hi, gap


def warm_start_data(warm_start: object, n_out: int) -> tuple[np.ndarray | None, dict]:
    """Accept a previous output pmf, a :class:`RateDistortionSolution` or its ``info`` dict.

    Returns the output pmf and what is known of the previous final slope (``slope``, and
    ``I``, ``D``, ``dD_ds`` there when the warm start is a previous result).

    Parameters
    ----------
    warm_start : array_like, RateDistortionSolution, dict or None
        The previous output pmf (any non-negative weights, normalised here), a previous
        result, or its ``info`` dict (``output_marginal`` or ``q``).
    n_out : int
        Number of outputs.

    Returns
    -------
    q : numpy.ndarray or None
        The normalised output pmf, shape ``(n_out,)``, or ``None``.
    known : dict
        ``slope`` and, when known, ``I``, ``D``, ``dD_ds`` (floats).

    Raises
    ------
    InputError
        ``warm_start`` is not a non-negative, not all zero vector of length ``n_out``.
    """
    if warm_start is None:
        return None, {}
    known = {}
    if hasattr(warm_start, "info") and isinstance(warm_start.info, dict):
        warm_start = warm_start.info
    if isinstance(warm_start, dict):
        known = {
            key: float(warm_start[name])
            for key, name in (("slope", "slope"), ("I", "slope_I"), ("D", "slope_D"))
            + (("dD_ds", "slope_dD_ds"),)
            if isinstance(warm_start.get(name), (int, float))
        }
        warm_start = warm_start.get("output_marginal", warm_start.get("q"))
        if warm_start is None:
            return None, known
    q = np.asarray(warm_start, dtype=float).ravel()
    if q.size != n_out or not np.isfinite(q).all() or (q < 0).any() or q.sum() <= 0:
        raise InputError(
            f"must be an output pmf of length {n_out} (non-negative, not all zero)",
            "warm_start",
        )
    return q / q.sum(), known


def initial_slope(
    rd: RateDistortion,
    known: dict,
    f_of: Callable[[SlopePoint], float] | None = None,
    df_of: Callable[[SlopePoint], float] | None = None,
) -> float:
    """The first slope to try: a Newton step in ``ln s`` from the previous final point
    (a sweep's last point) when its value and derivative are known, else its slope, else
    ``1 / (D_max − D_min)``.

    Parameters
    ----------
    rd : RateDistortion
        The instance.
    known : dict
        Second value of :func:`warm_start_data`.
    f_of, df_of : callable, optional
        As in :func:`search`; both needed for the Newton step.

    Returns
    -------
    float
        The slope ``s > 0`` (a Newton step is limited to a factor 30).
    """
    s = known.get("slope")
    if s is None or not np.isfinite(s) or s <= 0:
        return 1.0 / rd.scale
    if f_of is not None and {"I", "D", "dD_ds"} <= set(known):
        prev = SlopePoint(s, None, None, known["D"], known["I"], -np.inf, 0.0, 0)
        prev.dD_ds = known["dD_ds"]
        f, df = f_of(prev), df_of(prev)
        if np.isfinite(f) and np.isfinite(df) and df < 0:
            step = min(max(-f / df, -np.log(30.0)), np.log(30.0))
            return float(s * np.exp(step))
    return float(s)
