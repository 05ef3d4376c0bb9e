"""Closed-form checks of answers (GitHub issue "The solver layer checks every answer against the
closed forms, and says so").

Every closed form is confirmed here against an independent numerical optimum: a dense
``scipy.optimize.linprog`` (HiGHS) program written out constraint by constraint for the linear
notions, and Blahut–Arimoto for mutual information, on several instances. Each check is also
shown to apply where it should, not to apply where it should not, and to fail on a wrong answer.
Reference values with 12 digits are those of Wang, Ying & Zhang (2016) and Calmon & Fawaz
(2012) as recomputed for this project.
"""

from __future__ import annotations

import itertools
import json
import math
import tracemalloc

import numpy as np
import pytest
from scipy.optimize import linprog

from privopt import DatabasePrior, Distortion, JointPrior, Prior, all_pairs, hamming_neighbors
from privopt import closed_forms as cf
from privopt.errors import InputError
from privopt.model import NeighborRelation
from privopt.papers.closed_form_checks import ClosedFormCheck, closed_form_checks

ln = math.log


# =============================================================================================
# Independent references
# =============================================================================================
def hamming_matrix(m: int, n: int) -> np.ndarray:
    digits = np.array(list(itertools.product(range(m), repeat=n)))
    return (digits[:, None, :] != digits[None, :, :]).sum(axis=2).astype(float)


def pair_list(m: int, n: int) -> list[tuple[int, int]]:
    d = hamming_matrix(m, n)
    return [(a, b) for a, b in zip(*np.nonzero(d == 1), strict=True)]


def lp_optimum(p, d, notion: str, eps: float, pairs=None):
    """Least expected distortion under ``notion ≤ eps``: every constraint written out densely.

    Returns ``(value, W)`` or ``(None, None)`` when infeasible.
    """
    p = np.asarray(p, float)
    k, K = d.shape
    nw = k * K
    extra = K if notion == "maximal_leakage" else 0
    nv = nw + extra
    t = math.exp(eps)
    rows, rhs = [], []

    def idx(x, u):
        return x * K + u

    support = [x for x in range(k) if p[x] > 0]
    if notion == "pml":
        for x in support:
            for u in range(K):
                r = np.zeros(nv)
                r[idx(x, u)] += 1.0
                for x2 in range(k):
                    r[idx(x2, u)] -= t * p[x2]
                rows.append(r)
                rhs.append(0.0)
    elif notion in ("dp", "ldp", "identifiability"):
        if notion == "ldp" or pairs is None:
            pairs = [(a, b) for a in support for b in support if a != b]
        for a, b in pairs:
            for u in range(K):
                r = np.zeros(nv)
                wa, wb = (p[a], p[b]) if notion == "identifiability" else (1.0, 1.0)
                r[idx(a, u)] = wa
                r[idx(b, u)] -= t * wb
                rows.append(r)
                rhs.append(0.0)
    elif notion == "maximal_leakage":
        for x in support:
            for u in range(K):
                r = np.zeros(nv)
                r[idx(x, u)] = 1.0
                r[nw + u] = -1.0
                rows.append(r)
                rhs.append(0.0)
        r = np.zeros(nv)
        r[nw:] = 1.0
        rows.append(r)
        rhs.append(t)
    else:  # pragma: no cover
        raise ValueError(notion)
    c = np.zeros(nv)
    c[:nw] = (p[:, None] * d).ravel()
    a_eq = np.zeros((k, nv))
    for x in range(k):
        a_eq[x, idx(x, 0) : idx(x, 0) + K] = 1.0
    res = linprog(
        c,
        A_ub=np.array(rows),
        b_ub=np.array(rhs),
        A_eq=a_eq,
        b_eq=np.ones(k),
        bounds=(0, None),
        method="highs",
    )
    if res.status == 2:
        return None, None
    assert res.status == 0, res.message
    return float(res.fun), res.x[:nw].reshape(k, K)


def lp_least_level(p, d, notion: str, budget: float, pairs=None, hi: float = 12.0) -> float:
    """Least level whose optimum meets ``budget`` (bisection on the LP above)."""
    lo = 0.0
    value, _ = lp_optimum(p, d, notion, lo, pairs)
    if value is not None and value <= budget + 1e-12:
        return 0.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        value, _ = lp_optimum(p, d, notion, mid, pairs)
        if value is not None and value <= budget + 1e-12:
            hi = mid
        else:
            lo = mid
    return hi


def blahut_arimoto(p, d, slope: float, iters: int = 20000):
    """Rate–distortion point at Lagrange slope ``slope``: ``(D, I, W)`` (textbook iteration)."""
    p = np.asarray(p, float)
    q = np.full(d.shape[1], 1.0 / d.shape[1])
    kernel = np.exp(-slope * d)
    for _ in range(iters):
        w = q[None, :] * kernel
        w /= w.sum(axis=1, keepdims=True)
        q_new = p @ w
        if np.abs(q_new - q).max() < 1e-16:
            q = q_new
            break
        q = q_new
    w = q[None, :] * kernel
    w /= w.sum(axis=1, keepdims=True)
    p_u = p @ w
    mask = (p[:, None] * w) > 0
    ratio = np.where(mask, w / np.where(p_u > 0, p_u, 1.0)[None, :], 1.0)
    info = float(np.sum(np.where(mask, p[:, None] * w * np.log(ratio), 0.0)))
    return float(np.sum(p[:, None] * w * d)), info, w


# =============================================================================================
# Helpers
# =============================================================================================
def run(prior, distortion, notion, mode, requested, value, **kw):
    if mode == "epsilon":
        kw.setdefault("level", None)
        return closed_form_checks(
            prior, distortion, notion, mode, requested=requested, expected_distortion=value, **kw
        )
    kw.setdefault("expected_distortion", None)
    return closed_form_checks(
        prior, distortion, notion, mode, requested=requested, level=value, **kw
    )


def by_name(checks: list[ClosedFormCheck]) -> dict[str, ClosedFormCheck]:
    names = [c.name for c in checks]
    assert len(names) == len(set(names)), f"duplicate checks: {names}"
    return {c.name: c for c in checks}


def passes(checks, name: str, relation: str | None = None) -> ClosedFormCheck:
    found = by_name(checks)
    assert name in found, f"{name} not emitted; got {sorted(found)}"
    check = found[name]
    assert check.passed, check
    if relation is not None:
        assert check.relation == relation
    return check


def fails(checks, name: str) -> ClosedFormCheck:
    found = by_name(checks)
    assert name in found, f"{name} not emitted; got {sorted(found)}"
    assert found[name].passed is False, found[name]
    return found[name]


def absent(checks, prefix: str) -> None:
    assert not [c.name for c in checks if c.name.startswith(prefix)], [c.name for c in checks]


PRODUCT = DatabasePrior(2, 2, probs=[0.42, 0.18, 0.28, 0.12])
NONPRODUCT = DatabasePrior(2, 2, probs=[0.4, 0.1, 0.2, 0.3])
IID3 = DatabasePrior(3, 2, row_probs=[0.5, 0.3, 0.2])
UNIFORM32 = DatabasePrior(3, 2, row_probs=[1 / 3] * 3)
HAM22 = Distortion.database_hamming(2, 2)
HAM32 = Distortion.database_hamming(3, 2)


