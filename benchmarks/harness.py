"""The benchmark harness: problem families at growing size, every method against a baseline.

Every measurement runs in this process, one after the other, so the ratio to the baseline
(the plain cvxpy formulation, :mod:`benchmarks.baselines`) holds on a noisy machine. Peak
memory is the process's resident high-water mark, reset before each run through
``/proc/self/clear_refs`` (Linux); elsewhere it is reported as missing. The measuring code is
privopt's own (:mod:`privopt.comparison`, shared with ``privopt compare``).
"""

from __future__ import annotations

import csv
import functools
import gc
import math
import os
import platform
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import privopt as po
from benchmarks import baselines
from privopt import closed_forms
from privopt.comparison import measure
from privopt.request import prepare_request
from privopt.solve.selection import choose_methods, why_not

SIZES = ("smoke", "quick", "full")
#: Fast paths for the linear notions, tried where they apply.
FAST_LP = ("sparse-highs", "symmetric")
#: ... and on the single-alphabet instances.
FAST_SINGLE = ("sparse-highs", "sparse-highs-simplex", "sparse-highs-ipm-crossover")


@dataclass
class Case:
    """One problem instance and the methods to run on it."""

    family: str
    notion: str
    size: int  # number of inputs (databases or symbols)
    label: str
    baseline: Callable[[], tuple[float, dict]] | None
    methods: dict[str, Callable[[], tuple[float, dict]]]
    reference: float | None = None
    reference_what: str = ""
    extra: dict = field(default_factory=dict)


def _applies(name: str, prior, dist, notion: str, mode: str) -> bool:
    """Whether the method ``name`` is registered and applies to this instance."""
    method = po.METHODS.get(name)
    if method is None:
        return False
    point = {"epsilon": 1.0} if mode == "epsilon" else {"max_distortion": 1.0}
    return why_not(method, prepare_request(prior, dist, notion, **point)) is None


def _fast_path(method: str) -> bool:
    return method in po.METHODS and po.METHODS[method].family == "privopt"


def _privopt(prior, dist, notion, solver=None, **request) -> Callable[[], tuple[float, dict]]:
    def run():
        t0 = time.perf_counter()
        res = po.design(prior, dist, notion, solver=solver, **request)
        total = time.perf_counter() - t0
        value = res.distortion if "epsilon" in request else res.epsilon
        info = {
            "status": res.status,
            "total_s": total,
            "solve_s": res.solver.solve_time_s if res.solver else None,
            "build_s": res.solver.build_time_s if res.solver else None,
            "iterations": res.solver.iterations if res.solver else None,
            "solver": res.solver.name if res.solver else None,
            "verified": res.verified,
        }
        return value, info

    return run


def database_cases(size: str) -> list[Case]:
    """Hamming databases: dp, identifiability, mutual information (uniform / i.i.d. / arbitrary)."""
    ns = {"smoke": [3], "quick": [4, 6, 7], "full": [4, 6, 7, 8]}[size]
    eps = 1.0
    cases = []
    rng = np.random.default_rng(0)
    for n in ns:
        for kind in ("uniform", "iid", "arbitrary"):
            if kind == "uniform":
                prior = po.DatabasePrior(2, n, row_probs=[0.5, 0.5])
            elif kind == "iid":
                prior = po.DatabasePrior(2, n, row_probs=[0.6, 0.4])
            else:
                w = rng.uniform(0.5, 1.5, 2**n)
                prior = po.DatabasePrior(2, n, probs=w / w.sum())
            p = prior.probs
            dist = po.Distortion.database_hamming(2, n)
            methods = {}
            if n <= 7:  # po.design with no solver named (cvxpy, or the fast path it picks)
                methods["privopt-default"] = _privopt(prior, dist, "dp", None, epsilon=eps)
            for name in FAST_LP:
                if name == "sparse-highs" and n >= 8 and kind != "uniform":
                    continue  # the generic sparse LP takes minutes there (see README)
                if _applies(name, prior, dist, "dp", "epsilon"):
                    methods[f"privopt-{name}"] = _privopt(prior, dist, "dp", name, epsilon=eps)
            ref = closed_forms.h(eps, 2, n) if kind == "uniform" else None
            cases.append(
                Case(
                    "hamming-db",
                    "dp",
                    2**n,
                    f"m=2 n={n} {kind}",
                    (lambda p=p, n=n: baselines.plain_pd_dp(p, 2, n, eps))
                    if n <= (8 if size == "full" else 7)
                    else None,
                    methods,
                    ref,
                    "h(eps) [Wang et al. eq. 36]" if ref is not None else "",
                )
            )
            if kind != "arbitrary":
                methods_i = {}
                if n <= 7:
                    methods_i["privopt-default"] = _privopt(
                        prior, dist, "identifiability", None, epsilon=eps
                    )
                for name in FAST_LP:
                    if name == "sparse-highs" and n >= 8 and kind != "uniform":
                        continue
                    if _applies(name, prior, dist, "identifiability", "epsilon"):
                        methods_i[f"privopt-{name}"] = _privopt(
                            prior, dist, "identifiability", name, epsilon=eps
                        )
                ref_i = (
                    closed_forms.h(eps, 2, n)
                    if eps >= closed_forms.epsilon_tilde_x(prior)
                    else None
                )
                cases.append(
                    Case(
                        "hamming-db",
                        "identifiability",
                        2**n,
                        f"m=2 n={n} {kind}",
                        (lambda p=p, n=n: baselines.plain_pd_i(p, 2, n, eps))
                        if n <= (8 if size == "full" else 7)
                        else None,
                        methods_i,
                        ref_i,
                        "h(eps) [Wang et al. Thm 1]" if ref_i else "",
                    )
                )
            if kind == "uniform" and n <= 7:
                budget = closed_forms.h(eps, 2, n)
                methods_m = {
                    "privopt-cvxpy-CLARABEL": _privopt(
                        prior, dist, "mutual_information", "CLARABEL", max_distortion=budget
                    )
                }
                for name in ("blahut-arimoto", "symmetric"):
                    if _applies(name, prior, dist, "mutual_information", "max_distortion"):
                        methods_m[f"privopt-{name}"] = _privopt(
                            prior, dist, "mutual_information", name, max_distortion=budget
                        )
                cases.append(
                    Case(
                        "hamming-db",
                        "mutual_information",
                        2**n,
                        f"m=2 n={n} uniform",
                        (
                            lambda p=p, n=n, budget=budget: baselines.plain_min_mi(
                                p, po.Distortion.database_hamming(2, n).matrix, budget
                            )
                        )
                        if n <= 6
                        else None,
                        methods_m,
                        closed_forms.pdmip_value(prior, budget),
                        "PD-MIP closed form [Wang et al. Thm 2]",
                    )
                )
    return cases


