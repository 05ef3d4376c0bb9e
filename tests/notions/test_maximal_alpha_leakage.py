"""Maximal α-leakage (Liao, Kosut, Sankar & Calmon 2019): the measure against independent
computations, the designs against an independent program and explicit mechanisms, the
α = ∞ equality with maximal leakage, monotonicity in α, certificates and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import privopt as po
from privopt.errors import InputError
from privopt.notions.maximal_alpha_leakage import cone_multipliers

cp = pytest.importorskip("cvxpy")

NOTION = "maximal_alpha_leakage"


def _random_channel(rng: np.random.Generator, rows: int, cols: int) -> np.ndarray:
    return rng.dirichlet(np.full(cols, 0.6), size=rows)


def _capacity_by_cvxpy(channel: np.ndarray, alpha: float) -> float:
    """``min_Q max_x D_α(C_x‖Q)`` written directly: ``t ≥ Σ_u C^α Q^{1−α}`` with cvxpy's
    ``power`` of a negative exponent (convex, decreasing), solved by Clarabel."""
    q = cp.Variable(channel.shape[1], nonneg=True)
    t = cp.Variable()
    weights = channel**alpha
    cons = [cp.sum(q) == 1, weights @ cp.power(q, 1.0 - alpha) <= t]
    cp.Problem(cp.Minimize(t), cons).solve(solver="CLARABEL")
    return math.log(t.value) / (alpha - 1.0)


def _capacity_by_scipy(channel: np.ndarray, alpha: float) -> float:
    """``max_P I_α^S(P, C)`` by scipy's SLSQP on the simplex, from a few starts."""
    from scipy.optimize import minimize

    n = channel.shape[0]
    best = -np.inf
    rng = np.random.default_rng(0)
    for start in [np.full(n, 1 / n), *rng.dirichlet(np.ones(n), size=3)]:
        result = minimize(
            lambda p: -_sibson(channel, np.clip(p, 0, None), alpha),
            start,
            method="SLSQP",
            bounds=[(0, 1)] * n,
            constraints=[{"type": "eq", "fun": lambda p: p.sum() - 1}],
            options={"ftol": 1e-14, "maxiter": 500},
        )
        best = max(best, -float(result.fun))
    return best


def _sibson(channel: np.ndarray, p: np.ndarray, alpha: float) -> float:
    """Sibson's closed form ``α/(α−1) ln Σ_u (Σ_x p(x) C[x,u]^α)^{1/α}``."""
    inner = (p[:, None] * channel**alpha).sum(axis=0) ** (1.0 / alpha)
    return alpha / (alpha - 1.0) * math.log(inner.sum())


# --- the measure -------------------------------------------------------------------------------
@pytest.mark.parametrize("alpha", [1.5, 2.0, 4.0, 20.0])
@pytest.mark.parametrize("seed", range(4))
def test_measure_equals_the_minimax_program_and_bounds_sibson(alpha, seed):
    rng = np.random.default_rng(seed)
    channel = _random_channel(rng, 4, 5)
    prior = np.full(4, 0.25)
    level = po.measures.maximal_alpha_leakage(prior, channel, alpha=alpha)
    if alpha <= 4:  # the direct program's powers Q^{1−α} scale badly beyond
        assert level == pytest.approx(_capacity_by_cvxpy(channel, alpha), abs=2e-6)
    assert level == pytest.approx(_capacity_by_scipy(channel, alpha), abs=2e-6)
    lower, upper, law, _ = po.measures.renyi_capacity(channel, alpha)
    assert lower <= upper <= lower + 1e-9 * max(1.0, lower) + 1e-15
    assert _sibson(channel, law, alpha) == pytest.approx(lower, abs=1e-10)
    for _ in range(20):  # every input law gives at most the capacity ([Liao-Alpha] Thm 2)
        assert _sibson(channel, rng.dirichlet(np.ones(4)), alpha) <= level + 1e-12


@pytest.mark.parametrize("seed", range(4))
def test_measure_is_monotone_in_alpha_between_mutual_information_and_maximal_leakage(seed):
    rng = np.random.default_rng(10 + seed)
    channel = _random_channel(rng, 5, 4)
    prior = rng.dirichlet(np.ones(5))
    levels = [
        po.measures.maximal_alpha_leakage(prior, channel, alpha=a)
        for a in (1.01, 1.5, 2, 3, 10, 100)
    ]
    assert all(b >= a - 1e-9 for a, b in zip(levels, levels[1:], strict=False))
    assert levels[0] >= po.measures.mutual_information(prior, channel) - 1e-9
    top = po.measures.maximal_leakage(prior, channel)
    assert levels[-1] <= top + 1e-9
    assert po.measures.maximal_alpha_leakage(prior, channel, alpha=math.inf) == top
    assert po.measures.maximal_alpha_leakage(prior, channel, alpha="inf") == top


