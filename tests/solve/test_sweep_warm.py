"""Sweeps through warm-started fast paths, and the automatic choice of a fast path.

Oracles: the cvxpy programs solved cold at each point (an independent route through the
solver layer), and Blahut–Arimoto / simplex solves without a warm start.
"""

from __future__ import annotations

import numpy as np
import pytest

import privopt as po
from privopt import measures
from privopt.methods import METHODS, Answer, Certificate, Method, solve_point
from privopt.methods.blahut_arimoto import distortion_rate
from privopt.request import prepare_request
from privopt.solve import choose_methods
from privopt.status import Status


def pick_algorithm(request, solver, sweep=False):
    """The fast path the driver tries first (``None``: the cvxpy program)."""
    first = choose_methods(request, solver, sweep=sweep)[0]
    return first if first.family == "privopt" else None


def _instance(k: int, seed: int):
    rng = np.random.default_rng(seed)
    w = rng.uniform(0.2, 1.0, k)
    prior = po.Prior(w / w.sum())
    d = np.abs(np.subtract.outer(np.arange(k), np.arange(k))).astype(float)
    return prior, d


def _as_solved(d: np.ndarray) -> np.ndarray:
    """``d`` as the driver hands it to a method: divided by the power of two that brings its
    largest entry into [1, 2) (:func:`privopt.solve.driver.distortion_scale`), so that a
    method called directly sees the same numbers as through the driver."""
    return d / 2.0 ** np.floor(np.log2(d.max()))


@pytest.mark.parametrize("notion", ["pml", "ldp", "maximal_leakage", "information_privacy", "dp"])
def test_single_alphabet_lp_sweep_is_warm_and_matches_cold_cvxpy(notion):
    prior, d = _instance(9, seed=1)
    eps = np.linspace(0.1, 2.5, 12)
    curve = po.sweep(prior, d, notion, epsilons=eps)
    cap = po.get_notion(notion).max_level(prior)  # beyond it: the unconstrained answer
    for value, r in zip(eps, curve.results, strict=True):
        expected = "closed form (the limit ε → ∞)" if value >= cap else "sparse-highs-simplex"
        assert r.solver.name == expected
    assert all(r.status == "optimal" and r.verified for r in curve.results)
    for value, result in zip(eps, curve.results, strict=True):
        cold = po.design(prior, d, notion, epsilon=value, solver="CLARABEL")
        assert result.distortion == pytest.approx(cold.distortion, rel=1e-6, abs=1e-7)
        assert result.distortion <= cold.distortion + 1e-9  # a vertex: at least as good
        assert result.epsilon <= value + 1e-9
        W = result.mechanism.matrix
        assert np.all(W >= 0)
        np.testing.assert_allclose(W.sum(axis=1), 1.0, atol=1e-12)
    d_star = curve.column("distortion")
    assert np.all(np.diff(d_star) <= 1e-9)  # D*(ε) is non-increasing


def test_simplex_sweep_reuses_the_basis():
    """Each point starts from the previous basis: fewer simplex iterations than cold."""
    prior, d = _instance(25, seed=2)
    d = _as_solved(d)
    eps = np.linspace(0.2, 2.0, 10)
    warm, cold, prev = 0, 0, None
    name = "sparse-highs-simplex"
    for value in eps:
        prev = solve_point(name, prior, d, "pml", epsilon=value, warm=prev.warm if prev else None)
        assert prev.details["warm_started"] == (value != eps[0])
        warm += prev.iterations
        cold += solve_point(name, prior, d, "pml", epsilon=value).iterations
    assert warm < 0.8 * cold
    curve = po.sweep(prior, d, "pml", epsilons=eps)
    assert sum(r.solver.iterations for r in curve.results) == warm


