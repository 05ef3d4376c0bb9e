"""The block interior point's privacy-row duals as a dual point for certified curves
(:mod:`privopt.methods.multipliers`).

Each column ``u`` of the block LP (:mod:`~privopt.methods.block_ipm.programs`) has privacy
rows ``G v_u ≤ 0`` with duals ``Z[u] ≥ 0``; they map back to the multipliers of the notion's
own constraints (:meth:`~privopt.notions.Notion.constraints`) row family by row family:

=========================  ==============================================================
program                    notion constraints and multipliers
=========================  ==============================================================
dp, metric_dp              ``p(u|a) ≤ r p(u|b)`` per pair written: ``λ = Z``
identifiability            rows ``(p_a W_a − r p_b W_b)/top``: ``λ = Z/top``
pml                        ``p(u|s) ≤ e^ε p(u)``: ``λ = Z``
information_privacy        also ``p(u) ≤ e^ε p(u|s)``, written ``(p(u) − e^ε W)/e^ε ≤ 0``:
                           ``λ₂ = Z/e^ε``
ldp (and dp, all pairs)    ``v ≤ p(u|s) ≤ e^ε v``: ``α, β = Z``
identifiability, all pairs ``v ≤ p(s)W ≤ e^ε v``, written divided by ``p(s)``: ``α, β = Z/p``
maximal_leakage            ``p(u|s) ≤ t_u``: ``λ = Z``; ``Σ_u t_u ≤ e^ε``: ``μ = 0`` (the
                           notion's terms raise it to what eliminates ``t``)
=========================  ==============================================================
"""

from __future__ import annotations

import numpy as np

from privopt.methods.multipliers import Multipliers

__all__ = ["block_multipliers"]


def block_multipliers(
    request, program: str, support: np.ndarray, duals: np.ndarray, eps: float, method: str
) -> Multipliers | None:
    """The notion-form multipliers of the block LP's privacy-row duals at level ``eps``.

    Parameters
    ----------
    request : DesignRequest
    program : str
        The program the LP was written with (:func:`~privopt.methods.block_ipm.programs.
        program_name`, or the notion's own name for the pair-by-pair rows).
    support : numpy.ndarray
        The prior's support (the LP's rows of ``W``).
    duals : numpy.ndarray
        ``U × m``: the privacy rows' duals of every column, in the cost's units.
    eps : float
        The level the LP was written at.
    method : str

    Returns
    -------
    Multipliers or None
    """
    from privopt.methods.block_ipm.programs import _pairs_on_support

    S = support.size
    Z = np.clip(np.asarray(duals, dtype=float), 0.0, None)
    p = request.prior.probs[support]
    r = float(np.exp(eps))
    out: tuple | None = None
    if program in ("pml", "information_privacy"):
        upper = Z[:, :S].T
        out = (upper, Z[:, S : 2 * S].T / r) if program == "information_privacy" else (upper,)
    elif program == "ldp":
        if request.notion.name == "dp" and (
            request.neighbors is None or request.neighbors.kind != "all"
        ):
            return None  # every pair listed: the notion writes them pair by pair
        out = (Z[:, :S].T, Z[:, S : 2 * S].T)
    elif program == "identifiability_all_pairs":
        if request.neighbors is None or request.neighbors.kind != "all":
            return None
        out = (Z[:, :S].T / p[:, None], Z[:, S : 2 * S].T / p[:, None])
    elif program == "maximal_leakage":
        out = (Z[:, :S].T, np.array(0.0))
    elif program in ("dp", "identifiability"):
        left, right, _ = _pairs_on_support(request.neighbors, support)
        lam = Z[:, : left.size].T
        if program == "identifiability":
            lam = lam / np.maximum(p[left], r * p[right])[:, None]
        out = (lam,)
    elif program == "metric_dp":
        from privopt.notions.metric_dp import constraint_pairs, written

        pairs = constraint_pairs(dict(request.options), request.prior.secret_support)
        left, right, weights = _pairs_on_support(pairs, support)
        keep = written(weights, eps)
        lam = np.zeros((left.size, Z.shape[0]))
        lam[keep] = Z[:, : int(keep.sum())].T
        out = (lam,)
    if out is None:
        return None
    return Multipliers(
        method=method,
        epsilon=float(eps),
        budget=None,
        duals=out,
        distortion=request.distortion.matrix,
    )
