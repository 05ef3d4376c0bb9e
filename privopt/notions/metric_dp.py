"""Metric privacy (d-privacy), of which geo-indistinguishability is the Euclidean case.

A mechanism is ε·d-private for a metric ``d`` on the secrets when
``p(u|x) ≤ e^{ε d(x,x')} p(u|x')`` for all secrets ``x, x'`` and outputs ``u``
([Chatzikokolakis-Andres-Bordenabe-Palamidessi], Def. 3; [Andres-Geo], Def. 3.1 for
the Euclidean plane). For a fixed prior and distortion, the least ``E[d]`` at level ε is an
LP ([Bordenabe-Chatzikokolakis-Palamidessi], Sec. 4). Only the metric's constraint pairs
(:attr:`privopt.model.Metric.pairs`, the pairs with no secret on a geodesic between them;
for a graph metric, its edges) are written: the others follow by multiplying constraints
along a geodesic. Pairs whose exponent ``ε·d`` exceeds :data:`RELAXED_EXPONENT` are left
out of every program as well (a relaxation, repaired by mixing; see there). With the discrete
metric (``d = 1`` off the diagonal) this is local DP.

Options
-------
``metric`` (required)
    A :class:`~privopt.model.Metric`; a ``k × k`` matrix; ``{"points": …, "norm": …}``
    (``euclidean``, ``manhattan``, ``haversine``); ``{"edges": [[a, b, w], …]}`` (the
    shortest-path metric of the graph; a disconnected graph is an error unless
    ``"allow_disconnected": True``); or ``"discrete"``.
``spanner``
    A stretch ``δ > 1``: the constraints are written on the edges of a greedy δ-spanner of
    the metric only ([Bordenabe-Chatzikokolakis-Palamidessi], Sec. 5), and the notion's level
    is measured on those edges. Since ``d ≤ d_G ≤ δ·d`` on the spanner's path metric
    ``d_G``, a mechanism at level ε on the spanner is ``(ε·δ)·d``-private (``ε·d``-private
    when designed at ``ε/δ``); the result's ``extra`` states the guarantee and the exact
    metric level re-measured on every pair. The answer is optimal (and certified) for the
    spanner's constraints, not for the full metric.
"""

from __future__ import annotations

__all__ = [
    "MetricPrivacy",
    "validate_metric",
    "validate_spanner",
    "constraint_pairs",
    "written",
    "RELAXED_EXPONENT",
]

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from privopt import measures
from privopt.errors import InputError
from privopt.model.metric import Metric, MetricPairs, pair_level
from privopt.notions._pairwise import (
    LARGEST_REPAIR_EXPONENT,
    REPAIR_SLACK,
    mixing_weight,
)
from privopt.notions.base import (
    DesignContext,
    LagrangeTerms,
    Notion,
    NotionOption,
    dual_array,
    register,
)
from privopt.papers import closed_form_checks as checks
from privopt.validation import secret_index

if TYPE_CHECKING:  # pragma: no cover
    import cvxpy as cp
    from numpy.typing import ArrayLike

    from privopt.model import DatabasePrior, JointPrior, NeighborRelation, Prior
    from privopt.notions.base import LagrangeContext, RepairPoint

#: Largest exponent ``ε·d`` written into a program. The constraint of a pair with a larger
#: exponent is left out, a relaxation: the optimum of the program is a lower bound on the true
#: one, so every certificate stays valid. Such a constraint asks ``p(u|b) ≥ e^{-ε d} p(u|a)``,
#: entries below ``e^{-20} ≈ 2·10⁻⁹`` that no solver resolves next to entries of order 1
#: (with ratios up to ``e^30`` in the rows, every LP method failed to certify on random planar
#: metrics at ε·d of 14 to 30); the driver's repair restores them by mixing in
#: ``θ ≤ |U| e^{-20}`` of a constant mechanism (measured: θ ≤ 2·10⁻⁸), and the certificate
#: states the remaining gap.
RELAXED_EXPONENT = 20.0


