"""The exact symmetry reduction of the sparse LP (colour refinement, equitable partitions).

Every reduced optimum is compared with the full LP solved without the reduction (an
independent HiGHS run, and Clarabel through the cvxpy program), and with explicit feasible
mechanisms; the lifted duals must certify the full LP on their own.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.special import betaln

import privopt as po
from privopt.errors import InputError
from privopt.methods import METHODS
from privopt.methods.sparse_lp.equitable import (
    EquitablePartition,
    equitable_partition,
    quantise,
    symbol_classes,
)
from privopt.methods.sparse_lp.highs import run_highs
from privopt.methods.sparse_lp.method import full_program
from privopt.request import prepare_request
from privopt.solve.selection import choose_methods, why_not

LINEAR = ["pml", "ldp", "information_privacy", "maximal_leakage", "identifiability", "dp"]


def _line(k: int) -> np.ndarray:
    return np.abs(np.subtract.outer(np.arange(k), np.arange(k))).astype(float)


def _exchangeable(n: int) -> po.DatabasePrior:
    """A beta-binomial prior on {0,1}ⁿ: exchangeable rows, not independent ones."""
    weight = np.array([bin(i).count("1") for i in range(2**n)])
    probs = np.exp(betaln(2 + weight, 5 + n - weight))
    return po.DatabasePrior(2, n, probs=probs / probs.sum())


def _full_and_reduced(prior, distortion, notion, eps, **kw):
    request = prepare_request(prior, distortion, notion, epsilon=eps, **kw)
    lp, _ = full_program(request, eps)
    partition = equitable_partition(lp)
    return lp, partition


@pytest.mark.parametrize("notion", LINEAR)
def test_reduced_lp_has_the_full_optimum_and_lifted_duals_certify_it(notion):
    """A prior symmetric under the reflection x ↦ k − 1 − x with |x − u|: the reduction
    keeps the optimum, the lifted point is feasible, and the full LP's Lagrangian bound at the
    lifted duals equals the reduced LP's bound."""
    k = 9
    probs = np.array([1, 3, 2, 5, 4, 5, 2, 3, 1], dtype=float)
    kw = {"neighbors": "all"} if notion in ("dp", "identifiability") else {}
    eps = 2.0 if notion == "identifiability" else 0.6  # feasible from ln(5/1)
    lp, partition = _full_and_reduced(po.Prior(probs / probs.sum()), _line(k), notion, eps, **kw)
    assert partition is not None and partition.check(lp)
    assert partition.n_col_classes <= lp.A.shape[1] // 2 + k
    reduced = partition.reduce(lp)
    full_run = run_highs(lp, "simplex", 1e-10)
    reduced_run = run_highs(reduced, "simplex", 1e-10)
    assert full_run.status == reduced_run.status == "optimal"
    assert reduced_run.objective == pytest.approx(full_run.objective, abs=1e-9)
    x = partition.lift(reduced_run.x)
    assert lp.residual(x) <= 1e-9
    assert lp.cost @ x == pytest.approx(full_run.objective, abs=1e-9)
    bound = lp.lower_bound(partition.lift_duals(reduced_run.row_dual))
    assert bound == pytest.approx(reduced_run.dual_objective, abs=1e-9)
    assert bound <= full_run.objective + 1e-9
    assert full_run.objective - bound <= 1e-8


def test_exchangeable_database_prior_shrinks_to_the_joint_types():
    """PD-DP with a beta-binomial prior on {0,1}⁶: the mechanism entries fall into the 84
    joint types (the orbits of row permutations, C(6 + 3, 3)), found without the group."""
    lp, partition = _full_and_reduced(_exchangeable(6), "hamming", "dp", 1.0)
    assert partition is not None
    assert partition.n_col_classes == 84  # 4096 entries, no auxiliaries
    reduced = partition.reduce(lp)
    reduced_run = run_highs(reduced, "simplex", 1e-10)
    full_run = run_highs(lp, "ipm", 1e-10, crossover=True)
    assert reduced_run.objective == pytest.approx(full_run.objective, abs=1e-8)


