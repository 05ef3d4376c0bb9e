"""The block-angular interior point (``block-ipm``): kernels, certificate and answers.

Oracles: dense linear algebra for the kernels; an independent ``scipy.optimize.linprog``
program for every notion (``tests/crosscheck/linear_lp.py``, and a database PD-DP written
out here); the weak-duality property of the certificate for *any* duals.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize

import privopt as po
from privopt.methods.base import Deadline
from privopt.methods.block_ipm import dense_inverse
from privopt.methods.block_ipm.interior_point import (
    BlockSolution,
    StopReason,
    _lagrangian_bound,
    solve_block_lp,
)
from privopt.methods.block_ipm.kernels import ArrowColumns, DenseColumns, DiagonalPlusLowRank
from privopt.methods.block_ipm.programs import PROGRAMS, block_program
from privopt.request import prepare_request
from privopt.solve.selection import choose_methods
from tests.crosscheck.linear_lp import reference_lp

SINGLE_ALPHABET = ("pml", "information_privacy", "ldp", "maximal_leakage")


# --- kernels against dense linear algebra --------------------------------------------------


def _dense_G(kernel, n_rows: int, n_vars: int) -> np.ndarray:
    """``G`` recovered column by column from ``apply`` (one block)."""
    G = np.zeros((n_rows, n_vars))
    for j in range(n_vars):
        e = np.zeros((1, n_vars))
        e[0, j] = 1.0
        G[:, j] = kernel.apply(e)[0]
    return G


def _kernels(rng):
    S = 5
    p = rng.dirichlet(np.ones(S))
    r = 1.7
    idx = np.arange(S)
    left, right = np.array([0, 1, 1, 2, 3, 4]), np.array([1, 0, 2, 1, 4, 3])
    yield DenseColumns(S, left, right, rng.uniform(0.5, 1, 6), rng.uniform(1, 2, 6))
    yield DiagonalPlusLowRank(
        S,
        np.concatenate([idx, idx]),
        np.concatenate([np.ones(S), -np.ones(S)]),
        np.concatenate([np.full(S, -r), np.full(S, 1 / r)])[:, None],
        p[:, None],
    )
    yield ArrowColumns(
        S,
        np.concatenate([idx, idx]),
        np.concatenate([-np.ones(S), np.ones(S)]),
        np.concatenate([np.ones(S), np.full(S, -r)]),
    )


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_kernels_invert_their_normal_matrices(seed):
    rng = np.random.default_rng(seed)
    for kernel in _kernels(rng):
        m, n, U = kernel.n_rows, kernel.n_vars, 3
        G = _dense_G(kernel, m, n)
        V = rng.uniform(size=(U, n))
        Z = rng.uniform(size=(U, m))
        assert np.allclose(kernel.apply(V), V @ G.T)
        assert np.allclose(kernel.apply_t(Z), Z @ G)
        D = np.exp(rng.uniform(-3, 3, size=(U, m)))
        E = np.exp(rng.uniform(-3, 3, size=(U, n)))
        factor = kernel.factor(D, E)
        inverses = [np.linalg.inv(G.T @ np.diag(D[u]) @ G + np.diag(E[u])) for u in range(U)]
        R = rng.normal(size=(U, n))
        expected = np.array([inverses[u] @ R[u] for u in range(U)])
        assert np.allclose(factor.solve(R), expected, rtol=1e-9, atol=1e-12)
        shared = rng.normal(size=n)
        assert np.allclose(factor.solve(shared), [inv @ shared for inv in inverses])
        sel = np.arange(min(n, 5))
        block = sum(inv[np.ix_(sel, sel)] for inv in inverses)
        assert np.allclose(factor.coupled_block(sel), block, rtol=1e-9, atol=1e-12)


def _invert_all(H):
    """Every matrix of the stack inverted, the cores sharing them (as the dense kernel does)."""
    work = H.shape[0] * float(H.shape[1]) ** 3
    chunks = dense_inverse.for_chunks(
        lambda lo, hi: dense_inverse.invert_spd_range(H, lo, hi), H.shape[0], work
    )
    return [u for failed in chunks for u in failed]


def _spd_stack(rng, U, n):
    A = rng.normal(size=(U, n, n))
    return A @ A.transpose(0, 2, 1) + n * np.eye(n)


@pytest.mark.skipif(not dense_inverse.AVAILABLE, reason="scipy exports no Cython LAPACK")
def test_stack_inversion_in_place_on_several_threads():
    """Large enough to be shared between threads; every inverse against numpy's."""
    rng = np.random.default_rng(4)
    H = _spd_stack(rng, 37, 70)
    expected = np.linalg.inv(H)
    assert _invert_all(H) == []
    assert np.allclose(H, expected, rtol=1e-10, atol=1e-14)
    assert np.array_equal(H, H.transpose(0, 2, 1))  # both triangles written
    R, shared = rng.normal(size=(37, 70)), rng.normal(size=70)
    assert np.allclose(dense_inverse.multiply_stack(H, R), np.einsum("uij,uj->ui", expected, R))
    assert np.allclose(dense_inverse.multiply_stack(H, shared), expected @ shared)


def test_a_chunk_that_raises_leaves_no_cycle_holding_its_arrays(monkeypatch):
    """An error raised in a chunk reaches the caller with no reference cycle through the
    futures: once the caller lets the error go, the arrays of the frames it passed through
    are freed at once, not at the cyclic collector's next run. (A 30 × 30 map whose
    factorisations failed and were retried held up to ten sets of column factors, 1.8 GB.)"""
    import gc
    import weakref

    monkeypatch.setattr(dense_inverse, "worker_count", lambda: 2)
    held = []

    def task(lo: int, hi: int):
        arrays = np.ones(1000)  # in the frame the error's traceback refers to
        held.append(weakref.ref(arrays))
        if lo == 0:
            raise np.linalg.LinAlgError("not positive definite")
        return hi

    gc.disable()
    try:
        with pytest.raises(np.linalg.LinAlgError):
            dense_inverse.for_chunks(task, 8, 1e9)
        assert len(held) == 2 and all(ref() is None for ref in held)
    finally:
        gc.enable()


@pytest.mark.skipif(not dense_inverse.AVAILABLE, reason="scipy exports no Cython LAPACK")
def test_omp_num_threads_caps_the_threads_and_one_thread_gives_the_same_inverses(monkeypatch):
    rng = np.random.default_rng(7)
    H = _spd_stack(rng, 24, 80)
    shared = H.copy()
    _invert_all(shared)
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert dense_inverse.worker_count() == 1
    assert dense_inverse.for_chunks(lambda lo, hi: (lo, hi), 24, 1e12) == [(0, 24)]
    _invert_all(H)
    assert np.array_equal(H, shared)
    monkeypatch.setenv("OMP_NUM_THREADS", "not a number")
    assert dense_inverse.worker_count() >= 1


