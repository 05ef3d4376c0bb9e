"""Closed forms from the papers, used as oracles and as mechanisms in their own right.

All in nats; each function cites its paper and equation. Databases are ``Dⁿ`` with
``|D| = m`` in lexicographic order.
"""

from __future__ import annotations

__all__ = [
    "h",
    "h_inv",
    "exponential_kernel",
    "exponential_mechanism",
    "epsilon_x",
    "epsilon_tilde_x",
    "identifiability_output_pmf",
    "identifiability_mechanism",
    "pdmip_value",
    "pdmip_valid_range",
    "binary_entropy",
    "zeta",
    "laplace_counting_pml_bound",
    "laplace_counting_pml_bound_simplified",
    "laplace_counting_pml_sup",
    "threshold_query_pml",
    "threshold_query_chernoff_bound",
    "pml_bound_from_ldp",
    "pml_bound_from_ldi",
    "maximal_leakage_bound",
    "rate_distortion_hamming_uniform",
    "dp_mutual_information_lower_bound",
    "shannon_lower_bound",
    "shannon_lower_bound_inverse",
    "krr_distortion",
    "pml_uniform_hamming_distortion",
    "pml_uniform_hamming_level",
    "lip_uniform_hamming_distortion",
    "lip_uniform_hamming_level",
    "maximal_leakage_hamming_distortion",
    "maximal_leakage_hamming_level",
    "adaptive_composition_pml",
    "adaptive_composition_pml_delta",
    "adaptive_composition_pml_tail",
    "adaptive_composition_eml_pml",
    "adaptive_composition_eml",
    "geometric_mechanism",
]

import math
from typing import TYPE_CHECKING

import numpy as np

from privopt.errors import InfeasibleError, InputError
from privopt.measures import shannon_entropy
from privopt.model import DatabasePrior, JointPrior, Mechanism, hamming_neighbors
from privopt.validation import (
    as_positive_int,
    check_budget,
    check_level,
    check_number,
    check_numbers,
    check_probability,
)

if TYPE_CHECKING:  # annotations only: nothing more is imported at run time
    from numpy.typing import ArrayLike


def _mn(m, n) -> tuple[int, int]:
    return as_positive_int(m, "m", minimum=2), as_positive_int(n, "n", minimum=1)


def h(eps: ArrayLike, m: int, n: int) -> float | np.ndarray:
    """``h(ε) = n / (1 + e^ε/(m−1))``, the optimal Hamming distortion.

    Wang, Ying & Zhang (2016), eq. (36).

    Decreases strictly from ``h(0) = n(m−1)/m`` to 0.

    Parameters
    ----------
    eps : float or array_like
        Privacy level(s) ε in nats, ``≥ 0``, of any shape; ``inf`` is allowed (``h = 0``).
    m : int
        Row alphabet size ``|D|``, ``≥ 2``.
    n : int
        Number of rows, ``≥ 1``.

    Returns
    -------
    float or numpy.ndarray
        The expected Hamming distortion (number of changed rows), in ``[0, n(m−1)/m]``: a
        float for a scalar ``eps``, otherwise an array of its shape.

    Raises
    ------
    InputError
        If ``eps`` holds a negative number or nan, or ``m`` or ``n`` is not an integer in
        range.
    """
    m, n = _mn(m, n)
    eps = check_numbers(eps, "epsilon")
    r = (m - 1) * np.exp(-eps)
    out = n * r / (1.0 + r)
    return float(out) if out.ndim == 0 else out


def h_inv(D: ArrayLike, m: int, n: int) -> float | np.ndarray:
    """``h⁻¹(D) = ln(n/D − 1) + ln(m−1)`` for ``0 < D < n`` (Wang, Ying & Zhang (2016), eq. 19).

    ``+∞`` at ``D = 0``; values below 0 mean that ``D ≥ h(0)`` is met at ε = 0.

    Parameters
    ----------
    D : float or array_like
        Expected Hamming distortion(s) (number of changed rows), in ``[0, n)``, of any
        shape.
    m : int
        Row alphabet size ``|D|``, ``≥ 2``.
    n : int
        Number of rows, ``≥ 1``.

    Returns
    -------
    float or numpy.ndarray
        ε in nats (``+inf`` at ``D = 0``, negative above ``h(0) = n(m−1)/m``): a float for
        a scalar ``D``, otherwise an array of its shape.

    Raises
    ------
    InputError
        If ``D`` holds a negative number, nan or a value ``≥ n``, or ``m`` or ``n`` is not
        an integer in range.
    """
    m, n = _mn(m, n)
    D = check_numbers(D, "D")
    if (D >= n).any():
        raise InputError(f"h⁻¹ needs 0 ≤ D < n = {n}", "D")
    # ln(n/D − 1) as ln(n − D) − ln D: no overflow of n/D for a subnormal D
    with np.errstate(divide="ignore"):
        out = np.log(n - D) - np.log(D) + np.log(m - 1.0)
    return float(out) if out.ndim == 0 else out


def exponential_kernel(eps: float, m: int) -> np.ndarray:
    """``A_ε = ((1−r)I + rJ)/(1+(m−1)r)``, ``r = e^{−ε}``: the one-row factor of E_d.

    Wang, Ying & Zhang (2016), eq. (30).

    Parameters
    ----------
    eps : float
        ε in nats, ``≥ 0``; ``inf`` is allowed (the identity).
    m : int
        Row alphabet size ``|D|``, ``≥ 2``.

    Returns
    -------
    numpy.ndarray
        ``m × m``, symmetric and row-stochastic: ``1/(1+(m−1)r)`` on the diagonal and
        ``r/(1+(m−1)r)`` off it (uniform at ε = 0).

    Raises
    ------
    InputError
        If ``eps`` is not a number ``≥ 0`` or ``m`` is not an integer ``≥ 2``.
    """
    r = math.exp(-check_level(eps, "epsilon"))
    m = as_positive_int(m, "m", minimum=2)
    return ((1 - r) * np.eye(m) + r * np.ones((m, m))) / (1 + (m - 1) * r)