def cor1_joint() -> JointPrior:
    """S uniform on 6 points, Y = S mod 3."""
    joint = np.zeros((6, 3))
    for s in range(6):
        joint[s, s % 3] = 1 / 6
    return JointPrior(joint)


# =============================================================================================
# The record
# =============================================================================================
def test_record_to_dict_is_json_ready():
    checks = run(PRODUCT, HAM22, "identifiability", "epsilon", 1.0, 0.53788284274)
    for c in checks:
        data = c.to_dict()
        assert set(data) == {
            "name",
            "statement",
            "source",
            "relation",
            "conditions",
            "expected",
            "got",
            "difference",
            "tolerance",
            "passed",
        }
        json.dumps(data, allow_nan=False)
    inf = ClosedFormCheck("x", "s", "src", "equal", "c", math.inf, math.nan, None, 1e-6, False)
    assert inf.to_dict()["expected"] is None and inf.to_dict()["got"] is None


def test_docstrings_and_sources_cite_papers_not_spec():
    import re

    import privopt.papers.closed_form_checks as mod

    source_text = open(mod.__file__, encoding="utf-8").read()
    assert not re.search(r"spec[/ §.]|math\.md|\[00\d\]", source_text)
    sources = {c.source for c in run(PRODUCT, HAM22, "dp", "epsilon", 1.0, 0.5)}
    sources |= {
        c.source
        for c in run(
            cor1_joint(), Distortion.hamming(3), "mutual_information", "max_distortion", 0.3, 0.28
        )
    }
    for source in sources:
        assert re.search(r"\(20\d\d\)", source) and "[" not in source


def test_unknown_notion_and_mode():
    with pytest.raises(InputError):
        run(PRODUCT, HAM22, "nope", "epsilon", 1.0, 0.5)
    with pytest.raises(InputError):
        run(PRODUCT, HAM22, "dp", "budget", 1.0, 0.5)
    assert run(PRODUCT, HAM22, "dp", "epsilon", math.inf, 0.0) == []


def test_tolerance_rule():
    value = cf.h(1.0, 2, 2)
    ok = run(PRODUCT, HAM22, "identifiability", "epsilon", 1.0, value + 0.9e-6 * (1 + value))
    passes(ok, "wang_thm1_identifiability_equals_h")
    bad = run(PRODUCT, HAM22, "identifiability", "epsilon", 1.0, value + 1.1e-6 * (1 + value))
    fails(bad, "wang_thm1_identifiability_equals_h")
    loose = run(PRODUCT, HAM22, "identifiability", "epsilon", 1.0, value + 1e-3, tol=1e-2)
    passes(loose, "wang_thm1_identifiability_equals_h")


# =============================================================================================
# Wang et al.: identifiability, epsilon mode
# =============================================================================================
# (prior, distortion, ε, D*_I) from the LP table of the reference values
IDENT_EQUAL = [
    (PRODUCT, HAM22, 0.847297860387, 0.6),
    (PRODUCT, HAM22, ln(7 / 3) + 0.5, 0.412624979351),
    (PRODUCT, HAM22, 2.0, 0.238405844044),
    (IID3, HAM32, ln(3), 0.8),
    (NONPRODUCT, HAM22, 1.90234065127, 0.259687576257),
    (UNIFORM32, HAM32, 0.3, 1.194080177634),
    (UNIFORM32, HAM32, 1.0, 0.847766230468),
]


@pytest.mark.parametrize(("prior", "dist", "eps", "value"), IDENT_EQUAL)
def test_identifiability_equals_h_reference(prior, dist, eps, value):
    checks = run(prior, dist, "identifiability", "epsilon", eps, value)
    check = passes(checks, "wang_thm1_identifiability_equals_h", "equal")
    assert check.expected == pytest.approx(value, abs=1e-9)
    if eps > cf.epsilon_x(prior) + 1e-3:  # at ε = ε_X itself either status is accepted
        passes(checks, "wang_lemma3_identifiability_feasibility", "feasible")
    else:
        absent(checks, "wang_lemma3_identifiability_feasibility")
    fails(
        run(prior, dist, "identifiability", "epsilon", eps, value + 0.01),
        "wang_thm1_identifiability_equals_h",
    )


IDENT_ABOVE = [
    (IID3, HAM32, 0.916290731874, 1.0),
    (IID3, HAM32, (ln(2.5) + ln(3)) / 2, 0.90455488499),
    (NONPRODUCT, HAM22, 1.38629436112, 0.8),
    (NONPRODUCT, HAM22, (ln(4) + 1.90234065127) / 2, 0.564504978769),
]


@pytest.mark.parametrize(("prior", "dist", "eps", "value"), IDENT_ABOVE)
def test_identifiability_at_least_h_between_eps_x_and_tilde(prior, dist, eps, value):
    checks = run(prior, dist, "identifiability", "epsilon", eps, value)
    check = passes(checks, "wang_thm1_identifiability_at_least_h", "at_least")
    assert check.expected < value - 0.05  # strictly above h there
    absent(checks, "wang_thm1_identifiability_equals_h")
    below = run(prior, dist, "identifiability", "epsilon", eps, check.expected - 0.01)
    fails(below, "wang_thm1_identifiability_at_least_h")


@pytest.mark.parametrize(
    ("prior", "dist", "eps", "eps_x"),
    [
        (PRODUCT, HAM22, ln(7 / 3) / 2, ln(7 / 3)),
        (IID3, HAM32, ln(2.5) / 2, ln(2.5)),
        (NONPRODUCT, HAM22, 1.0, ln(4)),
    ],
)
def test_identifiability_infeasible_below_eps_x(prior, dist, eps, eps_x):
    kw = {"status": "infeasible", "least_achievable": eps_x}
    checks = run(prior, dist, "identifiability", "epsilon", eps, None, **kw)
    check = passes(checks, "wang_lemma3_identifiability_feasibility", "infeasible")
    assert check.expected == pytest.approx(eps_x, abs=1e-12)
    assert len(checks) == 1  # no value check below ε_X
    # the solver answering with a mechanism there is wrong
    fails(
        run(prior, dist, "identifiability", "epsilon", eps, 0.9),
        "wang_lemma3_identifiability_feasibility",
    )
    # a wrong least achievable level is wrong too
    kw["least_achievable"] = eps_x + 0.1
    fails(
        run(prior, dist, "identifiability", "epsilon", eps, None, **kw),
        "wang_lemma3_identifiability_feasibility",
    )
    # and reporting infeasible above ε_X is wrong
    above = run(prior, dist, "identifiability", "epsilon", eps_x + 0.3, None, status="infeasible")
    fails(above, "wang_lemma3_identifiability_feasibility")


def random_database_prior(rng, m, n, product):
    if product:
        rows = [rng.dirichlet(np.ones(m)) + 0.05 for _ in range(n)]
        rows = [r / r.sum() for r in rows]
        p = rows[0]
        for r in rows[1:]:
            p = np.kron(p, r)
        return DatabasePrior(m, n, probs=p)
    p = rng.dirichlet(np.ones(m**n)) + 0.02 / m**n
    return DatabasePrior(m, n, probs=p / p.sum())