def single_cases(size: str) -> list[Case]:
    """One alphabet of k symbols with |x − u| distortion and a random prior."""
    ks = {"smoke": [5], "quick": [10, 30, 60], "full": [10, 30, 60, 100, 200]}[size]
    eps = 0.5
    cases = []
    for k in ks:
        rng = np.random.default_rng(k)
        w = rng.uniform(0.2, 1.0, k)
        p = w / w.sum()
        d = np.abs(np.subtract.outer(np.arange(k), np.arange(k))).astype(float)
        prior, dist = po.Prior(p), po.Distortion.from_matrix(d)
        for notion in ("pml", "ldp", "information_privacy", "maximal_leakage"):
            # privopt-default: po.design with no solver named (the cvxpy program, or the fast
            # path its measured rule picks); privopt-cvxpy: the cvxpy program, shown when the
            # default is a fast path
            methods = {"privopt-default": _privopt(prior, dist, notion, None, epsilon=eps)}
            if _fast_path(
                choose_methods(prepare_request(prior, dist, notion, epsilon=eps))[0].name
            ):
                methods["privopt-cvxpy"] = _privopt(
                    prior, dist, notion, ["CLARABEL", "HIGHS"], epsilon=eps
                )
            for name in FAST_SINGLE:
                if name == "sparse-highs-simplex" and k > 100 and notion != "pml":
                    continue  # minutes to hours there (LIP k = 200: > 15 min)
                if _applies(name, prior, dist, notion, "epsilon"):
                    methods[f"privopt-{name}"] = _privopt(prior, dist, notion, name, epsilon=eps)
            cases.append(
                Case(
                    "single",
                    notion,
                    k,
                    f"k={k}",
                    (
                        lambda notion=notion, p=p, d=d: baselines.paper_single_linear(
                            notion, p, d, eps
                        )
                    )
                    if k <= 30
                    else None,
                    methods,
                )
            )
        budget = 0.25 * float(p @ np.abs(np.arange(k) - np.median(np.arange(k))))
        # the default is Blahut–Arimoto; privopt's own exp-cone program shown up to k = 60
        methods = {
            "privopt-default": _privopt(
                prior, dist, "mutual_information", None, max_distortion=budget
            )
        }
        if k <= 60:
            methods["privopt-cvxpy"] = _privopt(
                prior, dist, "mutual_information", "CLARABEL", max_distortion=budget
            )
        cases.append(
            Case(
                "single",
                "mutual_information",
                k,
                f"k={k}",
                (lambda p=p, d=d, budget=budget: baselines.plain_min_mi(p, d, budget))
                if k <= 200
                else None,
                methods,
            )
        )
        for notion in ("max_information_leakage",) if k <= 60 else ():
            # non-convex in general; privopt's exponential-cone program (eq. 32 multiplied
            # form) took 148 s at k = 100, so it is shown up to k = 60
            cases.append(
                Case(
                    "single",
                    notion,
                    k,
                    f"k={k}",
                    None,
                    {"privopt-default": _privopt(prior, dist, notion, None, epsilon=eps)},
                )
            )
    return cases


