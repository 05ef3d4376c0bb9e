"""Closed forms from the papers, used as oracles and as mechanisms in their own right.

All in nats. Spec/math.md §3 gives the statements; each function cites its paper and
equation. Databases are ``Dⁿ`` with ``|D| = m`` in lexicographic order.
"""

from __future__ import annotations

import numpy as np
from scipy import special, stats

from privopt.errors import InfeasibleError, InputError
from privopt.model import DatabasePrior, JointPrior, Mechanism, hamming_neighbors
from privopt.model._validate import as_positive_int

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
]


def _mn(m, n) -> tuple[int, int]:
    return as_positive_int(m, "m", minimum=2), as_positive_int(n, "n", minimum=1)


def h(eps, m: int, n: int):
    """``h(ε) = n / (1 + e^ε/(m−1))``, the optimal Hamming distortion ([004] eq. 36).

    Decreases strictly from ``h(0) = n(m−1)/m`` to 0.
    """
    m, n = _mn(m, n)
    eps = np.asarray(eps, dtype=float)
    r = (m - 1) * np.exp(-eps)
    out = n * r / (1.0 + r)
    return float(out) if out.ndim == 0 else out


def h_inv(D, m: int, n: int):
    """``h⁻¹(D) = ln(n/D − 1) + ln(m−1)`` for ``0 < D < n`` ([004] eq. 19).

    ``+∞`` at ``D = 0``; values below 0 mean that ``D ≥ h(0)`` is met at ε = 0.
    """
    m, n = _mn(m, n)
    D = np.asarray(D, dtype=float)
    if ((D < 0) | (D >= n)).any():
        raise InputError(f"h⁻¹ needs 0 ≤ D < n = {n}", "D")
    with np.errstate(divide="ignore"):
        out = np.log(n / D - 1.0) + np.log(m - 1.0)
    return float(out) if out.ndim == 0 else out


def exponential_kernel(eps: float, m: int) -> np.ndarray:
    """``A_ε = ((1−r)I + rJ)/(1+(m−1)r)``, ``r = e^{−ε}``: one row of E_d (spec §3.2)."""
    r = float(np.exp(-eps))
    return ((1 - r) * np.eye(m) + r * np.ones((m, m))) / (1 + (m - 1) * r)


def exponential_mechanism(eps: float, m: int, n: int) -> Mechanism:
    """The exponential mechanism ``E_d[x,y] = e^{−ε d_H(x,y)} / (1+(m−1)e^{−ε})ⁿ`` ([004] eq. 30).

    Built as the Kronecker power ``A_ε^{⊗n}``. Exactly ε-DP, with expected Hamming distortion
    ``h(ε)`` under every prior ([004] Lemma 5).
    """
    m, n = _mn(m, n)
    _check_eps(eps)
    a = exponential_kernel(eps, m)
    w = np.ones((1, 1))
    for _ in range(n):
        w = np.kron(w, a)
    labels = DatabasePrior(m, n, row_probs=np.full(m, 1.0 / m)).labels
    return Mechanism(w, labels, labels)


def _check_eps(eps) -> float:
    eps = float(eps)
    if np.isnan(eps) or eps < 0:
        raise InputError(f"must be a number ≥ 0, got {eps}", "epsilon")
    return eps


def _database(prior) -> DatabasePrior:
    if not isinstance(prior, DatabasePrior):
        raise InputError("needs a DatabasePrior (m, n and a pmf over Dⁿ)", "prior")
    return prior


def epsilon_x(prior: DatabasePrior) -> float:
    """``ε_X = max_{x~x'} ln p(x)/p(x')`` over Hamming neighbours ([004] eq. 18).

    ``+∞`` without full support. For a product prior it is ``max_i ln(max p_i / min p_i)``.
    """
    prior = _database(prior)
    margs = prior.marginals() if prior.is_iid or prior.size <= 2**20 else None
    if margs is not None:
        return float(max(np.log(q.max() / q.min()) if q.min() > 0 else np.inf for q in margs))
    p = prior.probs
    if (p <= 0).any():
        return float("inf")
    rel = hamming_neighbors(prior.m, prior.n)
    logp = np.log(p)
    return float((logp[rel.left] - logp[rel.right]).max())


def _apply_inverse_kernel(tensor: np.ndarray, r: float, m: int, n: int) -> np.ndarray:
    """``(A_ε^{-1})^{⊗n}`` applied along each axis, ``A^{-1} = ((1+(m−1)r)I − rJ)/(1−r)``
    (spec §3.3, derived)."""
    out = tensor.reshape((m,) * n)
    for axis in range(n):
        total = out.sum(axis=axis, keepdims=True)
        out = ((1 + (m - 1) * r) * out - r * total) / (1 - r)
    return out.reshape(-1)