@pytest.mark.parametrize("seed", range(6))
def test_identifiability_against_lp_random(seed):
    rng = np.random.default_rng(seed)
    m, n = [(2, 2), (3, 1), (2, 1), (3, 2), (2, 3), (4, 1)][seed]
    prior = random_database_prior(rng, m, n, product=seed % 2 == 0)
    d = hamming_matrix(m, n)
    dist = Distortion.database_hamming(m, n)
    pairs = pair_list(m, n)
    eps_x, tilde = cf.epsilon_x(prior), cf.epsilon_tilde_x(prior)
    for eps in (0.5 * eps_x, eps_x + 0.3 * (tilde - eps_x) + 1e-3, tilde + 0.01, tilde + 0.7):
        value, W = lp_optimum(prior.probs, d, "identifiability", eps, pairs)
        status = "infeasible" if value is None else "optimal"
        checks = run(
            prior,
            dist,
            "identifiability",
            "epsilon",
            eps,
            value,
            mechanism=W,
            status=status,
            least_achievable=eps_x if value is None else None,
        )
        assert checks and all(c.passed for c in checks), checks
        names = by_name(checks)
        assert (value is None) == (eps < eps_x)
        if eps >= tilde:
            assert "wang_thm1_identifiability_equals_h" in names
            assert "wang_thm1_identifiability_mechanism_is_E_i" in names
            assert names["wang_thm1_identifiability_mechanism_is_E_i"].got < 1e-6


def test_identifiability_mechanism_comparison_catches_a_wrong_optimum():
    eps = 1.0
    value = cf.h(eps, 2, 2)
    right = cf.identifiability_mechanism(PRODUCT, eps).matrix
    wrong = cf.exponential_mechanism(eps, 2, 2).matrix  # same distortion, not identifiable at ε
    passes(
        run(PRODUCT, HAM22, "identifiability", "epsilon", eps, value, mechanism=right),
        "wang_thm1_identifiability_mechanism_is_E_i",
    )
    check = fails(
        run(PRODUCT, HAM22, "identifiability", "epsilon", eps, value, mechanism=wrong),
        "wang_thm1_identifiability_mechanism_is_E_i",
    )
    assert check.got > 0.01
    # a mechanism of the wrong shape is not compared
    odd = run(
        PRODUCT, HAM22, "identifiability", "epsilon", eps, value, mechanism=np.ones((4, 2)) / 2
    )
    absent(odd, "wang_thm1_identifiability_mechanism")


def test_identifiability_not_applicable():
    eps, value = 1.0, cf.h(1.0, 2, 2)
    custom = NeighborRelation.from_pairs(4, [(0, 1), (2, 3)])
    assert run(PRODUCT, HAM22, "identifiability", "epsilon", eps, value, neighbors=custom) == []
    # all pairs on D² (n = 2) is not Wang's relation
    assert (
        run(PRODUCT, HAM22, "identifiability", "epsilon", eps, value, neighbors=all_pairs(4)) == []
    )
    # non-Hamming distortion
    absolute = Distortion.absolute(4)
    assert run(PRODUCT, absolute, "identifiability", "epsilon", eps, value) == []
    # no full support: ε_X = ∞ and the library's support convention differs from the paper's
    sparse = DatabasePrior(2, 2, probs=[0.5, 0.2, 0.3, 0.0])
    assert run(sparse, HAM22, "identifiability", "epsilon", eps, value) == []
    # a joint prior is not Wang's setting
    assert run(cor1_joint(), Distortion.hamming(3), "identifiability", "epsilon", 1.0, 0.4) == []
    # explicit Hamming neighbours are recognised
    explicit = run(
        PRODUCT, HAM22, "identifiability", "epsilon", eps, value, neighbors=hamming_neighbors(2, 2)
    )
    passes(explicit, "wang_thm1_identifiability_equals_h")


def test_identifiability_single_alphabet_is_n_equals_one():
    """A single alphabet with Hamming distortion and all pairs is D¹ (m = k)."""
    prior = Prior([0.5, 0.3, 0.2])
    d = 1 - np.eye(3)
    for eps in (0.2, 1.0, 1.5, 2.5):
        value, W = lp_optimum(prior.probs, d, "identifiability", eps)
        status = "optimal" if value is not None else "infeasible"
        checks = run(
            prior,
            Distortion.hamming(3),
            "identifiability",
            "epsilon",
            eps,
            value,
            mechanism=W,
            status=status,
            least_achievable=ln(2.5),
        )
        assert checks and all(c.passed for c in checks), checks
    checks = run(prior, Distortion.hamming(3), "identifiability", "epsilon", 1.6, cf.h(1.6, 3, 1))
    assert "k = 3 symbols" in passes(checks, "wang_thm1_identifiability_equals_h").conditions
    # the same through a DatabasePrior with n = 1 and explicit all-pairs neighbours
    db1 = DatabasePrior(3, 1, probs=[0.5, 0.3, 0.2])
    checks = run(
        db1,
        Distortion.database_hamming(3, 1),
        "identifiability",
        "epsilon",
        1.6,
        cf.h(1.6, 3, 1),
        neighbors=all_pairs(3),
    )
    passes(checks, "wang_thm1_identifiability_equals_h")


# =============================================================================================
# Wang et al.: identifiability, budget mode
# =============================================================================================
@pytest.mark.parametrize(
    ("prior", "dist", "m", "n", "budget"),
    [
        (PRODUCT, HAM22, 2, 2, 0.5),
        (PRODUCT, HAM22, 2, 2, 0.6),
        (NONPRODUCT, HAM22, 2, 2, 0.2),
        (IID3, HAM32, 3, 2, 0.7),
        (UNIFORM32, HAM32, 3, 2, 1.0),
    ],
)
def test_identifiability_level_equals_h_inv_against_lp(prior, dist, m, n, budget):
    level = lp_least_level(
        prior.probs, hamming_matrix(m, n), "identifiability", budget, pair_list(m, n)
    )
    checks = run(prior, dist, "identifiability", "max_distortion", budget, level, tol=1e-7)
    check = passes(checks, "wang_thm1_identifiability_level_equals_h_inv", "equal")
    assert check.expected == pytest.approx(cf.h_inv(budget, m, n), abs=1e-12)
    fails(
        run(prior, dist, "identifiability", "max_distortion", budget, level + 0.01),
        "wang_thm1_identifiability_level_equals_h_inv",
    )
    # E_i at h⁻¹(D) is the mechanism
    mech = cf.identifiability_mechanism(prior, cf.h_inv(budget, m, n)).matrix
    passes(
        run(prior, dist, "identifiability", "max_distortion", budget, level, mechanism=mech),
        "wang_thm1_identifiability_mechanism_is_E_i",
    )


@pytest.mark.parametrize(
    ("prior", "dist", "m", "n", "budget"),
    [(IID3, HAM32, 3, 2, 0.9), (NONPRODUCT, HAM22, 2, 2, 0.5)],
)
def test_identifiability_level_at_least_above_tight_range(prior, dist, m, n, budget):
    level = lp_least_level(
        prior.probs, hamming_matrix(m, n), "identifiability", budget, pair_list(m, n)
    )
    checks = run(prior, dist, "identifiability", "max_distortion", budget, level, tol=1e-7)
    check = passes(checks, "wang_thm1_identifiability_level_at_least", "at_least")
    assert check.expected == pytest.approx(max(cf.h_inv(budget, m, n), cf.epsilon_x(prior)))
    fails(
        run(prior, dist, "identifiability", "max_distortion", budget, check.expected - 0.01),
        "wang_thm1_identifiability_level_at_least",
    )