def test_an_infeasible_lp_stays_infeasible_when_reduced():
    probs = np.array([1, 3, 2, 5, 4, 5, 2, 3, 1], dtype=float)
    lp, partition = _full_and_reduced(
        po.Prior(probs / probs.sum()), _line(9), "identifiability", 0.6, neighbors="all"
    )
    assert partition is not None
    assert run_highs(lp, "simplex", 1e-10).status == "infeasible"
    assert run_highs(partition.reduce(lp), "simplex", 1e-10).status == "infeasible"


def test_check_rejects_a_partition_that_is_not_equitable():
    lp, partition = _full_and_reduced(po.Prior([0.3, 0.2, 0.2, 0.3]), _line(4), "pml", 0.5)
    assert partition is not None and partition.check(lp)
    merged_columns = partition.col_class.copy()
    merged_columns[merged_columns == 1] = 0  # two classes with different costs
    assert not EquitablePartition(merged_columns, partition.row_class).check(lp)
    assert EquitablePartition(merged_columns, partition.row_class).reduce(lp) is None
    merged_rows = partition.row_class.copy()
    merged_rows[merged_rows == merged_rows.max()] = 0
    assert not EquitablePartition(partition.col_class, merged_rows).check(lp)


def test_no_symmetry_means_no_reduction():
    rng = np.random.default_rng(5)
    probs = rng.dirichlet(np.ones(6))
    lp, partition = _full_and_reduced(po.Prior(probs), rng.uniform(0, 1, (6, 6)), "pml", 0.5)
    assert partition is None
    inputs, outputs = symbol_classes(probs, rng.uniform(0, 1, (6, 6)))
    assert inputs.max() == 5 and outputs.max() == 5


def test_quantise_separates_values_beyond_twelve_digits_and_keeps_infinities():
    keys = quantise(np.array([1.0, 1.0 + 1e-14, 1.0 + 1e-9, -1.0, np.inf, -np.inf, 0.0]))
    assert keys[0] == keys[1]
    assert len(set(keys[[0, 2, 3, 4, 5, 6]].tolist())) == 6


@st.composite
def _symmetric_instances(draw):
    """A random prior and distortion invariant under a random permutation σ of the symbols
    (applied to inputs and outputs together): every value is constant on the orbits of σ
    (on symbols) and of σ × σ (on pairs)."""
    k = draw(st.integers(4, 8))
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    sigma = rng.permutation(k)
    if np.array_equal(sigma, np.arange(k)):  # the identity has no symmetry to find
        sigma[[0, 1]] = sigma[[1, 0]]
    orbit = np.arange(k)
    for _ in range(k):  # orbit id = smallest symbol reachable by σ
        orbit = np.minimum(orbit, orbit[sigma])
    weights = rng.uniform(0.2, 1.0, k)[orbit]
    pair_orbit = np.arange(k * k).reshape(k, k)
    while True:  # σ × σ has the order of σ, which may exceed k
        smaller = np.minimum(pair_orbit, pair_orbit[np.ix_(sigma, sigma)])
        if np.array_equal(smaller, pair_orbit):
            break
        pair_orbit = smaller
    values = rng.integers(1, 5, k * k).astype(float)
    distortion = values[pair_orbit]
    np.fill_diagonal(distortion, 0.0)
    notion = draw(st.sampled_from(["pml", "ldp", "information_privacy", "maximal_leakage"]))
    eps = draw(st.sampled_from([0.2, 0.7, 1.5]))
    return weights / weights.sum(), distortion, notion, eps


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
@given(_symmetric_instances())
def test_symmetry_reduced_design_is_optimal_against_independent_programs(instance):
    """Fuzzing optimality: the reduced design equals Clarabel on the full cvxpy program and
    is no worse than explicit feasible mechanisms (the identity mixed with a constant one,
    and the constant one)."""
    probs, distortion, notion, eps = instance
    ours = po.design(probs, distortion, notion, epsilon=eps, solver="sparse-highs-symmetry")
    reference = po.design(probs, distortion, notion, epsilon=eps, solver="CLARABEL")
    assert ours.status == "optimal" and ours.verified
    tolerance = 2e-6 * (1 + reference.objective)
    assert ours.objective == pytest.approx(reference.objective, abs=tolerance)
    k = probs.size
    constant = np.tile(np.eye(k)[int(np.argmin(probs @ distortion))], (k, 1))
    request = prepare_request(probs, distortion, notion, epsilon=eps)
    for theta in np.linspace(0.0, 1.0, 11):
        mechanism = (1 - theta) * np.eye(k) + theta * constant
        if request.level_of(mechanism) <= eps:
            assert ours.objective <= request.distortion_of(mechanism) + 1e-9


