r"""Certified bands: the whole privacy–distortion curve bounded, not only its sample points.

A sweep solves the curve at a few levels ``ε_1 < … < ε_n``; this module bounds the optimum
``D*(ε)`` (least ``E[d]`` at level ε) on the whole interval between them, and the least
level ``ε*(D)`` on a range of budgets likewise, from four kinds of evidence, each a theorem
that holds whatever the solver did (privopt re-measures every mechanism it counts and
recomputes every bound from multipliers, so a sloppy solve weakens the band, never breaks it).

**Upper envelope: feasible mechanisms.** Every notion constrains the mechanism more as ε
decreases (its constraint set at ε is contained in the one at any ε' ≥ ε), so ``D*`` is
non-increasing and a mechanism ``W`` re-measured at level ``ℓ`` and distortion ``δ`` gives
``D*(ε) ≤ δ`` for every ``ε ≥ ℓ``:

    U(ε) = min { δ_W : ℓ_W ≤ ε }.

The mechanisms are the sweep's answers and cheap ones built between two neighbouring answers
``A`` (level ``ℓ_A``) and ``B`` (``ℓ_B > ℓ_A``): mixtures ``θA + (1−θ)B`` and, for the linear
notions, ``B`` mixed with the least weight of a constant mechanism that brings it down to a
level in between (the notion's exact :meth:`~privopt.notions.Notion.repair_weight`). Each is
measured like any answer. For the notions whose level is a convex function of the mechanism,
in the parameter ``t`` the level enters with — ``t = e^ε`` for maximal leakage
(``Σ_u max_s p(u|s) ≤ e^ε``, [Issa-Wagner-Kamath] Def. 1 and Thm 1), ``t = ε`` for mutual
information — a mixture's level is at most the mixture of the levels, so the mixtures
realise the chord between the two answers.

**Lower envelope: bounds.** A certified lower bound ``L_i ≤ D*(ε_i)`` holds for every
``ε ≤ ε_i`` (monotonicity again). A dual point — multipliers ``μ ≥ 0`` of the notion's
constraints ``g(W; ε) ≤ 0`` found at some level ``ε_j`` (:mod:`privopt.methods.multipliers`)
— gives a lower bound at *every* level ε by weak duality ([Bertsekas-NLP], Lagrangian
duality), the row sums kept as constraints and the rest dualised:

    D*(ε) ≥ min over row-stochastic W of  E[d](W) + μᵀ g(W; ε)  =  c(ε) + Σ_y min_u coef_yu(ε),

where the coefficients are the notion's Lagrangian terms (:meth:`~privopt.notions.Notion.
lagrangian`) re-evaluated at ε: one pass over the rows, the privacy rows' coefficients being
those of level ε (``e^ε`` for PML, LDP, dp, identifiability, information privacy and maximal
leakage; ``e^{ε d(a,b)}`` pair by pair for metric privacy; ε itself for the exponential-cone
notions, whose terms are linear minorants taken at the answer's posterior). Per notion:

============================  ===============================================================
notion                        the bound of multipliers found at ``ε_j``, evaluated at ε
============================  ===============================================================
pml                           ``Σ λ(p(u|s) − e^ε p(u))`` ([Saeidian-PML] Thm 1)
information_privacy           ``Σ λ₁(p(u|s) − e^ε p(u)) + Σ λ₂(p(u) − e^ε p(u|s))``
                              ([Calmon-Fawaz] Def. 6)
ldp, dp, identifiability      ``Σ λ(M_a − e^ε M_b)`` over the pairs (the all-pairs column
                              minimum eliminated) ([Wang-Ying-Zhang] eqs. (8)–(15))
metric_dp                     ``Σ λ(p(u|a) − e^{εd(a,b)} p(u|b))``
                              ([Bordenabe-Chatzikokolakis-Palamidessi] Sec. 4)
maximal_leakage               ``Σ λ(p(u|s) − t_u) + μ(Σ t_u − e^ε)``, ``t`` eliminated
mutual_information,           the linear minorant of the level at the answer's posterior,
max_information_leakage,      minus ε (resp. the notion's own terms)
robust_pml
============================  ===============================================================

The multipliers are also searched along their ray (the dual function is concave along
``tμ``, so scaling them by ``t`` found by golden section only improves the bound). A dual
point of a *budget* point of a ``direct_level`` notion (least level within ``E[d] ≤ D_j``,
multiplier ``ν`` of the budget) says ``ℓ(W) + ν E[d](W) ≥ a`` for every ``W`` with the level
in its objective's form ``ℓ = e^ε`` or ``ε``: hence ``D*(ε) ≥ (a − ℓ(ε)) / ν`` at every ε.
For the two convex curves (maximal leakage in ``t = e^ε``: its constraint is jointly convex in
``(W, t)``; mutual information in ε: [Cover-Thomas] Lemma 10.4.1 for the distortion-rate
function, the same argument with ``I(S;U)`` convex in ``W``), a secant between two solved
points bounds the curve from below outside its interval: with ``f`` convex and
``L_i ≤ f(t_i) ≤ U_i``, ``f(t) ≥ L_i + (L_i − U_{i−1})/(t_i − t_{i−1})·(t − t_i)`` for
``t ≥ t_i`` and ``f(t) ≥ L_i + (U_{i+1} − L_i)/(t_{i+1} − t_i)·(t − t_i)`` for ``t ≤ t_i``.
Finally ``D*(ε) ≥ D*(∞) = Σ_y p(y) min_u d(y, u)``. The lower envelope ``L`` is the largest
of these, made non-increasing (``L(ε) = max_{ε' ≥ ε}`` of the pointwise bounds).

**The band.** Both envelopes are evaluated on a grid ``g_0 < g_1 < …`` that contains every
solved level. As ``D*`` is non-increasing, for every ε in ``[g_j, g_{j+1}]``

    L(g_{j+1}) ≤ D*(g_{j+1}) ≤ D*(ε) ≤ D*(g_j) ≤ U(g_j),

so the band is certified on the whole interval, not only at the grid points; its width on
the cell is ``U(g_j) − L(g_{j+1})``. Note what this implies: with only the answers at the
solved levels above and only their certificates below, the band between two neighbouring
points is the whole drop of the curve between them, whatever the multipliers say inside —
the mechanisms built between the points are what narrows it there, and the dual points are
what lets that show.

**Budget curves.** ``ε*(D) = min{ε : D*(ε) ≤ D}`` is non-increasing in D and bounded by the
same evidence: a mechanism ``(ℓ, δ)`` gives ``ε*(D) ≤ ℓ`` for ``D ≥ δ``; a lower bound
``D*(ε') > D`` at a level ``ε'`` gives ``ε*(D) ≥ ε'`` (for every ``ε ≤ ε'``,
``D*(ε) ≥ D*(ε') > D``); a certificate of a budget point, ``ε*(D_j) ≥ b_j``, says
``D*(ε) > D_j`` for every ``ε < b_j``. On a grid of budgets ``h_j`` the band is certified on
``[h_j, h_{j+1}]`` between ``L_ε(h_{j+1})`` and ``U_ε(h_j)``.

**Tolerances.** A mechanism counts at a level ε when its re-measured level is within
:func:`~privopt.validation.level_tolerance` of ε, and at a budget when its distortion is
within the verification's distortion tolerance: the same sense in which every verified answer
"meets its constraint" (:mod:`privopt.solve.verification`). The lower envelope bounds the
exact optimum, so the two may cross by that tolerance times the curve's slope (about 1e-9
relative on a level curve, 1e-7 on a budget curve); a crossing within rounding is closed.
"""