def exponential_mechanism(eps: float, m: int, n: int) -> Mechanism:
    """The exponential mechanism ``E_d[x,y] = e^{−ε d_H(x,y)} / (1+(m−1)e^{−ε})ⁿ``.

    Wang, Ying & Zhang (2016), eq. (30).

    Built as the Kronecker power ``A_ε^{⊗n}``. Exactly ε-DP, with expected Hamming distortion
    ``h(ε)`` under every prior (Wang, Ying & Zhang (2016), Lemma 5).

    Parameters
    ----------
    eps : float
        ε in nats, ``≥ 0``; ``inf`` is allowed (the identity).
    m : int
        Row alphabet size ``|D|``, ``≥ 2``.
    n : int
        Number of rows, ``≥ 1``.

    Returns
    -------
    Mechanism
        ``mⁿ × mⁿ`` on the databases of ``Dⁿ`` in lexicographic order, inputs and outputs
        labelled as those of :class:`~privopt.model.DatabasePrior` ``(m, n)``.

    Raises
    ------
    InputError
        If ``eps`` is not a number ``≥ 0`` or ``m`` or ``n`` is not an integer in range.
    """
    m, n = _mn(m, n)
    check_level(eps, "epsilon")
    a = exponential_kernel(eps, m)
    w = np.ones((1, 1))
    for _ in range(n):
        w = np.kron(w, a)
    labels = DatabasePrior(m, n, row_probs=np.full(m, 1.0 / m)).labels
    return Mechanism(w, labels, labels)


def _database(prior) -> DatabasePrior:
    if not isinstance(prior, DatabasePrior):
        raise InputError("needs a DatabasePrior (m, n and a pmf over Dⁿ)", "prior")
    return prior


def epsilon_x(prior: DatabasePrior) -> float:
    """``ε_X = max_{x~x'} ln p(x)/p(x')`` over Hamming neighbours.

    Wang, Ying & Zhang (2016), eq. (18).

    ``+∞`` without full support. For a product prior it is ``max_i ln(max p_i / min p_i)``.

    Parameters
    ----------
    prior : DatabasePrior
        The pmf over ``Dⁿ`` (i.i.d. rows, a product of row marginals or any joint pmf).

    Returns
    -------
    float
        ``ε_X`` in nats, ``≥ 0`` (0 for the uniform prior, ``inf`` without full support).

    Raises
    ------
    InputError
        If ``prior`` is not a :class:`~privopt.model.DatabasePrior`.
    """
    prior = _database(prior)
    margs = prior.marginals() if prior.is_iid or prior.size <= 2**20 else None
    if margs is not None:
        # a difference of logs: q.max()/q.min() overflows for a subnormal minimum
        return float(
            max(np.log(q.max()) - np.log(q.min()) if q.min() > 0 else np.inf for q in margs)
        )
    p = prior.probs
    if (p <= 0).any():
        return float("inf")
    rel = hamming_neighbors(prior.m, prior.n)
    logp = np.log(p)
    return float((logp[rel.left] - logp[rel.right]).max())


def _apply_inverse_kernel(tensor: np.ndarray, r: float, m: int, n: int) -> np.ndarray:
    """``(A_ε^{-1})^{⊗n}`` applied along each axis, ``A^{-1} = ((1+(m−1)r)I − rJ)/(1−r)``
    (derived: the inverse of the one-row kernel, applied along each axis)."""
    out = tensor.reshape((m,) * n)
    for axis in range(n):
        total = out.sum(axis=axis, keepdims=True)
        out = ((1 + (m - 1) * r) * out - r * total) / (1 - r)
    return out.reshape(-1)


def identifiability_output_pmf(prior: DatabasePrior, eps: float) -> np.ndarray:
    """``p_Y = P_ε^{-1} p_X``, possibly with negative entries (then E_i does not exist at ε).

    Wang, Ying & Zhang (2016), eq. (29).

    Parameters
    ----------
    prior : DatabasePrior
        The pmf over ``Dⁿ`` (i.i.d. rows, a product of row marginals or any joint pmf).
    eps : float
        ε in nats, ``> 0``; ``inf`` is allowed (then ``p_Y = p_X``).

    Returns
    -------
    numpy.ndarray
        Shape ``(mⁿ,)``, one entry per database in lexicographic order; the entries sum to
        1 but may be negative.

    Raises
    ------
    InputError
        If ``prior`` is not a :class:`~privopt.model.DatabasePrior`, or ``eps`` is not a
        number ``> 0`` (``P_0`` is singular).
    """
    prior = _database(prior)
    eps = check_level(eps, "epsilon")
    if eps == 0:
        raise InputError("P_0 is singular; E_i needs ε > 0", "epsilon")
    return _apply_inverse_kernel(prior.probs, float(np.exp(-eps)), prior.m, prior.n)


def epsilon_tilde_x(prior: DatabasePrior, tol: float = 1e-14) -> float:
    """``ε̃_X``: the least ε such that ``p_X = P_ε p_Y`` has a pmf solution ``p_Y``.

    Wang, Ying & Zhang (2016), §3.

    The feasible set is ``[ε̃_X, ∞)`` (derived: ``A_ε = A_ε' B`` with ``B`` stochastic for
    ``ε' ≥ ε``). Product priors use the closed form
    ``max_i ln((1 − (m−1) p_{i,min}) / p_{i,min})``; other priors a bisection on the
    Kronecker-axis inverse. ``+∞`` without full support (the paper's "always finite" needs it).

    Parameters
    ----------
    prior : DatabasePrior
        The pmf over ``Dⁿ`` (i.i.d. rows, a product of row marginals or any joint pmf).
    tol : float, default 1e-14
        Relative tolerance of the bisection (priors that are not products of row marginals
        only): it stops once ``hi − lo ≤ tol·max(1, hi)``. At least 1e-15 (round-off); the
        bisection also stops after 200 halvings.

    Returns
    -------
    float
        ``ε̃_X`` in nats, ``≥ 0`` (0 for the uniform prior, ``inf`` without full support);
        from the bisection, its feasible upper end.

    Raises
    ------
    InputError
        If ``prior`` is not a :class:`~privopt.model.DatabasePrior`, or the bisection finds
        no feasible ε up to ``1e4``.
    """
    tol = check_number(tol, "tol", minimum=1e-15)
    prior = _database(prior)
    m, n = prior.m, prior.n
    margs = prior.marginals() if prior.is_iid or prior.size <= 2**20 else None
    if margs is not None:
        vals = []
        for q in margs:
            qmin = q.min()
            if qmin <= 0:
                return float("inf")
            vals.append(max(np.log((1 - (m - 1) * qmin) / qmin), 0.0))
        return float(max(vals))
    p = prior.probs
    if (p <= 0).any():
        return float("inf")
    if np.allclose(p, 1.0 / p.size, rtol=0, atol=1e-15):
        return 0.0

    def feasible(eps: float) -> bool:
        return _apply_inverse_kernel(p, float(np.exp(-eps)), m, n).min() >= -1e-15

    hi = 1.0
    while not feasible(hi):
        hi *= 2.0
        if hi > 1e4:
            raise InputError("ε̃_X search diverged", "prior")
    lo = 0.0
    for _ in range(200):  # ≤ 200 halvings: a tolerance at round-off ends too
        if hi - lo <= tol * max(1.0, hi):
            break
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if feasible(mid) else (mid, hi)
    return float(hi)