@pytest.mark.skipif(not dense_inverse.AVAILABLE, reason="scipy exports no Cython LAPACK")
def test_stack_inversions_from_several_threads_share_the_pool():
    """Solves running in threads (``solve_many``) invert their stacks through one pool."""
    from concurrent.futures import ThreadPoolExecutor

    rng = np.random.default_rng(8)
    stacks = [_spd_stack(rng, 20, 60) for _ in range(4)]
    expected = [np.linalg.inv(H) for H in stacks]
    with ThreadPoolExecutor(4) as callers:
        failed = list(callers.map(_invert_all, stacks))
    assert failed == [[]] * 4
    for H, inverse in zip(stacks, expected, strict=True):
        assert np.allclose(H, inverse, rtol=1e-10, atol=1e-14)


@pytest.mark.skipif(not dense_inverse.AVAILABLE, reason="scipy exports no Cython LAPACK")
@pytest.mark.parametrize("order", [64, 200])
def test_a_column_that_is_not_positive_definite_is_reported(order):
    """Found by LAPACK (order 64) and by the split through the Schur complement (order 200,
    where the broken entry sits in the trailing block): the others are still inverted."""
    rng = np.random.default_rng(5)
    H = _spd_stack(rng, 12, order)
    H[7, order - 3, order - 3] = -1.0  # not positive definite
    expected = np.linalg.inv(np.delete(H, 7, axis=0))
    assert _invert_all(H) == [7]
    assert np.allclose(np.delete(H, 7, axis=0), expected, rtol=1e-10, atol=1e-14)


@pytest.mark.skipif(not dense_inverse.AVAILABLE, reason="scipy exports no Cython LAPACK")
@pytest.mark.parametrize("order", [129, 200, 256, 300])
def test_large_matrices_are_inverted_through_the_schur_complement(order):
    """Above LAPACK_ORDER the matrices are split (odd and even orders, one and two levels),
    and their inverses agree with numpy's, also for a graded, badly conditioned matrix like
    an interior point's late normal matrices (diagonal scalings from 1e-8 to 1e8)."""
    assert order > dense_inverse.LAPACK_ORDER
    rng = np.random.default_rng(order)
    H = _spd_stack(rng, 3, order)
    scale = np.exp(rng.uniform(np.log(1e-8), np.log(1e8), size=order))
    H[2] = H[2] * scale[:, None] * scale[None, :]
    original = H.copy()
    assert _invert_all(H) == []
    assert np.array_equal(H, H.transpose(0, 2, 1))
    for u in range(3):
        # scale-invariant check: D⁻¹ H⁻¹ D⁻¹ against the inverse of the unscaled matrix
        d = scale if u == 2 else np.ones(order)
        unscaled = original[u] / d[:, None] / d[None, :]
        rescaled = H[u] * d[:, None] * d[None, :]
        assert np.allclose(rescaled, np.linalg.inv(unscaled), rtol=1e-9, atol=1e-12)


@pytest.mark.skipif(not dense_inverse.AVAILABLE, reason="scipy exports no Cython LAPACK")
def test_the_dense_kernel_rebuilds_a_column_whose_factorisation_failed(monkeypatch):
    """A breakdown reported by the stack inversion is redone from the column's matrix formed
    again (with a diagonal shift if needed): the answer is still the inverse."""
    rng = np.random.default_rng(6)
    kernel = next(_kernels(rng))
    real = dense_inverse.invert_spd_range

    def failing_first(H, lo, hi, total=None):
        real(H, lo, hi, total)
        if total is not None:
            total -= H[0]  # a failed column is not part of the sum
        H[0] = rng.normal(size=H[0].shape)  # a wrecked column
        return [0]

    monkeypatch.setattr(dense_inverse, "invert_spd_range", failing_first)
    D = np.exp(rng.uniform(-2, 2, size=(3, kernel.n_rows)))
    E = np.exp(rng.uniform(-2, 2, size=(3, kernel.n_vars)))
    G = _dense_G(kernel, kernel.n_rows, kernel.n_vars)
    factor = kernel.factor(D, E)
    inverses = [np.linalg.inv(G.T @ np.diag(D[u]) @ G + np.diag(E[u])) for u in range(3)]
    for u in range(3):
        assert np.allclose(factor.inverse[u], inverses[u], rtol=1e-10, atol=1e-13)
    # the Schur complement's sum, accumulated during the inversion, includes the rebuilt one
    every = np.arange(kernel.n_vars)
    assert np.allclose(factor.coupled_block(every), sum(inverses), rtol=1e-10, atol=1e-13)


@pytest.mark.skipif(not dense_inverse.AVAILABLE, reason="scipy exports no Cython LAPACK")
@pytest.mark.parametrize("case", ["dp 2^5", "identifiability 3^3", "metric 36"])
def test_whole_solves_through_the_split_inversion_reach_the_independent_optimum(monkeypatch, case):
    """With LAPACK only below order 8, every column of these instances (27–36 variables) is
    inverted through two or three levels of Schur complements, in every iteration and
    close to the optimum, where the normal matrices are graded over many orders of
    magnitude: the answers must still be certified at the independent LP's optimum."""
    from tests.methods.test_fuzz_block_ipm import _database_case, _disagreements, _pair_optimum

    monkeypatch.setattr(dense_inverse, "LAPACK_ORDER", 8)
    orders = []
    real = dense_inverse._lapack_in_place

    def counting(M, lead):
        orders.append(M.shape[0])
        return real(M, lead)

    monkeypatch.setattr(dense_inverse, "_lapack_in_place", counting)
    rng = np.random.default_rng(len(case))
    notion, size = case.split()
    if notion == "metric":
        k = int(size)
        points = rng.random((k, 2))
        metric = np.linalg.norm(points[:, None, :] - points[None, :, :], axis=2)
        p = rng.dirichlet(np.full(k, 0.5))
        eps = 2.0
        left, right = np.nonzero(~np.eye(k, dtype=bool))
        ratio, weight = np.exp(eps * metric[left, right]), np.ones(k)
        result = po.design(p, metric, "metric_dp", epsilon=eps, metric=metric, solver="block-ipm")
        d = metric
    else:
        m, n = map(int, size.split("^"))
        p = rng.dirichlet(np.full(m**n, 0.5))
        result, d, left, right, weight, ratio, _ = _database_case(m, n, p, notion, 0.7)
    assert orders and max(orders) <= 8  # the split ran, down to LAPACK's blocks
    assert result.solver.tried == ["block-ipm"]
    optimum = _pair_optimum(p, d, left, right, weight, ratio)
    assert not _disagreements(result, optimum, case, float(np.max(d)))


