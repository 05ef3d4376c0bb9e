"""Closed-form checks of an optimal-mechanism answer.

Given a problem (prior, distortion, notion, mode and requested value) and the answer a solver
gave (its level or least distortion, its status and, optionally, its mechanism),
:func:`closed_form_checks` returns every theorem of the papers that pins the answer down on
this problem, already evaluated: an exact value, a bound, or (in)feasibility. Only closed
forms are used (no solver), so the checks are cheap and independent of how the answer was
computed.

The theorems, and where they apply (``D`` is the Hamming distance, ``h`` and ``h⁻¹`` are the
functions of Wang, Ying & Zhang (2016), eqs. (36) and (19)):

* **Wang, Ying & Zhang (2016)** on databases ``Dⁿ`` with Hamming distortion and Hamming
  neighbours (a single alphabet of ``k`` symbols with Hamming distortion is ``D¹``, ``m = k``,
  where the Hamming relation is "all pairs"): identifiability is infeasible exactly below
  ``ε_X`` (Lemma 3 and the constant release); ``D*_I(ε) = h(ε)`` for ``ε ≥ ε̃_X`` and
  ``≥ h(ε)`` always (Thm 1 through the relaxation R-PD and Lemma 1), with the unique optimum
  E_i; ``h(ε + ε_X) ≤ D*_DP(ε) ≤ h(ε)`` (Thm 1, eq. (21)), with equality and the unique
  optimum E_d for a uniform prior; the mutual-information optimum is the Shannon lower bound
  on ``D ≤ h(ε̃_X)`` (Thm 2), with the unique optimum E_i.
* **Kairouz, Oh & Viswanath (2016)**: ε-LDP on a uniform prior, Hamming distortion: k-ary
  randomised response, ``D* = (k−1)/(e^ε + k − 1)``.
* **Saeidian et al. (2023)**: ε-PML on a uniform prior with Hamming distortion,
  ``D* = max(0, 1 − e^ε/k)``; on any prior, PML is at least as costly as maximal leakage.
* **Maximal leakage** (Issa, Wagner & Kamath (2020)) with Hamming distortion: a fractional
  knapsack, exact for every prior.
* **Calmon & Fawaz (2012), Cor. 1**: when ``Y = f(S)``, least ``I(S;U)`` is the rate–distortion
  function of ``Y``; with Hamming distortion that is the Shannon lower bound (exact on
  ``Δ ≤ (k−1) min p_Y``, e.g. ``ln k − h_b(Δ) − Δ ln(k−1)`` for a uniform ``Y``).
* **Zero leakage** (Calmon & Fawaz (2012), Thm 2): at level 0, the average and maximum
  information leakage, PML, maximal leakage, LDP and information privacy all force ``U``
  independent of the secret, hence of the input when ``Y = f(S)``; so the least distortion is
  that of the best constant release, and any budget at least that costs level 0.

Corollary 2 of Calmon & Fawaz (the ζ form) rewrites the maximum-information-leakage program
into an equivalent one but gives no closed value; it is in :mod:`privopt.papers.paper_programs`.

All values are in nats.
"""

from __future__ import annotations

__all__ = [
    "ClosedFormCheck",
    "closed_form_checks",
    "as_bound",
    "zero_leakage_checks",
    "RELATIONS",
    "CHECKED_NOTIONS",
    "MAX_DENSE",
    "identifiability_bound",
    "identifiability_candidate",
    "identifiability_least_level",
    "wang_identifiability_applies",
]

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from privopt._io import json_number
from privopt.errors import InfeasibleError, InputError, PrivoptError
from privopt.measures import shannon_entropy
from privopt.model import (
    DatabasePrior,
    Distortion,
    JointPrior,
    NeighborRelation,
    Prior,
    database_digits,
)
from privopt.papers import closed_forms as cf

#: Relations a check can assert between the answer and the closed form.
RELATIONS = ("equal", "at_least", "at_most", "infeasible", "feasible")

#: Notion names accepted by :func:`closed_form_checks` (canonical names).
CHECKED_NOTIONS = (
    "dp",
    "identifiability",
    "ldp",
    "pml",
    "information_privacy",
    "maximal_leakage",
    "mutual_information",
    "max_information_leakage",
    "robust_pml",
    "metric_dp",  # no check without the metric; the driver checks a discrete metric as ldp
)

#: Below this level (the slope of E_i or E_d) the optimal mechanism is too close to being
#: non-unique for an entrywise comparison (see ``_mechanism_check``).
MECHANISM_CHECK_MIN_LEVEL = 1e-3

#: Largest alphabet (or number of databases) whose pmf, distortion or mechanism the checks
#: read densely; larger database priors are handled only when their rows are i.i.d.
MAX_DENSE = 4096

_ALIASES = {
    "differential_privacy": "dp",
    "local_differential_privacy": "ldp",
    "average_leakage": "mutual_information",
    "lip": "information_privacy",
    "d_privacy": "metric_dp",
    "metric_privacy": "metric_dp",
    "geo_indistinguishability": "metric_dp",
}
_MODES = ("epsilon", "max_distortion")
#: Notions whose level 0 forces the release to be independent of the secret, for callers that
#: name a notion without saying so (the solve driver passes the notion's own attribute).
_ZERO_MEANS_INDEPENDENT = (
    "ldp",
    "pml",
    "maximal_leakage",
    "information_privacy",
    "mutual_information",
    "max_information_leakage",
)

_WANG = "Wang, Ying & Zhang (2016)"
_KOV = "Kairouz, Oh & Viswanath (2016)"
_CF = "Calmon & Fawaz (2012)"
_SAEIDIAN = "Saeidian et al. (2023)"


# =============================================================================================
# The check record
# =============================================================================================
@dataclass(frozen=True)
class ClosedFormCheck:
    """One closed-form statement about an answer, evaluated.

    Attributes
    ----------
    name : str
        Short stable identifier, e.g. ``"wang_thm1_identifiability_equals_h"``.
    statement : str
        The statement in words, e.g. ``"D*_I(ε) = h(ε) for ε ≥ ε̃_X"``.
    source : str
        Citation: paper, theorem and equation.
    relation : str
        ``"equal"``, ``"at_least"``, ``"at_most"`` (the answer against ``expected``),
        ``"infeasible"`` or ``"feasible"`` (the answer's status).
    conditions : str
        Why the statement applies to this problem, with the numbers.
    expected : float or None
        The closed-form value (the bound for ``at_least``/``at_most``; the least achievable
        level for feasibility checks).
    got : float or None
        The answer's value (its ``least_achievable`` for feasibility checks).
    difference : float or None
        ``got − expected`` when both are finite.
    tolerance : float
        Relative tolerance: equality holds when ``|got − expected| ≤ tol·(1 + |expected|)``,
        bounds allow the same slack.
    passed : bool
        Whether the answer agrees with the statement.
    """

    name: str
    statement: str
    source: str
    relation: str
    conditions: str
    expected: float | None
    got: float | None
    difference: float | None
    tolerance: float
    passed: bool

    def to_dict(self) -> dict:
        """The check as a JSON-ready dict (non-finite numbers become ``None``).

        Returns
        -------
        dict
            Keys ``name``, ``statement``, ``source``, ``relation``, ``conditions``,
            ``expected``, ``got``, ``difference``, ``tolerance``, ``passed``.
        """
        return {
            "name": self.name,
            "statement": self.statement,
            "source": self.source,
            "relation": self.relation,
            "conditions": self.conditions,
            "expected": json_number(self.expected),
            "got": json_number(self.got),
            "difference": json_number(self.difference),
            "tolerance": json_number(self.tolerance),
            "passed": bool(self.passed),
        }


