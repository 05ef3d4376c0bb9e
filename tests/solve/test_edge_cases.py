"""Edge cases that must give the right answer (issue "Reliability")."""

from __future__ import annotations

import math

import numpy as np
import pytest

import privopt as po
from privopt import closed_forms, measures
from privopt.solve import solve_problem

P3 = [0.5, 0.3, 0.2]
ALL = [
    "mutual_information",
    "max_information_leakage",
    "pml",
    "maximal_leakage",
    "information_privacy",
    "dp",
    "ldp",
    "identifiability",
]
INDEPENDENT_AT_ZERO = [n for n in ALL if n != "identifiability"]


@pytest.mark.parametrize("notion", INDEPENDENT_AT_ZERO)
def test_level_zero_is_independence(notion):
    # D*(0) = min_u E d(Y, u): the best constant output
    d = np.array([[0.0, 1.0, 3.0], [2.0, 0.0, 1.0], [1.0, 2.0, 0.0]])
    res = po.design(P3, d, notion, epsilon=0.0)
    assert res.distortion == pytest.approx(float((np.array(P3) @ d).min()), abs=1e-12)
    assert res.epsilon == pytest.approx(0.0, abs=1e-12)
    W = res.mechanism.matrix
    assert np.allclose(W, W[0])  # every row the same


def test_identifiability_below_eps_x_reports_least_level():
    with pytest.raises(po.InfeasibleError) as info:
        po.design(P3, "hamming", "identifiability", epsilon=0.1)
    assert info.value.least_achievable == pytest.approx(math.log(0.5 / 0.2), abs=1e-12)
    res = po.design(P3, "hamming", "identifiability", epsilon=0.1, raise_on_infeasible=False)
    assert res.status == "infeasible" and res.least_achievable == pytest.approx(math.log(2.5))


@pytest.mark.parametrize("notion", ["dp", "ldp", "information_privacy", "identifiability"])
def test_very_large_epsilon_gives_identity(notion):
    res = po.design(P3, "hamming", notion, epsilon=100.0)
    assert res.verified and res.epsilon <= 100.0
    assert res.distortion < 1e-12
    np.testing.assert_allclose(res.mechanism.matrix, np.eye(3), atol=1e-12)


@pytest.mark.parametrize("notion", ["pml", "maximal_leakage", "mutual_information"])
def test_large_epsilon_beyond_the_largest_level(notion):
    # beyond ε_max / ln|X| / H(X) nothing is excluded: the identity is optimal
    res = po.design(P3, "hamming", notion, epsilon=50.0)
    assert res.distortion < 1e-7


def test_infinite_epsilon_means_no_constraint():
    res = po.design(P3, "hamming", "dp", epsilon=math.inf)
    assert res.distortion == 0.0


def test_zero_probability_symbols_are_left_out():
    p = [0.6, 0.0, 0.4]
    res = po.design(p, "hamming", "pml", epsilon=0.2)
    # the PML constraint binds only rows in the support; the measure ignores the zero row
    assert res.epsilon <= 0.2 + 1e-12
    assert measures.pml_level(p, res.mechanism) == pytest.approx(res.epsilon, abs=1e-12)
    # identifiability on the support: ε_X is ln(.6/.4), not infinite
    with pytest.raises(po.InfeasibleError) as info:
        po.design(p, "hamming", "identifiability", epsilon=0.1)
    assert info.value.least_achievable == pytest.approx(math.log(1.5), abs=1e-12)


@pytest.mark.parametrize("notion", ["pml", "dp", "information_privacy", "mutual_information"])
def test_entries_of_1e12(notion):
    p = np.array([1 - 2e-12, 1e-12, 1e-12])
    res = po.design(p, "hamming", notion, epsilon=0.5)
    assert res.verified
    assert res.distortion <= 3e-12 + 1e-8  # the constant output at the heavy symbol is near-free


@pytest.mark.parametrize("notion", ALL)
def test_single_symbol_alphabet(notion):
    res = po.design([1.0], [[0.0, 1.0]], notion, epsilon=0.5)
    assert res.distortion == pytest.approx(0.0, abs=1e-8)
    assert res.mechanism.shape == (1, 2)


