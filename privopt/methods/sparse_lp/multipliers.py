"""The sparse LP's row duals as a dual point for certified curves
(:mod:`privopt.methods.multipliers`).

HiGHS's row duals ``y`` (``c − Aᵀy`` are the reduced costs: ``y ≤ 0`` on a ``≤`` row at its
bound, ``y ≥ 0`` on a ``≥`` row) are mapped back to the multipliers of the notion's own
constraints (:meth:`~privopt.notions.Notion.constraints`), row block by row block of the
encoding (:mod:`~privopt.methods.sparse_lp.encodings`):

=================  ==================================================================
encoding           notion constraints and multipliers
=================  ==================================================================
PairRatios, all    ``v ≤ s∘p(u|s)`` and ``s∘p(u|s) ≤ e^ε v``: ``α = y/σ``, ``β = −y/σ``
pairs              ``M_a ≤ e^ε M_b``: ``λ = −y·top/σ`` (identifiability's rows are scaled)
OutputLawRatios    ``p(u|s) ≤ e^ε p(u)``: ``λ₁ = −y``; information privacy's
                   ``p(u) ≤ e^ε p(u|s)`` (written ``W − q/e^ε ≥ 0``): ``λ₂ = y/e^ε``
ColumnMaxima       ``p(u|s) ≤ t_u``: ``λ = −y``; ``Σ_u t_u ≤ e^ε``: ``μ = −y``
MetricRatios       ``p(u|a) ≤ e^{εd} p(u|b)`` on the pairs written: ``λ = −y`` (0 on the
                   pairs left out)
=================  ==================================================================

(``σ`` is the scale of identifiability's rows against the notion's ``M = p∘W``.) The auxiliary
variables of the LP (``v``, ``q``, ``t``) are eliminated by the notion's terms, which is what
makes the bound useful at other levels: the LP's own box bound would let them run to their
bounds as soon as the level moves.
"""

from __future__ import annotations

__all__ = ["lp_multipliers"]

import numpy as np

from privopt.methods.multipliers import Multipliers
from privopt.methods.sparse_lp.encodings import (
    ENCODINGS,
    ColumnMaxima,
    MetricRatios,
    OutputLawRatios,
    PairRatios,
)
from privopt.model import NeighborRelation


def lp_multipliers(
    request,
    relation: NeighborRelation | None,
    complete: bool,
    support: np.ndarray,
    row_dual: np.ndarray,
    eps: float,
    method: str,
) -> Multipliers | None:
    """The notion-form multipliers of the full LP's row duals at level ``eps``.

    Parameters
    ----------
    request : DesignRequest
        The request of the LP (single secret, plain).
    relation : NeighborRelation or None
        The encoding's relation (on the prior's indices), as the LP was built with it.
    complete : bool
        Whether the LP wrote the all-pairs form (one auxiliary per column).
    support : numpy.ndarray
        The prior's support (the LP's rows of ``W``).
    row_dual : numpy.ndarray
        HiGHS's row duals of the full LP.
    eps : float
        The level the LP was written at (nats).
    method : str
        The method's name.

    Returns
    -------
    Multipliers or None
        ``None`` for an encoding or a form without a mapping (an explicit list of every pair).
    """
    enc = ENCODINGS.get(request.notion.name)
    S, U = support.size, request.distortion.n_outputs
    y = np.asarray(row_dual, dtype=float)[S:]  # the row sums come first
    ratio = float(np.exp(min(eps, request.notion.largest_written_level)))
    duals: tuple | None = None
    if isinstance(enc, PairRatios):
        duals = _pair_duals(enc, request, relation, complete, support, y, ratio)
    elif isinstance(enc, OutputLawRatios):
        upper = -y[U : U + S * U].reshape(S, U)
        if enc.two_sided:
            lower = y[U + S * U : U + 2 * S * U].reshape(S, U) / ratio
            duals = (upper, lower)
        else:
            duals = (upper,)
    elif isinstance(enc, ColumnMaxima):
        duals = (-y[: S * U].reshape(S, U), np.array(-y[S * U]))
    elif isinstance(enc, MetricRatios):
        duals = _metric_duals(relation, support, y, eps, U)
    if duals is None:
        return None
    return Multipliers(
        method=method,
        epsilon=float(eps),
        budget=None,
        duals=duals,
        distortion=request.distortion.matrix,
    )


def _pair_duals(enc: PairRatios, request, relation, complete, support, y, ratio):
    S, U = support.size, request.distortion.n_outputs
    p = request.prior.probs[support]
    if complete:
        if relation is None or relation.kind != "all":
            return None  # every pair listed: the notion writes pairs, the LP an auxiliary
        # LP rows on s∘W with s = p/max p (identifiability) or 1; the notion's M = p∘W or W
        sigma = float(p.max()) if enc.scaled else 1.0
        alpha = y[: S * U].reshape(S, U) / sigma
        beta = -y[S * U : 2 * S * U].reshape(S, U) / sigma
        return (alpha, beta)
    if relation is None:
        return None
    rel = relation.restricted(support)
    n = rel.n_pairs * U
    lam = -y[:n].reshape(rel.n_pairs, U)
    if enc.scaled:  # rows (p_a W_a − e^ε p_b W_b) / max(p_a, e^ε p_b)
        index = np.full(request.prior.probs.size, -1)
        index[support] = np.arange(S)
        top = np.maximum(p[index[rel.left]], ratio * p[index[rel.right]])
        lam = lam / top[:, None]
    return (lam,)


def _metric_duals(relation, support, y, eps, U):
    from privopt.notions.metric_dp import written

    if relation is None or not hasattr(relation, "relabelled"):
        return None
    pairs = relation.relabelled(support)
    keep = written(pairs.weights, eps)
    lam = np.zeros((pairs.n_pairs, U))
    lam[keep] = -y[: int(keep.sum()) * U].reshape(-1, U)
    return (lam,)
