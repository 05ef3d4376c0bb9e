"""The single-letter reduction: one-row programs that solve the whole database problem.

For i.i.d. rows with the row-wise Hamming distortion and Hamming neighbours, PD-DP, PD-I and
PD-MIP (Wang, Ying & Zhang 2016) reduce exactly to one row (the proof is in
:mod:`privopt.methods.symmetric.method`): :func:`single_row_lp` for dp and identifiability,
:func:`rate_distortion_hamming` for mutual information.
"""

from __future__ import annotations

__all__ = [
    "single_row_lp",
    "rate_distortion_hamming",
    "one_row_mutual_information",
    "MAX_RAY_SUPPORT",
]

from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp
from scipy.optimize import brentq, linprog

from privopt.errors import InputError
from privopt.measures import least_identifiability_level
from privopt.validation import check_level, check_number

if TYPE_CHECKING:  # annotations only: nothing more is imported at run time
    from numpy.typing import ArrayLike

#: Largest support size for the ray formulation of the one-row LP (2^k − 1 columns).
MAX_RAY_SUPPORT = 12


def single_row_lp(
    row_probs: ArrayLike, notion: str, epsilon: float, tol: float = 1e-10
) -> tuple[str, np.ndarray | None, float, dict]:
    """The one-row LP behind the single-letter reduction (see the module docstring).

    ``min Σ_a π_a Σ_{b≠a} B[a,b]`` s.t. rows of ``B`` sum to 1, ``B ≥ 0`` and, for all
    ``a ≠ a'`` in ``supp π`` and all ``b``:

    * ``"dp"``: ``B[a,b] ≤ e^ε B[a',b]`` ([Wang-Ying-Zhang] eq. 15 with n = 1);
    * ``"identifiability"``: ``π_a B[a,b] ≤ e^ε π_{a'} B[a',b]`` ([Wang-Ying-Zhang] eq. 9
      in the joint ``q[a,b] = π_a B[a,b]``).

    Solved in *ray form* (derived): both constraints say that every column (of ``B`` for DP,
    of ``q`` for identifiability) lies in the cone ``C = {v ≥ 0 : max v ≤ e^ε min v}``, whose
    extreme rays are ``r_S = e^{−ε} 1 + (1 − e^{−ε}) 1_S`` for non-empty ``S ⊆ supp π``
    (layer-cake decomposition of ``v`` between ``max v / e^ε`` and ``min v``). So the LP is
    over weights ``φ_S ≥ 0`` of ``2^k − 1`` rays, each sent to its best output label, with
    ``k`` row equalities ``Σ_S φ_S r_S[a] = 1`` (DP) or ``= π_a`` (identifiability). Every
    coefficient lies in ``[e^{−ε}, 1]``, whatever ε, and the privacy constraint holds by
    construction (each column is a non-negative combination of rays of ``C``); the direct
    formulation (``B[a,b] − e^ε B[a',b] ≤ 0``) makes HiGHS misreport infeasibility from
    ε ≈ 35 on. Supports larger than :data:`MAX_RAY_SUPPORT` use the direct formulation.

    Rows of zero-probability symbols are unconstrained and set to the identity.

    Parameters
    ----------
    row_probs : array_like
        π, the pmf of one row: length ``m``, non-negative, summing to 1 (validated only when
        two or more entries are positive).
    notion : str
        ``"dp"`` or ``"identifiability"``.
    epsilon : float
        ε ``≥ 0`` in nats; the ray form uses ``min(ε, 700)``.
    tol : float
        Primal and dual feasibility tolerance given to HiGHS (default 1e-10).

    Returns
    -------
    status : str
        ``"optimal"``, ``"infeasible"`` or ``"failed"``.
    kernel : numpy.ndarray or None
        The optimal one-row channel ``B``, ``m × m`` row-stochastic; ``None`` when not
        optimal.
    value : float
        ``D₁*`` (nan when not optimal): the expected Hamming distortion of one row, in
        ``[0, 1 − max π]``.
    certificate : dict
        ``dual_value`` (the LP dual objective, a lower bound on ``D₁*``) and ``duality_gap``.
        Empty when infeasible; ``{"message": ...}`` (the solver's) when failed.

    Raises
    ------
    InputError
        If ``notion`` is neither ``"dp"`` nor ``"identifiability"``, ``epsilon`` is not a
        level, or ``row_probs`` has two or more positive entries and is not a pmf (field
        ``prior.probs``).
    """
    if notion not in ("dp", "identifiability"):
        raise InputError(f"the one-row LP is for dp and identifiability, not {notion!r}", "notion")
    epsilon = check_level(epsilon, "epsilon")
    pi = np.asarray(row_probs, dtype=float)
    m = pi.size
    sup = np.flatnonzero(pi > 0)
    k = sup.size
    kernel = np.eye(m)
    if k <= 1:
        return "optimal", kernel, 0.0, {"dual_value": 0.0, "duality_gap": 0.0}
    ps = pi[sup]
    least = least_identifiability_level(pi, "all")
    if notion == "identifiability" and epsilon < least - 1e-13:
        # Wang, Ying & Zhang, Lemma 3: summing π_a B[a,b] ≤ e^ε π_a' B[a',b] over b gives
        # π_a ≤ e^ε π_a'
        return "infeasible", None, float("nan"), {}
    if k > MAX_RAY_SUPPORT:
        return _single_row_lp_direct(pi, notion, epsilon, tol)
    # e^{−ε} underflows past ε ≈ 745; a min(ε, 700)-private answer is ε-private and within
    # e^{−700} of optimal
    r = float(np.exp(-min(epsilon, 700.0)))
    members = (np.arange(1, 2**k)[None, :] >> np.arange(k)[:, None]) & 1  # k × (2^k − 1)
    rays = np.where(members == 1, 1.0, r)  # r_S[a]
    weight = ps if notion == "dp" else np.ones(k)  # distortion of q-column entries
    # best label of each ray: the b maximising weight_b r_S[b] (kept diagonal mass)
    label = np.argmax(weight[:, None] * rays, axis=0)
    kept = (weight[:, None] * rays)[label, np.arange(rays.shape[1])]
    cost = weight @ rays - kept  # Σ_{a ≠ b} weight_a r_S[a]
    rhs = np.ones(k) if notion == "dp" else ps
    res, stopped = _dual_simplex(cost, tol, A_eq=rays, b_eq=rhs)
    if stopped is not None:
        return stopped
    phi = np.clip(res.x, 0.0, None)
    cols = np.zeros((k, m))  # columns of B (dp) or q (identifiability) on the support rows
    for lab in np.unique(label):
        sel = label == lab
        cols[:, sup[lab]] = rays[:, sel] @ phi[sel]
    if notion == "identifiability":
        cols = cols / ps[:, None]
    cols /= cols.sum(axis=1, keepdims=True)  # removes rounding-level row-sum residue
    kernel[sup] = cols
    value = float(np.sum(pi[:, None] * kernel * (1 - np.eye(m))))
    dual = _ray_dual_bound(rays, cost, rhs, np.asarray(res.eqlin.marginals, dtype=float))
    return "optimal", kernel, value, {"dual_value": dual, "duality_gap": abs(value - dual)}