def test_budget_zero_and_beyond_maximum():
    # D = 0 is attained at a finite level for PML (ε_max) and maximal leakage (ln |X|) ...
    assert po.design(P3, "hamming", "pml", max_distortion=0.0).epsilon == pytest.approx(
        math.log(5), abs=1e-9
    )
    assert po.design(P3, "hamming", "maximal_leakage", max_distortion=0.0).epsilon == (
        pytest.approx(math.log(3), abs=1e-9)
    )
    # ... but never for DP-type notions: an explicit error, not a huge ε
    for notion in ("dp", "information_privacy", "ldp"):
        with pytest.raises(po.InfeasibleError):
            po.design(P3, "hamming", notion, max_distortion=0.0)
    # a budget beyond the best constant output costs nothing
    for notion in ("pml", "dp", "mutual_information", "maximal_leakage"):
        res = po.design(P3, "hamming", notion, max_distortion=5.0)
        assert res.epsilon == pytest.approx(0.0, abs=1e-7)


def test_budget_below_least_distortion():
    d = np.array([[0.5, 1.0], [1.0, 0.2], [0.3, 0.9]])
    least = float(np.array(P3) @ d.min(axis=1))
    with pytest.raises(po.InfeasibleError) as info:
        po.design(P3, d, "pml", max_distortion=least - 0.01)
    assert info.value.least_achievable == pytest.approx(least, abs=1e-12)


@pytest.mark.parametrize("notion", ["pml", "dp", "mutual_information", "information_privacy"])
def test_non_square_distortion(notion):
    d = np.array([[0.0, 1.0], [1.0, 0.0], [0.5, 0.5]])  # 3 inputs, 2 outputs
    res = po.design(P3, d, notion, epsilon=0.7)
    assert res.mechanism.shape == (3, 2)
    assert res.verified


def test_ties_in_the_distortion():
    d = np.ones((3, 3))  # every output costs the same: any mechanism is optimal
    for notion in ("pml", "dp", "mutual_information"):
        res = po.design(P3, d, notion, epsilon=0.3)
        assert res.distortion == pytest.approx(1.0, abs=1e-8)
        assert res.epsilon <= 0.3 + 1e-9


def test_solver_stopped_early_falls_back_then_errors():
    pp = po.build_problem(P3, "absolute", "mutual_information", epsilon=0.3)
    res = solve_problem(
        pp, solver=["CLARABEL", "ECOS"], solver_options={"CLARABEL": {"max_iter": 1}}
    )
    assert res.solver.name == "ECOS" and res.solver.tried == ["CLARABEL", "ECOS"]
    pp = po.build_problem(P3, "absolute", "mutual_information", epsilon=0.3)
    with pytest.raises(po.SolverError):
        solve_problem(
            pp,
            solver=["CLARABEL", "ECOS"],
            solver_options={"CLARABEL": {"max_iter": 1}, "ECOS": {"max_iters": 1}},
        )


def test_determinism():
    a = po.design(P3, "absolute", "max_information_leakage", max_distortion=0.4)
    b = po.design(P3, "absolute", "max_information_leakage", max_distortion=0.4)
    assert np.array_equal(a.mechanism.matrix, b.mechanism.matrix)
    assert a.epsilon == b.epsilon


@pytest.mark.parametrize(
    "kwargs, field",
    [
        ({"epsilon": -0.1}, "privacy.epsilon"),
        ({"epsilon": float("nan")}, "privacy.epsilon"),
        ({}, "privacy"),
        ({"epsilon": 0.1, "max_distortion": 0.2}, "privacy"),
        ({"epsilon": 0.1, "solver": "NO_SUCH"}, "solver.name"),
        ({"epsilon": 0.1, "neighbors": "hamming"}, "privacy.neighbors"),
    ],
)
def test_bad_requests_name_the_field(kwargs, field):
    notion = "dp"
    with pytest.raises(po.InputError) as info:
        po.design(P3, "hamming", notion, **kwargs)
    assert info.value.field == field


def test_unknown_notion_lists_valid_ones():
    with pytest.raises(po.InputError, match="valid notions: .*pml"):
        po.design(P3, "hamming", "no_such_notion", epsilon=1.0)


def test_large_epsilon_exponential_mechanism_level():
    # closed form at a large level stays exact: E_d has DP level ε
    w = closed_forms.exponential_mechanism(30.0, 2, 2)
    assert measures.dp_level(po.DatabasePrior(2, 2, row_probs=[0.5, 0.5]), w) == pytest.approx(
        30.0, rel=1e-12
    )


# --- certificates of programs with added constraints ----------------------------------------
P4 = np.array([0.4, 0.3, 0.2, 0.1])
#: added constraints as (name, cvxpy builder, [(coefficients on W, sense, rhs)] for the LP)
ADDED = [
    ("equality", lambda W: [W[1, 2] == 0], [(np.eye(4)[1][:, None] * np.eye(4)[2], "==", 0.0)]),
    ("upper", lambda W: [W[1, 1] <= 0.5], [(np.eye(4)[1][:, None] * np.eye(4)[1], "<=", 0.5)]),
    (
        "lower",
        lambda W: [W[2, 0] + W[2, 3] >= 0.4],
        [(np.eye(4)[2][:, None] * np.array([1.0, 0, 0, 1]), ">=", 0.4)],
    ),
    (
        "vector",
        lambda W: [W[:, 0] == W[:, 1]],
        [(np.eye(4)[y][:, None] * np.array([1.0, -1, 0, 0]), "==", 0.0) for y in range(4)],
    ),
]