def validate_metric(value: Any, prior: Prior | JointPrior | DatabasePrior, field: str) -> Metric:
    """The ``metric`` option in canonical form (a :class:`~privopt.model.Metric` on the
    secrets of ``prior``).

    Parameters
    ----------
    value : Metric, array_like, dict or str
        See the module docstring.
    prior : Prior, JointPrior or DatabasePrior
    field : str
        The key named in messages.

    Returns
    -------
    Metric
    """
    k = int(prior.n_secrets)
    if isinstance(value, Metric):
        metric = value
    elif isinstance(value, str):
        if value != "discrete":
            raise InputError(
                f"unknown metric {value!r}: give a matrix, {{points = …, norm = …}}, "
                '{edges = …} or "discrete"',
                field,
            )
        metric = Metric.discrete(k)
    elif isinstance(value, dict):
        keys = set(value)
        allowed = {"points", "norm", "edges", "matrix", "allow_disconnected"}
        if keys - allowed:
            raise InputError(
                f"unknown key(s) {sorted(keys - allowed)} in the metric; it takes points and "
                "norm, or edges (with allow_disconnected), or matrix",
                field,
            )
        allow_disconnected = value.get("allow_disconnected", False)
        if not isinstance(allow_disconnected, (bool, np.bool_)):
            raise InputError(
                f"allow_disconnected is true or false, got {allow_disconnected!r}",
                f"{field}.allow_disconnected",
            )
        if "allow_disconnected" in value and "edges" not in value:
            raise InputError("allow_disconnected goes with edges", f"{field}.allow_disconnected")
        given = [key for key in ("points", "edges", "matrix") if key in value]
        if len(given) != 1:
            raise InputError("give exactly one of points (with norm), edges, matrix", field)
        if "points" in value:
            norm = value.get("norm", "euclidean")
            metric = Metric.from_points(value["points"], norm, field=field)
        elif "norm" in value:
            raise InputError("norm goes with points", f"{field}.norm")
        elif "edges" in value:
            edges, labels = [], list(prior.secret_labels)
            for n, edge in enumerate(_as_edge_rows(value["edges"], f"{field}.edges")):
                ends = [secret_index(e, labels, f"{field}.edges[{n}]") for e in edge[:2]]
                edges.append([*ends, *edge[2:]])
            metric = Metric.from_graph(
                k, edges, field=f"{field}.edges", allow_disconnected=bool(allow_disconnected)
            )
        else:
            metric = Metric.from_matrix(value["matrix"], field=f"{field}.matrix")
    else:
        metric = Metric.from_matrix(value, field=field)
    if metric.size != k:
        raise InputError(
            f"the metric is on {metric.size} secrets but the secret has {k} symbols", field
        )
    return metric


def _as_edge_rows(edges, field: str) -> list:
    if isinstance(edges, np.ndarray):
        edges = edges.tolist()
    if not isinstance(edges, (list, tuple)) or not edges:
        raise InputError("edges: a non-empty list of [a, b] or [a, b, weight]", field)
    out = []
    for n, edge in enumerate(edges):
        if not isinstance(edge, (list, tuple)) or len(edge) not in (2, 3):
            raise InputError(
                f"edge {n} is {edge!r}: write [a, b] or [a, b, weight]",
                f"{field}[{n}]",
                code="malformed_edge",
            )
        out.append(list(edge))
    return out


def validate_spanner(value: Any, prior: Prior | JointPrior | DatabasePrior, field: str) -> float:
    """The ``spanner`` option: a stretch ``δ ≥ 1`` (1: the exact constraint pairs).

    Parameters
    ----------
    value : float
    prior : Prior, JointPrior or DatabasePrior
    field : str

    Returns
    -------
    float
    """
    try:
        stretch = float(value)
    except (TypeError, ValueError):
        raise InputError(f"spanner is a stretch δ ≥ 1 (e.g. 1.1), got {value!r}", field) from None
    if isinstance(value, bool) or not math.isfinite(stretch) or stretch < 1.0:
        raise InputError(f"spanner is a stretch δ ≥ 1 (e.g. 1.1), got {value!r}", field)
    return stretch