def test_identifiability_level_at_constant_release():
    d0 = 0.4 + 0.3  # 1 − max marginal per row: (.6,.4) and (.7,.3)
    level = lp_least_level(
        PRODUCT.probs, hamming_matrix(2, 2), "identifiability", 0.75, pair_list(2, 2)
    )
    checks = run(PRODUCT, HAM22, "identifiability", "max_distortion", 0.75, level)
    check = passes(checks, "wang_identifiability_level_constant_release", "equal")
    assert check.expected == pytest.approx(ln(7 / 3)) and str(round(d0, 1)) in check.conditions
    fails(
        run(PRODUCT, HAM22, "identifiability", "max_distortion", 0.75, 0.0),
        "wang_identifiability_level_constant_release",
    )


# =============================================================================================
# Wang et al.: differential privacy; Kairouz et al.: LDP
# =============================================================================================
DP_BAND = [
    (PRODUCT, HAM22, 2, 2, ln(7 / 3) / 2, 0.695643923739),
    (PRODUCT, HAM22, 2, 2, ln(7 / 3), 0.6),
    (IID3, HAM32, 3, 2, ln(2.5), 0.857142857143),
    (IID3, HAM32, 3, 2, (ln(2.5) + ln(3)) / 2, 0.827966224622),
    (NONPRODUCT, HAM22, 2, 2, ln(4), 0.4),
    (NONPRODUCT, HAM22, 2, 2, (ln(4) + 1.90234065127) / 2, 0.323756869211),
]


@pytest.mark.parametrize(("prior", "dist", "m", "n", "eps", "value"), DP_BAND)
def test_dp_band_reference_and_lp(prior, dist, m, n, eps, value):
    lp_value, _ = lp_optimum(prior.probs, hamming_matrix(m, n), "dp", eps, pair_list(m, n))
    assert lp_value == pytest.approx(value, abs=1e-9)
    checks = run(prior, dist, "dp", "epsilon", eps, lp_value)
    upper = passes(checks, "wang_thm1_dp_at_most_h", "at_most")
    lower = passes(checks, "wang_thm1_dp_at_least_h_shifted", "at_least")
    assert upper.expected == pytest.approx(cf.h(eps, m, n))
    assert lower.expected == pytest.approx(cf.h(eps + cf.epsilon_x(prior), m, n))
    fails(run(prior, dist, "dp", "epsilon", eps, upper.expected + 0.01), "wang_thm1_dp_at_most_h")
    fails(
        run(prior, dist, "dp", "epsilon", eps, lower.expected - 0.01),
        "wang_thm1_dp_at_least_h_shifted",
    )


@pytest.mark.parametrize(
    ("prior", "m", "n", "budget"),
    [(PRODUCT, 2, 2, 0.5), (IID3, 3, 2, 0.9), (NONPRODUCT, 2, 2, 0.35)],
)
def test_dp_level_band_against_lp(prior, m, n, budget):
    dist = Distortion.database_hamming(m, n)
    level = lp_least_level(prior.probs, hamming_matrix(m, n), "dp", budget, pair_list(m, n))
    checks = run(prior, dist, "dp", "max_distortion", budget, level, tol=1e-7)
    upper = passes(checks, "wang_thm1_dp_level_at_most_h_inv", "at_most")
    passes(checks, "wang_thm1_dp_level_at_least", "at_least")
    fails(
        run(prior, dist, "dp", "max_distortion", budget, upper.expected + 0.01),
        "wang_thm1_dp_level_at_most_h_inv",
    )


@pytest.mark.parametrize("eps", [0.3, 1.0])
def test_dp_uniform_database_equals_h_and_is_E_d(eps):
    value, W = lp_optimum(UNIFORM32.probs, hamming_matrix(3, 2), "dp", eps, pair_list(3, 2))
    checks = run(UNIFORM32, HAM32, "dp", "epsilon", eps, value, mechanism=W)
    check = passes(checks, "wang_thm1_dp_equals_h_uniform", "equal")
    assert check.expected == pytest.approx({0.3: 1.194080177634, 1.0: 0.847766230468}[eps])
    passes(checks, "wang_thm1_dp_equals_h_uniform_mechanism")
    absent(checks, "wang_thm1_dp_at_")  # the band collapses: one check, not three
    fails(
        run(UNIFORM32, HAM32, "dp", "epsilon", eps, value - 0.01), "wang_thm1_dp_equals_h_uniform"
    )
    # budget mode
    level = lp_least_level(UNIFORM32.probs, hamming_matrix(3, 2), "dp", 1.0, pair_list(3, 2))
    passes(
        run(UNIFORM32, HAM32, "dp", "max_distortion", 1.0, level, tol=1e-7),
        "wang_thm1_dp_equals_h_uniform_level",
    )


@pytest.mark.parametrize("k", [2, 3, 4, 6])
@pytest.mark.parametrize("eps", [0.0, 0.4, 1.0, 2.5])
def test_ldp_uniform_is_krr(k, eps):
    value, W = lp_optimum(np.full(k, 1 / k), 1 - np.eye(k), "ldp", eps)
    assert value == pytest.approx((k - 1) / (math.exp(eps) + k - 1), abs=1e-10)
    prior, dist = Prior(np.full(k, 1 / k)), Distortion.hamming(k)
    for notion in ("ldp", "dp"):  # DP over all pairs on one alphabet is LDP
        checks = run(prior, dist, notion, "epsilon", eps, value, mechanism=W)
        passes(checks, "kairouz_krr_uniform", "equal")
        assert [c.name for c in checks if c.relation == "equal" and "mechanism" not in c.name] == [
            "kairouz_krr_uniform"
        ]  # one check, not two (same value as h(ε) with n = 1)
        if eps > 0:
            passes(checks, "kairouz_krr_uniform_mechanism")
        fails(run(prior, dist, notion, "epsilon", eps, value + 0.01), "kairouz_krr_uniform")


def test_ldp_uniform_budget_and_spec_problem():
    checks = run(Prior([0.25] * 4), Distortion.hamming(4), "ldp", "epsilon", 1.0, 0.524633113581)
    passes(checks, "kairouz_krr_uniform")
    for k, budget in [(3, 0.3), (4, 0.5), (5, 0.85)]:
        level = lp_least_level(np.full(k, 1 / k), 1 - np.eye(k), "ldp", budget)
        checks = run(
            Prior(np.full(k, 1 / k)),
            Distortion.hamming(k),
            "ldp",
            "max_distortion",
            budget,
            level,
            tol=1e-7,
        )
        check = passes(checks, "kairouz_krr_uniform_level")
        assert check.expected == pytest.approx(max(ln((k - 1) * (1 - budget) / budget), 0.0))


@pytest.mark.parametrize("seed", range(4))
def test_ldp_nonuniform_band_against_lp(seed):
    rng = np.random.default_rng(10 + seed)
    k = 3 + seed % 2
    p = rng.dirichlet(np.ones(k)) * 0.9 + 0.1 / k
    eps = float(rng.uniform(0.1, 2.0))
    value, _ = lp_optimum(p, 1 - np.eye(k), "ldp", eps)
    checks = run(Prior(p), Distortion.hamming(k), "ldp", "epsilon", eps, value)
    passes(checks, "wang_thm1_dp_at_most_h")
    low = passes(checks, "wang_thm1_dp_at_least_h_shifted")
    assert low.expected == pytest.approx(cf.h(eps + ln(p.max() / p.min()), k, 1))


