"""Metric privacy (d-privacy): the notion, its measure, its metric option and the spanner.

Compared with independent programs written here: the d-privacy LP over *every* pair of
secrets in plain cvxpy (no pair reduction), brute-force measures, the k-RR closed form for
the discrete metric and the truncated geometric mechanism for counting queries.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import shortest_path

import privopt as po
from privopt.errors import InputError
from privopt.model import Metric


def plain_lp(prior, dist, metric, eps, top: float = np.inf, drop: bool = False) -> float:
    """min E[d] s.t. W[x,u] ≤ e^{ε d(x,x')} W[x',u] for every ordered pair x ≠ x'; exponents
    ε·d above ``top`` are dropped (``drop``: a relaxation, a lower bound on the optimum) or
    clipped to ``top`` (a tightening, an upper bound)."""
    prior = np.asarray(prior, dtype=float)
    k, n_out = dist.shape
    W = cp.Variable((k, n_out), nonneg=True)
    cons = [cp.sum(W, axis=1) == 1]
    for a in range(k):
        for b in range(k):
            if a == b or not np.isfinite(metric[a, b]):
                continue
            exponent = eps * metric[a, b]
            if exponent > top and drop:
                continue
            cons.append(W[a, :] <= np.exp(min(exponent, top)) * W[b, :])
    prob = cp.Problem(cp.Minimize(cp.sum(cp.multiply(prior[:, None] * dist, W))), cons)
    prob.solve(solver="CLARABEL")
    return float(prob.value)


def brute_level(channel, metric) -> float:
    """max over all ordered pairs and outputs with channel[a,u] > 0 of ln ratio / d."""
    best = 0.0
    k = channel.shape[0]
    for a in range(k):
        for b in range(k):
            if a == b or not np.isfinite(metric[a, b]):
                continue
            for u in range(channel.shape[1]):
                if channel[a, u] == 0:
                    continue
                if channel[b, u] == 0:
                    return np.inf
                r = np.log(channel[a, u] / channel[b, u])
                if metric[a, b] == 0:
                    if r > 1e-12:
                        return np.inf
                    continue
                best = max(best, r / metric[a, b])
    return best


def points_metric(points) -> np.ndarray:
    pts = np.asarray(points, dtype=float)
    return np.sqrt(((pts[:, None] - pts[None]) ** 2).sum(-1))


POINTS = [[0, 0], [1, 0], [2, 0], [0, 1], [1, 1], [2, 2]]
PRIOR = [0.3, 0.1, 0.15, 0.2, 0.05, 0.2]


@pytest.mark.parametrize("solver", [None, "CLARABEL", "sparse-clarabel", "sparse-highs-simplex"])
@pytest.mark.parametrize("eps", [0.3, 1.2])
def test_design_matches_plain_lp_over_all_pairs(solver, eps):
    d = points_metric(POINTS)
    metric = {"points": POINTS, "norm": "euclidean"}
    result = po.design(PRIOR, d, "metric_dp", epsilon=eps, metric=metric, solver=solver)
    assert result.status == "optimal"
    assert result.distortion == pytest.approx(plain_lp(PRIOR, d, d, eps), rel=1e-6, abs=1e-8)
    assert result.epsilon <= eps + 1e-8
    # the re-measured level agrees with a brute-force measure over every pair
    assert brute_level(result.mechanism.matrix, d) == pytest.approx(result.epsilon, abs=1e-7)
    # collinear points: (0,0)-(2,0) has (1,0) on its geodesic and is not constrained
    assert result.extra["constraint_pairs"] < 15


def test_budget_mode_inverts_epsilon_mode():
    d = points_metric(POINTS)
    at = po.design(PRIOR, d, "d_privacy", epsilon=0.8, metric=d)
    back = po.design(PRIOR, d, "d_privacy", max_distortion=at.distortion, metric=d)
    assert back.status in ("optimal", "optimal_inaccurate")
    assert back.epsilon == pytest.approx(0.8, abs=1e-4)


def test_sweep_through_the_cvxpy_parameter_matches_single_solves():
    d = points_metric(POINTS)
    eps = [0.2, 0.6, 1.5]
    curve = po.sweep(PRIOR, d, "metric_dp", epsilons=eps, metric=d, solver="CLARABEL")
    for e, got in zip(eps, curve.column("distortion"), strict=True):
        assert got == pytest.approx(plain_lp(PRIOR, d, d, e), rel=1e-6, abs=1e-8)


@pytest.mark.parametrize("scale", [1.0, 2.5])
def test_discrete_metric_is_ldp_and_krr_optimal(scale):
    k, eps = 5, 0.4
    prior = np.full(k, 1 / k)
    metric = scale * (1 - np.eye(k))
    result = po.design(prior, "hamming", "metric_dp", epsilon=eps, metric=metric)
    # k-RR at level ε·scale (Kairouz, Oh & Viswanath 2016): E[d] = (k−1)/(e^{εc} + k − 1)
    expected = (k - 1) / (np.exp(eps * scale) + k - 1)
    assert result.distortion == pytest.approx(expected, rel=1e-7)
    assert {c.name for c in result.closed_form} >= {"kairouz_krr_uniform"}
    assert all(c.passed for c in result.closed_form)
    ldp = po.design(prior, "hamming", "ldp", epsilon=eps * scale)
    assert result.distortion == pytest.approx(ldp.distortion, rel=1e-7)
    string = po.design(prior, "hamming", "metric_dp", epsilon=eps, metric="discrete")
    assert string.distortion == pytest.approx((k - 1) / (np.exp(eps) + k - 1), rel=1e-7)


def geometric_optimum(prior, loss, eps) -> float:
    """Truncated geometric mechanism on {0..n} followed by the Bayes-optimal remap
    (Ghosh, Roughgarden & Sundararajan 2012, Thm 1.1)."""
    prior = np.asarray(prior)
    n1 = prior.size
    a = np.exp(-eps)
    i, j = np.meshgrid(np.arange(n1), np.arange(n1), indexing="ij")
    G = (1 - a) / (1 + a) * a ** np.abs(i - j)
    G[:, 0] = a ** i[:, 0] / (1 + a)
    G[:, -1] = a ** (n1 - 1 - i[:, -1]) / (1 + a)
    assert np.allclose(G.sum(axis=1), 1)
    joint = prior[:, None] * G  # p(i, j)
    # cost of answering u after seeing j: Σ_i p(i, j) loss(i, u)
    return float((joint.T @ loss).min(axis=1).sum())


@pytest.mark.parametrize("eps", [0.5, 1.0])
def test_counting_query_geometric_mechanism_is_optimal(eps):
    n1 = 7
    rng = np.random.default_rng(3)
    prior = rng.dirichlet(np.ones(n1))
    idx = np.arange(n1)
    loss = np.abs(idx[:, None] - idx[None, :]).astype(float)
    edges = [[c, c + 1] for c in range(n1 - 1)]  # |i − j| = 1: the path metric is |i − j|
    result = po.design(prior, loss, "metric_dp", epsilon=eps, metric={"edges": edges})
    assert result.extra["constraint_pairs"] == n1 - 1
    assert result.distortion == pytest.approx(geometric_optimum(prior, loss, eps), rel=1e-6)
    # the same LP as dp over the neighbour relation |i − j| = 1
    rel = po.NeighborRelation.from_pairs(n1, edges)
    dp = po.design(prior, loss, "dp", epsilon=eps, neighbors=rel)
    assert result.distortion == pytest.approx(dp.distortion, rel=1e-7)


@settings(max_examples=25, deadline=None)
@given(
    st.integers(min_value=2, max_value=6).flatmap(
        lambda k: st.tuples(
            st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=k, max_size=k),
            st.lists(st.lists(st.floats(0.0, 1.0), min_size=3, max_size=3), min_size=k, max_size=k),
        )
    )
)
def test_measure_over_constraint_pairs_equals_measure_over_all_pairs(data):
    pts, rows = data
    W = np.asarray(rows) + 1e-3 * np.eye(len(rows), 3)[:, :3] + 1e-9
    W = W / W.sum(axis=1, keepdims=True)
    d = points_metric(pts)  # repeated points: a pseudometric (zero distances)
    k = len(pts)
    level = po.measures.metric_dp_level(np.full(k, 1 / k), W, Metric.from_points(pts))
    assert level == pytest.approx(brute_level(W, d), rel=1e-9, abs=1e-12) or (
        np.isinf(level) and np.isinf(brute_level(W, d))
    )


def test_measure_zero_entries_and_zero_distance():
    d = np.array([[0, 0, 1], [0, 0, 1], [1, 1, 0]], float)
    metric = Metric.from_matrix(d)
    same = np.array([[0.5, 0.5], [0.5, 0.5], [0.2, 0.8]])
    assert po.measures.metric_dp_level([1 / 3] * 3, same, metric) == pytest.approx(
        np.log(0.5 / 0.2)
    )
    differ = np.array([[0.5, 0.5], [0.6, 0.4], [0.5, 0.5]])
    assert po.measures.metric_dp_level([1 / 3] * 3, differ, metric) == np.inf
    # a secret outside the support does not count; an output no secret uses does not either
    assert po.measures.metric_dp_level([0.5, 0.0, 0.5], differ, metric) == 0.0
    zero_col = np.array([[0.5, 0.5, 0.0], [0.5, 0.5, 0.0], [0.5, 0.5, 0.0]])
    assert po.measures.metric_dp_level([1 / 3] * 3, zero_col, metric) == 0.0
    one_zero = np.array([[1.0, 0.0], [1.0, 0.0], [0.5, 0.5]])
    assert po.measures.metric_dp_level([1 / 3] * 3, one_zero, metric) == np.inf
    # tiny positive entries are not rounded away through p(u)
    tiny = np.array([[1.0, 0.0], [1.0, 0.0], [1 - 1e-300, 1e-300]])
    assert po.measures.metric_dp_level([1 / 3] * 3, tiny, metric) == np.inf


def test_graph_metric_disconnected_components_are_unconstrained():
    prior = [0.25, 0.25, 0.25, 0.25]
    edges = [[0, 1], [2, 3, 2.0]]
    with pytest.raises(po.InputError) as refused:  # only when asked for
        po.design(prior, "hamming", "metric_dp", epsilon=0.5, metric={"edges": edges})
    assert refused.value.code == "disconnected_graph"
    assert refused.value.field == "privacy.metric.edges"
    result = po.design(
        prior,
        "hamming",
        "metric_dp",
        epsilon=0.5,
        metric={"edges": edges, "allow_disconnected": True},
    )
    d = np.array([[0, 1, np.inf, np.inf], [1, 0, np.inf, np.inf]] + [[np.inf] * 4] * 2)
    d[2, 3] = d[3, 2] = 2.0
    d[2, 2] = d[3, 3] = 0.0
    assert result.distortion == pytest.approx(
        plain_lp(prior, 1 - np.eye(4), d, 0.5), rel=1e-6, abs=1e-9
    )


def test_graph_edge_ends_are_read_like_neighbour_pairs():
    """Edge ends go through the same secret lookup as neighbour pairs: symbols, indices and
    digit strings from a CSV file are accepted; floats, booleans and indices out of range
    are refused with the edge named."""
    prior = po.Prior([0.25, 0.25, 0.25, 0.25], labels=["a", "b", "c", "d"])

    def path(first):  # the edge a–b, then b–c–d: a connected graph
        return {"edges": [first, [1, 2], [2, 3]]}

    by_index = po.design(prior, "hamming", "metric_dp", epsilon=0.5, metric=path([0, 1]))
    for ends in (["a", "b"], ["0", "1"], [np.int64(0), 1]):
        same = po.design(prior, "hamming", "metric_dp", epsilon=0.5, metric=path(ends))
        assert same.distortion == pytest.approx(by_index.distortion, abs=1e-12)
    for bad, code in (
        ([0.0, 1], "unknown_symbol"),
        ([True, 1], "unknown_symbol"),
        ([0, 4], "index_out_of_range"),
        (["7", 1], "index_out_of_range"),
        (["z", 1], "unknown_symbol"),
    ):
        with pytest.raises(po.InputError) as info:
            po.design(prior, "hamming", "metric_dp", epsilon=0.5, metric=path(bad))
        assert info.value.field == "privacy.metric.edges[0]"
        assert info.value.code == code


def test_joint_prior_metric_on_the_secret():
    joint = np.array([[0.2, 0.1, 0.05], [0.05, 0.3, 0.05], [0.05, 0.05, 0.15]])
    prior = po.JointPrior(joint)
    dist = 1 - np.eye(3)
    metric = np.array([[0, 1, 2], [1, 0, 1], [2, 1, 0]], float)
    result = po.design(prior, dist, "metric_dp", epsilon=0.6, metric=metric)
    assert result.status == "optimal"
    # independent program: W on Y, constraints on p(u|s) = Σ_y p(y|s) W[y,u]
    W = cp.Variable((3, 3), nonneg=True)
    p_y_s = joint / joint.sum(axis=1, keepdims=True)
    ch = p_y_s @ W
    cons = [cp.sum(W, axis=1) == 1]
    for a in range(3):
        for b in range(3):
            if a != b:
                cons.append(ch[a, :] <= np.exp(0.6 * metric[a, b]) * ch[b, :])
    p_y = joint.sum(axis=0)
    prob = cp.Problem(cp.Minimize(cp.sum(cp.multiply(p_y[:, None] * dist, W))), cons)
    prob.solve(solver="CLARABEL")
    assert result.distortion == pytest.approx(prob.value, rel=1e-6, abs=1e-9)


def test_spanner_guarantee_and_bounds():
    n = 5
    pts = [[i, j] for i in range(n) for j in range(n)]
    k = n * n
    rng = np.random.default_rng(0)
    prior = rng.dirichlet(np.ones(k))
    d = points_metric(pts)
    metric = Metric.from_points(pts)
    stretch, eps = 1.3, 0.6
    edges = metric.spanner(stretch)
    graph = csr_matrix((edges.weights, (edges.left, edges.right)), shape=(k, k))
    d_g = shortest_path(graph, directed=False)
    off = ~np.eye(k, dtype=bool)
    assert np.all(d_g[off] <= stretch * d[off] * (1 + 1e-9))
    assert np.all(d_g[off] >= d[off] * (1 - 1e-9))
    assert edges.n_pairs < metric.pairs.n_pairs
    exact = po.design(prior, d, "metric_dp", epsilon=eps, metric=metric)
    with pytest.warns(UserWarning):  # the spanner's note on the full metric's level
        relaxed = po.design(prior, d, "metric_dp", epsilon=eps, metric=metric, spanner=stretch)
    with pytest.warns(UserWarning):
        safe = po.design(
            prior, d, "metric_dp", epsilon=eps / stretch, metric=metric, spanner=stretch
        )
    assert relaxed.status == "optimal" and relaxed.extra["spanner_stretch"] == stretch
    assert relaxed.extra["guaranteed_metric_level"] == pytest.approx(relaxed.epsilon * stretch)
    for r in (relaxed, safe):
        true_level = brute_level(r.mechanism.matrix, d)
        assert true_level == pytest.approx(r.extra["metric_level"], abs=1e-9)
        assert true_level <= r.extra["guaranteed_metric_level"] + 1e-8
    assert safe.extra["metric_level"] <= eps + 1e-8
    # fewer constraints at ε: a relaxation; at ε/δ: a restriction
    assert relaxed.distortion <= exact.distortion + 1e-8
    assert safe.distortion >= exact.distortion - 1e-8


@pytest.mark.parametrize(
    ("metric", "match"),
    [
        ([[0, 1], [2, 0]], "not symmetric"),
        ([[0, -1], [-1, 0]], "< 0"),
        ([[0, 1, 5], [1, 0, 1], [5, 1, 0]], "triangle inequality"),
        ([[0, 1, 1], [1, 0, 1]], "square"),
        ([[1, 1], [1, 0]], "itself must be 0"),
        ([[0, 1], [1, 0]], "on 2 secrets but the secret has 3"),
        ({"points": [[0, 0], [1, 1], [2, 2]], "norm": "chebyshev"}, "unknown norm"),
        ({"edges": [[0, 7]]}, "unknown secret 7: .* an index 0..2"),
        ({"edges": [["a", "zz"]]}, "unknown secret 'zz'"),
        ({"edges": [[0, 1, -2]]}, "positive"),
        ({"edges": [[0, 1]], "points": [[0], [1], [2]]}, "exactly one"),
        ("euclid", "unknown metric"),
    ],
)
def test_metric_validation_errors_name_the_field(metric, match):
    prior = po.Prior([0.3, 0.3, 0.4], labels=["a", "b", "c"])
    with pytest.raises(InputError, match=match) as err:
        po.design(prior, "hamming", "metric_dp", epsilon=1.0, metric=metric)
    assert err.value.field.startswith("privacy.metric")


def test_missing_metric_and_bad_spanner():
    with pytest.raises(InputError, match="needs metric") as err:
        po.design([0.5, 0.5], "hamming", "metric_dp", epsilon=1.0)
    assert err.value.field == "privacy.metric"
    with pytest.raises(InputError, match="stretch") as err:
        po.design([0.5, 0.5], "hamming", "metric_dp", epsilon=1.0, metric="discrete", spanner=0.5)
    assert err.value.field == "privacy.spanner"


def test_haversine_distances():
    paris, london = [48.8566, 2.3522], [51.5074, -0.1278]
    m = Metric.from_points([paris, london], norm="haversine")
    assert m.matrix[0, 1] == pytest.approx(343.5, abs=1.0)  # km, great circle


def test_sparse_clarabel_solves_other_linear_notions_with_a_certificate():
    prior = [0.5, 0.2, 0.2, 0.1]
    for notion in ("pml", "ldp", "maximal_leakage"):
        fast = po.design(prior, "hamming", notion, epsilon=0.4, solver="sparse-clarabel")
        ref = po.design(prior, "hamming", notion, epsilon=0.4, solver="CLARABEL")
        assert fast.status == "optimal" and "Clarabel" in fast.certificate.source
        assert fast.distortion == pytest.approx(ref.distortion, abs=1e-7)


# --- large exponents: pairs with ε·d > 20 are left out of the programs, a relaxation ------
def planar_instance(seed: int, k: int):
    """A random prior and distortion with the Euclidean metric of random points of the unit
    square (distances up to √2: at ε = 30 the exponents reach 42)."""
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(k))
    metric = points_metric(rng.random((k, 2)))
    return p, rng.random((k, k)), metric


@pytest.mark.parametrize("solver", [None, "sparse-highs", "block-ipm", "HIGHS"])
@pytest.mark.parametrize("seed, eps", [(1, 20.0), (2, 30.0)])
def test_large_exponents_are_relaxed_repaired_and_certified(solver, seed, eps):
    """Every LP method failed to certify here when the pairs were written with ratios up to
    e^30. Now: certified, private on every pair (brute force, true ratios), and between an
    independent relaxation and tightening of the all-pairs LP."""
    p, d, metric = planar_instance(seed, 12)
    result = po.design(p, d, "metric_dp", epsilon=eps, metric=metric, solver=solver)
    assert result.status == "optimal" and result.certificate.certified
    assert brute_level(result.mechanism.matrix, metric) <= eps + 1e-8
    lower = plain_lp(p, d, metric, eps, top=12.0, drop=True)  # Clarabel-sized ratios
    upper = plain_lp(p, d, metric, eps, top=12.0, drop=False)
    assert lower - 1e-8 <= result.distortion <= upper + 1e-8
    assert result.certificate.lower_bound <= result.distortion + 1e-12


def test_large_exponents_on_forty_secrets_by_default():
    """The failure that was found: 40 secrets at ε = 20 ended in SCS or a time limit."""
    p, d, metric = planar_instance(2, 40)
    result = po.design(p, d, "metric_dp", epsilon=20.0, metric=metric, time_limit=60)
    assert result.status == "optimal" and result.solver.name == "block-ipm"
    assert result.solver.tried == ["block-ipm"]
    assert brute_level(result.mechanism.matrix, metric) <= 20.0 + 1e-8


@pytest.mark.parametrize("solver", [None, "sparse-highs", "CLARABEL"])
def test_a_large_epsilon_with_small_distances_keeps_its_constraints(solver):
    """ε = 100 on distances of 0.01: the exponents are those of ε = 1 on distances of 1, and
    so is the answer (until now every program dropped the constraint beyond ε = 30 and the
    repair, far from optimal, could not be certified)."""
    d = points_metric(POINTS)
    small = po.design(PRIOR, d, "metric_dp", epsilon=100.0, metric=0.01 * d, solver=solver)
    unit = po.design(PRIOR, d, "metric_dp", epsilon=1.0, metric=d, solver=solver)
    assert small.status == unit.status == "optimal"
    assert small.distortion == pytest.approx(unit.distortion, rel=1e-7, abs=1e-9)
    assert small.distortion == pytest.approx(plain_lp(PRIOR, d, d, 1.0), rel=1e-6)
    assert "relaxed" not in small.solver.details


def test_written_pairs_drop_exponents_above_twenty():
    from privopt.notions.metric_dp import RELAXED_EXPONENT, written

    weights = np.array([0.1, 0.5, 1.0, 2.0])
    assert written(weights, 20.0).tolist() == [True, True, True, False]
    assert written(weights, 40.0).tolist() == [True, True, False, False]
    assert RELAXED_EXPONENT == 20.0