def constraint_pairs(options: dict, support: ArrayLike | None = None) -> MetricPairs:
    """The pairs the program constrains among the secrets of ``support``: the constraint
    pairs of the metric restricted to them, or the edges of its greedy ``spanner``-spanner
    (cached on the metric). Secrets outside the prior's support are not constrained, so a
    geodesic through them implies nothing (:meth:`~privopt.model.Metric.pairs_on`).

    Parameters
    ----------
    options : dict
        The validated notion options (``metric``, optional ``spanner``).
    support : array_like of int, optional
        Default: every secret.

    Returns
    -------
    MetricPairs
        In the metric's indices.
    """
    metric: Metric = options["metric"]
    keep = np.arange(metric.size) if support is None else np.asarray(support)
    return metric.pairs_on(keep, options.get("spanner"))


def written(weights: np.ndarray, eps: float) -> np.ndarray:
    """Which constraint pairs a program writes at level ``eps``: those with
    ``ε·d ≤`` :data:`RELAXED_EXPONENT` (see there).

    Parameters
    ----------
    weights : numpy.ndarray
        The pairs' distances.
    eps : float
        The level (finite).

    Returns
    -------
    numpy.ndarray
        A boolean mask over the pairs.
    """
    return np.asarray(weights, dtype=float) * float(eps) <= RELAXED_EXPONENT


def _ratios(weights: np.ndarray, eps: float) -> np.ndarray:
    """``e^{ε d}`` of the pairs a program writes (pairs left out get ``e^20``, unused)."""
    return np.exp(np.minimum(eps * weights, RELAXED_EXPONENT))


