"""Tail guarantees of [Saeidian-PML] read the other way round, and their composition.

* :func:`pml_least_delta` and :func:`eml_least_delta`: the least δ for which a mechanism is
  (ε,δ)-PML (Def. 5) or (ε,δ)-EML (Def. 11, Theorem 3) at a given ε — the inverses of
  :func:`privopt.measures.pml_tail_level` and :func:`privopt.measures.eml_level`.
* :func:`compose_pml`, :func:`compose_pml_tail`, :func:`compose_eml_pml` and
  :func:`compose_eml`: the adaptive-composition bounds of Theorem 4 (items 1, 2, 4, 5).

These are audits and bounds, not design programs: (ε,δ)-PML and (ε,δ)-EML are not convex
constraints (a union of polytopes), so :func:`privopt.design` refuses them and offers the
convex stand-ins (see the README, "Non-convex guarantees").
"""

from __future__ import annotations

import math

import numpy as np

from privopt.errors import InputError
from privopt.measures import _check_delta, _Setting

__all__ = [
    "pml_least_delta",
    "eml_least_delta",
    "compose_pml",
    "compose_pml_tail",
    "compose_eml_pml",
    "compose_eml",
]


def _check_eps(eps, field: str = "epsilon") -> float:
    eps = float(eps)
    if np.isnan(eps) or eps < 0:
        raise InputError(f"must be a number ≥ 0, got {eps}", field)
    return eps


def pml_least_delta(prior, mechanism, eps: float) -> float:
    """The least δ with ``P_{Y∼P_Y}[ℓ(X→Y) ≤ ε] ≥ 1 − δ``: ``δ = P_Y[ℓ(X→Y) > ε]``.

    [Saeidian-PML] Def. 5 ((ε,δ)-PML) solved for δ. A mechanism is (ε,δ)-PML exactly when
    ``δ ≥ pml_least_delta(prior, mechanism, ε)``.

    Parameters
    ----------
    prior : Prior, JointPrior, DatabasePrior or array_like
        The prior (a plain pmf reads as a single secret).
    mechanism : Mechanism or array_like
        ``W[y, u] = p(u|y)``.
    eps : float
        ε ≥ 0 (nats).

    Returns
    -------
    float
        δ in ``[0, 1]``.
    """
    eps = _check_eps(eps)
    st = _Setting(prior, mechanism)
    leak = np.log(st.ch.max(axis=0) / st.pu)
    # the same relative slack as pml_tail_level, so that the two functions are inverse
    return float(min(st.pu[leak > eps + 1e-12 * max(1.0, eps)].sum(), 1.0))


def eml_least_delta(prior, mechanism, eps: float) -> float:
    """The least δ for which the mechanism is (ε,δ)-EML: ``min{δ : max_x h_x(δ) ≤ e^ε}``.

    [Saeidian-PML] Def. 11 and Theorem 3 (eq. (19)): ``h_x(δ)`` is the fractional knapsack
    of :func:`privopt.measures.eml_level`. With the outputs in decreasing order of
    ``r_j = p(y_j|x)/p(y_j)``, masses ``m_j`` and cumulative sums ``M_k = Σ_{j≤k} m_j``,
    ``A_k = Σ_{j≤k} m_j r_j``, on ``δ ∈ [M_{k−1}, M_k]``::

        h_x(δ) = (A_{k−1} + (δ − M_{k−1}) r_k) / δ,

    which is non-increasing, so ``h_x(δ) ≤ c = e^ε`` from
    ``δ_x = (A_{k−1} − M_{k−1} r_k)/(c − r_k)`` on the first segment with ``r_k < c``
    that contains it. The answer is ``max_x δ_x`` (0 when ``ε`` is at least the PML level).

    Parameters
    ----------
    prior : Prior, JointPrior, DatabasePrior or array_like
    mechanism : Mechanism or array_like
    eps : float
        ε ≥ 0 (nats).

    Returns
    -------
    float
        δ in ``[0, 1]`` (δ = 1 always suffices: ``h_x(1) = 1``).
    """
    eps = _check_eps(eps)
    c = math.exp(eps) if eps < 709.0 else math.inf  # e^ε, without an overflow warning
    st = _Setting(prior, mechanism)
    worst = 0.0
    for row in st.ch:
        ratio = row / st.pu
        order = np.argsort(-ratio, kind="stable")
        r, m = ratio[order], st.pu[order]
        m_before = np.concatenate([[0.0], np.cumsum(m)[:-1]])
        a_before = np.concatenate([[0.0], np.cumsum(m * r)[:-1]])
        delta_x = 1.0
        for k in range(r.size):
            if r[k] > c * (1 + 1e-12):  # h_x > c on this whole segment
                continue
            if r[k] >= c * (1 - 1e-12):  # r_k = c: h_x ≤ c on it iff A_{k−1} ≤ c M_{k−1}
                if a_before[k] <= c * m_before[k] * (1 + 1e-12):
                    delta_x = m_before[k]
                    break
                continue
            need = max((a_before[k] - m_before[k] * r[k]) / (c - r[k]), m_before[k])
            if need <= m_before[k] + m[k] + 1e-15:
                delta_x = need
                break
        worst = max(worst, delta_x)
    return float(min(worst, 1.0))


