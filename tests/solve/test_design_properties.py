"""Property tests of ``design`` / ``sweep`` on random instances, for every notion (GitHub issue
"Problem builder and solver layer").

Random priors (2–5 symbols, entries bounded away from 0, sometimes with one zero entry),
random non-negative distortions (square or not) and random levels in [0.05, 3]: the answer is
row-stochastic, meets its constraint when re-measured with :mod:`privopt.measures`, is
verified, and ``D*(ε)`` is non-increasing along a sweep.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import privopt as po
from privopt import InfeasibleError, measures

NOTIONS = (
    "mutual_information",
    "max_information_leakage",
    "pml",
    "maximal_leakage",
    "information_privacy",
    "identifiability",
    "dp",
    "ldp",
    "robust_pml",
)

SETTINGS = {
    "deadline": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
}


@st.composite
def instances(draw):
    k = draw(st.integers(2, 5))
    k_out = draw(st.integers(2, 5))
    weights = np.array(draw(st.lists(st.floats(0.05, 1.0), min_size=k, max_size=k)))
    if draw(st.integers(0, 3)) == 0:  # one prior entry in four draws is exactly zero
        weights[draw(st.integers(0, k - 1))] = 0.0
    p = weights / weights.sum()
    # distortion values are 0 or at least 0.01: LP solvers work to ~1e-7 absolute, so values
    # like 6e-8 next to 1 would only test their tolerances
    entry = st.one_of(st.just(0.0), st.floats(0.01, 3.0))
    d = np.array(draw(st.lists(entry, min_size=k * k_out, max_size=k * k_out))).reshape(k, k_out)
    eps = draw(st.floats(0.05, 3.0))
    shift = draw(st.floats(0.0, 1.0))
    return p, d, eps, shift


def robust_priors(p: np.ndarray, shift: float) -> list[np.ndarray]:
    """The nominal prior and a mixture of its reversal with the uniform pmf, on the nominal
    prior's support (priors of different supports make privopt warn, rightly, that the
    guarantee need not hold on their convex hull)."""
    other = ((1 - shift) * p[::-1] + shift / p.size) * (p > 0)
    if not other.sum() > 0:
        return [p, p.copy()]
    return [p, other / other.sum()]


def level(notion: str, p: np.ndarray, W: np.ndarray, priors=None) -> float:
    """The notion's level, re-measured with privopt.measures."""
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


def eps_x(p: np.ndarray) -> float:
    q = p[p > 0]
    return float(np.log(q.max() / q.min()))


def assert_row_stochastic(W: np.ndarray, shape) -> None:
    assert W.shape == shape
    assert np.isfinite(W).all() and (W >= 0).all()
    np.testing.assert_allclose(W.sum(axis=1), 1.0, rtol=0, atol=1e-12)


def meets(value: float, bound: float) -> bool:
    return value <= bound + 1e-8 * max(1.0, bound)


@pytest.mark.parametrize("notion", NOTIONS)
@pytest.mark.filterwarnings("ignore:the guarantee holds at the listed priors:UserWarning")
@settings(max_examples=30, **SETTINGS)
@given(instance=instances())
def test_epsilon_mode_answer_is_feasible_and_verified(notion, instance):
    p, d, eps, shift = instance
    priors = robust_priors(p, shift) if notion == "robust_pml" else None
    if notion == "identifiability" and eps < eps_x(p):
        with pytest.raises(InfeasibleError) as info:
            po.design(p, d, notion, epsilon=eps)
        assert info.value.least_achievable == pytest.approx(eps_x(p), abs=1e-12)
        return
    res = po.design(p, d, notion, epsilon=eps, priors=priors)
    assert res.verified and res.status in ("optimal", "optimal_inaccurate")
    W = res.mechanism.matrix
    assert_row_stochastic(W, d.shape)
    measured = level(notion, p, W, priors)
    assert meets(measured, eps)
    assert res.epsilon == pytest.approx(measured, rel=1e-12, abs=1e-15)
    assert res.distortion == pytest.approx(measures.expected_distortion(p, W, d), abs=1e-12)
    # never below the least distortion of any mechanism
    assert res.distortion >= float(p @ d.min(axis=1)) - 1e-9


