"""Problem builder and solver layer (GitHub issue "Problem builder and solver layer").

Oracles: PD-I / PD-DP against h(ε) and independent LP values, the PD-MIP
closed form and E_i, Calmon–Fawaz Theorems 1–2 and Corollaries 1–2, plus
LP formulations written here independently with ``scipy.optimize.linprog`` and the features of
``design`` / ``sweep`` / ``build_problem`` / ``solve_problem``.
"""

from __future__ import annotations

import math
import warnings

import cvxpy as cp
import numpy as np
import pytest
from scipy import optimize, stats

import privopt as po
from privopt import (
    DatabasePrior,
    Distortion,
    InfeasibleError,
    InputError,
    JointPrior,
    Prior,
    measures,
)
from privopt import closed_forms as cf
from tests.crosscheck.linear_lp import reference_lp

#: The library's own slack on a re-measured distortion (privopt.solve.DISTORTION_TOL).
DIST_SLACK = 1e-7


def level_ok(level: float, eps: float) -> bool:
    """A re-measured level meets ε up to 1e-8 relative (absolute below ε = 1)."""
    return level <= eps + 1e-8 * max(1.0, eps)


def within_budget(dist: float, budget: float) -> bool:
    return dist <= budget + DIST_SLACK * (1.0 + budget)


# =============================================================================================
# Wang et al. [Wang-Ying-Zhang]: PD-I and PD-DP against h(ε)
# =============================================================================================
def uniform_database(m: int, n: int) -> DatabasePrior:
    return DatabasePrior(m, n, row_probs=np.full(m, 1.0 / m))


#: (prior, ε_X, ε̃_X) of the reference table, with the exact closed forms.
NONUNIFORM = {
    "42-18-28-12": (
        DatabasePrior(2, 2, probs=[0.42, 0.18, 0.28, 0.12]),
        math.log(7 / 3),
        math.log(7 / 3),
    ),
    "532x2": (DatabasePrior(3, 2, row_probs=[0.5, 0.3, 0.2]), math.log(2.5), math.log(3.0)),
    "532x6-25-15": (
        DatabasePrior(3, 2, probs=np.kron([0.5, 0.3, 0.2], [0.6, 0.25, 0.15])),
        math.log(4.0),
        math.log(0.7 / 0.15),
    ),
    "non-product": (
        DatabasePrior(2, 2, probs=[0.4, 0.1, 0.2, 0.3]),
        math.log(4.0),
        -math.log((0.7 - math.sqrt(0.41)) / 0.4),
    ),
    "64x3": (DatabasePrior(2, 3, row_probs=[0.6, 0.4]), math.log(1.5), math.log(1.5)),
}


def test_nonuniform_table_epsilons_match_closed_forms():
    for prior, eps_x, eps_t in NONUNIFORM.values():
        assert cf.epsilon_x(prior) == pytest.approx(eps_x, abs=1e-12)
        assert cf.epsilon_tilde_x(prior) == pytest.approx(eps_t, abs=1e-9)


@pytest.mark.parametrize("m,n", [(2, 2), (2, 3), (3, 2)])
@pytest.mark.parametrize("eps", [0.0, 0.3, 1.0, 2.0])
def test_uniform_prior_identifiability_and_dp_equal_h(m, n, eps):
    prior = uniform_database(m, n)
    target = cf.h(eps, m, n)
    for notion in ("identifiability", "dp"):
        res = po.design(prior, "hamming", notion, epsilon=eps)
        assert res.status == "optimal" and res.verified
        assert res.distortion == pytest.approx(target, abs=1e-7), notion
        assert level_ok(res.epsilon, eps)
        assert res.mechanism.shape == (m**n, m**n)


@pytest.mark.parametrize("name", sorted(NONUNIFORM))
def test_identifiability_equals_h_from_eps_tilde_on(name):
    prior, _, eps_t = NONUNIFORM[name]
    for eps in (eps_t, eps_t + 0.25, eps_t + 1.0):
        res = po.design(prior, "hamming", "identifiability", epsilon=eps)
        assert res.distortion == pytest.approx(cf.h(eps, prior.m, prior.n), abs=1e-7)
        assert level_ok(res.epsilon, eps)
        assert res.verified


@pytest.mark.parametrize("name", sorted(NONUNIFORM))
def test_identifiability_infeasible_below_eps_x(name):
    prior, eps_x, _ = NONUNIFORM[name]
    for eps in (0.0, eps_x / 2, eps_x - 1e-3):
        with pytest.raises(InfeasibleError) as info:
            po.design(prior, "hamming", "identifiability", epsilon=eps)
        assert info.value.least_achievable == pytest.approx(eps_x, abs=1e-12)
        assert info.value.quantity == "epsilon"
        res = po.design(prior, "hamming", "identifiability", epsilon=eps, raise_on_infeasible=False)
        assert res.status == "infeasible" and res.mechanism is None and not res.verified
        assert res.least_achievable == pytest.approx(eps_x, abs=1e-12)
    # ... and feasible at ε_X itself (the constant mechanism has level ε_X, [Wang-Ying-Zhang]
    # Lemma 3)
    res = po.design(prior, "hamming", "identifiability", epsilon=eps_x)
    assert res.verified and level_ok(res.epsilon, eps_x)


@pytest.mark.parametrize("name", sorted(NONUNIFORM))
def test_dp_sandwiched_between_h_shifted_and_h(name):
    prior, eps_x, eps_t = NONUNIFORM[name]
    m, n = prior.m, prior.n
    for eps in (0.0, 0.2, eps_x / 2, eps_x, eps_t, eps_t + 0.5, 2.5):
        res = po.design(prior, "hamming", "dp", epsilon=eps)
        assert cf.h(eps + eps_x, m, n) - 1e-9 <= res.distortion <= cf.h(eps, m, n) + 1e-9
        assert level_ok(res.epsilon, eps) and res.verified


def test_dp_strictly_below_h_under_eps_tilde():
    """Row ε = ε_X/2 of (.42,.18,.28,.12): 0.6956 < h(ε) = 0.7913."""
    prior, eps_x, _ = NONUNIFORM["42-18-28-12"]
    res = po.design(prior, "hamming", "dp", epsilon=eps_x / 2)
    assert res.distortion < cf.h(eps_x / 2, 2, 2) - 0.05