@pytest.mark.parametrize("seed", [0, 1])
def test_explicit_column_rows_are_the_kernels_rows(seed):
    """``column_rows`` (the polish's explicit LP of one column) holds the kernel's rows:
    with the auxiliaries at the values their equality rows define, the rows times the
    column equal ``apply``."""
    rng = np.random.default_rng(seed)
    for kernel in _kernels(rng):
        rows, equal = kernel.column_rows()
        n = kernel.n_vars
        k = rows.shape[1] - n
        assert rows.shape[0] == kernel.n_rows
        v = rng.uniform(size=n)
        if equal is None:
            assert k == 0
            aux = np.zeros(0)
        else:  # R^T v - t = 0 defines t
            assert equal.shape == (k, n + k)
            aux = np.linalg.solve(equal[:, n:].toarray(), -(equal[:, :n] @ v))
            assert np.allclose(equal @ np.concatenate([v, aux]), 0.0)
        assert np.allclose(rows @ np.concatenate([v, aux]), kernel.apply(v[None, :])[0])


# --- the certificate is a lower bound for any duals ------------------------------------------


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), notion=st.sampled_from(SINGLE_ALPHABET))
def test_bound_from_any_duals_is_below_the_optimum(seed, notion):
    """Weak duality with the box: arbitrary ``y`` and ``z ≥ 0`` never give a bound above the
    independent LP's optimum (inexact duals weaken the certificate, never falsify it)."""
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 6))
    p = rng.dirichlet(np.ones(k))
    d = rng.uniform(0, 2, size=(k, k))
    eps = float(rng.uniform(0.2, 2.0))
    request = prepare_request(p, d, notion, epsilon=eps)
    lp, _ = block_program(request, eps)
    U = lp.cost.shape[0]
    y = rng.normal(scale=rng.uniform(0.01, 2), size=lp.coupled.size)
    z = np.abs(rng.normal(size=(U, lp.kernel.n_rows)))
    bound = _lagrangian_bound(lp.cost + lp.kernel.apply_t(z), y, lp.coupled, lp.rhs, lp.upper)
    if lp.slack_rows.size:
        bound += float(np.sum(np.minimum(-y[lp.slack_rows], 0.0) * lp.slack_upper))
    assert bound <= reference_lp(notion, p, d, eps) + 1e-9


@pytest.mark.parametrize("notion", SINGLE_ALPHABET)
def test_column_duals_give_a_tight_bound_at_the_optimal_row_duals(notion):
    """The polish: at the row-sum duals of an optimal basis (HiGHS on the full LP) the exact
    per-column duals close the gap; at perturbed ``y`` the bound stays below the optimum."""
    from privopt.methods.block_ipm.interior_point import _bound, _Structure
    from privopt.methods.block_ipm.polish import column_duals

    rng = np.random.default_rng(7)
    k = 6
    p = rng.dirichlet(np.ones(k))
    d = rng.uniform(0, 2, size=(k, k))
    eps = 0.6
    request = prepare_request(p, d, notion, epsilon=eps)
    lp, _ = block_program(request, eps)
    optimum = reference_lp(notion, p, d, eps)
    st_ = _Structure(lp)
    for scale in (0.0, 1e-3, 1e-1):
        y = rng.normal(size=lp.coupled.size) * scale + _row_duals(lp, optimum)
        Z = column_duals(lp, st_.C - st_.spread(y)[None, :])
        assert Z is not None and Z.shape == (lp.cost.shape[0], lp.kernel.n_rows) and (Z >= 0).all()
        bound = st_.cost_unit * _bound(st_, Z, y)
        assert bound <= optimum + 1e-9 * (1 + optimum)
        if scale == 0.0:
            assert bound == pytest.approx(optimum, rel=1e-7, abs=1e-9)


@pytest.mark.parametrize("notion", SINGLE_ALPHABET)
def test_a_run_cut_short_is_finished_by_the_polish(notion):
    """A run stopped early (few iterations, gap ≤ 1e-3) has its bound re-derived from the
    column duals: never worse than its own, never above the optimum."""
    rng = np.random.default_rng(11)
    p = rng.dirichlet(np.ones(7))
    d = rng.uniform(0, 2, size=(7, 7))
    request = prepare_request(p, d, notion, epsilon=0.8)
    lp, _ = block_program(request, 0.8)
    optimum = reference_lp(notion, p, d, 0.8)
    for iterations in range(4, 12):
        sol = solve_block_lp(lp, tol=1e-14, max_iterations=iterations)
        if sol.V is not None and sol.gap <= 1e-3:
            break
    bounds = []
    solve_block_lp(
        lp, tol=1e-14, max_iterations=iterations, on_iteration=lambda i, o, b: bounds.append(b)
    )
    assert sol.polished
    assert max(bounds) - 1e-12 <= sol.bound <= optimum + 1e-9 * (1 + optimum)
    assert sol.objective >= optimum - 1e-9 * (1 + optimum)


@pytest.mark.parametrize("notion", ["maximal_leakage", "pml", "ldp"])
def test_a_run_whose_bound_lags_behind_its_iterate_stops_for_the_polish(notion):
    """Asked for an unreachable gap, the run stops once its iterate's complementarity is far
    below the certified gap (more steps would only shrink the products), not after the
    stall count or the iteration limit; the polished bound stays below the optimum.

    Which of the two early stops comes first at a gap of 1e-13 is round-off: with OpenBLAS's
    Haswell or Zen kernels, PML's last steps lose their duals on every retry before the lag
    test fires (``OPENBLAS_CORETYPE=Haswell`` reproduces it); with SkylakeX's the lag test
    fires first. Both end the run early, for the polish, at the same optimum."""
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(12))
    d = rng.uniform(0, 2, size=(12, 12))
    lp, _ = block_program(prepare_request(p, d, notion, epsilon=0.8), 0.8)
    optimum = reference_lp(notion, p, d, 0.8)
    sol = solve_block_lp(lp, tol=1e-16)
    assert sol.stop in (StopReason.BOUND_LAGS, StopReason.DUALS_FELL_APART) and sol.polished
    assert sol.iterations < 20
    assert sol.gap <= 1e-10
    assert sol.bound <= optimum + 1e-9 * (1 + optimum) <= sol.objective + 2e-9 * (1 + optimum)