def identifiability_mechanism(prior: DatabasePrior, eps: float) -> Mechanism:
    """The identifiability-optimal mechanism E_i of Wang, Ying & Zhang (2016), eq. (29).

    ``W[x,y] = p_Y(y) e^{−ε d(x,y)} / (p_X(x)(1+(m−1)e^{−ε})ⁿ)`` with ``p_Y = P_ε^{-1} p_X``.
    It exists iff ``ε ≥ ε̃_X``; then its identifiability level is ε and its distortion is
    ``h(ε)`` (Wang, Ying & Zhang (2016), Lemma 4), and at ``ε = h⁻¹(D)`` it is PD-MIP optimal
    (Thm 2 there).

    Parameters
    ----------
    prior : DatabasePrior
        The pmf over ``Dⁿ`` (i.i.d. rows, a product of row marginals or any joint pmf),
        with full support.
    eps : float
        ε in nats, ``> 0``; ``inf`` is allowed (the identity).

    Returns
    -------
    Mechanism
        ``mⁿ × mⁿ`` on the databases of ``Dⁿ`` in lexicographic order, labelled as the
        prior's databases.

    Raises
    ------
    InfeasibleError
        If ``ε < ε̃_X`` (with ε̃_X as the least achievable level), or the prior lacks full
        support (least achievable ``inf``).
    InputError
        If ``prior`` is not a :class:`~privopt.model.DatabasePrior`, or ``eps`` is not a
        number ``> 0``.
    """
    prior = _database(prior)
    eps = check_level(eps, "epsilon")
    p = prior.probs
    if (p <= 0).any():
        raise InfeasibleError("E_i needs a full-support prior", float("inf"), "epsilon")
    p_y = identifiability_output_pmf(prior, eps)
    if p_y.min() < -1e-12:
        # near-uniform priors make P_ε^{-1} ill-conditioned (factor ((1+(2m−3)r)/(1−r))ⁿ), so
        # p_Y just above ε̃_X can dip below −1e-12 by rounding alone: let ε̃_X decide
        tilde = epsilon_tilde_x(prior)
        if eps < tilde * (1 - 1e-12):
            raise InfeasibleError(f"E_i does not exist at ε = {eps:.6g} < ε̃_X", tilde, "epsilon")
    p_y = np.clip(p_y, 0.0, None)
    kron = exponential_mechanism(eps, prior.m, prior.n).matrix
    w = kron * p_y[None, :] / p[:, None]
    return Mechanism(w / w.sum(axis=1, keepdims=True), prior.labels, prior.labels)


def binary_entropy(q: ArrayLike) -> float | np.ndarray:
    """``h_b(q) = −q ln q − (1−q) ln(1−q)`` in nats.

    Parameters
    ----------
    q : float or array_like
        Probability(ies) in ``[0, 1]``, of any shape.

    Returns
    -------
    float or numpy.ndarray
        ``h_b(q)`` in nats, in ``[0, ln 2]`` (0 at ``q = 0`` and ``q = 1``): a float for a
        scalar ``q``, otherwise an array of its shape.

    Raises
    ------
    InputError
        If ``q`` holds a value outside ``[0, 1]``, nan, or something that is not a number.
    """
    from scipy import special

    q = check_numbers(q, "q", maximum=1.0)
    out = special.entr(q) + special.entr(1 - q)
    return float(out) if out.ndim == 0 else out


def pdmip_valid_range(prior: DatabasePrior) -> tuple[float, float]:
    """``[0, h(ε̃_X)]``: where the PD-MIP closed form is the optimum (Wang, Ying & Zhang (2016),
    Thm 2).

    Parameters
    ----------
    prior : DatabasePrior
        The pmf over ``Dⁿ`` (i.i.d. rows, a product of row marginals or any joint pmf).

    Returns
    -------
    tuple of float
        ``(0.0, h(ε̃_X))``: distortions (numbers of changed rows), the upper end in
        ``[0, n(m−1)/m]`` (0 without full support, where ``ε̃_X = inf``).

    Raises
    ------
    InputError
        If ``prior`` is not a :class:`~privopt.model.DatabasePrior`.
    """
    prior = _database(prior)
    return 0.0, h(epsilon_tilde_x(prior), prior.m, prior.n)


def pdmip_value(prior: DatabasePrior, D: float, strict: bool = True) -> float:
    """Least mutual information at Hamming distortion D (Wang, Ying & Zhang (2016), Thm 2).

    ``ε*_m(D) = H(X) − n h_b(D/n) − D ln(m−1)``, the Shannon lower bound. It is the optimum for
    ``0 ≤ D ≤ h(ε̃_X)``; outside that range it is only a lower bound, and ``strict=True``
    raises :class:`InputError`.

    Parameters
    ----------
    prior : DatabasePrior
        The pmf over ``Dⁿ`` (i.i.d. rows, a product of row marginals or any joint pmf).
    D : float
        Expected Hamming distortion (number of changed rows): in ``[0, h(ε̃_X)]``
        (:func:`pdmip_valid_range`, with a relative slack of 1e-12) when ``strict``,
        otherwise in ``[0, n]``.
    strict : bool, default True
        Refuse ``D`` outside the range where the closed form is the optimum.

    Returns
    -------
    float
        ``ε*_m(D)`` in nats; with ``strict=False`` it may be negative (a vacuous bound).

    Raises
    ------
    InputError
        If ``prior`` is not a :class:`~privopt.model.DatabasePrior`, ``strict`` is true
        and ``D`` lies outside ``[0, h(ε̃_X)]``, or ``D`` lies outside ``[0, n]`` (field
        ``max_distortion``).
    """
    D = check_budget(D, "max_distortion")
    prior = _database(prior)
    m, n = prior.m, prior.n
    lo, hi = pdmip_valid_range(prior)
    if strict and not (lo <= D <= hi * (1 + 1e-12)):
        raise InputError(
            f"the closed form holds for 0 ≤ D ≤ h(ε̃_X) = {hi:.12g}; outside it is only a lower "
            "bound (pass strict=False)",
            "max_distortion",
        )
    if D > n:
        raise InputError(f"must lie in [0, n] = [0, {n}], got {D:g}", "max_distortion")
    if prior.is_iid:  # H(X) = n H(row) for i.i.d. rows: nothing enumerated
        q = prior.row_probs
        hx = n * shannon_entropy(q[q > 0])
    else:
        p = prior.probs
        hx = shannon_entropy(p[p > 0])
    return hx - n * binary_entropy(D / n) - D * np.log(m - 1)