def test_mutual_information_defaults_to_blahut_arimoto_and_sweeps_warm():
    prior, d = _instance(12, seed=3)
    one = po.design(prior, d, "mutual_information", epsilon=0.8)
    assert one.solver.name == "blahut-arimoto"
    assert one.certificate.gap <= 1e-9 and one.certificate.certified
    ref = po.design(prior, d, "mutual_information", epsilon=0.8, solver="CLARABEL")
    assert one.distortion <= ref.distortion + 1e-7  # certified, at least as good as Clarabel
    assert one.distortion == pytest.approx(ref.distortion, abs=1e-6)

    eps = np.linspace(0.05, 2.0, 15)
    curve = po.sweep(prior, d, "mutual_information", epsilons=eps)
    assert all(r.solver.name == "blahut-arimoto" for r in curve.results)
    for value, result in zip(eps, curve.results, strict=True):
        cold = distortion_rate(prior, d, value)
        assert result.distortion == pytest.approx(cold.distortion, abs=1e-8)
        assert result.epsilon <= value + 1e-9
    warm_iterations = sum(r.solver.iterations for r in curve.results)
    cold_iterations = sum(distortion_rate(prior, d, v).iterations for v in eps)
    assert warm_iterations < cold_iterations


def test_budget_sweep_line_search_is_warm_and_feasible():
    prior, d = _instance(8, seed=4)
    budgets = np.linspace(0.3, 1.5, 6)
    curve = po.sweep(prior, d, "pml", max_distortions=budgets)
    for budget, result in zip(budgets, curve.results, strict=True):
        assert result.solver.name == "sparse-highs-simplex"
        assert result.distortion <= budget + 1e-9
        cold = po.design(prior, d, "pml", max_distortion=budget, solver="CLARABEL")
        assert result.epsilon == pytest.approx(cold.epsilon, abs=2e-7)


def test_maximal_leakage_budget_sweep_stays_on_cvxpy():
    """The sparse LP works at a given ε; maximal leakage's least level is a direct program."""
    prior, d = _instance(6, seed=5)
    curve = po.sweep(prior, d, "maximal_leakage", max_distortions=[0.5, 1.0])
    assert all(r.status == "optimal" for r in curve.results)
    assert all(METHODS[r.solver.name].family == "cvxpy" for r in curve.results)


@pytest.mark.parametrize(
    "notion, k, sweep, expected",
    [
        ("pml", 30, False, "sparse-highs"),  # small single solves: the sparse LP, HiGHS
        ("pml", 30, True, "sparse-highs-simplex"),
        ("pml", 70, False, "block-ipm"),  # single solves from 60 x 60 on
        ("pml", 70, True, "sparse-highs-simplex"),
        ("pml", 201, True, "block-ipm"),  # sweeps beyond the simplex's measured range
        ("information_privacy", 30, True, "sparse-highs-simplex"),
        ("information_privacy", 60, False, "block-ipm"),
        ("information_privacy", 71, True, "block-ipm"),  # sweeps beyond 70 x 70
        ("maximal_leakage", 100, False, "block-ipm"),
        ("ldp", 30, True, "sparse-highs-simplex"),
        ("ldp", 100, True, "block-ipm"),
        ("ldp", 100, False, "block-ipm"),
        ("ldp", 50, False, "sparse-highs"),  # below 60 x 60
        ("mutual_information", 5, False, "blahut-arimoto"),
        ("dp", 50, True, "sparse-highs-simplex"),  # dp / identifiability up to 2,500 entries
        ("identifiability", 30, True, "sparse-highs-simplex"),
        ("dp", 51, True, None),
        ("dp", 30, False, "sparse-highs"),
        ("dp", 100, False, "block-ipm"),  # all pairs neighbours: LDP's program
    ],
)
def test_automatic_choice_follows_the_measured_rule(notion, k, sweep, expected):
    prior, d = _instance(k, seed=6)
    request = prepare_request(prior, d, notion, epsilon=1.0)
    picked = pick_algorithm(request, None, sweep=sweep)
    assert (picked.name if picked else None) == expected


def test_named_cvxpy_solver_disables_fast_paths():
    prior, d = _instance(10, seed=7)
    request = prepare_request(prior, d, "mutual_information", epsilon=1.0)
    assert pick_algorithm(request, "CLARABEL") is None
    assert pick_algorithm(request, ["CLARABEL", "SCS"]) is None


