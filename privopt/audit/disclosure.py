"""Disclosure, singling out and per-entry leakage ([Saeidian-Rethinking] Sections 2–4), numpy only.

An *attribute* ``U`` of the secret ``X`` is given by its kernel ``P_{U|X}`` (``|X| × |U|``,
row-stochastic) or, for a deterministic attribute, by a vector of ``|X|`` integer labels.
An adversary with prior ``Q_X`` who sees ``y`` believes ``Q_{U|Y=y} = P_{U|X} ∘ Q_{X|Y=y}``.

* :func:`min_entropy` — Def. 2.1, ``H_∞(P) = −ln max p``.
* :func:`attribute_posteriors`, :func:`remaining_uncertainty`, :func:`discloses` — Def. 3.3:
  ``P_{Y|X}`` discloses ``U`` to ``Q_X`` when ``inf_y H_∞(Q_{U|Y=y}) = 0``; by Theorem 3.4
  the answer is the same for every adversary with the same support.
* :func:`singles_out` — Def. 3.9 (``U = X``); :func:`singling_out_threshold` — Corollary 3.10.
* :func:`pml_prevents_disclosure` — Theorem 3.5's sufficient condition.
* :func:`lower_entropy_disclosed_attribute` — Prop. 3.6's construction.
* :func:`absolute_disclosure_bound` — Theorem 3.7; :func:`disclosure_threshold` and
  :func:`minimal_disclosure_mechanism` — Prop. 3.8.
* :func:`entry_pml_per_output`, :func:`entry_pml_level` — ``ℓ(D_i→y)``, the PML about one
  database entry (Section 4), straight from a :class:`~privopt.model.DatabasePrior`.

All in nats.
"""

from __future__ import annotations

__all__ = [
    "min_entropy",
    "attribute_kernel",
    "attribute_posteriors",
    "remaining_uncertainty",
    "discloses",
    "singles_out",
    "singling_out_threshold",
    "pml_prevents_disclosure",
    "lower_entropy_disclosed_attribute",
    "absolute_disclosure_bound",
    "disclosure_threshold",
    "minimal_disclosure_mechanism",
    "entry_pml_per_output",
    "entry_pml_level",
    "DISCLOSURE_TOLERANCE",
]

from typing import TYPE_CHECKING

import numpy as np

from privopt.errors import InputError
from privopt.measures import MeasureSetting, leakage_capacity, pml_level, with_unit
from privopt.model import DatabasePrior, Mechanism, as_matrix, as_prior
from privopt.validation import as_pmf, as_positive_int, as_stochastic_matrix, check_number

if TYPE_CHECKING:  # annotations only: nothing more is imported at run time
    from numpy.typing import ArrayLike

    from privopt.model.types import PriorLike

#: ``H_∞`` at or below this counts as 0 (a disclosure) in :func:`discloses`.
DISCLOSURE_TOLERANCE = 1e-12


@with_unit
def min_entropy(probs: PriorLike) -> float:
    """Min-entropy ``H_∞(P) = −ln max_x p(x)`` ([Saeidian-Rethinking] Def. 2.1).

    Parameters
    ----------
    probs : array_like or Prior
        A pmf (or a prior: its secret's pmf). A pmf is 1-D, finite, non-negative and sums
        to 1 within 1e-9; a :class:`~privopt.model.Prior`, ``JointPrior`` or ``DatabasePrior``
        gives its ``secret_probs``.

    Returns
    -------
    float
        ``H_∞`` (nats; ``unit="bits"`` for bits); 0 for a point mass. In ``[0, ln |X|]``,
        ``|X|`` the length of the pmf.

    Raises
    ------
    InputError
        If ``probs`` is not a pmf (field ``probs``) or ``unit`` is neither ``"nats"`` nor
        ``"bits"``.
    """
    if hasattr(probs, "secret_probs"):
        probs = probs.secret_probs
    return float(-np.log(as_pmf(probs, "probs").max()))


