"""Persuasive privacy beyond the log score ([Bon-Persuasive]), numpy only.

The log-score audit lives in :mod:`privopt.measures`
(:func:`~privopt.measures.persuasive_privacy_delta`,
:func:`~privopt.measures.persuasive_privacy_level`). This module adds:

* :func:`probabilistic_dp_delta` / :func:`probabilistic_dp_level` — probabilistic DP
  ([Bon-Persuasive] Def. 7) computed exactly, the limit of the two-point-prior class of
  Prop. 6 (no weight to choose);
* :func:`marginal_dawid_sebastiani` — the marginal Dawid–Sebastiani score (Def. 8);
* :func:`gaussian_posterior_given_average`, :func:`average_release_dss_gain` and
  :func:`average_release_kappa` — Prop. 7: releasing the exact average of Gaussian data is
  ``(ℐ, 𝒢_x^r, r₁ + ln r₂, 0)``-PP;
* :func:`is_conjugate` — Def. 4 for a finite class of priors, and
  :func:`compose_persuasive` — the composition rule of Prop. 3.

All in nats.
"""

from __future__ import annotations

__all__ = [
    "probabilistic_dp_delta",
    "probabilistic_dp_level",
    "marginal_dawid_sebastiani",
    "gaussian_posterior_given_average",
    "average_release_dss_gain",
    "average_release_kappa",
    "is_conjugate",
    "compose_persuasive",
]

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from privopt.errors import InputError
from privopt.measures import tail_threshold
from privopt.model import NeighborRelation, as_matrix
from privopt.validation import (
    as_pmf,
    check_level,
    check_number,
    check_numbers,
    check_probability,
    resolve_neighbors,
)

if TYPE_CHECKING:  # annotations only: nothing more is imported at run time
    from numpy.typing import ArrayLike

    from privopt.model import Mechanism


def _pairs(size: int, neighbors) -> NeighborRelation:
    """The relation on the ``size`` rows: ``None`` (all pairs), ``"all"``, a list of pairs of
    row indices or a :class:`~privopt.model.NeighborRelation` on ``size`` symbols."""
    return resolve_neighbors(np.full(size, 1.0 / size), neighbors, "neighbors")


def _vector(values, field: str) -> np.ndarray:
    """A non-empty vector of finite numbers (a nested list is flattened)."""
    v = check_numbers(values, field, minimum=-np.inf).ravel()
    if v.size == 0 or not np.isfinite(v).all():
        raise InputError("must be a non-empty list of finite numbers", field)
    return v


def _covariance(cov, n: int) -> np.ndarray:
    """An ``n × n`` matrix of finite numbers."""
    c = check_numbers(cov, "cov", minimum=-np.inf)
    if c.shape != (n, n) or not np.isfinite(c).all():
        raise InputError(
            f"must be a {n} × {n} matrix of finite numbers, got shape {c.shape}", "cov"
        )
    return c


def _pair_log_ratios(W: np.ndarray, a: int, b: int) -> tuple[np.ndarray, np.ndarray]:
    """``ln W[a,t]/W[b,t]`` on ``supp W[a]`` and the masses ``W[a,t]`` there."""
    t = W[a] > 0
    with np.errstate(divide="ignore"):
        return np.log(W[a, t]) - np.log(W[b, t]), W[a, t]


def probabilistic_dp_delta(
    mechanism: Mechanism | ArrayLike,
    eps: float,
    neighbors: NeighborRelation | str | Sequence | None = None,
) -> float:
    """Least δ of (ε,δ)-probabilistic DP: ``max_{x∼x'} P_{T∼W[x,·]}[W[x,T] > e^ε W[x',T]]``
    ([Bon-Persuasive] Def. 7; equal to (L, ℋ, ε, δ)-persuasive privacy by Prop. 6).

    Parameters
    ----------
    mechanism : Mechanism or array_like
        ``W[x, t]``: row-stochastic, one row per database ``x``.
    eps : float
        ε ≥ 0 (nats); ``inf`` gives δ = 0.
    neighbors : NeighborRelation, "all", list of pairs or None
        The neighbouring rows (default ``None``: all pairs): a
        :class:`~privopt.model.NeighborRelation` on as many symbols as the mechanism has
        rows, ``"all"``, or pairs ``[(a, b), …]`` of row indices (symmetrised).

    Returns
    -------
    float
        The largest probability, over neighbouring pairs, that the privacy loss exceeds ε:
        in ``[0, 1]``.

    Raises
    ------
    InputError
        If the mechanism is not row-stochastic, ε is not a number ``≥ 0`` (field ``eps``),
        or ``neighbors`` is not a relation on the rows of the mechanism (field
        ``neighbors``).
    """
    W = as_matrix(mechanism)
    eps = check_level(eps, "eps")
    worst = 0.0
    rel = _pairs(W.shape[0], neighbors)
    for a, b in zip(rel.left, rel.right, strict=True):
        ratio, mass = _pair_log_ratios(W, int(a), int(b))
        worst = max(worst, float(mass[ratio > eps + 1e-12 * max(1.0, eps)].sum()))
    return worst