def identifiability_output_pmf(prior: DatabasePrior, eps: float) -> np.ndarray:
    """``p_Y = P_ε^{-1} p_X`` ([004] eq. 29), possibly with negative entries (then E_i does not
    exist at this ε)."""
    prior = _database(prior)
    eps = _check_eps(eps)
    if eps == 0:
        raise InputError("P_0 is singular; E_i needs ε > 0", "epsilon")
    return _apply_inverse_kernel(prior.probs, float(np.exp(-eps)), prior.m, prior.n)


def epsilon_tilde_x(prior: DatabasePrior, tol: float = 1e-14) -> float:
    """``ε̃_X``: the least ε such that ``p_X = P_ε p_Y`` has a pmf solution ``p_Y`` ([004] §3).

    The feasible set is ``[ε̃_X, ∞)`` (spec §3.5). Product priors use the closed form
    ``max_i ln((1 − (m−1) p_{i,min}) / p_{i,min})``; other priors a bisection on the
    Kronecker-axis inverse. ``+∞`` without full support (the paper's "always finite" needs it,
    spec §6).
    """
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
    while hi - lo > tol * max(1.0, hi):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if feasible(mid) else (mid, hi)
    return float(hi)


def identifiability_mechanism(prior: DatabasePrior, eps: float) -> Mechanism:
    """The identifiability-optimal mechanism E_i of [004] eq. (29).

    ``W[x,y] = p_Y(y) e^{−ε d(x,y)} / (p_X(x)(1+(m−1)e^{−ε})ⁿ)`` with ``p_Y = P_ε^{-1} p_X``.
    It exists iff ``ε ≥ ε̃_X``; then its identifiability level is ε and its distortion is
    ``h(ε)`` ([004] Lemma 4), and at ``ε = h⁻¹(D)`` it is PD-MIP optimal ([004] Thm 2).

    Raises
    ------
    InfeasibleError
        If ``ε < ε̃_X`` (with ε̃_X as the least achievable level).
    """
    prior = _database(prior)
    eps = _check_eps(eps)
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


def binary_entropy(q):
    """``h_b(q) = −q ln q − (1−q) ln(1−q)`` in nats."""
    q = np.asarray(q, dtype=float)
    out = special.entr(q) + special.entr(1 - q)
    return float(out) if out.ndim == 0 else out


def pdmip_valid_range(prior: DatabasePrior) -> tuple[float, float]:
    """``[0, h(ε̃_X)]``: where the PD-MIP closed form is the optimum ([004] Thm 2)."""
    prior = _database(prior)
    return 0.0, h(epsilon_tilde_x(prior), prior.m, prior.n)


def pdmip_value(prior: DatabasePrior, D: float, strict: bool = True) -> float:
    """Least mutual information at Hamming distortion D ([004] Thm 2; spec §3.7, derived).

    ``ε*_m(D) = H(X) − n h_b(D/n) − D ln(m−1)``, the Shannon lower bound. It is the optimum for
    ``0 ≤ D ≤ h(ε̃_X)``; outside that range it is only a lower bound, and ``strict=True``
    raises :class:`InputError`.
    """
    prior = _database(prior)
    m, n = prior.m, prior.n
    lo, hi = pdmip_valid_range(prior)
    if strict and not (lo <= D <= hi * (1 + 1e-12)):
        raise InputError(
            f"the closed form holds for 0 ≤ D ≤ h(ε̃_X) = {hi:.12g}; outside it is only a lower "
            "bound (pass strict=False)",
            "max_distortion",
        )
    if prior.is_iid:  # H(X) = n H(row) for i.i.d. rows: nothing enumerated
        q = prior.row_probs
        hx = n * float(stats.entropy(q[q > 0]))
    else:
        p = prior.probs
        hx = float(stats.entropy(p[p > 0]))
    return hx - n * binary_entropy(D / n) - D * np.log(m - 1)


def zeta(prior: JointPrior) -> np.ndarray:
    """``ζ(y) = e^{H(S|Y=y)} / Σ_y' e^{H(S|Y=y')}`` ([002] Corollary 2; H in nats, spec §2.7).

    Observations of zero mass get ``ζ = 0``.
    """
    if not isinstance(prior, JointPrior):
        raise InputError("ζ needs a JointPrior p(s, y)", "prior")
    post = prior.p_s_given_y  # |Y| × |S|
    out = np.zeros(prior.n_inputs)
    mask = prior.p_y > 0
    out[mask] = np.exp(stats.entropy(post[mask].T))
    return out / out.sum()