def test_measure_depends_on_the_support_only_and_has_its_units():
    channel = np.array([[0.8, 0.2], [0.2, 0.8], [0.5, 0.5]])
    # the binary symmetric channel's order-2 capacity is ln(2((1 − f)² + f²)), f = 0.2
    exact = math.log(2 * (0.8**2 + 0.2**2))
    assert po.measures.maximal_alpha_leakage([0.5, 0.5, 0.0], channel, alpha=2) == pytest.approx(
        exact, abs=1e-10
    )
    assert po.measures.maximal_alpha_leakage([0.9, 0.1, 0.0], channel, alpha=2) == pytest.approx(
        exact, abs=1e-10
    )
    bits = po.measures.maximal_alpha_leakage([0.5, 0.5, 0.0], channel, alpha=2, unit="bits")
    assert bits == pytest.approx(exact / math.log(2), abs=1e-10)
    assert po.measures.maximal_alpha_leakage([0.5, 0.5, 0.0], np.ones((3, 2)) / 2, alpha=3) == 0


@pytest.mark.parametrize("bad", [1, 1.0, 0.5, -2, float("nan"), "x", None, True, [2]])
def test_measure_refuses_a_bad_order(bad):
    with pytest.raises(InputError) as info:
        po.measures.maximal_alpha_leakage([0.5, 0.5], np.eye(2), alpha=bad)
    assert info.value.field == "alpha"


# --- the dual cone -----------------------------------------------------------------------------
@settings(max_examples=200, deadline=None)
@given(
    alpha=st.floats(1.05, 50.0),
    dual=st.lists(st.floats(-3.0, 3.0), min_size=3, max_size=3),
    point=st.lists(st.floats(0.0, 5.0), min_size=2, max_size=2),
    fraction=st.floats(-1.0, 1.0),
)
def test_moved_multipliers_lie_in_the_dual_cone(alpha, dual, point, fraction):
    """Whatever the solver returns, the moved multipliers are non-negative on the cone
    ``T^{1/α} R^{1−1/α} ≥ |p|`` (the certificate's only assumption)."""
    moved = cone_multipliers(np.array(dual, dtype=float).reshape(3, 1, 1), alpha, (1, 1))
    assert moved is not None
    u, v, w = (float(x[0, 0]) for x in moved)
    t, r = point
    p = fraction * t ** (1 / alpha) * r ** (1 - 1 / alpha)  # a point of the cone
    assert u >= 0 and v >= 0
    assert u * t + v * r + w * p >= -1e-9 * (1 + abs(u * t) + abs(v * r) + abs(w * p))


# --- the designs -------------------------------------------------------------------------------
def _direct_design(prior, distortion, alpha: int, eps: float) -> float:
    """The least distortion written independently: ``Σ_u C^α Q^{1−α} ≤ e^{(α−1)ε}`` per secret
    with a normalised ``Q``, each term ``C^α Q^{1−α} ≤ t`` as ``C ≤ geo_mean(t, Q)`` with
    weights ``(1/α, 1 − 1/α)`` (second-order cones), entry by entry, solved by Clarabel."""
    n, m = distortion.shape
    W = cp.Variable((n, m), nonneg=True)
    Q = cp.Variable(m, nonneg=True)
    T = cp.Variable((n, m), nonneg=True)
    cons = [cp.sum(W, axis=1) == 1, cp.sum(Q) == 1]
    weights = [1, alpha - 1]
    for s in range(n):
        for u in range(m):
            cons.append(W[s, u] <= cp.geo_mean(cp.hstack([T[s, u], Q[u]]), weights))
        cons.append(cp.sum(T[s]) <= math.exp((alpha - 1) * eps))
    objective = cp.Minimize(cp.sum(cp.multiply(np.asarray(prior)[:, None] * distortion, W)))
    problem = cp.Problem(objective, cons)
    problem.solve(solver="CLARABEL")
    return float(problem.value)


@pytest.mark.parametrize("alpha", [2, 3])
@pytest.mark.parametrize("seed", range(3))
def test_design_equals_an_independent_program(alpha, seed):
    rng = np.random.default_rng(100 + seed)
    prior = rng.dirichlet(np.ones(3))
    distortion = rng.random((3, 3))
    eps = 0.15
    res = po.design(prior, distortion, NOTION, epsilon=eps, alpha=alpha)
    assert res.status == "optimal"
    assert res.certificate.certified
    assert res.distortion == pytest.approx(_direct_design(prior, distortion, alpha, eps), abs=1e-6)
    assert po.measures.maximal_alpha_leakage(prior, res.mechanism, alpha=alpha) <= eps + 1e-7