def test_ldp_on_databases_only_for_one_row():
    # LDP on D² is all pairs over 4 databases, not Wang's Hamming relation
    assert run(PRODUCT, HAM22, "ldp", "epsilon", 1.0, 0.5) == []
    # a 0/1 distortion on D² reads the prior as one alphabet of 4 symbols
    uniform4 = DatabasePrior(2, 2, row_probs=[0.5, 0.5])
    checks = run(uniform4, Distortion.hamming(4), "ldp", "epsilon", 1.0, 0.524633113581)
    passes(checks, "kairouz_krr_uniform")
    # ...but then DP's default Hamming neighbours on D² are not all pairs
    assert run(uniform4, Distortion.hamming(4), "dp", "epsilon", 1.0, 0.52) == []


# =============================================================================================
# PML and maximal leakage with Hamming distortion
# =============================================================================================
@pytest.mark.parametrize("k", [2, 3, 5])
@pytest.mark.parametrize("eps", [0.0, 0.2, ln(2), 1.3, 2.0])
def test_pml_uniform_against_lp(k, eps):
    value, _ = lp_optimum(np.full(k, 1 / k), 1 - np.eye(k), "pml", eps)
    checks = run(Prior(np.full(k, 1 / k)), Distortion.hamming(k), "pml", "epsilon", eps, value)
    check = passes(checks, "pml_uniform_hamming", "equal")
    assert check.expected == pytest.approx(max(0.0, 1 - math.exp(eps) / k), abs=1e-15)
    fails(
        run(Prior(np.full(k, 1 / k)), Distortion.hamming(k), "pml", "epsilon", eps, value + 0.01),
        "pml_uniform_hamming",
    )


def test_pml_uniform_reference_problem_and_budget():
    uniform3 = Prior([1 / 3] * 3)
    passes(
        run(uniform3, Distortion.hamming(3), "pml", "epsilon", ln(2), 1 / 3), "pml_uniform_hamming"
    )
    for k, budget in [(3, 0.2), (3, 0.5), (4, 0.9), (2, 0.1)]:
        level = lp_least_level(np.full(k, 1 / k), 1 - np.eye(k), "pml", budget)
        checks = run(
            Prior(np.full(k, 1 / k)),
            Distortion.hamming(k),
            "pml",
            "max_distortion",
            budget,
            level,
            tol=1e-7,
        )
        passes(checks, "pml_uniform_hamming_level")
        fails(
            run(
                Prior(np.full(k, 1 / k)),
                Distortion.hamming(k),
                "pml",
                "max_distortion",
                budget,
                level + 0.01,
            ),
            "pml_uniform_hamming_level",
        )


@pytest.mark.parametrize("seed", range(5))
def test_pml_nonuniform_at_least_knapsack(seed):
    rng = np.random.default_rng(20 + seed)
    k = 3 + seed % 3
    p = rng.dirichlet(np.ones(k))
    eps = float(rng.uniform(0.05, 1.5))
    value, _ = lp_optimum(p, 1 - np.eye(k), "pml", eps)
    ml_value, _ = lp_optimum(p, 1 - np.eye(k), "maximal_leakage", eps)
    checks = run(Prior(p), Distortion.hamming(k), "pml", "epsilon", eps, value)
    check = passes(checks, "pml_at_least_maximal_leakage_knapsack", "at_least")
    assert check.expected == pytest.approx(ml_value, abs=1e-9)
    absent(checks, "pml_uniform")
    fails(
        run(Prior(p), Distortion.hamming(k), "pml", "epsilon", eps, check.expected - 0.01),
        "pml_at_least_maximal_leakage_knapsack",
    )
    budget = 0.5 * (1 - p.max())
    level = lp_least_level(p, 1 - np.eye(k), "pml", budget)
    passes(
        run(Prior(p), Distortion.hamming(k), "pml", "max_distortion", budget, level),
        "pml_level_at_least_maximal_leakage_knapsack",
    )


@pytest.mark.parametrize("seed", range(8))
def test_maximal_leakage_knapsack_against_lp(seed):
    rng = np.random.default_rng(30 + seed)
    k = 2 + seed % 4
    p = rng.dirichlet(np.ones(k))
    if seed % 4 == 3:
        p[0] = 0.0  # outside the support: never helps
        p /= p.sum()
    prior, dist = Prior(p), Distortion.hamming(k)
    for eps in (0.0, float(rng.uniform(0, ln(k))), ln(k) + 0.1):
        value, _ = lp_optimum(p, 1 - np.eye(k), "maximal_leakage", eps)
        check = passes(
            run(prior, dist, "maximal_leakage", "epsilon", eps, value),
            "maximal_leakage_hamming_knapsack",
            "equal",
        )
        assert check.expected == pytest.approx(value, abs=1e-9)
        fails(
            run(prior, dist, "maximal_leakage", "epsilon", eps, value + 0.01),
            "maximal_leakage_hamming_knapsack",
        )
    budget = float(rng.uniform(0, 1 - p.max()))
    level = lp_least_level(p, 1 - np.eye(k), "maximal_leakage", budget)
    passes(
        run(prior, dist, "maximal_leakage", "max_distortion", budget, level, tol=1e-7),
        "maximal_leakage_hamming_knapsack_level",
    )


def test_maximal_leakage_reference_problem():
    prior, dist = Prior([0.5, 0.3, 0.2]), Distortion.hamming(3)
    passes(
        run(prior, dist, "maximal_leakage", "epsilon", ln(1.5), 0.35),
        "maximal_leakage_hamming_knapsack",
    )
    passes(
        run(prior, dist, "maximal_leakage", "max_distortion", 0.35, ln(1.5)),
        "maximal_leakage_hamming_knapsack_level",
    )


def test_pml_and_maximal_leakage_not_applicable():
    for notion in ("pml", "maximal_leakage"):
        assert (
            run(Prior([0.5, 0.3, 0.2]), Distortion.absolute(3), notion, "epsilon", 0.5, 0.3) == []
        )
        assert run(PRODUCT, HAM22, notion, "epsilon", 0.5, 0.3) == []  # Dⁿ with n = 2
        hide = JointPrior([[0.25, 0.25, 0, 0], [0, 0, 0.25, 0.25]])
        assert run(hide, Distortion.hamming(4), notion, "epsilon", 0.5, 0.3) == []


# =============================================================================================
# Mutual information: Wang et al. Thm 2, Bernoulli and k-ary rate–distortion
# =============================================================================================
PDMIP = [
    (PRODUCT, HAM22, 0.2, 0.633710022281),
    (PRODUCT, HAM22, 0.3, 0.438457793452),
    (PRODUCT, HAM22, 0.53788284274, 0.119469751288),
    (PRODUCT, HAM22, 0.6, 0.0621473649544),
    (NONPRODUCT, HAM22, 0.2, 0.629688279051),
    (IID3, HAM32, 0.2, 1.27051064523),
    (IID3, HAM32, 0.3, 1.00594369835),
    (IID3, HAM32, 0.8, 0.158764949663),
    (DatabasePrior(2, 2, row_probs=[0.5, 0.5]), HAM22, 0.75, 0.0631678848039),
]