def probabilistic_dp_level(
    mechanism: Mechanism | ArrayLike,
    delta: float = 0.0,
    neighbors: NeighborRelation | str | Sequence | None = None,
) -> float:
    """Least ε of (ε,δ)-probabilistic DP ([Bon-Persuasive] Def. 7); δ = 0 is the pure DP
    level (infinite when some ``W[x,t] > 0 = W[x',t]`` for neighbours).

    Parameters
    ----------
    mechanism : Mechanism or array_like
        ``W[x, t]``: row-stochastic, one row per database ``x``.
    delta : float
        δ in ``[0, 1]``.
    neighbors : NeighborRelation, "all", list of pairs or None
        The neighbouring rows, as for :func:`probabilistic_dp_delta` (default: all pairs).

    Returns
    -------
    float
        ε (nats), in ``[0, inf]``.

    Raises
    ------
    InputError
        If δ is not in ``[0, 1]``, the mechanism is not row-stochastic, or ``neighbors``
        is not a relation on the rows of the mechanism (field ``neighbors``).
    """
    delta = check_probability(delta, "delta")
    W = as_matrix(mechanism)
    rel = _pairs(W.shape[0], neighbors)
    level = 0.0
    for a, b in zip(rel.left, rel.right, strict=True):
        ratio, mass = _pair_log_ratios(W, int(a), int(b))
        level = max(level, tail_threshold(ratio, mass, delta))
    return float(level)


def marginal_dawid_sebastiani(mean: ArrayLike, cov: ArrayLike, x: ArrayLike) -> np.ndarray:
    """Marginal Dawid–Sebastiani scores ``D_i(Q, x) = ln σ_i²(Q) + (x_i − μ_i(Q))²/σ_i²(Q)``
    ([Bon-Persuasive] Def. 8).

    Parameters
    ----------
    mean : array_like
        ``μ(Q)``, length n.
    cov : array_like
        The covariance of ``Q`` (``n × n``; only its diagonal is used). Finite, with a
        positive diagonal.
    x : array_like
        The true data, length n.

    Returns
    -------
    numpy.ndarray
        ``D_i`` for ``i = 1 … n``: shape ``(n,)`` (real numbers; a score can be negative).

    Raises
    ------
    InputError
        If the lengths of ``mean`` and ``x`` and the shape of ``cov`` disagree, or ``cov``
        has a non-finite entry or a variance ``≤ 0``.
    """
    mu, var, x = _gaussian(mean, cov, x)
    return np.log(var) + (x - mu) ** 2 / var


def _gaussian(mean, cov, x):
    mu, x = _vector(mean, "mean"), _vector(x, "x")
    cov = check_numbers(cov, "cov", minimum=-np.inf)
    if cov.shape != (mu.size, mu.size) or x.size != mu.size:
        raise InputError(
            f"mean, x (length n) and cov (n × n) disagree: {mu.size}, {x.size}, {cov.shape}",
            "cov",
        )
    var = np.diag(cov).copy()
    if not (np.isfinite(cov).all() and (var > 0).all()):
        raise InputError("needs finite entries and positive variances", "cov")
    return mu, var, x


