"""Blahut–Arimoto for the mutual-information privacy–distortion trade-off.

The problem is rate–distortion for the prior ``p`` and the distortion ``d``:

* ``max_distortion = D`` — PD-MIP ([004] eqs. (31)–(34); [002] Thm 1 / Corollary 1):
  ``R(D) = min I(X;U)`` s.t. ``Σ p(x) W[x,u] d(x,u) ≤ D``;
* ``epsilon = ε`` — the dual trade-off ``min E[d]`` s.t. ``I(X;U) ≤ ε``.

[002] Remark 2 notes that an alternating (Blahut–Arimoto) scheme solves it; this module is
that scheme, made exact and certified:

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
   method (Mehrotra predictor–corrector) with a crossover to active-set Newton.
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

import time
from dataclasses import dataclass

import numpy as np
from scipy import linalg

from privopt.algorithms._inputs import distortion_matrix, prior_probs
from privopt.algorithms.base import Algorithm, AlgorithmResult, always, register
from privopt.errors import InputError
from privopt.model import DatabasePrior, Distortion, JointPrior, Prior

__all__ = ["rate_distortion", "distortion_rate", "solve", "applies", "BlahutArimotoPoint"]

#: Z values below this are recomputed in the log domain.
_TINY = 1e-280
#: Largest |X|·|U| handled automatically (dense kernel and mechanism, ~8 bytes each, ×4).
_MAX_ENTRIES = 2**25
_NOTIONS = ("mutual_information", "average_leakage")


_BLAS_THREAD_FUNCS: list | None = None


def _blas_thread_funcs() -> list:
    """``(get, set)`` pairs for the OpenBLAS builds bundled with numpy and scipy wheels.

    Found by file name next to the packages (``numpy.libs``, ``scipy.libs``); empty on other
    builds (MKL, system BLAS), in which case thread control is silently skipped.
    """
    global _BLAS_THREAD_FUNCS
    if _BLAS_THREAD_FUNCS is not None:
        return _BLAS_THREAD_FUNCS
    import ctypes
    import glob
    import os

    import scipy

    funcs = []
    names = (
        "scipy_openblas_{}_num_threads64_",
        "scipy_openblas_{}_num_threads",
        "openblas_{}_num_threads64_",
        "openblas_{}_num_threads",
    )
    for package in (np, scipy):
        libdir = os.path.join(
            os.path.dirname(os.path.dirname(package.__file__)), f"{package.__name__}.libs"
        )
        for path in glob.glob(os.path.join(libdir, "*openblas*")):
            try:
                lib = ctypes.CDLL(path)
            except OSError:
                continue
            for name in names:
                get = getattr(lib, name.format("get"), None)
                put = getattr(lib, name.format("set"), None)
                if get is not None and put is not None:
                    get.restype = ctypes.c_int
                    funcs.append((get, put))
                    break
    _BLAS_THREAD_FUNCS = funcs
    return funcs


class _BlasThreads:
    """Context manager limiting the bundled OpenBLAS to ``n`` threads (``None``: no change).

    Blahut–Arimoto is dominated by matrix–vector products and moderate Cholesky/GEMM, for
    which BLAS threads barely help and, on a loaded machine, cost up to 10× (measured).
    """

    def __init__(self, n: int | None):
        self.n = n
        self.saved: list[tuple] = []

    def __enter__(self):
        if self.n is not None:
            for get, put in _blas_thread_funcs():
                self.saved.append((put, int(get())))
                put(int(self.n))
        return self

    def __exit__(self, *exc):
        for put, value in self.saved:
            put(value)
        self.saved.clear()
        return False


def _lse_rows(a: np.ndarray) -> np.ndarray:
    """Row-wise ``ln Σ exp`` (−inf for an all −inf row); faster than scipy's for 2-D arrays."""
    m = a.max(axis=1)
    finite = np.isfinite(m)
    out = np.full(a.shape[0], -np.inf)
    if finite.any():
        mf = m[finite]
        out[finite] = mf + np.log(np.exp(a[finite] - mf[:, None]).sum(axis=1))
    return out


def _mutual_information(p: np.ndarray, W: np.ndarray) -> float:
    """``I(X;U) = Σ p(x) W[x,u] ln(W[x,u]/q(u))`` with ``0 ln 0 = 0`` ([004] Def. 4, nats)."""
    q = p @ W
    rows = p > 0
    Wr = W[rows]
    pos = (Wr > 0) & (q[None, :] > 0)
    ratio = np.zeros_like(Wr)
    ratio[pos] = np.log(Wr[pos] / np.broadcast_to(q, Wr.shape)[pos])
    return float(max(np.sum(p[rows][:, None] * Wr * ratio), 0.0))