def _fmt(x: float) -> str:
    return f"{x:.6g}"


def _slack(expected: float, tol: float) -> float:
    return tol * (1.0 + abs(expected))


def _compare(
    name: str,
    statement: str,
    source: str,
    relation: str,
    conditions: str,
    expected: float,
    got: float | None,
    tol: float,
) -> ClosedFormCheck:
    """Evaluate ``got`` against ``expected`` under ``relation`` (equal, at_least, at_most)."""
    expected = float(expected)
    value = None if got is None else float(got)
    if value is None or math.isnan(value):
        passed = False
    elif relation == "equal":
        passed = value == expected or abs(value - expected) <= _slack(expected, tol)
    elif relation == "at_least":
        passed = value >= expected - _slack(expected, tol)
    elif relation == "at_most":
        passed = value <= expected + _slack(expected, tol)
    else:  # pragma: no cover - internal misuse
        raise ValueError(relation)
    diff = (
        value - expected
        if value is not None and math.isfinite(value) and math.isfinite(expected)
        else None
    )
    return ClosedFormCheck(
        name, statement, source, relation, conditions, expected, value, diff, tol, bool(passed)
    )


# =============================================================================================
# The answer under test
# =============================================================================================
@dataclass(frozen=True)
class _Answer:
    mode: str
    requested: float
    value: float | None  # D*(ε) in epsilon mode, ε*(D) in budget mode
    status: str
    least_achievable: float | None
    mechanism: object | None
    tol: float

    @property
    def eps_mode(self) -> bool:
        return self.mode == "epsilon"

    @property
    def infeasible(self) -> bool:
        return self.status == "infeasible"

    @property
    def mech_tol(self) -> float:
        # an optimal mechanism is accurate only to about the square root of its value's
        # accuracy along flat directions (interior-point and Blahut–Arimoto answers)
        return math.sqrt(self.tol)

    def dense_mechanism(self, rows: int, cols: int) -> np.ndarray | None:
        mech = self.mechanism
        if mech is None:
            return None
        shape = getattr(mech, "shape", None)
        if shape is None or tuple(shape) != (rows, cols) or rows > MAX_DENSE:
            return None
        arr = np.asarray(mech, dtype=float)
        return arr if arr.shape == (rows, cols) else None


