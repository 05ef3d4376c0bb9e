"""Answers that do not depend on the unit of the distortion, and identifiability in budget
mode down to the closed form's reach (the attack "nothing misleading").

* **Scale-free certification**: ``d·2ᵏ`` is solved as exactly the same program as ``d``
  (the driver divides every distortion by the power of two that brings its largest entry
  into ``[1, 2)``), so status, certificate, solver and mechanism are the same and every
  distortion is the same times ``2ᵏ``, bit for bit; "optimal" is measured against a floor of
  ``max d / 8``, never an absolute 1e-6.
* **Identifiability** (Wang, Ying & Zhang 2016): in budget mode the least level is
  ``ε*_I(D) = h⁻¹(D)`` for ``0 < D ≤ h(ε̃_X)`` (Thm 1), at budgets down to 1e-12; the
  named ``wang-identifiability`` works from ε̃_X on, equality included; the answer at the
  limit ε → ∞ never overrides a named method, nor E_i where E_i is the optimum, and is
  bounded by ``h(ε)`` (Lemma 1) where that holds.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import privopt as po
from privopt.notions import notion_names
from privopt.papers.closed_forms import epsilon_tilde_x, epsilon_x, h, h_inv
from privopt.solve.driver import distortion_scale

LINEAR = ["ldp", "pml", "identifiability", "information_privacy", "maximal_leakage", "dp"]


def _instance(rng: np.random.Generator, notion: str) -> dict:
    k = int(rng.integers(2, 7))
    p = rng.dirichlet(np.full(k, float(rng.choice([0.5, 1.0, 4.0]))))
    p = np.maximum(p, 1e-9)
    p /= p.sum()
    kind = rng.choice(["matrix", "hamming", "absolute"])
    if kind == "matrix":
        d = rng.random((k, k)) * float(rng.choice([0.01, 1.0, 10.0]))
    elif kind == "hamming":
        d = 1.0 - np.eye(k)
    else:
        d = np.abs(np.subtract.outer(np.arange(k), np.arange(k))).astype(float)
    eps = float(rng.choice([0.0, 0.1, 1.0, 5.0, 12.0, 16.0, 20.0]))
    options = {}
    if notion == "robust_pml":
        options["priors"] = [p, rng.dirichlet(np.ones(k))]
    if notion == "metric_dp":
        points = rng.random((k, 2))
        options["metric"] = np.linalg.norm(points[:, None, :] - points[None, :, :], axis=2)
    return {"p": p, "d": d, "eps": eps, "options": options}


def _facts(result) -> tuple:
    cert = result.certificate
    return (
        str(result.status),
        result.solver.name if result.solver is not None else None,
        result.epsilon,
        bool(result.verified),
        None if cert is None else bool(cert.certified),
        None if cert is None else cert.relative_gap,
    )


def _same_up_to(small, big, factor: float) -> None:
    """``big`` is ``small`` with every distortion times ``factor``, exactly."""
    assert _facts(big) == _facts(small)
    if small.distortion is None:
        assert big.distortion is None
        return
    assert big.distortion == small.distortion * factor
    np.testing.assert_array_equal(big.mechanism.matrix, small.mechanism.matrix)
    if small.certificate is not None and small.certificate.lower_bound is not None:
        assert big.certificate.lower_bound == small.certificate.lower_bound * factor


def _check_scaled(notion: str, rng: np.random.Generator, ks) -> None:
    inst = _instance(rng, notion)
    p, d, eps, options = inst["p"], inst["d"], inst["eps"], inst["options"]
    small = po.design(p, d, notion, epsilon=eps, raise_on_infeasible=False, **options)
    for k in ks:
        big = po.design(p, d * 2.0**k, notion, epsilon=eps, raise_on_infeasible=False, **options)
        _same_up_to(small, big, 2.0**k)


@pytest.mark.parametrize("notion", LINEAR)
def test_distortions_scaled_by_powers_of_two_give_the_same_answers(notion):
    rng = np.random.default_rng([33, LINEAR.index(notion)])
    for _ in range(6):
        _check_scaled(notion, rng, [int(k) for k in rng.integers(-30, 31, size=2)] + [-30, 30])


@pytest.mark.slow
@pytest.mark.parametrize("notion", notion_names())
def test_optimality_fuzz_scaled_distortions_slow(notion):
    """Every notion, 40 random instances, each at 6 random scales 2ᵏ, k ∈ [−30, 30]."""
    rng = np.random.default_rng([3333, sorted(notion_names()).index(notion)])
    for _ in range(40):
        _check_scaled(notion, rng, [int(k) for k in rng.integers(-30, 31, size=6)])


def test_budget_mode_is_the_same_at_every_scale():
    p, d = [0.5, 0.3, 0.2], np.array([[0, 1, 2], [1, 0, 1], [2, 1, 0.0]])
    for notion in ("pml", "identifiability", "ldp"):
        small = po.design(p, d, notion, max_distortion=0.3)
        for k in (-30, -15, 7, 30):
            big = po.design(p, d * 2.0**k, notion, max_distortion=0.3 * 2.0**k)
            assert big.epsilon == small.epsilon
            assert big.distortion == small.distortion * 2.0**k


def test_every_distortion_is_solved_with_its_largest_entry_in_1_2():
    for top in (1e-300, 2.0**-40, 0.3, 1.0, 1.99, 2.0, 1000.0, 1e300):
        d = po.Distortion.from_matrix([[0.0, top], [top / 3, 0.0]])
        assert 1.0 <= top / distortion_scale(d) < 2.0
    assert distortion_scale(po.Distortion.from_matrix([[0.0, 0.0], [0.0, 0.0]])) == 1.0


# --- the attack's reproducers ---------------------------------------------------------------
def test_identifiability_at_12_with_a_tiny_unit_is_the_unscaled_answer():
    """The attack: with d·2⁻¹⁵ the limit answer was certified by the bound 0 at 198 times a
    feasible mechanism; the same request in the unit of d was exact."""
    prior = po.DatabasePrior(2, 2, row_probs=[0.3, 0.7])
    d = po.Distortion.database_hamming(2, 2).matrix
    unit = po.design(prior, d, "identifiability", epsilon=12.0)
    tiny = po.design(prior, d * 2.0**-15, "identifiability", epsilon=12.0)
    _same_up_to(unit, tiny, 2.0**-15)
    assert unit.status == "optimal"
    assert unit.distortion == pytest.approx(h(12.0, 2, 2), rel=1e-4)  # not 198 times it


@pytest.mark.parametrize("eps", [16.0, 17.5, 19.0, 22.0])
@pytest.mark.parametrize("probs", [[0.5, 0.5], [0.3, 0.7], [0.2, 0.3, 0.5]])
def test_identifiability_at_large_levels_is_e_i_not_the_limit_answer(eps, probs):
    """Unit Hamming distortion: the answers were 1.4–4.7·h(ε); E_i is exact (Thm 1)."""
    result = po.design(probs, "hamming", "identifiability", epsilon=eps)
    assert result.status == "optimal" and result.solver.name == "wang-identifiability"
    assert result.distortion == pytest.approx(h(eps, len(probs), 1), rel=1e-9)


def test_a_named_method_is_never_replaced_by_the_limit_answer():
    p = [0.5, 0.3, 0.2]
    d = np.array([[0, 1, 2], [1, 0, 1], [2, 1, 0.0]])
    auto = po.design(p, d, "pml", epsilon=20.0)
    assert auto.solver.name.startswith("closed form")
    named = po.design(p, d, "pml", epsilon=20.0, solver="CLARABEL")
    assert named.solver.name == "CLARABEL" and named.solver.tried == ["CLARABEL"]
    named = po.design([0.3, 0.7], "hamming", "identifiability", epsilon=14.0,
                      solver="wang-identifiability")  # fmt: skip
    assert named.solver.name == "wang-identifiability" and named.status == "optimal"


def test_the_limit_answer_below_eps_tilde_is_bounded_by_h():
    """Where E_i does not exist (ε < ε̃_X, a prior with a tiny mass), the limit answer's
    lower bound is h(ε) (Lemma 1), the bound that holds and is tighter than D*(∞) = 0."""
    probs = [1e-6, 0.5, 0.5 - 1e-6]
    prior = po.DatabasePrior(3, 1, probs=probs)
    eps = 13.5
    assert epsilon_x(prior) < eps < epsilon_tilde_x(prior)  # ε_X ≈ 13.12, ε̃_X ≈ 13.82
    result = po.design(probs, "hamming", "identifiability", epsilon=eps)
    assert result.verified
    if result.solver.name.startswith("closed form"):
        assert result.certificate.lower_bound == pytest.approx(h(eps, 3, 1), rel=1e-12)
    assert result.distortion >= h(eps, 3, 1) * (1 - 1e-9)  # Lemma 1 holds for the answer


@pytest.mark.parametrize("D", [1e-7, 1e-9])
@pytest.mark.parametrize(
    "prior, m, n",
    [
        ([0.5, 0.5], 2, 1),
        ([0.3, 0.7], 2, 1),
        ([0.2, 0.3, 0.5], 3, 1),
        (po.DatabasePrior(2, 2, row_probs=[0.3, 0.7]), 2, 2),
        (po.DatabasePrior(3, 2, row_probs=[0.2, 0.3, 0.5]), 3, 2),
    ],
)
def test_identifiability_budget_mode_at_tiny_budgets_is_h_inverse(prior, m, n, D):
    """The attack: VerificationError on every prior, and a false InfeasibleError ("needs a
    level above 40 nats") on the database prior at D = 1e-9."""
    result = po.design(prior, "hamming", "identifiability", max_distortion=D)
    assert result.status == "optimal"
    assert result.epsilon == pytest.approx(h_inv(D, m, n), rel=1e-9)
    assert result.distortion <= D * (1 + 1e-9)
    # and the mechanism at that level is feasible in epsilon mode too
    again = po.design(prior, "hamming", "identifiability", epsilon=result.epsilon)
    assert again.status == "optimal" and again.distortion <= D * (1 + 1e-9)


def _wang_priors():
    rng = np.random.default_rng(7)
    yield po.DatabasePrior(2, 1, row_probs=[0.3, 0.7])
    yield po.DatabasePrior(3, 2, row_probs=[0.2, 0.3, 0.5])
    yield po.DatabasePrior(2, 2, probs=rng.dirichlet(np.ones(4)))  # not a product
    yield po.DatabasePrior(2, 3, probs=rng.dirichlet(np.ones(8)))
    yield po.DatabasePrior(4, 1, probs=rng.dirichlet(np.ones(4)))


@pytest.mark.parametrize("prior", list(_wang_priors()), ids=lambda p: f"m{p.m}n{p.n}")
def test_the_named_closed_form_works_at_eps_tilde_itself(prior):
    tilde = epsilon_tilde_x(prior)
    for eps in (tilde, tilde * (1 + 1e-12), tilde * (1 + 1e-9)):
        result = po.design(
            prior, "hamming", "identifiability", epsilon=eps, solver="wang-identifiability"
        )
        assert result.status == "optimal"
        assert result.distortion == pytest.approx(h(eps, prior.m, prior.n), rel=1e-12)


def _fuzz_budget_mode(rng: np.random.Generator, count: int) -> None:
    for _ in range(count):
        shape = int(rng.integers(3))
        if shape == 0:
            m, n = int(rng.integers(2, 6)), 1
            prior = po.DatabasePrior(m, n, probs=rng.dirichlet(np.ones(m)))
        elif shape == 1:
            m, n = int(rng.integers(2, 4)), 2
            prior = po.DatabasePrior(m, n, row_probs=rng.dirichlet(np.ones(m)))
        else:
            m, n = 2, int(rng.integers(2, 4))
            prior = po.DatabasePrior(m, n, probs=rng.dirichlet(np.ones(m**n)))
        d_tight = h(epsilon_tilde_x(prior), m, n)
        tensor = prior.probs.reshape((m,) * n)
        margins = [tensor.sum(axis=tuple(j for j in range(n) if j != i)) for i in range(n)]
        d_max = sum(1.0 - float(q.max()) for q in margins)  # the constant release's D
        budget = float(10.0 ** rng.uniform(-12, math.log10(d_max)))
        result = po.design(prior, "hamming", "identifiability", max_distortion=budget)
        assert result.status == "optimal", (prior, budget)
        assert result.distortion <= budget * (1 + 1e-9) + 1e-300
        if budget <= d_tight:  # Thm 1: exactly h⁻¹(D)
            assert result.epsilon == pytest.approx(h_inv(budget, m, n), rel=1e-9, abs=1e-12)
        else:  # Thm 1 and Lemmas 2–3: at least max{h⁻¹(D), ε_X}
            floor = max(h_inv(budget, m, n), epsilon_x(prior))
            assert result.epsilon >= floor - 1e-6 * (1 + floor)


def test_identifiability_budget_mode_fuzz_agrees_with_h_inverse():
    _fuzz_budget_mode(np.random.default_rng(2016), 40)


@pytest.mark.slow
def test_identifiability_budget_mode_fuzz_agrees_with_h_inverse_slow():
    _fuzz_budget_mode(np.random.default_rng(20160), 400)