# independent LP values (HiGHS): (prior, ε, D*_I or None for infeasible, D*_DP)
_P1, _P2, _P4 = (NONUNIFORM[k][0] for k in ("42-18-28-12", "532x2", "non-product"))
_E1 = math.log(7 / 3)
_E2, _T2 = math.log(2.5), math.log(3.0)
_E4, _T4 = math.log(4.0), NONUNIFORM["non-product"][2]
LP_TABLE = [
    (_P1, _E1 / 2, None, 0.695643923739),
    (_P1, _E1, 0.6, 0.6),
    (_P1, _E1 + 0.5, 0.412624979351, 0.412624979351),
    (_P1, 2.0, 0.238405844044, 0.238405844044),
    (_P2, _E2 / 2, None, 1.0),
    (_P2, _E2, 1.0, 0.857142857143),
    (_P2, (_E2 + _T2) / 2, 0.90455488499, 0.827966224622),
    (_P2, _T2, 0.8, 0.8),
    (_P4, _E4, 0.8, 0.4),
    (_P4, (_E4 + _T4) / 2, 0.564504978769, 0.323756869211),
    (_P4, _T4, 0.259687576257, 0.259687576257),
    (uniform_database(3, 2), 0.3, 1.194080177634, 1.194080177634),
    (uniform_database(3, 2), 1.0, 0.847766230468, 0.847766230468),
]


@pytest.mark.parametrize("prior,eps,d_i,d_dp", LP_TABLE)
def test_spec_lp_table_row(prior, eps, d_i, d_dp):
    res = po.design(prior, "hamming", "dp", epsilon=eps)
    assert res.distortion == pytest.approx(d_dp, abs=1e-7)
    if d_i is None:
        with pytest.raises(InfeasibleError) as info:
            po.design(prior, "hamming", "identifiability", epsilon=eps)
        assert info.value.least_achievable == pytest.approx(cf.epsilon_x(prior), abs=1e-12)
    else:
        res = po.design(prior, "hamming", "identifiability", epsilon=eps)
        assert res.distortion == pytest.approx(d_i, abs=1e-7)


def test_identifiability_at_eps_x_on_532_exceeds_h():
    """At ε_X = ln 2.5 < ε̃_X, D*_I = 1.0 > h(ε_X) = 0.8889 (no h(ε) there)."""
    res = po.design(_P2, "hamming", "identifiability", epsilon=_E2)
    assert res.distortion > cf.h(_E2, 3, 2) + 0.1


def test_e_i_example_at_eps_one_is_identifiability_optimal():
    """E_i of (.42,.18,.28,.12) at ε = 1 has distortion h(1), which the LP reaches."""
    res = po.design(_P1, "hamming", "identifiability", epsilon=1.0)
    e_i = cf.identifiability_mechanism(_P1, 1.0).matrix
    assert res.distortion == pytest.approx(0.53788284274, abs=1e-9)
    assert measures.expected_distortion(_P1, e_i, Distortion.database_hamming(2, 2)) == (
        pytest.approx(res.distortion, abs=1e-9)
    )


@pytest.mark.parametrize("name", ["42-18-28-12", "532x2", "non-product"])
def test_theorem_1_least_levels_by_line_search(name):
    """[Wang-Ying-Zhang] Thm 1: ε*_i(D) = h⁻¹(D) on D ≤ h(ε̃_X), ε*_i(D) ≥ max{h⁻¹(D), ε_X}
    beyond, and max{h⁻¹(D) − ε_X, 0} ≤ ε*_d(D) ≤ max{h⁻¹(D), 0}."""
    prior, eps_x, eps_t = NONUNIFORM[name]
    m, n = prior.m, prior.n
    d_tilde = cf.h(eps_t, m, n)
    for D in (0.5 * d_tilde, d_tilde, 0.5 * (d_tilde + cf.h(0.0, m, n))):
        h_inv = cf.h_inv(D, m, n)
        ident = po.design(prior, "hamming", "identifiability", max_distortion=D)
        assert ident.verified and within_budget(ident.distortion, D)
        if D <= d_tilde * (1 + 1e-12):
            assert ident.epsilon == pytest.approx(h_inv, abs=1e-6)
        else:
            assert ident.epsilon >= max(h_inv, eps_x) - 1e-6
        dp = po.design(prior, "hamming", "dp", max_distortion=D)
        assert dp.verified and within_budget(dp.distortion, D)
        assert max(h_inv - eps_x, 0.0) - 1e-6 <= dp.epsilon <= max(h_inv, 0.0) + 1e-6


# =============================================================================================
# PD-MIP ([Wang-Ying-Zhang] Theorem 2)
# =============================================================================================
TIGHT_CLARABEL = {"CLARABEL": {"tol_gap_abs": 1e-12, "tol_gap_rel": 1e-12, "tol_feas": 1e-12}}

# (prior, D, independent cvxpy I*)
PDMIP_TABLE = [
    (uniform_database(2, 2), 0.2, 0.736128414337),
    (uniform_database(2, 2), 0.3, 0.540876185508),
    (uniform_database(2, 2), 0.75, 0.0631678848039),
    (_P1, 0.2, 0.633710022281),
    (_P1, 0.3, 0.438457793452),
    (_P1, 0.53788284274, 0.119469751288),
    (_P1, 0.6, 0.0621473649544),
    (_P2, 0.2, 1.27051064523),
    (_P2, 0.3, 1.00594369835),
    (_P2, 0.8, 0.158764949663),
    (_P4, 0.2, 0.629688279051),
]


@pytest.mark.parametrize("prior,D,value", PDMIP_TABLE)
def test_pdmip_least_information_matches_closed_form(prior, D, value):
    res = po.design(prior, "hamming", "mutual_information", max_distortion=D)
    assert res.verified and res.mode == "max_distortion"
    assert res.epsilon == pytest.approx(cf.pdmip_value(prior, D), abs=1e-6)
    assert res.epsilon == pytest.approx(value, abs=1e-6)
    assert within_budget(res.distortion, D)
    assert res.epsilon == pytest.approx(measures.mutual_information(prior, res.mechanism), abs=0)
    # the default (Clarabel, tolerance 1e-8) mechanism is E_i up to the flatness of I near it
    e_i = cf.identifiability_mechanism(prior, cf.h_inv(D, prior.m, prior.n)).matrix
    assert np.abs(res.mechanism.matrix - e_i).max() < 1e-3


@pytest.mark.parametrize("prior,D,value", PDMIP_TABLE)
def test_pdmip_mechanism_is_e_i(prior, D, value):
    """[Wang-Ying-Zhang] Thm 2: E_i at ε = h⁻¹(D) solves PD-MIP. Solved here to 1e-12 gaps (Clarabel
    options through ``solve_problem``). At D = h(ε̃_X) one output of E_i has mass 0 and the
    objective is flat to second order in that direction, so the mechanism is only pinned down
    to about √gap there."""
    pp = po.build_problem(prior, "hamming", "mutual_information", max_distortion=D)
    res = po.solve_problem(pp, solver_options=TIGHT_CLARABEL)
    e_i = cf.identifiability_mechanism(prior, cf.h_inv(D, prior.m, prior.n)).matrix
    on_boundary = math.isclose(D, cf.pdmip_valid_range(prior)[1], rel_tol=1e-9)
    tol = 2e-5 if on_boundary else 1e-6
    assert np.abs(res.mechanism.matrix - e_i).max() < tol
    assert res.epsilon == pytest.approx(value, abs=1e-9)