@pytest.mark.parametrize("seed", range(5))
def test_the_optimum_is_never_above_a_feasible_mechanism(seed):
    rng = np.random.default_rng(200 + seed)
    prior = rng.dirichlet(np.ones(4))
    distortion = rng.random((4, 4))
    for alpha in (1.5, 3.0):
        mechanism = _random_channel(rng, 4, 4)
        level = po.measures.maximal_alpha_leakage(prior, mechanism, alpha=alpha)
        cost = float(prior @ (mechanism * distortion).sum(axis=1))
        res = po.design(prior, distortion, NOTION, epsilon=level, alpha=alpha)
        assert res.status == "optimal"
        assert res.distortion <= cost + 1e-7
        budget = po.design(prior, distortion, NOTION, max_distortion=cost, alpha=alpha)
        assert budget.status == "optimal"
        assert budget.epsilon <= level + 1e-7


@pytest.mark.parametrize("mode", [{"epsilon": 0.3}, {"max_distortion": 0.3}])
def test_infinite_order_is_maximal_leakage(mode):
    prior = [0.5, 0.3, 0.2]
    ours = po.design(prior, "hamming", NOTION, alpha=math.inf, **mode)
    theirs = po.design(prior, "hamming", "maximal_leakage", **mode)
    assert ours.status == theirs.status == "optimal"
    assert ours.distortion == pytest.approx(theirs.distortion, abs=1e-9)
    assert ours.epsilon == pytest.approx(theirs.epsilon, abs=1e-9)
    assert [c.name for c in ours.closed_form] == [c.name for c in theirs.closed_form]
    assert all(c.passed for c in ours.closed_form)


def test_optimum_is_monotone_in_alpha_in_both_modes():
    rng = np.random.default_rng(7)
    prior = rng.dirichlet(np.ones(4))
    distortion = rng.random((4, 4))
    orders = (1.5, 2.0, 5.0, math.inf)
    d_star = [po.design(prior, distortion, NOTION, epsilon=0.2, alpha=a) for a in orders]
    assert all(r.status == "optimal" for r in d_star)
    values = [r.distortion for r in d_star]
    assert all(b >= a - 1e-7 for a, b in zip(values, values[1:], strict=False))
    budget = 0.5 * (values[0] + float((prior @ distortion).min()))
    e_star = [po.design(prior, distortion, NOTION, max_distortion=budget, alpha=a) for a in orders]
    assert all(r.status == "optimal" for r in e_star)
    levels = [r.epsilon for r in e_star]
    assert all(b >= a - 1e-7 for a, b in zip(levels, levels[1:], strict=False))


@pytest.mark.parametrize("mode", [{"epsilon": 0.25}, {"max_distortion": 0.35}])
def test_certificates_are_valid_lower_bounds(mode):
    prior = [0.4, 0.35, 0.25]
    distortion = np.array([[0.0, 1.0, 2.0], [1.0, 0.0, 1.0], [2.0, 1.0, 0.0]])
    res = po.design(prior, distortion, NOTION, alpha=2.5, **mode)
    assert res.status == "optimal"
    cert = res.certificate
    assert cert.certified and cert.lower_bound <= cert.objective + 1e-12
    assert cert.relative_gap <= cert.tolerance
    if "epsilon" in mode:  # the bound is below every feasible mechanism's distortion
        uniform = np.full((3, 3), 1 / 3)
        assert cert.lower_bound <= float(prior @ (uniform * distortion).sum(axis=1))


def test_level_zero_forces_the_best_constant_release():
    prior = [0.5, 0.3, 0.2]
    res = po.design(prior, "hamming", NOTION, epsilon=0.0, alpha=2)
    assert res.status == "optimal"
    assert res.distortion == pytest.approx(0.5, abs=1e-9)
    generous = po.design(prior, "hamming", NOTION, max_distortion=0.6, alpha=2)
    assert generous.epsilon == pytest.approx(0.0, abs=1e-7)
    assert any(c.name == "zero_leakage_constant_release_level" for c in generous.closed_form)


def test_closed_form_bounds_are_reported_and_hold():
    res = po.design([0.5, 0.3, 0.2], "hamming", NOTION, epsilon=0.3, alpha=2)
    checks = {c.name: c for c in res.closed_form}
    upper = checks["maximal_leakage_hamming_knapsack_bound"]
    lower = checks["rate_distortion_hamming_distortion_bound"]
    assert upper.relation == "at_most" and lower.relation == "at_least"
    assert upper.passed and lower.passed
    assert lower.expected < res.distortion < upper.expected