def zeta(prior: JointPrior) -> np.ndarray:
    """``ζ(y) = e^{H(S|Y=y)} / Σ_y' e^{H(S|Y=y')}`` (Calmon & Fawaz (2012), Corollary 2; H in nats).

    Observations of zero mass get ``ζ = 0``.

    Parameters
    ----------
    prior : JointPrior
        The joint pmf ``p(s, y)`` of the secret and the observation.

    Returns
    -------
    numpy.ndarray
        Shape ``(|Y|,)``: a pmf over the observations (non-negative, summing to 1).

    Raises
    ------
    InputError
        If ``prior`` is not a :class:`~privopt.model.JointPrior`.
    """
    from scipy import stats

    if not isinstance(prior, JointPrior):
        raise InputError("ζ needs a JointPrior p(s, y)", "prior")
    post = prior.p_s_given_y  # |Y| × |S|
    out = np.zeros(prior.n_inputs)
    mask = prior.p_y > 0
    out[mask] = np.exp(stats.entropy(post[mask].T))
    return out / out.sum()


def _laplace_args(n, b, share, field: str) -> tuple[int, float, float]:
    """The checked arguments of the Laplace counting bounds: ``n ≥ 1`` entries, a noise scale
    ``b > 0`` (``inf`` allowed) and a probability ``share``."""
    n = as_positive_int(n, "n", minimum=1)
    b = check_number(b, "b", allow_inf=True, strict=True)
    return n, b, check_probability(share, field)


def laplace_counting_pml_bound(n: int, b: float, c: float) -> float:
    """Saeidian et al. (2024), Prop. 4.6: ``sup_y ℓ(D_i→y) ≤ a − ln((1−c) + c e^a)``,
    ``a = 1/(nb)``, for ``Y ∼ Lap(K/n, b)`` and i.i.d. entries with ``P(f=1) ∈ (c, 1−c)``.

    Arguments out of range raise :class:`~privopt.errors.InputError`.

    Parameters
    ----------
    n : int
        Number of entries, ``≥ 1``.
    b : float
        Scale of the Laplace noise on ``K/n``, ``> 0`` (``inf`` gives 0).
    c : float
        The margin, in ``[0, ½)``.

    Returns
    -------
    float
        The bound in nats, in ``[0, (1−c)/(nb)]``.
    """
    n, b, c = _laplace_args(n, b, c, "c")
    a = 1.0 / (n * b)
    return float(a - np.log((1 - c) + c * np.exp(a)))


def laplace_counting_pml_bound_simplified(n: int, b: float, c: float) -> float:
    """Saeidian et al. (2024), Prop. 4.6, simplified: ``(1−c)/(nb) + c²/(2n²b²)``.

    Arguments out of range raise :class:`~privopt.errors.InputError`.

    Parameters
    ----------
    n : int
        Number of entries, ``≥ 1``.
    b : float
        Scale of the Laplace noise on ``K/n``, ``> 0`` (``inf`` gives 0).
    c : float
        The margin, in ``[0, ½)``.

    Returns
    -------
    float
        The bound in nats, ``≥ 0``.
    """
    n, b, c = _laplace_args(n, b, c, "c")
    a = 1.0 / (n * b)
    return float((1 - c) * a + c**2 * a**2 / 2)


def laplace_counting_pml_sup(n: int, b: float, p: float) -> float:
    """The exact ``sup_y ℓ(D_i→y)`` for a fixed ``p`` (derived, verified numerically):
    ``a − ln(min(p,1−p) e^a + max(p,1−p))``, ``a = 1/(nb)``; tight for Saeidian et al. (2024),
    Prop. 4.6 at p = c.

    Arguments out of range raise :class:`~privopt.errors.InputError`.

    Parameters
    ----------
    n : int
        Number of entries, ``≥ 1``.
    b : float
        Scale of the Laplace noise on ``K/n``, ``> 0`` (``inf`` gives 0).
    p : float
        ``P(f=1)`` of every entry, in ``[0, 1]`` (the value is symmetric in ``p ↔ 1−p``).

    Returns
    -------
    float
        The supremum in nats, in ``[0, 1/(nb)]``.
    """
    n, b, p = _laplace_args(n, b, p, "p")
    a = 1.0 / (n * b)
    return float(a - np.log(min(p, 1 - p) * np.exp(a) + max(p, 1 - p)))


def threshold_query_pml(n: int, p: float, m: int) -> float:
    """``ℓ(X→1) = −ln P(K > m)``, ``K ∼ Bin(n, p)``: PML of the answer "K > m".

    Saeidian et al. (2024), Ex. 3.11.

    Arguments out of range raise :class:`~privopt.errors.InputError`.

    Parameters
    ----------
    n : int
        Number of entries (binomial trials), ``≥ 0``.
    p : float
        Probability that an entry counts, in ``[0, 1]``.
    m : int
        The threshold.

    Returns
    -------
    float
        The PML in nats, ``≥ 0``: 0 for ``m < 0``, ``inf`` when ``P(K > m) = 0`` (e.g.
        ``m ≥ n``; numpy then warns of a division by zero).
    """
    from scipy import stats

    n = as_positive_int(n, "n", minimum=0)
    p = check_probability(p, "p")
    m = int(check_number(m, "m", minimum=-math.inf))
    return float(-np.log1p(-stats.binom.cdf(m, n, p)))


