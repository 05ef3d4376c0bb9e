"""Minimising ``Φ(q) = −Σ_x p(x) ln Z(x) + Σ_u q(u)`` at a fixed slope to Blahut's gap.

A few Blahut–Arimoto steps, then second-order methods: on large output alphabets, column
generation over outputs with small restricted interior points; active-set Newton from a
warm start; a primal-dual interior point (Mehrotra predictor–corrector) with crossover;
plain Blahut–Arimoto as the last resort. Also the slope derivative ``dD/ds`` for the slope search.
"""

from __future__ import annotations

__all__ = ["solve_slope", "slope_derivative", "solve_pd"]

import numpy as np
from scipy import linalg
from scipy.linalg import blas

from privopt.methods.base import Deadline
from privopt.methods.blahut_arimoto.kernel import Kernel, ba_gap


def solve_pd(H: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """Solve ``H x = rhs`` for a positive (semi)definite ``H``: Jacobi scaling, Cholesky with
    a tiny ridge, least squares if that fails.

    Parameters
    ----------
    H : numpy.ndarray
        Symmetric positive (semi)definite matrix, shape ``(m, m)``.
    rhs : numpy.ndarray
        Right-hand side, shape ``(m,)``.

    Returns
    -------
    numpy.ndarray
        ``x``, shape ``(m,)`` (all ``nan`` when ``H`` is not finite).
    """
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


#: From this many columns on, the Hessian is formed by a symmetric rank-k update (BLAS
#: ``syrk``: half the flops of ``MᵀM``).
SYRK_FROM = 256


def _hessian(kernel: Kernel, zt, logz, bad, cols: np.ndarray) -> np.ndarray:
    """Hessian of ``Φ`` on the columns ``cols``: ``H = Bᵀ diag(p) B`` with ``B = K/Z``."""
    with np.errstate(over="ignore", invalid="ignore"):
        M = kernel.sqrt_p[:, None] * kernel.ratio(zt, logz, bad, cols)
        if M.shape[1] < SYRK_FROM or not np.isfinite(M).all():
            return M.T @ M
    # Mᵀ is Fortran-ordered when M is C-ordered: syrk reads it without a copy
    upper = blas.dsyrk(1.0, np.ascontiguousarray(M).T, trans=0, lower=0)  # zeros below
    H = upper + upper.T
    H[np.diag_indices_from(H)] -= np.diagonal(upper)
    return H


def _gap_at(kernel: Kernel, q: np.ndarray) -> tuple[np.ndarray, float]:
    """Normalise ``q`` and return it with Blahut's gap."""
    total = q.sum()
    if not (np.isfinite(total) and total > 0):
        return q, np.inf
    qn = q / total
    return qn, ba_gap(qn, kernel.c(*kernel.z(qn)))


def _active_set_newton(
    kernel: Kernel, q: np.ndarray, cols: np.ndarray, target: float, max_steps: int = 40
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
            step = solve_pd(_hessian(kernel, zt, logz, bad, S), -g_all[S])
            reject = (q[S] == 0) & (step <= 0)
            if not reject.any():
                break
            S = S[~reject]
        else:
            step = solve_pd(_hessian(kernel, zt, logz, bad, S), -g_all[S])
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
    kernel: Kernel, q: np.ndarray, cols: np.ndarray, target: float, max_steps: int = 150
):
    """Primal-dual interior point (Mehrotra predictor-corrector) for ``min Φ(q)``, ``q ≥ 0``.

    KKT: ``1 − c(u) − z(u) = 0``, ``q(u) z(u) = μ → 0`` on the columns ``cols`` (the others
    stay at zero). The Newton system is ``(H + Q⁻¹Z) Δq = −r_d + Q⁻¹ r_c``. Columns whose
    mass is negligible against their dual leave the working set (the final active-set
    phase lets them back in if that was wrong). Once ``μ < 1e-10`` each iteration tries a
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
    # the first crossover at μ < 1e-10 (was 1e-8: on |x − u| at k = 2,500 six attempts
    # from ~1,800 outputs failed before the iterate separated; 65 s → 30 s)
    next_crossover = 1e-10
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
        if its >= 2:
            leaving = (qc < 1e-9 * qc.max()) & (z > 1e-2)  # far from the support
            if its >= 4:
                leaving |= (qc < 1e-12 * p_min * z) & (z > 1e-6)
            keep = ~leaving
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


#: A warm start's outputs below this fraction of its largest mass start outside the support
#: of the active-set Newton (they re-enter when their gradient asks for it).
WARM_SUPPORT = 1e-14

#: A warm start whose gap at the new slope is below this tries active-set Newton first.
WARM_NEWTON_GAP = 1e-6

#: From this many outputs on, a slope is first solved by column generation.
COLUMN_GENERATION_FROM = 400


def _column_generation(
    kernel: Kernel,
    q: np.ndarray,
    cols: np.ndarray,
    target: float,
    warm: bool,
    max_rounds: int = 60,
    deadline: Deadline | None = None,
):
    """Column generation over outputs: restricted problems, priced by ``c`` on every output.

    The optimum uses few of many outputs (about 10–70 of 2,500 on ``|x − u|``), so ``Φ`` is
    minimised over ``q`` supported on a working set ``A`` (:meth:`Kernel.restrict`; Newton
    systems of size at most ``|A|`` instead of ``k``), then ``c(u)`` is computed for every
    output. The restricted optimum is optimal for the full problem exactly when Blahut's gap
    over all outputs, ``ln max_u c(u)``, meets the target; otherwise the outputs with the
    largest ``c(u) > 1`` join ``A`` (the pricing rule of column generation: the restricted
    optimum decreases from round to round). The certificate is the same full-alphabet gap
    as for the other methods. Gives up (``ok = False``) once ``A`` exceeds half the outputs,
    where the full interior point is cheaper, or after ``max_rounds``. Returns
    ``(q, gap, iterations, ok)``.
    """
    n = cols.size
    qn = np.zeros_like(q)
    qn[cols] = q[cols]
    qn /= qn.sum()
    zt, logz, bad = kernel.z(qn)
    c = kernel.c(zt, logz, bad)
    if warm:
        work = cols[qn[cols] >= WARM_SUPPORT * qn[cols].max()]
    else:  # the outputs that kept the most mass through the Blahut–Arimoto steps
        size = min(n, max(64, int(2 * np.sqrt(n))))
        work = cols[np.argsort(qn[cols])[-size:]]
    gap = ba_gap(qn, c)
    iterations = 0
    best = (qn, gap)
    for _ in range(max_rounds):
        if deadline is not None:
            deadline.check()
        outside = np.ones(q.size, dtype=bool)
        outside[work] = False
        candidates = cols[outside[cols]]
        violated = candidates[c[candidates] > 1.0 + 0.25 * target]
        support = work[qn[work] > 0]
        if violated.size:
            violated = violated[np.argsort(c[violated])[-max(32, 2 * support.size) :]]
        work = np.union1d(support, violated)
        if work.size > n // 2:
            return best[0], best[1], iterations, False
        sub = kernel.restrict(work)
        local = np.arange(work.size)
        q_sub = qn[work]
        q_sub, _, its, ok = _interior_point(sub, q_sub, local, target)
        iterations += its
        if not ok:  # the restricted problem itself failed: leave it to the full methods
            return best[0], best[1], iterations, False
        qn = np.zeros_like(q)
        qn[work] = q_sub
        zt, logz, bad = kernel.z(qn)
        c = kernel.c(zt, logz, bad)
        gap = ba_gap(qn, c)
        if gap < best[1]:
            best = (qn, gap)
        if gap <= target:
            return qn, gap, iterations, True
    return best[0], best[1], iterations, False


def solve_slope(
    kernel: Kernel,
    q0: np.ndarray,
    cols: np.ndarray,
    target: float,
    max_iter: int,
    warm: bool,
    ba_steps: int = 10,
    deadline: Deadline | None = None,
) -> tuple[np.ndarray, float, int, str]:
    """Minimise ``Φ`` at a fixed slope to Blahut's gap ``≤ target``.

    A few BA steps (cheap, exact for easy instances); from ``COLUMN_GENERATION_FROM``
    outputs on, column generation; from a warm start, active-set Newton on the previous
    support; otherwise (or if those fail) the interior-point method with crossover; plain
    BA as a last resort. Every route ends on the same test, Blahut's gap over all outputs.
    Returns ``(q, gap, iterations, method)``.

    Parameters
    ----------
    kernel : Kernel
        The kernel at the slope.
    q0 : numpy.ndarray
        Start output weights, shape ``(n,)`` (normalised here).
    cols : numpy.ndarray
        Indices of the outputs reachable from inputs of positive mass.
    target : float
        Blahut's gap to reach (nats).
    max_iter : int
        Most iterations.
    warm : bool
        ``q0`` comes from a nearby slope (then Newton is tried first).
    ba_steps : int
        Plain BA steps first.
    deadline : Deadline, optional
        Checked between iterations.

    Returns
    -------
    q : numpy.ndarray
        The output pmf.
    gap : float
        Blahut's gap at ``q`` (nats).
    iterations : int
        Iterations used.
    method : str
        The route that finished (``"ba"``, ``"newton"``, ``"ipm+newton"``, ...).
    """
    q = np.where(q0 > 0, q0, 0.0)
    q /= q.sum()
    iterations = 0
    gap = np.inf
    if warm:  # Newton converges from a nearby slope; BA steps would only creep linearly
        ba_steps = min(ba_steps, 2)
    start, start_gap = q, np.inf
    for _ in range(ba_steps):  # q ← q·c (Blahut 1972, eq. (11))
        zt, logz, bad = kernel.z(q)
        c = kernel.c(zt, logz, bad)
        gap = ba_gap(q, c)
        start_gap = min(start_gap, gap)
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
    if warm and cols.size >= COLUMN_GENERATION_FROM and start_gap <= WARM_NEWTON_GAP:
        # a nearby slope (a sweep's next point, the search's last steps): Newton on the
        # previous support converges in a few steps (from the warm start itself: after BA
        # steps the outputs leaving the support still carry mass, one Newton step each)
        qs = np.where(start >= WARM_SUPPORT * start.max(), start, 0.0)
        qn, gap_n, its, ok = _active_set_newton(kernel, qs, cols, target, max_steps=6)
        iterations += its
        if ok:
            return qn, gap_n, iterations, "newton"
    if cols.size >= COLUMN_GENERATION_FROM:
        qn, gap, its, ok = _column_generation(kernel, q, cols, target, warm, deadline=deadline)
        iterations += its
        if ok:
            return qn, gap, iterations, "columns"
        if gap < best[1]:
            best = (qn, gap)
    if warm:
        qs = np.where(q >= WARM_SUPPORT * q.max(), q, 0.0)
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
        if deadline is not None and iterations % 50 == 0:
            deadline.check()
        zt, logz, bad = kernel.z(q)
        c = kernel.c(zt, logz, bad)
        gap = ba_gap(q, c)
        iterations += 1
        if gap <= target:
            break
        q = q * c
        q /= q.sum()
    return q, gap, iterations, "ba"


def slope_derivative(kernel: Kernel, q: np.ndarray) -> float:
    """``dD/ds`` along the optimal curve at slope ``s`` (implicit function theorem).

    On the support ``S``, ``c_S(q, s) = 1``; with ``B = K/Z``, ``W = qB``,
    ``d̄(x) = Σ_u W d`` and ``g_s(u) = Σ_x p B (d̄ − d)`` (= ``∂c/∂s``),
    ``dD/ds = −Σ_x p Var_{W(·|x)}(d) − g_sᵀ H_SS⁻¹ g_s ≤ 0``. Used for Newton steps on ``s``
    (``dI/ds = −s dD/ds`` since ``R'(D) = −s``).

    Parameters
    ----------
    kernel : Kernel
        The kernel at a finite slope ``s``.
    q : numpy.ndarray
        The optimal output pmf at ``s``, shape ``(n,)``.

    Returns
    -------
    float
        ``dD/ds ≤ 0``.
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
    return float(-np.dot(p, var) - np.dot(g_s, solve_pd(H, g_s)))
