"""One battery over every registered notion and every registered method.

Driven by the registries (``privopt.notions.NOTIONS``, ``privopt.methods.METHODS``): a new
notion or method is tested here without editing this file, except to say how to fill a new
notion option (:data:`OPTION_VALUES`) or to name an instance where a new fast path applies
(:data:`METHOD_CASES` below).

Oracles: the cvxpy program with Clarabel and with another solver (independent routes
through the driver), the closed form ``D*(0) = min_u E d(Y, u)`` for the notions that mean
independence at level 0, monotonicity of ``D*(ε)``, and the problem library.
"""

from __future__ import annotations

import glob

import numpy as np
import pytest

import privopt as po
from privopt.methods import METHODS
from privopt.notions import NOTIONS, STANDARD_NOTIONS, notion_names
from privopt.request import prepare_request
from privopt.solve.selection import why_not

#: How to fill each notion option on a random instance (a new option needs an entry here).
OPTION_VALUES = {
    "priors": lambda prior, rng: [
        prior.secret_probs,
        rng.dirichlet(np.ones(prior.n_secrets)),
    ],
    "metric": lambda prior, rng: {
        "points": rng.uniform(0.0, 2.0, (prior.n_secrets, 2)).tolist(),
        "norm": "euclidean",
    },
    "spanner": lambda prior, rng: 1.0,  # δ = 1: the exact constraint pairs
    # per-entry classes need a database prior (tests/measures/test_paper_features.py covers them)
    "entry_priors": lambda prior, rng: None,
    "about": lambda prior, rng: "secret",
    "alpha": lambda prior, rng: (1.5, 2.0, 4.0, float("inf"))[int(rng.integers(4))],
}


def _random_case(notion: str, seed: int):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 5))
    n_out = int(rng.integers(2, 5))
    prior = po.Prior(rng.dirichlet(np.ones(k)))
    d = rng.uniform(0, 2, size=(k, n_out))
    options = {o.name: OPTION_VALUES[o.name](prior, rng) for o in po.get_notion(notion).options}
    return prior, d, options


def _level(notion: str, prior, eps_fraction: float, options) -> float:
    """A level inside the notion's feasible range."""
    low = po.get_notion(notion).min_level(
        prior,
        None if notion not in ("dp", "identifiability") else po.validation.default_neighbors(prior),
    )
    return low + eps_fraction


def test_every_notion_option_has_a_test_value():
    for notion in notion_names():
        for option in po.get_notion(notion).options:
            assert option.name in OPTION_VALUES, f"add {option.name!r} to OPTION_VALUES"


@pytest.mark.parametrize("notion", notion_names())
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_notion_agrees_with_a_second_solver(notion, seed):
    """The default route and a second cvxpy solver give the same optimum; the answer meets
    the request, re-measured; its certificate says optimal within the stated tolerance."""
    prior, d, options = _random_case(notion, seed)
    eps = _level(notion, prior, 0.4, options)
    res = po.design(prior, d, notion, epsilon=eps, **options)
    assert res.status == "optimal" and res.verified
    assert res.certificate.certified
    assert res.epsilon <= eps + 1e-9 * (1 + eps)
    assert res.distortion == pytest.approx(
        po.measures.expected_distortion(prior, res.mechanism, d), abs=1e-12
    )
    assert res.epsilon == pytest.approx(
        po.get_notion(notion).measure(prior, res.mechanism, None, **options), abs=1e-12
    )
    second = "ECOS" if po.get_notion(notion).cone(options) == "exponential_cone" else "CLARABEL"
    other = po.design(prior, d, notion, epsilon=eps, solver=second, **options)
    assert other.verified
    assert res.distortion <= other.distortion + 1e-6
    assert res.distortion == pytest.approx(other.distortion, abs=1e-6)


@pytest.mark.parametrize("notion", notion_names())
def test_level_zero(notion):
    """Notions that mean "U independent of X" at level 0 give D*(0) = min_u Σ_y p(y) d(y,u)."""
    prior, d, options = _random_case(notion, 5)
    notion_obj = po.get_notion(notion)
    least = notion_obj.min_level(prior, po.validation.default_neighbors(prior))
    if least > 0:  # identifiability on a non-uniform prior: infeasible below ε_X
        with pytest.raises(po.InfeasibleError) as info:
            po.design(prior, d, notion, epsilon=0.0, **options)
        assert info.value.least_achievable == pytest.approx(least)
        return
    res = po.design(prior, d, notion, epsilon=0.0, **options)
    assert res.verified and res.epsilon <= 1e-9
    if notion_obj.independent_at_zero(po.validation.default_neighbors(prior)):
        assert res.distortion == pytest.approx(float((prior.probs @ d).min()), abs=1e-9)


@pytest.mark.parametrize("notion", notion_names())
def test_optimal_distortion_is_non_increasing(notion):
    prior, d, options = _random_case(notion, 7)
    low = _level(notion, prior, 0.0, options)
    curve = po.sweep(prior, d, notion, epsilons=low + np.linspace(0.0, 3.0, 7), **options)
    values = curve.column("distortion")
    assert all(r["status"] == "optimal" for r in curve.records), curve.records
    assert np.all(np.diff(values) <= 1e-7)


