"""The optimisation programs of the papers, written as they stand, for study and cross-checks.

These are not the library's design path (that is :func:`privopt.design`); they reproduce the
programs through which the papers prove their closed forms, so that the closed forms can be
checked against them:

* :func:`relaxed_privacy_distortion`: R-PD of Wang, Ying & Zhang (2016), eqs. (22)–(27), the
  relaxation shared by identifiability and differential privacy (Lemma 1: optimum ``h(ε)``).
* :func:`distance_profile_lp`: the distance-profile programs (50) and (56) of the proof of
  Lemma 1 (optimum ``P_l ∝ N_l e^{−lε}``).
* :func:`zeta_program` and :func:`zeta_program_level`: Corollary 2 of Calmon & Fawaz (2012),
  eq. (35): the maximum-information-leakage program in its ζ form, for ``Y = f(S)``.

The linear programs use ``scipy.optimize.linprog`` (HiGHS); the ζ program needs an
exponential cone and imports cvxpy only when called. All in nats.
"""

from __future__ import annotations

__all__ = [
    "RelaxedResult",
    "ProfileResult",
    "ZetaResult",
    "relaxed_privacy_distortion",
    "distance_profile_lp",
    "distance_profile_closed_form",
    "zeta_program",
    "zeta_program_level",
    "MAX_RPD_DATABASES",
]

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy import optimize, stats
from scipy.special import comb

from privopt.errors import InputError, SolverError
from privopt.model import Distortion, JointPrior, database_digits, hamming_neighbors
from privopt.papers import closed_forms as cf
from privopt.validation import as_positive_int, check_number

#: Largest ``m**n`` for which R-PD is built (its joint has ``(m**n)²`` variables).
MAX_RPD_DATABASES = 256


def _highs(c, a_ub, b_ub, a_eq, b_eq, what: str):
    res = optimize.linprog(
        c, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=b_eq, bounds=(0, None), method="highs"
    )
    if res.status != 0:
        raise SolverError(f"{what}: HiGHS stopped with status {res.status} ({res.message})")
    return res


# =============================================================================================
# R-PD
# =============================================================================================
@dataclass(frozen=True)
class RelaxedResult:
    """An optimum of R-PD.

    Attributes
    ----------
    value : float
        The least expected Hamming distortion ``D*_relaxed(ε)``.
    joint : numpy.ndarray
        An optimal joint ``q[x, y] = p_Y(y) p_{X|Y}(x|y)`` (``mⁿ × mⁿ``); the optimum is not
        unique (any output pmf works, Lemma 1's second claim).
    output_pmf : numpy.ndarray
        Its ``p_Y``.
    posterior : numpy.ndarray
        ``p_{X|Y}(x|y)`` as a ``mⁿ × mⁿ`` matrix (columns ``y``); uniform where ``p_Y(y) = 0``.
    """

    value: float
    joint: np.ndarray
    output_pmf: np.ndarray
    posterior: np.ndarray


def relaxed_privacy_distortion(m: int, n: int, eps: float) -> RelaxedResult:
    """Solve R-PD (Wang, Ying & Zhang (2016), eqs. (22)–(27)) as a linear program.

    R-PD is PD-I with the prior constraint (12) replaced by ``Σ_y p_Y(y) = 1`` (26). Written in
    the joint ``q[x,y] = p_Y(y) p_{X|Y}(x|y)`` it is linear::

        minimise   Σ_{x,y} q[x,y] d(x,y)                                   (22)
        subject to q[x,y] ≤ e^ε q[x',y]   for Hamming neighbours x ~ x'      (23)
                   Σ_{x,y} q[x,y] = 1,  q ≥ 0                              (24)–(27)

    Lemma 1 (eqs. (35)–(36)) gives its optimum ``h(ε) = n/(1 + e^ε/(m−1))`` for every ε ≥ 0.

    Parameters
    ----------
    m, n : int
        Row alphabet size (``m ≥ 2``) and number of rows; ``m**n ≤`` :data:`MAX_RPD_DATABASES`.
    eps : float
        Privacy level ``ε ≥ 0``.

    Returns
    -------
    RelaxedResult
        The optimal value and one optimal solution.

    Raises
    ------
    InputError
        For ``m**n`` above :data:`MAX_RPD_DATABASES` or a bad ε.
    SolverError
        If HiGHS does not reach an optimum.
    """
    m = as_positive_int(m, "m", minimum=2)
    n = as_positive_int(n, "n", minimum=1)
    eps = check_number(eps, "epsilon")
    size = m**n
    if size > MAX_RPD_DATABASES:
        raise InputError(
            f"m**n = {size} databases give {size**2} variables; R-PD is built only up to "
            f"{MAX_RPD_DATABASES} databases",
            "n",
        )
    digits = database_digits(m, n)
    dist = (digits[:, None, :] != digits[None, :, :]).sum(axis=2).astype(float)
    rel = hamming_neighbors(m, n)
    pairs = rel.n_pairs
    # variable index of q[x, y] is x·size + y; one row per (pair, y)
    row = np.repeat(np.arange(pairs * size), 2)
    ys = np.tile(np.arange(size), pairs)
    left = rel.left.repeat(size) * size + ys
    right = rel.right.repeat(size) * size + ys
    col = np.empty(2 * pairs * size, dtype=np.int64)
    col[0::2], col[1::2] = left, right
    data = np.tile([1.0, -math.exp(eps)], pairs * size)
    a_ub = sp.csr_matrix((data, (row, col)), shape=(pairs * size, size * size))
    a_eq = sp.csr_matrix(np.ones((1, size * size)))
    res = _highs(dist.ravel(), a_ub, np.zeros(pairs * size), a_eq, [1.0], "R-PD")
    q = np.clip(res.x.reshape(size, size), 0.0, None)
    p_y = q.sum(axis=0)
    posterior = np.full((size, size), 1.0 / size)
    used = p_y > 0
    posterior[:, used] = q[:, used] / p_y[used]
    return RelaxedResult(float(res.fun), q, p_y, posterior)