def gaussian_posterior_given_average(
    mean: ArrayLike, cov: ArrayLike, average: float
) -> tuple[np.ndarray, np.ndarray]:
    """The Gaussian prior ``N(μ, Σ)`` conditioned on ``X̄ = average`` (the data-posterior of
    [Bon-Persuasive] Prop. 7, a degenerate Gaussian on the hyperplane of that average).

    With ``a = 1/n``: ``μ' = μ + Σa (x̄ − aᵀμ)/(aᵀΣa)``, ``Σ' = Σ − Σa aᵀΣ/(aᵀΣa)``.

    Parameters
    ----------
    mean : array_like
        ``μ``, length n ``≥ 1``.
    cov : array_like
        ``Σ``, positive definite, ``n × n`` (only ``aᵀΣa > 0`` is checked).
    average : float
        The released ``x̄``.

    Returns
    -------
    tuple of numpy.ndarray
        ``(μ', Σ')``, shapes ``(n,)`` and ``(n, n)``; ``Σ'`` is singular (``Σ' a = 0``).

    Raises
    ------
    InputError
        If ``mean`` is empty or not finite numbers (field ``mean``), ``cov`` is not an
        ``n × n`` matrix of finite numbers or the average has no positive variance,
        ``aᵀΣa ≤ 0`` (field ``cov``), or ``average`` is not a finite number.
    """
    mu = _vector(mean, "mean")
    cov = _covariance(cov, mu.size)
    average = check_number(average, "average", minimum=-np.inf)
    a = np.full(mu.size, 1.0 / mu.size)
    s_a = cov @ a
    var_avg = float(a @ s_a)  # Σ̄
    if not var_avg > 0:
        raise InputError("the average must have positive variance under the prior", "cov")
    return mu + s_a * (average - a @ mu) / var_avg, cov - np.outer(s_a, s_a) / var_avg


def average_release_dss_gain(mean: ArrayLike, cov: ArrayLike, x: ArrayLike) -> np.ndarray:
    """``Δ_i = D_i(Q, x) − D_i(Q_T, x)`` for the release ``T = x̄`` of the exact average
    ([Bon-Persuasive] Def. 3 with the scores of Def. 8; the quantity of Prop. 7).

    Parameters
    ----------
    mean : array_like
        ``μ`` of the Gaussian data-prior ``Q``, length n.
    cov : array_like
        ``Σ`` (positive definite), ``n × n``.
    x : array_like
        The true data (its average is released), length n.

    Returns
    -------
    numpy.ndarray
        ``Δ_i`` per coordinate (nats): shape ``(n,)``.

    Raises
    ------
    InputError
        If the shapes disagree, ``cov`` has a non-finite entry or a variance ``≤ 0``, the
        average has no positive variance, or a posterior variance ``Σ'_ii`` is ``≤ 0``
        (field ``cov``).
    """
    x = _vector(x, "x")
    post_mean, post_cov = gaussian_posterior_given_average(mean, cov, float(x.mean()))
    return marginal_dawid_sebastiani(mean, cov, x) - marginal_dawid_sebastiani(
        post_mean, post_cov, x
    )


def average_release_kappa(
    mean: ArrayLike, cov: ArrayLike, average: float
) -> tuple[float, float, float]:
    """The least ``(r₁, r₂)`` with ``N(μ, Σ) ∈ 𝒢_x^r`` and the guarantee
    ``κ^r = r₁ + ln r₂`` of [Bon-Persuasive] Prop. 7 (releasing ``x̄`` is
    ``(ℐ, 𝒢_x^r, κ^r, 0)``-PP).

    ``r₁ = (x̄ − μ̄)²/Σ̄`` and ``r₂ = max_i c_Φ / (1 − σ_i²/‖σ‖²)`` with ``c_Φ`` the condition
    number of the correlation matrix (``Σ = diag(σ) Φ diag(σ)``). The proof's last line prints
    ``r₁ − ln r₂``; the statement's ``r₁ + ln r₂`` is the bound that holds.

    Parameters
    ----------
    mean : array_like
        ``μ``, length n.
    cov : array_like
        ``Σ`` (positive definite, n ≥ 2), ``n × n``.
    average : float
        ``x̄``.

    Returns
    -------
    tuple of float
        ``(r₁, r₂, κ^r)``: ``r₁ ≥ 0``, ``r₂ > 1`` and ``κ^r = r₁ + ln r₂`` (nats).

    Raises
    ------
    InputError
        If ``mean`` is not at least 2 finite numbers (field ``mean``), ``cov`` is not an
        ``n × n`` matrix of finite numbers with positive variances and a positive definite
        correlation matrix (field ``cov``), or ``average`` is not a finite number.
    """
    mu = _vector(mean, "mean")
    if mu.size < 2:
        raise InputError("Prop. 7 needs n ≥ 2 coordinates", "mean")
    cov = _covariance(cov, mu.size)
    average = check_number(average, "average", minimum=-np.inf)
    if not (np.diag(cov) > 0).all():
        raise InputError("every variance (diagonal entry) must be > 0", "cov")
    sigma = np.sqrt(np.diag(cov))
    phi = cov / np.outer(sigma, sigma)
    eig = np.linalg.eigvalsh(phi)
    if eig.min() <= 0:
        raise InputError("must be positive definite", "cov")
    c_phi = float(eig.max() / eig.min())
    r1 = float((average - mu.mean()) ** 2 / (cov.sum() / mu.size**2))
    r2 = float(np.max(c_phi / (1 - sigma**2 / np.sum(sigma**2))))
    return r1, r2, r1 + float(np.log(r2))