def _ray_dual_bound(rays: np.ndarray, cost: np.ndarray, rhs: np.ndarray, y: np.ndarray) -> float:
    """A rigorous lower bound on ``min cost·φ s.t. rays φ = rhs, φ ≥ 0`` from any ``y``.

    ``y`` is dual feasible when ``raysᵀ y ≤ cost``. Every ray has entries in ``[e^{−ε}, 1]``,
    so lowering all of ``y`` by ``δ`` lowers ``(raysᵀ y)_j`` by at least ``δ·min_j Σ_a rays``;
    the least such ``δ`` makes the solver's (nearly feasible) duals feasible, and weak duality
    gives ``rhs·(y − δ1)``.
    """
    excess = float(np.max(rays.T @ y - cost, initial=0.0))
    delta = excess / float(rays.sum(axis=0).min()) if excess > 0 else 0.0
    return float(rhs @ (y - delta))


def _infeasible(res) -> bool:
    """True only for a genuine infeasibility verdict: scipy maps HiGHS "model error" (e.g.
    coefficients out of range) to the same status 2."""
    return res.status == 2 and "infeasible" in str(res.message).lower()


def _dual_simplex(cost: np.ndarray, tol: float, **constraints) -> tuple[object, tuple | None]:
    """``min cost·x`` s.t. ``constraints`` (:func:`scipy.optimize.linprog`'s ``A_ub``,
    ``b_ub``, ``A_eq``, ``b_eq``) and ``x ≥ 0``, by HiGHS dual simplex with feasibility
    tolerances ``tol``.

    Returns scipy's result and, when it holds no answer, what the one-row LP returns then
    (``"infeasible"`` or ``"failed"``, else ``None``).
    """
    res = linprog(
        cost,
        **constraints,
        bounds=(0, None),
        method="highs-ds",
        options={"primal_feasibility_tolerance": tol, "dual_feasibility_tolerance": tol},
    )
    if _infeasible(res):
        return res, ("infeasible", None, float("nan"), {})
    if res.status != 0:
        return res, ("failed", None, float("nan"), {"message": res.message})
    return res, None