def attribute_kernel(attribute: ArrayLike, n_secrets: int) -> np.ndarray:
    """``P_{U|X}`` from a kernel (``|X| × |U|``) or a vector of ``|X|`` integer labels
    (a deterministic attribute ``U = f(X)``, labels ``0 … |U|−1``).

    Parameters
    ----------
    attribute : array_like
        The kernel or the labels. A kernel is a 2-D ``|X| × |U|`` array, finite,
        non-negative, rows summing to 1 within 1e-9; labels are a 1-D integer array of length
        ``|X|`` with entries ``≥ 0``.
    n_secrets : int
        ``|X|``.

    Returns
    -------
    numpy.ndarray
        The row-stochastic kernel, shape ``(|X|, |U|)``: the given kernel, or for labels the
        0/1 indicator matrix with ``|U| = max label + 1`` columns (a label that never occurs
        gives an all-zero column).

    Raises
    ------
    InputError
        If a 1-D ``attribute`` is not ``|X|`` integers ``≥ 0`` or a kernel has not ``|X|``
        rows or is not row-stochastic (field ``attribute``).
    """
    n_secrets = as_positive_int(n_secrets, "n_secrets", minimum=1)
    arr = np.asarray(attribute)
    if arr.ndim == 1:
        if arr.size != n_secrets or not np.issubdtype(arr.dtype, np.integer) or (arr < 0).any():
            raise InputError(
                f"a deterministic attribute is a vector of {n_secrets} integer labels ≥ 0",
                "attribute",
            )
        out = np.zeros((n_secrets, int(arr.max()) + 1))
        out[np.arange(n_secrets), arr] = 1.0
        return out
    kernel = (
        attribute.matrix
        if isinstance(attribute, Mechanism)
        else as_stochastic_matrix(attribute, "attribute")
    )
    if kernel.shape[0] != n_secrets:
        raise InputError(
            f"has {kernel.shape[0]} rows but the secret has {n_secrets} values", "attribute"
        )
    return kernel


def attribute_posteriors(
    prior: PriorLike, mechanism: Mechanism | ArrayLike, attribute: ArrayLike
) -> np.ndarray:
    """``Q_{U|Y=y} = P_{U|X} ∘ Q_{X|Y=y}`` for every output ([Saeidian-Rethinking] Section 3.2).

    Parameters
    ----------
    prior : Prior, JointPrior, DatabasePrior or array_like
        The adversary's prior ``Q_X`` (a plain pmf reads as a single secret).
    mechanism : Mechanism or array_like
        ``P_{Y|X}``: row-stochastic, one row per input of the prior, one column per output.
    attribute : array_like
        ``P_{U|X}`` or integer labels (see :func:`attribute_kernel`).

    Returns
    -------
    numpy.ndarray
        ``|Y| × |U|``; rows of outputs with ``Q_Y(y) = 0`` are nan. Every other row is the
        pmf ``Q_{U|Y=y}``.

    Raises
    ------
    InputError
        If the prior or the mechanism is malformed, the mechanism does not have one row per
        input of the prior, or the attribute is neither ``|X|`` integer labels ``≥ 0`` nor a
        row-stochastic matrix with ``|X|`` rows.
    """
    st = MeasureSetting(prior, mechanism)
    kernel = attribute_kernel(attribute, st.p.size)[st.s_mask]
    out = np.full((st.p_u.size, kernel.shape[1]), np.nan)
    out[st.u_mask] = (st.ps[:, None] * st.ch / st.pu[None, :]).T @ kernel
    return out


@with_unit
def remaining_uncertainty(
    prior: PriorLike, mechanism: Mechanism | ArrayLike, attribute: ArrayLike
) -> float:
    """``inf_y H_∞(Q_{U|Y=y})`` over the outputs ``y`` the adversary can see
    ([Saeidian-Rethinking] Def. 3.3; a minimum for finite ``Y``).

    Parameters
    ----------
    prior : Prior, JointPrior, DatabasePrior or array_like
        The adversary's prior ``Q_X``.
    mechanism : Mechanism or array_like
        Row-stochastic ``P_{Y|X}``, ``W[x, y] = p(y|x)``: one row per input of the prior, one
        column per output ``y``.
    attribute : array_like
        ``P_{U|X}`` or integer labels.

    Returns
    -------
    float
        The least remaining min-entropy (nats), in ``[0, ln |U|]``.

    Raises
    ------
    InputError
        If the prior or the mechanism is malformed, the mechanism does not have one row per
        input of the prior, the attribute is neither ``|X|`` integer labels ``≥ 0`` nor a
        row-stochastic matrix with ``|X|`` rows, or ``unit`` is neither ``"nats"`` nor
        ``"bits"``.
    """
    post = attribute_posteriors(prior, mechanism, attribute)
    post = post[~np.isnan(post[:, 0])]
    return float(max(-np.log(post.max(axis=1).max()), 0.0))