@pytest.mark.parametrize(
    "prior,D,value",
    [(_P1, 0.75, 0.0), (_P4, 0.3, 0.4361219582)],
)
def test_pdmip_outside_valid_range_closed_form_is_only_a_lower_bound(prior, D, value):
    res = po.design(prior, "hamming", "mutual_information", max_distortion=D)
    assert res.epsilon == pytest.approx(value, abs=1e-6)
    assert res.epsilon >= cf.pdmip_value(prior, D, strict=False) - 1e-9


# =============================================================================================
# Calmon–Fawaz [Calmon-Fawaz]
# =============================================================================================
def six_point_prior() -> JointPrior:
    """S uniform on 6 points, Y = S mod 3 (Corollary 1)."""
    joint = np.zeros((6, 3))
    joint[np.arange(6), np.arange(6) % 3] = 1 / 6
    return JointPrior(joint)


def counting_query_prior(n: int = 4, p: float = 0.3) -> JointPrior:
    """S ∈ {0,1}ⁿ i.i.d. Bernoulli(p), Y = number of ones (Example 2, Theorem 2)."""
    bits = (np.arange(2**n)[:, None] >> np.arange(n - 1, -1, -1)[None, :]) & 1
    p_s = np.prod(np.where(bits == 1, p, 1 - p), axis=1)
    joint = np.zeros((2**n, n + 1))
    joint[np.arange(2**n), bits.sum(axis=1)] = p_s
    return JointPrior(joint)


ABS_DISTANCE = np.abs(np.arange(5)[:, None] - np.arange(5)[None, :]).astype(float)


@pytest.mark.parametrize(
    "delta,value", [(0.1, 0.704214597221), (0.3, 0.279803832445), (0.5, 0.058891517828)]
)
def test_corollary_1_rate_distortion(delta, value):
    jp = six_point_prior()
    res = po.design(jp, "hamming", "mutual_information", max_distortion=delta)
    assert res.epsilon == pytest.approx(value, abs=1e-7)
    assert res.epsilon == pytest.approx(cf.rate_distortion_hamming_uniform(3, delta), abs=1e-7)
    assert within_budget(res.distortion, delta)
    # I(S;U) = I(Y;U) because Y is a function of S
    i_yu = measures.mutual_information(Prior(jp.p_y), res.mechanism)
    assert i_yu == pytest.approx(res.epsilon, abs=1e-10)
    assert res.mechanism.shape == (3, 3)


def test_counting_query_prior_entropies():
    jp = counting_query_prior()
    assert stats.entropy(jp.p_s) == pytest.approx(2.44345720822, abs=1e-10)
    np.testing.assert_allclose(cf.zeta(jp), np.array([1, 4, 6, 4, 1]) / 16, atol=1e-14)


@pytest.mark.parametrize(
    "eps,value", [(0.0, 0.6802), (0.3, 0.448144541), (0.8, 0.251214469), (1.5, 0.0808711804)]
)
def test_theorem_2_counting_query(eps, value):
    jp = counting_query_prior()
    res = po.design(jp, ABS_DISTANCE, "max_information_leakage", epsilon=eps)
    assert res.verified
    assert res.distortion == pytest.approx(value, abs=1e-6)
    assert level_ok(res.epsilon, eps)
    assert level_ok(measures.max_information_leakage(jp, res.mechanism), eps)


def test_theorem_2_at_zero_is_best_constant_output():
    """[Calmon-Fawaz] Thm 1 at ε = 0 and Y = f(S), U ⊥ Y and D*(0) = min_u Σ_y p(y)|u − y|."""
    jp = counting_query_prior()
    best_constant = float((jp.p_y @ ABS_DISTANCE).min())
    assert best_constant == pytest.approx(0.6802, abs=1e-12)
    res = po.design(jp, ABS_DISTANCE, "max_information_leakage", epsilon=0.0)
    assert res.distortion == pytest.approx(best_constant, abs=1e-6)


@pytest.mark.parametrize("delta,eps_star", [(0.5, 0.2150013), (0.25, 0.8036169)])
def test_theorem_2_line_search(delta, eps_star):
    jp = counting_query_prior()
    res = po.design(jp, ABS_DISTANCE, "max_information_leakage", max_distortion=delta)
    assert res.epsilon == pytest.approx(eps_star, abs=1e-6)
    assert within_budget(res.distortion, delta)
    assert res.line_search is not None
    lo, hi = res.line_search.bracket
    assert lo <= hi and hi - lo <= 1e-7 + 1e-12
    assert res.epsilon <= hi + 1e-9


def corollary_2_distortion(jp: JointPrior, d: np.ndarray, eps: float) -> float:
    """[Calmon-Fawaz] Corollary 2 in its convex form, written here from scratch:
    min E d s.t. Σ_y rel_entr(p(y,u), ζ(y) p(u)) ≤ t p(u) ∀u,
    t = ε − H(S) + ln Σ_y e^{H(S|Y=y)}."""
    n_y, n_u = d.shape
    p_y = jp.p_y
    h_s = stats.entropy(jp.p_s)
    h_s_given_y = np.array([stats.entropy(jp.joint[:, y] / p_y[y]) for y in range(n_y)])
    t = eps - h_s + np.log(np.exp(h_s_given_y).sum())
    zeta = cf.zeta(jp)
    W = cp.Variable((n_y, n_u), nonneg=True)
    p_yu = cp.multiply(p_y[:, None], W)
    p_u = p_y @ W
    reference = zeta[:, None] @ cp.reshape(p_u, (1, n_u), order="C")
    constraints = [
        cp.sum(W, axis=1) == 1,
        cp.sum(cp.rel_entr(p_yu, reference), axis=0) <= t * p_u,
    ]
    problem = cp.Problem(cp.Minimize(cp.sum(cp.multiply(p_y[:, None] * d, W))), constraints)
    problem.solve(solver="CLARABEL")
    assert problem.status == "optimal"
    return float(problem.value)


@pytest.mark.parametrize(
    "eps,spec_value", [(0.0, 0.6802), (0.3, 0.448144506), (0.8, 0.251214458), (1.5, 0.0808711461)]
)
def test_theorem_2_equals_corollary_2(eps, spec_value):
    jp = counting_query_prior()
    via_corollary = corollary_2_distortion(jp, ABS_DISTANCE, eps)
    assert via_corollary == pytest.approx(spec_value, abs=1e-6)
    res = po.design(jp, ABS_DISTANCE, "max_information_leakage", epsilon=eps)
    assert res.distortion == pytest.approx(via_corollary, abs=1e-6)