def test_design_picks_the_reduction_for_an_exchangeable_prior_and_certifies_it():
    prior = _exchangeable(5)
    chain = [m.name for m in choose_methods(prepare_request(prior, "hamming", "dp", epsilon=1.0))]
    assert chain[0] == "sparse-highs-symmetry"
    ours = po.design(prior, "hamming", "dp", epsilon=1.0)
    assert ours.solver.name == "sparse-highs-symmetry"
    assert ours.status == "optimal" and ours.certificate.gap <= 1e-9
    details = ours.solver.details
    assert details["symmetry_reduced"] and details["reduced_columns"] < details["lp_columns"] / 10
    reference = po.design(prior, "hamming", "dp", epsilon=1.0, solver="block-ipm")
    assert ours.objective == pytest.approx(reference.objective, abs=1e-7)


def test_uniform_map_geo_indistinguishability_uses_the_square_symmetries():
    grid = po.LocationGrid(5, 5)
    metric = grid.metric()
    ours = po.design(grid.prior(), metric.matrix, "metric_dp", epsilon=0.5, metric=metric)
    assert ours.solver.name == "sparse-highs-symmetry" and ours.status == "optimal"
    reference = po.design(
        grid.prior(), metric.matrix, "metric_dp", epsilon=0.5, metric=metric, solver="sparse-highs"
    )
    assert ours.objective == pytest.approx(reference.objective, abs=1e-8)
    assert ours.solver.details["reduced_columns"] <= 625 // 4


def test_the_method_refuses_instances_without_symmetry_with_a_reason():
    rng = np.random.default_rng(2)
    probs = rng.dirichlet(np.ones(5))
    request = prepare_request(probs, rng.uniform(0, 1, (5, 5)), "pml", epsilon=0.5)
    reason = why_not(METHODS["sparse-highs-symmetry"], request)
    assert reason is not None and "no symmetry" in reason
    with pytest.raises(InputError, match="sparse-highs-symmetry"):
        po.design(
            probs, rng.uniform(0, 1, (5, 5)), "pml", epsilon=0.5, solver="sparse-highs-symmetry"
        )


def test_a_sweep_reuses_the_partition_and_matches_the_unreduced_curve(monkeypatch):
    import privopt.methods.sparse_lp.method as sparse_method

    refinements = []

    def counting(lp, **kw):
        refinements.append(lp.A.shape)
        return equitable_partition(lp, **kw)

    monkeypatch.setattr(sparse_method, "equitable_partition", counting)
    prior = _exchangeable(4)
    epsilons = [0.3, 0.6, 1.0, 1.6]
    ours = po.sweep(prior, "hamming", "dp", epsilons=epsilons, solver="sparse-highs-symmetry")
    assert len(refinements) == 1  # the later points re-check the first point's partition
    reference = po.sweep(prior, "hamming", "dp", epsilons=epsilons, solver="CLARABEL")
    for a, b in zip(ours.results, reference.results, strict=True):
        assert a.status == "optimal" and a.solver.details["symmetry_reduced"]
        assert a.objective == pytest.approx(b.objective, abs=1e-7)