@pytest.mark.parametrize(("prior", "dist", "budget", "value"), PDMIP)
def test_pdmip_reference_both_modes(prior, dist, budget, value):
    checks = run(prior, dist, "mutual_information", "max_distortion", budget, value)
    check = passes(checks, "wang_thm2_pdmip_value", "equal")
    assert check.expected == pytest.approx(value, abs=1e-10)
    fails(
        run(prior, dist, "mutual_information", "max_distortion", budget, value + 0.01),
        "wang_thm2_pdmip_value",
    )
    checks = run(prior, dist, "mutual_information", "epsilon", value, budget)
    check = passes(checks, "wang_thm2_pdmip_distortion", "equal")
    assert check.expected == pytest.approx(budget, abs=1e-9)
    fails(
        run(prior, dist, "mutual_information", "epsilon", value, budget + 0.01),
        "wang_thm2_pdmip_distortion",
    )


@pytest.mark.parametrize(("prior", "m", "n"), [(PRODUCT, 2, 2), (NONPRODUCT, 2, 2), (IID3, 3, 2)])
def test_pdmip_against_blahut_arimoto(prior, m, n):
    d = hamming_matrix(m, n)
    dist = Distortion.database_hamming(m, n)
    tight = cf.h(cf.epsilon_tilde_x(prior), m, n)
    entropy = float(-(prior.probs * np.log(prior.probs)).sum())
    seen = set()
    for slope in (0.5, 1.0, 1.5, 2.0, 3.5):
        D, info, W = blahut_arimoto(prior.probs, d, slope)
        budget_checks = run(
            prior, dist, "mutual_information", "max_distortion", D, info, mechanism=W
        )
        eps_checks = run(prior, dist, "mutual_information", "epsilon", info, D, mechanism=W)
        assert all(c.passed for c in budget_checks + eps_checks), budget_checks + eps_checks
        if D <= tight:
            seen.add("exact")
            check = passes(budget_checks, "wang_thm2_pdmip_value")
            assert check.expected == pytest.approx(info, abs=1e-9)
            passes(budget_checks, "wang_thm2_pdmip_mechanism_is_E_i")
            passes(eps_checks, "wang_thm2_pdmip_distortion")
            passes(eps_checks, "wang_thm2_pdmip_mechanism_is_E_i")
        elif cf.shannon_lower_bound(entropy, D, m, n) > 0:
            seen.add("bound")
            check = passes(budget_checks, "wang_thm2_pdmip_shannon_lower_bound", "at_least")
            assert check.expected < info - 1e-4  # strictly a bound out there
            passes(eps_checks, "wang_thm2_pdmip_shannon_lower_bound_distortion", "at_least")
    assert "exact" in seen


def test_pdmip_outside_range_is_a_bound_only():
    # non-product prior at D = 0.3 > h(ε̃_X) = 0.2597: the optimum 0.4361219582 exceeds the bound
    checks = run(NONPRODUCT, HAM22, "mutual_information", "max_distortion", 0.3, 0.4361219582)
    check = passes(checks, "wang_thm2_pdmip_shannon_lower_bound", "at_least")
    assert check.expected == pytest.approx(0.434436050222, abs=1e-10)
    absent(checks, "wang_thm2_pdmip_value")
    fails(
        run(NONPRODUCT, HAM22, "mutual_information", "max_distortion", 0.3, 0.42),
        "wang_thm2_pdmip_shannon_lower_bound",
    )
    # beyond D₀ = Σ (1 − max marginal) the release can be constant: level 0
    checks = run(PRODUCT, HAM22, "mutual_information", "max_distortion", 0.75, 0.0)
    passes(checks, "wang_thm2_pdmip_zero_beyond_constant_release")
    fails(
        run(PRODUCT, HAM22, "mutual_information", "max_distortion", 0.75, 0.039),
        "wang_thm2_pdmip_zero_beyond_constant_release",
    )


@pytest.mark.parametrize("p", [0.1, 0.3, 0.5])
def test_bernoulli_rate_distortion(p):
    """R(D) = h_b(p) − h_b(D) on D ≤ min(p, 1−p), Cover & Thomas Thm 10.3.1."""
    prior, dist = Prior([p, 1 - p]), Distortion.hamming(2)
    hit = 0
    for slope in (1.0, 2.0, 4.0):
        D, info, W = blahut_arimoto(np.array([p, 1 - p]), 1 - np.eye(2), slope)
        checks = run(prior, dist, "mutual_information", "max_distortion", D, info, mechanism=W)
        assert all(c.passed for c in checks), checks
        if D < min(p, 1 - p) - 1e-9:
            check = passes(checks, "rate_distortion_hamming_value")
            assert check.expected == pytest.approx(
                cf.binary_entropy(p) - cf.binary_entropy(D), abs=1e-12
            )
            passes(checks, "rate_distortion_hamming_mechanism_is_E_i")
            fails(
                run(prior, dist, "mutual_information", "max_distortion", D, info + 0.01),
                "rate_distortion_hamming_value",
            )
            hit += 1
    assert hit >= 1


@pytest.mark.parametrize("k", [3, 4])
def test_uniform_k_rate_distortion_both_modes(k):
    prior, dist = Prior(np.full(k, 1 / k)), Distortion.hamming(k)
    for budget in (0.1, 0.4, 0.6):
        value = cf.rate_distortion_hamming_uniform(k, budget)
        passes(
            run(prior, dist, "mutual_information", "max_distortion", budget, value),
            "rate_distortion_hamming_value",
        )
        passes(
            run(prior, dist, "mutual_information", "epsilon", value, budget),
            "rate_distortion_hamming_distortion",
        )
    # beyond (k−1)/k the constant release costs nothing
    passes(
        run(prior, dist, "mutual_information", "max_distortion", 0.99, 0.0),
        "rate_distortion_hamming_zero_beyond_constant_release",
    )
    passes(
        run(prior, dist, "mutual_information", "epsilon", 0.0, (k - 1) / k),
        "rate_distortion_hamming_zero_beyond_constant_release",
    )
    # ε ≥ H(X): the identity release, D* = 0
    passes(
        run(prior, dist, "mutual_information", "epsilon", ln(k) + 0.2, 0.0),
        "rate_distortion_hamming_distortion",
    )


# =============================================================================================
# Calmon & Fawaz Corollary 1 on joint priors
# =============================================================================================
@pytest.mark.parametrize(
    ("delta", "value"),
    [(0.1, 0.704214597221), (0.3, 0.279803832445), (0.5, 0.058891517828)],
)
def test_calmon_fawaz_corollary1_reference(delta, value):
    joint, dist = cor1_joint(), Distortion.hamming(3)
    checks = run(joint, dist, "mutual_information", "max_distortion", delta, value)
    check = passes(checks, "calmon_fawaz_cor1_rate_distortion_value", "equal")
    assert check.expected == pytest.approx(ln(3) - cf.binary_entropy(delta) - delta * ln(2))
    fails(
        run(joint, dist, "mutual_information", "max_distortion", delta, value - 0.01),
        "calmon_fawaz_cor1_rate_distortion_value",
    )
    checks = run(joint, dist, "mutual_information", "epsilon", value, delta)
    passes(checks, "calmon_fawaz_cor1_rate_distortion_distortion")
    fails(
        run(joint, dist, "mutual_information", "epsilon", value, delta + 0.01),
        "calmon_fawaz_cor1_rate_distortion_distortion",
    )