def discloses(
    prior: PriorLike,
    mechanism: Mechanism | ArrayLike,
    attribute: ArrayLike,
    tol: float = DISCLOSURE_TOLERANCE,
) -> bool:
    """Whether ``P_{Y|X}`` discloses ``U`` to the adversary ``Q_X`` ([Saeidian-Rethinking]
    Def. 3.3): some output leaves ``H_∞(Q_{U|Y=y}) = 0`` (within ``tol``).

    By Theorem 3.4 the answer depends on ``Q_X`` only through its support.

    Parameters
    ----------
    prior : Prior, JointPrior, DatabasePrior or array_like
        ``Q_X``.
    mechanism : Mechanism or array_like
        Row-stochastic ``P_{Y|X}``, ``W[x, y] = p(y|x)``: one row per input of the prior, one
        column per output ``y``.
    attribute : array_like
        ``P_{U|X}`` or integer labels.
    tol : float
        ``H_∞`` at or below ``tol`` counts as 0 (nats; default
        :data:`DISCLOSURE_TOLERANCE`, 1e-12).

    Returns
    -------
    bool
        True when :func:`remaining_uncertainty` is at most ``tol``.

    Raises
    ------
    InputError
        If the prior or the mechanism is malformed, the mechanism does not have one row per
        input of the prior, or the attribute is neither ``|X|`` integer labels ``≥ 0`` nor a
        row-stochastic matrix with ``|X|`` rows.
    """
    return remaining_uncertainty(prior, mechanism, attribute) <= tol


def singles_out(
    prior: PriorLike, mechanism: Mechanism | ArrayLike, tol: float = DISCLOSURE_TOLERANCE
) -> bool:
    """Whether ``P_{Y|X}`` singles out the value of ``X``: ``inf_y H_∞(P_{X|Y=y}) = 0``
    ([Saeidian-Rethinking] Def. 3.9; disclosure of the attribute ``U = X``).

    Parameters
    ----------
    prior : Prior, JointPrior, DatabasePrior or array_like
        The adversary's prior; a plain pmf (1-D, non-negative, summing to 1) is read as a
        single secret.
    mechanism : Mechanism or array_like
        Row-stochastic ``P_{Y|X}``, ``W[x, y] = p(y|x)``: one row per input of the prior, one
        column per output ``y``.
    tol : float
        ``H_∞`` at or below ``tol`` counts as 0 (nats; default 1e-12).

    Returns
    -------
    bool
        True when some output of positive probability leaves ``H_∞(P_{X|Y=y}) ≤ tol``.

    Raises
    ------
    InputError
        If the prior or the mechanism is malformed, or the mechanism does not have one row
        per input of the prior.
    """
    n = as_prior(prior).n_secrets
    return discloses(prior, mechanism, np.arange(n), tol)


@with_unit
def singling_out_threshold(prior: PriorLike) -> float:
    """``H_∞(P_X)``: an (ε, P_X)-PML mechanism with ``ε < H_∞(P_X)`` never singles out ``X``
    ([Saeidian-Rethinking] Corollary 3.10).

    Parameters
    ----------
    prior : Prior, JointPrior, DatabasePrior or array_like
        The prior ``P_X``; a plain pmf (1-D, non-negative, summing to 1) is read as a single secret.

    Returns
    -------
    float
        ``H_∞(P_X)`` (nats), in ``[0, ln |X|]``.

    Raises
    ------
    InputError
        If the prior is malformed or ``unit`` is neither ``"nats"`` nor ``"bits"``.
    """
    return min_entropy(as_prior(prior).secret_probs)