def compose_pml(eps1: float, eps2: float) -> float:
    """[Saeidian-PML] Theorem 4(1): if ``P_{Y|X}`` is ε₁-PML and ``P_{Z|X,Y=y}`` is ε₂-PML
    (conditional PML, for every ``y``), the pair ``(Y, Z)`` is ``(ε₁ + ε₂)``-PML.

    Parameters
    ----------
    eps1, eps2 : float
        The two levels (nats).

    Returns
    -------
    float
        ``ε₁ + ε₂``.
    """
    return _check_eps(eps1, "eps1") + _check_eps(eps2, "eps2")


def compose_pml_tail(eps1: float, delta1: float, eps2: float, delta2: float) -> tuple:
    """[Saeidian-PML] Theorem 4(2): (ε₁,δ₁)-PML followed by (ε₂,δ₂)-PML (conditionally on
    every ``y``) is ``(ε₁ + ε₂, δ₁ + δ₂ − δ₁δ₂)``-PML.

    Parameters
    ----------
    eps1, delta1, eps2, delta2 : float
        The two guarantees.

    Returns
    -------
    tuple of float
        ``(ε, δ)`` of the composition.
    """
    d1, d2 = _check_delta(delta1, "delta1"), _check_delta(delta2, "delta2")
    return compose_pml(eps1, eps2), d1 + d2 - d1 * d2


def compose_eml_pml(eps1: float, delta1: float, eps2: float) -> tuple:
    """[Saeidian-PML] Theorem 4(4): (ε₁,δ₁)-EML followed by ε₂-PML (conditionally) is
    ``(ε₁ + ε₂, δ₁)``-EML.

    Parameters
    ----------
    eps1, delta1, eps2 : float
        The two guarantees.

    Returns
    -------
    tuple of float
        ``(ε, δ)`` of the composition.
    """
    return compose_pml(eps1, eps2), _check_delta(delta1, "delta1")


def compose_eml(eps1: float, delta1: float, eps2: float, delta2: float, eps_max: float) -> tuple:
    """[Saeidian-PML] Theorem 4(5): (ε₁,δ₁)-EML followed by (ε₂,δ₂)-EML is (ε, δ₁ + δ₂)-EML
    with ``ε = ln(δ₂/(δ₁ + δ₂)·e^{ε_max} + e^{ε₁+ε₂})``.

    Parameters
    ----------
    eps1, delta1, eps2, delta2 : float
        The two guarantees (δ₁ + δ₂ > 0).
    eps_max : float
        ``−ln min_x p(x)`` of the secret's prior.

    Returns
    -------
    tuple of float
        ``(ε, δ)`` of the composition.
    """
    d1, d2 = _check_delta(delta1, "delta1"), _check_delta(delta2, "delta2")
    if d1 + d2 <= 0:
        raise InputError("needs δ₁ + δ₂ > 0; with δ = 0 use compose_pml", "delta2")
    total = compose_pml(eps1, eps2)
    eps_max = _check_eps(eps_max, "eps_max")
    weight = d2 / (d1 + d2)  # ln(w e^{ε_max} + e^{total}), without overflow
    eps = np.logaddexp(total, np.log(weight) + eps_max) if weight > 0 else total
    return float(eps), d1 + d2
