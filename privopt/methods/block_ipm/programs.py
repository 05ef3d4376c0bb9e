"""Each linear notion's LP in block-angular form: one block per output column.

For a fixed prior ``p`` (on its support ``S``), distortion ``d`` and level ε (``r = e^ε``),
the variables of column ``u`` are ``v_u = (W[·,u], aux)``; the coupling rows are the row
sums ``Σ_u W[x,u] = 1``; the objective is ``E[d] = Σ_{x,u} p(x) d(x,u) W[x,u]`` (Wang, Ying &
Zhang 2016, eq. (14); Calmon & Fawaz 2012, eq. (15)). The privacy rows of a column:

=====================  =====================================================================
notion                 rows of column ``u`` (kernel)
=====================  =====================================================================
dp                     ``W[a,u] ≤ r W[b,u]`` for neighbours ``a ~ b`` (Wang et al., eq. (15));
                       :class:`~privopt.methods.block_ipm.kernels.DenseColumns`
identifiability        ``p(a) W[a,u] ≤ r p(b) W[b,u]`` (the LP form of PD-I, Wang et al.
                       eqs. (8)–(13) with ``q = p∘W``); dense columns
metric_dp              ``W[a,u] ≤ e^{ε d(a,b)} W[b,u]`` on the metric's constraint pairs
                       [Bordenabe-Chatzikokolakis-Palamidessi]; dense columns
pml                    ``W[x,u] ≤ r pᵀW[·,u]`` (Saeidian et al. 2023, Thm 1);
                       :class:`~privopt.methods.block_ipm.kernels.DiagonalPlusLowRank`
information_privacy    ``pᵀW[·,u] / r ≤ W[x,u] ≤ r pᵀW[·,u]`` (Calmon & Fawaz 2012,
                       Def. 6); :class:`~privopt.methods.block_ipm.kernels.DiagonalPlusLowRank`
ldp                    ``lo_u ≤ W[x,u] ≤ r lo_u`` with one auxiliary ``lo_u`` (Saeidian et
                       al. 2023, Def. 14: all pairs in ``O(|X|)`` rows per column);
                       :class:`~privopt.methods.block_ipm.kernels.ArrowColumns`
maximal_leakage        ``W[x,u] ≤ t_u`` and the coupling row ``Σ_u t_u ≤ r`` (Saeidian et
                       al. 2023, eq. (1))
dp, identifiability    with every pair of inputs neighbours: LDP's rows, and
over all pairs         ``lo_u ≤ p(x) W[x,u] ≤ r lo_u`` for identifiability (arrow columns;
                       :func:`program_name`)
=====================  =====================================================================
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from privopt.methods.block_ipm.ordering import band_is_cheaper, band_order
from privopt.resources import all_pairs

if TYPE_CHECKING:  # pragma: no cover
    from privopt.methods.block_ipm.interior_point import BlockLP
    from privopt.methods.block_ipm.kernels import DenseColumns
    from privopt.request import DesignRequest

__all__ = [
    "ALL_PAIRS_PROGRAMS",
    "PROGRAMS",
    "band_width",
    "block_program",
    "pair_kernel",
    "program_name",
]


def _pairs_on_support(relation, support: np.ndarray):
    """The relation's pairs re-indexed to the support (with weights for metric pairs)."""
    if hasattr(relation, "relabelled"):
        pairs = relation.relabelled(support)
        return pairs.left, pairs.right, np.asarray(pairs.weights, dtype=float)
    rel = relation.restricted(support)
    index = np.full(max(int(support.max(initial=0)) + 1, 1), -1)
    index[support] = np.arange(support.size)
    return index[rel.left], index[rel.right], np.ones(rel.left.size)


#: Most inputs for which the band kernel is considered (its factors hold ``2 b`` numbers per
#: variable and column; far beyond, every estimate exceeds any memory bound).
MAX_BAND_INPUTS = 2**16
#: Beyond this many inputs the band kernel is considered for metric privacy only when the
#: constraint pairs come from the metric's structure (a graph's edges, a lattice's 8-neighbour
#: spanner), never from a search over all pairs.
MAX_SEARCHED_INPUTS = 1024


def pair_kernel(
    n: int, left: np.ndarray, right: np.ndarray, alpha: np.ndarray, beta: np.ndarray
) -> DenseColumns:
    """The kernel of pair rows ``alpha v[left] − beta v[right] ≤ 0``: block tridiagonal
    (:class:`~privopt.methods.block_ipm.band.BandColumns`) when the pairs form a graph of
    narrow band under reverse Cuthill–McKee (a map's grid, a road network) and that saves
    work (:func:`~privopt.methods.block_ipm.ordering.band_is_cheaper`), dense otherwise.

    Parameters
    ----------
    n : int
        The variables of a column.
    left, right : numpy.ndarray of int
        The pairs' variables.
    alpha, beta : numpy.ndarray
        Their positive coefficients.

    Returns
    -------
    DenseColumns
        A :class:`~privopt.methods.block_ipm.band.BandColumns` or a plain
        :class:`~privopt.methods.block_ipm.kernels.DenseColumns`.
    """
    from privopt.methods.block_ipm.band import BandColumns
    from privopt.methods.block_ipm.kernels import DenseColumns

    order, width = band_order(n, left, right)
    if band_is_cheaper(n, width):
        return BandColumns(n, left, right, alpha, beta, order=order)
    return DenseColumns(n, left, right, alpha, beta)


