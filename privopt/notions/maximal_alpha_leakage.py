"""Maximal α-leakage ``L_α(S→U)``, ``α ∈ (1, ∞]`` (Liao, Kosut, Sankar & Calmon [Liao-Alpha]).

[Liao-Alpha] define it operationally (the largest gain, in α-loss, of guessing any
function of the secret from the release); Thm 2 gives it as
``L_α = sup_{P̃} I_α^A(S̃;U) = sup_{P̃} I_α^S(S̃;U)``, the supremum over input laws on the
prior's support of Arimoto's (equivalently Sibson's) mutual information of order α: the Rényi
capacity of order α of the channel ``p(u|s)`` restricted to the support,

    L_α = min_Q max_{s ∈ supp} D_α(p(·|s) ‖ Q),   D_α(P‖Q) = 1/(α−1) ln Σ_u P(u)^α Q(u)^{1−α}.

Hence "``L_α ≤ ε``" is: some ``R ≥ 0`` on the outputs (``R = e^ε Q``, unnormalised) has
``Σ_u R_u ≤ e^ε`` and ``Σ_u p(u|s)^α R_u^{1−α} ≤ 1`` for every secret of the support (a
smaller ``Σ R`` only helps, as ``R^{1−α}`` decreases in ``R``). The perspective
``p^α R^{1−α}`` is jointly convex for ``α > 1``: the program holds one power cone
``T^{1/α} R^{1−1/α} ≥ p(u|s)`` per entry (``T ≥ p^α R^{1−α}``) and the linear rows
``Σ_u T[s, u] ≤ 1``. The least level within a budget minimises ``Σ_u R_u`` (``L_α = ln`` of
its optimum). At ``α = ∞`` the measure is the maximal leakage ``ln Σ_u max_s p(u|s)``
([Liao-Alpha] Thm 2; [Saeidian-PML] Def. 6) and the notion writes that notion's LP.

``α = 1`` is refused: [Liao-Alpha] set ``L_1 = I(S;U)`` under the actual prior, which is not
the limit of ``L_α`` as ``α → 1`` (the Shannon capacity of the channel); design for it with
``mutual_information``.
"""

from __future__ import annotations

__all__ = ["MaximalAlphaLeakage"]

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from privopt import measures
from privopt.model import as_prior
from privopt.notions._pairwise import sum_repair_weight
from privopt.notions.base import (
    DesignContext,
    LagrangeTerms,
    Notion,
    NotionOption,
    dual_array,
    register,
)
from privopt.notions.maximal_leakage import MaximalLeakage
from privopt.papers import closed_form_checks as checks

if TYPE_CHECKING:  # pragma: no cover
    import cvxpy as cp

    from privopt.model import DatabasePrior, JointPrior, NeighborRelation, Prior
    from privopt.notions.base import LagrangeContext, RepairPoint

#: The maximal-leakage notion whose program and closed forms are those of ``α = ∞``.
_AT_INFINITY = MaximalLeakage()


def _validate_alpha(value: Any, prior: Any, field: str) -> float:
    """``α`` checked (a number ``> 1`` or ``inf``; field ``field``)."""
    return measures.check_alpha(value, field)


def _alpha(options: dict) -> float:
    """The order of the request (validated options always hold it)."""
    return float(options["alpha"])