from __future__ import annotations

__all__ = [
    "CONVEX_PARAMETER",
    "CurveBand",
    "CurveEvidence",
    "DualBound",
    "LowerStep",
    "Witness",
    "band_columns",
]

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from privopt.methods.multipliers import Multipliers
from privopt.model import NeighborRelation
from privopt.notions.base import LagrangeContext, LagrangeTerms
from privopt.request import DesignRequest
from privopt.solve.results import json_number
from privopt.validation import DISTORTION_TOL, LEVEL_TOL

#: Notions whose optimum is a convex function of a parameter of the level: ``"exp"`` (of
#: ``t = e^ε``: maximal leakage's constraint ``Σ_u max_s p(u|s) ≤ t`` is jointly convex in
#: ``(W, t)``) or ``"linear"`` (of ``t = ε``: mutual information, [Cover-Thomas] Lemma 10.4.1).
CONVEX_PARAMETER = {"maximal_leakage": "exp", "mutual_information": "linear"}

#: Mixture weights of two neighbouring answers tried as witnesses between them.
MIXTURE_WEIGHTS = (0.2, 0.4, 0.6, 0.8)
#: Levels (fractions of the interval) a neighbouring answer is repaired down to.
REPAIR_FRACTIONS = (0.15, 0.35, 0.55, 0.75, 0.9)
#: Grid points per interval between two solved points.
SUBDIVISIONS = 24
#: Grid levels per interval between two known levels, for the lower envelope of ``D*`` a
#: budget curve's lower envelope is read from (its known levels are many: a line search's).
LEVEL_SUBDIVISIONS = 4
#: Dual points are evaluated on every this-many-th grid level (and at the solved ones).
DUAL_STRIDE = 6


# --- evidence --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Witness:
    """A mechanism privopt re-measured: level ``level`` (nats) and ``E[d] = distortion``,
    so ``D*(ε) ≤ distortion`` for every ``ε ≥ level`` (and ``ε*(D) ≤ level`` for every
    ``D ≥ distortion``).

    Attributes
    ----------
    level, distortion : float
    source : str
        ``"point"`` (a sweep's answer), ``"mixture"`` or ``"repair"``.
    """

    level: float
    distortion: float
    source: str = "point"


@dataclass(frozen=True)
class LowerStep:
    """``D*(ε) ≥ value`` for every ``ε ≤ level`` (``strict``: ``D*(ε) > value`` for every
    ``ε < level``).

    Attributes
    ----------
    level, value : float
    strict : bool
        A budget point's certificate ``ε*(value) ≥ level`` (strict); an ε point's certified
        bound ``D*(level) ≥ value`` (not strict).
    source : str
    """

    level: float
    value: float
    strict: bool = False
    source: str = "certificate"


@dataclass
class DualBound:
    """A dual point: multipliers of the notion's constraints that bound ``D*`` at every level
    (see the module docstring).

    Attributes
    ----------
    multipliers : Multipliers
    scale : float
        The request's distortion divided by the one the method saw (the driver rescales
        distortions by powers of two): bounds are multiplied by it.
    home : float
        The level the multipliers were found at (nats); for a budget point, the level of its
        answer.
    """

    multipliers: Multipliers
    scale: float
    home: float


# --- evaluating dual points ------------------------------------------------------------------
def dual_point_bound(request: DesignRequest, multipliers: Multipliers, eps: float) -> float | None:
    """The lower bound on ``D*`` at level ``eps`` of one dual point, evaluated through the
    notion's own Lagrangian terms (:class:`LagrangeEvaluator`), in the units of
    ``multipliers.distortion``.

    The solve driver uses it to check a method's certificate independently of the program
    the method wrote (:func:`privopt.solve.verification.verify`).

    Parameters
    ----------
    request : DesignRequest
        The request the method was given.
    multipliers : Multipliers
        The multipliers of the notion's constraints at an ε point.
    eps : float
        The level (nats).

    Returns
    -------
    float or None
        The bound (``-inf`` or ``nan`` when the multipliers give none); ``None`` when the
        notion has no Lagrangian terms to evaluate them with.
    """
    evaluator = LagrangeEvaluator(request)
    dual = DualBound(multipliers, 1.0, float(eps))
    found = evaluator.terms(dual, float(eps))
    if found is None:
        return None
    coefficients, constant = found
    with np.errstate(over="ignore", invalid="ignore"):
        return float(constant + (evaluator._weights(dual) + coefficients).min(axis=1).sum())