def test_dp_on_two_to_the_six_databases_never_picks_the_simplex():
    rng = np.random.default_rng(8)
    prior = po.DatabasePrior(2, 6, probs=rng.dirichlet(np.ones(64)))
    request = prepare_request(prior, "hamming", "dp", epsilon=1.0)
    for sweep in (False, True):
        picked = pick_algorithm(request, None, sweep=sweep)
        assert picked is None or picked.name != "sparse-highs-simplex"


class _Canned(Method):
    """A method that returns a fixed mechanism with a lower bound ``gap`` below it."""

    family = "privopt"

    def __init__(self, name, matrix, gap):
        self.name, self.matrix, self.gap = name, matrix, gap

    def unsupported(self, request):
        return None

    def solve(self, task):
        request = task.request
        dist = request.distortion_of(self.matrix)
        return Answer(
            Status.OPTIMAL,
            self.name,
            matrix=self.matrix,
            objective=dist,
            certificate=Certificate(dist - self.gap, "canned"),
        )


def test_fast_path_with_a_loose_certificate_is_reported_inaccurate(monkeypatch):
    """A method whose lower bound leaves a gap above the 1e-6 relative tolerance returns a
    feasible, verified mechanism with status ``optimal_inaccurate`` (after every method of
    its chain was tried); a tight bound makes it ``optimal``."""
    prior, d = _instance(4, seed=9)
    d = _as_solved(d)  # the canned gap is in the units the method is given
    exact = po.design(prior, d, "pml", epsilon=0.5, solver="sparse-highs-simplex")
    W = exact.mechanism.matrix
    monkeypatch.setitem(METHODS, "test-loose", _Canned("test-loose", W, 1e-3))
    res = po.design(prior, d, "pml", epsilon=0.5, solver="test-loose")
    assert res.status == "optimal_inaccurate" and res.verified
    assert res.certificate.gap == pytest.approx(1e-3) and not res.certificate.certified
    monkeypatch.setitem(METHODS, "test-tight", _Canned("test-tight", W, 1e-12))
    assert po.design(prior, d, "pml", epsilon=0.5, solver="test-tight").status == "optimal"
    # with a fallback after it, the loose answer hands over to a method that certifies
    res = po.design(prior, d, "pml", epsilon=0.5, solver=["test-loose", "HIGHS"])
    assert res.status == "optimal" and res.solver.name == "HIGHS"
    assert res.solver.tried == ["test-loose", "HIGHS"]
    assert res.solver.attempts[0].status == "optimal_inaccurate"


@pytest.mark.parametrize("notion", ["pml", "information_privacy"])
def test_interior_point_with_crossover_is_exact(notion):
    """The interior point with crossover (the fallback after block-ipm for PML / LIP) ends
    at a vertex: it matches the simplex to 1e-9 with a duality gap at round-off; the default
    (block-ipm) is certified within 1e-6 of it."""
    prior, d = _instance(60, seed=10)
    res = po.design(prior, d, notion, epsilon=0.7, solver="sparse-highs-ipm-crossover")
    assert res.status == "optimal"
    assert abs(res.certificate.gap) <= 1e-9
    simplex = po.design(prior, d, notion, epsilon=0.7, solver="sparse-highs-simplex")
    assert res.distortion == pytest.approx(simplex.distortion, abs=1e-9)
    assert res.epsilon <= 0.7 + 1e-9
    default = po.design(prior, d, notion, epsilon=0.7)
    assert default.solver.name == "block-ipm" and default.status == "optimal"
    assert default.certificate.lower_bound <= simplex.distortion + 1e-9
    assert default.distortion == pytest.approx(simplex.distortion, rel=1e-6)