def pml_prevents_disclosure(
    prior: PriorLike, mechanism: Mechanism | ArrayLike, attribute: ArrayLike
) -> bool:
    """Theorem 3.5 of [Saeidian-Rethinking]: if the mechanism is (ε, P_X)-PML and
    ``H_∞(P_U) > ε``, it discloses ``U`` to no adversary with the support of ``P_X``.

    Returns whether this sufficient condition holds, ``pml_level < H_∞(P_U)`` (``False``
    does not mean that ``U`` is disclosed).

    Parameters
    ----------
    prior : Prior, JointPrior, DatabasePrior or array_like
        The true prior ``P_X``.
    mechanism : Mechanism or array_like
        Row-stochastic ``P_{Y|X}``, ``W[x, y] = p(y|x)``: one row per input of the prior, one
        column per output ``y``.
    attribute : array_like
        ``P_{U|X}`` or integer labels.

    Returns
    -------
    bool
        True when the PML level of the mechanism under ``P_X`` is below ``H_∞(P_U)``.

    Raises
    ------
    InputError
        If the prior or the mechanism is malformed, the mechanism does not have one row per
        input of the prior, or the attribute is neither ``|X|`` integer labels ``≥ 0`` nor a
        row-stochastic matrix with ``|X|`` rows.
    """
    prior = as_prior(prior)
    p_u = prior.secret_probs @ attribute_kernel(attribute, prior.n_secrets)
    return pml_level(prior, mechanism) < min_entropy(p_u)


def lower_entropy_disclosed_attribute(
    prior: PriorLike,
    mechanism: Mechanism | ArrayLike,
    attribute: ArrayLike,
    lam: float | None = None,
) -> np.ndarray:
    """Prop. 3.6 of [Saeidian-Rethinking]: from a disclosed attribute ``U``, an attribute
    ``W`` with ``H_∞(P_W) < H_∞(P_U)`` that is disclosed too (proof in its App. A.3).

    With ``u₁`` the value revealed at a disclosing output, ``P_{W|U=u₁} = δ_{u₁}`` and
    ``P_{W|U=i} = λ δ_{u₁} + (1−λ) δ_i`` for ``i ≠ u₁``, where
    ``λ > (max_u P_U(u) − P_U(u₁)) / (1 − P_U(u₁))``; then ``P_W(u₁) > max_u P_U(u)``.

    Parameters
    ----------
    prior : Prior, JointPrior, DatabasePrior or array_like
        ``P_X``.
    mechanism : Mechanism or array_like
        Row-stochastic ``P_{Y|X}``, ``W[x, y] = p(y|x)``: one row per input of the prior, one
        column per output ``y``.
    attribute : array_like
        ``P_{U|X}`` or integer labels of a disclosed attribute.
    lam : float, optional
        λ in ``(0, 1)``; default: halfway between the threshold and 1.

    Returns
    -------
    numpy.ndarray
        ``P_{W|X} = P_{U|X} P_{W|U}``, row-stochastic, shape ``(|X|, |U|)`` (``W`` takes the
        values of ``U``).

    Raises
    ------
    InputError
        If ``U`` is not disclosed, or λ is not above the threshold (strictly between it and
        1), or the prior, the mechanism or the attribute is malformed (see
        :func:`attribute_posteriors`).
    """
    prior = as_prior(prior)
    kernel = attribute_kernel(attribute, prior.n_secrets)
    post = attribute_posteriors(prior, mechanism, kernel)
    seen = ~np.isnan(post[:, 0])
    best = post[seen].max(axis=1)
    if -np.log(best.max()) > DISCLOSURE_TOLERANCE:
        raise InputError(
            "the attribute is not disclosed: Prop. 3.6 needs a disclosure", "attribute"
        )
    u1 = int(np.argmax(post[seen][int(np.argmax(best))]))
    p_u = prior.secret_probs @ kernel
    threshold = (p_u.max() - p_u[u1]) / (1 - p_u[u1]) if p_u[u1] < 1 else 0.0
    lam = 0.5 * (threshold + 1.0) if lam is None else check_number(lam, "lam")
    if not (threshold < lam < 1):
        raise InputError(f"must lie in ({threshold:.6g}, 1) for this attribute", "lam")
    k = kernel.shape[1]
    w_given_u = (1 - lam) * np.eye(k)
    w_given_u[:, u1] += lam
    w_given_u[u1] = 0.0
    w_given_u[u1, u1] = 1.0
    return kernel @ w_given_u