#: Weights of each dual point's multipliers in the combinations tried (the dual function is
#: concave in them; every value is a valid bound, the best is kept).
COMBINATION_WEIGHTS = (0.0, 0.5, 1.0, 2.0)


class LagrangeEvaluator:
    """Evaluates dual points of one request at any level (numpy only).

    An ε point's bound at level ε is ``t·c(ε) + Σ_y min_u (w + t·C(ε))_{yu}`` with ``w`` the
    distortion's coefficients and ``(C, c)`` the notion's terms of the multipliers (homogeneous
    of degree one in them); where the terms are affine in ``e^ε`` (every linear notion but
    LDP's all-pairs form and metric privacy) they are computed once and evaluated for many
    levels at once, otherwise once per level.

    Parameters
    ----------
    request : DesignRequest
        The curve's request (at any point).
    """

    def __init__(self, request: DesignRequest) -> None:
        self.request = request
        prior = request.prior
        self.prior = prior
        self.notion = request.notion
        self.support = prior.secret_support
        self.p_secret = prior.secret_probs[self.support]
        self.neighbors = None
        if request.neighbors is not None:
            rel = request.neighbors.restricted(self.support)
            position = np.full(prior.n_secrets, -1)
            position[self.support] = np.arange(self.support.size)
            self.neighbors = NeighborRelation(
                self.support.size, position[rel.left], position[rel.right], rel.kind
            )
        self.options = dict(request.options)
        self._affine: dict[int, tuple | None] = {}
        self._budget_constants: dict[int, float | None] = {}

    def _coefficients(self, terms: LagrangeTerms) -> np.ndarray:
        """``terms`` (on ``p(u|s)`` and ``p(u)``) as coefficients on ``W[y, u]``."""
        prior = self.prior
        coef = np.outer(prior.input_probs, terms.output)  # p(u) = Σ_y p(y) W[y, u]
        observation = prior.observation
        if observation is None:
            coef[self.support] += terms.channel
            if terms.channel_all is not None:
                coef += terms.channel_all
        else:
            coef += observation[self.support].T @ terms.channel
            if terms.channel_all is not None:
                coef += observation.T @ terms.channel_all
        return coef

    def _weights(self, dual: DualBound) -> np.ndarray:
        return self.prior.input_probs[:, None] * dual.multipliers.distortion

    def _context(self, dual: DualBound, eps: float) -> LagrangeContext:
        m = dual.multipliers
        n_outputs = m.distortion.shape[1]
        channel = m.channel
        if channel is None:
            channel = np.full((self.support.size, n_outputs), 1.0 / n_outputs)
        weights = self._weights(dual)
        level_value = self.notion.parameter_value(eps) if math.isfinite(eps) else math.nan
        return LagrangeContext(
            prior=self.prior,
            channel=channel,
            p_secret=self.p_secret,
            level=float(eps),
            level_value=float(level_value),
            neighbors=self.neighbors,
            options=self.options,
            weights=weights[self.support] if self.prior.observation is None else None,
            distortion=m.distortion,
            row_duals=m.row_duals,
            multipliers=list(m.duals),
        )

    def terms(self, dual: DualBound, eps: float, factor: float = 1.0) -> tuple | None:
        """The Lagrangian part of an ε point's bound at ``eps``: ``(C, c)`` with ``C`` the
        coefficients on ``W`` and ``c`` the constant (multipliers times ``factor``).

        Parameters
        ----------
        dual : DualBound
        eps : float
        factor : float

        Returns
        -------
        tuple of (numpy.ndarray, float) or None
        """
        m = dual.multipliers
        lctx = self._context(dual, eps)
        scaled = [None if d is None else factor * np.asarray(d, dtype=float) for d in m.duals]
        try:
            with np.errstate(over="ignore", invalid="ignore"):
                found = self.notion.lagrangian(lctx, scaled)
        except (ValueError, FloatingPointError, IndexError):
            return None
        if found is None:
            return None
        with np.errstate(over="ignore", invalid="ignore"):
            coef = self._coefficients(found)
        if not (np.isfinite(coef).all() and math.isfinite(found.constant)):
            return None
        return coef, float(found.constant)

    def _affine_terms(self, dual: DualBound) -> tuple | None:
        """``(C0, C1, c0, c1)`` with ``C(ε) = C0 + e^ε C1`` (and the constant likewise) when
        the notion's terms are affine in ``e^ε`` and homogeneous in the multipliers, checked
        at three levels and two scales; ``None`` otherwise."""
        key = id(dual)
        if key in self._affine:
            return self._affine[key]
        found = None
        if self.notion.parameter == "exp":
            probe = [dual.home, dual.home + 0.37, dual.home + 1.13]
            values = [self.terms(dual, e) for e in probe]
            double = self.terms(dual, probe[1], 2.0)
            if all(v is not None for v in values) and double is not None:
                c = np.exp(np.array(probe))
                (A0, a0), (A1, a1), (A2, a2) = values
                slope_C, slope_c = (A1 - A0) / (c[1] - c[0]), (a1 - a0) / (c[1] - c[0])
                base_C, base_c = A0 - c[0] * slope_C, a0 - c[0] * slope_c
                scale = 1.0 + np.abs(A2).max() + abs(a2)
                affine = (
                    np.abs(base_C + c[2] * slope_C - A2).max() <= 1e-9 * scale
                    and abs(base_c + c[2] * slope_c - a2) <= 1e-9 * scale
                )
                homogeneous = (
                    np.abs(double[0] - 2 * A1).max() <= 1e-9 * scale
                    and abs(double[1] - 2 * a1) <= 1e-9 * scale
                )
                if affine and homogeneous:
                    found = (base_C, slope_C, base_c, slope_c)
        self._affine[key] = found
        return found

    def terms_at(self, dual: DualBound, eps: float) -> tuple | None:
        """``(C, c)`` of an ε point's multipliers at level ``eps`` (affine fast path where it
        holds).

        Parameters
        ----------
        dual : DualBound
        eps : float

        Returns
        -------
        tuple of (numpy.ndarray, float) or None
        """
        affine = self._affine_terms(dual)
        if affine is not None:
            c = math.exp(eps)
            return affine[0] + c * affine[1], affine[2] + c * affine[3]
        return self.terms(dual, float(eps))

    def combined_bounds(self, duals: Sequence[DualBound], levels: np.ndarray) -> np.ndarray:
        """The best bound on ``D*`` at each level over non-negative combinations
        ``Σ_k a_k μ_k`` of the multipliers of ε points (a grid of :data:`COMBINATION_WEIGHTS`
        per dual point, then a local search around the best).

        Each dual point's terms ``ℓ_k(W) = ⟨C_k, W⟩ + c_k`` are at most 0 on every
        mechanism of level ε (they are the notion's Lagrangian terms, auxiliary variables
        eliminated, [Bertsekas-NLP] weak duality), so for any ``a ≥ 0``
        ``E[d](W) ≥ E[d](W) + Σ_k a_k ℓ_k(W) ≥ Σ_k a_k c_k + Σ_y min_u (w + Σ_k a_k C_k)_{yu}``
        for every such ``W``.

        Parameters
        ----------
        duals : sequence of DualBound
            ε points' dual points (one or two), found with the same distortion scale.
        levels : numpy.ndarray
            Levels (nats).

        Returns
        -------
        numpy.ndarray
            In the request's distortion units (``-inf`` where none).
        """
        levels = np.asarray(levels, dtype=float)
        out = np.full(levels.shape, -np.inf)
        if not duals or not levels.size:
            return out
        weights = self._weights(duals[0])
        scale = duals[0].scale
        # the terms of every dual point at every level: (levels, parts, S, U) and (levels, parts)
        C = np.zeros((levels.size, len(duals)) + weights.shape)
        c = np.zeros((levels.size, len(duals)))
        for k, dual in enumerate(duals):
            for i, eps in enumerate(levels):
                found = self.terms_at(dual, float(eps))
                if found is None:
                    C[i, k], c[i, k] = 0.0, 0.0  # this part left out at this level
                else:
                    C[i, k], c[i, k] = found

        def evaluate(combos: np.ndarray) -> np.ndarray:
            # combos: (levels, n, parts) → values (levels, n)
            coef = weights[None, None] + np.einsum("lnk,lksu->lnsu", combos, C)
            const = np.einsum("lnk,lk->ln", combos, c)
            values = const + coef.min(axis=3).sum(axis=2)
            return np.where(np.isfinite(values), values, -np.inf)

        parts = len(duals)
        grid = np.array(COMBINATION_WEIGHTS)
        mesh = np.stack(np.meshgrid(*([grid] * parts), indexing="ij"), axis=-1)
        combos = np.broadcast_to(
            mesh.reshape(1, -1, parts), (levels.size, mesh.size // parts, parts)
        )
        moves = np.stack(
            np.meshgrid(*([np.array([-1.0, 0.0, 1.0])] * parts), indexing="ij"), axis=-1
        ).reshape(-1, parts)
        rows = np.arange(levels.size)
        with np.errstate(over="ignore", invalid="ignore"):
            values = evaluate(np.ascontiguousarray(combos))
            best = values.argmax(axis=1)
            top, at = values[rows, best], combos[rows, best]
            step = 0.25
            for _ in range(3):  # a local search around the best combination, halving steps
                near = np.clip(at[:, None, :] + step * moves[None, :, :], 0.0, None)
                values = evaluate(near)
                i = values.argmax(axis=1)
                better = values[rows, i] > top
                top = np.where(better, values[rows, i], top)
                at = np.where(better[:, None], near[rows, i], at)
                step /= 2
        return np.where(np.isfinite(top), top * scale, -np.inf)

    def budget_constant(self, dual: DualBound) -> float | None:
        """``a`` of a budget point's multipliers: ``ℓ(W) + ν E[d](W) ≥ a`` for every ``W``
        (``ℓ`` the level in its objective's form, ``E[d]`` with the distortion the method
        saw).

        Parameters
        ----------
        dual : DualBound

        Returns
        -------
        float or None
            ``None`` when the multipliers give no such line (``ν = 0`` or no terms).
        """
        key = id(dual)
        if key not in self._budget_constants:
            self._budget_constants[key] = self._budget_constant(dual)
        return self._budget_constants[key]

    def _budget_constant(self, dual: DualBound) -> float | None:
        m = dual.multipliers
        nu = m.budget_multiplier
        if nu is None or not nu > 0:
            return None
        lctx = self._context(dual, math.nan)
        lctx.multiplier = nu
        try:
            found = self.notion.level_lagrangian(lctx, list(m.duals))
        except (ValueError, FloatingPointError, IndexError):
            return None
        if found is None:
            return None
        coef = nu * self._weights(dual) + self._coefficients(found)
        value = float(found.constant) + float(coef.min(axis=1).sum())
        return value if math.isfinite(value) else None

    def budget_bounds(self, dual: DualBound, levels: np.ndarray) -> np.ndarray:
        """``(a − ℓ(ε)) / ν`` at every level: a budget point's bounds on ``D*``.

        Parameters
        ----------
        dual : DualBound
        levels : numpy.ndarray

        Returns
        -------
        numpy.ndarray
        """
        levels = np.asarray(levels, dtype=float)
        a = self.budget_constant(dual)
        if a is None:
            return np.full(levels.shape, -np.inf)
        nu = float(dual.multipliers.budget_multiplier)
        objective = np.array([self.notion.parameter_value(e) for e in levels], dtype=float)
        return (a - objective) / nu * dual.scale


# --- the evidence of one curve ---------------------------------------------------------------
#: Relative rounding allowed on the values a convex secant rests on (:func:`_convex_secant_lower`).
SECANT_ROUNDING = 1e-12
#: Points closer than this (relative) give no secant (:func:`_convex_secant_lower`).
SECANT_MIN_SPACING = 1e-9


def _convex_secant_lower(
    x: np.ndarray, lower: np.ndarray, upper: np.ndarray, grid: np.ndarray
) -> np.ndarray:
    """A lower bound at ``grid`` on a convex ``f`` with ``lower_i ≤ f(x_i) ≤ upper_i`` (``x``
    increasing): the secants of neighbouring points extended beyond their interval.

    The values carry rounding: each is widened by :data:`SECANT_ROUNDING` of its size, and two
    points closer than :data:`SECANT_MIN_SPACING` (relative) give no secant (the rounding of
    their values divided by their spacing would tilt it: two points 1e-17 apart with equal
    rounded values gave a flat secant above a decreasing ``f``)."""
    out = np.full(grid.shape, -np.inf)
    n = x.size
    pad = SECANT_ROUNDING * (1.0 + np.maximum(np.abs(lower), np.abs(upper)))
    low, high = lower - pad, upper + pad
    with np.errstate(invalid="ignore", over="ignore"):
        for i in range(n):
            if not np.isfinite(low[i]):
                continue
            for j in (i - 1, i + 1):
                if not 0 <= j < n or not np.isfinite(high[j]):
                    continue
                spacing = abs(x[i] - x[j])
                if spacing <= SECANT_MIN_SPACING * max(1.0, abs(x[i])):
                    continue
                slope = (low[i] - high[j]) / (x[i] - x[j])
                beyond = grid >= x[i] if j < i else grid <= x[i]
                out[beyond] = np.maximum(out[beyond], low[i] + slope * (grid[beyond] - x[i]))
    return out


def _least_within(
    keys: list[float], values: list[float], queries: np.ndarray, tol: float
) -> np.ndarray:
    """``min{value : key ≤ q}`` at every query ``q``, a key counting up to the relative
    tolerance ``tol·(1 + |q|)`` (``inf`` where no key counts): the staircase upper envelopes
    of the witnesses, by level (:meth:`CurveEvidence.upper`) or by distortion
    (:meth:`CurveEvidence.level_upper`).

    Parameters
    ----------
    keys, values : list of float
        One entry per witness: what the query bounds, and what is minimised.
    queries : numpy.ndarray
        Increasing.
    tol : float
        The relative tolerance on the keys.

    Returns
    -------
    numpy.ndarray
        The least value at every query, ``inf`` where none counts.
    """
    if not keys:
        return np.full(queries.shape, np.inf)
    keys_arr, values_arr = np.array(keys), np.array(values)
    order = np.argsort(keys_arr, kind="stable")
    keys_arr, running = keys_arr[order], np.minimum.accumulate(values_arr[order])
    slack = tol * (1.0 + np.abs(queries))  # elementwise
    index = np.searchsorted(keys_arr, queries + slack, side="right") - 1
    out = np.full(queries.shape, np.inf)
    ok = index >= 0
    out[ok] = running[index[ok]]
    return out


@dataclass
class CurveEvidence:
    """Everything a curve's band rests on (see the module docstring).

    Parameters
    ----------
    request : DesignRequest
        The curve's request (at any point).

    Attributes
    ----------
    witnesses : list of Witness
    steps : list of LowerStep
    duals : list of DualBound
    """

    request: DesignRequest
    witnesses: list[Witness] = field(default_factory=list)
    steps: list[LowerStep] = field(default_factory=list)
    duals: list[DualBound] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.evaluator = LagrangeEvaluator(self.request)
        self.floor = float(self.request.least_distortion())  # D*(∞): extras only raise it
        self._dual_cache: dict[tuple, float] = {}

    # --- adding evidence -----------------------------------------------------------------
    def add_witness(self, level: float, distortion: float, source: str = "point") -> None:
        """Record a re-measured mechanism (ignored unless both numbers are finite).

        Parameters
        ----------
        level, distortion : float
        source : str
        """
        if math.isfinite(level) and math.isfinite(distortion):
            self.witnesses.append(Witness(float(level), float(distortion), source))

    def add_step(self, level: float, value: float, strict: bool, source: str) -> None:
        """Record ``D*(ε) ≥ value`` for ``ε ≤ level`` (``strict``: ``>`` for ``ε < level``).

        Parameters
        ----------
        level, value : float
        strict : bool
        source : str
        """
        if math.isfinite(level) and math.isfinite(value):
            self.steps.append(LowerStep(float(level), float(value), bool(strict), source))

    def add_multipliers(self, found: Sequence[Multipliers], scale: float, home: float) -> None:
        """Record dual points handed over by the methods.

        Parameters
        ----------
        found : sequence of Multipliers
        scale : float
            The distortion scale of the run that found them.
        home : float
            The level of the point they belong to (nats), where the ε point's own level is
            not known (budget points).
        """
        for m in found:
            level = m.epsilon if m.epsilon is not None else home
            if level is None or not math.isfinite(level):
                continue
            self.duals.append(DualBound(m, float(scale), float(level)))

    def add_interpolants(
        self, low: np.ndarray, high: np.ndarray, level_low: float, level_high: float
    ) -> None:
        """Witnesses between two neighbouring answers: mixtures of them and, for the notions
        with an exact repair weight, the higher-level answer mixed with a constant mechanism
        down to levels in between.

        Parameters
        ----------
        low, high : numpy.ndarray
            The mechanisms at the lower and the higher level.
        level_low, level_high : float
            Their re-measured levels.
        """
        request = self.request
        if not request.is_plain or not (level_high > level_low):
            return
        for theta in MIXTURE_WEIGHTS:
            self._measure(theta * low + (1.0 - theta) * high, "mixture")
        prior, notion = request.prior, request.notion
        channel = prior.induced_channel(high)
        p_y = prior.input_probs
        n_out = high.shape[1]
        # constant rows: the answer's own output law, and the uniform law
        anchors = [p_y @ high, np.full(n_out, 1.0 / n_out)]
        costs = [float(p_y @ request.distortion.matrix @ a) for a in anchors]  # their E[d]
        d_high = request.distortion_of(high)
        for fraction in REPAIR_FRACTIONS:
            target = level_low + fraction * (level_high - level_low)
            best = None
            for anchor, cost in zip(anchors, costs, strict=True):
                theta = notion.repair_weight(
                    prior, channel, anchor, target, request.neighbors, **request.options
                )
                if theta is None:
                    return  # no exact weight for this notion: no repairs at all
                theta = min(1.0, float(theta) * (1 + 1e-12) + 1e-15)
                value = (1.0 - theta) * d_high + theta * cost
                if 0 < theta < 1 and (best is None or value < best[0]):
                    best = (value, theta, anchor)
            if best is not None:
                _, theta, anchor = best
                self._measure((1.0 - theta) * high + theta * anchor[None, :], "repair")

    def _measure(self, matrix: np.ndarray, source: str) -> None:
        """Re-measure a constructed mechanism and record it."""
        request = self.request
        self.add_witness(request.level_of(matrix), request.distortion_of(matrix), source)

    # --- envelopes -------------------------------------------------------------------------
    def upper(self, grid: np.ndarray) -> np.ndarray:
        """``U(ε) = min{δ : ℓ ≤ ε}`` at every grid level (``inf`` where no mechanism counts).

        Parameters
        ----------
        grid : numpy.ndarray
            Levels (nats), increasing.

        Returns
        -------
        numpy.ndarray
        """
        levels = [w.level for w in self.witnesses]
        distortions = [w.distortion for w in self.witnesses]
        return _least_within(levels, distortions, grid, LEVEL_TOL)  # level_tolerance

    def level_upper(self, budgets: np.ndarray) -> np.ndarray:
        """``U_ε(D) = min{ℓ : δ ≤ D}`` at every budget (``inf`` where none counts).

        Parameters
        ----------
        budgets : numpy.ndarray
            Increasing.

        Returns
        -------
        numpy.ndarray
        """
        levels = [w.level for w in self.witnesses]
        distortions = [w.distortion for w in self.witnesses]
        return _least_within(distortions, levels, budgets, DISTORTION_TOL)  # distortion_tolerance

    def _step_lower(self, grid: np.ndarray) -> np.ndarray:
        out = np.full(grid.shape, -np.inf)
        for strict in (False, True):
            steps = [s for s in self.steps if s.strict == strict]
            if not steps:
                continue
            levels = np.array([s.level for s in steps])
            values = np.array([s.value for s in steps])
            order = np.argsort(levels, kind="stable")
            levels, values = levels[order], values[order]
            best = np.maximum.accumulate(values[::-1])[::-1]  # best over levels ≥ here
            first = np.searchsorted(levels, grid, side="right" if strict else "left")
            ok = first < levels.size
            out[ok] = np.maximum(out[ok], best[first[ok]])
        return out

    def _dual_lower(self, grid: np.ndarray, window: np.ndarray | None) -> np.ndarray:
        """The dual points' bounds at the grid levels: at each level, combinations of the
        nearest ε points' multipliers below and above it (they are the ones that can be
        tight there), on every :data:`DUAL_STRIDE`-th grid level and the solved ones (the
        envelope is made non-increasing afterwards, so the levels skipped lose little); a
        budget point's line at every level."""
        out = np.full(grid.shape, -np.inf)
        if not self.duals:
            return out
        marks = np.zeros(grid.shape, dtype=bool)
        marks[::DUAL_STRIDE] = True
        if window is not None and window.size:
            marks |= np.isin(grid, window)
        lines = [d for d in self.duals if d.multipliers.budget is not None]
        points = sorted(
            (d for d in self.duals if d.multipliers.budget is None), key=lambda d: d.home
        )
        homes = np.array([d.home for d in points])
        marked = np.flatnonzero(marks)
        for line in lines:
            out[marked] = np.maximum(out[marked], self.evaluator.budget_bounds(line, grid[marked]))
        if not points:
            return out
        # group the marked levels by their nearest dual points below and above
        groups: dict[tuple, list[int]] = {}
        for i in marked:
            k = int(np.searchsorted(homes, grid[i], side="right"))
            near = tuple(j for j in (k - 1, k) if 0 <= j < len(points))
            groups.setdefault(near, []).append(int(i))
        for near, members in groups.items():
            duals = [points[j] for j in near]
            duals = [d for d in duals if d.scale == duals[0].scale]
            key = tuple(id(d) for d in duals)
            todo = [i for i in members if (key, float(grid[i])) not in self._dual_cache]
            if todo:
                values = self.evaluator.combined_bounds(duals, grid[todo])
                for i, v in zip(todo, values, strict=True):
                    self._dual_cache[(key, float(grid[i]))] = float(v)
            for i in members:
                out[i] = max(out[i], self._dual_cache[(key, float(grid[i]))])
        return out

    def _convex_lower(self, grid: np.ndarray, points: Sequence[dict] | None) -> np.ndarray:
        kind = CONVEX_PARAMETER.get(self.request.notion.name)
        if kind is None or not points or not self.request.is_plain:
            return np.full(grid.shape, -np.inf)
        x = np.array([p["level"] for p in points], dtype=float)
        lower = np.array([p["lower"] for p in points], dtype=float)
        upper = np.array([p["upper"] for p in points], dtype=float)
        order = np.argsort(x)
        x, lower, upper = x[order], lower[order], upper[order]
        t = np.exp(x) if kind == "exp" else x
        tg = np.exp(grid) if kind == "exp" else grid
        return _convex_secant_lower(t, lower, upper, tg)

    def pointwise_lower(
        self,
        grid: np.ndarray,
        window: np.ndarray | None = None,
        points: Sequence[dict] | None = None,
    ) -> np.ndarray:
        """Lower bounds on ``D*`` at each grid level (not yet made monotone).

        Parameters
        ----------
        grid : numpy.ndarray
            Levels (nats), increasing.
        window : numpy.ndarray, optional
            The solved levels, increasing: each dual point is evaluated between the solved
            levels either side of its own.
        points : sequence of dict, optional
            The solved ε points as ``{"level", "lower", "upper"}`` (for the convex secants).

        Returns
        -------
        numpy.ndarray
        """
        out = np.full(grid.shape, self.floor)
        out = np.maximum(out, self._step_lower(grid))
        out = np.maximum(out, self._dual_lower(grid, window))
        out = np.maximum(out, self._convex_lower(grid, points))
        return out

    def lower(
        self,
        grid: np.ndarray,
        window: np.ndarray | None = None,
        points: Sequence[dict] | None = None,
    ) -> np.ndarray:
        """The lower envelope ``L`` at each grid level: the pointwise bounds made
        non-increasing (``L(g) = max_{g' ≥ g}``).

        Parameters
        ----------
        grid, window, points
            As for :meth:`pointwise_lower`.

        Returns
        -------
        numpy.ndarray
        """
        raw = self.pointwise_lower(grid, window, points)
        return np.maximum.accumulate(raw[::-1])[::-1]

    def level_lower(self, budgets: np.ndarray, levels: np.ndarray, lower: np.ndarray) -> np.ndarray:
        """``L_ε(D)``: lower bounds on ``ε*(D)`` at every budget, from the steps and from a
        non-increasing lower envelope ``lower`` of ``D*`` on the levels ``levels``.

        Parameters
        ----------
        budgets : numpy.ndarray
            Increasing.
        levels : numpy.ndarray
            Increasing levels (nats).
        lower : numpy.ndarray
            ``L`` at ``levels`` (non-increasing).

        Returns
        -------
        numpy.ndarray
        """
        out = np.full(budgets.shape, float(self.request.least_level()))
        for s in self.steps:
            hit = budgets <= s.value if s.strict else budgets < s.value
            out[hit] = np.maximum(out[hit], s.level)
        if levels.size:
            # the last level with L > D: L is non-increasing, so it is a prefix
            count = np.searchsorted(-lower, -budgets, side="left")
            ok = count > 0
            out[ok] = np.maximum(out[ok], levels[count[ok] - 1])
        return out


# --- the band --------------------------------------------------------------------------------
def _grid(
    points: np.ndarray, extra: np.ndarray, lo: float, hi: float, steps: int = 0
) -> np.ndarray:
    """Solved points, ``steps`` (default :data:`SUBDIVISIONS`) steps in each interval between
    them, and the extra values (witness levels) inside ``[lo, hi]``."""
    steps = steps or SUBDIVISIONS
    pts = np.unique(np.concatenate([[lo, hi], points[(points >= lo) & (points <= hi)]]))
    parts = [pts]
    for a, b in zip(pts[:-1], pts[1:], strict=True):
        parts.append(np.linspace(a, b, steps + 1)[1:-1])
    inside = extra[(extra > lo) & (extra < hi) & np.isfinite(extra)]
    parts.append(inside)
    return np.unique(np.concatenate(parts))


@dataclass
class CurveBand:
    """A certified band around a curve: at grid values ``x`` (levels for an ε curve, budgets
    for a budget curve) the envelopes ``lower`` ≤ optimum ≤ ``upper``, and on every cell
    ``[x_j, x_{j+1}]`` the optimum lies within ``[lower_{j+1}, upper_j]``.

    Attributes
    ----------
    mode : {"epsilon", "max_distortion"}
        ``"epsilon"``: ``x`` are levels (nats), the bounds are on ``D*``; otherwise ``x`` are
        budgets and the bounds on the least level ``ε*`` (nats).
    x, lower, upper : numpy.ndarray
    solved : numpy.ndarray
        Whether each grid value is a solved point (a record of the curve).
    tolerance : float
        The width asked for (absolute).
    range : float
        The curve's range (``D*(lo) − D*(hi)``, or ``ε*(D_lo) − ε*(D_hi)``) estimated from
        the end points' answers.
    points : int
        Points solved.
    witnesses : int
        Mechanisms the upper envelope rests on.
    dual_points : int
        Dual points the lower envelope rests on.
    stopped : str
        Why refinement stopped: ``"tolerance"`` (met everywhere), ``"max_points"``,
        ``"time_limit"`` or ``"no_progress"``; ``""`` for a fixed grid.
    unit : {"nats", "bits"}
        The unit of the levels.
    """

    mode: str
    x: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    solved: np.ndarray
    tolerance: float = math.nan
    range: float = math.nan
    points: int = 0
    witnesses: int = 0
    dual_points: int = 0
    stopped: str = ""
    unit: str = "nats"

    @property
    def cell_widths(self) -> np.ndarray:
        """``upper_j − lower_{j+1}`` on every cell (``numpy.ndarray``, one shorter than
        :attr:`x`)."""
        return self.upper[:-1] - self.lower[1:]

    @property
    def width(self) -> float:
        """The widest cell (``float``): the band's certified width everywhere on the range."""
        widths = self.cell_widths
        return float(np.max(widths)) if widths.size else 0.0

    @property
    def relative_width(self) -> float:
        """:attr:`width` as a fraction of :attr:`range` (``float``; ``nan`` for a flat curve)."""
        return self.width / self.range if self.range > 0 else math.nan

    @property
    def met(self) -> bool:
        """Whether the band is within :attr:`tolerance` everywhere (``bool``)."""
        return bool(self.width <= self.tolerance)

    def wide(self) -> list[tuple[float, float, float]]:
        """Where the band is still wider than :attr:`tolerance`: ``(from, to, width)`` per
        stretch between two solved points.

        Returns
        -------
        list of (float, float, float)
        """
        out = []
        starts = np.flatnonzero(self.solved)
        widths = self.cell_widths
        for a, b in zip(starts[:-1], starts[1:], strict=True):
            w = float(np.max(widths[a:b])) if b > a else 0.0
            if w > self.tolerance:
                out.append((float(self.x[a]), float(self.x[b]), w))
        return out

    @property
    def names(self) -> tuple[str, str, str]:
        """The column names: ``(x, lower, upper)`` (``tuple`` of str)."""
        if self.mode == "epsilon":
            return "epsilon", "distortion_lower", "distortion_upper"
        return "max_distortion", "epsilon_lower", "epsilon_upper"

    def to_records(self) -> list[dict]:
        """The band as rows ``{x, lower, upper, solved}`` (see :attr:`names`).

        Returns
        -------
        list of dict
        """
        xname, lname, uname = self.names
        return [
            {
                xname: float(x),
                lname: json_number(lo),
                uname: json_number(up),
                "solved": bool(s),
            }
            for x, lo, up, s in zip(self.x, self.lower, self.upper, self.solved, strict=True)
        ]

    def to_dict(self) -> dict:
        """JSON form: the summary and the rows.

        Returns
        -------
        dict
            The band's figures (its mode, unit, widths, tolerance, points, whether it met the
            tolerance, the wide cells) and ``rows``, its :meth:`to_records`.
        """
        return {
            "mode": self.mode,
            "unit": self.unit,
            "width": json_number(self.width),
            "relative_width": json_number(self.relative_width),
            "tolerance": json_number(self.tolerance),
            "range": json_number(self.range),
            "met": self.met,
            "points": self.points,
            "witnesses": self.witnesses,
            "dual_points": self.dual_points,
            "stopped": self.stopped,
            "wide": [[json_number(v) for v in w] for w in self.wide()],
            "rows": self.to_records(),
        }

    def in_unit(self, unit: str) -> CurveBand:
        """The band with its levels in ``unit`` (nats in, ``"bits"`` or ``"nats"`` out).

        Parameters
        ----------
        unit : {"nats", "bits"}

        Returns
        -------
        CurveBand
        """
        if unit == self.unit:
            return self
        factor = 1.0 / math.log(2.0) if unit == "bits" else math.log(2.0)
        if self.mode == "epsilon":
            return dataclasses.replace(self, x=self.x * factor, unit=unit)
        return dataclasses.replace(
            self,
            lower=self.lower * factor,
            upper=self.upper * factor,
            tolerance=self.tolerance * factor,
            range=self.range * factor,
            unit=unit,
        )


def band_columns(mode: str) -> tuple[str, str]:
    """The record keys of the envelopes at a solved point.

    Parameters
    ----------
    mode : {"epsilon", "max_distortion"}

    Returns
    -------
    tuple of str
        ``("distortion_lower", "distortion_upper")`` or ``("epsilon_lower", "epsilon_upper")``.
    """
    if mode == "epsilon":
        return "distortion_lower", "distortion_upper"
    return "epsilon_lower", "epsilon_upper"


def epsilon_band(
    evidence: CurveEvidence,
    solved: np.ndarray,
    points: Sequence[dict],
    lo: float,
    hi: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The envelopes of an ε curve on ``[lo, hi]``.

    Parameters
    ----------
    evidence : CurveEvidence
    solved : numpy.ndarray
        The solved levels.
    points : sequence of dict
        The solved points as ``{"level", "lower", "upper"}``.
    lo, hi : float

    Returns
    -------
    (grid, lower, upper) : tuple of numpy.ndarray
    """
    extra = np.array([w.level for w in evidence.witnesses], dtype=float)
    grid = _grid(np.asarray(solved, dtype=float), extra, lo, hi)
    window = np.unique(np.asarray(solved, dtype=float))
    lower = evidence.lower(grid, window, points)
    upper = evidence.upper(grid)
    return grid, lower, upper


def budget_band(
    evidence: CurveEvidence,
    solved: np.ndarray,
    levels: np.ndarray,
    lo: float,
    hi: float,
    points: Sequence[dict] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The envelopes of a budget curve on ``[lo, hi]``.

    Parameters
    ----------
    evidence : CurveEvidence
    solved : numpy.ndarray
        The solved budgets.
    levels : numpy.ndarray
        Levels known to matter (the answers' and the bounds'), for the lower envelope of
        ``D*`` that the lower one of ``ε*`` is read from.
    lo, hi : float
    points : sequence of dict, optional
        The solved budget points as ``{"budget", "lower", "upper"}`` (bounds on ``ε*`` there),
        for the convex secants of the notions of :data:`CONVEX_PARAMETER` (the inverse of a
        convex decreasing function is convex and decreasing).

    Returns
    -------
    (grid, lower, upper) : tuple of numpy.ndarray
    """
    extra = np.array([w.distortion for w in evidence.witnesses], dtype=float)
    grid = _grid(np.asarray(solved, dtype=float), extra, lo, hi)
    levels = np.unique(np.asarray(levels, dtype=float)[np.isfinite(levels)])
    if levels.size:
        fine = _grid(levels, np.array([]), float(levels[0]), float(levels[-1]), LEVEL_SUBDIVISIONS)
        d_lower = evidence.lower(fine, levels, None)
    else:
        fine, d_lower = np.array([]), np.array([])
    lower = evidence.level_lower(grid, fine, d_lower)
    kind = CONVEX_PARAMETER.get(evidence.request.notion.name)
    if kind is not None and points and evidence.request.is_plain:
        x = np.array([q["budget"] for q in points], dtype=float)
        order = np.argsort(x)
        t_lo = np.array([q["lower"] for q in points], dtype=float)[order]
        t_up = np.array([q["upper"] for q in points], dtype=float)[order]
        if kind == "exp":
            t_lo, t_up = np.exp(t_lo), np.exp(t_up)
        secant = _convex_secant_lower(x[order], t_lo, t_up, grid)
        with np.errstate(divide="ignore", invalid="ignore"):
            secant = np.log(secant) if kind == "exp" else secant
        lower = np.maximum(lower, np.where(np.isfinite(secant), secant, -np.inf))
    upper = evidence.level_upper(grid)
    return grid, lower, upper