def test_calmon_fawaz_corollary1_nonuniform_y_against_blahut_arimoto():
    # S on 5 points, Y = f(S) on 3 symbols with p_Y = (0.5, 0.3, 0.2)
    joint = np.zeros((5, 3))
    joint[0, 0], joint[1, 0], joint[2, 1], joint[3, 1], joint[4, 2] = 0.2, 0.3, 0.1, 0.2, 0.2
    prior, dist = JointPrior(joint), Distortion.hamming(3)
    p_y = prior.p_y
    for slope in (1.5, 3.0):
        D, info, W = blahut_arimoto(p_y, 1 - np.eye(3), slope)
        # I(S;U) = I(Y;U) for Y = f(S): measured on the joint prior, not assumed
        from privopt.measures import mutual_information

        assert mutual_information(prior, W) == pytest.approx(info, abs=1e-12)
        checks = run(prior, dist, "mutual_information", "max_distortion", D, info, mechanism=W)
        assert checks and all(c.passed for c in checks), checks
        if D <= 2 * 0.2:
            passes(checks, "calmon_fawaz_cor1_rate_distortion_value")
            passes(checks, "calmon_fawaz_cor1_rate_distortion_mechanism_is_E_i")
        else:
            passes(checks, "calmon_fawaz_cor1_rate_distortion_shannon_lower_bound")


def test_calmon_fawaz_corollary1_not_applicable():
    dist = Distortion.hamming(3)
    # Y is not a function of S: one secret maps to two observations
    joint = np.array([[0.2, 0.1, 0.0], [0.0, 0.3, 0.0], [0.0, 0.0, 0.4]])
    checks = run(JointPrior(joint), dist, "mutual_information", "max_distortion", 0.3, 0.2)
    assert checks == []
    # non-Hamming distortion: only the zero-leakage check can apply, and not at this budget
    checks = run(
        cor1_joint(), Distortion.absolute(3), "mutual_information", "max_distortion", 0.3, 0.2
    )
    assert checks == []
    # other notions on joint priors get no rate–distortion check
    checks = run(cor1_joint(), dist, "max_information_leakage", "max_distortion", 0.3, 0.2)
    assert checks == []


# =============================================================================================
# Zero leakage: the best constant release
# =============================================================================================
def counting_query_joint(n: int = 4, p: float = 0.3) -> JointPrior:
    joint = np.zeros((2**n, n + 1))
    for s, bits in enumerate(itertools.product((0, 1), repeat=n)):
        y = sum(bits)
        joint[s, y] = p**y * (1 - p) ** (n - y)
    return JointPrior(joint)


@pytest.mark.parametrize(
    "notion",
    [
        "mutual_information",
        "max_information_leakage",
        "pml",
        "maximal_leakage",
        "ldp",
        "information_privacy",
    ],
)
def test_zero_leakage_counting_query(notion):
    prior, dist = counting_query_joint(), Distortion.absolute(5)
    checks = run(prior, dist, notion, "epsilon", 0.0, 0.6802)
    check = passes(checks, "zero_leakage_constant_release", "equal")
    assert check.expected == pytest.approx(0.6802, abs=1e-12)
    fails(run(prior, dist, notion, "epsilon", 0.0, 0.6), "zero_leakage_constant_release")
    passes(
        run(prior, dist, notion, "max_distortion", 0.7, 0.0), "zero_leakage_constant_release_level"
    )
    assert run(prior, dist, notion, "max_distortion", 0.5, 0.2) == []
    assert run(prior, dist, notion, "epsilon", 0.3, 0.45) == []


@pytest.mark.parametrize("notion", ["pml", "ldp", "maximal_leakage"])
def test_zero_leakage_single_alphabet_against_lp(notion):
    p = np.array([0.5, 0.3, 0.2])
    d = np.array([[0.0, 1.0, 4.0], [1.0, 0.0, 1.0], [4.0, 1.0, 0.0]])
    value, _ = lp_optimum(p, d, notion, 0.0)
    checks = run(Prior(p), Distortion.from_matrix(d), notion, "epsilon", 0.0, value)
    check = passes(checks, "zero_leakage_constant_release")
    assert check.expected == pytest.approx(value, abs=1e-10)
    assert value == pytest.approx(0.7, abs=1e-10)  # always answer u = 1: 0.5·1 + 0.2·1


def test_zero_leakage_needs_y_function_of_s_and_a_notion_that_forces_independence():
    joint = np.array([[0.2, 0.1, 0.0], [0.0, 0.3, 0.0], [0.0, 0.0, 0.4]])
    assert run(JointPrior(joint), Distortion.absolute(3), "pml", "epsilon", 0.0, 0.5) == []
    assert run(Prior([0.5, 0.5]), Distortion.absolute(2), "robust_pml", "epsilon", 0.0, 0.5) == []
    # DP on a custom relation: level 0 does not force independence
    rel = NeighborRelation.from_pairs(3, [(0, 1)])
    assert (
        run(
            Prior([0.5, 0.3, 0.2]), Distortion.absolute(3), "dp", "epsilon", 0.0, 0.5, neighbors=rel
        )
        == []
    )


# =============================================================================================
# Large databases: cheap, nothing enumerated
# =============================================================================================
def test_iid_database_of_2_to_the_30_is_cheap():
    prior = DatabasePrior(2, 30, row_probs=[0.6, 0.4])
    dist = Distortion.database_hamming(2, 30)
    tracemalloc.start()
    try:
        checks = run(prior, dist, "identifiability", "epsilon", 1.0, cf.h(1.0, 2, 30))
        checks += run(prior, dist, "dp", "epsilon", 1.0, cf.h(1.0, 2, 30))
        checks += run(
            prior, dist, "mutual_information", "max_distortion", 3.0, cf.pdmip_value(prior, 3.0)
        )
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 * 2**20  # nothing of the 2^30 databases' size was held
    assert "probs" not in prior.__dict__  # the 2^30 pmf was never built
    names = by_name(checks)
    assert names["wang_thm1_identifiability_equals_h"].passed
    assert names["wang_thm2_pdmip_value"].passed
    assert names["wang_thm1_dp_at_least_h_shifted"].passed


def test_large_non_iid_database_only_prior_free_checks():
    m, n = 2, 13  # 8192 databases > 4096: the pmf is not read
    rng = np.random.default_rng(0)
    prior = DatabasePrior(m, n, probs=rng.dirichlet(np.ones(m**n)))
    dist = Distortion.database_hamming(m, n)
    checks = run(prior, dist, "dp", "epsilon", 1.0, cf.h(1.0, m, n) - 0.1)
    assert [c.name for c in checks] == ["wang_thm1_dp_at_most_h"]
    assert run(prior, dist, "identifiability", "epsilon", 1.0, 1.0) == []


# =============================================================================================
# The shipped problem files: their reference answers pass every check that applies
# =============================================================================================
def _problem_checks(path):
    from privopt.io.files import load_problem
    from privopt.notions import get_notion

    spec = load_problem(path)
    ref = spec.reference
    mode = spec.mode
    status = ref.get("status", "optimal")
    value = ref.get("distortion") if mode == "epsilon" else ref.get("epsilon")
    requested = spec.epsilon if mode == "epsilon" else spec.max_distortion
    tol = max(ref.get("tolerance", 1e-6), 1e-9)
    # through the notion, as the solve driver asks (a notion may map or bound other forms)
    return get_notion(spec.notion).closed_form_checks(
        spec.prior,
        spec.distortion,
        mode,
        options=spec.options,
        neighbors=spec.neighbors,
        requested=requested,
        level=value if mode == "max_distortion" else None,
        expected_distortion=value if mode == "epsilon" else None,
        status=status,
        least_achievable=ref.get("least_achievable"),
        tol=tol,
    )