def _reference_lp(notion: str, eps: float, added) -> float:
    """min E[d] of a Hamming distortion under dp (all pairs) or pml at ε and the added
    constraints, written out by hand and solved with scipy's HiGHS (independent of privopt)."""
    from scipy.optimize import linprog

    n = P4.size
    index = np.arange(n * n).reshape(n, n)  # W[y, u] at index[y, u]
    cost = (P4[:, None] * (1 - np.eye(n))).ravel()
    rows, rhs = [], []
    for u in range(n):
        for y in range(n):
            if notion == "dp":  # W[y, u] ≤ e^ε W[y', u]
                for z in range(n):
                    if z != y:
                        row = np.zeros(n * n)
                        row[index[y, u]], row[index[z, u]] = 1.0, -math.exp(eps)
                        rows.append(row)
                        rhs.append(0.0)
            else:  # pml: W[y, u] ≤ e^ε p(u) = e^ε Σ_z p(z) W[z, u]
                row = np.zeros(n * n)
                row[index[:, u]] -= math.exp(eps) * P4
                row[index[y, u]] += 1.0
                rows.append(row)
                rhs.append(0.0)
    eq_rows = [np.kron(np.eye(n)[y], np.ones(n)) for y in range(n)]
    eq_rhs = [1.0] * n
    for coef, sense, value in added:
        if sense == "==":
            eq_rows.append(coef.ravel())
            eq_rhs.append(value)
        else:
            sign = 1.0 if sense == "<=" else -1.0
            rows.append(sign * coef.ravel())
            rhs.append(sign * value)
    lp = linprog(cost, rows, rhs, eq_rows, eq_rhs, bounds=(0, None), method="highs")
    assert lp.status == 0
    return float(lp.fun)


@pytest.mark.parametrize("notion", ["dp", "pml"])
@pytest.mark.parametrize("name, build, added", ADDED, ids=[a[0] for a in ADDED])
def test_added_affine_constraints_are_certified(notion, name, build, added):
    eps = 0.8
    pp = po.build_problem(P4, "hamming", notion, epsilon=eps)
    pp.add_constraints(*build(pp.W))
    res = solve_problem(pp)
    reference = _reference_lp(notion, eps, added)
    assert res.status == "optimal" and res.certificate.certified
    assert res.distortion == pytest.approx(reference, abs=1e-7)
    assert res.certificate.lower_bound <= reference + 1e-9
    assert "no lower bound" not in res.certificate.source


@pytest.mark.parametrize("notion", ["dp", "pml"])
def test_added_constraint_bound_is_valid_for_any_multipliers(notion):
    from privopt.methods.cvxpy_program.certificate import lagrangian_bound

    eps = 0.8
    rng = np.random.default_rng(3)
    for _name, build, added in ADDED:
        pp = po.build_problem(P4, "hamming", notion, epsilon=eps)
        pp.add_constraints(*build(pp.W))
        solve_problem(pp, "CLARABEL")
        reference = _reference_lp(notion, eps, added)
        assert lagrangian_bound(pp, epsilon=eps) == pytest.approx(reference, abs=1e-6)
        for _ in range(20):  # wrong multipliers, of either sign: a weaker bound, never a wrong one
            for con in pp.user_constraints:
                con.save_dual_value(rng.normal(scale=5.0, size=con.shape))
            bound = lagrangian_bound(pp, epsilon=eps)
            assert bound is not None and bound <= reference + 1e-9


def test_added_constraints_without_a_bound_say_why():
    import cvxpy as cp

    pp = po.build_problem(P4, "hamming", "dp", epsilon=1.0)
    t = cp.Variable()  # a constraint on another variable: no term on W is known
    pp.add_constraints(pp.W[0, 0] <= t, t <= 0.7)
    res = solve_problem(pp)
    assert res.status == "optimal_inaccurate" and res.verified
    messages = [a.message for a in res.solver.attempts if a.message.startswith("not certified")]
    assert messages
    for message in messages:
        assert "no lower bound from" in message and "affine in W alone" in message
        assert "agrees with the re-measured answer, which is not a certificate" in message
        assert "disagrees" not in message
    assert res.certificate.source.startswith("none: no lower bound from")
