"""The linear notions' LPs written out independently as dense rows for
``scipy.optimize.linprog`` (HiGHS): the reference the fast paths are checked against."""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize


def reference_lp(notion, p, d, eps, extra=(), fixed_zero=()):
    """min Σ p(x) W[x,u] d[x,u] over row-stochastic W (row-major in the LP vector), with the
    notion's constraints at level ε written out as dense inequality rows. ``extra`` holds
    (matrix, budget) distortion constraints and ``fixed_zero`` entries (x, u) forced to 0."""
    k, ko = d.shape
    c = math.exp(eps)
    sup = np.flatnonzero(p > 0)
    n_w = k * ko
    n_var = n_w + (ko if notion == "maximal_leakage" else 0)

    def var(x, u):
        return x * ko + u

    rows = []
    if notion in ("pml", "information_privacy"):
        for x in sup:
            for u in range(ko):
                r = np.zeros(n_var)  # W[x,u] − c p(u) ≤ 0
                r[var(x, u)] += 1
                for x2 in range(k):
                    r[var(x2, u)] -= c * p[x2]
                rows.append(r)
                if notion == "information_privacy":
                    r = np.zeros(n_var)  # p(u) − c W[x,u] ≤ 0
                    for x2 in range(k):
                        r[var(x2, u)] += p[x2]
                    r[var(x, u)] -= c
                    rows.append(r)
    elif notion in ("dp", "ldp", "identifiability"):
        weight = p if notion == "identifiability" else np.ones(k)
        for x in sup:
            for x2 in sup:
                if x == x2:
                    continue
                for u in range(ko):
                    r = np.zeros(n_var)  # w(x) W[x,u] − c w(x') W[x',u] ≤ 0
                    r[var(x, u)] += weight[x]
                    r[var(x2, u)] -= c * weight[x2]
                    rows.append(r)
    elif notion == "maximal_leakage":
        for x in sup:
            for u in range(ko):
                r = np.zeros(n_var)  # W[x,u] − t_u ≤ 0
                r[var(x, u)] = 1
                r[n_w + u] = -1
                rows.append(r)
        r = np.zeros(n_var)  # Σ_u t_u ≤ e^ε
        r[n_w:] = 1
        rows.append(r)
    else:
        raise AssertionError(notion)
    b = [0.0] * len(rows)
    if notion == "maximal_leakage":
        b[-1] = c
    for matrix, budget in extra:
        r = np.zeros(n_var)
        r[:n_w] = (p[:, None] * matrix).ravel()
        rows.append(r)
        b.append(budget)
    a_eq = np.zeros((k, n_var))
    for x in range(k):
        a_eq[x, var(x, 0) : var(x, 0) + ko] = 1
    bounds = [(0, None)] * n_var
    for x, u in fixed_zero:
        bounds[var(x, u)] = (0, 0)
    cost = np.zeros(n_var)
    cost[:n_w] = (p[:, None] * d).ravel()
    res = optimize.linprog(
        cost,
        A_ub=np.array(rows) if rows else None,
        b_ub=np.array(b) if rows else None,
        A_eq=a_eq,
        b_eq=np.ones(k),
        bounds=bounds,
        method="highs",
    )
    assert res.status == 0, res.message
    return float(res.fun)