def test_refinement_goes_on_while_the_column_residual_is_large(monkeypatch):
    """With column solves 30 % off (as the low-rank factors are close to the optimum of PML
    at k = 1,000), an unrefined direction is far from the exact one; the refinement passes,
    taken while the residual is above 1e-9 and halves, recover it."""
    from privopt.methods.block_ipm import interior_point as ip

    rng = np.random.default_rng(2)
    p = rng.dirichlet(np.ones(8))
    d = rng.uniform(0, 2, size=(8, 8))
    lp, _ = block_program(prepare_request(p, d, "pml", epsilon=0.8), 0.8)
    st_ = ip._Structure(lp)
    pt = ip._start(st_, lp)
    residuals = (
        st_.C + st_.K.apply_t(pt.z) - st_.spread(pt.y)[None, :] - pt.nu,
        -pt.y[st_.srows] - pt.nug,
        st_.K.apply(pt.V) + pt.s,
        st_.couple(pt.V, pt.g) - st_.b,
    )

    def direction(perturb: bool):
        newton = ip._Newton(st_, pt, residuals, True, ip.PRIMAL_REGULARISATION)
        exact, calls = newton.factor.solve, []

        def solve(R):
            calls.append(1)
            out = exact(R)
            return out * (1.0 + 0.3 * np.cos(np.arange(out.size)).reshape(out.shape))

        if perturb:
            newton.factor.solve = solve
        return newton.direction(pt.s * pt.z, pt.V * pt.nu, pt.g * pt.nug).V, len(calls)

    exact_step, _ = direction(False)
    refined, solves = direction(True)
    assert solves > 2 * 4  # more than the three passes once always taken
    assert np.allclose(refined, exact_step, rtol=1e-7, atol=1e-9 * np.abs(exact_step).max())
    monkeypatch.setattr(ip, "MOST_REFINEMENT_PASSES", 0)
    unrefined, _ = direction(True)
    assert np.abs(unrefined - exact_step).max() > 1e-2 * np.abs(exact_step).max()


@pytest.mark.parametrize("notion", ["pml", "information_privacy"])
def test_a_newton_system_that_cannot_be_factorised_is_regularised_and_retried(monkeypatch, notion):
    """A Newton system whose factorisation fails (round-off left the Schur complement
    indefinite) is built again with a stronger regularisation; the run still ends optimal,
    at the optimum of the independent program."""
    from privopt.methods.block_ipm import interior_point as ip

    rng = np.random.default_rng(5)
    p = rng.dirichlet(np.ones(9))
    d = rng.uniform(0, 2, size=(9, 9))
    lp, _ = block_program(prepare_request(p, d, notion, epsilon=0.8), 0.8)
    optimum = reference_lp(notion, p, d, 0.8)
    real, failed = ip._Newton, []

    def failing_once(st_, pt, residuals, accurate, regularisation, *deadline):
        if accurate and not failed:  # the first system close to the optimum fails
            failed.append(regularisation)
            raise ip.SingularBlock("the Schur complement on the coupling rows is singular")
        return real(st_, pt, residuals, accurate, regularisation, *deadline)

    monkeypatch.setattr(ip, "_Newton", failing_once)
    sol = solve_block_lp(lp, tol=1e-9)
    assert failed == [ip.PRIMAL_REGULARISATION]
    assert sol.status == "optimal", sol.message
    assert sol.objective == pytest.approx(optimum, rel=1e-8, abs=1e-10)


def test_a_newton_system_that_never_factorises_ends_the_run_with_a_message(monkeypatch):
    """Past the retries, the run stops with the best iterate and says why."""
    from privopt.methods.block_ipm import interior_point as ip

    rng = np.random.default_rng(5)
    p = rng.dirichlet(np.ones(9))
    d = rng.uniform(0, 2, size=(9, 9))
    lp, _ = block_program(prepare_request(p, d, "pml", epsilon=0.8), 0.8)
    real, calls = ip._Newton, []

    def failing_late(st_, pt, residuals, accurate, regularisation, *deadline):
        calls.append(regularisation)
        if accurate:
            raise ip.SingularBlock("the Schur complement on the coupling rows is singular")
        return real(st_, pt, residuals, accurate, regularisation, *deadline)

    monkeypatch.setattr(ip, "_Newton", failing_late)
    sol = solve_block_lp(lp, tol=1e-9)
    assert sol.status == "stalled" and sol.stop == StopReason.NOT_FACTORISABLE
    assert calls[-1] == pytest.approx(ip.PRIMAL_REGULARISATION * 100.0**ip.MAX_RETRIES)
    assert sol.gap <= 1e-3 and sol.V is not None


def test_information_privacy_with_a_dirichlet_prior_is_certified_by_block_ipm():
    """k = 200, Dirichlet(1) prior (probabilities down to 1e-5): the Schur complement failed
    at a gap of 7e-6 and the design fell back to HiGHS (35 s); one regularised retry
    certifies it in about a second."""
    k = 200
    prior = po.Prior(np.random.default_rng(1).dirichlet(np.ones(k)))
    d = np.abs(np.subtract.outer(np.arange(k), np.arange(k))).astype(float)
    result = po.design(prior, d, "information_privacy", epsilon=0.5, solver="block-ipm")
    assert result.status == "optimal" and result.solver.tried == ["block-ipm"]
    assert result.certificate.certified and result.certificate.relative_gap <= 1e-6


def test_an_early_direction_is_refined_when_its_first_solve_is_inaccurate():
    """PML, k = 250, ε = 2, Dirichlet prior: far from the optimum the first solve of a
    direction can leave a residual of 1e-6; unrefined, the duals of such a step fell apart
    at a gap of 3e-3 (the run ended uncertified). Refined once when needed, it is optimal."""
    k = 250
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(k))
    d = np.abs(np.subtract.outer(np.arange(k), np.arange(k))).astype(float)
    lp, _ = block_program(prepare_request(p, d, "pml", epsilon=2.0), 2.0)
    sol = solve_block_lp(lp, tol=1e-7)
    assert sol.status == "optimal", sol.message


