"""Output pruning in block-ipm (privopt.methods.block_ipm.pruning): the answer over every
column, its certificate a bound for the whole LP, checked against an independent LP."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from threadpoolctl import threadpool_limits

import privopt as po
from privopt.methods.block_ipm import interior_point, pruning
from privopt.methods.block_ipm.interior_point import StopReason, solve_block_lp
from privopt.methods.block_ipm.programs import block_program
from privopt.request import prepare_request
from tests.crosscheck.location_lp import all_pairs_metric_lp


def _map_lp(side: tuple[int, int], seed: int, eps: float):
    rng = np.random.default_rng(seed)
    grid = po.LocationGrid(*side, counts=rng.integers(1, 20, side))
    prior, loss, metric = grid.prior(), grid.distortion(), grid.metric()
    request = prepare_request(prior, loss, "metric_dp", epsilon=eps, metric=metric)
    lp, _ = block_program(request, eps)
    return lp, prior.probs, loss.matrix, metric.matrix


def _independent_optimum(p, d, metric, eps) -> float:
    """The all-pairs LP ``W[a,u] ≤ e^{ε d(a,b)} W[b,u]`` with HiGHS through scipy."""
    return all_pairs_metric_lp(p, metric, d, eps)[0]


def _counted_pruned_run(monkeypatch, lp, keep_fraction: float | None = None):
    """``solve_pruned`` (under ``KEEP_FRACTION = keep_fraction`` when given), with the column
    count of every interior-point run it makes (probe, restricted runs, whole LP) in order."""
    if keep_fraction is not None:
        monkeypatch.setattr(pruning, "KEEP_FRACTION", keep_fraction)
    calls = []
    original = interior_point.solve_block_lp

    def counted(sub, **options):
        calls.append(sub.cost.shape[0])
        return original(sub, **options)

    monkeypatch.setattr(interior_point, "solve_block_lp", counted)
    with threadpool_limits(1, user_api="blas"):
        run = pruning.solve_pruned(lp, tol=1e-9)
    return run, calls


def _meets_rows(V: np.ndarray, metric: np.ndarray, eps: float) -> bool:
    """Every column ε·d-private (``V`` is ``U × k``) and every row summing to one."""
    W = V.T
    ratios = np.exp(eps * metric)
    worst = np.max(W[:, None, :] - ratios[:, :, None] * W[None, :, :])
    return worst <= 1e-9 and np.allclose(W.sum(axis=1), 1.0, atol=1e-8)


@settings(max_examples=8, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    side=st.sampled_from([(4, 4), (4, 5), (5, 5)]),
    eps=st.sampled_from([0.3, 0.7, 1.5]),
)
def test_pruned_runs_find_the_optimum_and_a_bound_below_it(seed, side, eps):
    lp, p, d, metric = _map_lp(side, seed, eps)
    with threadpool_limits(1, user_api="blas"):
        run = pruning.solve_pruned(lp, tol=1e-9)
    optimum = _independent_optimum(p, d, metric, eps)
    assert run.V is not None and run.V.shape == lp.cost.shape
    assert _meets_rows(run.V, metric, eps)
    assert run.bound <= optimum + 1e-9 * (1 + optimum)
    assert run.objective >= optimum - 1e-9 * (1 + optimum)
    assert run.objective - run.bound <= 1e-6 * (1 + optimum)


def test_an_8_by_8_map_is_solved_on_the_outputs_its_optimum_uses():
    lp, _, _, metric = _map_lp((8, 8), 8, 0.5)
    calls = []

    def counted(sub, **options):
        calls.append(sub.cost.shape[0])
        return solve_block_lp(sub, **options)

    with threadpool_limits(1, user_api="blas"):
        whole = solve_block_lp(lp, tol=1e-9)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(interior_point, "solve_block_lp", counted)
            run = pruning.solve_pruned(lp, tol=1e-9)
    assert calls[0] == 64 and len(calls) == 2 and calls[1] < 48  # probe, then restricted
    assert run.status == "optimal" and run.polished
    assert _meets_rows(run.V, metric, 0.5)
    assert abs(run.objective - whole.objective) <= 1e-8 * whole.objective
    assert run.bound <= whole.objective + 1e-12
    # the dropped columns carry nothing, and the row duals cover every column
    assert run.row_duals.shape[0] == 64


def test_a_needed_output_dropped_by_the_probe_is_caught_by_the_pricing(monkeypatch):
    """With a keep rule that keeps only the heaviest column, the restricted LP's optimum is
    far above the whole LP's: the pricing of the dropped columns leaves a gap, never a wrong
    certificate; the outputs it finds needed are added for a second restricted run, and the
    whole LP is solved again if that one is not certified either."""
    lp, p, d, metric = _map_lp((4, 5), 3, 0.7)
    run, calls = _counted_pruned_run(monkeypatch, lp, 1.0)
    optimum = _independent_optimum(p, d, metric, 0.7)
    assert calls[0] == 20 and calls[1] < 20 and len(calls) >= 3  # more runs after the pricing
    assert calls[2] > calls[1]  # the needed outputs added (or the whole LP)
    assert run.status == "optimal"
    assert abs(run.objective - optimum) <= 1e-7 * (1 + optimum)
    assert run.bound <= optimum + 1e-9


def test_a_probe_stops_at_its_gap_and_keeps_its_iterate():
    lp, *_ = _map_lp((4, 4), 1, 0.5)
    probe = solve_block_lp(lp, tol=1e-9, stop_gap=1e-2)
    assert probe.stop is StopReason.PROBE_GAP
    assert probe.objective - probe.bound <= 1e-2 * probe.objective and probe.point is not None
    assert probe.point.V.shape == lp.cost.shape


@pytest.mark.parametrize("columns", [8, pruning.MIN_COLUMNS - 1])
def test_few_columns_are_not_pruned(columns):
    lp, *_ = _map_lp((8, 8), 2, 0.5)
    small = type(lp)(**{**lp.__dict__, "cost": lp.cost[:columns]})
    assert not pruning.prunable(small)
    assert pruning.prunable(lp)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_outputs_the_pricing_finds_needed_are_added_for_a_second_restricted_run(monkeypatch, seed):
    """A keep rule that drops some used outputs (30 % of the heaviest mass): the pricing names
    the outputs that lower the bound, the second restricted run adds them (fewer columns than
    the whole LP), and the answer is the independent LP's optimum."""
    lp, p, d, metric = _map_lp((5, 5), seed, 0.7)
    run, calls = _counted_pruned_run(monkeypatch, lp, 0.3)
    optimum = _independent_optimum(p, d, metric, 0.7)
    assert calls[0] == 25 and calls[1] < calls[2] < 25
    assert run.status == "optimal" and run.polished
    assert abs(run.objective - optimum) <= 1e-7 * (1 + optimum)
    assert run.bound <= optimum + 1e-9