@pytest.mark.parametrize("notion", NOTIONS)
@pytest.mark.filterwarnings("ignore:.*of the sweep.*listed priors:UserWarning")
@settings(max_examples=20, **SETTINGS)
@given(instance=instances(), n_points=st.integers(4, 5))
def test_sweep_distortion_is_non_increasing(notion, instance, n_points):
    p, d, eps, shift = instance
    priors = robust_priors(p, shift) if notion == "robust_pml" else None
    base = eps_x(p) if notion == "identifiability" else 0.0
    epsilons = list(base + np.linspace(0.05, eps, n_points))
    curve = po.sweep(p, d, notion, epsilons=epsilons, priors=priors)
    assert len(curve) == n_points
    assert [r["status"] for r in curve.records] == ["optimal"] * n_points, curve.records
    dist = curve.column("distortion")
    assert np.all(np.diff(dist) <= 1e-7 * (1 + dist[:-1])), dist
    for e, res in zip(epsilons, curve.results, strict=True):
        assert res.verified
        assert_row_stochastic(res.mechanism.matrix, d.shape)
        assert meets(level(notion, p, res.mechanism.matrix, priors), e)


@pytest.mark.parametrize("notion", NOTIONS)
@settings(max_examples=8, **SETTINGS)
@given(instance=instances(), fraction=st.floats(0.1, 0.9))
def test_max_distortion_mode_meets_budget(notion, instance, fraction):
    p, d, _, shift = instance
    priors = robust_priors(p, shift) if notion == "robust_pml" else None
    least = float(p @ d.min(axis=1))
    start = eps_x(p) if notion == "identifiability" else 0.0
    worst = po.design(p, d, notion, epsilon=start, priors=priors).distortion  # D*(ε_min)
    assume(worst - least > 1e-4)  # a budget inside solver noise of D*(∞) is not testable
    budget = least + fraction * (worst - least)
    res = po.design(p, d, notion, max_distortion=budget, priors=priors)
    assert res.verified
    assert_row_stochastic(res.mechanism.matrix, d.shape)
    assert res.distortion <= budget + 1e-7 * (1 + budget)
    measured = level(notion, p, res.mechanism.matrix, priors)
    assert res.epsilon == pytest.approx(measured, rel=1e-12, abs=1e-15)
    # the answer's level is enough for the budget in ε mode too (up to solver accuracy)
    again = po.design(p, d, notion, epsilon=res.epsilon + 1e-6, priors=priors)
    assert again.distortion <= budget + 1e-6 * (1 + budget)


@st.composite
def joint_instances(draw):
    """A joint p(s, y) (zero cells allowed), a distortion on Y × U and a level."""
    n_s, n_y, n_u = draw(st.integers(2, 3)), draw(st.integers(2, 4)), draw(st.integers(2, 4))
    cells = draw(st.lists(st.floats(0.0, 1.0), min_size=n_s * n_y, max_size=n_s * n_y))
    joint = np.array(cells).reshape(n_s, n_y)
    assume(joint.sum() > 0.1)
    entry = st.one_of(st.just(0.0), st.floats(0.01, 3.0))
    d = np.array(draw(st.lists(entry, min_size=n_y * n_u, max_size=n_y * n_u))).reshape(n_y, n_u)
    return joint / joint.sum(), d, draw(st.floats(0.05, 3.0)), draw(st.booleans())


@pytest.mark.parametrize("notion", [n for n in NOTIONS if n != "robust_pml"])
@settings(max_examples=10, **SETTINGS)
@given(instance=joint_instances())
def test_joint_prior_answer_is_feasible(notion, instance):
    """Calmon–Fawaz setting: the level is measured on p(u|s) = Σ_y p(y|s) W[y,u], with the
    mechanism seeing Y, or (Y, S) when ``observe_secret``."""
    joint, d, eps, observe = instance
    prior = po.JointPrior(joint)
    pp = po.build_problem(prior, d, notion, epsilon=eps, observe_secret=observe)
    least = po.get_notion(notion).min_level(pp.prior, pp.neighbors)
    if eps < least:
        with pytest.raises(InfeasibleError):
            po.design(prior, d, notion, epsilon=eps, observe_secret=observe)
        return
    res = po.design(prior, d, notion, epsilon=eps, observe_secret=observe)
    assert res.verified
    n_in = joint.size if observe else joint.shape[1]
    assert_row_stochastic(res.mechanism.matrix, (n_in, d.shape[1]))
    assert meets(level(notion, pp.prior, res.mechanism.matrix), eps)
    assert res.distortion >= float(prior.p_y @ d.min(axis=1)) - 1e-9