def band_width(request: DesignRequest) -> int | None:
    """The half-bandwidth of ``request``'s pair rows when block-ipm writes them with the band
    kernel (:func:`pair_kernel`), else ``None`` (not a pair notion, or the dense kernel).

    The pairs are counted at every level (a program drops the pairs whose exponent ``ε·d``
    exceeds 20, which only narrows the band).

    Parameters
    ----------
    request : DesignRequest

    Returns
    -------
    int or None
    """
    from privopt.resources import dense_pair_columns

    if not dense_pair_columns(request) or request.prior.n_inputs > MAX_BAND_INPUTS:
        return None
    if request.notion.name == "metric_dp":
        from privopt.notions.metric_dp import constraint_pairs

        metric = request.options["metric"]
        spanner = request.options.get("spanner")
        if request.prior.n_inputs > MAX_SEARCHED_INPUTS and not metric.pairs_found_directly(
            spanner
        ):
            # the pairs would be searched for over every pair of a large map (a 120 × 120
            # exact map: 62 million visible pairs, 12 GB, before any refusal); such pairs
            # reach across the map, far too wide for a band anyway
            return None
        relation = constraint_pairs(dict(request.options), request.prior.secret_support)
    elif request.neighbors is not None:
        relation = request.neighbors
    else:
        return None
    support = np.flatnonzero(request.prior.probs > 0)
    left, right, _ = _pairs_on_support(relation, support)
    _, width = band_order(support.size, left, right)
    return width if band_is_cheaper(support.size, width) else None


def _coupling(S: int):
    return np.arange(S), np.ones(S)


def _dp(request, p, eps, support) -> tuple:
    left, right, _ = _pairs_on_support(request.neighbors, support)
    S = p.size
    return pair_kernel(S, left, right, np.ones(left.size), np.full(left.size, np.exp(eps))), 0


def _identifiability(request, p, eps, support) -> tuple:
    left, right, _ = _pairs_on_support(request.neighbors, support)
    alpha = p[left]
    beta = np.exp(eps) * p[right]
    top = np.maximum(alpha, beta)  # rows scaled to largest coefficient 1
    return pair_kernel(p.size, left, right, alpha / top, beta / top), 0


def _metric(request, p, eps, support) -> tuple:
    from privopt.notions.metric_dp import constraint_pairs, written

    pairs = constraint_pairs(dict(request.options), request.prior.secret_support)
    left, right, weights = _pairs_on_support(pairs, support)
    keep = written(weights, eps)  # the pairs with ε·d ≤ 20: a relaxation beyond
    left, right, weights = left[keep], right[keep], weights[keep]
    return pair_kernel(p.size, left, right, np.ones(left.size), np.exp(eps * weights)), 0


def _output_law(two_sided: bool):
    def build(request, p, eps, support) -> tuple:
        from privopt.methods.block_ipm.kernels import DiagonalPlusLowRank

        S = p.size
        r = np.exp(eps)
        idx = np.arange(S)
        if two_sided:
            kernel = DiagonalPlusLowRank(
                S,
                np.concatenate([idx, idx]),
                np.concatenate([np.ones(S), -np.ones(S)]),
                np.concatenate([np.full(S, -r), np.full(S, 1.0 / r)])[:, None],
                p[:, None],
            )
            return kernel, 0
        # W[x,u] − r pᵀW[·,u] ≤ 0: identity plus a rank-one term. (An auxiliary q_u ≤ pᵀW
        # with W[x,u] ≤ r q_u, an arrow with one dense row, stalled at a relative gap of
        # 3e-6 to 5e-6 for k = 300 and 1,000; this form reaches 1e-8 and 4e-7 there.)
        kernel = DiagonalPlusLowRank(S, idx, np.ones(S), np.full(S, -r)[:, None], p[:, None])
        return kernel, 0

    return build


def _ldp(request, p, eps, support) -> tuple:
    from privopt.methods.block_ipm.kernels import ArrowColumns

    S = p.size
    idx = np.arange(S)
    kernel = ArrowColumns(  # lo − W ≤ 0 and W − r lo ≤ 0
        S,
        np.concatenate([idx, idx]),
        np.concatenate([-np.ones(S), np.ones(S)]),
        np.concatenate([np.ones(S), np.full(S, -np.exp(eps))]),
    )
    return kernel, 1