# =============================================================================================
# Distance-profile LPs of the proof of Lemma 1
# =============================================================================================
@dataclass(frozen=True)
class ProfileResult:
    """An optimum of a distance-profile program.

    Attributes
    ----------
    value : float
        ``min Σ_l l P_l``.
    profile : numpy.ndarray
        The optimal ``P_0, …, P_L``: the posterior mass at Hamming distance ``l`` from ``y``.
    """

    value: float
    profile: np.ndarray


def _shell_sizes(m: int, n: int, levels: int) -> np.ndarray:
    """``N_l = C(n, l)(m−1)^l``, the number of databases at distance ``l`` (proof of Lemma 1)."""
    ell = np.arange(levels + 1)
    return comb(n, ell, exact=False) * float(m - 1) ** ell


def _profile_args(m, n, eps, levels, mass) -> tuple[int, int, float, int, float]:
    m = as_positive_int(m, "m", minimum=2)
    n = as_positive_int(n, "n", minimum=1)
    eps = check_number(eps, "epsilon")
    levels = n if levels is None else int(levels)
    if not 0 <= levels <= n:
        raise InputError(f"must lie in 0..n = {n}, got {levels}", "levels")
    mass = float(mass)
    if not (math.isfinite(mass) and mass >= 0):
        raise InputError(f"must be a finite number ≥ 0, got {mass}", "mass")
    return m, n, eps, levels, mass


def distance_profile_lp(
    m: int, n: int, eps: float, levels: int | None = None, mass: float = 1.0
) -> ProfileResult:
    """The distance-profile LP of the proof of Lemma 1 of Wang, Ying & Zhang (2016).

    With ``P_l`` the posterior mass at Hamming distance ``l`` from the output and
    ``N_l = C(n,l)(m−1)^l`` (eq. (44) and after)::

        minimise   Σ_{l=0}^{L} l P_l
        subject to P_{l−1}/N_{l−1} ≤ e^ε P_l/N_l,  l = 1, …, L
                   Σ_{l=0}^{L} P_l = mass,  P ≥ 0

    ``L = n`` and ``mass = 1`` is the full program, whose optimum ``P_l ∝ N_l e^{−lε}`` has
    value ``h(ε)`` (eqs. (57)–(58), with the exponent ``e^{−lε}`` where the paper prints
    ``e^{−(n−l)ε}``); ``L = n−1`` with ``mass = 1 − N_n e^{−nε}/(1+(m−1)e^{−ε})ⁿ`` is (50), and
    ``L = n−2`` with the next mass is (56).

    Parameters
    ----------
    m, n : int
        Row alphabet size (``m ≥ 2``) and number of rows.
    eps : float
        Privacy level ``ε ≥ 0``.
    levels : int, optional
        The last distance ``L`` kept (default ``n``).
    mass : float
        The total mass ``Σ P_l`` (default 1).

    Returns
    -------
    ProfileResult
        The optimal value and profile.

    Raises
    ------
    SolverError
        If HiGHS does not reach an optimum.
    """
    m, n, eps, levels, mass = _profile_args(m, n, eps, levels, mass)
    sizes = _shell_sizes(m, n, levels)
    k = levels + 1
    a_ub = np.zeros((levels, k))
    for ell in range(1, k):
        a_ub[ell - 1, ell - 1] = 1.0 / sizes[ell - 1]
        a_ub[ell - 1, ell] = -math.exp(eps) / sizes[ell]
    res = _highs(
        np.arange(k, dtype=float),
        a_ub if levels else None,
        np.zeros(levels) if levels else None,
        np.ones((1, k)),
        [mass],
        "distance-profile LP",
    )
    return ProfileResult(float(res.fun), np.clip(res.x, 0.0, None))