def test_repair_weight_restores_the_level():
    notion = po.get_notion(NOTION)
    prior = po.Prior([0.5, 0.3, 0.2])
    channel = np.array([[0.9, 0.05, 0.05], [0.1, 0.8, 0.1], [0.2, 0.2, 0.6]])
    anchor = np.array([0.2, 0.5, 0.3])
    for alpha in (2.0, math.inf):
        level = po.measures.maximal_alpha_leakage(prior, channel, alpha=alpha)
        target = 0.5 * level
        theta = notion.repair_weight(prior, channel, anchor, target, alpha=alpha)
        assert 0 < theta < 1
        mixed = (1 - theta) * channel + theta * anchor
        assert po.measures.maximal_alpha_leakage(prior, mixed, alpha=alpha) <= target + 1e-9
        assert notion.repair_weight(prior, channel, anchor, level + 1e-3, alpha=alpha) == 0


# --- methods and faces -------------------------------------------------------------------------
def test_only_power_cone_solvers_take_a_finite_order():
    with pytest.raises(InputError) as info:
        po.design([0.5, 0.5], "hamming", NOTION, epsilon=0.1, alpha=2, solver="HIGHS")
    assert info.value.field == "solver.name"
    res = po.design([0.5, 0.5], "hamming", NOTION, epsilon=0.1, alpha=math.inf, solver="HIGHS")
    assert res.status == "optimal"
    scs = po.design([0.5, 0.5], "hamming", NOTION, epsilon=0.1, alpha=2, solver="SCS")
    assert scs.status in ("optimal", "optimal_inaccurate")
    assert scs.epsilon <= 0.1 + 1e-7


@pytest.mark.parametrize("bad", [1, 0.9, "two", float("nan")])
def test_design_refuses_a_bad_order_naming_the_field(bad):
    with pytest.raises(InputError) as info:
        po.design([0.5, 0.5], "hamming", NOTION, epsilon=0.1, alpha=bad)
    assert info.value.field == "privacy.alpha"


def test_design_needs_the_order():
    with pytest.raises(InputError) as info:
        po.design([0.5, 0.5], "hamming", NOTION, epsilon=0.1)
    assert info.value.field == "privacy.alpha"


def test_problem_file_with_infinite_order_and_bad_order_from_the_cli(tmp_path, capsys):
    from privopt.cli import main

    text = (
        "title = 't'\nsource = 's'\n[prior]\nprobs = [0.5, 0.3, 0.2]\n[distortion]\n"
        'kind = "hamming"\n[privacy]\nnotion = "maximal_alpha_leakage"\nalpha = {alpha}\n'
        "epsilon = 0.4054651081081644\n"
    )
    good = tmp_path / "inf.toml"
    good.write_text(text.format(alpha="inf"))
    assert main(["solve", str(good), "--json"]) == 0
    out = capsys.readouterr().out
    import json

    data = json.loads(out)
    assert data["status"] == "optimal"
    assert data["distortion"] == pytest.approx(0.35, abs=1e-8)  # the maximal-leakage knapsack
    bad = tmp_path / "bad.toml"
    bad.write_text(text.format(alpha="1"))
    assert main(["solve", str(bad)]) == 2
    assert "privacy.alpha" in capsys.readouterr().err


def test_a_failed_cone_solve_is_retried_once_with_shorter_steps(monkeypatch):
    """Clarabel's "insufficient progress" on a power-cone program: the method tries once more
    with ``max_step_fraction`` (CONE_RETRY_OPTIONS) before it reports a failure."""
    from privopt.methods.cvxpy_program.method import CONE_RETRY_OPTIONS

    real_solve = cp.Problem.solve
    seen = []

    def flaky(self, *args, **kwargs):
        seen.append(dict(kwargs))
        if "max_step_fraction" not in kwargs:
            raise cp.SolverError("insufficient progress")
        return real_solve(self, *args, **kwargs)

    monkeypatch.setattr(cp.Problem, "solve", flaky)
    res = po.design([0.5, 0.3, 0.2], "hamming", NOTION, epsilon=0.3, alpha=2, solver="CLARABEL")
    assert res.status == "optimal" and res.certificate.certified
    assert [k.get("max_step_fraction") for k in seen[:2]] == [
        None,
        CONE_RETRY_OPTIONS["CLARABEL"]["max_step_fraction"],
    ]