@register
class MetricPrivacy(Notion):
    """Metric privacy (d-privacy, geo-indistinguishability): ``p(u|s) ≤ e^{ε d(s,s')}
    p(u|s')`` (Chatzikokolakis et al. 2013, Def. 3; Andrés et al. 2013, Def. 3.1)."""

    name = "metric_dp"
    aliases = ("d_privacy", "metric_privacy", "geo_indistinguishability")
    convexity = "linear"
    pairwise = True
    parameter = "exp"
    source = "Chatzikokolakis et al. (2013) Def. 3; Andrés et al. (2013) Def. 3.1"
    largest_written_level = LARGEST_REPAIR_EXPONENT  # the programs relax pair by pair (`written`)
    options = (
        NotionOption(
            "metric",
            'the metric on the secrets: a matrix, {points, norm}, {edges} or "discrete"',
            validate_metric,
            required=True,
            example='metric = { points = [[0, 0], [0, 1], [1, 0]], norm = "euclidean" }',
        ),
        NotionOption(
            "spanner",
            "constrain only the edges of a greedy δ-spanner (level ε on it: (ε·δ)·d-private)",
            validate_spanner,
            example="spanner = 1.1",
        ),
    )

    def sample_options(self, prior: Prior | JointPrior | DatabasePrior) -> dict:
        """The discrete metric.

        Returns
        -------
        dict
            ``{"metric": "discrete"}``.
        """
        return {"metric": "discrete"}

    def closed_form_checks(
        self,
        prior: Prior | JointPrior | DatabasePrior,
        distortion: Any,
        mode: str,
        *,
        options: Any,
        **answer: Any,
    ) -> list:
        """A discrete metric ``c·[x ≠ x']`` (without a spanner) makes ε·d-privacy
        ``(c ε)``-LDP: the LDP closed forms at level ``c·ε``; no check otherwise.

        Parameters
        ----------
        prior, distortion, mode, options
            As in :meth:`Notion.closed_form_checks <privopt.notions.Notion.closed_form_checks>`.
        **answer
            The answer's keywords there (``requested``, ``level``, ``expected_distortion``,
            ``neighbors``, ``mechanism``, ``status``, ``least_achievable``, ``tol``), passed on.

        Returns
        -------
        list of ClosedFormCheck
            The LDP checks, or none.
        """
        scale = (
            None if options.get("spanner") is not None else _discrete_scale(options.get("metric"))
        )
        if scale is None:
            return []
        requested, level = answer.pop("requested"), answer.pop("level")
        return checks.closed_form_checks(
            prior,
            distortion,
            "ldp",
            mode,
            requested=requested * scale if mode == "epsilon" else requested,
            level=level * scale if level is not None else None,
            **answer,
        )

    def measure(
        self,
        prior: Prior | JointPrior | DatabasePrior,
        mechanism: np.ndarray,
        neighbors: NeighborRelation | None = None,
        **options: Any,
    ) -> float:
        """The least ε with the mechanism ε·d-private on the constraint pairs of the support (the
        spanner's edges with ``spanner``) (Chatzikokolakis et al. 2013, Def. 3), by
        :func:`privopt.measures.metric_dp_level`.

        Returns
        -------
        float
            The level in nats, in ``[0, inf]``.

        Raises
        ------
        InputError
            For a missing or malformed ``metric`` (field ``privacy.metric``).
        """
        metric = validate_metric(options.get("metric"), prior, "privacy.metric")
        support = np.flatnonzero(prior.secret_probs > 0)
        pairs = constraint_pairs({"metric": metric, "spanner": options.get("spanner")}, support)
        return measures.metric_dp_level(prior, mechanism, metric, pairs)

    def pair_count(
        self,
        prior: Prior | JointPrior | DatabasePrior,
        neighbors: NeighborRelation | None = None,
        **options: Any,
    ) -> int | None:
        """The ordered constraint pairs on the prior's support (the spanner's edges with
        ``spanner``): computed once (``O(k³)`` for a metric given by a matrix or points) and
        kept on the metric, where the methods find them again.

        Returns
        -------
        int
        """
        support = np.flatnonzero(prior.secret_probs > 0)
        return int(constraint_pairs(options, support).n_pairs)

    def constraints(self, ctx: DesignContext, level: cp.Parameter) -> list[cp.Constraint]:
        """``p(u|a) ≤ e^{ε d(a,b)} p(u|b)`` on the constraint pairs of the support (Chatzikokolakis
        et al. 2013, Def. 3; Bordenabe, Chatzikokolakis & Palamidessi 2014, Sec. 4), with ``+ 1``
        on the right for the pairs whose ``ε d`` exceeds :data:`RELAXED_EXPONENT` (left out).

        The ratios are parameters derived from ``level``; a hook appended to
        ``ctx.level_hooks`` updates them when the level changes.

        Returns
        -------
        list of cvxpy.Constraint
            One constraint over the pairs (pairs × ``|U|``), or none when there is no pair.
        """
        import cvxpy as cp

        pairs = constraint_pairs(ctx.options, ctx.secret_index).relabelled(ctx.secret_index)
        if pairs.n_pairs == 0:
            return []
        ratios = cp.Parameter((pairs.n_pairs, 1), nonneg=True, name="metric_ratios")
        # 1 on the pairs left out at this level: ``W[a,u] ≤ e^20 W[b,u] + 1`` always holds
        left_out = cp.Parameter((pairs.n_pairs, 1), nonneg=True, name="metric_left_out")

        def update(value: float) -> None:
            eps = float(np.log(value)) if value > 0 else 0.0
            ratios.value = _ratios(pairs.weights, eps)[:, None]
            left_out.value = (~written(pairs.weights, eps)).astype(float)[:, None]

        update(float(level.value))
        ctx.level_hooks.append(update)
        channel = ctx.channel
        return [channel[pairs.left, :] <= cp.multiply(ratios, channel[pairs.right, :]) + left_out]

    def closed_form_repair(self, point: RepairPoint) -> float:
        """The least weight of the anchor that restores the true constraint
        ``p(u|a) ≤ e^{ε d(a,b)} p(u|b)`` on every constraint pair of the support (exponents
        capped at 700, as in every repair), in closed form.

        Returns
        -------
        float
            ``θ`` in ``[0, 1)``; 0 when the answer already meets the level.
        """
        support, channel, level = point.support, point.channel, point.level
        pairs = constraint_pairs(point.options, support).relabelled(support)
        ch = channel if channel.shape[0] == support.size else channel[support]
        theta = 0.0
        chunk = max(1, 2**22 // max(ch.shape[1], 1))
        for start in range(0, pairs.n_pairs, chunk):
            a = pairs.left[start : start + chunk]
            b = pairs.right[start : start + chunk]
            # the true constraint, not the program's; capped like every repair (repair_terms)
            exponent = np.minimum(
                level * pairs.weights[start : start + chunk], LARGEST_REPAIR_EXPONENT
            )[:, None]
            ratio, slack = np.exp(exponent), REPAIR_SLACK * (1.0 + exponent)
            c = np.broadcast_to(point.anchor, (a.size, ch.shape[1]))
            theta = max(theta, mixing_weight(ch[a], ch[b], c, c, ratio, slack))
        return theta

    def lagrangian(self, lctx: LagrangeContext, duals: list) -> LagrangeTerms:
        """The terms of ``Σ λ (p(u|a) − e^{ε d(a,b)} p(u|b) − o_ab)`` over the constraint pairs,
        with ``o_ab = 1`` for the pairs left out at this level and 0 otherwise.

        Returns
        -------
        LagrangeTerms
            Channel coefficients, output coefficients 0 and the constant ``−Σ λ`` over the pairs
            left out.
        """
        shape = lctx.channel.shape
        support = lctx.prior.secret_support
        pairs = constraint_pairs(lctx.options, support).relabelled(support)
        coef = np.zeros(shape)
        constant = 0.0
        if pairs.n_pairs and duals:
            lam = dual_array(duals[0], (pairs.n_pairs, shape[1]))
            ratio = _ratios(pairs.weights, lctx.level)[:, None]
            np.add.at(coef, pairs.left, lam)
            np.add.at(coef, pairs.right, -ratio * lam)
            left_out = ~written(pairs.weights, lctx.level)
            constant = -float(lam[left_out].sum())  # the "+ 1" of the pairs left out
        return LagrangeTerms(coef, np.zeros(shape[1]), constant)

    def result_notes(
        self,
        prior: Prior | JointPrior | DatabasePrior,
        mechanism: np.ndarray,
        level: float,
        **options: Any,
    ) -> dict:
        """The constraint pairs written and, with a spanner, the guarantee on the full metric
        (a message, hence a warning: the level holds on the spanner's edges) and the exact
        metric level re-measured on every pair.

        Returns
        -------
        dict
            ``constraint_pairs`` (unordered pairs); with a spanner of stretch ``> 1`` also
            ``spanner_stretch``, ``spanner_edges``, ``guaranteed_metric_level`` (``ε·δ``),
            ``metric_level`` and the message ``spanner_guarantee``.

        Raises
        ------
        InputError
            For a missing or malformed ``metric`` (field ``privacy.metric``).
        """
        metric: Metric = validate_metric(options.get("metric"), prior, "privacy.metric")
        support = np.flatnonzero(prior.secret_probs > 0)
        spanner = options.get("spanner")
        pairs = constraint_pairs({"metric": metric, "spanner": spanner}, support)
        out: dict = {"constraint_pairs": pairs.n_pairs // 2}
        if spanner is not None and spanner > 1.0:
            out["spanner_stretch"] = float(spanner)
            out["spanner_edges"] = pairs.n_pairs // 2
            out["guaranteed_metric_level"] = float(level) * float(spanner)
            channel = prior.induced_channel(np.asarray(mechanism, dtype=float))
            full = np.zeros_like(channel)
            full[support] = channel[support]
            out["metric_level"] = pair_level(full, metric.pairs_on(support), support)
            out["spanner_guarantee"] = (
                f"metric_dp with spanner = {spanner:g}: the level {level:.6g} holds on the "
                f"spanner's edges; on the full metric the mechanism is "
                f"({level:.6g}·{spanner:g})·d-private (measured: "
                f"{out['metric_level']:.6g}) "
                "(Bordenabe, Chatzikokolakis & Palamidessi 2014, Sec. 5)"
            )
        return out


def _discrete_scale(metric: Any) -> float | None:
    """``c`` when ``metric`` is ``c·[x ≠ x']`` with ``c > 0`` (else ``None``)."""
    matrix = getattr(metric, "matrix", None)
    if matrix is None or matrix.shape[0] < 2:
        return None
    off = matrix[~np.eye(matrix.shape[0], dtype=bool)]
    c = float(off[0])
    if not (np.isfinite(c) and c > 0) or np.any(np.abs(off - c) > 1e-12 * c):
        return None
    return c