def is_conjugate(
    priors: Sequence[ArrayLike], mechanism: Mechanism | ArrayLike, tol: float = 1e-9
) -> bool:
    """Whether a finite class of priors is conjugate to a mechanism ([Bon-Persuasive] Def. 4):
    every posterior ``Q(·|t)`` (``Q`` in the class, ``t`` with ``Q_T(t) > 0``) is in the class
    again (each entry within ``tol``).

    Parameters
    ----------
    priors : sequence of array_like
        The class (pmfs over the secret), each of length ``|X|``, the number of rows of the
        mechanism.
    mechanism : Mechanism or array_like
        ``W[x, t]``: row-stochastic.
    tol : float
        Entrywise tolerance of the membership test (default 1e-9).

    Returns
    -------
    bool
        True when every posterior lies within ``tol`` (maximum norm) of some member.

    Raises
    ------
    InputError
        If the mechanism is not row-stochastic, a prior is not a pmf (field ``priors``), or
        the priors do not have one entry per row of the mechanism.
    """
    W = as_matrix(mechanism)
    if isinstance(priors, (str, bytes)) or not isinstance(priors, (Sequence, np.ndarray)):
        raise InputError(f"expected a list of pmfs, got {type(priors).__name__}", "priors")
    members = [as_pmf(q, f"priors[{i}]") for i, q in enumerate(priors)]
    if not members:
        raise InputError("expected at least one prior", "priors")
    for i, q in enumerate(members):
        if q.size != W.shape[0]:
            raise InputError(
                f"has {q.size} entries but the mechanism has {W.shape[0]} rows: each prior needs "
                "one entry per row",
                f"priors[{i}]",
            )
    cls = np.array(members)
    for q in cls:
        q_t = q @ W
        for t in np.flatnonzero(q_t > 0):
            post = q * W[:, t] / q_t[t]
            if not (np.abs(cls - post).max(axis=1) <= tol).any():
                return False
    return True


def compose_persuasive(
    kappa1: float, delta1: float, kappa2: float, delta2: float
) -> tuple[float, float]:
    """[Bon-Persuasive] Prop. 3: if ``M₁`` is ``(𝒮, 𝒬, κ₁, δ₁)``-PP, ``M₂((·, t), ·)`` is
    ``(𝒮, 𝒬, κ₂, δ₂)``-PP for every ``t`` and ``𝒬`` is conjugate to both
    (:func:`is_conjugate`), then ``M₁ ⊗ M₂`` is ``(𝒮, 𝒬, κ₁ + κ₂, δ₁ + δ₂)``-PP.

    Parameters
    ----------
    kappa1, delta1, kappa2, delta2 : float
        The two guarantees: each κ ``≥ 0`` (nats; ``inf`` allowed), each δ in ``[0, 1]``.

    Returns
    -------
    tuple of float
        ``(κ, δ)`` of the composition (δ capped at 1).

    Raises
    ------
    InputError
        If a κ is not a number ``≥ 0`` (``inf`` allowed), or a δ is not in ``[0, 1]``.
    """
    k1, k2 = check_level(kappa1, "kappa1"), check_level(kappa2, "kappa2")
    d1, d2 = check_probability(delta1, "delta1"), check_probability(delta2, "delta2")
    return k1 + k2, min(d1 + d2, 1.0)