def test_a_problem_file_with_a_symmetric_prior_is_solved_reduced_from_the_cli(tmp_path, capsys):
    """As a user meets it: a TOML file, ``privopt solve --json``; the JSON names the method
    and the reduced size, and the value equals the unreduced LP's."""
    import json

    from privopt.cli import main

    probs = np.array([3.0] * 12 + [1.0] * 12)  # two groups of equally likely symbols
    probs /= probs.sum()
    path = tmp_path / "symmetric.toml"
    path.write_text(
        f"""
title = "PML on a prior with two groups of equally likely symbols"
[prior]
probs = [{", ".join(repr(float(v)) for v in probs)}]
[distortion]
kind = "hamming"
[privacy]
notion = "pml"
epsilon = 0.5
"""
    )
    assert main(["solve", str(path), "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["status"] == "optimal"
    assert answer["solver"]["name"] == "sparse-highs-symmetry"
    reference = po.design(probs, "hamming", "pml", epsilon=0.5, solver="sparse-highs")
    assert answer["distortion"] == pytest.approx(reference.objective, abs=1e-9)


@pytest.mark.parametrize("bits", [20, 2])
def test_ids_number_the_distinct_values_whether_hashed_or_sorted(bits, monkeypatch):
    """The hash table numbers classes like a sort does (up to renaming); with 4 buckets for
    500 values every bucket collides and the sort takes over."""
    import privopt.methods.sparse_lp.equitable as equitable

    monkeypatch.setattr(equitable, "ID_TABLE_BITS", bits)
    rng = np.random.default_rng(1)
    values = rng.integers(-(2**62), 2**62, 500)
    key = values[rng.integers(0, 500, 200_000)]
    ids = equitable._ids(key)
    sorted_ids = np.unique(key, return_inverse=True)[1].ravel()
    assert ids.max() + 1 == sorted_ids.max() + 1 == np.unique(key).size
    pairs = set(zip(ids.tolist(), sorted_ids.tolist(), strict=True))
    assert len(pairs) == ids.max() + 1  # a bijection between the two numberings


def test_the_refinement_honours_a_time_limit():
    """The refinement asks its time limit after every half-round and gives up at the first
    ``True`` (no clock: the test counts questions, so it does not depend on the machine's
    speed or load). On 2⁹ databases refining takes many rounds, ~2.5 s; without the
    questions an abandoned worker ran on for ~3 s."""
    prior = _exchangeable(9)
    lp, _ = full_program(prepare_request(prior, "hamming", "dp", epsilon=1.0), 1.0)
    asked: list[int] = []

    def expired_after_three() -> bool:
        asked.append(1)
        return len(asked) >= 3

    assert equitable_partition(lp, expired=expired_after_three) is None
    assert len(asked) == 3  # stopped at the first True: no further round was started
    never: list[int] = []
    assert equitable_partition(lp, expired=lambda: never.append(1) or False) is not None
    assert len(never) > 3  # the full refinement needs more rounds than the limit allowed


def test_a_limit_spent_during_the_refinement_returns_time_limit_without_highs():
    """Through the method: a deadline that passes during the refinement ends the point with
    ``TIME_LIMIT`` before HiGHS is called."""
    from privopt.methods.base import Deadline, Task

    class _PassesAfter(Deadline):
        def __init__(self, questions: int):
            super().__init__(3600.0)
            self.questions = questions

        def expired(self) -> bool:
            self.questions -= 1
            return self.questions < 0

    request = prepare_request(_exchangeable(6), "hamming", "dp", epsilon=1.0)
    task = Task(request, epsilon=1.0, deadline=_PassesAfter(2))
    answer = METHODS["sparse-highs-symmetry"].solve(task)
    assert answer.status == po.Status.TIME_LIMIT and answer.matrix is None


def test_an_instance_too_large_to_search_is_refused_with_that_reason(monkeypatch):
    import privopt.methods.sparse_lp.method as sparse_method

    monkeypatch.setattr(sparse_method, "MAX_SYMMETRY_SEARCH", 10)
    monkeypatch.setattr(sparse_method, "_SYMMETRY_CACHE", [])
    request = prepare_request([0.3, 0.2, 0.2, 0.3], _line(4), "pml", epsilon=0.5)
    reason = why_not(METHODS["sparse-highs-symmetry"], request)
    assert reason is not None and "up to 10 mechanism entries" in reason
