"""The baselines: the papers' programs written in plain cvxpy, as a researcher would.

``paper_*`` functions use scalar constraints exactly as the papers print them (one cvxpy
constraint per (x, x', y)); ``plain_*`` functions are the vectorised cvxpy a careful user
writes. Neither uses privopt. Each returns ``(optimal value, timings dict)``.
"""

from __future__ import annotations

import time

import cvxpy as cp
import numpy as np

from privopt.model import Distortion, hamming_neighbors


def _solve(problem: cp.Problem, solver: str) -> dict:
    start = time.perf_counter()
    problem.solve(solver=solver)
    wall = time.perf_counter() - start
    stats = problem.solver_stats
    solve = float(stats.solve_time) if stats and stats.solve_time else float("nan")
    return {
        "status": problem.status,
        "total_s": wall,
        "solve_s": solve,
        "compile_s": max(wall - solve, 0.0) if np.isfinite(solve) else float("nan"),
        "iterations": stats.num_iters if stats else None,
    }


def paper_pd_dp(p: np.ndarray, m: int, n: int, eps: float, solver: str = "CLARABEL"):
    """Wang et al. PD-DP (eqs 14–17) with scalar constraints, as printed."""
    t0 = time.perf_counter()
    N = m**n
    d = Distortion.database_hamming(m, n).matrix
    rel = hamming_neighbors(m, n)
    W = cp.Variable((N, N), nonneg=True)
    cons = [cp.sum(W[x, :]) == 1 for x in range(N)]
    c = float(np.exp(eps))
    for x, xp in zip(rel.left, rel.right, strict=True):
        for y in range(N):
            cons.append(W[x, y] <= c * W[xp, y])
    prob = cp.Problem(cp.Minimize(cp.sum(cp.multiply(p[:, None] * d, W))), cons)
    build = time.perf_counter() - t0
    info = _solve(prob, solver)
    info["build_s"] = build
    return prob.value, info


def plain_pd_dp(p: np.ndarray, m: int, n: int, eps: float, solver: str = "CLARABEL"):
    """PD-DP in vectorised plain cvxpy (one constraint over the pair list)."""
    t0 = time.perf_counter()
    N = m**n
    d = Distortion.database_hamming(m, n).matrix
    rel = hamming_neighbors(m, n)
    W = cp.Variable((N, N), nonneg=True)
    cons = [cp.sum(W, axis=1) == 1, W[rel.left, :] <= np.exp(eps) * W[rel.right, :]]
    prob = cp.Problem(cp.Minimize(cp.sum(cp.multiply(p[:, None] * d, W))), cons)
    build = time.perf_counter() - t0
    info = _solve(prob, solver)
    info["build_s"] = build
    return prob.value, info


def plain_pd_i(p: np.ndarray, m: int, n: int, eps: float, solver: str = "CLARABEL"):
    """Wang et al. PD-I as an LP in the mechanism, vectorised plain cvxpy."""
    t0 = time.perf_counter()
    N = m**n
    d = Distortion.database_hamming(m, n).matrix
    rel = hamming_neighbors(m, n)
    W = cp.Variable((N, N), nonneg=True)
    J = cp.multiply(p[:, None], W)
    cons = [cp.sum(W, axis=1) == 1, J[rel.left, :] <= np.exp(eps) * J[rel.right, :]]
    prob = cp.Problem(cp.Minimize(cp.sum(cp.multiply(p[:, None] * d, W))), cons)
    build = time.perf_counter() - t0
    info = _solve(prob, solver)
    info["build_s"] = build
    return prob.value, info


def plain_all_pairs(
    notion: str, p: np.ndarray, d: np.ndarray, eps: float, solver: str = "CLARABEL"
):
    """dp or identifiability on one alphabet with every pair of inputs neighbours (Wang et
    al. PD-DP / PD-I, eq. (15)), vectorised plain cvxpy over the ``k(k − 1)`` ordered pairs."""
    t0 = time.perf_counter()
    k, ku = d.shape
    left, right = np.nonzero(~np.eye(k, dtype=bool))
    W = cp.Variable((k, ku), nonneg=True)
    J = cp.multiply(p[:, None], W) if notion == "identifiability" else W
    cons = [cp.sum(W, axis=1) == 1, J[left, :] <= np.exp(eps) * J[right, :]]
    prob = cp.Problem(cp.Minimize(cp.sum(cp.multiply(p[:, None] * d, W))), cons)
    build = time.perf_counter() - t0
    info = _solve(prob, solver)
    info["build_s"] = build
    return prob.value, info