def test_the_restricted_start_keeps_the_probe_arrays_memory_order():
    """The kernel's products over the privacy rows are column-major; the restricted start's
    slacks and duals must be too (a row-major copy among them made every elementwise pass
    stride across memory), with the same values as the probe's rows, the duals rescaled."""
    lp, *_ = _map_lp((7, 7), 4, 0.5)
    with threadpool_limits(1, user_api="blas"):
        probe = solve_block_lp(lp, tol=1e-9, stop_gap=1e-2)
    point = probe.point
    kept = np.array([0, 3, 4, 10, 30])
    start = pruning._restricted(point, kept, 2.0, 0.5)
    for name in ("V", "s", "z", "nu"):
        before, after = getattr(point, name), getattr(start, name)
        assert after.flags.f_contiguous == before.flags.f_contiguous
        assert after.flags.c_contiguous == before.flags.c_contiguous
        assert not np.shares_memory(before, after)
    assert point.s.flags.f_contiguous  # the products' order (G Vᵀ)ᵀ
    np.testing.assert_array_equal(start.s, point.s[kept])
    np.testing.assert_array_equal(start.V, point.V[kept])
    np.testing.assert_allclose(start.z, 4.0 * point.z[kept], rtol=1e-15)
    np.testing.assert_allclose(start.nu, 4.0 * point.nu[kept], rtol=1e-15)
    np.testing.assert_allclose(start.y, 4.0 * point.y, rtol=1e-15)


def test_a_probe_that_keeps_four_fifths_of_the_outputs_is_pruned(monkeypatch):
    """Pruning goes ahead up to WORTH_PRUNING of the columns kept (2⁸ databases keep 204 of
    256 at the probe): with a keep rule that keeps the 40 heaviest of 49 outputs, the rest
    runs on those 40, and the answer over every column is the independent LP's optimum with
    a bound below it."""
    lp, p, d, metric = _map_lp((7, 7), 5, 0.5)
    assert 40 <= pruning.WORTH_PRUNING * 49
    monkeypatch.setattr(pruning, "_kept", lambda mass: np.sort(np.argsort(-mass)[:40]))
    run, calls = _counted_pruned_run(monkeypatch, lp)
    optimum = _independent_optimum(p, d, metric, 0.5)
    assert calls[:2] == [49, 40]
    assert _meets_rows(run.V, metric, 0.5)
    assert run.bound <= optimum + 1e-9 * (1 + optimum)
    assert run.objective - run.bound <= 1e-6 * (1 + optimum)
    assert abs(run.objective - optimum) <= 1e-7 * (1 + optimum)