class _Kernel:
    """``K[x,u] = e^{−s (d(x,u) − d_min(x))}`` (rows scaled to max 1) for one slope ``s``.

    ``s = inf`` gives the indicator of ``d(x,u) = d_min(x)`` (the ``D = D_min`` problem).
    """

    def __init__(self, d: np.ndarray, dmin: np.ndarray, p: np.ndarray, s: float):
        self.s = s
        self.d = d
        self.p = p
        excess = d - dmin[:, None]
        if np.isinf(s):
            self.K = (excess <= 1e-12 * max(1.0, float(d.max()))).astype(float)
            self.logK = np.where(self.K > 0, 0.0, -np.inf)
        else:
            self.logK = -s * excess
            self.K = np.exp(self.logK)
        # the true ln Z(x) is ln Z̃(x) − s·d_min(x); keep the shift for the certificate
        self.shift = np.zeros_like(dmin) if np.isinf(s) else -s * dmin
        self.pos = p > 0
        self.sqrt_p = np.sqrt(p)

    def z(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``Z̃ = K q`` with its log; rows that underflow are redone in the log domain."""
        zt = self.K @ q
        bad = zt < _TINY
        with np.errstate(divide="ignore"):
            logz = np.log(zt)
            if bad.any():
                logq = np.log(q)
                logz[bad] = _lse_rows(self.logK[bad] + logq[None, :])
        return zt, logz, bad

    def ratio(self, zt, logz, bad, cols=None) -> np.ndarray:
        """``B[x,u] = K[x,u] / Z̃(x)`` (= ``W[x,u]/q(u)``) for the given columns."""
        K = self.K if cols is None else self.K[:, cols]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            B = K / zt[:, None]
            if bad.any():
                lk = self.logK[bad] if cols is None else self.logK[np.ix_(bad, cols)]
                B[bad] = np.exp(lk - logz[bad][:, None])
        B[~np.isfinite(B)] = 0.0
        return B

    def c(self, zt, logz, bad) -> np.ndarray:
        """``c(u) = Σ_x p(x) K[x,u] / Z(x)`` (Blahut 1972, eq. (9))."""
        good = self.pos & ~bad
        out = (self.p[good] / zt[good]) @ self.K[good]
        badp = self.pos & bad & np.isfinite(logz)
        if badp.any():
            lw = np.log(self.p[badp]) - logz[badp]
            with np.errstate(over="ignore"):
                out = out + np.exp(self.logK[badp] + lw[:, None]).sum(axis=0)
        return out

    def phi(self, q: np.ndarray) -> float:
        """``Φ(q) = −Σ p(x) ln Z̃(x) + Σ q`` (up to the constant row shift)."""
        _, logz, _ = self.z(q)
        lz = logz[self.pos]
        if not np.isfinite(lz).all():
            return np.inf
        return float(-np.dot(self.p[self.pos], lz) + q.sum())

    def mechanism(self, q: np.ndarray) -> np.ndarray:
        """``W[x,u] = q(u) K[x,u] / Z(x)``; rows with ``Z = 0`` (zero prior mass) get ``K``'s
        row normalised."""
        zt, logz, bad = self.z(q)
        W = q[None, :] * self.ratio(zt, logz, bad)
        sums = W.sum(axis=1)
        empty = ~(sums > 0)
        if empty.any():
            W[empty] = self.K[empty]
            sums[empty] = W[empty].sum(axis=1)
        return W / sums[:, None]


@dataclass
class BlahutArimotoPoint:
    """The converged Blahut–Arimoto solution at one slope.

    Attributes
    ----------
    s : float
        The slope (``0`` = constant output, ``inf`` = the ``D_min`` problem).
    q : numpy.ndarray
        Output pmf.
    W : numpy.ndarray
        Mechanism (all input rows).
    D : float
        ``E[d]`` of ``W``.
    I : float
        ``I(X;U)`` of ``W`` (nats).
    intercept : float
        ``a_s`` with ``R(D') ≥ a_s − s D'`` for every ``D'`` (Blahut's lower bound; ``-inf``
        when ``s`` is 0 or infinite).
    gap : float
        BA duality gap at this slope, ``ln max c − Σ q c ln c`` (nats).
    iterations : int
    dD_ds : float
        Slope derivative ``dD/ds`` of the optimal curve (``nan`` at the ends).
    method : str
        How the slope was solved (``"ba"``, ``"newton"``, ``"ipm+newton"``, ...).
    """

    s: float
    q: np.ndarray
    W: np.ndarray
    D: float
    I: float
    intercept: float
    gap: float
    iterations: int
    dD_ds: float = float("nan")
    method: str = ""


def _ba_gap(q: np.ndarray, c: np.ndarray) -> float:
    """Blahut's gap ``ln max_u c(u) − Σ_u q(u) c(u) ln c(u)`` for a normalised ``q`` (≥ 0)."""
    if not np.isfinite(c).all():
        return np.inf
    pos = (q > 0) & (c > 0)
    return float(np.log(c.max()) - np.sum(q[pos] * c[pos] * np.log(c[pos])))


def _solve_pd(H: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """Solve ``H x = rhs`` for a positive (semi)definite ``H``: Jacobi scaling, Cholesky with
    a tiny ridge, least squares if that fails."""
    if not np.isfinite(H).all():  # overflow (a far-off warm start): no direction
        return np.full(rhs.shape, np.nan)
    diag = np.diag(H).copy()
    diag[~(diag > 0)] = 1.0
    sc = 1.0 / np.sqrt(diag)
    Hs = H * sc[:, None] * sc[None, :]
    try:
        factor = linalg.cho_factor(Hs + 1e-14 * np.eye(Hs.shape[0]), check_finite=False)
        x = linalg.cho_solve(factor, rhs * sc, check_finite=False)
    except (linalg.LinAlgError, ValueError):
        x = np.linalg.lstsq(Hs, rhs * sc, rcond=1e-14)[0]
    return x * sc


def _hessian(kernel: _Kernel, zt, logz, bad, cols: np.ndarray) -> np.ndarray:
    """Hessian of ``Φ`` on the columns ``cols``: ``H = Bᵀ diag(p) B`` with ``B = K/Z``."""
    with np.errstate(over="ignore", invalid="ignore"):
        M = kernel.sqrt_p[:, None] * kernel.ratio(zt, logz, bad, cols)
        return M.T @ M


def _gap_at(kernel: _Kernel, q: np.ndarray) -> tuple[np.ndarray, float]:
    """Normalise ``q`` and return it with Blahut's gap."""
    total = q.sum()
    if not (np.isfinite(total) and total > 0):
        return q, np.inf
    qn = q / total
    return qn, _ba_gap(qn, kernel.c(*kernel.z(qn)))


def _active_set_newton(
    kernel: _Kernel, q: np.ndarray, cols: np.ndarray, target: float, max_steps: int = 40
):
    """Active-set Newton for ``min Φ(q)``, ``q ≥ 0``, started from the face ``supp q``.

    Newton steps on the current support ``S`` (Hessian ``H_SS``, Armijo on ``Φ``); an output
    that blocks the step at zero leaves ``S``; outputs with ``c(u) > 1`` (negative gradient)
    join ``S`` at zero and stay if the Newton step gives them mass. Quadratic convergence
    once ``S`` is the optimal support, so it is the fast path for warm starts, where the
    support changes little. Returns ``(q, gap, iterations, ok)``.
    """
    q = q.copy()
    if not q.sum() > 0:
        return q, np.inf, 0, False
    allowed = np.zeros(q.size, dtype=bool)
    allowed[cols] = True
    gap = np.inf
    qn = q / q.sum()
    history = []
    done: tuple | None = None
    polish = 2  # extra Newton steps once the gap is met: the gap is insensitive (second
    # order) to outputs that are leaving the support, the mechanism is not
    for its in range(1, max_steps + 1):
        qn, gap = _gap_at(kernel, q)
        if gap <= target:
            if done is None or gap <= done[1] * 10:
                done = (qn, gap, its, True)
            if polish == 0 or gap == 0.0:
                return done
            polish -= 1
        elif done is not None:
            return done
        history.append(gap)
        if len(history) > 6 and gap > 1e-3 * history[-6] and done is None:
            return qn, gap, its, False  # not converging fast: give up
        zt, logz, bad = kernel.z(q)
        g_all = 1.0 - kernel.c(zt, logz, bad)  # ∇Φ
        # outputs with c(u) > 1 want mass; they join the face at zero and stay only if the
        # Newton step gives them a positive component
        enter = allowed & (q == 0) & (g_all < -0.25 * target)
        S = np.flatnonzero((q > 0) | enter)
        for _ in range(3):
            step = _solve_pd(_hessian(kernel, zt, logz, bad, S), -g_all[S])
            reject = (q[S] == 0) & (step <= 0)
            if not reject.any():
                break
            S = S[~reject]
        else:
            step = _solve_pd(_hessian(kernel, zt, logz, bad, S), -g_all[S])
        g = g_all[S]
        qs = q[S]
        neg = (step < 0) & (qs > 0)
        step[(step < 0) & (qs == 0)] = 0.0
        decrement = -float(np.dot(g, step))
        if not (decrement > 0 and np.isfinite(step).all()):
            return done or (qn, gap, its, False)
        t_block, block = 1.0, -1
        if neg.any():
            ratios = np.full(S.size, np.inf)
            with np.errstate(over="ignore"):
                ratios[neg] = -qs[neg] / step[neg]
            block = int(np.argmin(ratios))
            t_block = float(ratios[block])
        phi0 = kernel.phi(q)
        if t_block < 1.0:
            # projected full step first (Bertsekas): outputs that go negative are dropped;
            # only if that fails, the step is cut at the first blocking output
            trial = q.copy()
            trial[S] = np.maximum(qs + step, 0.0)
            if trial.sum() > 0 and kernel.phi(trial) <= phi0 - 1e-4 * decrement:
                q = trial
                continue
        t = min(1.0, t_block)
        while True:
            trial = q.copy()
            trial[S] = np.maximum(qs + t * step, 0.0)
            if t >= t_block:
                trial[S[block]] = 0.0  # the blocking output leaves the support
            if kernel.phi(trial) <= phi0 - 1e-4 * t * decrement:
                break
            t *= 0.5
            if t < 1e-12:
                return done or (qn, gap, its, False)
        q = trial
    return done or (qn, gap, max_steps, gap <= target)


def _interior_point(
    kernel: _Kernel, q: np.ndarray, cols: np.ndarray, target: float, max_steps: int = 150
):
    """Primal-dual interior point (Mehrotra predictor-corrector) for ``min Φ(q)``, ``q ≥ 0``.

    KKT: ``1 − c(u) − z(u) = 0``, ``q(u) z(u) = μ → 0`` on the columns ``cols`` (the others
    stay at zero). The Newton system is ``(H + Q⁻¹Z) Δq = −r_d + Q⁻¹ r_c``. Columns whose
    mass is negligible against their dual leave the working set (the final active-set
    phase lets them back in if that was wrong). Once ``μ < 1e-8`` each iteration tries a
    crossover: the support ``{q > z}`` handed to :func:`_active_set_newton`.
    Returns ``(q, gap, iterations, ok)``.
    """
    qc = q[cols] / q[cols].sum()
    q = np.zeros_like(q)
    q[cols] = 0.5 * qc + 0.5 / cols.size
    zt, logz, bad = kernel.z(q)
    work = cols.copy()
    z = np.maximum(1.0 - kernel.c(zt, logz, bad)[work], 1e-3)
    its = 0
    crossover_its = 0
    next_crossover = 1e-8
    p_min = float(kernel.p[kernel.pos].min())

    def max_step(v, dv):
        neg = dv < 0
        return min(1.0, float(np.min(-v[neg] / dv[neg]))) if neg.any() else 1.0

    for its in range(1, max_steps + 1):
        zt, logz, bad = kernel.z(q)
        c = kernel.c(zt, logz, bad)[work]
        r_dual = 1.0 - c - z
        qc = q[work]
        mu = float(np.dot(qc, z)) / work.size
        if mu < next_crossover:
            next_crossover = mu * 1e-3
            qs = q.copy()
            qs[work[qc < z]] = 0.0
            qn, gap, k, ok = _active_set_newton(kernel, qs, cols, target, max_steps=15)
            crossover_its += k
            if ok:
                return qn, gap, its + crossover_its, True
        if mu < 1e-18 * p_min:
            break
        # shrink the working set: outputs far on their way to zero (relative to the smallest
        # prior mass: an input of mass p may need a private output of mass ≈ p)
        if its >= 4:
            keep = ~((qc < 1e-12 * p_min * z) & (z > 1e-6))
            if not keep.all() and keep.any():
                q[work[~keep]] = 0.0
                work, z, r_dual, qc = work[keep], z[keep], r_dual[keep], qc[keep]
                zt, logz, bad = kernel.z(q)
                mu = float(np.dot(qc, z)) / work.size
        n = work.size
        H = _hessian(kernel, zt, logz, bad, work)
        H[np.diag_indices(n)] += z / qc
        sc = 1.0 / np.sqrt(np.diag(H))
        Hs = H * sc[:, None] * sc[None, :]
        try:
            factor = linalg.cho_factor(Hs + 1e-14 * np.eye(n), check_finite=False)

            def solve(rhs, factor=factor, sc=sc):
                return linalg.cho_solve(factor, rhs * sc, check_finite=False) * sc
        except (linalg.LinAlgError, ValueError):

            def solve(rhs, Hs=Hs, sc=sc):
                return np.linalg.lstsq(Hs, rhs * sc, rcond=1e-14)[0] * sc

        def direction(sigma_mu, corr=0.0, qc=qc, z=z, r_dual=r_dual, solve=solve):
            r_c = sigma_mu - qc * z - corr
            dq = solve(-r_dual + r_c / qc)
            return dq, (r_c - z * dq) / qc

        dq, dz = direction(0.0)  # affine-scaling predictor
        a_p, a_d = max_step(qc, dq), max_step(z, dz)
        mu_aff = float(np.dot(qc + a_p * dq, z + a_d * dz)) / n
        sigma = min((mu_aff / mu) ** 3, 1.0)
        dq, dz = direction(sigma * mu, dq * dz)  # Mehrotra corrector
        a = 0.99 * min(max_step(qc, dq), max_step(z, dz))
        q[work] = qc + a * dq
        z = z + a * dz
    qn, gap = _gap_at(kernel, q)
    return qn, gap, its + crossover_its, gap <= target


def _solve_slope(
    kernel: _Kernel,
    q0: np.ndarray,
    cols: np.ndarray,
    target: float,
    max_iter: int,
    warm: bool,
    ba_steps: int = 10,
) -> tuple[np.ndarray, float, int, str]:
    """Minimise ``Φ`` at a fixed slope to Blahut's gap ``≤ target``.

    A few BA steps (cheap, exact for easy instances); from a warm start, active-set Newton
    on the previous support; otherwise (or if that fails) the interior-point method with
    crossover; plain BA as a last resort. Returns ``(q, gap, iterations, method)``.
    """
    q = np.where(q0 > 0, q0, 0.0)
    q /= q.sum()
    iterations = 0
    gap = np.inf
    if warm:  # Newton converges from a nearby slope; BA steps would only creep linearly
        ba_steps = min(ba_steps, 2)
    for _ in range(ba_steps):  # q ← q·c (Blahut 1972, eq. (11))
        zt, logz, bad = kernel.z(q)
        c = kernel.c(zt, logz, bad)
        gap = _ba_gap(q, c)
        iterations += 1
        if gap <= target:
            return q, gap, iterations, "ba"
        if not np.isfinite(gap):  # c overflows: q is far off (cold warm start); mix it
            q = np.zeros_like(q)
            q[cols] = 1.0 / cols.size
            warm = False
            continue
        q = q * c
        q /= q.sum()
    best = (q, gap)
    if warm:
        qs = np.where(q >= 1e-14 * q.max(), q, 0.0)
        qn, gap, its, ok = _active_set_newton(kernel, qs, cols, target, max_steps=20)
        iterations += its
        if ok:
            return qn, gap, iterations, "newton"
        if gap < best[1]:
            best = (qn, gap)
    qn, gap, its, ok = _interior_point(kernel, q, cols, target)
    iterations += its
    if ok:
        return qn, gap, iterations, "ipm"
    if gap < best[1]:
        best = (qn, gap)
    q, gap = best
    if not np.isfinite(gap):
        q = np.zeros_like(q)
        q[cols] = 1.0 / cols.size
    while iterations < max_iter:  # last resort: plain Blahut–Arimoto
        zt, logz, bad = kernel.z(q)
        c = kernel.c(zt, logz, bad)
        gap = _ba_gap(q, c)
        iterations += 1
        if gap <= target:
            break
        q = q * c
        q /= q.sum()
    return q, gap, iterations, "ba"


def _slope_derivative(kernel: _Kernel, q: np.ndarray) -> float:
    """``dD/ds`` along the optimal curve at slope ``s`` (implicit function theorem).

    On the support ``S``, ``c_S(q, s) = 1``; with ``B = K/Z``, ``W = qB``,
    ``d̄(x) = Σ_u W d`` and ``g_s(u) = Σ_x p B (d̄ − d)`` (= ``∂c/∂s``),
    ``dD/ds = −Σ_x p Var_{W(·|x)}(d) − g_sᵀ H_SS⁻¹ g_s ≤ 0``. Used for Newton steps on ``s``
    (``dI/ds = −s dD/ds`` since ``R'(D) = −s``).
    """
    S = np.flatnonzero(q > 0)
    zt, logz, bad = kernel.z(q)
    B = kernel.ratio(zt, logz, bad, S)
    dS = kernel.d[:, S]
    W = B * q[S][None, :]
    dbar = np.sum(W * dS, axis=1)
    var = np.maximum(np.sum(W * dS**2, axis=1) - dbar**2, 0.0)
    p = kernel.p
    g_s = (p * dbar) @ B - p @ (B * dS)
    M = kernel.sqrt_p[:, None] * B
    H = M.T @ M
    return float(-np.dot(p, var) - np.dot(g_s, _solve_pd(H, g_s)))


class _RD:
    """Rate–distortion data of one instance: prior, distortion, end points, evaluated slopes."""

    def __init__(self, p: np.ndarray, d: np.ndarray, target: float, max_iter: int, q_init=None):
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
        self.points: list[BlahutArimotoPoint] = []
        self.iterations = 0
        self.scale = max(self.D_max - self.D_min, 1e-300)

    def expected(self, W: np.ndarray) -> float:
        """``E[d] = Σ p(x) W[x,u] d(x,u)`` ([004] eq. (32))."""
        return float(np.sum(self.p[:, None] * W * self.d))

    def constant_point(self) -> BlahutArimotoPoint:
        """The ``s = 0`` end: every input sent to ``argmin_u Σ_x p(x) d(x,u)`` (I = 0)."""
        W = np.zeros_like(self.d)
        W[:, self.u_const] = 1.0
        q = np.zeros(self.d.shape[1])
        q[self.u_const] = 1.0
        return BlahutArimotoPoint(0.0, q, W, self.D_max, 0.0, -np.inf, 0.0, 0)

    def _start(self, s: float) -> tuple[np.ndarray, bool]:
        finite = [pt for pt in self.points if 0 < pt.s < np.inf]
        if finite and np.isfinite(s):
            return min(finite, key=lambda pt: abs(np.log(pt.s) - np.log(s))).q, True
        if self.q_init is not None:
            return self.q_init, True
        return np.full(self.d.shape[1], 1.0 / self.d.shape[1]), False

    def point(self, s: float) -> BlahutArimotoPoint:
        """Solve at slope ``s`` (warm-started from the nearest slope already solved)."""
        kernel = _Kernel(self.d, self.dmin, self.p, s)
        # outputs that no input of positive mass can reach (possible at s = ∞) stay at zero
        cols = np.flatnonzero(kernel.K[self.p > 0].max(axis=0) > 0)
        start, warm = self._start(s)
        q0 = np.zeros(self.d.shape[1])
        q0[cols] = start[cols]
        if not q0.sum() > 0:
            q0[cols], warm = 1.0 / cols.size, False
        q, gap, its, method = _solve_slope(kernel, q0, cols, self.target_inner, self.max_iter, warm)
        self.iterations += its
        W = kernel.mechanism(q)
        zt, logz, bad = kernel.z(q)
        c = kernel.c(zt, logz, bad)
        pos = self.p > 0
        deriv = np.nan
        if np.isfinite(s):
            # Blahut's lower bound: R(D') ≥ −Σ p ln Z − ln max c − s D' (true, unscaled Z)
            intercept = float(-np.dot(self.p[pos], logz[pos] + kernel.shift[pos]))
            intercept -= float(np.log(c.max()))
            deriv = _slope_derivative(kernel, q)
        else:
            intercept = -np.inf
        pt = BlahutArimotoPoint(
            s,
            q,
            W,
            self.expected(W),
            _mutual_information(self.p, W),
            intercept,
            gap,
            its,
            deriv,
            method,
        )
        self.points.append(pt)
        return pt

    def lower_bound_rate(self, D: float) -> float:
        """Best ``R(D) ≥ a_s − s D`` over the slopes evaluated so far (and ``R ≥ 0``)."""
        vals = [pt.intercept - pt.s * D for pt in self.points if 0 < pt.s < np.inf]
        return max([0.0, *vals])

    def lower_bound_distortion(self, eps: float) -> float:
        """Best ``D*(ε) ≥ (a_s − ε)/s`` (from ``a_s − s D ≤ R(D) ≤ ε``) and ``D ≥ D_min``."""
        vals = [(pt.intercept - eps) / pt.s for pt in self.points if 0 < pt.s < np.inf]
        return max([self.D_min, *vals])


def _search(rd: _RD, hi: BlahutArimotoPoint, f_of, df_of, gap_of, s0, max_slopes: int):
    """Narrow the slope bracket ``[lo, hi]`` until ``gap_of(lo, hi) ≤ rd.target_outer``.

    ``f_of(pt)`` is a function of the slope that is non-increasing in ``t = ln s`` and
    vanishes at the wanted slope (``≥ 0`` at ``lo``, ``< 0`` at ``hi``); ``df_of(pt)`` is its
    derivative in ``t``. Steps: Newton in ``t`` from the latest slope when it lands inside
    the bracket and the previous step at least halved ``|f|``; otherwise Illinois regula
    falsi, or factor-4 expansion while one end is still ``s = 0`` or ``s = ∞``.
    """
    lo = rd.constant_point()
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
                # Newton, damped to a factor 30 in s per step; once converged, a 2e-10 step
                # across the root closes the bracket
                step = -f_last / deriv
                if abs(step) < 1e-10 and abs(f_last) <= 1e-9:
                    step = 2e-10 if f_last >= 0 else -2e-10
                cand = here + min(max(step, -np.log(30.0)), np.log(30.0))
                if a < cand < b and abs(step) >= 1e-10:
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


def _prepare(prior, distortion) -> tuple[np.ndarray, np.ndarray]:
    p = prior_probs(prior, "Blahut–Arimoto")
    return p, distortion_matrix(distortion, p.size)


def _warm(warm_start, n_out: int) -> tuple[np.ndarray | None, dict]:
    """Accept a previous output pmf, an :class:`AlgorithmResult` or its ``info`` dict.

    Returns the output pmf and what is known of the previous final slope (``slope``, and
    ``I``, ``D``, ``dD_ds`` there when the warm start is a previous result).
    """
    if warm_start is None:
        return None, {}
    known = {}
    if isinstance(warm_start, AlgorithmResult):
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


def _initial_slope(rd: _RD, known: dict, f_of=None, df_of=None) -> float:
    """The first slope to try: a Newton step in ``ln s`` from the previous final point
    (a sweep's last point) when its value and derivative are known, else its slope, else
    ``1 / (D_max − D_min)``."""
    s = known.get("slope")
    if s is None or not np.isfinite(s) or s <= 0:
        return 1.0 / rd.scale
    if f_of is not None and {"I", "D", "dD_ds"} <= set(known):
        prev = BlahutArimotoPoint(s, None, None, known["D"], known["I"], -np.inf, 0.0, 0)
        prev.dD_ds = known["dD_ds"]
        f, df = f_of(prev), df_of(prev)
        if np.isfinite(f) and np.isfinite(df) and df < 0:
            step = min(max(-f / df, -np.log(30.0)), np.log(30.0))
            return float(s * np.exp(step))
    return float(s)


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


def _restore_negligible(res: AlgorithmResult, p, d, negligible, by_distortion: bool):
    """Put the negligible inputs back (one-hot at their closest output) and re-measure."""
    if not negligible.any():
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
    level = _mutual_information(p, W)
    dist = float(np.sum(p[:, None] * W * d))
    res.mechanism = W
    res.level, res.distortion = level, dist
    res.objective = dist if by_distortion else level
    res.certificate = dict(res.certificate)
    res.certificate["duality_gap"] = max(res.objective - res.certificate["lower_bound"], 0.0)
    res.info = dict(res.info, negligible_inputs=int(negligible.sum()), output_marginal=p @ W)
    return res


def rate_distortion(
    prior,
    distortion,
    max_distortion: float,
    *,
    tol: float = 1e-9,
    warm_start=None,
    max_iter: int = 5_000,
    max_slopes: int = 200,
    blas_threads: int | None = 1,
) -> AlgorithmResult:
    """Least mutual information at an expected-distortion budget (PD-MIP, [004] eq. (31)).

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
    warm_start : array_like or dict or AlgorithmResult, optional
        A previous output pmf ``q`` (or a previous result / its ``info``, which also carries
        the slope), for sweeps.
    max_iter : int
        Limit on BA + Newton iterations per slope.
    max_slopes : int
        Limit on slope evaluations.
    blas_threads : int or None
        OpenBLAS threads during the solve (default 1; ``None`` leaves the setting alone).

    Returns
    -------
    AlgorithmResult
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
    with _BlasThreads(blas_threads):
        res = _rate_distortion(
            p_opt,
            d,
            budget,
            tol=tol,
            warm_start=warm_start,
            max_iter=max_iter,
            max_slopes=max_slopes,
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
) -> AlgorithmResult:
    """Implementation of :func:`rate_distortion`."""
    start = time.perf_counter()
    p, d = _prepare(prior, distortion)
    D = float(max_distortion)
    if not np.isfinite(D):
        raise InputError(f"must be a finite number, got {max_distortion}", "max_distortion")
    q_warm, known = _warm(warm_start, d.shape[1])
    rd = _RD(p, d, tol / 10, max_iter, q_warm)
    feas_tol = 1e-12 * max(1.0, rd.D_max)
    info = {"D_min": rd.D_min, "D_max": rd.D_max, "method": "blahut_arimoto+newton"}
    if D < rd.D_min - feas_tol:
        info.update(least_achievable=rd.D_min, solve_time_s=time.perf_counter() - start)
        return AlgorithmResult(status="infeasible", info=info)
    if D >= rd.D_max:  # the constant output already meets D: I = 0
        pt = rd.constant_point()
        cert = {"duality_gap": 0.0, "lower_bound": 0.0}
        return _result(rd, pt.W, 0.0, pt.D, cert, info, start, slope=0.0)
    top = rd.point(np.inf)
    if D <= rd.D_min + feas_tol:  # only outputs at distance d_min(x) are allowed
        cert = {"duality_gap": top.gap, "lower_bound": top.I - top.gap}
        return _result(rd, top.W, top.I, top.D, cert, info, start, slope=np.inf)

    def chord(lo, hi):
        alpha = 1.0 if lo.D == hi.D else (D - hi.D) / (lo.D - hi.D)
        return alpha, alpha * lo.I + (1 - alpha) * hi.I

    def f_of(pt):  # ln((D(s) − D_min)/(D − D_min)) is close to linear in ln s
        return np.log(max(pt.D - rd.D_min, 0.0) / (D - rd.D_min)) if pt.D > rd.D_min else -np.inf

    def df_of(pt):
        return pt.s * pt.dD_ds / (pt.D - rd.D_min)

    lo, hi, _ = _search(
        rd,
        top,
        f_of,
        df_of,
        lambda lo, hi: chord(lo, hi)[1] - rd.lower_bound_rate(D),
        _initial_slope(rd, known, f_of, df_of),
        max_slopes,
    )
    alpha = min(max(chord(lo, hi)[0], 0.0), 1.0)
    W = alpha * lo.W + (1 - alpha) * hi.W  # time sharing meets E[d] = D exactly
    level = _mutual_information(p, W)
    lower = rd.lower_bound_rate(D)
    cert = {"duality_gap": max(level - lower, 0.0), "lower_bound": lower}
    return _result(
        rd,
        W,
        level,
        rd.expected(W),
        cert,
        info,
        start,
        slope=hi if alpha < 0.5 else lo,
        bracket=(lo.s, hi.s),
    )


def distortion_rate(
    prior,
    distortion,
    epsilon: float,
    *,
    tol: float = 1e-9,
    warm_start=None,
    max_iter: int = 5_000,
    max_slopes: int = 200,
    blas_threads: int | None = 1,
) -> AlgorithmResult:
    """Least expected distortion at a mutual-information budget ``I(X;U) ≤ ε`` (nats).

    The slope ``s`` is searched so that ``I(W_s) = ε``; the lower bound on the optimal
    distortion is ``max_s (a_s − ε)/s``, from Blahut's bound ``R(D) ≥ a_s − s D``.
    Parameters and return value as in :func:`rate_distortion`, with ``objective`` = ``E[d]``
    and the gap in distortion units (target ``tol / 10``).
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
    with _BlasThreads(blas_threads):
        res = _distortion_rate(
            p_opt,
            d,
            budget,
            tol=tol,
            warm_start=warm_start,
            max_iter=max_iter,
            max_slopes=max_slopes,
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
) -> AlgorithmResult:
    """Implementation of :func:`distortion_rate`."""
    start = time.perf_counter()
    p, d = _prepare(prior, distortion)
    eps = float(epsilon)
    if np.isnan(eps) or eps < 0:  # ε = ∞ is allowed: the D_min problem (slope s = ∞)
        raise InputError(f"must be a number ≥ 0, got {epsilon}", "epsilon")
    q_warm, known = _warm(warm_start, d.shape[1])
    rd = _RD(p, d, tol / 10, max_iter, q_warm)
    info = {"D_min": rd.D_min, "D_max": rd.D_max, "method": "blahut_arimoto+newton"}
    if eps == 0.0 or rd.D_max <= rd.D_min:  # independence: the best constant output
        pt = rd.constant_point()
        cert = {"duality_gap": 0.0, "lower_bound": rd.D_max if eps == 0.0 else rd.D_min}
        return _result(rd, pt.W, 0.0, pt.D, cert, info, start, slope=0.0, by_distortion=True)
    top = rd.point(np.inf)
    if top.I <= eps:  # D_min is reachable within the budget
        cert = {"duality_gap": 0.0, "lower_bound": rd.D_min}
        return _result(rd, top.W, top.I, top.D, cert, info, start, slope=np.inf, by_distortion=True)

    def chord(lo, hi):
        # lo has I ≤ ε, hi has I > ε: mix so that the chord of I meets ε (I is convex in W)
        alpha = 1.0 if lo.I == hi.I else (hi.I - eps) / (hi.I - lo.I)
        return alpha, alpha * lo.D + (1 - alpha) * hi.D

    def f_of(pt):
        return eps - pt.I

    def df_of(pt):  # d(−I)/d ln s = s² dD/ds since R'(D) = −s
        return pt.s**2 * pt.dD_ds

    lo, hi, _ = _search(
        rd,
        top,
        f_of,
        df_of,
        lambda lo, hi: chord(lo, hi)[1] - rd.lower_bound_distortion(eps),
        _initial_slope(rd, known, f_of, df_of),
        max_slopes,
    )
    alpha = min(max(chord(lo, hi)[0], 0.0), 1.0)
    W = alpha * lo.W + (1 - alpha) * hi.W
    dist = rd.expected(W)
    lower = rd.lower_bound_distortion(eps)
    cert = {"duality_gap": max(dist - lower, 0.0), "lower_bound": lower}
    return _result(
        rd,
        W,
        _mutual_information(p, W),
        dist,
        cert,
        info,
        start,
        slope=hi if alpha < 0.5 else lo,
        bracket=(lo.s, hi.s),
        by_distortion=True,
    )


def _result(
    rd: _RD, W, level, dist, cert, info, start, *, slope, bracket=None, by_distortion=False
) -> AlgorithmResult:
    info = dict(info)
    if isinstance(slope, BlahutArimotoPoint):  # the final slope's data, for warm starts
        info.update(slope_I=float(slope.I), slope_D=float(slope.D), slope_dD_ds=slope.dD_ds)
        slope = slope.s
    info.update(
        slope=float(slope),
        output_marginal=rd.p @ W,
        slope_evaluations=len(rd.points),
        solve_time_s=time.perf_counter() - start,
    )
    if bracket is not None:
        info["slope_bracket"] = tuple(float(b) for b in bracket)
    gap = cert["duality_gap"]
    status = "optimal" if gap <= 10 * rd.target_outer else "failed"
    if status == "failed":
        info["message"] = f"duality gap {gap:.3g} above the target {rd.target_outer:.3g}"
    return AlgorithmResult(
        status=status,
        objective=float(dist if by_distortion else level),
        mechanism=W,
        level=float(level),
        distortion=float(dist),
        iterations=int(rd.iterations),
        certificate=cert,
        info=info,
    )


def applies(prior, distortion, notion, mode, **options) -> bool:
    """Single-secret prior with a dense pmf, notion mutual information, dense size in reach."""
    if notion not in _NOTIONS or mode not in ("epsilon", "max_distortion"):
        return False
    if isinstance(prior, JointPrior) or not isinstance(prior, (Prior, DatabasePrior)):
        return False
    try:
        n_in = prior.size
        n_out = (
            distortion.n_outputs if isinstance(distortion, Distortion) else np.shape(distortion)[1]
        )
    except (AttributeError, IndexError, TypeError):
        return False
    return n_in * n_out <= _MAX_ENTRIES and n_in <= 2**24


def solve(
    prior,
    distortion,
    notion: str = "mutual_information",
    *,
    epsilon: float | None = None,
    max_distortion: float | None = None,
    neighbors=None,
    tol: float = 1e-9,
    warm_start=None,
    **options,
) -> AlgorithmResult:
    """Registry entry point: dispatch to :func:`rate_distortion` or :func:`distortion_rate`.

    ``neighbors`` is ignored (mutual information has no neighbour relation). Options:
    ``max_iter`` and ``max_slopes``.
    """
    if notion not in _NOTIONS:
        raise InputError(
            f"the Blahut–Arimoto fast path solves 'mutual_information', not {notion!r}",
            "privacy.notion",
        )
    if (epsilon is None) == (max_distortion is None):
        raise InputError("give exactly one of epsilon and max_distortion", "privacy")
    unknown = set(options) - {"max_iter", "max_slopes", "blas_threads"}
    if unknown:
        raise InputError(f"unknown option(s) {sorted(unknown)}", "solver")
    if max_distortion is not None:
        return rate_distortion(
            prior, distortion, max_distortion, tol=tol, warm_start=warm_start, **options
        )
    return distortion_rate(prior, distortion, epsilon, tol=tol, warm_start=warm_start, **options)


ALGORITHM = register(
    Algorithm(
        name="blahut_arimoto",
        notions=("mutual_information",),
        applies=applies,
        solve=solve,
        priority=10,
        warm_starts=True,
        # certified by its duality gap, and faster than the exponential-cone program at every
        # size measured from k = 30 on (benchmarks/README.md: ×11 at k = 30, ×4102 at k = 200)
        auto=always,
        description=(
            "Blahut–Arimoto with projected-Newton polishing and a certified slope search "
            "(min I(X;U) s.t. E[d] ≤ D, or min E[d] s.t. I ≤ ε); single-secret priors"
        ),
    )
)