def laplace_counting_pml_bound(n: int, b: float, c: float) -> float:
    """[000] Prop. 4.6: ``sup_y ℓ(D_i→y) ≤ a − ln((1−c) + c e^a)``, ``a = 1/(nb)``,
    for ``Y ∼ Lap(K/n, b)`` and i.i.d. entries with ``P(f=1) ∈ (c, 1−c)``."""
    a = 1.0 / (n * b)
    return float(a - np.log((1 - c) + c * np.exp(a)))


def laplace_counting_pml_bound_simplified(n: int, b: float, c: float) -> float:
    """[000] Prop. 4.6, simplified: ``(1−c)/(nb) + c²/(2n²b²)``."""
    a = 1.0 / (n * b)
    return float((1 - c) * a + c**2 * a**2 / 2)


def laplace_counting_pml_sup(n: int, b: float, p: float) -> float:
    """The exact ``sup_y ℓ(D_i→y)`` for a fixed ``p`` (spec §3.15, derived, verified):
    ``a − ln(min(p,1−p) e^a + max(p,1−p))``, ``a = 1/(nb)``; tight for [000] Prop. 4.6 at p = c."""
    a = 1.0 / (n * b)
    return float(a - np.log(min(p, 1 - p) * np.exp(a) + max(p, 1 - p)))


def threshold_query_pml(n: int, p: float, m: int) -> float:
    """``ℓ(X→1) = −ln P(K > m)``, ``K ∼ Bin(n, p)``: PML of the answer "K > m" ([000] Ex. 3.11)."""
    return float(-np.log1p(-stats.binom.cdf(m, n, p)))


def threshold_query_chernoff_bound(n: int, p: float, m: int) -> float:
    """Chernoff bound ``−ln(1 − e^{−n KL(m/n ‖ p)})`` on :func:`threshold_query_pml` for
    ``m/n ≤ p`` ([000] Ex. 3.11, Fig. 1; Bernoulli KL in nats)."""
    t = m / n
    if t > p:
        raise InputError(f"the bound needs m/n ≤ p, got m/n = {t}", "m")
    kl = t * np.log(t / p) + (1 - t) * np.log((1 - t) / (1 - p)) if t > 0 else -np.log(1 - p)
    if kl <= 0.0:
        return float("inf")  # at m/n = p the bound is vacuous
    return float(-np.log1p(-np.exp(-n * kl)))


def pml_bound_from_ldp(eps: float, p_min: float) -> float:
    """ε-LDP ⇒ ``ln 1/(p_min + e^{−ε}(1−p_min))``-PML ([003] Prop. 6)."""
    return float(-np.log(p_min + np.exp(-eps) * (1 - p_min)))


def pml_bound_from_ldi(eps: float, p_min: float, support_size: int) -> float:
    """ε-LDI ⇒ ``ln 1/(p_min(1 + e^{−ε}(|supp p| − 1)))``-PML ([003] Prop. 6)."""
    return float(-np.log(p_min * (1 + np.exp(-eps) * (support_size - 1))))


def maximal_leakage_bound(eps: float, delta: float, eps_max: float) -> float:
    """(ε,δ)-PML ⇒ ``L ≤ ln(e^ε + δ e^{ε_max})`` ([003] Lemma 3(2))."""
    return float(np.log(np.exp(eps) + delta * np.exp(eps_max)))


def rate_distortion_hamming_uniform(k: int, D: float) -> float:
    """``R(D) = ln k − h_b(D) − D ln(k−1)`` for a uniform source on k symbols with Hamming
    distortion, ``0 ≤ D ≤ (k−1)/k`` (the Corollary 1 oracle of [002], spec §5.7)."""
    if not 0 <= D <= (k - 1) / k:
        return 0.0
    return float(np.log(k) - binary_entropy(D) - D * np.log(k - 1))


def dp_mutual_information_lower_bound(eps: float, k: int, n: int) -> float:
    """[002] Thm 4: ``I(Y;U) ≥ α log₂(1 + n/k) − 1`` bits with ``α = 1 − e^{−kε/2}``, for
    ``U = Y + Lap(1/ε)`` and ``Y`` uniform on ``{0, k, …, n}``. Returned in **bits**."""
    alpha = 1 - np.exp(-k * eps / 2)
    return float(alpha * np.log2(1 + n / k) - 1)