def distance_profile_closed_form(
    m: int, n: int, eps: float, levels: int | None = None, mass: float = 1.0
) -> ProfileResult:
    """The optimum of :func:`distance_profile_lp` in closed form: ``P_l ∝ N_l e^{−lε}``.

    Every ratio constraint is tight (Wang, Ying & Zhang (2016), eqs. (45)–(48) and
    (53)–(54)); for ``L = n`` and ``mass = 1`` the value is ``h(ε)`` (eq. (57)).

    Parameters
    ----------
    m, n, eps, levels, mass
        As in :func:`distance_profile_lp`.

    Returns
    -------
    ProfileResult
        The value ``Σ l P_l`` and the profile.
    """
    m, n, eps, levels, mass = _profile_args(m, n, eps, levels, mass)
    sizes = _shell_sizes(m, n, levels)
    weights = sizes * np.exp(-eps * np.arange(levels + 1))
    profile = mass * weights / weights.sum()
    return ProfileResult(float(np.arange(levels + 1) @ profile), profile)


# =============================================================================================
# Calmon & Fawaz (2012), Corollary 2: the ζ program
# =============================================================================================
@dataclass(frozen=True)
class ZetaResult:
    """An optimum of the ζ form of the maximum-information-leakage program.

    Attributes
    ----------
    distortion : float
        The least expected distortion ``E d(Y, U)``.
    level : float
        The maximum-information-leakage level ε (nats) the program was solved at.
    divergence_bound : float
        ``t = ε − H(S) + ln Σ_y e^{H(S|Y=y)}``: the bound on ``max_u D(p_{Y|U=u} ‖ ζ)``.
    mechanism : numpy.ndarray
        An optimal ``p(u|y)``.
    zeta : numpy.ndarray
        ``ζ(y) ∝ e^{H(S|Y=y)}``.
    """

    distortion: float
    level: float
    divergence_bound: float
    mechanism: np.ndarray
    zeta: np.ndarray


def _zeta_setup(prior: JointPrior, distortion: Distortion | np.ndarray):
    if not isinstance(prior, JointPrior):
        raise InputError("the ζ program needs a JointPrior p(s, y)", "prior")
    if not ((prior.joint > 0).sum(axis=1) <= 1).all():
        raise InputError(
            "Corollary 2 needs Y = f(S): every row of p(s, y) may have one positive entry",
            "prior",
        )
    d = distortion.matrix if isinstance(distortion, Distortion) else np.asarray(distortion, float)
    if d.ndim != 2 or d.shape[0] != prior.n_inputs:
        raise InputError(f"needs |Y| = {prior.n_inputs} rows, got shape {d.shape}", "distortion")
    zeta = cf.zeta(prior)
    p_y = prior.p_y
    post = prior.p_s_given_y
    h_cond = np.array(
        [stats.entropy(post[y][post[y] > 0]) if p_y[y] > 0 else 0.0 for y in range(prior.n_inputs)]
    )
    log_norm = float(np.log(np.sum(np.exp(h_cond[p_y > 0]))))
    p_s = prior.p_s
    h_s = float(stats.entropy(p_s[p_s > 0]))
    return d, zeta, p_y, h_s, log_norm