# =============================================================================================
# Hamming views of a problem
# =============================================================================================
class _HammingView:
    """A problem read as Wang et al.'s setting: a prior on ``Dⁿ`` (``|D| = m``) with Hamming
    distortion, output alphabet = input alphabet. A single alphabet is ``n = 1``.

    ``prior`` is a :class:`DatabasePrior`; ``wang_default`` says whether the problem's default
    neighbour relation is the Hamming relation of this view; ``describe`` names the prior.
    """

    def __init__(self, prior: DatabasePrior, wang_default: bool, what: str):
        self.prior = prior
        self.m, self.n = prior.m, prior.n
        self.size = prior.size
        self.wang_default = wang_default
        self.what = what

    # --- what can be read cheaply --------------------------------------------------------
    @property
    def iid(self) -> bool:
        return self.prior.is_iid

    @property
    def readable(self) -> bool:
        """True when prior-dependent quantities are cheap (i.i.d. rows or a small pmf)."""
        return self.iid or self.size <= MAX_DENSE

    @cached_property
    def full_support(self) -> bool:
        if self.iid:
            return bool((self.prior.row_probs > 0).all())
        return bool((self.prior.probs > 0).all())

    @cached_property
    def uniform(self) -> bool:
        q = self.prior.row_probs if self.iid else self.prior.probs
        return bool(np.allclose(q, 1.0 / q.size, rtol=0, atol=1e-15))

    @cached_property
    def eps_x(self) -> float:
        return 0.0 if self.uniform else cf.epsilon_x(self.prior)

    @cached_property
    def eps_tilde(self) -> float:
        return 0.0 if self.uniform else cf.epsilon_tilde_x(self.prior)

    @cached_property
    def entropy(self) -> float:
        if self.iid:
            q = self.prior.row_probs
            return self.n * shannon_entropy(q[q > 0])
        p = self.prior.probs
        return shannon_entropy(p[p > 0])

    @cached_property
    def d_constant(self) -> float:
        """``D₀ = min_y E d(X, y)``: the constant release's least distortion. For Hamming on
        ``Dⁿ`` it depends on the row marginals only: ``Σ_i (1 − max_a p_i(a))``."""
        if self.iid:
            return self.n * (1.0 - float(self.prior.row_probs.max()))
        tensor = self.prior.probs.reshape((self.m,) * self.n)
        total = 0.0
        for i in range(self.n):
            marg = tensor.sum(axis=tuple(j for j in range(self.n) if j != i))
            total += 1.0 - float(marg.max())
        return total

    def h(self, eps: float) -> float:
        return cf.h(eps, self.m, self.n)

    @property
    def h0(self) -> float:
        return self.n * (self.m - 1) / self.m

    def h_inv(self, D: float) -> float:
        """``max(h⁻¹(D), 0)`` for ``D > 0`` (``h⁻¹ ≤ 0`` once ``D ≥ h(0)``)."""
        return 0.0 if D >= self.h0 else max(cf.h_inv(D, self.m, self.n), 0.0)

    def setting(self) -> str:
        if self.n == 1:
            return f"{self.what} on k = {self.m} symbols"
        return f"{self.what} on Dⁿ, m = {self.m}, n = {self.n}"

    @property
    def tight_name(self) -> str:
        """How the end of the exact range ``h(ε̃_X)`` reads (``(k−1)·min p`` for ``n = 1``)."""
        return "h(ε̃_X)" if self.n > 1 else "h(ε̃_X) = (k−1)·min p"

    # --- the optimal mechanisms -----------------------------------------------------------
    def exponential_distance(self, mechanism: np.ndarray, eps: float, p_y=None) -> float:
        """``max |W − E|`` entrywise, ``E = E_i`` (``p_y`` given) or ``E_d``, row-chunked.

        ``E_i[x,y] ∝ p_Y(y) e^{−ε d(x,y)}`` (Wang, Ying & Zhang (2016), eq. (29));
        ``E_d[x,y] ∝ e^{−ε d(x,y)}`` (eq. (30)); rows normalised.
        """
        digits = database_digits(self.m, self.n)
        r = math.exp(-eps)
        chunk = max(1, 2**21 // max(1, self.size * self.n))
        worst = 0.0
        for start in range(0, self.size, chunk):
            rows = digits[start : start + chunk]
            dist = (rows[:, None, :] != digits[None, :, :]).sum(axis=2)
            ref = np.power(r, dist)
            if p_y is not None:
                ref = ref * p_y[None, :]
            ref /= ref.sum(axis=1, keepdims=True)
            worst = max(worst, float(np.abs(mechanism[start : start + chunk] - ref).max()))
        return worst


def _is_zero_one(distortion: Distortion, size: int) -> bool:
    """True when ``d[y,u] = [y ≠ u]`` on one alphabet of ``size`` symbols."""
    if distortion.shape != (size, size):
        return False
    if distortion.is_database_hamming:
        return distortion.params.get("n") == 1 and distortion.params.get("m") == size
    if size > MAX_DENSE:
        return distortion.kind == "hamming"
    return bool(np.array_equal(distortion.matrix, 1.0 - np.eye(size)))


def _describe_prior(prior: DatabasePrior, single: bool) -> str:
    if not prior.is_iid and prior.size > MAX_DENSE:
        return "prior"  # not read: its pmf is too large to inspect cheaply
    if prior.is_iid:
        q = prior.row_probs
        if np.allclose(q, 1.0 / q.size, rtol=0, atol=1e-15):
            return "uniform prior"
        label = "prior" if prior.n == 1 else "i.i.d. rows"
        return f"{label} {np.array2string(q, precision=4, separator=', ')}"
    p = prior.probs
    if np.allclose(p, 1.0 / p.size, rtol=0, atol=1e-15):
        return "uniform prior"
    if single:
        return f"prior {np.array2string(p, precision=4, separator=', ', threshold=8)}"
    return "product prior" if prior.is_product else "non-product prior"


def _hamming_view(prior, distortion: Distortion) -> _HammingView | None:
    """The Wang et al. reading of a problem, or ``None`` if its distortion is not Hamming."""
    if isinstance(prior, JointPrior):
        return None
    if isinstance(prior, DatabasePrior):
        if distortion.is_database_hamming:
            if (distortion.params.get("m"), distortion.params.get("n")) != (prior.m, prior.n):
                return None
            return _HammingView(prior, True, _describe_prior(prior, prior.n == 1))
        if prior.size <= MAX_DENSE and _is_zero_one(distortion, prior.size):
            if prior.n == 1:
                return _HammingView(prior, True, _describe_prior(prior, True))
            single = DatabasePrior(prior.size, 1, probs=prior.probs)
            # the default relation on Dⁿ (n > 1) is Hamming, not all pairs
            return _HammingView(single, False, _describe_prior(single, True))
        return None
    if isinstance(prior, Prior) and prior.size >= 2 and _is_zero_one(distortion, prior.size):
        single = DatabasePrior(prior.size, 1, probs=prior.probs)
        return _HammingView(single, True, _describe_prior(single, True))
    return None


def _wang_view(prior, distortion: Distortion, neighbors) -> _HammingView | None:
    view = _hamming_view(prior, distortion)
    if view is None or not _relation_is_wang(view, neighbors) or view.size > MAX_DENSE:
        return None
    return view if view.full_support else None


def wang_identifiability_applies(prior, distortion: Distortion, neighbors) -> bool:
    """Whether Wang, Ying & Zhang's identifiability setting holds (a full-support prior on
    ``Dⁿ`` or one alphabet of at most :data:`MAX_DENSE` symbols, Hamming distortion and
    neighbours), so that :func:`identifiability_candidate` can answer from ε̃_X on.

    Parameters
    ----------
    prior : Prior or DatabasePrior
    distortion : Distortion
    neighbors : NeighborRelation, str or None

    Returns
    -------
    bool
    """
    return _wang_view(prior, distortion, neighbors) is not None


def identifiability_candidate(prior, distortion: Distortion, neighbors, eps: float):
    """[Wang-Ying-Zhang]'s optimal identifiability mechanism E_i at ε, with its lower bound.

    Where their setting applies (a prior on ``Dⁿ`` or one alphabet, Hamming distortion and
    neighbours, full support, ε ≥ ε̃_X), E_i of eq. (29) has level ε and distortion
    ``h(ε)`` (Lemma 4), and ``h(ε)`` bounds ``D*_I(ε)`` from below (Lemma 1, R-PD relaxes
    PD-I; Thm 1). A solver handed the ``e^{±ε}`` coefficients of the program at large ε
    misses this optimum by up to 1e-2; the closed form does not.

    Parameters
    ----------
    prior : Prior or DatabasePrior
    distortion : Distortion
    neighbors : NeighborRelation, str or None
    eps : float

    Returns
    -------
    tuple of (numpy.ndarray, float) or None
        ``(E_i as a dense matrix, h(ε))``, or ``None`` where the closed form does not apply.
    """
    view = _wang_view(prior, distortion, neighbors)
    if view is None or not math.isfinite(eps) or eps <= 0:
        return None
    if eps < view.eps_tilde * (1 - 1e-12):
        return None  # E_i exists from ε̃_X on, ε̃_X itself included
    try:
        mech = cf.identifiability_mechanism(view.prior, eps)
    except PrivoptError:
        return None
    return mech.matrix, float(view.h(eps))


def identifiability_bound(prior, distortion: Distortion, neighbors, eps: float):
    """``h(ε)``, a lower bound on the least distortion of ε-identifiability, where
    [Wang-Ying-Zhang]'s setting applies, and whether it is the optimum itself.

    R-PD relaxes PD-I and has optimum ``h(ε)`` for every ``ε ≥ 0`` (Lemma 1), so
    ``D*_I(ε) ≥ h(ε)``; from ``ε̃_X`` on, E_i attains it (Thm 1, Lemma 4).

    Parameters
    ----------
    prior : Prior or DatabasePrior
    distortion : Distortion
    neighbors : NeighborRelation, str or None
    eps : float
        The level, ``≥ 0``.

    Returns
    -------
    tuple of (float, bool) or None
        ``(h(ε), ε ≥ ε̃_X)``, or ``None`` where the setting does not apply.
    """
    view = _wang_view(prior, distortion, neighbors)
    if view is None or not eps >= 0:
        return None
    return float(view.h(eps)), bool(eps >= view.eps_tilde * (1 - 1e-12))


def identifiability_least_level(prior, distortion: Distortion, neighbors, budget: float):
    """``ε*_I(D) = h⁻¹(D)`` where [Wang-Ying-Zhang]'s Thm 1 gives it: their setting, and
    ``0 < D ≤ h(ε̃_X)`` (eq. (20), with ``h⁻¹`` of eq. (19)).

    Parameters
    ----------
    prior : Prior or DatabasePrior
    distortion : Distortion
    neighbors : NeighborRelation, str or None
    budget : float
        The distortion budget ``D``.

    Returns
    -------
    float or None
        The least identifiability level meeting the budget, or ``None`` where the theorem
        does not give it.
    """
    view = _wang_view(prior, distortion, neighbors)
    if view is None or not (budget > 0 and math.isfinite(budget)) or budget >= view.h0:
        return None
    if not view.readable or budget > view.h(view.eps_tilde) * (1 + 1e-12):
        return None
    return float(view.h_inv(budget))


def _relation_is_wang(view: _HammingView, neighbors) -> bool:
    """True when the problem's neighbour relation is the Hamming relation of the view."""
    if neighbors is None:
        return view.wang_default
    if isinstance(neighbors, str):
        if neighbors == "all":
            return view.n == 1
        return neighbors == "hamming" and view.wang_default
    if not isinstance(neighbors, NeighborRelation) or neighbors.size != view.size:
        return False
    if view.n == 1:  # Hamming on D¹ is every pair
        complete = view.size * (view.size - 1)
        if neighbors.n_pairs != complete:
            return False
        if neighbors.kind in ("all", "hamming"):
            return True
        if view.size > MAX_DENSE:
            return False
        left, right = np.asarray(neighbors.left), np.asarray(neighbors.right)
        if (left == right).any():
            return False
        return np.unique(left * view.size + right).size == complete
    return (
        neighbors.kind == "hamming"
        and getattr(neighbors, "m", None) == view.m
        and getattr(neighbors, "n", None) == view.n
    )


# =============================================================================================
# Wang, Ying & Zhang (2016): identifiability
# =============================================================================================
def _identifiability_checks(view: _HammingView, ans: _Answer) -> list[ClosedFormCheck]:
    if not (view.readable and view.full_support):
        return []  # ε_X = ∞: the paper's theorems need full support
    out: list[ClosedFormCheck] = []
    tol, setting = ans.tol, view.setting()
    eps_x = view.eps_x
    if ans.eps_mode:
        eps = ans.requested
        if abs(eps - eps_x) > _slack(eps_x, tol):
            infeasible = eps < eps_x
            got = ans.least_achievable if ans.infeasible else None
            passed = ans.infeasible == infeasible
            if infeasible and got is not None:
                passed = passed and abs(got - eps_x) <= _slack(eps_x, tol)
            out.append(
                ClosedFormCheck(
                    name="wang_lemma3_identifiability_feasibility",
                    statement=(
                        "ε-identifiability is feasible iff ε ≥ ε_X; the least achievable level "
                        "is ε_X, attained by a constant release"
                    ),
                    source=f"{_WANG}, Lemma 3 and eq. (18)",
                    relation="infeasible" if infeasible else "feasible",
                    conditions=(
                        f"{setting}, Hamming neighbours; ε = {_fmt(eps)} "
                        f"{'<' if infeasible else '≥'} ε_X = {_fmt(eps_x)}"
                    ),
                    expected=eps_x,
                    got=got,
                    difference=None if got is None else got - eps_x,
                    tolerance=tol,
                    passed=bool(passed),
                )
            )
        if eps < eps_x - _slack(eps_x, tol):
            return out
        tilde = view.eps_tilde
        h_eps = view.h(eps)
        if eps >= tilde - 1e-12 * (1 + tilde):
            cond = (
                f"{setting}; ε = {_fmt(eps)} ≥ ε̃_X = {_fmt(tilde)}"
                if not view.uniform
                else f"{setting}; uniform prior, so ε_X = ε̃_X = 0"
            )
            out.append(
                _compare(
                    "wang_thm1_identifiability_equals_h",
                    "D*_I(ε) = h(ε) for ε ≥ ε̃_X",
                    f"{_WANG}, Thm 1 (eq. (20)) with h of eq. (36); Lemmas 1 and 4",
                    "equal",
                    cond,
                    h_eps,
                    ans.value,
                    tol,
                )
            )
            out += _mechanism_check(
                view,
                ans,
                eps,
                "wang_thm1_identifiability_mechanism_is_E_i",
                "the optimum is unique and is E_i of eq. (29) at ε (the tight Lemma 1 bound "
                "fixes every posterior, and P_ε is invertible)",
                f"{_WANG}, eq. (29) and Lemma 4",
                cond,
                identifiability=True,
            )
        else:
            out.append(
                _compare(
                    "wang_thm1_identifiability_at_least_h",
                    "D*_I(ε) ≥ h(ε): R-PD relaxes PD-I and has optimum h(ε)",
                    f"{_WANG}, Lemma 1 (eqs. (22)–(27), (35)–(36)) and Thm 1 (eq. (20))",
                    "at_least",
                    f"{setting}; ε_X = {_fmt(eps_x)} ≤ ε = {_fmt(eps)} < ε̃_X = {_fmt(tilde)}",
                    h_eps,
                    ans.value,
                    tol,
                )
            )
        return out
    # budget mode: the least identifiability level ε*_i(D)
    D = ans.requested
    if D <= 0:
        return out
    d0 = view.d_constant
    if D >= d0:
        out.append(
            _compare(
                "wang_identifiability_level_constant_release",
                "ε*_i(D) = ε_X once D ≥ D₀: the constant release attains ε_X, the least level",
                f"{_WANG}, Lemma 3 and eq. (18)",
                "equal",
                f"{setting}; D = {_fmt(D)} ≥ D₀ = min_y E d(X, y) = {_fmt(d0)}",
                eps_x,
                ans.value,
                tol,
            )
        )
        return out
    tilde = view.eps_tilde
    d_tight = view.h(tilde)
    if D <= d_tight * (1 + 1e-12):
        eps = view.h_inv(D)
        cond = f"{setting}; D = {_fmt(D)} ≤ {view.tight_name} = {_fmt(d_tight)}"
        out.append(
            _compare(
                "wang_thm1_identifiability_level_equals_h_inv",
                "ε*_i(D) = h⁻¹(D) for 0 ≤ D ≤ h(ε̃_X)",
                f"{_WANG}, Thm 1 (eq. (20)) with h⁻¹ of eq. (19)",
                "equal",
                cond,
                eps,
                ans.value,
                tol,
            )
        )
        out += _mechanism_check(
            view,
            ans,
            eps,
            "wang_thm1_identifiability_mechanism_is_E_i",
            "the optimum is unique and is E_i of eq. (29) at ε = h⁻¹(D)",
            f"{_WANG}, eq. (29) and Lemma 4",
            cond,
            identifiability=True,
        )
    else:
        bound = max(view.h_inv(D), eps_x)
        out.append(
            _compare(
                "wang_thm1_identifiability_level_at_least",
                "ε*_i(D) ≥ max{h⁻¹(D), ε_X} for D > h(ε̃_X)",
                f"{_WANG}, Thm 1 (eq. (20)); Lemmas 2 and 3",
                "at_least",
                f"{setting}; {view.tight_name} = {_fmt(d_tight)} < D = {_fmt(D)} < D₀ = {_fmt(d0)}",
                bound,
                ans.value,
                tol,
            )
        )
    return out


def _mechanism_check(
    view: _HammingView,
    ans: _Answer,
    eps: float,
    name: str,
    statement: str,
    source: str,
    conditions: str,
    identifiability: bool,
) -> list[ClosedFormCheck]:
    """Compare the answer's mechanism entrywise with E_i (or E_d) at ``eps`` when unique.

    Uniqueness degenerates as ``eps → 0``: at 0 every constant release is optimal too, and
    near it mechanisms far from E_i have values within the tolerance of the optimum. The
    entrywise comparison is therefore made only for ``eps ≥ MECHANISM_CHECK_MIN_LEVEL`` (and
    ``≥ 1000·tol``); the value checks still apply below.
    """
    if not (eps > 0 and math.isfinite(eps)) or ans.infeasible:
        return []
    if eps < max(MECHANISM_CHECK_MIN_LEVEL, 1e3 * ans.tol):
        return []
    mech = ans.dense_mechanism(view.size, view.size)
    if mech is None:
        return []
    p_y = None
    if identifiability and not view.uniform:
        try:
            p_y = np.clip(cf.identifiability_output_pmf(view.prior, eps), 0.0, None)
        except (InputError, InfeasibleError):  # pragma: no cover - guarded by ε ≥ ε̃_X
            return []
    dist = view.exponential_distance(mech, eps, p_y)
    return [
        _compare(
            name,
            statement + "; max |W − E| = 0 entrywise",
            source,
            "equal",
            conditions + f"; mechanism tolerance √tol = {_fmt(ans.mech_tol)}",
            0.0,
            dist,
            ans.mech_tol,
        )
    ]


# =============================================================================================
# Wang, Ying & Zhang (2016): differential privacy; Kairouz, Oh & Viswanath (2016): LDP
# =============================================================================================
def _dp_checks(view: _HammingView, ans: _Answer, notion: str) -> list[ClosedFormCheck]:
    out: list[ClosedFormCheck] = []
    tol, setting = ans.tol, view.setting()
    relation = "all pairs (LDP)" if notion == "ldp" else "Hamming neighbours"
    uniform = view.readable and view.uniform
    single = view.n == 1
    if uniform:
        if single:
            name, source = (
                "kairouz_krr_uniform",
                (
                    f"{_KOV} (k-ary randomised response is optimal); "
                    f"{_WANG}, Thm 1 with n = 1, eq. (36)"
                ),
            )
        else:
            name, source = (
                "wang_thm1_dp_equals_h_uniform",
                (f"{_WANG}, Thm 1 (eq. (21) with ε_X = 0) and Lemma 5"),
            )
        cond = f"{setting}, {relation}; uniform prior, so ε_X = 0 and DP = identifiability"
        mech_name = name + "_mechanism"
        mech_text = (
            "the optimum is unique: k-ary randomised response E_d of eq. (30)"
            if single
            else "the optimum is unique: the exponential mechanism E_d of eq. (30)"
        )
        if ans.eps_mode:
            eps = ans.requested
            statement = (
                "D*(ε) = (k−1)/(e^ε + k − 1) = h(ε) with n = 1"
                if single
                else "D*_DP(ε) = h(ε) for a uniform prior"
            )
            out.append(
                _compare(name, statement, source, "equal", cond, view.h(eps), ans.value, tol)
            )
        else:
            D = ans.requested
            if D <= 0:
                return out
            eps = view.h_inv(D)
            statement = (
                "ε*(D) = max{ln((k−1)(1−D)/D), 0} = max{h⁻¹(D), 0} with n = 1"
                if single
                else "ε*_d(D) = max{h⁻¹(D), 0} for a uniform prior"
            )
            out.append(
                _compare(name + "_level", statement, source, "equal", cond, eps, ans.value, tol)
            )
        out += _mechanism_check(
            view, ans, eps, mech_name, mech_text, source, cond, identifiability=False
        )
        return out
    eps_x = view.eps_x if (view.readable and view.full_support) else math.inf
    if ans.eps_mode:
        eps = ans.requested
        out.append(
            _compare(
                "wang_thm1_dp_at_most_h",
                "D*_DP(ε) ≤ h(ε): E_d of eq. (30) is ε-DP with distortion h(ε) under any prior",
                f"{_WANG}, Thm 1 (eq. (21)) and Lemma 5",
                "at_most",
                f"{setting}, {relation}; any prior; ε = {_fmt(eps)}",
                view.h(eps),
                ans.value,
                tol,
            )
        )
        if math.isfinite(eps_x):
            out.append(
                _compare(
                    "wang_thm1_dp_at_least_h_shifted",
                    "D*_DP(ε) ≥ h(ε + ε_X): PD-DP relaxes to R-PD at ε + ε_X (eq. (28))",
                    f"{_WANG}, Thm 1 (eq. (21)), eq. (28) and Lemma 1",
                    "at_least",
                    f"{setting}, {relation}; full support, ε_X = {_fmt(eps_x)}; ε = {_fmt(eps)}",
                    view.h(eps + eps_x),
                    ans.value,
                    tol,
                )
            )
        return out
    D = ans.requested
    if D <= 0:
        return out
    upper = view.h_inv(D)
    out.append(
        _compare(
            "wang_thm1_dp_level_at_most_h_inv",
            "ε*_d(D) ≤ max{h⁻¹(D), 0}",
            f"{_WANG}, Thm 1 (eq. (21)) and Lemma 5",
            "at_most",
            f"{setting}, {relation}; any prior; D = {_fmt(D)}",
            upper,
            ans.value,
            tol,
        )
    )
    if math.isfinite(eps_x):
        out.append(
            _compare(
                "wang_thm1_dp_level_at_least",
                "ε*_d(D) ≥ max{h⁻¹(D) − ε_X, 0}",
                f"{_WANG}, Thm 1 (eq. (21)) and Lemma 2",
                "at_least",
                f"{setting}, {relation}; full support, ε_X = {_fmt(eps_x)}; D = {_fmt(D)}",
                max(upper - eps_x, 0.0),
                ans.value,
                tol,
            )
        )
    return out


# =============================================================================================
# Mutual information: Wang et al. Thm 2, Shannon lower bound, Calmon–Fawaz Cor. 1
# =============================================================================================
def _mutual_information_checks(
    view: _HammingView, ans: _Answer, family: str, source_exact: str, setting: str
) -> list[ClosedFormCheck]:
    """Least mutual information at Hamming distortion: exact (Shannon lower bound attained by
    E_i) on ``D ≤ h(ε̃_X)``, a lower bound up to ``D₀``, and 0 from ``D₀`` on."""
    if not view.readable:
        return []
    out: list[ClosedFormCheck] = []
    tol, m, n = ans.tol, view.m, view.n
    H = view.entropy
    d0 = view.d_constant
    d_tight = view.h(view.eps_tilde) if view.full_support else 0.0
    slb = "H(X) − n h_b(D/n) − D ln(m−1)" if n > 1 else "H − h_b(D) − D ln(k−1)"
    source_slb = (
        "Fano's inequality (Cover & Thomas (2006), Thm 2.10.1), row by row; "
        f"{_WANG}, Thm 2 (tight range)"
    )
    source_zero = f"{_CF}, Thm 1: I = 0 iff U is independent; the best constant release costs D₀"

    def value_at(D: float) -> float:
        return cf.shannon_lower_bound(H, min(D, view.h0), m, n)

    if not ans.eps_mode:
        D = ans.requested
        if D < 0:
            return out
        if D >= d0:
            out.append(
                _compare(
                    f"{family}_zero_beyond_constant_release",
                    "least mutual information is 0 once D ≥ D₀ = min_u E d(Y, u)",
                    source_zero,
                    "equal",
                    f"{setting}; D = {_fmt(D)} ≥ D₀ = {_fmt(d0)}",
                    0.0,
                    ans.value,
                    tol,
                )
            )
        elif D <= d_tight * (1 + 1e-12):
            cond = f"{setting}; D = {_fmt(D)} ≤ {view.tight_name} = {_fmt(d_tight)}"
            out.append(
                _compare(
                    f"{family}_value",
                    f"least mutual information = {slb} for D ≤ h(ε̃_X)",
                    source_exact,
                    "equal",
                    cond,
                    value_at(D),
                    ans.value,
                    tol,
                )
            )
            if D > 0:
                out += _mi_mechanism(view, ans, view.h_inv(D), family, source_exact, cond)
        else:
            bound = value_at(D)
            if bound > 0:
                out.append(
                    _compare(
                        f"{family}_shannon_lower_bound",
                        f"least mutual information ≥ {slb} (Shannon lower bound)",
                        source_slb,
                        "at_least",
                        f"{setting}; {view.tight_name} = {_fmt(d_tight)} < D = {_fmt(D)} "
                        f"< D₀ = {_fmt(d0)}",
                        bound,
                        ans.value,
                        tol,
                    )
                )
        return out
    eps = ans.requested
    if eps <= 0:
        out.append(
            _compare(
                f"{family}_zero_beyond_constant_release",
                "at I = 0 the release is independent: D*(0) = D₀ = min_u E d(Y, u)",
                source_zero,
                "equal",
                f"{setting}; ε = 0",
                d0,
                ans.value,
                tol,
            )
        )
        return out
    top = value_at(d_tight)
    if eps >= top:
        D = cf.shannon_lower_bound_inverse(H, eps, m, n)
        cond = (
            f"{setting}; ε = {_fmt(eps)} ≥ H = {_fmt(H)}: the identity release"
            if eps >= H
            else f"{setting}; ε = {_fmt(eps)} ≥ {_fmt(top)}, the least information at "
            f"D = {view.tight_name} = {_fmt(d_tight)}"
        )
        out.append(
            _compare(
                f"{family}_distortion",
                f"D*(ε) solves {slb} = ε on D ≤ h(ε̃_X) (inverse of the exact value)",
                source_exact,
                "equal",
                cond,
                D,
                ans.value,
                tol,
            )
        )
        if D > 0:
            out += _mi_mechanism(view, ans, view.h_inv(D), family, source_exact, cond)
    else:
        D = cf.shannon_lower_bound_inverse(H, eps, m, n)
        out.append(
            _compare(
                f"{family}_shannon_lower_bound_distortion",
                f"D*(ε) ≥ the root of {slb} = ε (Shannon lower bound, inverted)",
                source_slb,
                "at_least",
                f"{setting}; 0 < ε = {_fmt(eps)} < {_fmt(top)}, the least information at "
                f"D = {view.tight_name} = {_fmt(d_tight)}",
                D,
                ans.value,
                tol,
            )
        )
    return out


def _mi_mechanism(view, ans, eps, family, source, cond) -> list[ClosedFormCheck]:
    return _mechanism_check(
        view,
        ans,
        eps,
        f"{family}_mechanism_is_E_i",
        "the optimum is unique and is E_i of Wang et al. eq. (29) at slope h⁻¹(D) "
        "(the rate–distortion dual is strictly convex in the output pmf)",
        source,
        cond,
        identifiability=True,
    )


# =============================================================================================
# Single alphabet: PML and maximal leakage with Hamming distortion
# =============================================================================================
def _pml_checks(view: _HammingView, ans: _Answer) -> list[ClosedFormCheck]:
    if view.n != 1 or not view.readable:
        return []
    k, p = view.m, view.prior.probs
    tol = ans.tol
    if view.uniform:
        source = f"{_SAEIDIAN}, Def. 4 and Thm 1 (p(u|x) ≤ e^ε p(u) summed over u = x)"
        cond = f"uniform prior on k = {k} symbols, Hamming distortion"
        if ans.eps_mode:
            return [
                _compare(
                    "pml_uniform_hamming",
                    "D*(ε) = max(0, 1 − e^ε/k)",
                    source,
                    "equal",
                    cond + f"; ε = {_fmt(ans.requested)}",
                    cf.pml_uniform_hamming_distortion(ans.requested, k),
                    ans.value,
                    tol,
                )
            ]
        return [
            _compare(
                "pml_uniform_hamming_level",
                "ε*(D) = ln(k(1 − D)) for D < (k−1)/k, else 0",
                source,
                "equal",
                cond + f"; D = {_fmt(ans.requested)}",
                cf.pml_uniform_hamming_level(ans.requested, k),
                ans.value,
                tol,
            )
        ]
    source = (
        f"{_SAEIDIAN}, Lemma 3 (ε-PML implies maximal leakage ≤ ε); "
        "maximal-leakage knapsack (Issa, Wagner & Kamath (2020), Thm 1)"
    )
    cond = f"{view.what}, k = {k}, Hamming distortion (non-uniform: no closed form for PML)"
    if ans.eps_mode:
        return [
            _compare(
                "pml_at_least_maximal_leakage_knapsack",
                "D*_PML(ε) ≥ D*_ML(ε) = 1 − (p_(1) + … + p_(j) + (e^ε − j) p_(j+1)), j = ⌊e^ε⌋",
                source,
                "at_least",
                cond + f"; ε = {_fmt(ans.requested)}",
                cf.maximal_leakage_hamming_distortion(p, ans.requested),
                ans.value,
                tol,
            )
        ]
    return [
        _compare(
            "pml_level_at_least_maximal_leakage_knapsack",
            "ε*_PML(D) ≥ ε*_ML(D) (inverse of the maximal-leakage knapsack)",
            source,
            "at_least",
            cond + f"; D = {_fmt(ans.requested)}",
            cf.maximal_leakage_hamming_level(p, ans.requested),
            ans.value,
            tol,
        )
    ]


def _lip_checks(view: _HammingView, ans: _Answer) -> list[ClosedFormCheck]:
    if view.n != 1 or not view.readable or not view.uniform:
        return []
    k = view.m
    source = (
        f"{_CF}, Def. 6 (LIP: e^−ε ≤ p(x|u)/p(x) ≤ e^ε); P(U = X) ≤ E max_x p(x|u) and the "
        "symmetric channel attains the largest admissible posterior (derived in "
        "privopt.papers.closed_forms.lip_uniform_hamming_distortion)"
    )
    cond = f"uniform prior on k = {k} symbols, Hamming distortion"
    if ans.eps_mode:
        return [
            _compare(
                "lip_uniform_hamming",
                "D*(ε) = max(1 − e^ε/k, (k−1) e^−ε/k)",
                source,
                "equal",
                cond + f"; ε = {_fmt(ans.requested)}",
                cf.lip_uniform_hamming_distortion(ans.requested, k),
                ans.value,
                ans.tol,
            )
        ]
    level = cf.lip_uniform_hamming_level(ans.requested, k)
    if not math.isfinite(level):
        return []
    return [
        _compare(
            "lip_uniform_hamming_level",
            "ε*(D) = max(0, ln(k(1 − D)), ln((k−1)/(kD)))",
            source,
            "equal",
            cond + f"; D = {_fmt(ans.requested)}",
            level,
            ans.value,
            ans.tol,
        )
    ]


def _maximal_leakage_checks(view: _HammingView, ans: _Answer) -> list[ClosedFormCheck]:
    if view.n != 1 or not view.readable:
        return []
    p = view.prior.probs
    source = (
        "maximal leakage L = ln Σ_u max_x p(u|x) (Issa, Wagner & Kamath (2020), Thm 1; "
        f"{_SAEIDIAN}, eq. (1)); P(U = X) ≤ Σ_u p(u) max_x p(u|x): a fractional knapsack"
    )
    cond = f"{view.what}, k = {view.m}, Hamming distortion"
    if ans.eps_mode:
        return [
            _compare(
                "maximal_leakage_hamming_knapsack",
                "D*(ε) = 1 − (p_(1) + … + p_(j) + (e^ε − j) p_(j+1)), j = ⌊e^ε⌋, p sorted "
                "decreasing",
                source,
                "equal",
                cond + f"; ε = {_fmt(ans.requested)}",
                cf.maximal_leakage_hamming_distortion(p, ans.requested),
                ans.value,
                ans.tol,
            )
        ]
    return [
        _compare(
            "maximal_leakage_hamming_knapsack_level",
            "ε*(D) = ln t, t the least knapsack capacity whose accuracy reaches 1 − D",
            source,
            "equal",
            cond + f"; D = {_fmt(ans.requested)}",
            cf.maximal_leakage_hamming_level(p, ans.requested),
            ans.value,
            ans.tol,
        )
    ]


# =============================================================================================
# Joint priors: Calmon & Fawaz (2012), Corollary 1
# =============================================================================================
def _is_function_of_secret(prior: JointPrior) -> bool:
    """True when ``Y = f(S)``: every row of ``p(s, y)`` has at most one positive entry."""
    return bool(((prior.joint > 0).sum(axis=1) <= 1).all())


def _joint_view(prior: JointPrior, distortion: Distortion) -> _HammingView | None:
    k = prior.n_inputs
    if k < 2 or not _is_function_of_secret(prior) or not _is_zero_one(distortion, k):
        return None
    single = DatabasePrior(k, 1, probs=prior.p_y)
    return _HammingView(single, False, "Y = f(S), " + _describe_prior(single, True) + " on Y")


# =============================================================================================
# Zero leakage: the best constant release
# =============================================================================================
def _constant_release_distortion(prior, distortion: Distortion) -> float | None:
    """``D₀ = min_u Σ_y p(y) d(y,u)`` when cheap, else ``None``."""
    if isinstance(prior, DatabasePrior) and distortion.is_database_hamming:
        view = _HammingView(prior, True, "")
        return view.d_constant if view.readable else None
    if max(distortion.shape) > MAX_DENSE:
        return None
    p = prior.input_probs
    return float((p @ distortion.matrix).min())


def _zero_level_checks(
    prior, distortion: Distortion, notion: str, ans: _Answer
) -> list[ClosedFormCheck]:
    if isinstance(prior, JointPrior) and not _is_function_of_secret(prior):
        return []
    d0 = _constant_release_distortion(prior, distortion)
    if d0 is None:
        return []
    source = (
        f"{_CF}, Thm 2 (level 0 forces U independent of S, hence of Y = f(S)); "
        "the best constant release attains it"
    )
    what = "Y = f(S)" if isinstance(prior, JointPrior) else "the secret is the input"
    if ans.eps_mode:
        if ans.requested > 0:
            return []
        return [
            _compare(
                "zero_leakage_constant_release",
                "D*(0) = D₀ = min_u Σ_y p(y) d(y, u)",
                source,
                "equal",
                f"{notion} at ε = 0; {what}",
                d0,
                ans.value,
                ans.tol,
            )
        ]
    if ans.requested < d0:
        return []
    return [
        _compare(
            "zero_leakage_constant_release_level",
            "ε*(D) = 0 once D ≥ D₀ = min_u Σ_y p(y) d(y, u)",
            source,
            "equal",
            f"{notion}; D = {_fmt(ans.requested)} ≥ D₀ = {_fmt(d0)}; {what}",
            0.0,
            ans.value,
            ans.tol,
        )
    ]


# =============================================================================================
# Entry point
# =============================================================================================
def closed_form_checks(
    prior,
    distortion: Distortion,
    notion: str,
    mode: str,
    *,
    neighbors: NeighborRelation | str | None = None,
    requested: float,
    level: float | None,
    expected_distortion: float | None,
    mechanism: np.ndarray | None = None,
    status: str = "optimal",
    least_achievable: float | None = None,
    tol: float = 1e-6,
    zero_means_independent: bool | None = None,
) -> list[ClosedFormCheck]:
    """Every closed-form statement that applies to a design problem, checked on its answer.

    Parameters
    ----------
    prior : Prior, JointPrior or DatabasePrior
        The problem's prior (for a design that observes the secret, the expanded joint prior
        that was solved, whose input is the pair ``(s, y)``).
    distortion : Distortion
        The problem's distortion ``d[y, u]`` (likewise the expanded one).
    notion : str
        Canonical notion name (``"dp"``, ``"identifiability"``, ``"ldp"``, ``"pml"``,
        ``"information_privacy"``, ``"maximal_leakage"``, ``"mutual_information"``,
        ``"max_information_leakage"``, ``"robust_pml"``; the usual aliases are accepted).
    mode : str
        ``"epsilon"`` (``requested`` is ε; the answer's ``expected_distortion`` is ``D*(ε)``)
        or ``"max_distortion"`` (``requested`` is the budget D; the answer's ``level`` is
        ``ε*(D)``).
    neighbors : NeighborRelation, str or None
        The relation of ``dp``/``identifiability``; ``None`` is the default (Hamming on
        databases, all pairs otherwise).
    requested : float
        ε in epsilon mode, the distortion budget in budget mode.
    level, expected_distortion : float or None
        The answer's privacy level and expected distortion.
    mechanism : array_like, optional
        The answer's dense mechanism; compared entrywise with a closed-form optimum where that
        optimum is unique and the mechanism has at most :data:`MAX_DENSE` rows.
    status : str
        The answer's status; ``"infeasible"`` means the solver reported no solution.
    least_achievable : float, optional
        With ``status="infeasible"``, the least achievable level the solver reported.
    tol : float
        Relative tolerance of every comparison (see :class:`ClosedFormCheck`).
    zero_means_independent : bool or None
        Whether level 0 forces the release to be independent of the secret (the zero-leakage
        checks apply); ``None`` (the default) reads it from the notions this module knows.
        The solve driver passes the notion's own
        :attr:`~privopt.notions.Notion.zero_means_independent`.

    Returns
    -------
    list of ClosedFormCheck
        The checks that apply (possibly none), each evaluated; ``passed`` is False when the
        answer contradicts the statement (or has no value where one is required).

    Raises
    ------
    InputError
        For an unknown notion or mode, or a non-finite ``requested`` or ``tol``.
    """
    notion = _ALIASES.get(str(notion), str(notion))
    if notion not in CHECKED_NOTIONS:
        raise InputError(
            f"unknown notion {notion!r}; expected one of {', '.join(CHECKED_NOTIONS)}",
            "notion",
        )
    if mode not in _MODES:
        raise InputError(f"unknown mode {mode!r}; use 'epsilon' or 'max_distortion'", "mode")
    requested = float(requested)
    if not math.isfinite(requested) or requested < 0:
        return []  # ε = ∞ (or a meaningless request): nothing to check
    if not (math.isfinite(tol) and tol >= 0):
        raise InputError(f"must be a finite number ≥ 0, got {tol}", "tol")
    value = expected_distortion if mode == "epsilon" else level
    if status == "infeasible":
        value = None
    ans = _Answer(mode, requested, value, status, least_achievable, mechanism, float(tol))

    checks: list[ClosedFormCheck] = []
    if isinstance(prior, JointPrior):
        view = _joint_view(prior, distortion) if notion == "mutual_information" else None
        if view is not None:
            checks += _mutual_information_checks(
                view,
                ans,
                "calmon_fawaz_cor1_rate_distortion",
                f"{_CF}, Thm 1 and Cor. 1 (I(S;U) = I(Y;U)); Shannon lower bound tight for "
                f"Δ ≤ (k−1) min p_Y ({_WANG}, Thm 2 with n = 1)",
                view.what + f", k = {view.m}, Hamming distortion on Y",
            )
    else:
        view = _hamming_view(prior, distortion)
        if view is not None:
            checks += _view_checks(view, notion, neighbors, ans)
    if not any(c.relation == "equal" and "mechanism" not in c.name for c in checks):
        if zero_means_independent is None:
            zero_means_independent = notion in _ZERO_MEANS_INDEPENDENT
        if zero_means_independent:
            checks += _zero_level_checks(prior, distortion, notion, ans)
    return checks


def as_bound(check: ClosedFormCheck, relation: str, statement: str, source: str, conditions: str):
    """An ``equal`` check of another notion's optimum re-read as a bound on this one's
    (e.g. a smaller feasible set can only cost more), evaluated anew.

    Parameters
    ----------
    check : ClosedFormCheck
        A check whose ``expected`` is the other notion's exact optimum.
    relation : {"at_least", "at_most"}
        How this notion's answer compares with it.
    statement, source, conditions : str
        The new check's texts (its name is the old one with ``_bound`` appended).

    Returns
    -------
    ClosedFormCheck
        The bound, with ``passed`` evaluated on ``check.got`` at ``check.tolerance``.
    """
    return _compare(
        check.name + "_bound",
        statement,
        source,
        relation,
        conditions,
        float(check.expected),
        check.got,
        check.tolerance,
    )


def zero_leakage_checks(
    prior,
    distortion: Distortion,
    notion: str,
    mode: str,
    *,
    requested: float,
    level: float | None,
    expected_distortion: float | None,
    status: str = "optimal",
    tol: float = 1e-6,
) -> list[ClosedFormCheck]:
    """The zero-leakage checks (the best constant release, [Calmon-Fawaz] Thm 2) for a
    notion whose level 0 forces the release to be independent of the secret.

    Parameters
    ----------
    prior : Prior, JointPrior or DatabasePrior
        The problem's prior.
    distortion : Distortion
        The problem's distortion.
    notion : str
        The notion's name (used in the check's conditions only).
    mode : {"epsilon", "max_distortion"}
        As in :func:`closed_form_checks`.
    requested : float
        ε, or the distortion budget.
    level, expected_distortion : float or None
        The answer's level and expected distortion.
    status : str
        The answer's status.
    tol : float
        Relative tolerance.

    Returns
    -------
    list of ClosedFormCheck
        Empty unless ε = 0 (or the budget reaches the constant release's distortion) and the
        secret is the input or ``Y = f(S)``.
    """
    requested = float(requested)
    if not math.isfinite(requested) or requested < 0:
        return []
    value = expected_distortion if mode == "epsilon" else level
    if status == "infeasible":
        value = None
    ans = _Answer(mode, requested, value, status, None, None, float(tol))
    return _zero_level_checks(prior, distortion, notion, ans)


def _view_checks(view: _HammingView, notion: str, neighbors, ans: _Answer):
    dispatch: dict[str, Callable[[], list[ClosedFormCheck]]] = {
        "identifiability": lambda: (
            _identifiability_checks(view, ans) if _relation_is_wang(view, neighbors) else []
        ),
        "dp": lambda: _dp_checks(view, ans, "dp") if _relation_is_wang(view, neighbors) else [],
        "ldp": lambda: _dp_checks(view, ans, "ldp") if view.n == 1 else [],
        "pml": lambda: _pml_checks(view, ans),
        "information_privacy": lambda: _lip_checks(view, ans),
        "maximal_leakage": lambda: _maximal_leakage_checks(view, ans),
        "mutual_information": lambda: _mutual_information_checks(
            view,
            ans,
            "wang_thm2_pdmip" if view.n > 1 else "rate_distortion_hamming",
            f"{_WANG}, Thm 2 (E_i is PD-MIP optimal)"
            if view.n > 1
            else (
                f"Cover & Thomas (2006), Thm 10.3.1 (binary source); {_WANG}, Thm 2 with "
                "n = 1 (k symbols)"
            ),
            view.setting() + ", Hamming distortion",
        ),
    }
    run = dispatch.get(notion)
    return run() if run is not None else []