def threshold_query_chernoff_bound(n: int, p: float, m: int) -> float:
    """Chernoff bound ``−ln(1 − e^{−n KL(m/n ‖ p)})`` on :func:`threshold_query_pml` for
    ``m/n ≤ p`` (Saeidian et al. (2024), Ex. 3.11, Fig. 1; Bernoulli KL in nats).

    Parameters
    ----------
    n : int
        Number of entries (binomial trials), ``≥ 1``.
    p : float
        Probability that an entry counts, in ``[0, 1]``.
    m : int
        The threshold, with ``0 ≤ m ≤ n·p``.

    Returns
    -------
    float
        An upper bound on :func:`threshold_query_pml`, in nats, ``≥ 0``; ``inf`` (vacuous)
        at ``m/n = p``.

    Raises
    ------
    InputError
        If ``m/n > p``.
    """
    n = as_positive_int(n, "n", minimum=1)
    p = check_probability(p, "p")
    m = check_number(m, "m")
    t = m / n
    if t > p:
        raise InputError(f"the bound needs m/n ≤ p, got m/n = {t}", "m")
    kl = t * np.log(t / p) + (1 - t) * np.log((1 - t) / (1 - p)) if t > 0 else -np.log(1 - p)
    if kl <= 0.0:
        return float("inf")  # at m/n = p the bound is vacuous
    return float(-np.log1p(-np.exp(-n * kl)))


def pml_bound_from_ldp(eps: float, p_min: float) -> float:
    """ε-LDP ⇒ ``ln 1/(p_min + e^{−ε}(1−p_min))``-PML (Saeidian et al. (2023), Prop. 6).

    Parameters
    ----------
    eps : float
        The LDP level ε in nats, ``≥ 0``; ``inf`` is allowed.
    p_min : float
        The least prior mass on the support, ``min_{x∈supp p} p(x)``, in ``[0, 1]``.

    Returns
    -------
    float
        The PML level in nats, in ``[0, min(ε, −ln p_min)]`` (0 at ε = 0, ``−ln p_min`` at
        ε = ``inf``).

    Raises
    ------
    InputError
        If ``eps`` is not a number ``≥ 0`` or ``p_min`` is not in ``[0, 1]``.
    """
    eps, p_min = check_level(eps, "epsilon"), check_probability(p_min, "p_min")
    return float(-np.log(p_min + np.exp(-eps) * (1 - p_min)))


def pml_bound_from_ldi(eps: float, p_min: float, support_size: int) -> float:
    """ε-LDI ⇒ ``ln 1/(p_min(1 + e^{−ε}(|supp p| − 1)))``-PML (Saeidian et al. (2023), Prop. 6).

    Parameters
    ----------
    eps : float
        The LDI level ε in nats, ``≥ 0``; ``inf`` is allowed.
    p_min : float
        The least prior mass on the support, ``min_{x∈supp p} p(x)``, in ``[0, 1]``.
    support_size : int
        ``|supp p|``, ``≥ 1``.

    Returns
    -------
    float
        The PML level in nats: at most ``−ln p_min`` (its value at ε = ``inf``; ``inf`` for
        ``p_min = 0``), and ``≥ 0`` whenever ``p_min ≤ 1/support_size``, as for a pmf.

    Raises
    ------
    InputError
        If ``eps`` is not a number ``≥ 0``, ``p_min`` is not in ``[0, 1]`` or
        ``support_size`` is not an integer ``≥ 1``.
    """
    eps, p_min = check_level(eps, "epsilon"), check_probability(p_min, "p_min")
    support_size = as_positive_int(support_size, "support_size", minimum=1)
    return float(-np.log(p_min * (1 + np.exp(-eps) * (support_size - 1))))


def maximal_leakage_bound(eps: float, delta: float, eps_max: float) -> float:
    """(ε,δ)-PML ⇒ ``L ≤ ln(e^ε + δ e^{ε_max})`` (Saeidian et al. (2023), Lemma 3(2)).

    Parameters
    ----------
    eps : float
        The PML level ε in nats, ``≥ 0``; ``inf`` is allowed.
    delta : float
        The tail probability δ, in ``[0, 1]``.
    eps_max : float
        ``ε_max = −ln min_{x∈supp p} p(x)`` of the prior in nats, ``≥ 0``
        (:func:`privopt.measures.epsilon_max`); ``inf`` is allowed.

    Returns
    -------
    float
        The bound on the maximal leakage in nats, ``≥ ε`` (``= ε`` at δ = 0), computed
        without overflow for large levels.

    Raises
    ------
    InputError
        If ``eps`` or ``eps_max`` is not a number ``≥ 0`` or ``delta`` is not in ``[0, 1]``.
    """
    eps, eps_max = check_level(eps, "epsilon"), check_level(eps_max, "eps_max")
    delta = check_probability(delta, "delta")
    # ln(e^ε + δ e^{ε_max}) without forming e^ε (it overflows past ε ≈ 709)
    return float(np.logaddexp(eps, np.log(delta) + eps_max) if delta > 0 else eps)


def rate_distortion_hamming_uniform(k: int, D: float) -> float:
    """``R(D) = ln k − h_b(D) − D ln(k−1)`` for a uniform source on k symbols with Hamming
    distortion, ``0 ≤ D ≤ (k−1)/k`` (the Corollary 1 oracle of Calmon & Fawaz (2012)).

    Parameters
    ----------
    k : int
        Alphabet size, ``≥ 2``.
    D : float
        Expected Hamming distortion, a finite number ``≥ 0``; beyond ``(k−1)/k`` the rate
        is 0.

    Returns
    -------
    float
        ``R(D)`` in nats, in ``[0, ln k]`` (``ln k`` at ``D = 0``).

    Raises
    ------
    InputError
        If ``k`` is not an integer ``≥ 2`` or ``D`` is not a finite number ``≥ 0``.
    """
    k, D = as_positive_int(k, "k", minimum=2), check_budget(D, "D")
    if not D <= (k - 1) / k:
        return 0.0
    return float(np.log(k) - binary_entropy(D) - D * np.log(k - 1))