def test_identity_40_on_random_mechanisms():
    """[Calmon-Fawaz] Corollary 2: H(S) − H(S|U=u) = H(S) − ln Σ_y e^{H(S|Y=y)} + D(p_{Y|U=u} ‖
    ζ)."""
    jp = counting_query_prior()
    rng = np.random.default_rng(7)
    h_s = stats.entropy(jp.p_s)
    h_sy = np.array([stats.entropy(jp.joint[:, y] / jp.p_y[y]) for y in range(5)])
    log_sum = np.log(np.exp(h_sy).sum())
    zeta = cf.zeta(jp)
    for _ in range(5):
        W = rng.dirichlet(np.ones(4), size=5)
        per_u = measures.information_leakage_per_output(jp, W)
        p_u = jp.p_y @ W
        post = jp.p_y[:, None] * W / p_u[None, :]
        kl = np.array([stats.entropy(post[:, u], zeta) for u in range(4)])
        np.testing.assert_allclose(per_u, h_s - log_sum + kl, atol=1e-12)


# =============================================================================================
# Linear notions against an independent scipy.optimize.linprog formulation
# =============================================================================================
LINEAR_NOTIONS = (
    "pml",
    "maximal_leakage",
    "information_privacy",
    "dp",
    "ldp",
    "identifiability",
)


def random_instance(seed: int, square: bool = True, zero_entry: bool = False):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 6))
    ko = k if square else int(rng.integers(2, 6))
    p = rng.dirichlet(np.ones(k)) + 0.05
    if zero_entry and k >= 3:
        p[rng.integers(k)] = 0.0
    p /= p.sum()
    d = rng.uniform(0.0, 2.0, size=(k, ko))
    if square:
        np.fill_diagonal(d, 0.0)
    eps = float(rng.uniform(0.1, 2.0))
    return p, d, eps


def _eps_for(notion, p, eps):
    """Identifiability is infeasible below ε_X = max ln p(x)/p(x') on the support."""
    if notion != "identifiability":
        return eps
    q = p[p > 0]
    return float(np.log(q.max() / q.min())) + eps


CASES = [(s, True, False) for s in range(6)] + [(s, False, False) for s in range(6, 9)]
CASES += [(s, True, True) for s in range(9, 12)]


@pytest.mark.parametrize("notion", LINEAR_NOTIONS)
@pytest.mark.parametrize("seed,square,zero_entry", CASES)
def test_linear_notion_matches_linprog(notion, seed, square, zero_entry):
    p, d, eps = random_instance(seed, square, zero_entry)
    eps = _eps_for(notion, p, eps)
    neighbors = "all" if notion in ("dp", "identifiability") else None
    res = po.design(p, d, notion, epsilon=eps, neighbors=neighbors)
    assert res.verified
    assert res.distortion == pytest.approx(reference_lp(notion, p, d, eps), abs=1e-7)
    assert res.mechanism.shape == d.shape
    assert level_ok(get_level(notion, p, res.mechanism.matrix), eps)
    # the leakage report measures every standard notion, this one included
    assert set(po.notions.STANDARD_NOTIONS) <= set(res.leakage)
    assert res.leakage[notion] == pytest.approx(res.epsilon, rel=1e-12, abs=1e-15)


def get_level(notion, p, W, priors=None):
    """The notion's level re-measured with privopt.measures directly."""
    if notion == "mutual_information":
        return measures.mutual_information(p, W)
    if notion == "max_information_leakage":
        return measures.max_information_leakage(p, W)
    if notion == "pml":
        return measures.pml_level(p, W)
    if notion == "maximal_leakage":
        return measures.maximal_leakage(p, W)
    if notion == "information_privacy":
        return measures.information_privacy_level(p, W)
    if notion == "identifiability":
        return measures.identifiability_level(p, W, "all")
    if notion == "dp":
        return measures.dp_level(p, W, "all")
    if notion == "ldp":
        return measures.ldp_level(p, W)
    if notion == "robust_pml":
        return max(measures.pml_level(q, W) for q in priors)
    raise AssertionError(notion)


# =============================================================================================
# Features: robust PML, observe_secret, extra distortions, rectangular outputs,
# add_constraints, sweeps, max_distortion mode, infeasible budgets
# =============================================================================================
P3 = np.array([0.5, 0.3, 0.2])
HAMMING3 = 1.0 - np.eye(3)
SQUARED3 = (np.arange(3)[:, None] - np.arange(3)[None, :]).astype(float) ** 2


@pytest.mark.parametrize("eps", [0.2, 0.5, 1.0])
@pytest.mark.filterwarnings("ignore:the guarantee holds at the listed priors:UserWarning")
def test_robust_pml_meets_every_prior(eps):
    priors = [P3, np.array([0.2, 0.3, 0.5]), np.array([0.6, 0.0, 0.4]), np.full(3, 1 / 3)]
    res = po.design(P3, HAMMING3, "robust_pml", epsilon=eps, priors=priors)
    assert res.verified
    W = res.mechanism.matrix
    for q in priors:
        assert level_ok(measures.pml_level(q, W), eps)
    single = po.design(P3, HAMMING3, "pml", epsilon=eps)
    assert res.distortion >= single.distortion - 1e-9
    # the robust LP is PML at every vertex: check against linprog with all the rows stacked
    assert res.distortion == pytest.approx(robust_reference(priors, P3, HAMMING3, eps), abs=1e-7)


def robust_reference(priors, p, d, eps):
    k, ko = d.shape
    c = math.exp(eps)
    rows = []
    for q in priors:
        for x in np.flatnonzero(q > 0):
            for u in range(ko):
                r = np.zeros(k * ko)
                r[x * ko + u] += 1
                for x2 in range(k):
                    r[x2 * ko + u] -= c * q[x2]
                rows.append(r)
    a_eq = np.kron(np.eye(k), np.ones((1, ko)))
    res = optimize.linprog(
        (p[:, None] * d).ravel(),
        A_ub=np.array(rows),
        b_ub=np.zeros(len(rows)),
        A_eq=a_eq,
        b_eq=np.ones(k),
        bounds=(0, None),
        method="highs",
    )
    assert res.status == 0
    return float(res.fun)


def test_robust_pml_needs_priors():
    with pytest.raises(InputError):
        po.design(P3, HAMMING3, "robust_pml", epsilon=0.5)
    with pytest.raises(InputError):
        po.design(P3, HAMMING3, "robust_pml", epsilon=0.5, priors=[[0.5, 0.5]])
    with pytest.raises(InputError):
        po.design(P3, HAMMING3, "pml", epsilon=0.5, priors=[P3])