def test_results_and_curves_pickle_without_their_warm_state():
    import copy
    import pickle

    prior, d = _instance(8, seed=11)
    result = po.design(prior, d, "pml", epsilon=0.5, solver="sparse-highs-simplex")
    assert result.warm_state is not None
    again = pickle.loads(pickle.dumps(result))
    assert again.warm_state is None and again.distortion == result.distortion
    assert again.leakage["pml"] == pytest.approx(result.leakage["pml"], abs=0)
    assert copy.deepcopy(result).mechanism.matrix.tolist() == result.mechanism.matrix.tolist()
    curve = po.sweep(prior, d, "pml", epsilons=[0.3, 0.6])
    assert len(pickle.loads(pickle.dumps(curve))) == 2


@pytest.mark.parametrize("mode", ["epsilon", "max_distortion"])
def test_blahut_arimoto_reuses_the_previous_slopes_of_the_same_instance(mode, monkeypatch):
    """A solve warm-started from a result of the same instance reuses its s = ∞ point and
    final bracket (fewer slope solves) and gives the cold answer; a result of another
    instance only lends its output law."""
    from privopt.methods.blahut_arimoto import rate_distortion

    prior, d = _instance(40, seed=5)
    other, _ = _instance(40, seed=6)
    D_max = float(np.min(prior.probs @ d))
    levels = (0.6, 0.75) if mode == "epsilon" else (0.3 * D_max, 0.26 * D_max)
    solve = distortion_rate if mode == "epsilon" else rate_distortion
    first = solve(prior, d, levels[0])
    assert first.status == "optimal" and first.carried
    assert any(np.isinf(pt.s) for pt in first.carried[2])
    assert all(pt.W is None for pt in first.carried[2])  # output laws only: no k × k copies
    from privopt.methods.blahut_arimoto import search

    solved = []
    original = search.RateDistortion.point

    def point(self, s):
        solved.append(s)
        return original(self, s)

    monkeypatch.setattr(search.RateDistortion, "point", point)
    warm = solve(prior, d, levels[1], warm_start=first)
    assert np.inf not in solved and len(solved) == warm.info["slope_evaluations"]
    assert first.carried == ()  # handed over once: a sweep keeps no k × k copies per point
    cold = solve(prior, d, levels[1])
    assert np.inf in solved
    assert warm.status == cold.status == "optimal"
    assert warm.objective == pytest.approx(cold.objective, abs=1e-9)
    np.testing.assert_allclose(warm.mechanism.sum(axis=1), 1.0, atol=1e-12)
    level = measures.mutual_information(prior, warm.mechanism)
    assert warm.level == pytest.approx(level, abs=1e-12)
    dist = float(np.sum(prior.probs[:, None] * warm.mechanism * d))
    assert warm.distortion == pytest.approx(dist, abs=1e-12)
    assert warm.certificate["duality_gap"] <= 1e-9
    assert warm.info["slope_evaluations"] < cold.info["slope_evaluations"]
    # another prior: nothing carried over is used, the answer is that prior's own
    solved.clear()
    foreign = solve(other, d, levels[1], warm_start=solve(prior, d, levels[0]))
    assert np.inf in solved[1:]  # the other instance's s = ∞ point was solved anew
    assert foreign.objective == pytest.approx(solve(other, d, levels[1]).objective, abs=1e-9)


@pytest.mark.parametrize("notion, primal", [("ldp", True), ("pml", False)])
def test_warm_ldp_points_run_the_primal_simplex(notion, primal, monkeypatch):
    """LDP's warm points run HiGHS's primal simplex from the previous basis (measured faster
    on LDP curves, not on PML); the answers still match the cold dual simplex."""
    import highspy

    strategies = []
    original = highspy.Highs.setOptionValue

    def recording(self, key, value):
        if key == "simplex_strategy":
            strategies.append(value)
        return original(self, key, value)

    monkeypatch.setattr(highspy.Highs, "setOptionValue", recording)
    prior, d = _instance(12, seed=4)
    eps = [0.3, 0.5, 0.8]
    curve = po.sweep(prior, d, notion, epsilons=eps)
    assert strategies == ([4, 4] if primal else [])  # the first point is cold
    for value, result in zip(eps, curve.results, strict=True):
        cold = po.design(prior, d, notion, epsilon=value, solver="sparse-highs-simplex")
        assert result.status == "optimal"
        assert result.distortion == pytest.approx(cold.distortion, abs=1e-9)