def _row_duals(lp, optimum: float) -> np.ndarray:
    """The row-sum (and slack-row) duals of the block LP written out for HiGHS (scaled costs,
    like the interior point's)."""
    U, n = lp.cost.shape
    rows, equal = lp.kernel.column_rows()
    m, width = rows.shape
    blocks_ub = sp.block_diag([rows] * U, format="csr")
    blocks_eq = None if equal is None else sp.block_diag([equal] * U, format="csr")
    c_rows = lp.coupled.size
    coupling = sp.lil_matrix((c_rows, U * width))
    for i, j in enumerate(lp.coupled):
        for u in range(U):
            coupling[i, u * width + j] = 1.0
    coupling = coupling.tocsr()
    slack = np.zeros(c_rows, dtype=bool)
    slack[lp.slack_rows] = True
    cost = np.zeros((U, width))
    unit = float(np.max(np.abs(lp.cost))) or 1.0
    cost[:, :n] = lp.cost / unit
    A_eq = [coupling[~slack]] + ([blocks_eq] if blocks_eq is not None else [])
    b_eq = np.concatenate([lp.rhs[~slack], np.zeros(0 if equal is None else U * equal.shape[0])])
    bounds = ([(0, float(hi)) for hi in lp.upper] + [(None, None)] * (width - n)) * U
    res = optimize.linprog(
        cost.ravel(),
        A_ub=sp.vstack([blocks_ub, coupling[slack]]),
        b_ub=np.concatenate([np.zeros(U * m), lp.rhs[slack]]),
        A_eq=sp.vstack(A_eq),
        b_eq=b_eq,
        bounds=bounds,
        method="highs-ds",
    )
    assert res.status == 0 and res.fun * unit == pytest.approx(optimum, rel=1e-8, abs=1e-10)
    y = np.zeros(c_rows)
    y[~slack] = res.eqlin.marginals[: int((~slack).sum())]
    y[slack] = res.ineqlin.marginals[U * m :]
    return y


# --- answers against the independent programs ----------------------------------------------


@pytest.mark.parametrize("notion", SINGLE_ALPHABET)
@pytest.mark.parametrize("seed", range(4))
def test_single_alphabet_answers_match_an_independent_lp(notion, seed):
    rng = np.random.default_rng(100 + seed)
    k = int(rng.integers(3, 9))
    ko = int(rng.integers(2, 9))
    p = rng.dirichlet(np.ones(k))
    d = rng.uniform(0, 3, size=(k, ko))
    eps = float(rng.choice([0.05, 0.4, 1.0, 3.0]))
    res = po.design(p, d, notion, epsilon=eps, solver="block-ipm")
    ref = reference_lp(notion, p, d, eps)
    assert res.status == "optimal" and res.certificate.certified
    assert res.distortion == pytest.approx(ref, rel=1e-6, abs=1e-8)
    assert res.certificate.lower_bound <= ref + 1e-8 * (1 + ref)  # linprog's own tolerance


def _database_dp_reference(prior: po.DatabasePrior, eps: float, scaled: bool) -> float:
    """PD-DP / PD-I (Wang, Ying & Zhang 2016, eqs. (14)–(17) and the LP form of (8)–(13))
    written out with Hamming neighbours, solved by HiGHS through scipy."""
    N = prior.n_inputs
    digits = np.array(np.unravel_index(np.arange(N), (prior.m,) * prior.n)).T
    hamming = (digits[:, None, :] != digits[None, :, :]).sum(-1)
    p = prior.probs
    a, b = np.nonzero(hamming == 1)
    rows, cols, vals = [], [], []
    for u in range(N):
        k = np.arange(a.size) + u * a.size
        wa = p[a] if scaled else np.ones(a.size)
        wb = np.exp(eps) * (p[b] if scaled else np.ones(b.size))
        rows += [k, k]
        cols += [a * N + u, b * N + u]
        vals += [wa, -wb]
    A = sp.csr_matrix(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
        shape=(a.size * N, N * N),
    )
    res = optimize.linprog(
        (p[:, None] * hamming).ravel(),
        A_ub=A,
        b_ub=np.zeros(A.shape[0]),
        A_eq=sp.kron(sp.eye(N), np.ones((1, N))),
        b_eq=np.ones(N),
        bounds=(0, None),
        method="highs-ds",
        options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10},
    )
    assert res.status == 0
    return float(res.fun)


@pytest.mark.parametrize("notion, eps", [("dp", 0.3), ("dp", 1.0), ("identifiability", 4.0)])
@pytest.mark.parametrize("m, n", [(2, 3), (2, 4), (3, 2)])
def test_database_answers_match_an_independent_lp(notion, eps, m, n):
    rng = np.random.default_rng(m * 10 + n)
    probs = rng.dirichlet(np.ones(m**n)) + 0.02
    prior = po.DatabasePrior(m=m, n=n, probs=probs / probs.sum())
    ref = _database_dp_reference(prior, eps, scaled=notion == "identifiability")
    res = po.design(prior, "hamming", notion, epsilon=eps, solver="block-ipm")
    assert res.status == "optimal" and res.certificate.certified
    assert res.distortion == pytest.approx(ref, rel=1e-6)
    assert res.certificate.lower_bound <= ref + 1e-9


def test_metric_privacy_matches_the_sparse_lp():
    rng = np.random.default_rng(7)
    points = rng.uniform(0, 2, size=(6, 2)).tolist()
    p = rng.dirichlet(np.ones(6))
    options = {"metric": {"points": points, "norm": "euclidean"}}
    res = po.design(p, "hamming", "metric_dp", epsilon=1.2, solver="block-ipm", **options)
    ref = po.design(
        p, "hamming", "metric_dp", epsilon=1.2, solver="sparse-highs-simplex", **options
    )
    assert res.status == "optimal" and res.certificate.certified
    assert res.distortion == pytest.approx(ref.distortion, rel=1e-7)


def test_budget_mode_goes_through_the_line_search():
    rng = np.random.default_rng(3)
    p = rng.dirichlet(np.ones(6))
    d = rng.uniform(0, 2, size=(6, 6))
    res = po.design(p, d, "pml", max_distortion=0.5, solver="block-ipm")
    ref = po.design(p, d, "pml", max_distortion=0.5, solver="CLARABEL")
    assert res.status == "optimal"
    assert res.epsilon == pytest.approx(ref.epsilon, abs=1e-6)


# --- limits and choice ---------------------------------------------------------------------


def test_an_expired_deadline_stops_the_run():
    request = prepare_request(np.full(20, 0.05), "absolute", "ldp", epsilon=1.0)
    lp, _ = block_program(request, 1.0)
    deadline = Deadline(0.0)
    sol = solve_block_lp(lp, deadline=deadline)
    assert sol.status == "time_limit" and sol.iterations == 0