def target_cases(size: str, n10: bool = False) -> list[Case]:
    """The issue's headline targets that no baseline can reach: n = 30 exchangeable databases,
    an arbitrary prior at n = 10, mutual information at k = 1,000."""
    if size == "smoke":
        return []
    cases = []
    n_big = 30 if size == "full" else 16
    for rp in ([0.5, 0.5], [0.7, 0.3]):
        prior = po.DatabasePrior(2, n_big, row_probs=rp)
        dist = po.Distortion.database_hamming(2, n_big)
        for notion in ("dp", "identifiability"):
            ref = closed_forms.h(1.0, 2, n_big)
            cases.append(
                Case(
                    "targets",
                    notion,
                    2**n_big,
                    f"m=2 n={n_big} iid {rp[0]}",
                    None,
                    {"privopt-symmetric": _privopt(prior, dist, notion, "symmetric", epsilon=1.0)},
                    ref,
                    "h(eps) [Wang et al. Thm 1]",
                )
            )
        budget = closed_forms.h(closed_forms.epsilon_tilde_x(prior), 2, n_big) / 2
        cases.append(
            Case(
                "targets",
                "mutual_information",
                2**n_big,
                f"m=2 n={n_big} iid {rp[0]}",
                None,
                {
                    "privopt-symmetric": _privopt(
                        prior, dist, "mutual_information", "symmetric", max_distortion=budget
                    )
                },
                closed_forms.pdmip_value(prior, budget),
                "PD-MIP closed form [Wang et al. Thm 2]",
            )
        )
    if size == "full" and n10:
        rng = np.random.default_rng(10)
        w = rng.uniform(0.5, 1.5, 2**10)
        prior = po.DatabasePrior(2, 10, probs=w / w.sum())
        dist = po.Distortion.database_hamming(2, 10)
        cases.append(
            Case(
                "targets",
                "dp",
                2**10,
                "m=2 n=10 arbitrary",
                None,
                {"privopt-sparse-highs": _privopt(prior, dist, "dp", "sparse-highs", epsilon=1.0)},
            )
        )
    k = 1000 if size == "full" else 300
    rng = np.random.default_rng(k)
    w = rng.uniform(0.2, 1.0, k)
    p = w / w.sum()
    d = np.abs(np.subtract.outer(np.arange(k), np.arange(k))).astype(float)
    budget = 0.25 * float(p @ np.abs(np.arange(k) - np.median(np.arange(k))))
    cases.append(
        Case(
            "targets",
            "mutual_information",
            k,
            f"k={k}",
            None,
            {
                "privopt-blahut-arimoto": _privopt(
                    po.Prior(p),
                    po.Distortion.from_matrix(d),
                    "mutual_information",
                    "blahut-arimoto",
                    max_distortion=budget,
                )
            },
        )
    )
    return cases


def scale_cases(size: str) -> list[Case]:
    """The scale issue's targets: arbitrary (Dirichlet) database priors against the plain
    cvxpy PD-DP program, the single-alphabet linear notions at k = 1,000 and mutual
    information at k = 5,000 (no baseline reaches those; the targets are absolute)."""
    eps = 1.0
    rng = np.random.default_rng(16)
    shapes = {"smoke": [(2, 4)], "quick": [(2, 6), (2, 7)], "full": [(2, 7), (2, 8), (3, 5)]}
    cases = []
    for m, n in shapes[size]:
        N = m**n
        prior = po.DatabasePrior(m, n, probs=rng.dirichlet(np.ones(N)))
        dist = po.Distortion.database_hamming(m, n)
        methods = {"privopt-block-ipm": _privopt(prior, dist, "dp", "block-ipm", epsilon=eps)}
        if N <= 128:
            methods["privopt-default"] = _privopt(prior, dist, "dp", None, epsilon=eps)
        cases.append(
            Case(
                "scale",
                "dp",
                N,
                f"m={m} n={n} Dirichlet",
                lambda p=prior.probs, m=m, n=n: baselines.plain_pd_dp(p, m, n, eps),
                methods,
            )
        )
    k = {"smoke": 20, "quick": 200, "full": 1000}[size]
    w = rng.uniform(0.2, 1.0, k)
    p = w / w.sum()
    d = np.abs(np.subtract.outer(np.arange(k), np.arange(k))).astype(float)
    prior, dist = po.Prior(p), po.Distortion.from_matrix(d)
    for notion in ("pml", "ldp", "maximal_leakage", "information_privacy"):
        # the default is block-ipm from 60 x 60 on (its row names the method it used)
        methods = {"privopt-default": _privopt(prior, dist, notion, None, epsilon=0.5)}
        cases.append(Case("scale", notion, k, f"k={k}", None, methods))
    k_mi = {"smoke": 50, "quick": 1000, "full": 5000}[size]
    w = rng.uniform(0.2, 1.0, k_mi)
    p = w / w.sum()
    d = np.abs(np.subtract.outer(np.arange(k_mi), np.arange(k_mi))).astype(float)
    budget = 0.25 * float(p @ np.abs(np.arange(k_mi) - np.median(np.arange(k_mi))))
    methods = {
        "privopt-default": _privopt(
            po.Prior(p),
            po.Distortion.from_matrix(d),
            "mutual_information",
            None,
            max_distortion=budget,
        )
    }
    cases.append(Case("scale", "mutual_information", k_mi, f"k={k_mi}", None, methods))
    return cases


