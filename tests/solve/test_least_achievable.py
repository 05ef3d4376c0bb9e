"""The least achievable distortion of an infeasible budget request with extra budgets.

Below the least distortion any mechanism meeting the extra budgets has, a budget request is
infeasible, and the value it reports must be that least distortion (``min E[d]`` subject to
``E[d_k] ≤ b_k`` alone), not the one that ignores the extra budgets. Checked against an
independent LP solved by :func:`scipy.optimize.linprog`, on random joint priors and on the
single-secret request of the reliability report (true value 0.6).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linprog

import privopt as po
from privopt.status import Status


def least_with_budgets(p_y: np.ndarray, d: np.ndarray, extras) -> float:
    """``min Σ_y p(y) Σ_u W[y,u] d[y,u]`` over row-stochastic ``W`` with
    ``Σ_y p(y) Σ_u W[y,u] d_k[y,u] ≤ b_k``: the LP written out here, independently of
    privopt."""
    n_y, n_u = d.shape
    cost = (p_y[:, None] * d).ravel()
    a_ub = np.array([(p_y[:, None] * np.asarray(dk, dtype=float)).ravel() for dk, _ in extras])
    b_ub = np.array([b for _, b in extras], dtype=float)
    a_eq = np.kron(np.eye(n_y), np.ones(n_u))
    res = linprog(cost, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=np.ones(n_y), bounds=(0, None))
    assert res.status == 0, res.message
    return float(res.fun)


def test_the_reported_request_gives_the_least_distortion_under_its_extra_budgets():
    d = 1 - np.eye(3)
    extras = [([[1, 0, 1]] * 3, 0.1)]
    for notion in ("mutual_information", "pml", "ldp"):
        res = po.design(
            [0.5, 0.3, 0.2],
            d,
            notion,
            max_distortion=0.3,
            extra_distortions=extras,
            raise_on_infeasible=False,
        )
        assert res.status == Status.INFEASIBLE
        assert res.least_achievable_quantity == "distortion"
        assert res.least_achievable == pytest.approx(0.6, rel=1e-7), notion


@pytest.mark.parametrize("seed", range(6))
def test_mutual_information_on_random_joint_priors_matches_an_independent_lp(seed):
    rng = np.random.default_rng(seed)
    n_s, n_y, n_u = rng.integers(2, 4), rng.integers(2, 5), rng.integers(2, 5)
    joint = rng.dirichlet(np.ones(n_s * n_y)).reshape(n_s, n_y)
    p_y = joint.sum(axis=0)
    d = rng.uniform(0, 1, (n_y, n_u))
    d2 = 1.0 - d + 0.1 * rng.uniform(0, 1, (n_y, n_u))  # opposes d: the budget binds
    low2 = float(p_y @ d2.min(axis=1))
    budget2 = low2 + 0.3 * (float(p_y @ d2.max(axis=1)) - low2)
    extras = [(d2, budget2)]
    least = least_with_budgets(p_y, d, extras)
    assert least > float(p_y @ d.min(axis=1)) + 1e-6  # the extra budget matters
    res = po.design(
        po.JointPrior(joint),
        d,
        "mutual_information",
        max_distortion=0.5 * least,
        extra_distortions=extras,
        raise_on_infeasible=False,
    )
    assert res.status == Status.INFEASIBLE
    assert res.least_achievable == pytest.approx(least, rel=1e-6, abs=1e-8)
    with pytest.raises(po.InfeasibleError) as info:
        po.design(
            po.JointPrior(joint),
            d,
            "mutual_information",
            max_distortion=0.5 * least,
            extra_distortions=extras,
        )
    assert info.value.least_achievable == pytest.approx(least, rel=1e-6, abs=1e-8)
    assert info.value.quantity == "distortion"
    # at the least achievable distortion itself the request is met
    met = po.design(
        po.JointPrior(joint),
        d,
        "mutual_information",
        max_distortion=least * (1 + 1e-6) + 1e-9,
        extra_distortions=extras,
    )
    assert met.verified


def test_extra_budgets_that_no_mechanism_meets_leave_the_least_value_unknown():
    res = po.design(
        [0.5, 0.3, 0.2],
        1 - np.eye(3),
        "mutual_information",
        max_distortion=0.3,
        extra_distortions=[(np.ones((3, 3)), 0.5)],  # E[1] = 1 > 0.5 for every mechanism
        raise_on_infeasible=False,
    )
    assert res.status == Status.INFEASIBLE and res.least_achievable is None
