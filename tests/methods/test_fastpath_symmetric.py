"""Tests of the symmetric method (privopt/methods/symmetric).

Oracles: [Wang-Ying-Zhang] closed forms (h(ε), Thm 1, Lemma 3, Thm 2), independently computed LP
reference values, and an independent dense formulation of PD-DP / PD-I / PD-MIP in cvxpy
(HiGHS for the LPs, Clarabel for the exponential cone) for small n.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

import privopt as po
from privopt import closed_forms as cf
from privopt import measures as ms
from privopt.errors import InputError
from privopt.methods import METHODS, solve_point
from privopt.methods.symmetric import (
    SymmetricMechanism,
    joint_types,
    orbit_count,
    rate_distortion_hamming,
    single_row_lp,
    verify_symmetric,
)
from privopt.methods.symmetric.single_letter import _single_row_lp_direct
from privopt.model import DatabasePrior, Distortion, hamming_neighbors
from privopt.request import prepare_request
from privopt.solve.selection import why_not
from tests.crosscheck.symmetric_orbits import orbit_lp, solve_orbit_ba


def solve_symmetric(prior, dist, notion, **kw):
    """The symmetric method through the solve driver: re-measured and certified."""
    return po.design(
        prior, dist, notion, solver="symmetric", raise_on_infeasible=False, tol=1e-12, **kw
    )


def applies_symmetric(prior, dist, notion, mode, **kw):
    point = {"epsilon": 1.0} if mode == "epsilon" else {"max_distortion": 1.0}
    try:
        request = prepare_request(prior, dist, notion, **point, **kw)
    except InputError:
        return False
    return why_not(METHODS["symmetric"], request) is None


# ------------------------------------------------------------------------------------------
# Independent dense formulations (databases enumerated here, not through privopt.model)
# ------------------------------------------------------------------------------------------
def _digits(m: int, n: int) -> np.ndarray:
    return np.array(np.unravel_index(np.arange(m**n), (m,) * n)).T  # x_1 most significant


def _dense_setup(row_probs, n):
    pi = np.asarray(row_probs, dtype=float)
    m = pi.size
    dig = _digits(m, n)
    p = np.prod(pi[dig], axis=1)
    dist = (dig[:, None, :] != dig[None, :, :]).sum(axis=2).astype(float)
    neighbours = np.argwhere(dist == 1)  # ordered pairs differing in exactly one row
    keep = (p[neighbours[:, 0]] > 0) & (p[neighbours[:, 1]] > 0)
    return p, dist, neighbours[keep]


def dense_lp(row_probs, n: int, notion: str, eps: float) -> float | None:
    """[Wang-Ying-Zhang] eqs (14)–(17) (dp) or the joint-q LP p(x)p(u|x) ≤ e^ε p(x')p(u|x')
    (identifiability), dense."""
    p, dist, nb = _dense_setup(row_probs, n)
    size = p.size
    W = cp.Variable((size, size), nonneg=True)
    left, right = nb[:, 0], nb[:, 1]
    if notion == "dp":
        cons = [W[left, :] <= np.exp(eps) * W[right, :]]
    else:
        cons = [
            cp.multiply(p[left][:, None], W[left, :])
            <= np.exp(eps) * cp.multiply(p[right][:, None], W[right, :])
        ]
    cons.append(cp.sum(W, axis=1) == 1)
    prob = cp.Problem(cp.Minimize(cp.sum(cp.multiply(p[:, None] * dist, W))), cons)
    prob.solve(solver=cp.HIGHS, highs_options={"solver": "ipm"})  # IPM + crossover: a vertex
    if prob.status == cp.INFEASIBLE:
        return None
    assert prob.status == cp.OPTIMAL
    return float(prob.value)


def dense_mi(row_probs, n: int, budget: float) -> float:
    """[Wang-Ying-Zhang] eqs (31)–(34), dense, exponential cone (rel_entr in perspective form)."""
    p, dist, _ = _dense_setup(row_probs, n)
    size = p.size
    W = cp.Variable((size, size), nonneg=True)
    p_y = p @ W
    obj = cp.sum(cp.multiply(p[:, None], cp.rel_entr(W, cp.vstack([p_y] * size))))
    cons = [cp.sum(W, axis=1) == 1, cp.sum(cp.multiply(p[:, None] * dist, W)) <= budget]
    prob = cp.Problem(cp.Minimize(obj), cons)
    prob.solve(solver=cp.CLARABEL)
    assert prob.status in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE)
    return float(prob.value)


def _instance(row_probs, n):
    m = len(row_probs)
    return DatabasePrior(m, n, row_probs=row_probs), Distortion.database_hamming(m, n)


def _entropy(p):
    p = np.asarray(p, dtype=float)
    p = p[p > 0]
    return float(-(p * np.log(p)).sum())


def _slb(row_probs, n, D):
    """[Wang-Ying-Zhang] Thm 2: H(X) − n h_b(D/n) − D ln(m−1), with H(X) = n H(π)."""
    m = len(row_probs)
    return n * _entropy(row_probs) - n * cf.binary_entropy(D / n) - D * np.log(m - 1)


# ------------------------------------------------------------------------------------------
# Registration and applicability
# ------------------------------------------------------------------------------------------
def test_registered():
    method = METHODS["symmetric"]
    assert method.family == "privopt" and method.priority > 0
    prior, dist = _instance([0.7, 0.3], 5)
    for notion in ["dp", "identifiability", "mutual_information"]:
        assert applies_symmetric(prior, dist, notion, "epsilon")


def test_applies():
    prior, dist = _instance([0.7, 0.3], 5)
    assert applies_symmetric(prior, dist, "dp", "epsilon")
    assert applies_symmetric(prior, dist, "identifiability", "max_distortion")
    assert applies_symmetric(prior, dist, "average_leakage", "max_distortion")
    assert applies_symmetric(prior, dist, "dp", "epsilon", neighbors=hamming_neighbors(2, 5))
    assert not applies_symmetric(prior, dist, "dp", "epsilon", neighbors="all")
    assert not applies_symmetric(prior, dist, "pml", "epsilon")
    assert not applies_symmetric(prior, Distortion.database_hamming(2, 4), "dp", "epsilon")
    assert not applies_symmetric(prior, Distortion.hamming(32), "dp", "epsilon")
    # a full pmf that is a product of equal rows is recognised as i.i.d. (and solved so);
    # one that is not stays with the generic methods
    full = DatabasePrior(2, 5, probs=np.full(32, 1 / 32))
    assert applies_symmetric(full, dist, "dp", "epsilon")
    skewed = np.random.default_rng(0).dirichlet(np.ones(32))
    assert not applies_symmetric(DatabasePrior(2, 5, probs=skewed), dist, "dp", "epsilon")
    with pytest.raises(InputError):
        solve_symmetric(prior, dist, "dp", epsilon=1.0, max_distortion=1.0)
    with pytest.raises(InputError, match="Hamming neighbours"):
        solve_symmetric(prior, dist, "dp", epsilon=1.0, neighbors="all")


def test_joint_types():
    for m, n in [(2, 0), (2, 5), (3, 4)]:
        T = joint_types(m, n)
        assert T.shape == (orbit_count(m, n), m, m)
        assert (T.sum(axis=(1, 2)) == n).all() and (T >= 0).all()
        assert len({t.tobytes() for t in T}) == len(T)
    assert orbit_count(2, 30) == 5456


# ------------------------------------------------------------------------------------------
# Against the dense LP / exponential-cone program (independent formulation), small n
# ------------------------------------------------------------------------------------------
LP_CASES = [
    ([0.5, 0.5], 3, 0.7),
    ([0.7, 0.3], 4, 0.5),  # dp below ε̃_X ; identifiability infeasible
    ([0.7, 0.3], 4, 1.2),
    ([0.8, 0.2], 6, 1.0),
    ([0.5, 0.3, 0.2], 2, 0.9),
    ([0.5, 0.3, 0.2], 3, 1.05),  # between ε_X = ln 2.5 and ε̃_X = ln 3
    ([0.6, 0.4, 0.0], 3, 0.8),  # a zero-probability symbol
    ([0.25, 0.25, 0.25, 0.25], 2, 1.3),
]


@pytest.mark.parametrize("notion", ["dp", "identifiability"])
@pytest.mark.parametrize("row_probs,n,eps", LP_CASES)
def test_lp_against_dense(row_probs, n, eps, notion):
    prior, dist = _instance(row_probs, n)
    res = solve_symmetric(prior, dist, notion, epsilon=eps)
    ref = dense_lp(row_probs, n, notion, eps)
    if ref is None:
        assert res.status == "infeasible"
        p = np.asarray(row_probs)
        p = p[p > 0]
        assert res.least_achievable == pytest.approx(np.log(p.max() / p.min()))
        return
    assert res.status == "optimal"
    assert res.objective == pytest.approx(ref, abs=1e-7)
    assert abs(res.certificate.gap) < 1e-9


@pytest.mark.parametrize(
    "row_probs,n,budget",
    [
        ([0.7, 0.3], 3, 0.5),
        ([0.7, 0.3], 3, 1.2),  # beyond h(ε̃_X) = 0.9: R = 0
        ([0.6, 0.3, 0.1], 2, 0.25),  # inside the Shannon-lower-bound range (D ≤ 0.4)
        ([0.6, 0.3, 0.1], 2, 0.6),  # water-filling with 2 of 3 output symbols
    ],
)
def test_mi_against_dense(row_probs, n, budget):
    prior, dist = _instance(row_probs, n)
    res = solve_symmetric(prior, dist, "mutual_information", max_distortion=budget)
    assert res.status == "optimal"
    assert res.objective == pytest.approx(dense_mi(row_probs, n, budget), abs=2e-6)
    assert res.distortion <= budget + 1e-12
    assert abs(res.certificate.gap) < 1e-12


def test_spec_table_m3():
    """Independent LP and PD-MIP reference values, prior (.5,.3,.2)⊗², m = 3."""
    prior, dist = _instance([0.5, 0.3, 0.2], 2)
    ex, et = np.log(2.5), np.log(3.0)
    table = [  # ε, D*_I, D*_DP
        (ex / 2, None, 1.0),
        (ex, 1.0, 0.857142857143),
        ((ex + et) / 2, 0.90455488499, 0.827966224622),
        (et, 0.8, 0.8),
    ]
    for eps, d_i, d_dp in table:
        r_i = solve_symmetric(prior, dist, "identifiability", epsilon=eps)
        r_dp = solve_symmetric(prior, dist, "dp", epsilon=eps)
        assert r_dp.objective == pytest.approx(d_dp, abs=1e-11)
        if d_i is None:
            assert r_i.status == "infeasible"
        else:
            assert r_i.objective == pytest.approx(d_i, abs=1e-11)
    for budget, value in [(0.2, 1.27051064523), (0.3, 1.00594369835), (0.8, 0.158764949663)]:
        r = solve_symmetric(prior, dist, "mutual_information", max_distortion=budget)
        assert r.objective == pytest.approx(value, abs=1e-11)
        assert r.objective == pytest.approx(cf.pdmip_value(prior, budget), abs=1e-13)


@pytest.mark.parametrize("notion", ["dp", "identifiability"])
def test_one_row_ray_form_matches_direct_lp(notion):
    """The ray formulation of the one-row LP against the LP as printed ([Wang-Ying-Zhang] eq. 15 /
    9)."""
    rng = np.random.default_rng(3)
    priors = [rng.dirichlet(np.ones(m)) for m in (2, 3, 4, 5) for _ in range(3)]
    for pi in priors:
        eps_x = float(np.log(pi.max() / pi.min()))
        for eps in [0.0, 0.2, 0.7, 1.5, 3.0, eps_x, eps_x + 0.3]:
            a = single_row_lp(pi, notion, eps)
            b = _single_row_lp_direct(pi, notion, eps, 1e-10)
            assert a[0] == b[0]
            if a[0] == "optimal":
                assert a[2] == pytest.approx(b[2], abs=1e-10)
                assert a[3]["duality_gap"] < 1e-10


@pytest.mark.parametrize("notion", ["dp", "identifiability"])
def test_extreme_epsilon(notion):
    """Large ε: h(ε) ~ e^{−ε} is reproduced to relative 1e-12 (the LP as printed makes HiGHS
    report infeasibility from ε ≈ 35 on), and the level is still ε."""
    for m, n in [(2, 30), (3, 10)]:
        prior, dist = _instance(np.full(m, 1 / m), n)
        for eps in [20.0, 35.0, 50.0, 200.0]:
            res = solve_symmetric(prior, dist, notion, epsilon=eps)
            assert res.status == "optimal"
            assert res.objective == pytest.approx(cf.h(eps, m, n), rel=1e-12)
            check = verify_symmetric(res.structured_mechanism, prior, notion, eps)
            assert check["level"] == pytest.approx(eps, rel=1e-12)


# ------------------------------------------------------------------------------------------
# Dense reconstruction re-measured with privopt.measures
# ------------------------------------------------------------------------------------------
MEASURE = {
    "dp": ms.dp_level,
    "identifiability": ms.identifiability_level,
    "mutual_information": ms.mutual_information,
}


@pytest.mark.parametrize(
    "row_probs,n,notion,kw",
    [
        ([0.5, 0.5], 6, "dp", {"epsilon": 0.8}),
        ([0.7, 0.3], 6, "dp", {"epsilon": 0.5}),
        ([0.7, 0.3], 6, "identifiability", {"epsilon": 1.1}),
        ([0.7, 0.3], 6, "mutual_information", {"max_distortion": 1.0}),
        ([0.7, 0.3], 5, "mutual_information", {"epsilon": 1.5}),
        ([0.5, 0.3, 0.2], 4, "dp", {"epsilon": 1.0}),
        ([0.5, 0.3, 0.2], 4, "identifiability", {"epsilon": 1.2}),
        ([0.5, 0.3, 0.2], 4, "mutual_information", {"max_distortion": 1.5}),
        ([0.6, 0.4, 0.0], 4, "identifiability", {"epsilon": 0.6}),
        ([0.7, 0.3], 6, "dp", {"max_distortion": 1.5}),
    ],
)
def test_dense_reconstruction_matches_reduced(row_probs, n, notion, kw):
    prior, dist = _instance(row_probs, n)
    res = solve_symmetric(prior, dist, notion, **kw)
    assert res.status == "optimal"
    W = res.mechanism.matrix
    assert W is not None and W.shape == (prior.size, prior.size)
    assert np.abs(W.sum(axis=1) - 1).max() < 1e-12 and W.min() >= 0
    np.testing.assert_allclose(res.structured_mechanism.to_dense(), W, rtol=0, atol=1e-15)
    check = verify_symmetric(res.structured_mechanism, prior, notion, kw.get("epsilon"))
    assert check["row_sums_ok"] and check["via"] == "orbits"
    assert check["level_ok"] in (None, True)
    level = MEASURE[notion](prior, W)
    assert check["level"] == pytest.approx(level, abs=1e-9)
    assert res.epsilon == pytest.approx(level, abs=1e-9)
    assert check["distortion"] == pytest.approx(ms.expected_distortion(prior, W, dist), abs=1e-9)
    # the same mechanism stored per orbit (no product kernel) measures the same
    orbit_form = SymmetricMechanism(
        prior.m, prior.n, log_weights=res.structured_mechanism.log_weights
    )
    np.testing.assert_allclose(orbit_form.to_dense(), W, rtol=0, atol=1e-14)
    check2 = verify_symmetric(orbit_form, prior, notion, kw.get("epsilon"))
    assert check2["level"] == pytest.approx(level, abs=1e-9)
    kern = verify_symmetric(res.structured_mechanism, prior, notion, use="kernel")
    assert kern["level"] == pytest.approx(level, abs=1e-9)
    assert kern["distortion"] == pytest.approx(check["distortion"], abs=1e-9)


def test_verify_detects_violations():
    prior, dist = _instance([0.7, 0.3], 4)
    res = solve_symmetric(prior, dist, "dp", epsilon=1.0)
    # the identity mechanism: DP level ∞, distortion 0
    ident = SymmetricMechanism(2, 4, kernel=np.eye(2))
    out = verify_symmetric(ident, prior, "dp", 1.0)
    assert out["level"] == np.inf and out["level_ok"] is False and out["distortion"] == 0
    # rows that do not sum to 1
    bad = SymmetricMechanism(2, 4, log_weights=res.structured_mechanism.log_weights + 1e-6)
    assert not verify_symmetric(bad, prior, "dp", 1.0)["row_sums_ok"]
    # a level slightly above ε
    looser = solve_symmetric(prior, dist, "dp", epsilon=1.01)
    assert verify_symmetric(looser.structured_mechanism, prior, "dp", 1.0)["level_ok"] is False


# ------------------------------------------------------------------------------------------
# Closed forms at mid and large n (the targets)
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [8, 16, 30])
@pytest.mark.parametrize("notion", ["dp", "identifiability"])
def test_uniform_prior_h(n, notion):
    """[Wang-Ying-Zhang] Thm 1: a uniform prior gives D*_DP = D*_I = h(ε)."""
    prior, dist = _instance([0.5, 0.5], n)
    for eps in [0.3, 1.0, 2.5]:
        res = solve_symmetric(prior, dist, notion, epsilon=eps)
        assert res.objective == pytest.approx(cf.h(eps, 2, n), abs=1e-9)
        check = verify_symmetric(res.structured_mechanism, prior, notion, eps)
        assert check["row_sums_ok"] and check["level_ok"]
        assert check["level"] == pytest.approx(eps, abs=1e-12)
        assert check["distortion"] == pytest.approx(cf.h(eps, 2, n), abs=1e-9)
        assert (res.mechanism is None) == (2**n > 4096)


@pytest.mark.parametrize("n", [16, 30])
def test_non_uniform_identifiability(n):
    """[Wang-Ying-Zhang] Thm 1 / Lemma 3: D*_I = h(ε) for ε ≥ ε̃_X; infeasible for ε < ε_X."""
    row = [0.7, 0.3]
    prior, dist = _instance(row, n)
    eps_x, eps_t = cf.epsilon_x(prior), cf.epsilon_tilde_x(prior)
    assert eps_x == pytest.approx(eps_t)  # m = 2
    for eps in [eps_t, 1.0, 2.0]:
        res = solve_symmetric(prior, dist, "identifiability", epsilon=eps)
        assert res.objective == pytest.approx(cf.h(eps, 2, n), abs=1e-9)
        assert verify_symmetric(res.structured_mechanism, prior, "identifiability", eps)["level_ok"]
        # observed, and implied here by the single-letter reduction: D*_DP = h(ε)
        dp = solve_symmetric(prior, dist, "dp", epsilon=eps)
        assert dp.objective == pytest.approx(cf.h(eps, 2, n), abs=1e-9)
    res = solve_symmetric(prior, dist, "identifiability", epsilon=0.9 * eps_x)
    assert res.status == "infeasible"
    assert res.least_achievable == pytest.approx(eps_x)
    # below ε̃_X, D*_DP lies in [h(ε+ε_X), h(ε)] and under h(ε) ([Wang-Ying-Zhang] Thm 1)
    dp = solve_symmetric(prior, dist, "dp", epsilon=0.5)
    assert cf.h(0.5 + eps_x, 2, n) <= dp.objective < cf.h(0.5, 2, n)


def test_identifiability_m3_above_tilde():
    prior, dist = _instance([0.5, 0.3, 0.2], 10)
    eps_t = cf.epsilon_tilde_x(prior)
    for eps in [eps_t, eps_t + 0.4]:
        res = solve_symmetric(prior, dist, "identifiability", epsilon=eps)
        assert res.objective == pytest.approx(cf.h(eps, 3, 10), abs=1e-9)


@pytest.mark.parametrize("row_probs,n", [([0.5, 0.5], 30), ([0.7, 0.3], 30), ([0.5, 0.3, 0.2], 12)])
def test_mutual_information_closed_form(row_probs, n):
    """[Wang-Ying-Zhang] Thm 2 on D ≤ h(ε̃_X), both modes."""
    prior, dist = _instance(row_probs, n)
    d_hi = cf.h(cf.epsilon_tilde_x(prior), len(row_probs), n)
    for frac in [0.1, 0.5, 1.0]:
        budget = frac * d_hi
        res = solve_symmetric(prior, dist, "mutual_information", max_distortion=budget)
        value = _slb(row_probs, n, budget)
        assert res.objective == pytest.approx(value, abs=1e-9)
        assert res.distortion <= budget + 1e-9
        check = verify_symmetric(res.structured_mechanism, prior, "mutual_information")
        assert check["row_sums_ok"] and check["level"] == pytest.approx(value, abs=1e-9)
        # epsilon mode is the inverse: least distortion at I ≤ value
        back = solve_symmetric(prior, dist, "mutual_information", epsilon=value)
        assert back.objective == pytest.approx(budget, abs=1e-8)
        assert back.epsilon <= value + 1e-9


def test_mutual_information_edges():
    prior, dist = _instance([0.7, 0.3], 10)
    r = solve_symmetric(prior, dist, "mutual_information", max_distortion=3.5)
    assert r.objective == pytest.approx(0.0, abs=1e-12)  # beyond n(1 − π_max) = 3
    r = solve_symmetric(prior, dist, "mutual_information", epsilon=0.0)
    assert r.objective == pytest.approx(3.0, abs=1e-12)
    r = solve_symmetric(prior, dist, "mutual_information", epsilon=100.0)
    assert r.objective == pytest.approx(0.0, abs=1e-12)
    # the one-row solver: its Csiszár certificate closes at every distortion
    for d1 in np.linspace(0.01, 0.29, 8):
        kern, dist1, rate, cert = rate_distortion_hamming([0.7, 0.3], distortion=d1)
        assert dist1 == pytest.approx(d1, abs=1e-12)
        assert abs(cert["duality_gap"]) < 1e-12
        assert rate == pytest.approx(cf.binary_entropy(0.7) - cf.binary_entropy(d1), abs=1e-12)


def test_max_distortion_dp_identifiability():
    prior, dist = _instance([0.5, 0.5], 20)
    for notion in ["dp", "identifiability"]:
        res = solve_symmetric(prior, dist, notion, max_distortion=4.0)
        assert res.epsilon == pytest.approx(cf.h_inv(4.0, 2, 20), abs=1e-9)
        assert res.distortion <= 4.0 + 1e-9
        assert res.line_search is not None  # the driver's bisection over ε points
    skew, dist10 = _instance([0.7, 0.3], 10)
    res = solve_symmetric(skew, dist10, "identifiability", max_distortion=3.5)
    assert res.epsilon == pytest.approx(cf.epsilon_x(skew), abs=1e-12)  # least feasible
    res = solve_symmetric(skew, dist10, "dp", max_distortion=3.5)
    assert res.epsilon == pytest.approx(0.0, abs=1e-12)  # constant output is 0-DP


# ------------------------------------------------------------------------------------------
# The lazy mechanism
# ------------------------------------------------------------------------------------------
def test_lazy_mechanism_api():
    prior, dist = _instance([0.7, 0.3], 5)
    res = solve_symmetric(prior, dist, "dp", epsilon=0.9)
    mech, W = res.structured_mechanism, res.mechanism.matrix
    assert isinstance(mech, SymmetricMechanism) and mech.size == 32
    rng = np.random.default_rng(0)
    for _ in range(20):
        x, y = rng.integers(32, size=2)
        assert mech.probability(int(x), int(y)) == pytest.approx(W[x, y], rel=1e-12)
        assert mech.probability(mech.digits(int(x)), mech.digits(int(y))) == pytest.approx(
            W[x, y], rel=1e-12
        )
        assert mech.index(mech.digits(int(x))) == x
    np.testing.assert_allclose(mech.row(13), W[13], rtol=1e-12)
    masses = np.exp(mech.orbit_log_masses(prior))
    assert masses.sum() == pytest.approx(1.0, abs=1e-12)
    with pytest.raises(InputError):
        SymmetricMechanism(2, 30, kernel=np.eye(2)).to_dense()


@pytest.mark.parametrize("form", ["kernel", "orbits"])
def test_sampling_small(form):
    prior, dist = _instance([0.6, 0.4], 3)
    res = solve_symmetric(prior, dist, "dp", epsilon=0.7)
    mech = res.structured_mechanism
    if form == "orbits":
        mech = SymmetricMechanism(2, 3, log_weights=mech.log_weights)
    rng = np.random.default_rng(1)
    x = 5  # digits (1, 0, 1)
    draws = 20000
    ys = mech.sample(x, rng, size=draws)
    assert ys.shape == (draws, 3)
    counts = np.bincount([mech.index(y) for y in ys], minlength=8)
    expected = res.mechanism.matrix[x] * draws
    # all 8 outcomes within 5 standard deviations
    assert np.all(np.abs(counts - expected) <= 5 * np.sqrt(expected + 1))


def test_sampling_large_n():
    """n = 30: sampling never materialises anything; the Hamming distance of the output
    follows Binomial(n, 1/(1+e^ε)) for the exponential mechanism (uniform prior)."""
    prior, dist = _instance([0.5, 0.5], 30)
    res = solve_symmetric(prior, dist, "dp", epsilon=1.0)
    assert res.mechanism is None
    mech = res.structured_mechanism
    rng = np.random.default_rng(2)
    x = rng.integers(2, size=30)
    ys = mech.sample(x, rng, size=4000)
    assert ys.shape == (4000, 30) and set(np.unique(ys)) <= {0, 1}
    d = (ys != x).sum(axis=1)
    q = 1 / (1 + np.e)
    assert d.mean() == pytest.approx(30 * q, abs=5 * np.sqrt(30 * q * (1 - q) / 4000))
    # per orbit, the table form samples the same law
    orbit_form = SymmetricMechanism(2, 30, log_weights=mech.log_weights)
    d2 = (orbit_form.sample(x, rng, size=4000) != x).sum(axis=1)
    assert d2.mean() == pytest.approx(30 * q, abs=5 * np.sqrt(30 * q * (1 - q) / 4000))
    y = mech.sample(x, rng)
    assert mech.log_probability(x, y) == pytest.approx(
        -(y != x).sum() * 1.0 - 30 * np.log1p(np.exp(-1.0)), abs=1e-10
    )


# ------------------------------------------------------------------------------------------
# The orbit methods (cross-checks of the single-letter reduction)
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("parametrisation", ["mass", "joint_mass", "representative"])
@pytest.mark.parametrize("notion", ["dp", "identifiability"])
def test_orbit_lp_matches_single_letter(parametrisation, notion):
    for row, eps in [([0.5, 0.5], 0.8), ([0.7, 0.3], 0.5), ([0.7, 0.3], 1.3)]:
        prior, dist = _instance(row, 8)
        a = solve_symmetric(prior, dist, notion, epsilon=eps)
        status, _log_w, value, info = orbit_lp(prior, notion, eps, parametrisation)
        assert a.status == status
        if a.status == "optimal":
            assert value == pytest.approx(a.objective, abs=1e-7)
            assert info["lp_variables"] <= orbit_count(2, 8)


def test_orbit_ba_matches_single_letter():
    prior, dist = _instance([0.7, 0.3], 8)
    for kw in [{"max_distortion": 0.8}, {"max_distortion": 2.2}, {"epsilon": 2.0}]:
        a = solve_symmetric(prior, dist, "mutual_information", **kw)
        status, mech, _ = solve_orbit_ba(prior, kw.get("epsilon"), kw.get("max_distortion"), 1e-12)
        assert status == "optimal"
        check = verify_symmetric(mech, prior, "mutual_information")
        value = check["level"] if "max_distortion" in kw else check["distortion"]
        assert value == pytest.approx(a.objective, abs=1e-8)


def test_result_type_and_timing_n30():
    prior, dist = _instance([0.7, 0.3], 30)
    for notion, kw in [
        ("dp", {"epsilon": 1.0}),
        ("identifiability", {"epsilon": 1.0}),
        ("mutual_information", {"max_distortion": 5.0}),
    ]:
        res = solve_symmetric(prior, dist, notion, **kw)
        check = verify_symmetric(res.structured_mechanism, prior, notion, kw.get("epsilon"))
        assert isinstance(res, po.DesignResult) and res.status == "optimal"
        assert res.mechanism is None and res.solver.details["n_orbits"] == 5456
        assert check["row_sums_ok"] and check["level_ok"] in (None, True)
        assert check["distortion"] == pytest.approx(res.distortion, abs=1e-12)


def test_solver_layer_contract():
    """What the driver reads from the method: the structured re-measurement (made
    independently of the solve) and a lower bound; an infeasible request carries its least
    achievable level."""
    prior, dist = _instance([0.7, 0.3], 30)
    answer = solve_point("symmetric", prior, dist, "dp", epsilon=1.0)
    assert answer.matrix is None and answer.structured is not None
    assert answer.measured.row_sum_error <= 1e-12 and answer.measured.level <= 1.0 + 1e-12
    assert answer.measured.distortion == pytest.approx(answer.objective, abs=1e-12)
    assert answer.measured.details["via"] == "orbits"
    assert answer.objective - answer.certificate.lower_bound < 1e-9
    bad = solve_symmetric(prior, dist, "identifiability", epsilon=0.5)
    assert bad.status == "infeasible"
    assert bad.least_achievable == pytest.approx(np.log(7 / 3))
    assert bad.least_achievable_quantity == "epsilon"


@pytest.mark.slow
@pytest.mark.parametrize("n", [50, 100])
def test_large_n(n):
    prior, dist = _instance([0.5, 0.5], n)
    for notion in ["dp", "identifiability"]:
        res = solve_symmetric(prior, dist, notion, epsilon=1.0)
        assert res.objective == pytest.approx(cf.h(1.0, 2, n), rel=1e-12)
        assert verify_symmetric(res.structured_mechanism, prior, notion, 1.0)["level_ok"]
    budget = cf.h(1.0, 2, n)
    res = solve_symmetric(prior, dist, "mutual_information", max_distortion=budget)
    assert res.objective == pytest.approx(_slb([0.5, 0.5], n, budget), rel=1e-12)


def test_sweep_goes_through_the_fast_path_at_n30():
    """A curve on 2^30 databases: sweep picks the symmetric fast path ([Wang-Ying-Zhang] Thm 1
    oracle)."""
    import privopt as po

    prior = po.DatabasePrior(2, 30, row_probs=[0.7, 0.3])
    curve = po.sweep(prior, "hamming", "dp", epsilons=[1.0, 2.0])
    assert [r["status"] for r in curve.records] == ["optimal", "optimal"]
    for r in curve.records:
        # ε ≥ ε̃_X = ln(0.7/0.3): D*_DP = h(ε) for i.i.d. priors (module docstring)
        assert r["distortion"] == pytest.approx(cf.h(r["requested_epsilon"], 2, 30), abs=1e-9)


def test_structured_mechanisms_read_from_files_are_checked():
    """``audit --mechanism answer.json`` reads these descriptions: a kernel whose rows are
    not pmfs, n < 1, a translation row of the wrong length or not a pmf were once accepted
    (rows summing to 100, a 1 × 1 "mechanism"); a report for another prior than the
    mechanism's was computed silently; a translation row index wrapped around."""
    from privopt.methods.structured import from_description
    from privopt.methods.symmetric.mechanism import SymmetricMechanism

    bad = [
        {"kind": "symmetric", "m": 2, "n": 2, "kernel": [[5, 5], [1, 1]]},
        {"kind": "symmetric", "m": 2, "n": -1, "kernel": [[0.5, 0.5], [0.5, 0.5]]},
        {"kind": "symmetric", "m": 2, "n": 2, "log_weights": [0.5, -1.0, -2.0]},
        {"kind": "translation_invariant", "m": 2, "n": 2, "f": [1.0]},
        {"kind": "translation_invariant", "m": 2, "n": 1, "f": [3, 1]},
    ]
    for description in bad:
        with pytest.raises(po.InputError):
            from_description(description)
    kernel = SymmetricMechanism(2, 3, kernel=[[0.9, 0.1], [0.1, 0.9]])
    with pytest.raises(po.InputError, match="2\\^5"):
        kernel.leakage(po.DatabasePrior(2, 5, row_probs=[0.5, 0.5]))
    one_row = po.measures.ldp_level([0.5, 0.5], [[0.9, 0.1], [0.1, 0.9]])
    assert kernel.leakage(po.DatabasePrior(2, 3, row_probs=[0.5, 0.5]))["ldp"] == pytest.approx(
        3 * one_row
    )
    row = from_description(
        {"kind": "translation_invariant", "m": 2, "n": 2, "f": [0.7, 0.1, 0.1, 0.1]}
    )
    with pytest.raises(po.InputError, match="outside"):
        row.row(5)
    with pytest.raises(po.InputError, match="uniform prior"):
        row.leakage(po.Prior([0.4, 0.3, 0.2, 0.1]))
    zero = from_description(
        {"kind": "translation_invariant", "m": 2, "n": 2, "f": [0.7, 0.3, 0, 0]}
    )
    assert zero.leakage(po.Prior([0.25] * 4))["information_privacy"] == np.inf


def test_one_row_programs_refuse_what_they_cannot_answer():
    """The one-row LP answered "optimal" for any notion name; the one-row rate–distortion
    raised TypeError without a target."""
    from privopt.methods.symmetric.single_letter import rate_distortion_hamming, single_row_lp

    with pytest.raises(po.InputError, match="dp and identifiability"):
        single_row_lp([0.6, 0.4], "pml", 1.0)
    with pytest.raises(po.InputError, match="exactly one"):
        rate_distortion_hamming([0.5, 0.5])
    with pytest.raises(po.InputError):
        rate_distortion_hamming([0.5, 0.5], distortion=float("nan"))
    assert single_row_lp([0.6, 0.4], "dp", 1.0)[0] == "optimal"