def dp_mutual_information_lower_bound(eps: float, k: int, n: int) -> float:
    """Calmon & Fawaz (2012), Thm 4: ``I(Y;U) ≥ α log₂(1 + n/k) − 1`` bits with
    ``α = 1 − e^{−kε/2}``, for
    ``U = Y + Lap(1/ε)`` and ``Y`` uniform on ``{0, k, …, n}``. Returned in **bits**.

    Arguments out of range raise :class:`~privopt.errors.InputError`.

    Parameters
    ----------
    eps : float
        The DP level ε in nats, ``≥ 0`` (the noise scale is ``1/ε``); ``inf`` is allowed.
    k : int
        Spacing of the support of ``Y``, ``≥ 1``.
    n : int
        Largest value of ``Y``, a multiple of ``k``.

    Returns
    -------
    float
        The lower bound in **bits**, in ``[−1, log₂(1 + n/k) − 1]`` (−1, vacuous, at
        ε = 0).
    """
    eps = check_level(eps, "epsilon")
    k, n = as_positive_int(k, "k", minimum=1), as_positive_int(n, "n", minimum=1)
    alpha = 1 - np.exp(-k * eps / 2)
    return float(alpha * np.log2(1 + n / k) - 1)


def shannon_lower_bound(entropy: float, D: float, m: int, n: int = 1) -> float:
    """Fano's lower bound on the mutual information at Hamming distortion ``D`` on ``Dⁿ``.

    ``R(D) ≥ H(X) − n h_b(D/n) − D ln(m−1)`` for ``0 ≤ D ≤ n(m−1)/m``: Fano's inequality
    (Cover & Thomas (2006), Thm 2.10.1) bounds ``H(X_i|U_i) ≤ h_b(P_i) + P_i ln(m−1)`` row by
    row, and the right side is concave and increasing in the row error ``P_i`` up to
    ``(m−1)/m``. Wang, Ying & Zhang (2016), Thm 2, show that it is the exact optimum
    (E_i attains it) for ``0 ≤ D ≤ h(ε̃_X)``; for a Bernoulli(p) source (m = 2, n = 1) that is
    ``R(D) = h_b(p) − h_b(D)`` on ``D ≤ min(p, 1−p)`` (Cover & Thomas (2006), Thm 10.3.1).

    Parameters
    ----------
    entropy : float
        ``H(X)`` in nats.
    D : float
        Expected Hamming distortion, ``0 ≤ D ≤ n(m−1)/m``.
    m, n : int
        Row alphabet size and number of rows (``n = 1`` for a single alphabet of ``m`` symbols).

    Returns
    -------
    float
        The bound in nats (it may be negative near ``D = n(m−1)/m``).
    """
    m, n = _mn(m, n)
    D = check_budget(D, "D")
    if not D <= n * (m - 1) / m * (1 + 1e-12):
        raise InputError(f"the bound holds for 0 ≤ D ≤ n(m−1)/m = {n * (m - 1) / m:.12g}", "D")
    D = min(D, n * (m - 1) / m)
    return float(entropy - n * binary_entropy(D / n) - D * np.log(m - 1))


def shannon_lower_bound_inverse(entropy: float, level: float, m: int, n: int = 1) -> float:
    """The distortion at which :func:`shannon_lower_bound` equals ``level``.

    The bound decreases strictly on ``[0, n(m−1)/m]`` (its slope is ``−h⁻¹(D)``, Wang, Ying &
    Zhang (2016), proof of Thm 2), from ``H(X)`` to ``H(X) − n ln m ≤ 0``. So for
    ``0 ≤ level ≤ H(X)`` there is exactly one root; ``level ≥ H(X)`` gives 0.

    Parameters
    ----------
    entropy : float
        ``H(X)`` in nats.
    level : float
        Mutual information in nats, ``≥ 0``.
    m, n : int
        Row alphabet size and number of rows.

    Returns
    -------
    float
        ``D`` in ``[0, n(m−1)/m]``.
    """
    from scipy import optimize

    m, n = _mn(m, n)
    level = check_level(level, "level")
    if level >= entropy:
        return 0.0
    hi = n * (m - 1) / m
    return float(
        optimize.brentq(
            lambda d: shannon_lower_bound(entropy, d, m, n) - level,
            0.0,
            hi,
            xtol=1e-15,
            rtol=4 * np.finfo(float).eps,
        )
    )


def krr_distortion(eps: float, k: int) -> float:
    """Least Hamming distortion of an ε-LDP mechanism on a uniform prior over ``k`` symbols.

    ``D* = (k−1)/(e^ε + k − 1)``, attained only by k-ary randomised response (Kairouz, Oh &
    Viswanath (2016); it is ``h(ε)`` of Wang, Ying & Zhang (2016), eq. (36), with ``n = 1``).

    Parameters
    ----------
    eps : float
        LDP level ``ε ≥ 0``.
    k : int
        Alphabet size, ``k ≥ 2``.

    Returns
    -------
    float
        ``D*`` in ``[0, (k−1)/k]``.
    """
    return h(check_level(eps, "epsilon"), k, 1)


def pml_uniform_hamming_distortion(eps: float, k: int) -> float:
    """Least Hamming distortion of an ε-PML mechanism on a uniform prior over ``k`` symbols.

    ``D* = max(0, 1 − e^ε/k)``. Lower bound: ε-PML means ``p(u|x) ≤ e^ε p_U(u)``
    (Saeidian et al. (2023), Def. 4 and Thm 1), so ``P(U = X) = Σ_x p(x|x)/k ≤ e^ε Σ_x p_U(x)/k
    = e^ε/k``. Attained by ``W = (a − b)I + bJ`` with ``a = min(1, e^ε/k)``,
    ``b = (1 − a)/(k − 1)``, whose output is uniform.

    Parameters
    ----------
    eps : float
        PML level ``ε ≥ 0``.
    k : int
        Alphabet size, ``k ≥ 2``.

    Returns
    -------
    float
        ``D*`` in ``[0, (k−1)/k]``.
    """
    eps, k = check_level(eps, "epsilon"), as_positive_int(k, "k", minimum=2)
    return float(max(0.0, -np.expm1(eps - np.log(k))))


def pml_uniform_hamming_level(D: float, k: int) -> float:
    """Least ε-PML level within Hamming distortion ``D`` on a uniform prior over ``k`` symbols.

    The inverse of :func:`pml_uniform_hamming_distortion`: ``ε* = ln(k(1 − D))`` for
    ``D < (k−1)/k`` and 0 beyond.

    Parameters
    ----------
    D : float
        Distortion budget, ``0 ≤ D ≤ 1``.
    k : int
        Alphabet size, ``k ≥ 2``.

    Returns
    -------
    float
        ``ε*`` in ``[0, ln k]``.
    """
    k = as_positive_int(k, "k", minimum=2)
    D = check_budget(D, "max_distortion")
    return float(max(0.0, np.log(k) + np.log1p(-D))) if D < 1 else 0.0