def plain_min_mi(p: np.ndarray, d: np.ndarray, budget: float, solver: str = "CLARABEL"):
    """min I(X;U) s.t. E[d] ≤ D with rel_entr (Calmon–Fawaz Thm 1 / PD-MIP), plain cvxpy."""
    t0 = time.perf_counter()
    k, ku = d.shape
    W = cp.Variable((k, ku), nonneg=True)
    pu = p @ W
    obj = cp.sum(
        cp.multiply(
            p[:, None], cp.rel_entr(W, np.ones((k, 1)) @ cp.reshape(pu, (1, ku), order="C"))
        )
    )
    cons = [cp.sum(W, axis=1) == 1, cp.sum(cp.multiply(p[:, None] * d, W)) <= budget]
    prob = cp.Problem(cp.Minimize(obj), cons)
    build = time.perf_counter() - t0
    info = _solve(prob, solver)
    info["build_s"] = build
    return prob.value, info


def paper_single_linear(
    notion: str, p: np.ndarray, d: np.ndarray, eps: float, solver: str = "CLARABEL"
):
    """PML / LDP / LIP / maximal leakage on one alphabet with scalar constraints."""
    t0 = time.perf_counter()
    k, ku = d.shape
    c = float(np.exp(eps))
    W = cp.Variable((k, ku), nonneg=True)
    pu = p @ W
    cons = [cp.sum(W[x, :]) == 1 for x in range(k)]
    if notion == "pml":
        cons += [W[x, u] <= c * pu[u] for x in range(k) for u in range(ku)]
    elif notion == "information_privacy":
        cons += [W[x, u] <= c * pu[u] for x in range(k) for u in range(ku)]
        cons += [pu[u] <= c * W[x, u] for x in range(k) for u in range(ku)]
    elif notion == "ldp":
        cons += [
            W[x, u] <= c * W[xp, u]
            for x in range(k)
            for xp in range(k)
            if x != xp
            for u in range(ku)
        ]
    elif notion == "maximal_leakage":
        cons += [cp.sum(cp.max(W, axis=0)) <= c]
    else:
        raise ValueError(notion)
    prob = cp.Problem(cp.Minimize(cp.sum(cp.multiply(p[:, None] * d, W))), cons)
    build = time.perf_counter() - t0
    info = _solve(prob, solver)
    info["build_s"] = build
    return prob.value, info


def plain_metric_dp(
    p: np.ndarray,
    d: np.ndarray,
    metric: np.ndarray,
    eps: float,
    pairs: tuple[np.ndarray, np.ndarray] | None = None,
    solver: str = "CLARABEL",
):
    """Metric privacy (geo-indistinguishability) as the LP of Bordenabe, Chatzikokolakis &
    Palamidessi (2014), Sec. 4, in vectorised plain cvxpy: ``W[a,u] ≤ e^{ε d(a,b)} W[b,u]``
    over every ordered pair of distinct secrets in the support (or the given ``pairs``, e.g.
    a spanner's edges), one constraint over the pair list."""
    t0 = time.perf_counter()
    k, n_out = d.shape
    support = np.flatnonzero(p > 0)
    if pairs is None:
        a, b = np.meshgrid(support, support, indexing="ij")
        keep = a != b
        left, right = a[keep], b[keep]
    else:
        left, right = pairs
    ratio = np.exp(eps * metric[left, right])[:, None]
    W = cp.Variable((k, n_out), nonneg=True)
    cons = [cp.sum(W, axis=1) == 1, W[left, :] <= cp.multiply(ratio, W[right, :])]
    prob = cp.Problem(cp.Minimize(cp.sum(cp.multiply(p[:, None] * d, W))), cons)
    build = time.perf_counter() - t0
    info = _solve(prob, solver)
    info["build_s"] = build
    return prob.value, info


def libqif_metric_dp(p: np.ndarray, d: np.ndarray, metric: np.ndarray, eps: float):
    """The same LP solved by libqif's ``mechanism.d_privacy.min_loss_given_d`` (its own LP
    over every pair), when the ``qif`` package is installed."""
    import qif

    t0 = time.perf_counter()
    C = qif.mechanism.d_privacy.min_loss_given_d(
        np.asarray(p, dtype=float),
        d.shape[1],
        lambda a, b: float(eps * metric[a, b]),
        lambda a, b: float(d[a, b]),
    )
    wall = time.perf_counter() - t0
    value = float((p[:, None] * np.asarray(C) * d).sum())
    return value, {"status": "optimal", "total_s": wall}