@with_unit
def absolute_disclosure_bound(
    mechanism: Mechanism | ArrayLike, adversary_prior: ArrayLike
) -> float:
    """Theorem 3.7 of [Saeidian-Rethinking]: with finite leakage capacity ``C``, every
    non-constant deterministic attribute ``V`` keeps, for the adversary ``Q_X`` and every
    output, ``H_∞(Q_{V|Y=y}) ≥ ln(1 + q_min/(1 − q_min) · e^{−C})``.

    Parameters
    ----------
    mechanism : Mechanism or array_like
        Row-stochastic ``P_{Y|X}``; ``C`` is its leakage capacity
        (:func:`privopt.measures.leakage_capacity`, prior-free).
    adversary_prior : array_like
        ``Q_X`` with full support: a pmf (1-D, summing to 1) with every entry ``> 0``. Only
        its least entry ``q_min`` enters the bound.

    Returns
    -------
    float
        The bound (0 when ``C = ∞``), in nats, in ``[0, ln 1/(1 − q_min)]``; ``inf`` for a
        single secret (``q_min = 1``: no attribute is non-constant, so the theorem holds for
        every level, the limit of the bound as ``q_min → 1``).

    Raises
    ------
    InputError
        If ``adversary_prior`` is not a pmf, has a zero entry or has not one entry per row
        of the mechanism, the mechanism is not row-stochastic, or ``unit`` is neither
        ``"nats"`` nor ``"bits"``.
    """
    q = as_pmf(adversary_prior, "adversary_prior")
    q_min = float(q.min())
    if q_min <= 0:
        raise InputError("Theorem 3.7 is about full-support adversaries", "adversary_prior")
    rows = as_matrix(mechanism).shape[0]
    if q.size != rows:
        raise InputError(
            f"has {q.size} entries but the mechanism has {rows} rows: give one probability "
            "per secret",
            "adversary_prior",
        )
    if q_min >= 1.0:
        return float("inf")
    capacity = leakage_capacity(mechanism)
    return float(np.log1p(q_min / (1 - q_min) * np.exp(-capacity)))


@with_unit
def disclosure_threshold(prior: PriorLike) -> float:
    """``ln 1/(1 − p_min)`` ([Saeidian-Rethinking] Prop. 3.8): below it, (ε, P_X)-PML implies
    finite leakage capacity (hence no disclosure at all, Theorem 3.7); from it on, some
    (ε, P_X)-PML mechanism discloses an attribute (:func:`minimal_disclosure_mechanism`).

    Parameters
    ----------
    prior : Prior, JointPrior, DatabasePrior or array_like
        The prior ``P_X``; a plain pmf (1-D, non-negative, summing to 1) is read as a single secret.

    Returns
    -------
    float
        The threshold (nats), ``p_min`` the least positive probability: in ``(0, ∞]``,
        ``inf`` for a point mass.

    Raises
    ------
    InputError
        If the prior is malformed or ``unit`` is neither ``"nats"`` nor ``"bits"``.
    """
    p = as_prior(prior).secret_probs
    return float(-np.log1p(-p[p > 0].min()))


def minimal_disclosure_mechanism(prior: PriorLike, alpha: float) -> np.ndarray:
    """The mechanism of Prop. 3.8 of [Saeidian-Rethinking]: ``W[x, 0] = α·1{x ≠ x_min}``,
    ``W[x, 1] = 1 − W[x, 0]``. It has ``ℓ(X→0) = ln 1/(1 − p_min)`` and
    ``ℓ(X→1) = ln 1/(1 − α(1 − p_min))``, and output 0 discloses ``U = 1{X ≠ x_min}``.

    Parameters
    ----------
    prior : Prior, JointPrior, DatabasePrior or array_like
        The prior ``P_X``; a plain pmf (1-D, non-negative, summing to 1) is read as a single secret.
    alpha : float
        α in ``(0, 1]``.

    Returns
    -------
    numpy.ndarray
        ``|X| × 2``, row-stochastic; ``x_min`` is the first secret of least positive
        probability (zero-mass secrets get ``W[x, 0] = α``).

    Raises
    ------
    InputError
        If α is not in ``(0, 1]`` or the prior is malformed.
    """
    alpha = check_number(alpha, "alpha")
    if not 0 < alpha <= 1:
        raise InputError(f"must lie in (0, 1], got {alpha}", "alpha")
    p = as_prior(prior).secret_probs
    col0 = alpha * (np.arange(p.size) != np.argmin(np.where(p > 0, p, np.inf)))
    return np.column_stack([col0, 1 - col0])