def random_joint(seed: int, n_s: int = 3, n_y: int = 4) -> JointPrior:
    rng = np.random.default_rng(seed)
    return JointPrior(rng.dirichlet(np.ones(n_s * n_y)).reshape(n_s, n_y))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_observe_secret_reaches_at_most_theorem_1(seed):
    jp = random_joint(seed)
    d = Distortion.hamming(4)
    D = 0.3
    plain = po.design(jp, d, "mutual_information", max_distortion=D)
    seen = po.design(jp, d, "mutual_information", max_distortion=D, observe_secret=True)
    assert seen.verified and plain.verified
    assert seen.epsilon <= plain.epsilon + 1e-7
    # the mechanism is p(u | s, y): one row per pair (s, y), s-major
    V = seen.mechanism.matrix
    assert V.shape == (12, 4)
    V = V.reshape(3, 4, 4)  # V[s, y, u]
    # (18): p(u|s) = Σ_y p(y|s) V_s[y,u];  (19): p(u|y) = Σ_s p(s|y) V_s[y,u]
    p_u_given_s = np.einsum("sy,syu->su", jp.p_y_given_s, V)
    p_u_given_y = np.einsum("ys,syu->yu", jp.p_s_given_y, V)
    assert measures.mutual_information(Prior(jp.p_s), p_u_given_s) == pytest.approx(
        seen.epsilon, abs=1e-9
    )
    distortion = float(np.sum(jp.p_y[:, None] * p_u_given_y * d.matrix))
    assert distortion == pytest.approx(seen.distortion, abs=1e-12)
    assert within_budget(distortion, D)


def test_observe_secret_needs_joint_prior():
    with pytest.raises(InputError):
        po.design(P3, HAMMING3, "mutual_information", max_distortion=0.3, observe_secret=True)


@pytest.mark.parametrize("notion", ["pml", "information_privacy", "dp"])
def test_extra_distortion_budget_in_epsilon_mode(notion):
    eps, budget = 0.8, 0.1
    penalty = np.zeros((3, 3))
    penalty[:, 1] = 1.0  # E[penalty] = P(U = 1)
    plain = po.design(P3, HAMMING3, notion, epsilon=eps)
    assert measures.expected_distortion(P3, plain.mechanism, penalty) > budget + 0.05  # binds
    res = po.design(P3, HAMMING3, notion, epsilon=eps, extra_distortions=[(penalty, budget)])
    assert res.verified
    assert within_budget(measures.expected_distortion(P3, res.mechanism, penalty), budget)
    assert res.distortion > plain.distortion + 1e-3
    assert res.distortion == pytest.approx(
        reference_lp(notion, P3, HAMMING3, eps, extra=[(penalty, budget)]), abs=1e-7
    )
    assert level_ok(get_level(notion, P3, res.mechanism.matrix), eps)


def test_infeasible_extra_budget_in_epsilon_mode():
    """No PML-0.3 mechanism has E[(y − u)²] ≤ 0.5 here (checked by linprog)."""
    with pytest.raises(AssertionError):
        reference_lp("pml", P3, HAMMING3, 0.3, extra=[(SQUARED3, 0.5)])
    with pytest.raises(InfeasibleError):
        po.design(P3, HAMMING3, "pml", epsilon=0.3, extra_distortions=[(SQUARED3, 0.5)])
    res = po.design(
        P3,
        HAMMING3,
        "pml",
        epsilon=0.3,
        extra_distortions=[(SQUARED3, 0.5)],
        raise_on_infeasible=False,
    )
    assert res.status == "infeasible"


def test_two_distortion_budgets_in_max_distortion_mode():
    budgets = (0.35, 0.4)
    res = po.design(
        P3,
        HAMMING3,
        "mutual_information",
        max_distortion=budgets[0],
        extra_distortions=[(Distortion.from_matrix(SQUARED3), budgets[1])],
    )
    assert res.verified
    assert within_budget(res.distortion, budgets[0])
    assert within_budget(measures.expected_distortion(P3, res.mechanism, SQUARED3), budgets[1])
    alone = po.design(P3, HAMMING3, "mutual_information", max_distortion=budgets[0])
    assert measures.expected_distortion(P3, alone.mechanism, SQUARED3) > budgets[1] + 1e-3
    assert res.epsilon >= alone.epsilon - 1e-9


def test_extra_distortion_shape_must_match():
    with pytest.raises(InputError):
        po.design(P3, HAMMING3, "pml", epsilon=0.5, extra_distortions=[(np.ones((3, 2)), 1.0)])


RECT = np.array([[0.0, 1.0], [0.4, 0.6], [1.0, 0.0]])  # 3 inputs × 2 outputs


@pytest.mark.parametrize("notion", LINEAR_NOTIONS)
def test_rectangular_output_alphabet_linear(notion):
    eps = _eps_for(notion, P3, 0.4)
    neighbors = "all" if notion in ("dp", "identifiability") else None
    res = po.design(P3, RECT, notion, epsilon=eps, neighbors=neighbors)
    assert res.mechanism.shape == (3, 2)
    assert res.distortion == pytest.approx(reference_lp(notion, P3, RECT, eps), abs=1e-7)
    assert level_ok(get_level(notion, P3, res.mechanism.matrix), eps)


def test_rectangular_output_alphabet_mutual_information():
    D = 0.3
    res = po.design(
        P3, Distortion.from_matrix(RECT, ["lo", "hi"]), "mutual_information", max_distortion=D
    )
    assert res.mechanism.shape == (3, 2)
    assert res.mechanism.output_labels == ("lo", "hi")
    assert within_budget(res.distortion, D)
    # optimality against a brute-force scan of the channels [[a, 1−a], [b, 1−b], [c, 1−c]]
    g = np.linspace(0.0, 1.0, 61)
    first = np.stack(np.meshgrid(g, g, g, indexing="ij"), axis=-1).reshape(-1, 3)  # W[:, 0]
    W = np.stack([first, 1 - first], axis=-1)  # (N, 3, 2)
    dist = np.einsum("x,nxu,xu->n", P3, W, RECT)
    p_u = np.einsum("x,nxu->nu", P3, W)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(W > 0, W * np.log(W / p_u[:, None, :]), 0.0)
    info = np.einsum("x,nxu->n", P3, terms)
    best = info[dist <= D].min()
    assert res.epsilon <= best + 1e-9
    assert res.epsilon >= best - 0.01  # the grid is fine enough to come close


def test_distortion_rows_must_match_inputs():
    with pytest.raises(InputError):
        po.design(P3, np.ones((2, 3)), "pml", epsilon=0.5)