def _identifiability_all_pairs(request, p, eps, support) -> tuple:
    from privopt.methods.block_ipm.kernels import ArrowColumns

    # lo_u ≤ p(x) W[x,u] ≤ r lo_u with the auxiliary on the mechanism's scale,
    # t_u = lo_u / min p (at most W[argmin p, u] ≤ 1): the rows t·ρ(x) − W ≤ 0 and
    # W − r t·ρ(x) ≤ 0 with ρ(x) = min p / p(x) ∈ (0, 1], LDP's rows for a uniform prior.
    # (With lo_u itself, ~p/|U|, the run at k = 200 stalled at a gap of 9e-6.)
    S = p.size
    idx = np.arange(S)
    rho = p.min() / p
    kernel = ArrowColumns(
        S,
        np.concatenate([idx, idx]),
        np.concatenate([-np.ones(S), np.ones(S)]),
        np.concatenate([rho, -np.exp(eps) * rho]),
    )
    return kernel, 1


def _maximal_leakage(request, p, eps, support) -> tuple:
    from privopt.methods.block_ipm.kernels import ArrowColumns

    S = p.size
    return ArrowColumns(p.size, np.arange(S), np.ones(S), -np.ones(S)), 1  # W − t ≤ 0


#: notion name → ``build(request, p_support, ε, support) -> (kernel, n_aux)``.
PROGRAMS = {
    "dp": _dp,
    "identifiability": _identifiability,
    "metric_dp": _metric,
    "pml": _output_law(False),
    "information_privacy": _output_law(True),
    "ldp": _ldp,
    "maximal_leakage": _maximal_leakage,
}
#: The programs of dp and identifiability with every pair of inputs neighbours, by the key
#: :func:`program_name` gives them.
ALL_PAIRS_PROGRAMS = {"ldp": _ldp, "identifiability_all_pairs": _identifiability_all_pairs}


def program_name(request: DesignRequest) -> str:
    """The key of :data:`PROGRAMS` or :data:`ALL_PAIRS_PROGRAMS` that writes ``request``'s
    LP: the notion's name, except with every pair of inputs neighbours, where a column's
    pair rows hold iff its extremes do. Then dp is LDP's program (``W[a,u] ≤ r W[b,u]`` for
    all ``a, b`` of the support, in ``2|S|`` rows per column instead of ``|S|(|S| − 1)``;
    Saeidian et al. 2023, Def. 14) and identifiability the same on ``q = p∘W``
    (``lo_u ≤ p(x) W[x,u] ≤ r lo_u``: the PD-I rows of Wang et al. eqs. (8)–(13) over all
    pairs).

    Parameters
    ----------
    request : DesignRequest

    Returns
    -------
    str
    """
    if all_pairs(request):
        return "ldp" if request.notion.name == "dp" else "identifiability_all_pairs"
    return request.notion.name


def block_program(
    request: DesignRequest, eps: float, *, pair_rows: bool = False
) -> tuple[BlockLP, np.ndarray]:
    """The block-angular LP of ``request`` at level ``eps``.

    Parameters
    ----------
    request : DesignRequest
        A request whose notion is in :data:`PROGRAMS` (single secret, no extra budgets).
    eps : float
        The level (nats), at most 30.
    pair_rows : bool
        Write dp and identifiability over all pairs pair by pair (the notion's own program)
        instead of with one auxiliary per column (:func:`program_name`).

    Returns
    -------
    BlockLP
        Columns of ``S + aux`` variables (``S`` = the prior's support).
    numpy.ndarray
        The support (indices of the inputs with positive probability).
    """
    from privopt.methods.block_ipm.interior_point import BlockLP

    probs = request.prior.probs
    support = np.flatnonzero(probs > 0)
    p = probs[support]
    d = request.distortion.matrix[support]
    S, U = d.shape
    program = request.notion.name if pair_rows else program_name(request)
    kernel, n_aux = {**PROGRAMS, **ALL_PAIRS_PROGRAMS}[program](request, p, eps, support)
    n = S + n_aux
    cost = np.zeros((U, n))
    cost[:, :S] = (p[:, None] * d).T
    start = np.full(n, 1.0 / U)
    upper = np.ones(n)
    coupled, rhs = _coupling(S)
    slack_rows = np.zeros(0, dtype=np.int64)
    slack_upper = np.zeros(0)
    r = float(np.exp(eps))
    if program == "ldp":
        start[S] = 1.0 / (U * np.sqrt(r))  # strictly between W/r and W
    elif program == "identifiability_all_pairs":
        # t between max p / (r min p U) and 1/U, which holds iff ε ≥ ln(max p / min p)
        start[S] = float(np.sqrt(p.max() / (r * p.min()))) / U
    elif program == "maximal_leakage":
        start[S] = 1.0 / U * min(2.0, 0.5 * (1.0 + r))  # Σ_u t_u = min(2, (1 + r)/2) ≤ r
        coupled = np.append(coupled, S)
        rhs = np.append(rhs, r)
        slack_rows = np.array([S], dtype=np.int64)
        slack_upper = np.array([r])
    lp = BlockLP(kernel, cost, upper, coupled, rhs, start, slack_rows, slack_upper)
    return lp, support