class _RunsOutAfter(Deadline):
    """A deadline that is never expired but leaves almost no time once ``calls`` questions
    about the time left were answered: the next iteration cannot finish before it."""

    def __init__(self, calls: int):
        super().__init__(3600.0)
        self.calls = calls

    def remaining(self) -> float:
        self.calls -= 1
        return 3600.0 if self.calls > 0 else 1e-12


#: PD-DP on 2⁵ databases with a Dirichlet prior, where 12 iterations of ``block-ipm`` reach
#: an iterate that meets the rows but not the optimum.
TIME_LIMITED_PRIOR = po.DatabasePrior(2, 5, probs=np.random.default_rng(4).dirichlet(np.ones(32)))


def stop_block_ipm_after(monkeypatch, iterations: int = 12) -> None:
    """Make every ``block-ipm`` run stop as a time limit would, before iteration
    ``iterations`` (no clock involved: the test does not depend on the machine's speed)."""
    from privopt.methods.block_ipm import interior_point

    real = interior_point.solve_block_lp
    # one budget of iterations per run: a pruned run (pruning.py) passes its deadline to its
    # probe and to its restricted run, both on the run's kernel
    budgets: dict[tuple, tuple] = {}

    def stopped_early(lp, **options):
        key = (id(options.get("deadline")), id(lp.kernel))
        if key not in budgets:
            budgets[key] = (options.get("deadline"), lp.kernel, _RunsOutAfter(iterations))
        options["deadline"] = budgets[key][2]
        return real(lp, **options)

    monkeypatch.setattr(interior_point, "solve_block_lp", stopped_early)


def test_an_iteration_that_cannot_end_in_time_is_not_started():
    prior = TIME_LIMITED_PRIOR
    lp, _ = block_program(prepare_request(prior, "hamming", "dp", epsilon=1.0), 1.0)
    full = solve_block_lp(lp)
    sol = solve_block_lp(lp, deadline=_RunsOutAfter(12))
    assert full.status == "optimal" and full.iterations > 12
    assert sol.status == "time_limit" and sol.iterations == 11
    assert sol.stop == StopReason.TIME_LIMIT
    # by then an iterate met the rows: it is handed over with its (uncertified) bound
    assert sol.V is not None and sol.primal_residual <= 1e-9
    assert sol.bound <= full.objective + 1e-9 and sol.objective >= full.objective - 1e-9
    assert sol.gap > 1e-6


def test_a_time_limited_design_returns_the_best_feasible_iterate(monkeypatch):
    """``block-ipm`` stopped by the time limit hands its best iterate to the driver, which
    verifies it and returns it (status ``time_limit``, the certificate's gap stated) instead
    of nothing."""
    prior = TIME_LIMITED_PRIOR
    optimum = po.design(prior, "hamming", "dp", epsilon=1.0, solver="block-ipm").distortion
    stop_block_ipm_after(monkeypatch)
    result = po.design(prior, "hamming", "dp", epsilon=1.0, solver="block-ipm", time_limit=600)
    assert result.status == "time_limit"
    assert result.message.endswith("(the mechanism is the best feasible one found)")
    assert result.mechanism is not None and result.solver.name == "block-ipm"
    assert result.leakage["dp"] <= 1.0 + 1e-9  # re-measured by privopt
    report = result.certificate
    assert not report.certified and 1e-6 < report.relative_gap < 1.0
    assert report.lower_bound <= optimum + 1e-9 <= result.distortion + 2e-9
    # a method stopped by a limit of its own when the run has none: said so, no crash
    untimed = po.design(prior, "hamming", "dp", epsilon=1.0, solver="block-ipm")
    assert untimed.status == "time_limit" and untimed.mechanism is not None
    assert untimed.message == (
        "a method's time limit reached (the mechanism is the best feasible one found)"
    )


@pytest.mark.parametrize("slack, answered", [(0.0, False), (0.01, True), (0.5, True)])
def test_a_time_limited_budget_request_returns_only_a_mechanism_within_the_budget(
    monkeypatch, slack, answered
):
    """In budget mode the points are levels of a line search: a level whose run was stopped
    by the time limit may carry a feasible mechanism, but it answers the request only if its
    distortion meets the budget. A search cut short found an upper end of the bracket, not
    the least level, so the closed forms of the least level (Wang et al.'s
    ``ε*(D) ≤ h⁻¹(D)``, 0.64 here against the 1.0 reached) are not held against it: with a
    budget 0.5 above D*(1) that raised a VerificationError."""
    prior = TIME_LIMITED_PRIOR
    budget = po.design(prior, "hamming", "dp", epsilon=1.0, solver="block-ipm").distortion + slack
    stop_block_ipm_after(monkeypatch)
    result = po.design(prior, "hamming", "dp", max_distortion=budget, solver="block-ipm")
    assert result.status == "time_limit"
    assert (result.mechanism is not None) == answered
    if answered:
        assert result.verified and result.distortion <= budget + 1e-9
        assert result.leakage["dp"] <= result.epsilon + 1e-9
        assert result.message.endswith("(the mechanism is the best feasible one found)")
    else:
        assert not result.verified and result.message == "a method's time limit reached"


def test_every_program_is_registered_for_a_notion():
    assert set(PROGRAMS) <= set(po.notions.notion_names())


@pytest.mark.parametrize("m, n", [(5, 2), (2, 5), (3, 3), (2, 6), (2, 7), (3, 5), (2, 8), (2, 9)])
def test_chosen_automatically_for_arbitrary_database_priors(m, n):
    rng = np.random.default_rng(0)
    prior = po.DatabasePrior(m=m, n=n, probs=rng.dirichlet(np.ones(m**n)))
    for notion in ("dp", "identifiability"):
        request = prepare_request(prior, "hamming", notion, epsilon=1.0)
        chain = [method.name for method in choose_methods(request)]
        # identifiability: the closed form of Wang et al. first (it applies from ε̃_X on)
        first = chain[1] if chain[0] == "wang-identifiability" else chain[0]
        assert first == "block-ipm" and chain[-1] != "block-ipm"  # with a fallback after it