def test_add_constraints_then_solve_problem():
    eps = 0.5
    free = po.design(P3, HAMMING3, "pml", epsilon=eps)
    assert free.mechanism.matrix[0, 1] > 0.05  # the constraint below binds
    pp = po.build_problem(P3, HAMMING3, "pml", epsilon=eps)
    assert pp.add_constraints(pp.W[0, 1] == 0) is pp
    assert len(pp.user_constraints) == 1
    res = po.solve_problem(pp)
    assert res.verified
    assert res.mechanism.matrix[0, 1] == pytest.approx(0.0, abs=1e-9)
    assert res.distortion >= free.distortion + 1e-6
    ref = reference_lp("pml", P3, HAMMING3, eps, fixed_zero=[(0, 1)])
    assert res.distortion == pytest.approx(ref, abs=1e-7)
    assert level_ok(measures.pml_level(P3, res.mechanism), eps)


def test_add_constraints_survives_set_epsilon():
    pp = po.build_problem(P3, HAMMING3, "information_privacy", epsilon=0.5)
    pp.add_constraints(pp.W[:, 2] <= 0.1)
    for eps in (0.5, 1.0, 2.0):
        pp.set_epsilon(eps)
        res = po.solve_problem(pp)
        assert res.mechanism.matrix[:, 2].max() <= 0.1 + 1e-9
        assert level_ok(res.epsilon, eps)


def test_level_parameter_and_set_epsilon():
    pp = po.build_problem(P3, HAMMING3, "pml", epsilon=0.5)
    assert isinstance(pp.problem, cp.Problem)
    assert pp.level_parameter.value == pytest.approx(math.exp(0.5))
    pp.set_epsilon(1.2)
    assert pp.level_parameter.value == pytest.approx(math.exp(1.2))
    res = po.solve_problem(pp)
    assert res.distortion == pytest.approx(
        po.design(P3, HAMMING3, "pml", epsilon=1.2).distortion, abs=1e-9
    )
    mi = po.build_problem(P3, HAMMING3, "mutual_information", epsilon=0.4)
    assert mi.level_parameter.value == pytest.approx(0.4)  # ε itself for information measures
    mi_budget = po.build_problem(P3, HAMMING3, "mutual_information", max_distortion=0.3)
    assert mi_budget.level_parameter is None and mi_budget.budget_parameter.value == 0.3
    with pytest.raises(InputError):
        mi_budget.set_epsilon(0.1)
    mi_budget.set_max_distortion(0.5)
    assert po.solve_problem(mi_budget).epsilon == pytest.approx(
        po.design(P3, HAMMING3, "mutual_information", max_distortion=0.5).epsilon, abs=1e-7
    )


def test_request_validation():
    with pytest.raises(InputError):
        po.design(P3, HAMMING3, "pml")
    with pytest.raises(InputError):
        po.design(P3, HAMMING3, "pml", epsilon=0.5, max_distortion=0.3)
    with pytest.raises(InputError):
        po.design(P3, HAMMING3, "pml", epsilon=-0.1)
    with pytest.raises(InputError):
        po.design(P3, HAMMING3, "no_such_notion", epsilon=0.1)
    with pytest.raises(InputError):
        po.design(P3, HAMMING3, "pml", epsilon=0.5, neighbors="all")
    with pytest.raises(InputError):
        po.design(P3, HAMMING3, "dp", epsilon=0.5, neighbors="hamming")  # not a database


# --- sweeps ---------------------------------------------------------------------------------
def test_sweep_epsilon_records():
    prior, eps_x, _ = NONUNIFORM["42-18-28-12"]
    epsilons = [0.2, eps_x, 1.2, 2.0, 3.0]
    curve = po.sweep(prior, "hamming", "identifiability", epsilons=epsilons)
    assert len(curve) == 5 and curve.mode == "epsilon" and curve.notion == "identifiability"
    statuses = [r["status"] for r in curve.records]
    assert statuses[0] == "infeasible"
    assert curve.records[0]["least_achievable"] == pytest.approx(eps_x, abs=1e-12)
    assert all(s == "optimal" for s in statuses[1:])
    assert [r["requested_epsilon"] for r in curve.records] == epsilons
    D = curve.column("distortion")
    assert np.isnan(D[0])
    assert np.all(np.diff(D[1:]) <= 1e-9)
    for eps, dist in zip(epsilons[1:], D[1:], strict=True):
        assert dist == pytest.approx(cf.h(eps, 2, 2), abs=1e-7)
    assert all(level_ok(r["epsilon"], r["requested_epsilon"]) for r in curve.records[1:])
    assert all(r["verified"] for r in curve.records[1:])


@pytest.mark.parametrize(
    "notion", ["pml", "maximal_leakage", "information_privacy", "mutual_information"]
)
def test_sweep_matches_single_designs(notion):
    epsilons = [0.1, 0.4, 0.9, 1.6]
    curve = po.sweep(P3, SQUARED3, notion, epsilons=epsilons)
    D = curve.column("distortion")
    assert np.all(np.diff(D) <= 1e-8 * (1 + D[:-1]))
    for eps, dist in zip(epsilons, D, strict=True):
        single = po.design(P3, SQUARED3, notion, epsilon=eps)
        assert dist == pytest.approx(single.distortion, abs=1e-7)
    assert all(r is not None and r.verified for r in curve.results)


def test_sweep_max_distortions_and_frame():
    import pandas as pd  # in the [test] extra: Curve.to_frame is part of the API

    budgets = [0.1, 0.2, 0.3, 0.45]
    curve = po.sweep(P3, HAMMING3, "mutual_information", max_distortions=budgets)
    assert curve.mode == "max_distortion"
    levels = curve.column("epsilon")
    assert np.all(np.diff(levels) <= 1e-8)  # the least I is non-increasing in the budget
    frame = curve.to_frame()
    assert isinstance(frame, pd.DataFrame) and len(frame) == 4
    assert {"epsilon", "distortion", "status", "verified", "requested_max_distortion"} <= set(
        frame.columns
    )
    assert list(frame["requested_max_distortion"]) == budgets
    assert (frame["status"] == "optimal").all()
    for budget, dist in zip(budgets, frame["distortion"], strict=True):
        assert within_budget(dist, budget)


def test_sweep_line_search_notion_over_budgets():
    budgets = [0.2, 0.35, 0.5]
    curve = po.sweep(P3, HAMMING3, "pml", max_distortions=budgets)
    levels = curve.column("epsilon")
    assert np.all(np.diff(levels) <= 1e-7)
    for budget, res in zip(budgets, curve.results, strict=True):
        assert within_budget(res.distortion, budget)
        assert res.line_search is not None


def test_sweep_requires_exactly_one_axis():
    with pytest.raises(InputError):
        po.sweep(P3, HAMMING3, "pml")
    with pytest.raises(InputError):
        po.sweep(P3, HAMMING3, "pml", epsilons=[0.1], max_distortions=[0.1])
    with pytest.raises(InputError):
        po.sweep(P3, HAMMING3, "pml", epsilons=[])


