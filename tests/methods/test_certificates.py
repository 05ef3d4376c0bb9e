"""Certified optimality: the bounds are valid, tight where they should be, and every known
bad answer is fixed.

Oracles: independent programs (scipy ``linprog`` written here for the linear notions; the
cvxpy program with a second solver), explicit feasible mechanisms (the best deterministic
map mixed with a constant mechanism at the least weight that meets the level), closed forms,
and the papers' numbers.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import privopt as po
from privopt.cli import main
from privopt.methods import METHODS, Answer, Certificate, Method
from privopt.methods.cvxpy_program.certificate import lagrangian_bound
from privopt.methods.sparse_lp.assembly import LinearProgram
from privopt.request import prepare_request
from privopt.solve.selection import choose_methods
from privopt.status import Status

LIP_PRIOR = [0.4672590469878411, 0.21955787669411744, 0.3131830763180415]
LIP_D = [
    [0.683939053097672, 0.33803404831483164, 0.42150885450689],
    [0.9828453959191658, 0.33064250607248846, 0.13721979587919153],
    [0.6649500845168744, 0.4029063622915383, 0.5171068659734299],
]


def explicit_mechanism(prior, d, notion, eps, **options):
    """The best deterministic map mixed with the uniform constant mechanism at the least
    weight whose measured level is ≤ ε (bisection): a feasible mechanism, and near-optimal at
    large ε. Returns its distortion."""
    p, d = np.asarray(prior, float), np.asarray(d, float)
    best = np.zeros_like(d)
    best[np.arange(d.shape[0]), d.argmin(axis=1)] = 1.0
    uniform = np.full_like(d, 1.0 / d.shape[1])
    measure = po.get_notion(notion).measure

    def level(t):
        return measure(po.Prior(p), (1 - t) * best + t * uniform, None, **options)

    lo, hi = 0.0, 1.0
    if level(0.0) <= eps:
        hi = 0.0
    else:
        for _ in range(80):
            mid = 0.5 * (lo + hi)
            lo, hi = (lo, mid) if level(mid) <= eps else (mid, hi)
    W = (1 - hi) * best + hi * uniform
    return float(np.sum(p[:, None] * W * d))


def lip_linprog(p, d, eps):
    """Information privacy as an LP written out here: e^{−ε} q_u ≤ W[x,u] ≤ e^ε q_u with
    q = pW, scaled to coefficients in [e^{−ε}, 1]."""
    from scipy.optimize import linprog

    p, d = np.asarray(p, float), np.asarray(d, float)
    k, n = d.shape
    r = np.exp(-eps)
    rows, rhs = [], []
    for x in range(k):
        for u in range(n):
            up = np.zeros(k * n)  # r W[x,u] − q_u ≤ 0
            low = np.zeros(k * n)  # r q_u − W[x,u] ≤ 0
            for y in range(k):
                up[y * n + u] -= p[y]
                low[y * n + u] += r * p[y]
            up[x * n + u] += r
            low[x * n + u] -= 1.0
            rows += [up, low]
            rhs += [0.0, 0.0]
    eq = np.kron(np.eye(k), np.ones((1, n)))
    res = linprog(
        (p[:, None] * d).ravel(),
        A_ub=np.array(rows),
        b_ub=rhs,
        A_eq=eq,
        b_eq=np.ones(k),
        bounds=(0, None),
        method="highs",
    )
    assert res.status == 0
    return float(res.fun)


# --- the reported wrong answers -------------------------------------------------------------
def test_information_privacy_at_large_levels_is_right_and_certified():
    """The issue's instance: at ε = 16 the default route once returned 0.47589 'optimal'; the
    right value is 0.31426, which the explicit mechanism reaches."""
    for eps in (12.0, 16.0, 20.0, 25.0, 40.0):
        res = po.design(LIP_PRIOR, LIP_D, "information_privacy", epsilon=eps)
        assert res.status == "optimal" and res.certificate.certified
        explicit = explicit_mechanism(LIP_PRIOR, LIP_D, "information_privacy", eps)
        assert res.distortion <= explicit + 1e-9
        assert res.distortion == pytest.approx(0.31426, abs=5e-6)
        assert res.epsilon <= eps * (1 + 1e-9) + 1e-9
    assert po.design(LIP_PRIOR, LIP_D, "information_privacy", epsilon=16.0).distortion < 0.3143


@pytest.mark.parametrize("notion", ["information_privacy", "dp", "ldp", "pml"])
@pytest.mark.parametrize("eps", [12.0, 16.0, 20.0, 25.0, 40.0])
def test_random_instances_at_large_levels(notion, eps):
    rng = np.random.default_rng(int(eps) * 7 + len(notion))
    for _ in range(4):
        k, n = rng.integers(2, 6), rng.integers(2, 6)
        p = rng.dirichlet(np.ones(k))
        d = rng.uniform(0, 3, size=(k, n))
        res = po.design(p, d, notion, epsilon=eps)
        assert res.verified
        assert res.distortion <= explicit_mechanism(p, d, notion, eps) + 1e-9
        assert res.distortion >= float(p @ d.min(axis=1)) - 1e-12
        if notion == "information_privacy" and n == k:
            assert res.distortion <= lip_linprog(p, d, eps) + 1e-6
        assert res.status == "optimal"


def test_the_issue_instances_at_epsilon_29_and_30():
    res = po.design(
        [1 / 3] * 3, [[3, 3, 1], [0, 0, 0], [3, 3, 0]], "information_privacy", epsilon=29
    )
    assert res.status == "optimal" and res.distortion == pytest.approx(1 / 3, abs=1e-9)
    db = po.DatabasePrior(
        m=4,
        n=2,
        row_probs=[
            0.36688854846969304,
            0.07927899704955539,
            0.3447038869367179,
            0.2091285675440339,
        ],
    )
    for eps in (25.0, 30.0):
        res = po.design(db, "hamming", "dp", epsilon=eps)  # dp is always feasible
        assert res.status == "optimal" and res.distortion == pytest.approx(0.0, abs=1e-9)


# --- budget mode with extra budgets -----------------------------------------------------------
def test_budget_mode_with_extra_budgets():
    """PML on (.5,.3,.2) with |x − u| ≤ 0.5 and P(U ≠ X) ≤ 0.4: ε* = ln 1.5 = 0.4055."""
    p = [0.5, 0.3, 0.2]
    hamming = 1 - np.eye(3)
    res = po.design(
        p, "absolute", "pml", max_distortion=0.5, extra_distortions=[(hamming, 0.4)], tol=1e-9
    )
    assert res.verified and res.epsilon == pytest.approx(np.log(1.5), abs=1e-6)
    W = res.mechanism.matrix
    assert po.measures.expected_distortion(p, W, hamming) <= 0.4 + 1e-7
    assert res.distortion <= 0.5 + 1e-7


@pytest.mark.parametrize(
    "notion", ["pml", "ldp", "information_privacy", "max_information_leakage", "robust_pml"]
)
def test_budget_mode_with_extra_budgets_for_every_line_search_notion(notion):
    p = [0.5, 0.3, 0.2]
    options = {"priors": [[0.5, 0.3, 0.2], [0.2, 0.3, 0.5]]} if notion == "robust_pml" else {}
    hamming = 1 - np.eye(3)
    res = po.design(
        p, "absolute", notion, max_distortion=0.6, extra_distortions=[(hamming, 0.5)], **options
    )
    assert res.verified and res.line_search is not None
    W = res.mechanism.matrix
    assert po.measures.expected_distortion(p, W, hamming) <= 0.5 + 1e-7
    # no smaller level meets both budgets: at ε just below, the least distortion exceeds 0.6
    below = res.line_search.bracket[0]
    if below > 0:
        under = po.design(
            p,
            "absolute",
            notion,
            epsilon=below,
            extra_distortions=[(hamming, 0.5)],
            raise_on_infeasible=False,
            **options,
        )
        assert under.status == "infeasible" or under.distortion > 0.6 - 1e-7


# --- structured answers -------------------------------------------------------------------------
def test_structured_answers_in_the_cli(tmp_path, capsys):
    problem = tmp_path / "db.toml"
    problem.write_text(
        '[prior.database]\nm = 2\nn = 13\nrow_probs = [0.6, 0.4]\n[distortion]\nkind = "hamming"'
        '\n[privacy]\nnotion = "dp"\nepsilon = 1.0\n'
    )
    assert main(["solve", str(problem)]) == 0
    out, _ = capsys.readouterr()
    assert "structured form" in out and "0.731059" in out and "ldp" in out
    assert main(["solve", str(problem), "--json", "--out", str(tmp_path / "m.json")]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["mechanism"] is None and data["structured_mechanism"]["kind"] == "symmetric"
    assert data["leakage"]["dp"] == pytest.approx(1.0, abs=1e-12)
    assert data["leakage"]["ldp"] == pytest.approx(13.0, abs=1e-9)
    assert main(["audit", str(problem), "--mechanism", str(tmp_path / "m.json"), "--json"]) == 0
    audit = json.loads(capsys.readouterr().out)
    assert audit["leakage"] == pytest.approx(data["leakage"])
    assert main(["solve", str(problem), "--out", str(tmp_path / "m.csv")]) == 2
    assert "only .json holds it" in capsys.readouterr().err


def test_structured_leakage_equals_the_dense_report():
    for row in ([0.6, 0.4], [0.5, 0.3, 0.2]):
        prior = po.DatabasePrior(len(row), 4, row_probs=row)
        res = po.design(prior, "hamming", "dp", epsilon=0.9, solver="symmetric")
        dense = po.leakage_report(prior, res.mechanism)
        assert res.structured_mechanism.leakage(prior) == pytest.approx(dense, abs=1e-9)
    uniform = po.DatabasePrior(3, 3, row_probs=[1 / 3] * 3)
    res = po.design(uniform, "hamming", "dp", epsilon=0.7, solver="sparse-highs-translation")
    dense = po.leakage_report(uniform, res.mechanism)
    assert res.structured_mechanism.leakage(uniform) == pytest.approx(dense, abs=1e-9)


def test_a_product_prior_given_as_its_full_vector_is_recognised():
    probs = np.ones(1)
    for _ in range(8):
        probs = np.kron(probs, [0.7, 0.3])
    res = po.design(po.DatabasePrior(2, 8, probs=probs), "hamming", "dp", epsilon=1.0)
    assert res.solver.name == "symmetric" and res.status == "optimal"
    assert res.distortion == pytest.approx(po.closed_forms.h(1.0, 2, 8), abs=1e-12)
    assert res.solver.solve_time_s < 1.0


# --- the bounds are valid for any multipliers ----------------------------------------------
LINEAR = ["pml", "information_privacy", "dp", "ldp", "identifiability", "maximal_leakage"]


@pytest.mark.parametrize("notion", LINEAR + ["mutual_information", "max_information_leakage"])
@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), noise=st.floats(0.0, 3.0))
def test_lagrangian_bound_is_below_the_optimum_for_any_multipliers(notion, seed, noise):
    """Perturbing the solver's dual values (any non-negative multipliers are allowed) never
    gives a bound above the optimum."""
    rng = np.random.default_rng(seed)
    k, n = int(rng.integers(2, 5)), int(rng.integers(2, 5))
    p = rng.dirichlet(np.ones(k))
    d = rng.uniform(0, 2, size=(k, n))
    eps = 0.5 + (float(np.log(p.max() / p.min())) if notion == "identifiability" else 0.0)
    optimum = po.design(p, d, notion, epsilon=eps).distortion
    pp = po.build_problem(p, d, notion, epsilon=eps)
    pp.problem.solve(solver="CLARABEL")
    for con in [*pp.notion_constraints, pp.row_constraint]:
        for dual in con.dual_variables:
            if dual.value is not None:
                value = np.asarray(dual.value, dtype=float)
                noisy = value * rng.uniform(0, noise + 1e-9, size=value.shape)
                dual.value = noisy + noise * rng.uniform(0, 1, size=value.shape)
    bound = lagrangian_bound(pp, epsilon=eps)
    assert bound is None or bound <= optimum + 1e-9


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), scale=st.floats(0.0, 5.0))
def test_sparse_lp_bound_is_below_the_optimum_for_any_row_duals(seed, scale):
    rng = np.random.default_rng(seed)
    import scipy.sparse as sp
    from scipy.optimize import linprog

    rows, cols = 4, 6
    A = sp.csc_matrix(rng.uniform(-1, 1, size=(rows, cols)))
    x0 = rng.uniform(0, 1, cols)
    act = A @ x0
    lp = LinearProgram(
        A,
        rng.uniform(-1, 1, cols),
        np.zeros(cols),
        np.ones(cols),
        act - rng.uniform(0, 1, rows),
        act + rng.uniform(0, 1, rows),
    )
    res = linprog(
        lp.cost,
        A_ub=np.vstack([A.toarray(), -A.toarray()]),
        b_ub=np.concatenate([lp.row_hi, -lp.row_lo]),
        bounds=(0, 1),
        method="highs",
    )
    assert res.status == 0
    y = scale * rng.normal(size=rows)
    assert lp.lower_bound(y) <= res.fun + 1e-9


# --- a wrong answer is never certified --------------------------------------------------------
class _Canned(Method):
    """A method that answers with a given mechanism and a given lower bound (by default its
    own objective: a false certificate of a suboptimal answer)."""

    family = "privopt"

    def __init__(self, name, matrix, bound=None):
        self.name, self.matrix, self.bound = name, matrix, bound

    def unsupported(self, request):
        return None

    def solve(self, task):
        dist = task.request.distortion_of(self.matrix)
        bound = dist if self.bound is None else self.bound
        return Answer(
            Status.OPTIMAL,
            self.name,
            matrix=self.matrix,
            objective=dist,
            certificate=Certificate(bound, f"{self.name}'s bound"),
        )


def test_a_closed_form_catches_a_falsely_certified_answer(monkeypatch):
    """Identifiability on a uniform prior has D* = h(ε) with the unique optimum E_i; a method
    answering with the constant mechanism and a false certificate is caught by the
    closed-form check and the driver falls back."""
    prior = po.DatabasePrior(2, 2, row_probs=[0.5, 0.5])
    constant = np.zeros((4, 4))
    constant[:, 0] = 1.0
    monkeypatch.setitem(METHODS, "test-liar", _Canned("test-liar", constant))
    with pytest.raises(po.SolverError, match="closed_form_mismatch|wang_thm1"):
        po.design(prior, "hamming", "identifiability", epsilon=1.0, solver="test-liar")
    res = po.design(prior, "hamming", "identifiability", epsilon=1.0, solver=["test-liar", "HIGHS"])
    assert res.solver.name == "HIGHS" and res.solver.attempts[0].status == "closed_form_mismatch"
    assert res.distortion == pytest.approx(po.closed_forms.h(1.0, 2, 2), abs=1e-9)
    assert all(c.passed for c in res.closed_form)


def test_every_shipped_hamming_problem_carries_its_closed_forms(capsys):
    """The JSON of every shipped database / Hamming problem lists the checks that apply."""
    names = [
        "wang_uniform_identifiability",
        "wang_uniform_dp",
        "wang_product_identifiability",
        "wang_product_dp",
        "wang_m3_identifiability",
        "wang_m3_dp",
        "wang_nonproduct_identifiability",
        "wang_pdmip",
        "pml_uniform_ternary",
        "maximal_leakage",
        "ldp_randomized_response",
        "calmon_fawaz_corollary1",
    ]
    for name in names:
        code = main(["solve", f"problems/{name}.toml", "--json"])
        data = json.loads(capsys.readouterr().out)
        assert code == 0, name
        assert data["closed_form"], name
        assert all(c["passed"] for c in data["closed_form"]), (name, data["closed_form"])
    assert Path("problems/wang_product_identifiability_infeasible.toml").exists()


# --- the best answer of a point certified by another attempt's bound ---------------------------
def test_one_attempts_answer_is_certified_by_another_attempts_bound(monkeypatch):
    """Method A finds the optimum but bounds it loosely; method B bounds it tightly but
    answers badly. Neither certifies alone; together they do, and the report says whose
    answer and whose bound (every bound privopt accepts bounds the same point's optimum)."""
    prior, eps = [0.5, 0.3, 0.2], 0.7
    exact = po.design(prior, "hamming", "ldp", epsilon=eps, solver="HIGHS")
    optimum = exact.distortion
    worse = 0.9 * exact.mechanism.matrix + 0.1 / 3.0  # feasible, within the closed forms
    monkeypatch.setitem(
        METHODS, "test-answer", _Canned("test-answer", exact.mechanism.matrix, optimum - 0.1)
    )
    monkeypatch.setitem(METHODS, "test-bound", _Canned("test-bound", worse, optimum - 1e-9))
    alone = po.design(prior, "hamming", "ldp", epsilon=eps, solver="test-answer")
    assert alone.status == "optimal_inaccurate"
    both = po.design(prior, "hamming", "ldp", epsilon=eps, solver=["test-answer", "test-bound"])
    assert both.status == "optimal" and both.certificate.certified
    assert both.solver.name == "test-answer"
    assert both.distortion == pytest.approx(optimum, abs=1e-12)
    assert both.certificate.lower_bound == pytest.approx(optimum - 1e-9, abs=1e-15)
    assert "test-bound" in both.certificate.source and "test-answer" in both.certificate.source
    # a bound too far below the best answer certifies nothing
    monkeypatch.setitem(METHODS, "test-bound", _Canned("test-bound", worse, optimum - 1e-3))
    loose = po.design(prior, "hamming", "ldp", epsilon=eps, solver=["test-answer", "test-bound"])
    assert loose.status == "optimal_inaccurate"
    assert loose.certificate.lower_bound == pytest.approx(optimum - 0.1)


# identifiability at ε = 20 with prior ratios up to e^18.4 (from the optimality fuzzer,
# instance 393): the sparse LP, the cvxpy program with HiGHS and with Clarabel each stop
# 1e-6 to 1e-2 above the optimum without a certificate
RESCUE_PRIOR = [
    9.6699265343501062e-01,
    0.0,
    3.3006815705221335e-02,
    5.2087028658873423e-07,
    9.9894814512233569e-09,
]


def test_a_point_the_automatic_choices_cannot_certify_is_rescued():
    """``block-ipm`` (not picked automatically at this size) is tried before the
    first-order last resorts and certifies the point; its answer is below every answer the
    automatic choices gave, and no explicit feasible mechanism beats it."""
    d = np.abs(np.subtract.outer(np.arange(5), np.arange(5))).astype(float)
    request = prepare_request(RESCUE_PRIOR, d, "identifiability", epsilon=20.0)
    names = [m.name for m in choose_methods(request)]
    assert "block-ipm" in names
    rescue = names.index("block-ipm")
    assert names.index("CLARABEL") < rescue
    assert all(names.index(last) > rescue for last in ("ECOS", "SCS") if last in names)

    result = po.design(RESCUE_PRIOR, d, "identifiability", epsilon=20.0)
    assert result.status == "optimal" and result.certificate.certified
    assert result.solver.name == "block-ipm"
    assert result.solver.tried[:3] == ["sparse-highs", "HIGHS", "CLARABEL"]
    assert result.certificate.lower_bound <= result.distortion
    assert result.certificate.relative_gap <= 1e-6
    for named in ("sparse-highs", "CLARABEL"):
        alone = po.design(RESCUE_PRIOR, d, "identifiability", epsilon=20.0, solver=named)
        assert alone.status == "optimal_inaccurate"
        assert result.distortion < alone.distortion
    feasible = explicit_mechanism(RESCUE_PRIOR, d, "identifiability", 20.0)
    assert result.distortion <= feasible + 1e-12