def zeta_program(
    prior: JointPrior, distortion: Distortion | np.ndarray, eps: float, solver: str | None = None
) -> ZetaResult:
    """Least distortion with maximum information leakage ≤ ε, in the ζ form of Calmon & Fawaz
    (2012), Corollary 2.

    For ``Y = f(S)``, eqs. (38)–(40) give ``H(S|U=u) = −D(p_{Y|U=u} ‖ ζ) + ln Σ_y e^{H(S|Y=y)}``
    with ``ζ(y) ∝ e^{H(S|Y=y)}``, so ``max_u H(S) − H(S|U=u) ≤ ε`` is
    ``max_u D(p_{Y|U=u} ‖ ζ) ≤ t`` with ``t = ε − H(S) + ln Σ_y e^{H(S|Y=y)}`` (eq. (35)).
    Multiplied by ``p_U(u)`` it is convex (exponential cone)::

        minimise   Σ_{y,u} p_Y(y) W[y,u] d(y,u)
        subject to Σ_y rel_entr(p_Y(y) W[y,u], ζ(y) p_U(u)) ≤ t · p_U(u)   for every u
                   W ≥ 0, rows of W sum to 1

    The paper writes ``2^{H}`` with H in bits; ``e^{H}`` with H in nats is the same ζ.

    Parameters
    ----------
    prior : JointPrior
        ``p(s, y)`` with ``Y = f(S)``.
    distortion : Distortion or array_like
        ``d[y, u]``, ``|Y|`` rows.
    eps : float
        The maximum-information-leakage level ε ≥ 0, nats.
    solver : str, optional
        A cvxpy solver name (default: Clarabel when installed).

    Returns
    -------
    ZetaResult
        The least distortion, an optimal mechanism, ζ and ``t``.

    Raises
    ------
    InputError
        If ``Y`` is not a function of ``S`` or the shapes disagree.
    SolverError
        If the solver does not reach an optimum.
    """
    import cvxpy as cp  # the exponential cone: only here

    eps = check_number(eps, "epsilon")
    d, zeta, p_y, h_s, log_norm = _zeta_setup(prior, distortion)
    t = eps - h_s + log_norm
    rows = np.flatnonzero(p_y > 0)
    n_y, n_u = d.shape
    W = cp.Variable((n_y, n_u), nonneg=True)
    joint = cp.multiply(p_y[rows, None], W[rows, :])  # p(y, u) on supp p_Y
    p_u = p_y @ W
    ref = cp.multiply(
        zeta[rows, None], np.ones((rows.size, 1)) @ cp.reshape(p_u, (1, n_u), order="C")
    )
    constraints = [
        cp.sum(W, axis=1) == 1,
        cp.sum(cp.rel_entr(joint, ref), axis=0) <= t * p_u,
    ]
    problem = cp.Problem(cp.Minimize(cp.sum(cp.multiply(p_y[:, None] * d, W))), constraints)
    if solver is None and "CLARABEL" in cp.installed_solvers():
        solver = "CLARABEL"
    try:
        problem.solve(solver=solver)
    except cp.error.SolverError as exc:  # pragma: no cover - solver failure
        raise SolverError(f"ζ program: {exc}") from None
    if problem.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) or W.value is None:
        raise SolverError(f"ζ program: status {problem.status}")
    mech = np.clip(W.value, 0.0, None)
    mech /= mech.sum(axis=1, keepdims=True)
    return ZetaResult(float(problem.value), eps, float(t), mech, zeta)


def zeta_program_level(
    prior: JointPrior,
    distortion: Distortion | np.ndarray,
    budget: float,
    tol: float = 1e-7,
    solver: str | None = None,
) -> ZetaResult:
    """Least maximum information leakage within a distortion budget, by the line search of
    Calmon & Fawaz (2012), Thm 2, on :func:`zeta_program`.

    ``D*(ε)`` is non-increasing in ε, so the least ε with ``D*(ε) ≤ budget`` is found by
    bisection on ``[0, H(S)]`` (at ``ε = H(S)`` the constraint is void).

    Parameters
    ----------
    prior : JointPrior
        ``p(s, y)`` with ``Y = f(S)``.
    distortion : Distortion or array_like
        ``d[y, u]``.
    budget : float
        The distortion budget Δ ≥ 0.
    tol : float
        Width of the final ε interval.
    solver : str, optional
        A cvxpy solver name.

    Returns
    -------
    ZetaResult
        The program at the least level found (its ``level`` is that ε).

    Raises
    ------
    InputError
        If even ``ε = H(S)`` cannot meet the budget.
    """
    budget = float(budget)
    _, _, _, h_s, _ = _zeta_setup(prior, distortion)
    lo, hi = 0.0, h_s
    best = zeta_program(prior, distortion, hi, solver)
    if best.distortion > budget + 1e-9:
        raise InputError(
            f"no mechanism meets the budget {budget:.6g}: the least distortion is "
            f"{best.distortion:.6g}",
            "max_distortion",
        )
    at_zero = zeta_program(prior, distortion, 0.0, solver)
    if at_zero.distortion <= budget + 1e-9:
        return at_zero
    while hi - lo > tol:
        mid = 0.5 * (lo + hi)
        answer = zeta_program(prior, distortion, mid, solver)
        if answer.distortion <= budget + 1e-9:
            hi, best = mid, answer
        else:
            lo = mid
    return best