def test_automatic_range_of_the_pair_notions():
    rng = np.random.default_rng(1)
    big = po.DatabasePrior(m=3, n=6, probs=rng.dirichlet(np.ones(729)))
    request = prepare_request(big, "hamming", "dp", epsilon=1.0)
    # 729 inputs: beyond block-ipm's measured range and beyond every measured default; the
    # request is not refused, and what is tried fits the memory bound (block-ipm as the
    # rescue of the pair notions: 3.65 GB measured, the sparse LP 2.6 GB)
    from privopt.methods import METHODS
    from privopt.solve.selection import why_not

    assert not METHODS["block-ipm"].auto(request)
    chain = choose_methods(request)
    assert chain and all(why_not(m, request) is None for m in chain)
    # below 25 inputs the sparse LP through HiGHS is faster (16 inputs: 14–15 ms against
    # 20–22 ms); sweeps follow the same range
    small = po.DatabasePrior(m=2, n=4, probs=rng.dirichlet(np.ones(16)))
    request = prepare_request(small, "hamming", "dp", epsilon=1.0)
    assert choose_methods(request)[0].name != "block-ipm"
    assert choose_methods(request, sweep=True)[0].name != "block-ipm"
    medium = po.DatabasePrior(m=2, n=6, probs=rng.dirichlet(np.ones(64)))
    request = prepare_request(medium, "hamming", "dp", epsilon=1.0)
    assert choose_methods(request, sweep=True)[0].name == "block-ipm"


@pytest.mark.parametrize("k", [12, 80])
def test_dp_over_all_pairs_is_written_as_ldp(k):
    """dp with every pair of inputs neighbours has LDP's constraints: ``block-ipm`` writes it
    with LDP's arrow columns (2k rows per column, not k(k − 1)), picks it by the
    single-alphabet rules, and reaches the LDP optimum (k = 12: also the independent LP
    written pair by pair). Before, dp over all pairs on 200 symbols took 38 s this way."""
    from privopt.methods.block_ipm.programs import program_name
    from privopt.resources import dense_pair_columns, estimate_bytes

    rng = np.random.default_rng(k)
    p = rng.dirichlet(np.ones(k))
    d = np.abs(np.subtract.outer(np.arange(k), np.arange(k))).astype(float)
    request = prepare_request(p, d, "dp", epsilon=0.9)
    assert request.neighbors.kind == "all"
    assert program_name(request) == "ldp" and not dense_pair_columns(request)
    lp, _ = block_program(request, 0.9)
    assert isinstance(lp.kernel, ArrowColumns) and lp.kernel.n_rows == 2 * k
    hamming = prepare_request(
        po.DatabasePrior(2, 4, probs=np.full(16, 1 / 16)), "hamming", "dp", epsilon=0.9
    )
    assert program_name(hamming) == "dp" and dense_pair_columns(hamming)
    # the memory model no longer counts a dense |X| × |X| matrix per column
    ldp_request = prepare_request(p, d, "ldp", epsilon=0.9)
    assert estimate_bytes(request, "columns") == estimate_bytes(ldp_request, "columns")
    result = po.design(p, d, "dp", epsilon=0.9, solver="block-ipm")
    ldp = po.design(p, d, "ldp", epsilon=0.9)
    assert result.status == "optimal"
    assert result.distortion == pytest.approx(ldp.distortion, rel=1e-7)
    if k == 12:
        assert result.distortion == pytest.approx(reference_lp("dp", p, d, 0.9), rel=1e-7)
    else:
        assert choose_methods(request)[0].name == "block-ipm"
        assert po.design(p, d, "dp", epsilon=0.9).solver.name == "block-ipm"


@pytest.mark.parametrize("k, alpha", [(12, 1.0), (40, 1.0), (40, 5.0)])
def test_identifiability_over_all_pairs_is_written_with_one_auxiliary(k, alpha):
    """Identifiability with every pair of inputs neighbours: ``lo_u ≤ p(x) W[x,u] ≤ r lo_u``
    (arrow columns, 2k rows) reaches the optimum of the LP written pair by pair (the dense
    reference at k = 12, an independent sparse LP at k = 40 with priors whose ratio
    ``max p / min p`` is 7 and 211), and is picked from 60 symbols on (before: k = 100 4.5 s
    with HiGHS through cvxpy, k = 200 over 120 s; now 0.2 s, 2 s). With a ratio of 1e6
    HiGHS itself called the LP infeasible (row sums of 1e-7), so none is tested here."""
    from privopt.methods.block_ipm.programs import program_name
    from tests.methods.test_fuzz_block_ipm import _disagreements, _pair_optimum

    rng = np.random.default_rng(k + int(10 * alpha))
    p = rng.dirichlet(np.full(k, alpha))
    d = np.abs(np.subtract.outer(np.arange(k), np.arange(k))).astype(float)
    eps = float(np.log(p.max() / p.min())) + 0.4  # the least level is ln(max p / min p)
    request = prepare_request(p, d, "identifiability", epsilon=eps)
    assert program_name(request) == "identifiability_all_pairs"
    lp, _ = block_program(request, eps)
    assert isinstance(lp.kernel, ArrowColumns) and lp.kernel.n_rows == 2 * k
    result = po.design(p, d, "identifiability", epsilon=eps, solver="block-ipm")
    if k == 12:
        optimum = reference_lp("identifiability", p, d, eps)
    else:
        # independent: HiGHS on the pairs written out, in the posterior-scaled variables
        # q = p∘W (rows q[a,u] ≤ r q[b,u], row sums p), whose coefficients stay O(r)
        left, right = np.nonzero(~np.eye(k, dtype=bool))
        optimum = _pair_optimum(
            np.ones(k), d, left, right, np.ones(k), np.full(left.size, np.exp(eps)), p
        )
    assert not _disagreements(result, optimum, f"k={k}, alpha={alpha}", float(d.max()))
    q = np.random.default_rng(60).dirichlet(np.full(60, 5.0))
    grid = np.arange(60)
    chosen = prepare_request(
        q,
        np.abs(np.subtract.outer(grid, grid)).astype(float),
        "identifiability",
        epsilon=float(np.log(q.max() / q.min())) + 0.4,
    )
    assert choose_methods(chosen)[0].name == "block-ipm"