def test_database_identifiability_sweep_through_the_simplex_matches_cold_solves():
    """Sweeps of dp and identifiability on small databases now run the warm simplex: its
    points agree with cold Clarabel solves, infeasible points included (below ε_X)."""
    rng = np.random.default_rng(11)
    prior = po.DatabasePrior(2, 4, probs=rng.dirichlet(np.full(16, 5.0)))
    eps = np.linspace(0.2, 3.0, 8)
    curve = po.sweep(prior, "hamming", "identifiability", epsilons=eps)
    least = po.get_notion("identifiability").min_level(prior, None)
    for value, record, result in zip(eps, curve.records, curve.results, strict=True):
        if value < least:
            assert record["status"] == "infeasible"
            continue
        assert result.status == "optimal" and result.solver.name in (
            "sparse-highs-simplex",
            "wang-identifiability",
        )
        cold = po.design(prior, "hamming", "identifiability", epsilon=value, solver="CLARABEL")
        assert result.distortion == pytest.approx(cold.distortion, rel=1e-6, abs=1e-7)
    assert any(
        r is not None and r.solver is not None and r.solver.name == "sparse-highs-simplex"
        for r in curve.results
    )


@pytest.mark.parametrize("notion", ["dp", "pml"])
def test_a_budget_line_search_runs_warm_like_a_sweep(notion):
    """A max_distortion request of a notion without a convex level objective is a line
    search over ε: its points are chosen like a sweep's (the warm simplex here: dp on 30
    secrets 0.16 s against 0.53 s through the cvxpy Parameter) and agree with that path."""
    rng = np.random.default_rng(1)
    p, d = rng.dirichlet(np.ones(12)), rng.random((12, 12))
    budget = 0.5 * (float(p @ d.min(axis=1)) + float((p @ d).min()))  # between D*(∞) and D*(0)
    warm = po.design(p, d, notion, max_distortion=budget)
    cvx = po.design(p, d, notion, max_distortion=budget, solver="HIGHS")
    assert warm.status == cvx.status == "optimal"
    assert warm.solver.name == "sparse-highs-simplex"
    assert warm.epsilon == pytest.approx(cvx.epsilon, abs=1e-6)
    assert warm.distortion <= budget + 1e-7 * (1 + budget)


def test_dp_sweeps_on_two_to_the_seven_databases_use_the_block_interior_point():
    rng = np.random.default_rng(16)
    prior = po.DatabasePrior(2, 7, probs=rng.dirichlet(np.ones(128)))
    request = prepare_request(prior, "hamming", "dp", epsilon=1.0)
    for sweep in (False, True):
        assert pick_algorithm(request, None, sweep=sweep).name == "block-ipm"


def test_metric_sweeps_on_a_map_use_the_block_interior_point():
    """Sweeps of metric privacy from 20 cells on: ``block-ipm`` (a 5 × 5 map, three points), every
    point certified and equal to the sparse LP's."""
    rng = np.random.default_rng(5)
    grid = po.LocationGrid(5, 5, counts=rng.integers(1, 20, (5, 5)))
    prior, metric = grid.prior(), grid.metric()
    eps = [0.3, 1.0, 6.0]
    curve = po.sweep(prior, metric.matrix, "metric_dp", epsilons=eps, metric=metric)
    assert [r.solver.name for r in curve.results] == ["block-ipm"] * 3
    assert all(r.status == "optimal" for r in curve.results)
    for value, result in zip(eps, curve.results, strict=True):
        single = po.design(
            prior, metric.matrix, "metric_dp", epsilon=value, metric=metric, solver="sparse-highs"
        )
        assert result.distortion == pytest.approx(single.distortion, rel=1e-6, abs=1e-9)