def test_sweep_records_bad_point_without_stopping():
    curve = po.sweep(P3, HAMMING3, "pml", epsilons=[0.5, -1.0, 1.0])
    assert [r["status"] for r in curve.records] == ["optimal", "error", "optimal"]
    assert "message" in curve.records[1]


# --- max_distortion mode --------------------------------------------------------------------
PRIOR4 = np.array([0.4, 0.3, 0.2, 0.1])
ABS4 = np.abs(np.arange(4)[:, None] - np.arange(4)[None, :]).astype(float)


@pytest.mark.parametrize(
    "notion", ["mutual_information", "maximal_leakage", "pml", "dp", "information_privacy"]
)
@pytest.mark.parametrize("fraction", [0.25, 0.6])
def test_max_distortion_mode_is_tight(notion, fraction):
    """The answer meets the budget, and ε-mode one milli-nat below its level cannot."""
    d_zero = po.design(PRIOR4, ABS4, notion, epsilon=0.0).distortion  # D*(0)
    budget = fraction * d_zero  # least achievable is 0 (identity)
    res = po.design(PRIOR4, ABS4, notion, max_distortion=budget)
    assert res.verified and res.mode == "max_distortion"
    assert within_budget(res.distortion, budget)
    assert res.epsilon > 1e-3
    assert level_ok(get_level(notion, PRIOR4, res.mechanism.matrix), res.epsilon)
    below = po.design(PRIOR4, ABS4, notion, epsilon=res.epsilon - 1e-3)
    assert below.distortion > budget + 1e-9
    direct = po.get_notion(notion).direct_level
    assert (res.line_search is None) == direct


@pytest.mark.parametrize(
    "notion",
    [
        "mutual_information",
        "maximal_leakage",
        "max_information_leakage",
        "pml",
        "dp",
        "ldp",
        "information_privacy",
        "identifiability",
    ],
)
def test_budget_below_least_distortion_is_infeasible(notion):
    d = np.array([[1.0, 2.0], [0.5, 3.0], [2.0, 0.2], [0.3, 0.3]])
    least = float(PRIOR4 @ d.min(axis=1))
    neighbors = "all" if notion in ("dp", "identifiability") else None
    with pytest.raises(InfeasibleError) as info:
        po.design(PRIOR4, d, notion, max_distortion=least - 0.01, neighbors=neighbors)
    assert info.value.least_achievable == pytest.approx(least, abs=1e-12)
    assert info.value.quantity == "distortion"
    res = po.design(
        PRIOR4,
        d,
        notion,
        max_distortion=least - 0.01,
        neighbors=neighbors,
        raise_on_infeasible=False,
    )
    assert res.status == "infeasible" and res.mechanism is None
    assert res.least_achievable == pytest.approx(least, abs=1e-12)
    # a budget a little above the least achievable is met
    ok = po.design(PRIOR4, d, notion, max_distortion=least + 0.01, neighbors=neighbors)
    assert ok.verified and within_budget(ok.distortion, least + 0.01)


@pytest.mark.parametrize("notion", ["mutual_information", "pml", "max_information_leakage"])
def test_budget_equal_to_least_distortion_is_met(notion):
    """D = Σ_y p(y) min_u d(y,u) is achievable (the argmin mechanism): never "infeasible"."""
    d = np.array([[1.0, 2.0], [0.5, 3.0], [2.0, 0.2], [0.3, 0.9]])
    least = float(PRIOR4 @ d.min(axis=1))
    res = po.design(PRIOR4, d, notion, max_distortion=least)
    assert res.verified and within_budget(res.distortion, least)
    argmin = np.zeros_like(d)
    argmin[np.arange(4), d.argmin(axis=1)] = 1.0
    assert res.epsilon <= get_level(notion, PRIOR4, argmin) + 1e-6


@pytest.mark.parametrize(
    "notion", ["pml", "dp", "ldp", "information_privacy", "identifiability", "robust_pml"]
)
def test_unbounded_epsilon_keeps_extra_budgets(notion):
    """ε = ∞ drops the privacy constraint, not the other distortion budgets."""
    priors = [P3, np.full(3, 1 / 3)] if notion == "robust_pml" else None
    extra = np.eye(3)  # penalises the identity, which the main Hamming distortion wants
    res = po.design(
        P3,
        HAMMING3,
        notion,
        epsilon=math.inf,
        extra_distortions=[(extra, 0.5)],
        priors=priors,
    )
    assert res.verified
    assert within_budget(measures.expected_distortion(P3, res.mechanism, extra), 0.5)
    assert res.distortion == pytest.approx(0.5, abs=1e-7)


ALL_NOTIONS = (
    "mutual_information",
    "max_information_leakage",
    "pml",
    "maximal_leakage",
    "information_privacy",
    "dp",
    "ldp",
    "robust_pml",
)
D_SKEW = ABS4.copy()
D_SKEW[0, 3] = 0.1  # makes the best constant output non-obvious


@pytest.mark.parametrize("notion", ALL_NOTIONS)
def test_epsilon_zero_gives_best_constant_output(notion):
    """At level 0 every notion here forces p(u|x) to be constant in x (U ⊥ X), so
    D*(0) = min_u Σ_x p(x) d(x,u)."""
    priors = [PRIOR4, np.full(4, 0.25)] if notion == "robust_pml" else None
    res = po.design(PRIOR4, D_SKEW, notion, epsilon=0.0, priors=priors)
    assert res.verified
    assert res.distortion == pytest.approx(float((PRIOR4 @ D_SKEW).min()), abs=1e-6)
    assert level_ok(get_level(notion, PRIOR4, res.mechanism.matrix, priors), 0.0)


@pytest.mark.parametrize("notion", ALL_NOTIONS)
def test_unbounded_level_gives_least_distortion(notion):
    priors = [PRIOR4, np.full(4, 0.25)] if notion == "robust_pml" else None
    least = float(PRIOR4 @ D_SKEW.min(axis=1))
    res = po.design(PRIOR4, D_SKEW, notion, epsilon=math.inf, priors=priors)
    assert res.verified and res.distortion == pytest.approx(least, abs=1e-7)
    top = po.get_notion(notion).max_level(Prior(PRIOR4))
    if math.isfinite(top):  # beyond its largest level the constraint excludes nothing
        res = po.design(PRIOR4, D_SKEW, notion, epsilon=top + 0.5, priors=priors)
        assert res.distortion == pytest.approx(least, abs=1e-7)