def test_shipped_problem_references_pass_every_applicable_check():
    import pathlib

    root = pathlib.Path(__file__).resolve().parents[2] / "problems"
    covered = {}
    for path in sorted(root.glob("*.toml")):
        checks = _problem_checks(path)
        assert all(c.passed for c in checks), (path.name, [c for c in checks if not c.passed])
        covered[path.stem] = {c.name for c in checks}
    # the closed forms reproduce the files' references (these problems have one)
    expected = {
        "calmon_fawaz_corollary1": "calmon_fawaz_cor1_rate_distortion_value",
        "calmon_fawaz_corollary1_epsilon": "calmon_fawaz_cor1_rate_distortion_distortion",
        "counting_query_thm1": "zero_leakage_constant_release",
        "ldp_randomized_response": "kairouz_krr_uniform",
        "maximal_leakage": "maximal_leakage_hamming_knapsack",
        "pml_uniform_ternary": "pml_uniform_hamming",
        "pml_binary_randomized_response": "pml_uniform_hamming",
        "wang_m3_identifiability": "wang_thm1_identifiability_at_least_h",
        "wang_m3_dp": "wang_thm1_dp_at_least_h_shifted",
        "wang_product_identifiability_infeasible": "wang_lemma3_identifiability_feasibility",
        "wang_pdmip": "wang_thm2_pdmip_value",
        "wang_nonproduct_dp": "wang_thm1_dp_at_least_h_shifted",
        "wang_uniform_identifiability_budget": "wang_thm1_identifiability_level_equals_h_inv",
        "wang_m3_product_identifiability_budget": "wang_thm1_identifiability_level_equals_h_inv",
        "wang_m3_uniform_dp_budget": "wang_thm1_dp_equals_h_uniform_level",
        "wang_nonproduct_dp_budget": "wang_thm1_dp_level_at_least",
        "maximal_alpha_leakage": "maximal_leakage_hamming_knapsack_bound",
    }
    for stem, name in expected.items():
        if stem in covered:
            assert name in covered[stem], (stem, covered[stem])
    assert set(expected) <= set(covered)


def test_every_shipped_hamming_problem_reports_its_checks_in_the_json(capsys):
    """``privopt solve FILE --json`` carries the applicable checks, with their values, for
    every shipped problem on databases or with Hamming distortion."""
    import json
    import pathlib

    from privopt.cli import main
    from privopt.io.files import load_problem

    root = pathlib.Path(__file__).resolve().parents[2] / "problems"
    seen = 0
    for path in sorted(root.glob("*.toml")):
        spec = load_problem(path)
        hamming = spec.distortion is not None and spec.distortion.kind in (
            "hamming",
            "database_hamming",
        )
        if not (getattr(spec.prior, "is_database", False) or hamming):
            continue
        if spec.notion == "robust_pml":  # a class of priors: no closed form applies
            continue
        if spec.neighbors is not None and not isinstance(spec.neighbors, str):
            continue  # the file's own neighbour graph: the papers' closed forms do not apply
        code = main(["solve", str(path), "--json"])
        data = json.loads(capsys.readouterr().out)
        assert code in (0, 1), (path.name, data.get("message"))
        checks = data["closed_form"]
        assert checks, path.name
        for check in checks:
            assert check["passed"] is True, (path.name, check)
            assert isinstance(check["statement"], str) and check["source"]
            if check["relation"] in ("equal", "at_least", "at_most"):
                assert isinstance(check["expected"], float), (path.name, check)
                assert isinstance(check["got"], float), (path.name, check)
        seen += 1
    assert seen >= 15


def _lip_lp_uniform_hamming(k: int, eps: float) -> float:
    """Independent LP: least P(U ≠ X) of an ε-LIP channel on a uniform prior over k symbols,
    written in the joint q[x,u] = p(x) W[x,u] with the output law r(u) = Σ_x q[x,u]."""
    import cvxpy as cp

    q = cp.Variable((k, k), nonneg=True)
    r = cp.sum(q, axis=0)
    p = np.full(k, 1.0 / k)
    cons = [cp.sum(q, axis=1) == p]
    for x in range(k):  # e^-ε p(x) r(u) ≤ q[x,u] ≤ e^ε p(x) r(u)
        cons += [q[x, :] <= np.exp(eps) * p[x] * r, q[x, :] >= np.exp(-eps) * p[x] * r]
    prob = cp.Problem(cp.Minimize(1 - cp.trace(q)), cons)
    prob.solve(solver="CLARABEL")
    return float(prob.value)


@pytest.mark.parametrize("k", [2, 3, 5])
@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0, 2.5, 6.0])
def test_lip_uniform_hamming_closed_form_matches_an_independent_lp(k, eps):
    assert cf.lip_uniform_hamming_distortion(eps, k) == pytest.approx(
        _lip_lp_uniform_hamming(k, eps), abs=1e-7
    )
    D = cf.lip_uniform_hamming_distortion(eps, k)
    assert cf.lip_uniform_hamming_level(D, k) == pytest.approx(eps, abs=1e-12)


def test_lip_uniform_hamming_is_checked_in_both_modes():
    import privopt as po

    result = po.design(np.full(4, 0.25), "hamming", "information_privacy", epsilon=0.7)
    (check,) = [c for c in result.closed_form if c.name == "lip_uniform_hamming"]
    assert check.passed and check.expected == pytest.approx(
        cf.lip_uniform_hamming_distortion(0.7, 4)
    )
    result = po.design(np.full(4, 0.25), "hamming", "information_privacy", max_distortion=0.3)
    (check,) = [c for c in result.closed_form if c.name == "lip_uniform_hamming_level"]
    assert check.passed and result.epsilon == pytest.approx(
        cf.lip_uniform_hamming_level(0.3, 4), abs=1e-6
    )
    wrong = closed_form_checks(
        Prior(np.full(4, 0.25)),
        Distortion.hamming(4),
        "information_privacy",
        "epsilon",
        requested=0.7,
        expected_distortion=cf.lip_uniform_hamming_distortion(0.7, 4) + 0.01,
        level=None,
        tol=1e-6,
    )
    assert [c.passed for c in wrong if c.name == "lip_uniform_hamming"] == [False]


@pytest.mark.parametrize("eps", [1.38e-33, 1e-12, 1e-7])
def test_mutual_information_near_zero_is_solved_not_rejected(eps):
    """Found by hypothesis: near ε = 0 every constant release is (nearly) optimal too, so the
    entrywise "mechanism is E_i" comparison must not reject a right answer."""
    import privopt as po

    result = po.design(np.full(3, 1 / 3), "hamming", "mutual_information", epsilon=eps)
    assert str(result.status) == "optimal"
    assert result.distortion == pytest.approx(2 / 3, abs=1e-3)
    assert all(c.passed for c in result.closed_form)
    assert not any("mechanism" in c.name for c in result.closed_form)