def _single_row_lp_direct(
    pi: np.ndarray, notion: str, epsilon: float, tol: float
) -> tuple[str, np.ndarray | None, float, dict]:
    """The one-row LP written as printed ([Wang-Ying-Zhang] eqs 15 / 9 with n = 1):
    variables ``B[a,b]``, constraints ``c_a B[a,b] − e^ε c_{a'} B[a',b] ≤ 0``. Reliable for
    moderate ε only."""
    m = pi.size
    sup = np.flatnonzero(pi > 0)
    k = sup.size
    kernel = np.eye(m)
    c = (pi[sup, None] * (sup[:, None] != np.arange(m)[None, :])).ravel()
    rows, cols, vals = [], [], []
    count = 0
    for i, a in enumerate(sup):
        for j, a2 in enumerate(sup):
            if i == j:
                continue
            coef = epsilon if notion == "dp" else epsilon + np.log(pi[a2] / pi[a])
            for b in range(m):
                rows += [count, count]
                cols += [i * m + b, j * m + b]
                vals += [1.0, -float(np.exp(coef))]
                count += 1
    a_ub = sp.csr_matrix((vals, (rows, cols)), shape=(count, k * m))
    a_eq = sp.kron(sp.eye(k), np.ones((1, m)), format="csr")
    res, stopped = _dual_simplex(
        c, tol, A_ub=a_ub, b_ub=np.zeros(count), A_eq=a_eq, b_eq=np.ones(k)
    )
    if stopped is not None:
        return stopped
    sol = np.clip(res.x.reshape(k, m), 0.0, None)
    sol /= sol.sum(axis=1, keepdims=True)
    kernel[sup] = sol
    value = float(np.sum(pi[:, None] * kernel * (1 - np.eye(m))))
    # rigorous: with every B[a, b] in [0, 1] (rows sum to 1), any multipliers give the bound
    # Σ y_eq + Σ_j min(0, r_j) with r = c − A_eqᵀ y_eq − A_ubᵀ y_ub (y_ub ≤ 0 on "≤" rows)
    y_eq = np.asarray(res.eqlin.marginals, dtype=float)
    y_ub = np.minimum(np.asarray(res.ineqlin.marginals, dtype=float), 0.0)
    reduced = c - a_eq.T @ y_eq - a_ub.T @ y_ub
    dual = float(y_eq.sum() + np.minimum(reduced, 0.0).sum())
    return "optimal", kernel, value, {"dual_value": dual, "duality_gap": abs(value - dual)}


def _rd_slope_point(pi: np.ndarray, r: float) -> tuple[np.ndarray, np.ndarray, float, float]:
    """One-row rate–distortion point at slope ``λ = −ln r`` for Hamming distortion.

    Closed-form Blahut–Arimoto fixed point (KKT): ``W(b|a) = q_b r^{[a≠b]} / Z_a`` with
    ``Z_a = r + (1−r) q_a``; the output pmf ``q`` is positive exactly on the ``k`` most likely
    symbols ``S``, where ``π_b / Z_b = c = π(S)/(1 + r(k−1))``, i.e. ``q_b = (π_b/c − r)/(1−r)``;
    ``k`` is the largest with ``π_(k) > r c_k`` (water-filling).

    Returns ``(kernel, q, D₁, R₁)`` with ``R₁ = −λ D₁ − Σ_a π_a ln Z_a`` in nats.
    """
    m = pi.size
    order = np.argsort(-pi, kind="stable")
    ps = pi[order]
    cum = np.cumsum(ps)
    k = 1
    for j in range(1, m + 1):
        cj = cum[j - 1] / (1 + r * (j - 1))
        if ps[j - 1] > r * cj:
            k = j
    c = cum[k - 1] / (1 + r * (k - 1))
    q = np.zeros(m)
    q[order[:k]] = np.clip((ps[:k] / c - r) / (1 - r), 0.0, None)
    q /= q.sum()
    z = r + (1 - r) * q
    kernel = q[None, :] * np.where(np.eye(m, dtype=bool), 1.0, r) / z[:, None]
    kernel /= kernel.sum(axis=1, keepdims=True)
    dist = float(np.sum(pi * (1 - np.diag(kernel))))
    lam = -np.log(r)
    rate = float(-lam * dist - np.sum(pi[pi > 0] * np.log(z[pi > 0])))
    return kernel, q, dist, max(rate, 0.0)


def _entropy(p: np.ndarray) -> float:
    p = p[p > 0]
    return float(-np.sum(p * np.log(p)))