def cone_multipliers(cone_dual: Any, alpha: float, shape: tuple[int, int]) -> tuple | None:
    """The solver's multipliers ``(u, v, w)`` of the power cones
    ``K = {(T, R, p): T^{1/α} R^{1−1/α} ≥ |p|}``, moved into the dual cone
    ``K* = {(u, v, w): (αu)^{1/α} (αv/(α−1))^{1−1/α} ≥ |w|, u, v ≥ 0}`` entry by entry
    (``u``, ``v`` clipped to ``≥ 0``; ``v`` raised where ``|w|`` is too large; ``w = 0`` where
    ``u = 0``): then ``u T + v R + w p ≥ 0`` on every point of ``K`` (the definition of
    ``K*``), whatever the solver's accuracy.

    Parameters
    ----------
    cone_dual : list of 3 arrays, array of shape ``(3, *shape)`` or None
        cvxpy's dual value of the ``PowCone3D`` constraint.
    alpha : float
        The order (the cone's exponent is ``1/α``).
    shape : tuple of int
        ``(|supp S|, |U|)``.

    Returns
    -------
    tuple of numpy.ndarray or None
        ``(u, v, w)``, each of ``shape``, in ``K*``; ``None`` without a usable dual value.
    """
    if cone_dual is None:
        return None
    try:
        parts = np.asarray(cone_dual, dtype=float)
    except (TypeError, ValueError):
        return None
    if parts.shape != (3, *shape) or not np.isfinite(parts).all():
        return None
    a = 1.0 / alpha
    u, v = np.clip(parts[0], 0.0, None), np.clip(parts[1], 0.0, None)
    w = np.where(u > 0, parts[2], 0.0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        reach = (u / a) ** a  # |w| ≤ reach · (v/(1−a))^{1−a}
        need = np.where(u > 0, (1.0 - a) * (np.abs(w) / reach) ** (1.0 / (1.0 - a)), 0.0)
    # where u underflows against |w| (no finite v puts the entry in K*), drop w: (u, v, 0) ∈ K*
    out_of_reach = ~np.isfinite(need)
    w = np.where(out_of_reach, 0.0, w)
    v = np.maximum(v, np.where(out_of_reach, 0.0, need))
    return u, v, w


@register
class MaximalAlphaLeakage(Notion):
    """Maximal α-leakage ``L_α(S→U) ≤ ε``, ``α ∈ (1, ∞]`` (Liao, Kosut, Sankar & Calmon 2019,
    Thm 2): the Rényi capacity of order α of the channel on the prior's support."""

    name = "maximal_alpha_leakage"
    convexity = "power_cone"
    direct_level = True
    parameter = "exp"
    zero_means_independent = True
    source = "Liao-Kosut-Sankar-Calmon (2019) Thm 2"
    options = (
        NotionOption(
            "alpha",
            "the order α of the leakage: a number > 1, or inf for maximal leakage",
            _validate_alpha,
            required=True,
            example="alpha = 2",
        ),
    )

    def sample_options(self, prior: Prior | JointPrior | DatabasePrior) -> dict:
        """Order 2 (a power-cone program).

        Returns
        -------
        dict
            ``{"alpha": 2.0}``.
        """
        return {"alpha": 2.0}

    def cone(self, options: dict) -> str:
        """``"linear"`` at ``α = ∞`` (the maximal-leakage LP), ``"power_cone"`` otherwise.

        Returns
        -------
        str
            The kind of program :meth:`constraints` writes.
        """
        return "linear" if math.isinf(_alpha(options)) else "power_cone"

    def constraint_nonzeros(
        self, n_secrets: int, n_inputs: int, n_outputs: int, options: Mapping[str, Any]
    ) -> float:
        """Non-zeros in the dense program: one power cone per channel entry (the channel's
        ``|Y|`` inputs, or 1 when the secret is the input, and ``T``, ``R``), and the rows of
        ``T``.

        Returns
        -------
        float
            The count.
        """
        per_entry = 1.0 if n_inputs == n_secrets else float(n_inputs)
        return float(n_secrets) * n_outputs * (per_entry + 3.0)

    def measure(
        self,
        prior: Prior | JointPrior | DatabasePrior,
        mechanism: np.ndarray,
        neighbors: NeighborRelation | None = None,
        **options: Any,
    ) -> float:
        """``L_α`` of ``mechanism`` by :func:`privopt.measures.maximal_alpha_leakage` (the upper
        end of a certified interval: never below the true level).

        Returns
        -------
        float
            The level in nats, in ``[0, ln |supp S|]``.
        """
        return measures.maximal_alpha_leakage(prior, mechanism, alpha=_alpha(options))

    # --- the papers' closed forms -----------------------------------------------------------
    def closed_form_checks(
        self,
        prior: Prior | JointPrior | DatabasePrior,
        distortion: Any,
        mode: str,
        *,
        options: Any,
        **answer: Any,
    ) -> list:
        """The closed forms that pin maximal α-leakage's optimum down or bound it.

        * ``α = ∞``: maximal α-leakage is maximal leakage ([Liao-Alpha] Thm 2), and every
          maximal-leakage closed form applies as it is.
        * ``1 < α < ∞``: ``I(S;U) ≤ L_α ≤ L_∞`` on every mechanism (``L_α ≥ I_α^S(P_S) ≥
          I(S;U)``, Sibson's information being non-decreasing in α; ``L_α ≤ L_∞`` as
          ``D_α ≤ D_∞``), so ``{L_∞ ≤ ε} ⊆ {L_α ≤ ε} ⊆ {I ≤ ε}`` and
          ``D*_MI(ε) ≤ D*_α(ε) ≤ D*_ML(ε)`` (budget mode: ``ε*_MI(D) ≤ ε*_α(D) ≤
          ε*_ML(D)``): the exact maximal-leakage and mutual-information closed forms become
          bounds (the Hamming knapsack; the rate–distortion function on Hamming distortion).
        * Level 0 forces ``U`` independent of the secret (``D_α(P‖Q) = 0`` only for ``P = Q``):
          the best constant release ([Calmon-Fawaz] Thm 2 form).

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
            The checks that apply, each evaluated.
        """
        alpha = _alpha(options)
        if math.isinf(alpha):
            return checks.closed_form_checks(prior, distortion, "maximal_leakage", mode, **answer)
        common = {key: value for key, value in answer.items() if key != "mechanism"}
        quantity = "D*" if mode == "epsilon" else "ε*"
        out = []
        for other, relation, sign in (
            ("maximal_leakage", "at_most", "≤"),
            ("mutual_information", "at_least", "≥"),
        ):
            for check in checks.closed_form_checks(prior, distortion, other, mode, **common):
                if check.relation != "equal" or check.name.startswith("zero_leakage"):
                    continue
                out.append(
                    checks.as_bound(
                        check,
                        relation,
                        f"{quantity}_α {sign} {quantity} of {other} = {check.statement}",
                        "I(S;U) ≤ L_α ≤ L_∞ (Liao, Kosut, Sankar & Calmon (2019), Thm 2); "
                        + check.source,
                        f"α = {alpha:g}; {check.conditions}",
                    )
                )
        zero_leakage = ("requested", "level", "expected_distortion", "status", "tol")
        out += checks.zero_leakage_checks(
            prior,
            distortion,
            self.name,
            mode,
            **{k: v for k, v in answer.items() if k in zero_leakage},
        )
        return out

    # --- the programs -------------------------------------------------------------------------
    def _cone_program(self, ctx: DesignContext) -> tuple[cp.Expression, list[cp.Constraint]]:
        """``Σ_u R_u`` with ``T^{1/α} R^{1−1/α} ≥ p(u|s)`` and ``Σ_u T[s, u] ≤ 1`` (finite α)."""
        import cvxpy as cp

        alpha = _alpha(ctx.options)
        centre = cp.Variable(ctx.n_outputs, nonneg=True, name="alpha_centre")
        tilt = cp.Variable((ctx.n_secrets, ctx.n_outputs), nonneg=True, name="alpha_terms")
        cone = cp.PowCone3D(tilt, ctx.broadcast_rows(centre), ctx.channel, 1.0 / alpha)
        return cp.sum(centre), [cone, cp.sum(tilt, axis=1) <= 1]

    def level_objective(self, ctx: DesignContext) -> cp.Expression:
        """``e^{L_α}`` as a convex objective: ``Σ_u max_s p(u|s)`` at ``α = ∞``; for finite α use
        :meth:`level_program` (the minimum over the auxiliary ``R`` needs its constraints).

        Returns
        -------
        cvxpy.Expression
            A convex scalar, ``≥ 1`` on mechanisms.

        Raises
        ------
        NotImplementedError
            For a finite α (no expression without auxiliary variables).
        """
        if math.isinf(_alpha(ctx.options)):
            return _AT_INFINITY.level_objective(ctx)
        raise NotImplementedError("maximal α-leakage of finite order needs level_program")

    def level_program(self, ctx: DesignContext) -> tuple[cp.Expression, list[cp.Constraint]]:
        """``min Σ_u R_u`` subject to ``Σ_u p(u|s)^α R_u^{1−α} ≤ 1`` on the support (power
        cones), whose optimum is ``e^{L_α}`` ([Liao-Alpha] Thm 2 in its min-max form); at
        ``α = ∞`` the maximal-leakage program ``Σ_u t_u``, ``p(u|s) ≤ t_u``.

        Returns
        -------
        tuple of (cvxpy.Expression, list of cvxpy.Constraint)
            ``Σ_u R_u`` and, for finite α, the power cone (``|supp S| × |U|``) and the rows
            ``Σ_u T[s, u] ≤ 1`` (``|supp S|``).
        """
        if math.isinf(_alpha(ctx.options)):
            return _AT_INFINITY.level_program(ctx)
        return self._cone_program(ctx)

    def level_from_objective(self, value: float) -> float:
        """``L_α = ln v`` of the optimal value ``v`` of :meth:`level_program`.

        Returns
        -------
        float
            ``ln max(value, 1)`` in nats (values below 1 are round-off), ``≥ 0``.
        """
        return math.log(max(value, 1.0))

    def constraints(self, ctx: DesignContext, level: cp.Parameter) -> list[cp.Constraint]:
        """``L_α ≤ ε``: :meth:`level_program`'s constraints and ``Σ_u R_u ≤ e^ε``.

        Returns
        -------
        list of cvxpy.Constraint
            Finite α: the power cone, the rows ``Σ_u T[s, u] ≤ 1`` and ``Σ_u R_u ≤ e^ε``;
            ``α = ∞``: the maximal-leakage LP's two constraints.
        """
        objective, cones = self.level_program(ctx)
        return [*cones, objective <= level]

    # --- certificates -------------------------------------------------------------------------
    def lagrangian(self, lctx: LagrangeContext, duals: list) -> LagrangeTerms | None:
        """The Lagrangian terms of the cone program with the solver's multipliers moved into the
        dual cone (:func:`cone_multipliers`): on every feasible ``(W, T, R)``,

            0 ≤ Σ (u T + v R + w p) ,   Σ_s λ_s (Σ_u T[s,u] − 1) ≤ 0 ,   μ (Σ_u R_u − e^ε) ≤ 0,

        so ``−Σ w p(u|s) − Σ_s λ_s − μ e^ε ≤ Σ T (u − λ) + Σ_u R_u (Σ_s v − μ)``, which is ``≤ 0``
        with ``λ_s = max_u u[s, u]`` and ``μ = max_u Σ_s v[s, u]`` (each raised to the solver's
        own multiplier where that is larger): ``T`` and ``R`` drop out and the term
        ``−Σ w p(u|s) − Σ_s λ_s − μ e^ε`` is ``≤ 0`` on every mechanism with ``L_α ≤ ε``.
        At ``α = ∞``, the maximal-leakage terms.

        Returns
        -------
        LagrangeTerms or None
            Channel coefficients ``−w``, output coefficients 0 and the constant
            ``−Σ_s λ_s − μ e^ε``; ``None`` without the cone's dual value.
        """
        if math.isinf(_alpha(lctx.options)):
            return _AT_INFINITY.lagrangian(lctx, duals)
        shape = lctx.channel.shape
        cone = cone_multipliers(duals[0], _alpha(lctx.options), shape)
        if cone is None:
            return None
        u, v, w = cone
        rows = np.maximum(u.max(axis=1), dual_array(duals[1], (shape[0],)))
        mu = max(float(v.sum(axis=0).max(initial=0.0)), float(dual_array(duals[2], ())))
        return LagrangeTerms(-w, np.zeros(shape[1]), -float(rows.sum()) - mu * lctx.level_value)

    def level_lagrangian(self, lctx: LagrangeContext, duals: list) -> LagrangeTerms | None:
        """A lower bound on ``Σ_u R_u`` linear in the channel: ``Σ_u R_u ≥ Σ_u R_u − Σ (u T +
        v R + w p) + Σ_s λ_s (Σ_u T[s,u] − 1)`` with the cone multipliers scaled down until
        ``Σ_s v[s, u] ≤ 1`` for every output (then ``R ≥ 0`` drops out, and ``T`` with
        ``λ_s = max_u u[s, u]``). At ``α = ∞``, the maximal-leakage terms.

        Returns
        -------
        LagrangeTerms or None
            Channel coefficients ``−w`` (scaled), output coefficients 0 and the constant
            ``−Σ_s λ_s`` (scaled); ``None`` without the cone's dual value.
        """
        if math.isinf(_alpha(lctx.options)):
            return _AT_INFINITY.level_lagrangian(lctx, duals)
        shape = lctx.channel.shape
        cone = cone_multipliers(duals[0], _alpha(lctx.options), shape)
        if cone is None:
            return None
        u, v, w = cone
        shrink = max(1.0, float(v.sum(axis=0).max(initial=0.0)))
        rows = np.maximum(u.max(axis=1), dual_array(duals[1], (shape[0],))) / shrink
        return LagrangeTerms(-w / shrink, np.zeros(shape[1]), -float(rows.sum()))

    # --- levels and repair --------------------------------------------------------------------
    def max_level(self, prior: Prior | JointPrior | DatabasePrior) -> float:
        """``ln |supp S|``: ``L_α ≤ L_∞ ≤ ln |supp S|`` for every mechanism.

        Returns
        -------
        float
            ``ln |supp S|`` in nats.
        """
        return math.log(len(as_prior(prior).secret_support))

    def closed_form_repair(self, point: RepairPoint) -> float:
        """A weight of the anchor that restores ``L_α ≤ ε``, in closed form: with ``R`` the
        answer's centre (``Σ_u p^α R^{1−α} ≤ 1``, ``Σ R = e^{L}``) and the anchor's own
        (``R = anchor``, where ``Σ_u a^α a^{1−α} = 1``), joint convexity of ``p^α R^{1−α}``
        makes the mixtures feasible with ``Σ R = (1−θ) e^{L} + θ``; ``θ = (e^L − e^ε)/(e^L − 1)``
        suffices (as for maximal leakage).

        Returns
        -------
        float
            ``θ`` in ``[0, 1)``; 0 when ``e^{L} ≤ e^ε`` (up to the repair slack) or ``L = 0``.
        """
        support = point.channel[as_prior(point.prior).secret_probs > 0]
        alpha = _alpha(point.options)
        if math.isinf(alpha):
            leak = float(np.log(support.max(axis=0).sum()))
        else:
            leak = measures.renyi_capacity(support, alpha)[1]
        return sum_repair_weight(math.exp(leak), point.level)