@pytest.mark.parametrize("notion", notion_names())
def test_budget_mode_inverts_epsilon_mode(notion):
    prior, d, options = _random_case(notion, 9)
    eps = _level(notion, prior, 0.5, options)
    forward = po.design(prior, d, notion, epsilon=eps, **options)
    back = po.design(prior, d, notion, max_distortion=forward.distortion, **options)
    assert back.verified and back.distortion <= forward.distortion + 1e-7
    assert back.epsilon <= eps + 1e-6


@pytest.mark.parametrize("notion", STANDARD_NOTIONS)
def test_leakage_report_contains_the_notion(notion):
    prior, d, options = _random_case(notion, 11)
    res = po.design(prior, d, notion, epsilon=_level(notion, prior, 0.3, options), **options)
    assert res.leakage[notion] == pytest.approx(res.epsilon, abs=1e-9)


def test_every_notion_has_a_problem_file():
    from privopt.io.files import load_problem

    covered = {load_problem(path).notion for path in glob.glob("problems/*.toml")}
    assert set(notion_names()) <= covered


def test_aliases_resolve_to_registered_notions():
    for key, notion in NOTIONS.items():
        assert po.get_notion(key) is notion and notion.name in notion_names()


# --- every method ---------------------------------------------------------------------------
#: An instance on which each privopt method applies (cvxpy methods use the generic cases).
METHOD_CASES = {
    "blahut-arimoto": ([0.5, 0.3, 0.2], "hamming", "mutual_information"),
    "symmetric": (po.DatabasePrior(2, 3, row_probs=[0.6, 0.4]), "hamming", "dp"),
    "sparse-highs": ([0.5, 0.3, 0.2], "absolute", "pml"),
    "sparse-highs-simplex": ([0.5, 0.3, 0.2], "absolute", "information_privacy"),
    "sparse-highs-ipm": ([0.5, 0.3, 0.2], "absolute", "ldp"),
    "sparse-highs-ipm-crossover": ([0.5, 0.3, 0.2], "absolute", "pml"),
    "sparse-highs-pdlp": ([0.5, 0.3, 0.2], "absolute", "maximal_leakage"),
    "sparse-highs-translation": (po.Prior([0.25] * 4), "hamming", "ldp"),
    "sparse-highs-symmetry": ([0.3, 0.2, 0.2, 0.3], "absolute", "pml"),
    "sparse-clarabel": ([0.5, 0.3, 0.2], "absolute", "ldp"),
    "block-ipm": ([0.5, 0.3, 0.2], "absolute", "information_privacy"),
    "wang-identifiability": (
        po.DatabasePrior(2, 2, row_probs=[0.6, 0.4]),
        "hamming",
        "identifiability",
    ),
}
#: cvxpy solvers that are not expected to certify to 1e-6 (first-order or mixed-integer),
#: with the settings that make their answers pass verification.
LOOSE = {
    "SCS": {"eps_abs": 1e-10, "eps_rel": 1e-10, "max_iters": 200_000},
    "OSQP": {"eps_abs": 1e-10, "eps_rel": 1e-10, "max_iter": 200_000, "polishing": True},
    "ECOS_BB": {},
}


def _case_for(name):
    if name in METHOD_CASES:
        return METHOD_CASES[name]
    return ([0.5, 0.3, 0.2], "absolute", "pml")


def test_every_privopt_method_has_a_case():
    fast = {n for n, m in METHODS.items() if m.family == "privopt"}
    assert fast <= set(METHOD_CASES)


@pytest.mark.parametrize("name", sorted(METHODS))
def test_method_contract(name):
    """Each method applies where it says, answers like Clarabel, and its answer passes the
    driver's verification; a certified answer's gap is within the tolerance."""
    prior, dist, notion = _case_for(name)
    request = prepare_request(prior, dist, notion, epsilon=0.7)
    assert why_not(METHODS[name], request) is None
    options = {name: LOOSE[name]} if LOOSE.get(name) else None
    res = po.design(prior, dist, notion, epsilon=0.7, solver=name, solver_options=options)
    ref = po.design(prior, dist, notion, epsilon=0.7, solver="CLARABEL")
    assert res.solver.name == name and res.verified
    assert res.epsilon <= 0.7 + 1e-9 * 1.7
    if name in LOOSE:
        assert res.distortion == pytest.approx(ref.distortion, abs=1e-3)
        return
    assert res.status == "optimal" and res.certificate.certified
    if res.certificate.gap is not None:
        assert res.certificate.relative_gap <= res.certificate.tolerance
    assert res.distortion == pytest.approx(ref.distortion, abs=1e-6)


@pytest.mark.parametrize("name", sorted(METHODS))
def test_method_reports_applicability_with_a_reason(name):
    """Every method refuses some request with a reason (no method applies to everything)."""
    joint = po.JointPrior([[0.2, 0.1], [0.3, 0.4]])
    requests = [
        prepare_request(joint, "hamming", "mutual_information", epsilon=0.5),
        prepare_request([0.5, 0.5], "hamming", "mutual_information", epsilon=0.5),
        prepare_request(
            [0.5, 0.5], "hamming", "pml", epsilon=0.5, extra_distortions=[([[0, 1], [1, 0]], 1)]
        ),
        # 2^30 databases: no dense program, only structure
        prepare_request(po.DatabasePrior(2, 30, row_probs=[0.6, 0.4]), "hamming", "dp", epsilon=1),
    ]
    reasons = [why_not(METHODS[name], r) for r in requests]
    refused = [r for r in reasons if r is not None]
    assert refused and all(isinstance(r, str) and r for r in refused)