def lip_uniform_hamming_distortion(eps: float, k: int) -> float:
    """Least Hamming distortion of an ε-LIP mechanism on a uniform prior over ``k`` symbols.

    ``D* = max(1 − e^ε/k, (k−1) e^{−ε}/k)``. Derived here from the definition of local
    information privacy ([Calmon-Fawaz] Def. 6: ``e^{−ε} ≤ p(x|u)/p(x) ≤ e^ε``). Lower bound:
    ``P(U = X) = Σ_u p(u) p(X = u | u) ≤ max_x p(x|u)``, and every posterior entry is at most
    ``e^ε/k`` and, since the others are at least ``e^{−ε}/k``, at most
    ``1 − (k−1) e^{−ε}/k``. Attained by the symmetric channel ``W = (a − b)I + bJ`` with
    ``a = min(e^ε/k, 1 − (k−1) e^{−ε}/k)``, ``b = (1 − a)/(k − 1)``: it is doubly stochastic,
    so its posteriors are its columns, and ``e^{−ε}/k ≤ b ≤ a ≤ e^ε/k``.

    Parameters
    ----------
    eps : float
        LIP level ``ε ≥ 0``.
    k : int
        Alphabet size, ``k ≥ 2``.

    Returns
    -------
    float
        ``D*`` in ``(0, (k−1)/k]``.
    """
    eps, k = check_level(eps, "epsilon"), as_positive_int(k, "k", minimum=2)
    if np.isinf(eps):
        return 0.0
    return float(max(-np.expm1(eps - np.log(k)), (k - 1) * np.exp(-eps) / k))


def lip_uniform_hamming_level(D: float, k: int) -> float:
    """Least ε-LIP level within Hamming distortion ``D`` on a uniform prior over ``k`` symbols.

    The inverse of :func:`lip_uniform_hamming_distortion`:
    ``ε* = max(0, ln(k(1 − D)), ln((k−1)/(kD)))``; ``D = 0`` needs ``ε = ∞`` (only the
    identity has distortion 0, and its posteriors vanish off the diagonal).

    Parameters
    ----------
    D : float
        Distortion budget, ``D ≥ 0``.
    k : int
        Alphabet size, ``k ≥ 2``.

    Returns
    -------
    float
        ``ε*`` in ``[0, ∞]``.
    """
    k = as_positive_int(k, "k", minimum=2)
    D = check_budget(D, "max_distortion")
    if D == 0:
        return float(np.inf)
    upper = np.log(k) + np.log1p(-D) if D < 1 else -np.inf
    return float(max(0.0, upper, np.log((k - 1) / (k * D))))


def _sorted_pmf(probs) -> np.ndarray:
    q = check_numbers(probs, "probs")
    if q.ndim != 1 or q.size < 1 or not np.isfinite(q).all() or not q.sum() > 0:
        raise InputError("must be a finite non-negative vector with a positive sum", "probs")
    return np.sort(q / q.sum())[::-1]


def _knapsack_accuracy(q_sorted: np.ndarray, t: float) -> float:
    """``max Σ_u p(u) c_u`` over ``c ∈ [0,1]^k`` with ``Σ c_u ≤ t`` (``q`` sorted decreasing)."""
    if not t < q_sorted.size:  # also t = inf (e^ε beyond float range)
        return 1.0
    j = int(np.floor(t))
    return float(min(1.0, q_sorted[:j].sum() + (t - j) * q_sorted[j]))


def maximal_leakage_hamming_distortion(probs: ArrayLike, eps: float) -> float:
    """Least Hamming distortion with maximal leakage ``L ≤ ε`` (any prior, one alphabet).

    Maximal leakage is ``L = ln Σ_u max_x p(u|x)`` (Issa, Wagner & Kamath (2020); Saeidian et
    al. (2023), eq. (1)). With ``c_u = max_x p(u|x) ∈ [0, 1]``, ``P(U = X) = Σ_u p(u) p(u|u)
    ≤ Σ_u p(u) c_u`` and ``Σ_u c_u ≤ e^ε``: a fractional knapsack, so with ``p`` sorted
    decreasing and ``t = e^ε``, ``j = ⌊t⌋``,

    ``D* = 1 − (p_(1) + … + p_(j) + (t − j) p_(j+1))``.

    It is attained: keep the ``j`` likeliest symbols, keep the next one with probability
    ``t − j`` and send every other input to the likeliest symbol. Zero-mass symbols (outside
    the support, over which the maximum runs) never help.

    Parameters
    ----------
    probs : array_like
        The prior ``p``: a 1-D vector of finite non-negative weights, not all zero
        (rescaled to sum to 1).
    eps : float
        Maximal-leakage level ``ε ≥ 0``.

    Returns
    -------
    float
        ``D*`` in ``[0, 1 − max p]``.

    Raises
    ------
    InputError
        If ``probs`` is not a 1-D vector of finite non-negative numbers or ``eps`` is not a
        number ``≥ 0`` (``inf`` is allowed and gives 0).
    """
    q = _sorted_pmf(probs)
    eps = check_level(eps, "epsilon")
    t = math.exp(eps) if eps < math.log(q.size) else float(q.size)  # e^ε ≥ k: every symbol
    return float(max(0.0, 1.0 - _knapsack_accuracy(q, t)))


def maximal_leakage_hamming_level(probs: ArrayLike, D: float) -> float:
    """Least maximal leakage within Hamming distortion ``D`` (any prior, one alphabet).

    The inverse of :func:`maximal_leakage_hamming_distortion`: the least ``t = e^ε ≥ 1`` whose
    knapsack accuracy reaches ``1 − D``; ``ε* = 0`` once ``D ≥ 1 − max p``.

    Parameters
    ----------
    probs : array_like
        The prior ``p``: a 1-D vector of finite non-negative weights, not all zero
        (rescaled to sum to 1).
    D : float
        Distortion budget, ``D ≥ 0``.

    Returns
    -------
    float
        ``ε*`` in ``[0, ln |supp p|]``.

    Raises
    ------
    InputError
        If ``probs`` is not a 1-D vector of finite non-negative numbers or ``D`` is not a
        finite number ``≥ 0``.
    """
    q = _sorted_pmf(probs)
    target = 1.0 - check_budget(D, "max_distortion")
    if target <= q[0]:
        return 0.0
    cum = np.cumsum(q)
    j = int(np.searchsorted(cum, target * (1 - 1e-15), side="left"))  # first with cum ≥ target
    j = min(j, q.size - 1)
    before = cum[j - 1] if j > 0 else 0.0
    t = j + (target - before) / q[j] if q[j] > 0 else float(j)
    return float(np.log(max(t, 1.0)))