def pair_cases(size: str) -> list[Case]:
    """dp on small databases with an arbitrary (Dirichlet) prior, where ``block-ipm`` became
    the default from 25 inputs, and dp / identifiability on one alphabet with every pair of
    inputs neighbours, which it writes with one auxiliary per output column; against the
    plain cvxpy programs written pair by pair."""
    eps = 1.0
    rng = np.random.default_rng(25)
    shapes = {
        "smoke": [(5, 2)],
        "quick": [(5, 2), (2, 6)],
        "full": [(5, 2), (2, 5), (3, 3), (2, 6), (3, 4)],
    }
    cases = []
    for m, n in shapes[size]:
        prior = po.DatabasePrior(m, n, probs=rng.dirichlet(np.ones(m**n)))
        dist = po.Distortion.database_hamming(m, n)
        methods = {
            "privopt-default": _privopt(prior, dist, "dp", None, epsilon=eps),
            "privopt-sparse-highs": _privopt(prior, dist, "dp", "sparse-highs", epsilon=eps),
        }
        baseline = lambda p=prior.probs, m=m, n=n: baselines.plain_pd_dp(p, m, n, eps)  # noqa: E731
        cases.append(Case("pairs", "dp", m**n, f"m={m} n={n} Dirichlet", baseline, methods))
    ks = {"smoke": [20], "quick": [60], "full": [60, 100, 200]}[size]
    for k in ks:
        w = rng.uniform(0.2, 1.0, k)
        p = w / w.sum()
        d = np.abs(np.subtract.outer(np.arange(k), np.arange(k))).astype(float)
        prior, dist = po.Prior(p), po.Distortion.from_matrix(d)
        for notion in ("dp", "identifiability"):
            level = eps + (float(np.log(p.max() / p.min())) if notion == "identifiability" else 0)
            methods = {"privopt-default": _privopt(prior, dist, notion, None, epsilon=level)}
            baseline = None
            if k <= 60:  # k(k − 1)·k pair rows: 212,400 at k = 60
                baseline = lambda notion=notion, p=p, d=d, level=level: (  # noqa: E731
                    baselines.plain_all_pairs(notion, p, d, level)
                )
            cases.append(Case("pairs", notion, k, f"k={k} all pairs", baseline, methods))
    return cases


