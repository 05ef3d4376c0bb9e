"""Shared pieces of the ratio notions ``M[x,u] ≤ e^ε · M[x',u]`` (dp, ldp, identifiability):
the cvxpy encoding over a neighbour relation and the exact repair weight; and the repair
weights of the notions on the output law (PML, information privacy, robust PML) and on a sum
over the outputs (maximal leakage and maximal α-leakage)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from privopt.model import NeighborRelation

if TYPE_CHECKING:  # pragma: no cover
    import cvxpy as cp

#: Relative slack left unrepaired on a ratio constraint (per unit of ``e^ε``); the solver
#: layer accepts levels up to ``ε + 1e-9 (1 + ε)``, so this stays well inside it.
REPAIR_SLACK = 1e-10
#: Levels above this are repaired as if they were this level: ``e^700`` is still a finite
#: float (``e^710`` is not), and meeting the stricter ratio meets the level asked for.
LARGEST_REPAIR_EXPONENT = 700.0


def repair_terms(level: float) -> tuple[float, float]:
    """The ratio ``e^ε`` and the unrepaired slack of a ratio constraint at ``level``, with
    the level capped at :data:`LARGEST_REPAIR_EXPONENT` (a stricter constraint, so any
    repair weight it gives is enough at ``level``; it never overflows).

    Parameters
    ----------
    level : float
        ε in nats (``≥ 0``, possibly ``inf``).

    Returns
    -------
    tuple of float
        ``(e^min(ε, 700), REPAIR_SLACK · (1 + min(ε, 700)))``.
    """
    capped = min(float(level), LARGEST_REPAIR_EXPONENT)
    return math.exp(capped), REPAIR_SLACK * (1.0 + capped)


def sum_repair_weight(total: float, level: float) -> float:
    """The weight of a constant mechanism that brings a sum ``T ≥ Σ_u R_u`` of an answer down
    to ``e^ε``: mixing gives at most ``(1−θ) T + θ`` (the constant mechanism's sum is 1), so
    ``θ = (T − e^ε)/(T − 1)`` suffices (maximal leakage, ``T = Σ_u max_s p(u|s)``; maximal
    α-leakage, ``T = e^{L_α}``).

    Parameters
    ----------
    total : float
        ``T`` of the answer.
    level : float
        ε in nats (capped as in :func:`repair_terms`).

    Returns
    -------
    float
        ``θ`` in ``[0, 1)``; 0 when ``T ≤ e^ε`` (up to the repair slack) or ``T ≤ 1``.
    """
    bound, slack = repair_terms(level)
    if total <= bound * (1.0 + slack) or total <= 1.0:
        return 0.0
    return (total - bound) / (total - 1.0)


def output_law_rows(
    p: np.ndarray, channel: np.ndarray, anchor: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rows of ``p(u|s) ≤ e^ε p(u)`` under the prior ``p``, for :func:`mixing_weight`:
    the channel on the support of ``p``, the output law ``p(u)`` and the anchor, each
    broadcast to one row per secret of the support.

    Parameters
    ----------
    p : numpy.ndarray
        A pmf over the secrets (the prior's, or one listed prior of robust PML).
    channel : numpy.ndarray
        ``p(u|s)`` of the answer, ``|S| × |U|``.
    anchor : numpy.ndarray
        ``p(u)`` of the constant mechanism mixed in, length ``|U|``.

    Returns
    -------
    tuple of numpy.ndarray
        ``(p(u|s), p(u), anchor)``, each ``|supp p| × |U|`` (the last two read-only views).
    """
    ch = channel[p > 0]
    q_u = np.broadcast_to(p[p > 0] @ ch, ch.shape)
    return ch, q_u, np.broadcast_to(anchor, ch.shape)


def ratio_constraints(
    matrix: cp.Expression, level: cp.Parameter, neighbors: NeighborRelation
) -> list[cp.Constraint]:
    """``matrix[x,u] ≤ level · matrix[x',u]`` for every pair ``x ~ x'`` and every column.

    For the relation "all pairs" this is ``max_x M[x,u] ≤ c · min_x M[x,u]``, written with one
    auxiliary variable per column (``O(|X||U|)`` rows instead of ``O(|X|²|U|)``). Otherwise one
    vectorised constraint over the pair list (never a Python loop over scalar constraints).

    Parameters
    ----------
    matrix : cvxpy.Expression
        ``M``, one row per element of the relation and one column per output (``p(u|s)`` or
        ``p(s, u)`` on the secret support).
    level : cvxpy.Parameter
        The ratio ``c = e^ε``.
    neighbors : NeighborRelation
        The relation on the rows of ``matrix``.

    Returns
    -------
    list of cvxpy.Constraint
        Empty when the relation has no pair; for all pairs, ``v ≤ M`` and ``M ≤ c v`` with
        ``v ≥ 0`` the auxiliary column minimum (``1 × |U|``); otherwise one constraint over
        the pair list.
    """
    import cvxpy as cp

    n_rows, n_cols = matrix.shape
    if neighbors.n_pairs == 0:
        return []
    if neighbors.kind == "all":
        low = cp.Variable((1, n_cols), nonneg=True, name="column_min")
        rows = np.ones((n_rows, 1)) @ low
        return [rows <= matrix, matrix <= level * rows]
    return [matrix[neighbors.left, :] <= level * matrix[neighbors.right, :]]


def mixing_weight(
    num_a: np.ndarray,
    num_b: np.ndarray,
    anchor_a: np.ndarray,
    anchor_b: np.ndarray,
    ratio: float,
    slack: float = 0.0,
) -> float:
    """Least ``θ`` with ``(1−θ)(a − r·b) + θ(a_c − r·b_c) ≤ 0`` on every entry where
    ``a ≤ r·b·(1 + slack)`` fails (``r = e^ε``; ``a_c``, ``b_c`` the anchor's entries).

    Entries where the anchor itself is not strictly feasible cannot be repaired by mixing
    and are left to the re-measurement (identifiability at ``ε = ε_X``).

    Parameters
    ----------
    num_a : numpy.ndarray
        ``a``, the left-hand side of ``a ≤ r·b`` at the answer.
    num_b : numpy.ndarray
        ``b``, the right-hand side before the factor ``r`` (same shape as ``num_a``).
    anchor_a : numpy.ndarray
        ``a_c``, the left-hand side at the anchor (broadcastable to ``num_a``).
    anchor_b : numpy.ndarray
        ``b_c``, the right-hand side at the anchor (broadcastable to ``num_a``).
    ratio : float
        ``r = e^ε`` (or an array of per-entry ratios, broadcastable to ``num_a``).
    slack : float
        Relative violation left unrepaired (default 0; or an array like ``ratio``).

    Returns
    -------
    float
        ``θ`` in ``[0, 1)``; 0 when no entry that mixing can repair is violated.
    """
    lhs = num_a - ratio * num_b
    lhs_c = anchor_a - ratio * anchor_b
    viol = lhs > slack * ratio * np.abs(num_b) + 1e-15 * (np.abs(num_a) + ratio * np.abs(num_b))
    ok = viol & (lhs_c < -1e-12 * (np.abs(anchor_a) + ratio * np.abs(anchor_b)))
    if not ok.any():
        return 0.0
    return float(np.max(lhs[ok] / (lhs[ok] - lhs_c[ok])))


def pairwise_repair_weight(
    channel: np.ndarray,
    anchor: np.ndarray,
    level: float,
    neighbors: NeighborRelation,
    support: np.ndarray,
    scale: np.ndarray | None = None,
) -> float:
    """The repair weight of ``s(x) M[x,u] ≤ e^ε s(x') M[x',u]`` over ``neighbors`` on the
    rows of ``support`` (``s = 1`` for dp / ldp, ``s = p`` for identifiability).

    For all pairs and a non-constant ``s`` the weight is a sufficient one, from the largest and
    smallest ``s`` on the support; otherwise it is the least.

    Parameters
    ----------
    channel : numpy.ndarray
        ``M = p(u|s)`` of the answer, ``|S| × |U|``.
    anchor : numpy.ndarray
        ``p(u)`` of the constant mechanism mixed in, length ``|U|``.
    level : float
        ε in nats (capped as in :func:`repair_terms`).
    neighbors : NeighborRelation
        The relation on all secrets (restricted here to ``support``).
    support : numpy.ndarray
        Indices of the secrets with positive probability.
    scale : numpy.ndarray or None
        ``s``, one entry per secret; ``None`` (the default) for ones.

    Returns
    -------
    float
        ``θ`` in ``[0, 1)``; 0 when the answer already meets the level.
    """
    ratio, slack = repair_terms(level)
    s = np.ones(channel.shape[0]) if scale is None else np.asarray(scale, dtype=float)
    if neighbors.kind == "all" and neighbors.n_pairs == neighbors.size * (neighbors.size - 1):
        # per column: max_x J ≤ e^ε min_x J with J = s·M; mixing adds θ s_x c_u, a sufficient
        # (exact for s = 1) bound uses the extreme scales
        J = s[support, None] * channel[support]
        if J.shape[0] < 2:
            return 0.0
        s_sup = s[support]
        return mixing_weight(
            J.max(axis=0), J.min(axis=0), s_sup.max() * anchor, s_sup.min() * anchor, ratio, slack
        )
    rel = neighbors.restricted(support)
    theta = 0.0
    chunk = max(1, 2**22 // max(channel.shape[1], 1))
    for start in range(0, rel.n_pairs, chunk):
        a, b = rel.left[start : start + chunk], rel.right[start : start + chunk]
        theta = max(
            theta,
            mixing_weight(
                s[a, None] * channel[a],
                s[b, None] * channel[b],
                s[a, None] * anchor[None, :],
                s[b, None] * anchor[None, :],
                ratio,
                slack,
            ),
        )
    return theta


def ratio_lagrangian(
    duals: list,
    shape: tuple[int, int],
    ratio: float,
    neighbors: NeighborRelation,
    scale: np.ndarray | None = None,
) -> np.ndarray:
    """The channel coefficients of the Lagrangian of :func:`ratio_constraints` on
    ``M = s ∘ channel`` (``s = 1`` for dp / ldp, ``s = p`` for identifiability).

    Pairs: ``Σ λ (M[a] − r M[b])``. All pairs, with the auxiliary column minimum ``v ≥ 0``:
    ``Σ α (v − M) + Σ β (M − r v)``; its coefficient on ``v``, ``Σ_x α − r Σ_x β``, must be
    ``≥ 0`` for the minimum over ``v ≥ 0`` to be finite, so ``β`` is scaled down in the
    columns where it is not (any non-negative multipliers give a valid bound).

    Parameters
    ----------
    duals : list
        The dual values of the constraints, in the order of :func:`ratio_constraints`.
    shape : tuple
        ``(|supp S|, |U|)``.
    ratio : float
        ``e^ε`` (the value of the level parameter).
    neighbors : NeighborRelation
        On the support rows.
    scale : numpy.ndarray, optional
        ``s`` on the support rows.

    Returns
    -------
    numpy.ndarray
        The coefficient of ``p(u|s)``.
    """
    from privopt.notions.base import dual_array

    s = np.ones(shape[0]) if scale is None else np.asarray(scale, dtype=float)
    if neighbors.n_pairs == 0:
        return np.zeros(shape)
    if neighbors.kind == "all":
        alpha, beta = dual_array(duals[0], shape), dual_array(duals[1], shape)
        a_sum, b_sum = alpha.sum(axis=0), ratio * beta.sum(axis=0)
        shrink = np.where(b_sum > a_sum, a_sum / np.where(b_sum > 0, b_sum, 1.0), 1.0)
        beta = beta * shrink[None, :]
        return s[:, None] * (beta - alpha)
    lam = dual_array(duals[0], (neighbors.n_pairs, shape[1]))
    coef = np.zeros(shape)
    np.add.at(coef, neighbors.left, lam)
    np.add.at(coef, neighbors.right, -ratio * lam)
    return s[:, None] * coef