def test_an_all_pairs_run_that_misses_the_level_is_rewritten_pair_by_pair():
    """The one-auxiliary form holds its rows to 1e-9 in absolute terms; with a support from
    1e-8 to 0.97 at ε = 20 the re-measured identifiability level was exceeded, so the method
    solves the rows written pair by pair and returns that (certified) mechanism."""
    prior = [0.9669926534350106, 0.0, 0.033006815705221335, 5.208702865887342e-07, 1e-8]
    d = np.abs(np.subtract.outer(np.arange(5), np.arange(5))).astype(float)
    result = po.design(prior, d, "identifiability", epsilon=20.0, solver="block-ipm")
    assert result.status == "optimal" and result.certificate.certified
    assert result.solver.details["kernel"] == "DenseColumns"
    assert result.solver.details["retried_pair_by_pair"]
    assert result.leakage["identifiability"] <= 20.0 + 1e-9 * 21.0
    usual = np.random.default_rng(3).uniform(0.2, 1.0, 5)
    result = po.design(usual / usual.sum(), d, "identifiability", epsilon=2.0, solver="block-ipm")
    assert result.status == "optimal" and result.solver.details["kernel"] == "ArrowColumns"
    # a run that stalls within the driver's gap (1.2e-7 here) is certified as it is, not
    # solved again pair by pair (that took 2.1 s instead of 0.13 s)
    k = 60
    spread = np.random.default_rng(k).dirichlet(np.full(k, 0.3))
    line = np.abs(np.subtract.outer(np.arange(k), np.arange(k))).astype(float)
    eps = float(np.log(spread.max() / spread.min())) + 0.3
    result = po.design(spread, line, "identifiability", epsilon=eps, solver="block-ipm")
    assert result.status == "optimal" and result.solver.details["kernel"] == "ArrowColumns"
    assert not result.solver.details["retried_pair_by_pair"]


def test_chosen_automatically_for_large_single_alphabets():
    rng = np.random.default_rng(0)
    single = prepare_request(rng.dirichlet(np.ones(80)), "absolute", "ldp", epsilon=1.0)
    assert choose_methods(single)[0].name == "block-ipm"
    swept = prepare_request(rng.dirichlet(np.ones(30)), "absolute", "pml", epsilon=1.0)
    assert choose_methods(swept, sweep=True)[0].name != "block-ipm"


@pytest.mark.parametrize(
    "notion, k, chosen",
    [
        ("pml", 150, False),  # the warm simplex up to 200 × 200
        ("pml", 250, True),
        ("information_privacy", 60, False),  # the warm simplex up to 70 × 70
        ("information_privacy", 100, True),
        ("ldp", 100, True),
        ("maximal_leakage", 100, True),
    ],
)
def test_sweeps_beyond_the_warm_simplex_go_to_block_ipm(notion, k, chosen):
    """Sweeps and line searches of the single-alphabet notions beyond the warm simplex's
    range are solved by ``block-ipm``, not by the cvxpy program (information privacy on 100
    symbols: a budget point took over a minute with Clarabel)."""
    request = prepare_request(np.full(k, 1.0 / k), "absolute", notion, epsilon=1.0)
    assert (choose_methods(request, sweep=True)[0].name == "block-ipm") is chosen


def test_a_budget_point_of_information_privacy_on_100_symbols_is_solved_by_block_ipm():
    """The line search of a budget request (Dirichlet prior, 100 symbols) runs every point
    through ``block-ipm`` and ends certified."""
    k = 100
    p = np.random.default_rng(1).dirichlet(np.ones(k))
    d = np.abs(np.subtract.outer(np.arange(k), np.arange(k))).astype(float)
    level = po.design(p, d, "information_privacy", epsilon=1.0)
    result = po.design(p, d, "information_privacy", max_distortion=1.5 * level.distortion)
    assert result.status == "optimal" and result.solver.tried == ["block-ipm"]
    assert result.leakage["information_privacy"] < 1.0


@pytest.mark.parametrize(
    "objective, floor, near",
    [
        (0.32, 0.19, False),  # 7.8e-7 absolute: 1.5e-6 of the driver's 0.51 (a 10 × 10 map)
        (0.32, 2.0, True),  # within half of 1e-6 · 2.32
        (1e-9, 2.0, True),  # a tiny objective is judged on the floor, as by the driver
    ],
)
def test_a_stall_ends_the_run_only_within_the_drivers_gap(objective, floor, near):
    """``near_certified`` measures the gap as the solve driver does, against ``|objective|``
    plus the driver's floor, not ``1 + |objective|``: on a 10 × 10 map the run stopped at a
    gap of 5.9e-7 by the latter, which the driver measured as 1.5e-6 and handed on to a
    method that ran for minutes."""
    run = BlockSolution("stalled", None, objective, objective - 7.8e-7, 50, 0.0, 1.0)
    assert run.gap < 1e-6
    assert run.near_certified(floor) is near


@pytest.mark.slow
def test_a_map_whose_objective_is_below_one_is_certified_by_block_ipm():
    """The 10 × 10 exact map of the benchmarks (objective 0.32 on the driver's scale, 14 s):
    the run went on to certify instead of stopping at 5.9e-7 by ``1 + |objective|``, which
    the driver measured as 1.5e-6 and handed to sparse-clarabel (12 minutes)."""
    grid = po.LocationGrid(10, 10, counts=np.random.default_rng(10).integers(1, 20, (10, 10)))
    result = po.design(
        grid.prior(), grid.distortion(), "metric_dp", epsilon=0.5, metric=grid.metric()
    )
    assert result.solver.name == "block-ipm"
    assert result.status == "optimal" and result.certificate.certified


@pytest.mark.parametrize("through_blas", [True, False])
def test_multiply_add_updates_strided_views_in_place(monkeypatch, through_blas):
    """``C ← alpha·A B + beta·C`` on views whose rows lie far apart in larger arrays (as the
    band kernel's block rows do), through BLAS and through numpy's fallback alike."""
    if not through_blas:
        monkeypatch.setattr(dense_inverse, "_GEMM", None)
    rng = np.random.default_rng(3)
    big_a, big_b = rng.standard_normal((7, 11)), rng.standard_normal((9, 40))
    big_c = rng.standard_normal((8, 50))
    A, B, C = big_a[1:6, 2:6], big_b[2:6, 5:36], big_c[1:6, 3:34]
    before = big_c.copy()
    want = 0.5 * before[1:6, 3:34] - 2.0 * (A @ B)
    dense_inverse.multiply_add(A, B, C, -2.0, 0.5)
    assert np.allclose(big_c[1:6, 3:34], want, rtol=1e-13, atol=1e-13)
    outside = np.ones(big_c.shape, dtype=bool)
    outside[1:6, 3:34] = False
    assert np.array_equal(big_c[outside], before[outside])  # nothing else written
    dense_inverse.multiply_add(A, B, C, 1.0, 0.0)  # beta = 0 ignores what C held
    assert np.allclose(C, A @ B, rtol=1e-13, atol=1e-13)
    transposed = np.asfortranarray(rng.standard_normal((5, 4)))  # not a row-major view
    dense_inverse.multiply_add(transposed, B, C, 1.0, 0.0)
    assert np.allclose(C, transposed @ B, rtol=1e-13, atol=1e-13)