def one_row_mutual_information(pi: np.ndarray, kernel: np.ndarray) -> float:
    """Mutual information ``Σ_a π_a Σ_b B[a,b] ln(B[a,b]/q_b)`` of one row, ``q = πB``.

    Parameters
    ----------
    pi : numpy.ndarray
        π, the pmf of one row, shape ``(m,)`` (not validated).
    kernel : numpy.ndarray
        The one-row channel ``B``, shape ``(m, m')``, row-stochastic (not validated).

    Returns
    -------
    float
        ``I`` in nats, in ``[0, H(π)]``; nan if a zero-probability symbol alone emits some
        output (``0 · ∞``).
    """
    q = pi @ kernel
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(kernel > 0, kernel * np.log(kernel / q[None, :]), 0.0)
    return float(np.sum(pi[:, None] * terms))


def rate_distortion_hamming(
    row_probs: ArrayLike, *, distortion: float | None = None, rate: float | None = None
) -> tuple[np.ndarray, float, float, dict]:
    """One-row Hamming rate–distortion: the optimal channel for a per-row distortion or rate.

    Give exactly one of ``distortion`` (per row, ``min I s.t. E d ≤ distortion``) or ``rate``
    (per row, nats; ``min E d s.t. I ≤ rate``).

    Parameters
    ----------
    row_probs : array_like
        π, the pmf of one row: length ``m``, non-negative, summing to 1 (not validated).
    distortion : float, optional
        Per-row expected Hamming distortion allowed: at least ``1 − max π`` gives the constant
        channel to the most likely symbol, at most 0 the identity. Used when both are given.
    rate : float, optional
        Per-row mutual information allowed (nats): at least ``H(π)`` gives the identity, at
        most 0 the constant channel.

    Returns
    -------
    kernel : numpy.ndarray
        The optimal one-row channel: ``m × m``, row-stochastic.
    dist, rate : float
        Its distortion and mutual information (nats): ``dist`` in ``[0, 1 − max π]``,
        ``rate`` in ``[0, H(π)]``.
    certificate : dict
        ``slope`` (λ) and ``duality_gap``: the rate minus Csiszár's lower bound
        ``−λD − Σ π_a ln Z_a − ln max_b Σ_a π_a e^{−λ d(a,b)}/Z_a`` (≈ 0 at the optimum).

    Raises
    ------
    InputError
        Unless exactly one of ``distortion`` (a number ``≥ 0``) and ``rate`` (a level ``≥ 0``)
        is given.
    """
    if (distortion is None) == (rate is None):
        raise InputError("give exactly one of 'distortion' and 'rate'", "distortion")
    if distortion is not None:
        distortion = check_number(distortion, "distortion")
    else:
        rate = check_level(rate, "rate")
    pi = np.asarray(row_probs, dtype=float)
    m = pi.size
    d_max = 1.0 - pi.max()  # constant output at the most likely symbol
    h_x = _entropy(pi)
    const = np.zeros((m, m))
    const[:, int(np.argmax(pi))] = 1.0
    if distortion is not None:
        if distortion >= d_max:
            return const, d_max, 0.0, {"slope": 0.0, "duality_gap": 0.0}
        if distortion <= 0:
            return np.eye(m), 0.0, h_x, {"slope": float("inf"), "duality_gap": 0.0}

        def gap(t: float) -> float:
            return _rd_slope_point(pi, t)[2] - distortion
    else:
        if rate >= h_x:
            return np.eye(m), 0.0, h_x, {"slope": float("inf"), "duality_gap": 0.0}
        if rate <= 0:
            return const, d_max, 0.0, {"slope": 0.0, "duality_gap": 0.0}

        def gap(t: float) -> float:
            return rate - _rd_slope_point(pi, t)[3]

    # D₁(r) increases and R₁(r) decreases in r = e^{−λ} ∈ (0, 1); search in ln r.
    lo = -1.0
    while gap(np.exp(lo)) > 0:
        lo *= 2.0
        if lo < -700:  # e^{-700}: the identity up to rounding
            break
    hi = -1e-13
    if gap(np.exp(lo)) > 0:
        log_r = lo
    elif gap(np.exp(hi)) <= 0:  # the target is within rounding of the constant mechanism
        log_r = hi
    else:
        log_r = brentq(
            lambda u: gap(float(np.exp(u))), lo, hi, xtol=1e-300, rtol=1e-15, maxiter=500
        )
    r = float(np.exp(log_r))
    kernel, q, dist, rate_val = _rd_slope_point(pi, r)
    lam = -log_r
    z = r + (1 - r) * q
    sup = pi > 0
    expo = np.where(np.eye(m, dtype=bool), 1.0, r)
    colsum = np.sum((pi[sup] / z[sup])[:, None] * expo[sup], axis=0)
    lower = float(-lam * dist - np.sum(pi[sup] * np.log(z[sup])) - np.log(colsum.max()))
    rate_val = one_row_mutual_information(pi, kernel)
    return kernel, dist, rate_val, {"slope": lam, "duality_gap": rate_val - lower}
