"""Fast paths: Blahut–Arimoto (mutual information) and the sparse HiGHS LP (linear notions).

Oracles: independently computed LP and PD-MIP reference values, the closed forms of
[Wang-Ying-Zhang] (h, E_i, PD-MIP), and
independent formulations written here (cvxpy ``rel_entr`` + CLARABEL for mutual
information; dense ``scipy.optimize.linprog`` programs for the linear notions).
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
from scipy.optimize import linprog

import privopt as po
from privopt import (
    DatabasePrior,
    Distortion,
    InputError,
    JointPrior,
    NeighborRelation,
    Prior,
    closed_forms,
    measures,
)
from privopt.methods import METHODS, solve_point
from privopt.methods.blahut_arimoto import distortion_rate, rate_distortion
from privopt.request import prepare_request
from privopt.solve.selection import why_not


def lp_solve(prior, d, notion, *, epsilon, neighbors=None, method="auto", symmetry=True):
    """A sparse-LP method through the solve driver (re-measured, repaired, certified)."""
    name = "sparse-highs" if method == "auto" else f"sparse-highs-{method}"
    return po.design(
        prior,
        d,
        notion,
        epsilon=epsilon,
        neighbors=neighbors,
        solver=name,
        raise_on_infeasible=False,
        solver_options={name: {"symmetry": symmetry}},
    )


def _applies(name, prior, d, notion, mode="epsilon", **kw):
    point = {"epsilon": 1.0} if mode == "epsilon" else {"max_distortion": 0.5}
    return why_not(METHODS[name], prepare_request(prior, d, notion, **point, **kw)) is None


HAM22 = Distortion.database_hamming(2, 2)


def _assert_stochastic(W: np.ndarray) -> None:
    assert np.all(W >= 0)
    np.testing.assert_allclose(W.sum(axis=1), 1.0, rtol=0, atol=1e-12)


# ============================================================================================
# Blahut–Arimoto
# ============================================================================================
class TestBlahutArimotoSpec:
    @pytest.mark.parametrize(
        "D, ref",
        [(0.2, 0.736128414337), (0.3, 0.540876185508), (0.75, 0.0631678848039)],
    )
    def test_uniform_m2_n2(self, D, ref):
        """Uniform m = n = 2, and [Wang-Ying-Zhang] Thm 2: E_i at ε = h⁻¹(D) is optimal."""
        prior = DatabasePrior(2, 2, row_probs=[0.5, 0.5])
        res = rate_distortion(prior, HAM22, D)
        assert res.status == "optimal"
        assert res.objective == pytest.approx(ref, abs=1e-11)
        assert res.certificate["duality_gap"] <= 1e-9
        assert res.certificate["lower_bound"] <= res.objective + 1e-15
        assert res.distortion <= D + 1e-12
        e_i = closed_forms.identifiability_mechanism(prior, closed_forms.h_inv(D, 2, 2)).matrix
        np.testing.assert_allclose(res.mechanism, e_i, atol=1e-8)
        _assert_stochastic(res.mechanism)
        assert measures.mutual_information(prior, res.mechanism) == pytest.approx(
            res.objective, abs=1e-13
        )

    @pytest.mark.parametrize(
        "probs, m, n, budgets",
        [
            ([0.42, 0.18, 0.28, 0.12], 2, 2, [0.2, 0.3, 0.53788284274, 0.6]),
            ([0.4, 0.1, 0.2, 0.3], 2, 2, [0.2]),
            (np.kron([0.5, 0.3, 0.2], [0.5, 0.3, 0.2]), 3, 2, [0.2, 0.3, 0.8]),
        ],
    )
    def test_closed_form_inside_valid_range(self, probs, m, n, budgets):
        """[Wang-Ying-Zhang] Thm 2: H(X) − n h_b(D/n) − D ln(m−1) and E_i, for D ≤ h(ε̃_X)."""
        prior = DatabasePrior(m, n, probs=probs)
        dist = Distortion.database_hamming(m, n)
        for D in budgets:
            res = rate_distortion(prior, dist, D)
            assert res.status == "optimal"
            assert res.objective == pytest.approx(closed_forms.pdmip_value(prior, D), abs=1e-10)
            e_i = closed_forms.identifiability_mechanism(prior, closed_forms.h_inv(D, m, n)).matrix
            np.testing.assert_allclose(res.mechanism, e_i, atol=1e-8)

    def test_outside_valid_range(self):
        """Non-product prior at D = 0.3 (cvxpy 0.4361219582 > the Shannon bound),
        and D = 0.75 ≥ D_max for the product prior (I* = 0)."""
        prior = DatabasePrior(2, 2, probs=[0.4, 0.1, 0.2, 0.3])
        res = rate_distortion(prior, HAM22, 0.3)
        assert res.objective == pytest.approx(0.4361219582, abs=2e-9)
        assert res.objective > closed_forms.pdmip_value(prior, 0.3, strict=False) + 1e-3
        prior = DatabasePrior(2, 2, probs=[0.42, 0.18, 0.28, 0.12])
        res = rate_distortion(prior, HAM22, 0.75)
        assert res.status == "optimal" and res.objective == 0.0
        assert np.allclose(res.mechanism, res.mechanism[0])  # constant output

    def test_infeasible_budget(self):
        prior = Prior([0.5, 0.5])
        d = np.array([[0.1, 1.0], [1.0, 0.3]])  # D_min = 0.2
        res = rate_distortion(prior, d, 0.1)
        assert res.status == "infeasible"
        assert res.info["least_achievable"] == pytest.approx(0.2)
        res = rate_distortion(prior, d, 0.2)  # exactly D_min: only the closest outputs
        assert res.status == "optimal"
        assert res.objective == pytest.approx(np.log(2), abs=1e-10)

    def test_epsilon_mode_inverts_budget_mode(self):
        prior = DatabasePrior(2, 2, probs=[0.42, 0.18, 0.28, 0.12])
        for D in (0.2, 0.45, 0.65):
            rd = rate_distortion(prior, HAM22, D)
            dr = distortion_rate(prior, HAM22, rd.objective)
            assert dr.status == "optimal"
            assert dr.objective == pytest.approx(D, abs=1e-8)
            assert dr.level <= rd.objective + 1e-12
            assert measures.mutual_information(prior, dr.mechanism) <= rd.objective + 1e-12
        top = distortion_rate(prior, HAM22, 10.0)  # the budget allows D_min = 0
        assert top.objective == pytest.approx(0.0, abs=1e-12)
        zero = distortion_rate(prior, HAM22, 0.0)
        assert zero.objective == pytest.approx(0.7) and zero.level == 0.0


def _cvxpy_rate_distortion(p: np.ndarray, d: np.ndarray, D: float) -> float:
    """Independent formulation: [Calmon-Fawaz] Thm 1 with rel_entr, CLARABEL."""
    k, n_out = d.shape
    W = cp.Variable((k, n_out), nonneg=True)
    q = p @ W
    obj = cp.sum(cp.multiply(p[:, None], cp.rel_entr(W, cp.vstack([q] * k))))
    cons = [cp.sum(W, axis=1) == 1, cp.sum(cp.multiply(p[:, None] * d, W)) <= D]
    prob = cp.Problem(cp.Minimize(obj), cons)
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    assert prob.status == "optimal"
    return float(prob.value)


@pytest.mark.parametrize("k, n_out, seed", [(5, 5, 0), (12, 9, 1), (20, 20, 2), (30, 30, 3)])
def test_blahut_arimoto_against_cvxpy(k, n_out, seed):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(k))
    if n_out == k:
        x = np.arange(k)
        d = np.abs(x[:, None] - x[None, :]).astype(float)
    else:
        d = rng.uniform(0, 3, size=(k, n_out))
    d_min = float(p @ d.min(axis=1))
    d_max = float((p @ d).min())
    D = d_min + 0.35 * (d_max - d_min)
    res = rate_distortion(Prior(p), d, D)
    assert res.status == "optimal"
    assert res.certificate["duality_gap"] <= 1e-9
    assert res.objective == pytest.approx(_cvxpy_rate_distortion(p, d, D), abs=1e-7)
    _assert_stochastic(res.mechanism)
    assert measures.expected_distortion(Prior(p), res.mechanism, d) <= D + 1e-12
    assert measures.mutual_information(Prior(p), res.mechanism) == pytest.approx(
        res.objective, abs=1e-12
    )


def test_blahut_arimoto_log_domain_large_slope():
    """|x − u| on 150 symbols at a small budget: slopes where e^{−s d} underflows."""
    rng = np.random.default_rng(7)
    k = 150
    p = rng.dirichlet(np.ones(k))
    x = np.arange(k)
    d = np.abs(x[:, None] - x[None, :]).astype(float)
    res = rate_distortion(Prior(p), d, 0.05)
    assert res.status == "optimal"
    assert res.certificate["duality_gap"] <= 1e-9
    assert res.info["slope"] > 3.0
    assert np.isfinite(res.mechanism).all()
    _assert_stochastic(res.mechanism)
    # warm start from the previous answer (a sweep step)
    nxt = rate_distortion(Prior(p), d, 0.06, warm_start=res)
    assert nxt.status == "optimal" and nxt.objective < res.objective


def test_blahut_arimoto_negligible_inputs():
    """Inputs of mass ~1e-20 need private outputs of mass ~1e-20 at large slopes; they are
    sent to their closest output instead (changing I by < 1e-18) and the rest is exact."""
    rng = np.random.default_rng(15)
    p = rng.dirichlet(np.full(12, 0.3))
    p[[2, 7]] = [1e-20, 3e-19]
    p /= p.sum()
    d = rng.uniform(0, 1, size=(12, 9))
    d_min = float(p @ d.min(axis=1))
    for frac in (1e-9, 0.3):
        D = d_min + frac * (float((p @ d).min()) - d_min)
        res = rate_distortion(Prior(p), d, D)
        assert res.status == "optimal"
        assert res.info["negligible_inputs"] == 2
        assert res.certificate["duality_gap"] <= 1e-9
        assert measures.expected_distortion(Prior(p), res.mechanism, d) <= D + 1e-12
        back = distortion_rate(Prior(p), d, res.objective)
        assert back.status == "optimal"
        assert measures.mutual_information(Prior(p), back.mechanism) <= res.objective + 1e-12
        assert back.objective == pytest.approx(D, abs=1e-7)


def test_blahut_arimoto_registry_and_errors():
    prior = DatabasePrior(2, 2, row_probs=[0.5, 0.5])
    assert _applies("blahut-arimoto", prior, HAM22, "mutual_information", "max_distortion")
    assert not _applies("blahut-arimoto", prior, HAM22, "dp")
    joint = JointPrior([[0.1, 0.2], [0.3, 0.4]])
    # joint priors: the alternating scheme of Calmon–Fawaz Remark 2 (by request only)
    assert _applies("blahut-arimoto", joint, np.ones((2, 2)), "mutual_information")
    answer = solve_point("blahut_arimoto", prior, HAM22, "mutual_information", max_distortion=0.3)
    assert answer.method == "blahut-arimoto"  # the old spelling is an alias
    assert answer.objective == pytest.approx(0.540876185508, abs=1e-11)
    res = po.design(prior, HAM22, "mutual_information", max_distortion=0.3, solver="blahut-arimoto")
    assert res.status == "optimal" and res.solver.name == "blahut-arimoto"
    assert res.epsilon == pytest.approx(0.540876185508, abs=1e-11)
    flat = po.design(
        joint, np.ones((2, 2)), "mutual_information", epsilon=0.1, solver="blahut-arimoto"
    )
    assert flat.status == "optimal" and flat.distortion == pytest.approx(1.0)
    with pytest.raises(InputError, match="does not apply"):
        po.design(
            joint, np.ones((2, 2)), "mutual_information", epsilon=0.0, solver="blahut-arimoto"
        )
    with pytest.raises(InputError):
        po.design(prior, HAM22, "mutual_information", epsilon=-1.0, solver="blahut-arimoto")
    with pytest.raises(InputError):
        po.design(prior, np.ones((3, 4)), "mutual_information", epsilon=0.1)
    with pytest.raises(InputError):
        po.design(prior, HAM22, "mutual_information", epsilon=0.1, max_distortion=1.0)
    with pytest.raises(InputError):
        rate_distortion(prior, HAM22, 0.3, warm_start=np.ones(3))


# ============================================================================================
# Sparse LP (HiGHS)
# ============================================================================================
def _linprog_reference(p, d, notion, eps, pairs=None):
    """Independent dense LP (scipy.optimize.linprog, HiGHS) with every constraint written out
    pair by pair (no auxiliary variables except t_u for maximal leakage)."""
    k, n_out = d.shape
    nW = k * n_out
    ce = np.exp(eps)
    supp = [x for x in range(k) if p[x] > 0]

    def var(x, u):
        return x * n_out + u

    n_var = nW + (n_out if notion == "maximal_leakage" else 0)
    rows, b = [], []

    def add(entries, rhs=0.0):
        row = np.zeros(n_var)
        for col, val in entries:
            row[col] += val
        rows.append(row)
        b.append(rhs)

    if notion in ("dp", "identifiability", "ldp"):
        if pairs is None or notion == "ldp":
            pairs = [(a, c) for a in range(k) for c in range(k) if a != c]
        for a, c in pairs:
            if p[a] == 0 or p[c] == 0:
                continue
            wa, wc = (p[a], p[c]) if notion == "identifiability" else (1.0, 1.0)
            for u in range(n_out):
                add([(var(a, u), wa), (var(c, u), -ce * wc)])
    elif notion in ("pml", "information_privacy"):
        for x in supp:
            for u in range(n_out):
                add([(var(x, u), 1.0)] + [(var(y, u), -ce * p[y]) for y in range(k)])
                if notion == "information_privacy":
                    add([(var(x, u), -1.0)] + [(var(y, u), p[y] / ce) for y in range(k)])
    elif notion == "maximal_leakage":
        for x in supp:
            for u in range(n_out):
                add([(var(x, u), 1.0), (nW + u, -1.0)])
        add([(nW + u, 1.0) for u in range(n_out)], ce)
    A_eq = np.zeros((k, n_var))
    for x in range(k):
        A_eq[x, x * n_out : (x + 1) * n_out] = 1.0
    cost = np.concatenate([(p[:, None] * d).ravel(), np.zeros(n_var - nW)])
    res = linprog(
        cost,
        A_ub=np.array(rows) if rows else None,
        b_ub=np.array(b) if rows else None,
        A_eq=A_eq,
        b_eq=np.ones(k),
        bounds=(0, None),
        method="highs",
    )
    assert res.status == 0
    return float(res.fun)


_LEVEL = {
    "dp": lambda prior, W, rel: measures.dp_level(prior, W, rel),
    "identifiability": lambda prior, W, rel: measures.identifiability_level(prior, W, rel),
    "ldp": lambda prior, W, rel: measures.ldp_level(prior, W),
    "pml": lambda prior, W, rel: measures.pml_level(prior, W),
    "information_privacy": lambda prior, W, rel: measures.information_privacy_level(prior, W),
    "maximal_leakage": lambda prior, W, rel: measures.maximal_leakage(prior, W),
}


@pytest.mark.parametrize(
    "notion", ["dp", "identifiability", "ldp", "pml", "information_privacy", "maximal_leakage"]
)
@pytest.mark.parametrize("seed", [0, 1])
def test_sparse_lp_against_linprog(notion, seed):
    rng = np.random.default_rng(10 + seed)
    k = 5
    n_out = 5 if seed == 0 else 4  # the output alphabet may differ
    p = rng.dirichlet(np.ones(k))
    if seed == 1:
        p[2] = 0.0  # a secret outside the support
        p /= p.sum()
    d = rng.uniform(0, 2, size=(k, n_out))
    prior = Prior(p)
    rel = NeighborRelation.from_pairs(k, [(0, 1), (1, 2), (2, 3), (3, 4), (0, 4)])
    pairs = list(zip(rel.left.tolist(), rel.right.tolist(), strict=True))
    eps = 1.2 if notion != "identifiability" else 3.5
    pair_notion = notion in ("dp", "identifiability")
    res = lp_solve(prior, d, notion, epsilon=eps, neighbors=rel if pair_notion else None)
    assert res.status == "optimal"
    ref = _linprog_reference(p, d, notion, eps, pairs)
    assert res.distortion == pytest.approx(ref, abs=1e-8)
    W = res.mechanism.matrix
    _assert_stochastic(W)
    assert _LEVEL[notion](prior, W, rel) <= eps + 1e-9
    assert res.epsilon == pytest.approx(_LEVEL[notion](prior, W, rel), abs=1e-12)
    assert measures.expected_distortion(prior, W, d) == pytest.approx(res.distortion, abs=1e-12)
    assert res.certificate.gap <= 1e-8


EPS_X = np.log(7 / 3)


class TestSparseLPSpec:
    @pytest.mark.parametrize("eps", [EPS_X, EPS_X + 0.5, 2.0])
    def test_product_prior_equals_h(self, eps):
        """Prior (.42,.18,.28,.12), D*_I = D*_DP = h(ε) for ε ≥ ε̃_X = ε_X."""
        prior = DatabasePrior(2, 2, probs=[0.42, 0.18, 0.28, 0.12])
        for notion in ("identifiability", "dp"):
            res = lp_solve(prior, HAM22, notion, epsilon=eps)
            assert res.status == "optimal"
            assert res.distortion == pytest.approx(closed_forms.h(eps, 2, 2), abs=1e-10)
            assert _LEVEL[notion](prior, res.mechanism, None) <= eps + 1e-9

    def test_below_epsilon_x(self):
        prior = DatabasePrior(2, 2, probs=[0.42, 0.18, 0.28, 0.12])
        res = lp_solve(prior, HAM22, "identifiability", epsilon=EPS_X / 2)
        assert res.status == "infeasible"
        assert res.least_achievable == pytest.approx(EPS_X, abs=1e-12)
        res = lp_solve(prior, HAM22, "dp", epsilon=EPS_X / 2)  # 0.695643923739 at ε≈0.423649
        assert res.distortion == pytest.approx(0.695643923739, abs=1e-6)
        assert closed_forms.h(EPS_X / 2 + EPS_X, 2, 2) <= res.distortion
        assert res.distortion <= closed_forms.h(EPS_X / 2, 2, 2)

    @pytest.mark.parametrize(
        "probs, m, eps, d_i, d_dp",
        [
            (np.kron([0.5, 0.3, 0.2], [0.5, 0.3, 0.2]), 3, np.log(2.5), 1.0, 6 / 7),
            (np.kron([0.5, 0.3, 0.2], [0.5, 0.3, 0.2]), 3, np.log(3.0), 0.8, 0.8),
            ([0.4, 0.1, 0.2, 0.3], 2, np.log(4.0), 0.8, 0.4),
            ([0.4, 0.1, 0.2, 0.3], 2, 1.90234065127, 0.259687576257, 0.259687576257),
        ],
    )
    def test_spec_table(self, probs, m, eps, d_i, d_dp):
        prior = DatabasePrior(m, 2, probs=probs)
        dist = Distortion.database_hamming(m, 2)
        r_i = lp_solve(prior, dist, "identifiability", epsilon=eps)
        r_dp = lp_solve(prior, dist, "dp", epsilon=eps)
        assert r_i.distortion == pytest.approx(d_i, abs=1e-9)
        assert r_dp.distortion == pytest.approx(d_dp, abs=1e-9)

    @pytest.mark.parametrize("eps, ref", [(0.3, 1.194080177634), (1.0, 0.847766230468)])
    def test_uniform_m3_translation_reduction(self, eps, ref):
        prior = DatabasePrior(3, 2, row_probs=np.full(3, 1 / 3))
        dist = Distortion.database_hamming(3, 2)
        for notion in ("dp", "identifiability"):
            fast = lp_solve(prior, dist, notion, epsilon=eps)
            full = lp_solve(prior, dist, notion, epsilon=eps, symmetry=False)
            assert fast.solver.details["translation_reduced"]
            assert not full.solver.details["translation_reduced"]
            assert fast.distortion == pytest.approx(ref, abs=1e-11)
            assert full.distortion == pytest.approx(ref, abs=1e-11)
            assert measures.dp_level(prior, fast.mechanism) <= eps + 1e-12
            _assert_stochastic(fast.mechanism.matrix)

    def test_uniform_n8_dp(self):
        """The [Wang-Ying-Zhang] benchmark: PD-DP, uniform prior, m = 2, n = 8, ε = 1 → h(1)."""
        prior = DatabasePrior(2, 8, row_probs=[0.5, 0.5])
        res = lp_solve(prior, Distortion.database_hamming(2, 8), "dp", epsilon=1.0)
        assert res.status == "optimal"
        assert res.distortion == pytest.approx(closed_forms.h(1.0, 2, 8), abs=1e-8)
        assert res.solver.details["translation_reduced"]
        assert measures.dp_level(prior, res.mechanism) <= 1.0 + 1e-12
        _assert_stochastic(res.mechanism.matrix)
        row = res.structured_mechanism.row(37)
        np.testing.assert_allclose(row, res.mechanism.matrix[37], atol=1e-15)

    @pytest.mark.parametrize("notion", ["pml", "information_privacy", "maximal_leakage", "ldp"])
    def test_uniform_single_alphabet_reduction(self, notion):
        k = 6
        prior = Prior(np.full(k, 1 / k))
        d = Distortion.hamming(k)
        fast = lp_solve(prior, d, notion, epsilon=0.7)
        full = lp_solve(prior, d, notion, epsilon=0.7, symmetry=False)
        assert fast.solver.details["translation_reduced"]
        assert fast.distortion == pytest.approx(full.distortion, abs=1e-10)
        assert _LEVEL[notion](prior, fast.mechanism, None) <= 0.7 + 1e-12


def test_sparse_lp_all_pairs_forms_agree():
    """dp with all pairs, ldp (auxiliary lo_u form) and an explicit complete custom relation
    (pair form) are the same LP; so are identifiability with all pairs and its pair form."""
    rng = np.random.default_rng(5)
    k = 6
    p = rng.dirichlet(np.ones(k))
    d = rng.uniform(0, 1, size=(k, k))
    prior = Prior(p)
    complete = NeighborRelation.from_pairs(k, [(a, b) for a in range(k) for b in range(a)])
    dp_all = lp_solve(prior, d, "dp", epsilon=0.9, neighbors="all")
    ldp = lp_solve(prior, d, "ldp", epsilon=0.9)
    dp_pairs = lp_solve(prior, d, "dp", epsilon=0.9, neighbors=complete)
    assert dp_all.distortion == pytest.approx(ldp.distortion, abs=1e-12)
    assert dp_all.distortion == pytest.approx(dp_pairs.distortion, abs=1e-10)
    eps = float(np.log(p.max() / p.min())) + 0.5
    ldi = lp_solve(prior, d, "identifiability", epsilon=eps)  # all pairs by default
    ldi_pairs = lp_solve(prior, d, "identifiability", epsilon=eps, neighbors=complete)
    assert ldi.distortion == pytest.approx(ldi_pairs.distortion, abs=1e-10)
    assert measures.ldi_level(prior, ldi.mechanism) <= eps + 1e-9


@pytest.mark.parametrize("method", ["ipm", "pdlp"])
def test_sparse_lp_other_methods_repair(method):
    """Interior-point / PDLP answers are repaired to meet the level exactly."""
    rng = np.random.default_rng(3)
    prior = DatabasePrior(2, 3, probs=rng.dirichlet(np.ones(8)))
    dist = Distortion.database_hamming(2, 3)
    exact = lp_solve(prior, dist, "dp", epsilon=0.8, method="simplex")
    res = lp_solve(prior, dist, "dp", epsilon=0.8, method=method)
    assert res.status in ("optimal", "optimal_inaccurate") and res.verified
    assert res.distortion == pytest.approx(exact.distortion, abs=1e-6)
    assert res.distortion >= exact.distortion - 1e-9
    assert measures.dp_level(prior, res.mechanism) <= 0.8 + 1e-9
    _assert_stochastic(res.mechanism.matrix)


def test_sparse_lp_warm_start_sweep():
    rng = np.random.default_rng(4)
    prior = DatabasePrior(2, 3, probs=rng.dirichlet(np.ones(8)))
    dist = Distortion.database_hamming(2, 3)
    first = solve_point("sparse-highs-simplex", prior, dist, "dp", epsilon=1.0)
    assert first.warm is not None  # the simplex basis
    warm = solve_point("sparse-highs-simplex", prior, dist, "dp", epsilon=1.1, warm=first.warm)
    cold = solve_point("sparse-highs-simplex", prior, dist, "dp", epsilon=1.1)
    assert warm.details["warm_started"] and not cold.details["warm_started"]
    assert warm.objective == pytest.approx(cold.objective, abs=1e-12)


def test_translation_algorithm_applies_only_when_invariant():
    name = "sparse-highs-translation"
    uniform = DatabasePrior(2, 3, row_probs=[0.5, 0.5])
    skewed = DatabasePrior(2, 3, row_probs=[0.6, 0.4])
    dist = Distortion.database_hamming(2, 3)
    assert METHODS[name].priority > 0 and METHODS["sparse-highs"].priority == 0
    assert _applies(name, uniform, dist, "dp")
    assert _applies(name, uniform, dist, "pml")
    assert not _applies(name, skewed, dist, "dp")
    line = Distortion.absolute(5)  # |x − u| on a line is not invariant under Z_5
    assert not _applies(name, Prior(np.full(5, 0.2)), line, "pml")
    answer = solve_point(name, uniform, dist, "dp", epsilon=0.5)
    assert answer.objective == pytest.approx(closed_forms.h(0.5, 2, 3), abs=1e-12)
    assert answer.measured.row_sum_error <= 1e-12 and answer.measured.level <= 0.5 + 1e-12
    rng = np.random.default_rng(0)
    draws = [answer.structured.sample(5, rng) for _ in range(2000)]
    freq = np.bincount(draws, minlength=8) / 2000
    np.testing.assert_allclose(freq, answer.matrix[5], atol=0.05)


def test_sparse_lp_registry_and_errors():
    names = {"sparse-highs", "sparse-highs-simplex", "sparse-highs-ipm", "sparse-highs-pdlp"}
    assert names <= set(METHODS)
    assert METHODS["HIGHS"].family == "cvxpy"  # "highs" is cvxpy's HiGHS, one namespace
    assert po.methods.lookup("highs") is METHODS["HIGHS"]
    assert po.methods.lookup("highs-simplex") is METHODS["sparse-highs-simplex"]  # old name
    prior = DatabasePrior(2, 2, row_probs=[0.5, 0.5])
    assert _applies("sparse-highs", prior, HAM22, "dp")
    assert _applies("sparse-highs", prior, HAM22, "dp", "max_distortion")  # line search
    assert not _applies("sparse-highs", prior, HAM22, "mutual_information")
    res = po.design(prior, HAM22, "dp", max_distortion=0.5, solver="sparse-highs")
    assert res.line_search is not None and res.solver.name == "sparse-highs"
    joint = JointPrior([[0.1, 0.2], [0.3, 0.4]])
    with pytest.raises(InputError, match="does not apply.*single secret"):
        po.design(joint, np.ones((2, 2)), "dp", epsilon=1.0, solver="sparse-highs")
    with pytest.raises(InputError):
        lp_solve(prior, HAM22, "dp", epsilon=-0.1)
    with pytest.raises(InputError, match="unknown option"):
        po.design(
            prior,
            HAM22,
            "dp",
            epsilon=1.0,
            solver="sparse-highs",
            solver_options={"sparse-highs": {"method": "barrier"}},
        )
    with pytest.raises(InputError):
        lp_solve(Prior([0.5, 0.5]), np.ones((2, 2)), "dp", epsilon=1.0, neighbors="hamming")


def test_newton_hessian_by_symmetric_update_equals_the_product():
    """From ``SYRK_FROM`` columns on, Blahut–Arimoto's Newton Hessian is formed by a BLAS
    symmetric rank-k update; it equals ``MᵀM`` computed directly."""
    from privopt.methods.blahut_arimoto.kernel import Kernel
    from privopt.methods.blahut_arimoto.newton import SYRK_FROM, _hessian

    rng = np.random.default_rng(4)
    k = SYRK_FROM + 40
    p = rng.dirichlet(np.ones(k))
    d = np.abs(np.subtract.outer(np.arange(k), np.arange(k))).astype(float)
    kernel = Kernel(d, d.min(axis=1), p, 0.05)
    q = rng.dirichlet(np.ones(k))
    zt, logz, bad = kernel.z(q)
    cols = np.arange(k)
    M = kernel.sqrt_p[:, None] * kernel.ratio(zt, logz, bad, cols)
    H = _hessian(kernel, zt, logz, bad, cols)
    np.testing.assert_allclose(H, M.T @ M, rtol=1e-12, atol=1e-14)
    assert np.array_equal(H, H.T)
    small = cols[: SYRK_FROM - 1]
    np.testing.assert_allclose(
        _hessian(kernel, zt, logz, bad, small), (M.T @ M)[np.ix_(small, small)]
    )


def _line_or_plane_instance(kind: str, k: int, seed: int):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(k))
    if kind == "line":
        d = np.abs(np.subtract.outer(np.arange(k), np.arange(k))).astype(float)
    elif kind == "plane":
        pts = rng.uniform(0, 1, (k, 2))
        d = np.sqrt(((pts[:, None] - pts[None]) ** 2).sum(-1))
    else:  # a random matrix with a zero diagonal: no geometry to exploit
        d = rng.uniform(0, 1, (k, k))
        np.fill_diagonal(d, 0.0)
    return p, d


@pytest.mark.parametrize("kind", ["line", "plane", "random"])
def test_column_generation_slope_equals_the_full_interior_point(kind, monkeypatch):
    """Above ``COLUMN_GENERATION_FROM`` outputs a slope is solved by column generation; its
    output law has Blahut's gap over *all* outputs within the target, and it is the output
    law the full-size interior point finds (the optimum's ``Z`` is unique)."""
    from privopt.methods.blahut_arimoto import newton
    from privopt.methods.blahut_arimoto.kernel import Kernel, ba_gap

    k = newton.COLUMN_GENERATION_FROM + 50
    p, d = _line_or_plane_instance(kind, k, seed=7)
    s = 4.0 / float(np.min(p @ d))
    kernel = Kernel(d, d.min(axis=1), p, s)
    cols = np.arange(k)
    q0 = np.full(k, 1.0 / k)
    target = 1e-13
    q, gap, _, method = newton.solve_slope(kernel, q0, cols, target, 5_000, warm=False)
    assert method == "columns"
    full_gap = ba_gap(q, kernel.c(*kernel.z(q)))
    assert full_gap <= target and gap == pytest.approx(full_gap, abs=1e-15)
    assert 0 < np.count_nonzero(q) < k // 2
    monkeypatch.setattr(newton, "COLUMN_GENERATION_FROM", 10**9)
    q_ipm, gap_ipm, _, method_ipm = newton.solve_slope(kernel, q0, cols, target, 5_000, False)
    assert method_ipm != "columns" and gap_ipm <= target
    # Φ and the mechanism agree (the output law itself may differ where the optimum is
    # not unique); both are within the certified gap of the same optimum
    assert abs(kernel.phi(q) - kernel.phi(q_ipm)) <= 2 * target
    np.testing.assert_allclose(
        kernel.mechanism(q) * p[:, None], kernel.mechanism(q_ipm) * p[:, None], atol=1e-6
    )


def test_column_generation_hands_over_when_the_support_is_large(monkeypatch):
    """Where the optimum uses most outputs (``d = 1 − I`` at slope 8: 367 of 420), the
    working set passes half the outputs, column generation gives up and the full interior
    point answers; the answer is the same as with column generation switched off."""
    from privopt.methods.blahut_arimoto import newton

    k = newton.COLUMN_GENERATION_FROM + 20
    p = np.random.default_rng(3).dirichlet(np.ones(k))
    d = 1.0 - np.eye(k)
    q, gap, its, method = newton.solve_slope(
        newton.Kernel(d, d.min(axis=1), p, 8.0),
        np.full(k, 1.0 / k),
        np.arange(k),
        1e-13,
        5_000,
        warm=False,
    )
    assert method != "columns" and gap <= 1e-13 and np.count_nonzero(q) > k // 2
    answers = []
    for threshold in (newton.COLUMN_GENERATION_FROM, 10**9):
        monkeypatch.setattr(newton, "COLUMN_GENERATION_FROM", threshold)
        res = rate_distortion(Prior(p), d, 0.4)
        assert res.status == "optimal"
        answers.append(res.objective)
    assert answers[0] == pytest.approx(answers[1], abs=1e-10)


@pytest.mark.parametrize("kind", ["line", "random"])
def test_column_generation_design_matches_the_full_method(kind, monkeypatch):
    """Whole designs (slope search, both modes) with and without column generation agree
    to 1e-10 and are certified."""
    from privopt.methods.blahut_arimoto import newton

    k = newton.COLUMN_GENERATION_FROM + 30
    p, d = _line_or_plane_instance(kind, k, seed=11)
    budget = 0.3 * float(np.min(p @ d))
    values = []
    for threshold in (newton.COLUMN_GENERATION_FROM, 10**9):
        monkeypatch.setattr(newton, "COLUMN_GENERATION_FROM", threshold)
        rd = rate_distortion(Prior(p), d, budget)
        dr = distortion_rate(Prior(p), d, 0.5)
        assert rd.status == dr.status == "optimal"
        assert rd.certificate["duality_gap"] <= 1e-9 and dr.certificate["duality_gap"] <= 1e-9
        values.append((rd.objective, dr.objective))
    assert values[0] == pytest.approx(values[1], abs=1e-10)


def test_nearby_warm_start_on_a_large_alphabet_takes_newton_on_the_old_support():
    """From the optimum of a nearby slope (a sweep's next point, the search's last steps),
    active-set Newton on the previous support finishes before column generation is tried;
    the answer is the one column generation gives cold."""
    from privopt.methods.blahut_arimoto import newton
    from privopt.methods.blahut_arimoto.kernel import Kernel, ba_gap

    k = newton.COLUMN_GENERATION_FROM + 50
    p, d = _line_or_plane_instance("line", k, seed=5)
    s = 4.0 / float(np.min(p @ d))
    cols, target = np.arange(k), 1e-13
    uniform = np.full(k, 1.0 / k)
    near = Kernel(d, d.min(axis=1), p, s * (1 + 1e-7))
    q_near, *_ = newton.solve_slope(near, uniform, cols, target, 5_000, warm=False)
    kernel = Kernel(d, d.min(axis=1), p, s)
    q, gap, _, method = newton.solve_slope(kernel, q_near, cols, target, 5_000, warm=True)
    assert method == "newton"
    assert gap <= target and ba_gap(q, kernel.c(*kernel.z(q))) <= target
    q_cold, _, _, cold_method = newton.solve_slope(kernel, uniform, cols, target, 5_000, False)
    assert cold_method == "columns"
    assert abs(kernel.phi(q) - kernel.phi(q_cold)) <= 2 * target


def test_translation_level_of_information_privacy_sees_a_zero_entry():
    """Information privacy bounds ``p(u|x)`` below by ``e^{−ε} p(u)``, so a generating row
    with a zero (an entry below the clean-up floor at a large ε on a large alphabet) has no
    finite level; the reduced level once skipped the zeros and reported a finite one, which
    the repair then trusted. The one-sided PML level ignores zeros, as it should."""
    from privopt.methods.sparse_lp.encodings import OutputLawRatios
    from privopt.methods.sparse_lp.translation import Translations

    group = Translations(4, 1)
    with_zero = np.array([0.5, 0.3, 0.2, 0.0])
    assert OutputLawRatios(two_sided=True).reduced_level(with_zero, group, None, True) == np.inf
    assert OutputLawRatios().reduced_level(with_zero, group, None, True) == pytest.approx(
        np.log(4 * 0.5)
    )
    positive = np.array([0.4, 0.3, 0.2, 0.1])
    assert OutputLawRatios(two_sided=True).reduced_level(
        positive, group, None, True
    ) == pytest.approx(max(abs(np.log(4 * positive))))