def _entry_joint(prior: DatabasePrior, mechanism, entry: int) -> np.ndarray:
    """``P(D_i = d, Y = y)`` as an ``m × |Y|`` array."""
    if not isinstance(prior, DatabasePrior):
        raise InputError("needs a DatabasePrior (the entries of a database)", "prior")
    entry = as_positive_int(entry, "entry", minimum=0)
    if not 0 <= entry < prior.n:
        raise InputError(f"must lie in 0..{prior.n - 1}, got {entry}", "entry")
    W = as_matrix(mechanism)
    if W.shape[0] != prior.size:
        raise InputError(
            f"needs {prior.size} rows (one per database), got {W.shape[0]}", "mechanism"
        )
    joint = (prior.probs[:, None] * W).reshape((prior.m,) * prior.n + (W.shape[1],))
    axes = tuple(j for j in range(prior.n) if j != entry)
    return joint.sum(axis=axes)


@with_unit
def entry_pml_per_output(
    prior: DatabasePrior, mechanism: Mechanism | ArrayLike, entry: int
) -> np.ndarray:
    """``ℓ(D_i→y) = ln max_{d∈supp P_{D_i}} P(y|D_i = d)/P(y)``, the PML about entry ``i``
    ([Saeidian-Rethinking] Section 4, Theorems 4.2(3) and 4.5; Def. 2.3 applied to the Markov chain
    ``D_i − X − Y``), from the database prior directly.

    Parameters
    ----------
    prior : DatabasePrior
        The prior over ``Dⁿ`` (any, not only products).
    mechanism : Mechanism or array_like
        ``P_{Y|X}`` on the ``mⁿ`` databases: row-stochastic, ``mⁿ`` rows in lexicographic
        order (built densely, with the joint ``mⁿ × |Y|``).
    entry : int
        ``i`` in ``0 … n−1`` (0 is ``x_1``, the most significant).

    Returns
    -------
    numpy.ndarray
        Per output (0 where ``P(y) = 0``): shape ``(|Y|,)``, in nats, each ``≥ 0``.

    Raises
    ------
    InputError
        If ``prior`` is not a :class:`~privopt.model.DatabasePrior`, ``entry`` is not in
        ``0 … n−1``, the mechanism is not row-stochastic with ``mⁿ`` rows, or ``unit`` is
        neither ``"nats"`` nor ``"bits"``.
    """
    joint = _entry_joint(prior, mechanism, entry)
    p_d = joint.sum(axis=1)
    keep = p_d > 0
    p_y = joint.sum(axis=0)
    out = np.zeros(p_y.size)
    seen = p_y > 0
    cond = joint[keep][:, seen] / p_d[keep, None]
    out[seen] = np.log(cond.max(axis=0) / p_y[seen])
    return np.maximum(out, 0.0)


@with_unit
def entry_pml_level(prior: DatabasePrior, mechanism: Mechanism | ArrayLike) -> float:
    """``max_i max_y ℓ(D_i→y)``: the largest PML about any single entry
    ([Saeidian-Rethinking] Theorem 4.2(3): its supremum over product priors is the DP level;
    Theorem 4.5: over all priors, the free-lunch level).

    Parameters
    ----------
    prior : DatabasePrior
        The prior over ``Dⁿ`` (any, not only products).
    mechanism : Mechanism or array_like
        ``P_{Y|X}`` on the ``mⁿ`` databases (row-stochastic, lexicographic order).

    Returns
    -------
    float
        The level (nats), ``≥ 0``.

    Raises
    ------
    InputError
        If ``prior`` is not a :class:`~privopt.model.DatabasePrior`, the mechanism is not
        row-stochastic with ``mⁿ`` rows, or ``unit`` is neither ``"nats"`` nor ``"bits"``.
    """
    if not isinstance(prior, DatabasePrior):
        raise InputError("needs a DatabasePrior (the entries of a database)", "prior")
    return float(max(entry_pml_per_output(prior, mechanism, i).max() for i in range(prior.n)))