def _exchangeable_prior(m: int, n: int, alpha) -> po.DatabasePrior:
    """A Dirichlet-multinomial prior on ``mⁿ`` databases: rows exchangeable (a database's
    probability depends only on its value counts), not independent."""
    from scipy.special import gammaln

    index = np.arange(m**n)
    digits = (index[:, None] // m ** np.arange(n - 1, -1, -1)) % m
    counts = np.stack([(digits == a).sum(axis=1) for a in range(m)], axis=1)
    alpha = np.asarray(alpha, dtype=float)
    log_p = gammaln(alpha + counts).sum(axis=1) - gammaln(alpha.sum() + n)
    probs = np.exp(log_p - log_p.max())
    return po.DatabasePrior(m, n, probs=probs / probs.sum())


def symmetry_cases(size: str) -> list[Case]:
    """Data-driven symmetry (``sparse-highs-symmetry``): exchangeable but not independent
    database priors (PD-DP, against the plain cvxpy program and ``block-ipm``, the default
    before), uniform maps for geo-indistinguishability (against the all-pairs LP in plain
    cvxpy and ``sparse-clarabel``), and a reflection-symmetric prior on a line."""
    eps = 1.0
    shapes = {
        "smoke": [(2, 4)],
        "quick": [(2, 6), (2, 7)],
        "full": [(2, 7), (2, 8), (3, 5), (2, 9), (2, 10)],
    }
    cases = []
    for m, n in shapes[size]:
        prior = _exchangeable_prior(m, n, [2.0, 5.0, 3.0][:m])
        dist = po.Distortion.database_hamming(m, n)
        methods = {"privopt-default": _privopt(prior, dist, "dp", None, epsilon=eps)}
        baseline = None  # plain cvxpy needs 78 s at 2⁸; 2⁹ and 2¹⁰ are not run
        if m**n <= 256:
            methods["privopt-block-ipm"] = _privopt(prior, dist, "dp", "block-ipm", epsilon=eps)
            baseline = lambda p=prior.probs, m=m, n=n: baselines.plain_pd_dp(p, m, n, eps)  # noqa: E731
        cases.append(Case("symmetry", "dp", m**n, f"m={m} n={n} exchangeable", baseline, methods))
    for n in {"smoke": [3], "quick": [6], "full": [6, 8, 10]}[size]:
        grid = po.LocationGrid(n, n)
        prior, metric = grid.prior(), grid.metric()
        d = metric.matrix
        request = {"epsilon": 0.5, "metric": metric}
        methods = {"privopt-default": _privopt(prior, d, "metric_dp", None, **request)}
        if n <= 8:  # the full 10 × 10 LP (621k rows) did not finish in 38 min on this machine
            methods["privopt-sparse-clarabel"] = _privopt(
                prior, d, "metric_dp", "sparse-clarabel", **request
            )
        baseline = (
            (lambda p=prior.probs, d=d: baselines.plain_metric_dp(p, d, d, 0.5)) if n <= 8 else None
        )
        cases.append(
            Case("symmetry", "metric_dp", n * n, f"{n}x{n} uniform map", baseline, methods)
        )
    k = {"smoke": 20, "quick": 100, "full": 200}[size]
    half = np.random.default_rng(7).uniform(0.2, 1.0, (k + 1) // 2)
    weights = np.concatenate([half, half[: k // 2][::-1]])
    prior = po.Prior(weights / weights.sum())
    d = np.abs(np.subtract.outer(np.arange(k), np.arange(k))).astype(float)
    for notion in ("pml", "ldp"):
        methods = {
            "privopt-default": _privopt(prior, d, notion, None, epsilon=0.5),
            "privopt-block-ipm": _privopt(prior, d, notion, "block-ipm", epsilon=0.5),
            "privopt-symmetry": _privopt(prior, d, notion, "sparse-highs-symmetry", epsilon=0.5),
        }
        cases.append(Case("symmetry", notion, k, f"k={k} reflection-symmetric", None, methods))
    return cases


def _privopt_extra(prior, dist, notion, solver=None, **request):
    """:func:`_privopt` that also records the result's ``extra`` (the spanner guarantee)."""

    def run():
        t0 = time.perf_counter()
        res = po.design(prior, dist, notion, solver=solver, **request)
        total = time.perf_counter() - t0
        info = {
            "status": res.status,
            "total_s": total,
            "solve_s": res.solver.solve_time_s if res.solver else None,
            "build_s": res.solver.build_time_s if res.solver else None,
            "iterations": res.solver.iterations if res.solver else None,
            "solver": res.solver.name if res.solver else None,
            "verified": res.verified,
            "extra": dict(res.extra),
        }
        return res.distortion, info

    return run


def metric_cases(size: str) -> list[Case]:
    """Geo-indistinguishability on an n × n map: Euclidean metric and distortion, visit counts
    drawn at random, ε = 0.5 per cell side. Exact LPs against the all-pairs LP in plain cvxpy
    (and libqif where installed); 1.1-spanners on the larger maps."""
    exact = {"smoke": [3], "quick": [4, 6, 8], "full": [4, 6, 8, 10]}[size]
    spanner = {"smoke": [], "quick": [10], "full": [10, 20, 30]}[size]
    eps = 0.5
    cases = []
    try:
        import qif  # noqa: F401

        has_qif = True
    except ImportError:
        has_qif = False
    for n, stretch in [(n, None) for n in exact] + [(n, 1.1) for n in spanner]:
        rng = np.random.default_rng(n)
        grid = po.LocationGrid(n, n, counts=rng.integers(1, 20, (n, n)))
        prior, metric = grid.prior(), grid.metric()
        d = metric.matrix
        p = prior.probs
        request = {"epsilon": eps, "metric": metric}
        if stretch is not None:
            request["spanner"] = stretch
        if n >= 20:
            request["time_limit"] = 900.0
        methods = {"privopt-default": _privopt_extra(prior, d, "metric_dp", None, **request)}
        if n <= 8:
            methods["privopt-sparse-highs"] = _privopt_extra(
                prior, d, "metric_dp", "sparse-highs", **request
            )
        if stretch is None:
            baseline = (
                (lambda p=p, d=d: baselines.plain_metric_dp(p, d, d, eps)) if n <= 10 else None
            )
            if has_qif and n <= 8:
                methods["libqif"] = lambda p=p, d=d: baselines.libqif_metric_dp(p, d, d, eps)
            label = f"{n}x{n} exact"
        else:
            edges = metric.spanner(stretch)
            baseline = (
                (
                    lambda p=p, d=d, e=edges: baselines.plain_metric_dp(
                        p, d, d, eps, pairs=(e.left, e.right)
                    )
                )
                if n <= 20
                else None
            )
            label = f"{n}x{n} spanner {stretch:g}"
        cases.append(
            Case(
                "metric",
                "metric_dp",
                n * n,
                label,
                baseline,
                methods,
                reference_what="best value found (the same LP for every method)",
            )
        )
    return cases


def _curve_instances(size: str) -> list[tuple]:
    """(label, prior, distortion, notion) of the curve family at ``size``."""

    def single(k: int, seed: int = 3):
        rng = np.random.default_rng(seed)
        w = rng.uniform(0.2, 1.0, k)
        d = np.abs(np.subtract.outer(np.arange(k), np.arange(k))).astype(float)
        return po.Prior(w / w.sum()), d

    if size == "smoke":
        return [
            ("k=6, pml", *single(6), "pml"),
            ("k=6, mutual_information", *single(6), "mutual_information"),
        ]
    iid6 = po.DatabasePrior(2, 6, row_probs=[0.6, 0.4])
    out = [
        ("m=2 n=6 iid, dp", iid6, "hamming", "dp"),
        ("k=30, pml", *single(30), "pml"),
        ("k=30, mutual_information", *single(30), "mutual_information"),
    ]
    if size == "full":
        arbitrary = po.DatabasePrior(2, 6, probs=np.random.default_rng(3).dirichlet(np.ones(64)))
        out += [
            ("m=2 n=6 arbitrary prior, dp", arbitrary, "hamming", "dp"),
            ("k=30, ldp", *single(30), "ldp"),
            ("k=30, information_privacy", *single(30), "information_privacy"),
            ("k=70, pml", *single(70), "pml"),
            ("k=200, mutual_information", *single(200), "mutual_information"),
            # one solve above 1 s (the target there is a curve within ×2 of one solve)
            ("k=1500, mutual_information", *single(1500), "mutual_information"),
        ]
    return out


def _time_one(run: Callable[[], object]) -> float:
    """Wall time of one call: the median of 5 when a call takes under half a second (single
    timings of millisecond solves vary by ×2 on a shared machine), else one call."""
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
        if times[0] >= 0.5:
            break
    return float(np.median(times))


def curve_cases(size: str, executor=None) -> list[dict]:
    """A privacy–distortion curve (50 points; 5 at the smoke size) against one solve.

    Three references, all measured here: ``one_default_s`` is ``po.design`` at ε = 1 with no
    solver named (what a user runs once), ``one_same_method_s`` the same method as the sweep
    solved cold at ε = 1 (both by :func:`_time_one`), and ``cvxpy_dpp_curve_s`` the curve
    re-solved through the cvxpy program's Parameter without warm starts (the previous
    ``sweep``), for the instances where that takes under a minute or so.
    """
    calls = [(_curve_task, size, instance) for instance in _curve_instances(size)]
    if executor is not None:
        return _submit_all(executor, calls)
    return [fn(*args) for fn, *args in calls]


def _curve_row(size: str, label: str, pr, dist, notion: str) -> dict:
    """Measure one curve instance in this process (see :func:`curve_cases`)."""
    n_points = 5 if size == "smoke" else 50
    eps = np.linspace(0.05, 3.0, n_points)
    gc.collect()
    one = po.design(pr, dist, notion, epsilon=1.0)  # imports and caches, not timed
    one_default = _time_one(functools.partial(po.design, pr, dist, notion, epsilon=1.0))
    t0 = time.perf_counter()
    curve = po.sweep(pr, dist, notion, epsilons=eps)
    many = time.perf_counter() - t0
    method = curve.results[0].solver.name if curve.results[0] else "?"
    if _fast_path(method):
        one_same = _time_one(
            functools.partial(po.design, pr, dist, notion, epsilon=1.0, solver=method)
        )
    else:
        one_same = one_default
    dpp = float("nan")
    slow = notion == "mutual_information" and pr.n_inputs > 30
    if _fast_path(method) and not slow and size != "smoke":
        chain = "CLARABEL" if notion == "mutual_information" or pr.n_inputs > 60 else "HIGHS"
        t0 = time.perf_counter()
        po.sweep(pr, dist, notion, epsilons=eps, solver=chain)
        dpp = time.perf_counter() - t0
    ok = sum(r["status"].startswith("optimal") for r in curve.records)
    return {
        "curve": label,
        "points": n_points,
        "method": method,
        "one_default_method": one.solver.name,
        "one_default_s": one_default,
        "one_same_method_s": one_same,
        "curve_s": many,
        "ratio_vs_default": many / one_default,
        "ratio_vs_same_method": many / one_same,
        "cvxpy_dpp_curve_s": dpp,
        "points_optimal": ok,
        "worker": _where(),
    }


def _measure(run: Callable[[], tuple[float, dict]]) -> tuple[float, dict]:
    """Run one measurement with privopt's own measuring code (:func:`privopt.comparison.measure`,
    which ``privopt compare`` uses too); a failure is recorded instead of stopping the run."""
    outcome, measured = measure(run)
    if measured.error is not None:
        exc = measured.error
        value, info = float("nan"), {"status": f"error: {type(exc).__name__}: {exc}"[:200]}
    else:
        value, info = outcome
    info["peak_mb"] = measured.peak_mb
    return value, info


def _where() -> str:
    """The host and process a measurement ran in."""
    return f"{platform.node()}:{os.getpid()}"


def _case_task(case: Case) -> tuple[list[dict], list[str]]:
    """One case measured where the task runs (its rows and log lines)."""
    lines: list[str] = []
    return _case_rows(case, lines.append), lines


def _curve_task(size: str, instance: tuple) -> dict:
    """One curve instance measured where the task runs."""
    return _curve_row(size, *instance)


def _submit_all(executor, calls: list[tuple]) -> list:
    """Run ``fn(*args)`` for each of ``calls`` on ``executor``; results in order.

    The benchmark modules are pickled by value, so that the workers of a remote cluster need
    privopt installed but not this folder.
    """
    import concurrent.futures as cf

    import cloudpickle

    from benchmarks import baselines as _baselines
    from privopt.solve.batch import resolve_executor

    for module in (sys.modules[__name__], _baselines):
        cloudpickle.register_pickle_by_value(module)
    pool = resolve_executor(executor)
    futures = [pool.submit(fn, *args) for fn, *args in calls]
    cf.wait(futures)
    return [f.result() for f in futures]


def run_cases(cases: list[Case], log: Callable[[str], None] = print, executor=None) -> list[dict]:
    """Run every case's baseline and methods; return one row per (case, method).

    Parameters
    ----------
    cases : list of Case
    log : callable
        Receives one line per measurement.
    executor : Executor or distributed.Client, optional
        Run each case (its baseline and every method, one after the other, so that the
        ratios hold) as one task there; the rows say where (``worker``).

    Returns
    -------
    list of dict
    """
    if executor is None:
        rows = []
        for case in cases:
            rows += _case_rows(case, log)
        return rows
    rows = []
    for case_rows, lines in _submit_all(executor, [(_case_task, case) for case in cases]):
        rows += case_rows
        for line in lines:
            log(line)
    return rows


def _case_rows(case: Case, log: Callable[[str], None]) -> list[dict]:
    """Measure one case's baseline and methods in this process."""
    rows = []
    worker = _where()
    base_value, base_info = (float("nan"), {"total_s": float("nan"), "status": "skipped"})
    if case.baseline is not None:
        base_value, base_info = _measure(case.baseline)
    results = {"baseline": (base_value, base_info)}
    for name, run in case.methods.items():
        results[name] = _measure(run)
    best = [v for v, _ in results.values() if isinstance(v, float) and math.isfinite(v)]
    target = case.reference if case.reference is not None else (min(best) if best else None)
    for name, (value, info) in results.items():
        ratio = (
            base_info["total_s"] / info["total_s"]
            if info.get("total_s") and math.isfinite(base_info.get("total_s", math.nan))
            else float("nan")
        )
        row = {
            "family": case.family,
            "notion": case.notion,
            "instance": case.label,
            "size": case.size,
            "method": name,
            "status": info.get("status"),
            "value": value,
            "error": abs(value - target)
            if target is not None and math.isfinite(value)
            else float("nan"),
            "error_against": case.reference_what or "best value found",
            "total_s": info.get("total_s", float("nan")),
            "build_s": info.get("build_s", float("nan")),
            "solve_s": info.get("solve_s", float("nan")),
            "compile_s": info.get("compile_s", float("nan")),
            "iterations": info.get("iterations"),
            "peak_mb": info.get("peak_mb", float("nan")),
            "speedup_vs_baseline": ratio,
            "worker": worker,
            "note": _note(info),
        }
        rows.append(row)
        log(
            f"{case.family:11s} {case.notion:24s} {case.label:22s} {name:28s} "
            f"{row['total_s']:9.4f}s  x{ratio:9.1f}  err {row['error']:.2e}  {row['status']}"
            + (f"  {row['note']}" if row["note"] else "")
        )
    return rows


def _note(info: dict) -> str:
    """The method and, for a spanner, its guarantee and the exact metric level measured."""
    parts = []
    if info.get("solver"):
        parts.append(f"method={info['solver']}")
    extra = info.get("extra") or {}
    if "spanner_stretch" in extra:
        parts.append(
            f"spanner edges={extra.get('spanner_edges')} guaranteed level "
            f"{extra.get('guaranteed_metric_level', float('nan')):.4g}, exact level "
            f"{extra.get('metric_level', float('nan')):.4g}"
        )
    return "; ".join(parts)


COLUMNS = [
    "family",
    "notion",
    "instance",
    "size",
    "method",
    "status",
    "value",
    "error",
    "error_against",
    "total_s",
    "build_s",
    "compile_s",
    "solve_s",
    "iterations",
    "peak_mb",
    "speedup_vs_baseline",
    "worker",
    "note",
]


def write_outputs(rows: list[dict], out_dir: Path, tag: str) -> dict[str, Path]:
    """CSV, a markdown table and a log-log plot of time against size per method."""
    out_dir.mkdir(parents=True, exist_ok=True)
    csv_path = out_dir / f"{tag}.csv"
    with csv_path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS)
        writer.writeheader()
        for row in rows:
            writer.writerow({k: row.get(k) for k in COLUMNS})
    md_path = out_dir / f"{tag}.md"
    lines = [
        f"Machine: {platform.machine()}, {platform.python_version()}, privopt {po.__version__}.",
        "",
        "| family | notion | instance | method | time (s) | speed-up vs baseline | error | "
        "peak MB | status |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['family']} | {r['notion']} | {r['instance']} | {r['method']} | "
            f"{_fmt(r['total_s'])} | {_fmt(r['speedup_vs_baseline'], '.1f')} | "
            f"{_fmt(r['error'], '.1e')} | {_fmt(r['peak_mb'], '.0f')} | {r['status']} |"
        )
    md_path.write_text("\n".join(lines) + "\n")
    paths = {"csv": csv_path, "markdown": md_path}
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return paths
    groups = sorted({(r["family"], r["notion"]) for r in rows})
    fig, axes = plt.subplots(1, len(groups), figsize=(4.2 * len(groups), 3.8), squeeze=False)
    for ax, (family, notion) in zip(axes[0], groups, strict=True):
        sel = [r for r in rows if r["family"] == family and r["notion"] == notion]
        for method in sorted({r["method"] for r in sel}):
            pts = sorted(
                (r["size"], r["total_s"])
                for r in sel
                if r["method"] == method
                and isinstance(r["total_s"], float)
                and math.isfinite(r["total_s"])
                and str(r["status"]).startswith("optimal")
            )
            if pts:
                ax.loglog(*zip(*pts, strict=True), marker="o", label=method)
        ax.set_title(f"{family}: {notion}", fontsize=9)
        ax.set_xlabel("problem size (inputs)")
        ax.set_ylabel("wall time (s)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=6)
    fig.tight_layout()
    png = out_dir / f"{tag}.png"
    fig.savefig(png, dpi=110)
    plt.close(fig)
    paths["plot"] = png
    return paths


def _fmt(value, spec: str = ".4g") -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "—"
    return format(value, spec)


def run(
    size: str = "quick",
    families=("hamming-db", "single"),
    out_dir: Path | None = None,
    log: Callable[[str], None] = print,
    executor=None,
) -> tuple[list[dict], dict[str, Path]]:
    """Run the benchmark families at ``size`` and write the outputs.

    With ``executor`` (a :class:`concurrent.futures.Executor` or a Dask
    ``distributed.Client``) each case and each curve is one task, measured where it runs
    (ratios are within a task, so they hold; the ``worker`` column says where).
    """
    if size not in SIZES:
        raise ValueError(f"size must be one of {SIZES}")
    cases: list[Case] = []
    if "hamming-db" in families:
        cases += database_cases(size)
    if "single" in families:
        cases += single_cases(size)
    if "targets" in families:
        cases += target_cases(size)
    if "metric" in families:
        cases += metric_cases(size)
    if "scale" in families:
        cases += scale_cases(size)
    if "symmetry" in families:
        cases += symmetry_cases(size)
    if "pairs" in families:
        cases += pair_cases(size)
    rows = run_cases(cases, log, executor)
    out_dir = out_dir or Path(__file__).parent / "results"
    paths = write_outputs(rows, out_dir, size) if rows else {}
    if "curves" in families:
        curves = curve_cases(size, executor)
        for c in curves:
            log(
                f"curve {c['curve']:30s} [{c['method']}] one solve {c['one_default_s']:.3f}s "
                f"(same method {c['one_same_method_s']:.3f}s), {c['points']} points "
                f"{c['curve_s']:.3f}s: x{c['ratio_vs_default']:.1f} / "
                f"x{c['ratio_vs_same_method']:.1f}; DPP cvxpy curve {c['cvxpy_dpp_curve_s']:.2f}s; "
                f"optimal {c['points_optimal']}/{c['points']}"
            )
        if curves:
            out_dir.mkdir(parents=True, exist_ok=True)
            path = out_dir / f"{size}-curves.csv"
            with path.open("w", newline="") as fh:
                writer = csv.DictWriter(fh, fieldnames=list(curves[0]))
                writer.writeheader()
                writer.writerows(curves)
            paths["curves"] = path
    return rows, paths