@pytest.mark.parametrize("row", [[0.6, 0.4, 0.0], [0.5, 0.5, 0.0]])
def test_identifiability_on_database_without_full_support(row):
    """Supports: pairs with a zero-mass database are left out, so ε_X is taken on the
    support; i.i.d. rows and the same pmf given in full must agree."""
    iid = DatabasePrior(3, 2, row_probs=row)
    full = DatabasePrior(3, 2, probs=np.kron(row, row))
    q = np.array([r for r in row if r > 0])
    eps_x = float(np.log(q.max() / q.min()))
    for prior in (iid, full):
        res = po.design(prior, "hamming", "identifiability", epsilon=eps_x + 0.3)
        assert res.verified and level_ok(res.epsilon, eps_x + 0.3)
        assert res.distortion == pytest.approx(
            po.design(full, "hamming", "identifiability", epsilon=eps_x + 0.3).distortion,
            abs=1e-9,
        )
        if eps_x > 0:
            with pytest.raises(InfeasibleError) as info:
                po.design(prior, "hamming", "identifiability", epsilon=eps_x / 2)
            assert info.value.least_achievable == pytest.approx(eps_x, abs=1e-12)


def test_solver_choice_and_line_search_tolerance():
    ref = po.design(P3, HAMMING3, "pml", epsilon=0.5)
    assert ref.solver.name == "sparse-highs"  # small LPs go straight to HiGHS first
    assert po.design(P3, HAMMING3, "pml", epsilon=0.5, solver="HIGHS").solver.name == "HIGHS"
    for name in ("CLARABEL", "ECOS"):
        res = po.design(P3, HAMMING3, "pml", epsilon=0.5, solver=name)
        assert res.solver.name == name
        assert res.distortion == pytest.approx(ref.distortion, abs=1e-6)
    mi = po.design(P3, HAMMING3, "mutual_information", max_distortion=0.3, solver="ECOS")
    assert mi.solver.name == "ECOS"
    assert mi.epsilon == pytest.approx(
        po.design(P3, HAMMING3, "mutual_information", max_distortion=0.3).epsilon, abs=1e-6
    )
    with pytest.raises(InputError):
        po.design(P3, HAMMING3, "pml", epsilon=0.5, solver="NO_SUCH_SOLVER")
    coarse = po.design(P3, HAMMING3, "pml", max_distortion=0.3, tol=1e-3)
    lo, hi = coarse.line_search.bracket
    assert 0 <= hi - lo <= 1e-3
    fine = po.design(P3, HAMMING3, "pml", max_distortion=0.3, tol=1e-9)
    assert fine.line_search.solves > coarse.line_search.solves
    assert fine.epsilon <= coarse.epsilon + 1e-9
    assert coarse.epsilon - fine.epsilon <= 1e-3


def test_identifiability_at_a_large_level_is_certified_by_default():
    """An instance of the optimality fuzzer (identifiability, 11 secrets, ε = 14) that the
    cvxpy program left ``optimal_inaccurate``: its HiGHS answer needed a repair that cost a
    relative 3e-5. The sparse LP's vertex is certified, and it is the default now."""
    p = [0.042103691251134084, 0.16627583695091114, 0.02276875590246488, 0.10000013704637808,
         0.2457998836295602, 0.026517041298649773, 0.16346630777101617, 0.0050898668566711856,
         0.0003981728809827251, 0.1784494594419881, 0.049130846970243704]  # fmt: skip
    d = np.abs(np.subtract.outer(np.arange(11), np.arange(11))).astype(float)
    res = po.design(p, d, "identifiability", epsilon=14.0)
    assert res.status == "optimal" and res.solver.name == "sparse-highs"
    assert res.certificate.relative_gap <= 1e-6
    cvx = po.design(p, d, "identifiability", epsilon=14.0, solver="HIGHS")
    assert cvx.status == "optimal_inaccurate"
    assert cvx.distortion >= res.distortion - 1e-12  # feasible, so never below the optimum


@pytest.mark.parametrize("notion", ["dp", "ldp", "information_privacy", "identifiability"])
def test_zero_budget_with_tied_least_outputs(notion):
    """E[d] ≤ D*(∞) with ties: the argmin mechanism [[1,0],[0,1]] has unbounded level, but the
    constant output 1 also has distortion 0, at level 0 (or ε_X for identifiability)."""
    p = np.array([0.5, 0.5])
    d = np.array([[0.0, 0.0], [1.0, 0.0]])
    res = po.design(p, d, notion, max_distortion=0.0)
    assert res.verified and res.distortion == pytest.approx(0.0, abs=1e-12)
    assert res.epsilon == pytest.approx(0.0, abs=1e-9)
    np.testing.assert_allclose(res.mechanism.matrix, [[0.0, 1.0], [0.0, 1.0]], atol=1e-9)


HUGE_LEVEL_OPTIONS = {
    "metric_dp": {"metric": [[0, 1, 2], [1, 0, 1], [2, 1, 0]]},
    "robust_pml": {"priors": [[0.5, 0.3, 0.2], [0.2, 0.3, 0.5]]},
}


@pytest.mark.parametrize("notion", po.notion_names())
def test_levels_beyond_float_range_solve_quietly(notion):
    """ε where ``e^ε`` overflows (710, 800, 1e300): the limit answer, certified, no warning
    (an OverflowError in the maximal-leakage closed form and overflow warnings in the
    repairs once came out of these); a sweep through them keeps every point."""
    prior = [0.5, 0.3, 0.2]
    # a notion's own example options where none are given here (maximal α-leakage: α = 2)
    options = HUGE_LEVEL_OPTIONS.get(notion, po.get_notion(notion).sample_options(po.Prior(prior)))
    least = po.design(prior, "hamming", notion, epsilon=math.inf, **options).distortion
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for eps in (710.0, 800.0, 1e300):
            result = po.design(prior, "hamming", notion, epsilon=eps, **options)
            assert result.status == "optimal", (eps, result.message)
            assert result.distortion == pytest.approx(least, abs=1e-12)
        curve = po.sweep(prior, "hamming", notion, epsilons=[1.0, 800.0, 1e300], **options)
    assert [r["status"] for r in curve.records] == ["optimal"] * 3


def test_closed_forms_beyond_float_range():
    """``ln(e^ε + δ e^{ε_max})`` and the maximal-leakage knapsack at ε past ~709."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cf.maximal_leakage_hamming_distortion([0.5, 0.3, 0.2], 800.0) == 0.0
        assert cf.maximal_leakage_bound(800.0, 0.1, 2.0) == pytest.approx(800.0)
        assert cf.maximal_leakage_bound(1.0, 0.1, 2.0) == pytest.approx(
            math.log(math.e + 0.1 * math.exp(2.0))
        )
        assert cf.maximal_leakage_bound(1.0, 0.0, 2.0) == pytest.approx(1.0)