# --- adaptive composition ([Saeidian-PML], Theorem 4) ---------------------------------------
def adaptive_composition_pml(eps1: float, eps2: float) -> float:
    """ε₁-PML ``P_{Y|X}`` and ε₂-PML ``P_{Z|X,Y=y}`` for every ``y`` (each under its
    posterior ``P_{X|Y=y}``) give an ``(ε₁ + ε₂)``-PML joint release ``P_{YZ|X}``
    ([Saeidian-PML], Theorem 4(1)).

    Parameters
    ----------
    eps1, eps2 : float
        The PML levels of the two stages (nats).

    Returns
    -------
    float
        ``ε₁ + ε₂``.
    """
    return check_level(eps1, "eps1") + check_level(eps2, "eps2")


def adaptive_composition_pml_delta(
    eps1: float, delta1: float, eps2: float, delta2: float
) -> tuple[float, float]:
    """(ε₁,δ₁)-PML and (ε₂,δ₂)-PML for every ``y`` give
    ``(ε₁ + ε₂, δ₁ + δ₂ − δ₁δ₂)``-PML ([Saeidian-PML], Theorem 4(2)).

    Parameters
    ----------
    eps1, delta1, eps2, delta2 : float

    Returns
    -------
    tuple of float
        ``(ε, δ)``.
    """
    eps = adaptive_composition_pml(eps1, eps2)
    d1 = check_probability(delta1, "delta1")
    d2 = check_probability(delta2, "delta2")
    return eps, d1 + d2 - d1 * d2


def adaptive_composition_pml_tail(
    eps1: float, delta1: float, eps2: float, delta2: float
) -> tuple[float, float]:
    """(ε₁,δ₁)-PML and ``P[ℓ(X→Z|Y) ≤ ε₂] ≥ 1 − δ₂`` give ``(ε₁ + ε₂, δ₁ + δ₂)``-PML
    ([Saeidian-PML], Theorem 4(3)).

    Parameters
    ----------
    eps1, delta1, eps2, delta2 : float

    Returns
    -------
    tuple of float
        ``(ε, min(δ₁ + δ₂, 1))``.
    """
    eps = adaptive_composition_pml(eps1, eps2)
    d1 = check_probability(delta1, "delta1")
    d2 = check_probability(delta2, "delta2")
    return eps, min(d1 + d2, 1.0)


def adaptive_composition_eml_pml(eps1: float, delta1: float, eps2: float) -> tuple[float, float]:
    """(ε₁,δ₁)-EML ``P_{Y|X}`` and ε₂-PML ``P_{Z|X,Y=y}`` give ``(ε₁ + ε₂, δ₁)``-EML
    ([Saeidian-PML], Theorem 4(4), last sentence).

    Parameters
    ----------
    eps1, delta1, eps2 : float

    Returns
    -------
    tuple of float
        ``(ε, δ)``.
    """
    return adaptive_composition_pml(eps1, eps2), check_probability(delta1, "delta1")


def adaptive_composition_eml(
    eps1: float, delta1: float, eps2: float, delta2: float, eps_max: float
) -> tuple[float, float]:
    """(ε₁,δ₁)-EML and (ε₂,δ₂)-EML for every ``y`` give (ε, δ₁ + δ₂)-EML with
    ``ε = ln( δ₂/(δ₁+δ₂) · e^{ε_max} + e^{ε₁+ε₂} )``, ``ε_max = −ln min_x P_X(x)``
    ([Saeidian-PML], Theorem 4(5)).

    Parameters
    ----------
    eps1, delta1, eps2, delta2 : float
    eps_max : float
        ``−ln min_{x ∈ supp P_X} P_X(x)`` (:func:`privopt.measures.epsilon_max`).

    Returns
    -------
    tuple of float
        ``(ε, min(δ₁ + δ₂, 1))``; with ``δ₁ = δ₂ = 0`` it is ``(ε₁ + ε₂, 0)``.
    """
    total = adaptive_composition_pml(eps1, eps2)  # ln(w e^{ε_max} + e^{ε₁+ε₂}), no overflow
    eps_max = check_level(eps_max, "eps_max")
    d1 = check_probability(delta1, "delta1")
    d2 = check_probability(delta2, "delta2")
    weight = d2 / (d1 + d2) if d1 + d2 > 0 else 0.0
    eps = float(np.logaddexp(total, np.log(weight) + eps_max) if weight > 0 else total)
    return eps, min(d1 + d2, 1.0)


def geometric_mechanism(eps: float, size: int) -> Mechanism:
    """The range-restricted geometric mechanism on ``{0, …, size−1}``:
    ``G[i,j] = (1−α)/(1+α) · α^{|i−j|}`` inside, ``α^{|i−j|}/(1+α)`` at the two ends
    (``α = e^{−ε}``), which is ε-DP for neighbours ``|i − j| = 1`` and, followed by the
    Bayes-optimal remap, minimises any loss non-decreasing in ``|i − u|`` for every prior
    ([Ghosh-Roughgarden-Sundararajan], Def. 2.3 and Thm 1.1).

    Parameters
    ----------
    eps : float
        ε ≥ 0 (nats).
    size : int
        The number of counts ``n + 1`` (≥ 2).

    Returns
    -------
    Mechanism
    """
    eps = check_level(eps, "epsilon")
    size = int(size)
    if size < 2:
        raise InputError(f"needs at least 2 values, got {size}", "size")
    a = float(np.exp(-eps))
    i, j = np.meshgrid(np.arange(size), np.arange(size), indexing="ij")
    G = (1 - a) / (1 + a) * a ** np.abs(i - j)
    G[:, 0] = a ** i[:, 0] / (1 + a)
    G[:, -1] = a ** (size - 1 - i[:, -1]) / (1 + a)
    return Mechanism(G)
