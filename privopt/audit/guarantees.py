"""Tail guarantees of [Saeidian-PML] read the other way round.

* :func:`pml_least_delta` and :func:`eml_least_delta`: the least δ for which a mechanism is
  (ε,δ)-PML (Def. 5) or (ε,δ)-EML (Def. 11, Theorem 3) at a given ε — the inverses of
  :func:`privopt.measures.pml_tail_level` and :func:`privopt.measures.eml_level`.

Their composition (Theorem 4, parts 1–5) is in :mod:`privopt.papers.closed_forms`
(``adaptive_composition_*``).

These are audits and bounds, not design programs: (ε,δ)-PML and (ε,δ)-EML are not convex
constraints (a union of polytopes), so :func:`privopt.design` refuses them and offers the
convex stand-ins (docs/problem-files.md, "Non-convex guarantees").
"""

from __future__ import annotations

__all__ = ["pml_least_delta", "eml_least_delta"]

import math

import numpy as np

from privopt.measures import MeasureSetting
from privopt.validation import check_level


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
    eps = check_level(eps, "epsilon")
    st = MeasureSetting(prior, mechanism)
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
    eps = check_level(eps, "epsilon")
    c = math.exp(eps) if eps < 709.0 else math.inf  # e^ε, without an overflow warning
    st = MeasureSetting(prior, mechanism)
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
