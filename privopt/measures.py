"""Leakage measures of a fixed mechanism under a fixed prior (numpy only, no solver).

Every measure is in **nats** (pass ``unit="bits"`` for bits) and cites the paper and equation that
define it (see docs/bibliography.md). Arguments are ``(prior, mechanism)``:
``prior`` is a :class:`~privopt.model.Prior`, :class:`~privopt.model.JointPrior`,
:class:`~privopt.model.DatabasePrior` or a plain pmf; ``mechanism`` is a
:class:`~privopt.model.Mechanism` or a row-stochastic array ``W[y, u] = p(u|y)``.

For a joint prior every measure is taken on the channel the adversary sees,
``p(u|s) = Σ_y p(y|s) p(u|y)`` ([Calmon-Fawaz] eq. 16).

Supports: secrets with ``p(x) = 0`` are left out, and so are outputs no secret of the
support emits (``p(u|x) = 0`` for every such ``x``); an output emitted only by secrets of
tiny mass is kept even when ``p(u)`` underflows to 0 in floating point (its ratios are
taken in the log domain).
"""

from __future__ import annotations

__all__ = [
    "NATS_PER_BIT",
    "to_bits",
    "mutual_information",
    "information_leakage_per_output",
    "max_information_leakage",
    "pml_per_output",
    "pml_level",
    "epsilon_max",
    "pml_tail_level",
    "eml_level",
    "maximal_leakage",
    "maximal_alpha_leakage",
    "renyi_capacity",
    "ldp_level",
    "leakage_capacity",
    "dp_level",
    "identifiability_level",
    "ldi_level",
    "information_privacy_level",
    "expected_distortion",
    "posterior_expected_loss",
    "bayes_remap",
    "expected_inference_error",
    "conditional_pml",
    "persuasive_privacy_delta",
    "persuasive_privacy_level",
    "neighbor_pair_priors",
    "default_neighbors",
    "least_identifiability_level",
    "metric_dp_level",
    "adaptive_composition_levels",
    "robust_pml_level",
    "robust_pml_hull_level",
    "shannon_entropy",
]

import functools
import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from privopt._docstrings import completed_docstring
from privopt.errors import InputError
from privopt.model import Distortion, NeighborRelation, all_pairs, as_matrix, as_prior
from privopt.validation import (
    as_distortion,
    as_pmf,
    check_probability,
    default_neighbors,
    resolve_neighbors,
)

if TYPE_CHECKING:  # annotations only: nothing more is imported at run time
    from numpy.typing import ArrayLike

    from privopt.model import Mechanism, Metric, MetricPairs
    from privopt.model.types import NeighborsLike, PriorLike

#: ln 2: one bit is ln 2 nats.
NATS_PER_BIT = float(np.log(2.0))


def to_bits(nats: ArrayLike) -> float | np.ndarray:
    """Convert nats to bits (bits = nats / ln 2).

    Parameters
    ----------
    nats : float or array_like
        Value(s) in nats, of any shape (``inf`` and ``nan`` pass through).

    Returns
    -------
    float or numpy.ndarray
        The value(s) in bits: a float for a scalar input, otherwise an array of the input's
        shape.
    """
    return np.asarray(nats) / NATS_PER_BIT if np.ndim(nats) else float(nats) / NATS_PER_BIT


def shannon_entropy(probs: ArrayLike) -> float:
    """Shannon entropy ``H(p) = −Σ_x p(x) ln p(x)`` in nats of non-negative weights,
    normalised to sum 1 first (the value of ``scipy.stats.entropy(probs)``, without importing
    scipy.stats, which takes 0.3–0.5 s; zero weights add nothing).

    Parameters
    ----------
    probs : array_like
        Non-negative weights, one axis, with a positive sum.

    Returns
    -------
    float
        ``H(p) ≥ 0`` in nats.
    """
    from scipy.special import entr

    p = np.asarray(probs, dtype=float)
    return float(np.sum(entr(p / np.sum(p))))


#: The docstring section :func:`with_unit` adds to a measure's docstring.
UNIT_SECTION = """Other Parameters
----------------
unit : {"nats", "bits"}, default "nats"
    Keyword only: the unit of the result."""


def with_unit(func: Callable) -> Callable:
    """Add a keyword ``unit`` ("nats", default, or "bits") to a log-valued measure.

    Used as a decorator by the measures here and by the paper tools built on them; the
    measure's docstring gains the keyword's ``Other Parameters`` section (:data:`UNIT_SECTION`).

    Parameters
    ----------
    func : callable
        A measure returning a value in nats.

    Returns
    -------
    callable
        The same measure with a keyword ``unit``; any other unit raises
        :class:`~privopt.errors.InputError` (field ``unit``).
    """

    @functools.wraps(func)
    def wrapper(*args, unit: str = "nats", **kwargs):
        value = func(*args, **kwargs)
        if unit == "nats":
            return value
        if unit == "bits":
            return to_bits(value)
        raise InputError(f"unknown unit {unit!r}: use 'nats' or 'bits'", "unit")

    # the keyword is documented here once, in the measure's docstring as help() shows it
    wrapper.__doc__ = completed_docstring(func.__doc__, UNIT_SECTION, ("Other Parameters",))
    return wrapper


class MeasureSetting:
    """The quantities every measure needs, computed once: supports, channel, marginals.

    The output support is decided by the channel, never by a rounded marginal: ``u`` is an
    output when ``p(u|s) > 0`` for some secret ``s`` with ``p(s) > 0``. Its marginal
    ``p(u) = Σ_s p(s) p(u|s)`` may underflow to 0 (a secret of mass 1e-300 that alone emits
    ``u``); :attr:`log_pu` holds ``ln p(u)`` computed in the log domain for such outputs, and
    every ratio to ``p(u)`` is taken through it.

    Shared by the measures here and by the paper tools built on them (disclosure, gain,
    f-information, guarantees).

    Parameters
    ----------
    prior : Prior, JointPrior, DatabasePrior or array_like
        The prior; a plain pmf is read as a single secret.
    mechanism : Mechanism or array_like
        ``W[y, u] = p(u|y)``, one row per input of the prior.

    Raises
    ------
    InputError
        If the mechanism's rows do not match the prior's inputs (field ``mechanism``).
    """

    #: Marginals below this are recomputed in the log domain (far above the subnormals).
    LOG_DOMAIN_BELOW = 1e-200

    def __init__(self, prior, mechanism):
        self.prior = as_prior(prior)
        self.W = as_matrix(mechanism)
        if self.W.shape[0] != self.prior.n_inputs:
            raise InputError(
                f"the mechanism has {self.W.shape[0]} rows but the prior has "
                f"{self.prior.n_inputs} inputs: one row per input symbol",
                "mechanism",
            )
        self.p = self.prior.secret_probs
        self.s_mask = self.p > 0
        channel = self.prior.induced_channel(self.W)
        self.channel = channel[self.s_mask]  # p(u|s) on the secret support
        self.ps = self.p[self.s_mask]
        self.p_u = self.ps @ self.channel  # p(u) = Σ_s p(s) p(u|s)
        self.u_mask = (self.channel > 0).any(axis=0)
        self.ch = self.channel[:, self.u_mask]  # on both supports
        self.pu = self.p_u[self.u_mask]
        self.log_pu = _log(self.pu)
        tiny = self.pu < self.LOG_DOMAIN_BELOW
        if tiny.any():  # ln Σ_s exp(ln p(s) + ln p(u|s)), without underflow
            terms = _log(self.ps)[:, None] + _log(self.ch[:, tiny])
            top = terms.max(axis=0)
            self.log_pu[tiny] = top + np.log(np.exp(terms - top).sum(axis=0))

    def log_ratio_to_pu(self, values: np.ndarray) -> np.ndarray:
        """``ln(values / p(u))`` column by column on the output support (``-inf`` at 0)."""
        return _log(values) - self.log_pu


def _xlogy_ratio(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a ln(a/b)`` with ``0 ln 0 = 0`` (b > 0 wherever a > 0)."""
    out = np.zeros(np.broadcast(a, b).shape)
    a, b = np.broadcast_arrays(a, b)
    pos = a > 0
    out[pos] = a[pos] * np.log(a[pos] / b[pos])
    return out


# --- Calmon–Fawaz: average and maximum information leakage ----------------------------------
@with_unit
def mutual_information(prior: PriorLike, mechanism: Mechanism | ArrayLike) -> float:
    """Average information leakage ``I(S;U) = Σ p(s) p(u|s) ln(p(u|s)/p(u))``.

    [Calmon-Fawaz] Def. 3 and eq. (14); [Wang-Ying-Zhang] Def. 4.

    Parameters
    ----------
    prior : Prior, JointPrior, DatabasePrior or array_like
        The prior; a plain pmf (1-D, non-negative, summing to 1) is read as a single secret.
        For a joint prior ``p(s, y)`` the measure is taken on the channel ``p(u|s)``.
    mechanism : Mechanism or array_like
        Row-stochastic ``W[y, u] = p(u|y)``: one row per input symbol of ``prior`` (per
        observation ``y`` for a joint prior), one column per output ``u``.

    Returns
    -------
    float
        ``I(S;U)`` in nats, in ``[0, H(S)]``.

    Raises
    ------
    InputError
        If the prior or the mechanism is malformed, the mechanism does not have one row per
        input of the prior, or ``unit`` is neither ``"nats"`` nor ``"bits"``.
    """
    st = MeasureSetting(prior, mechanism)
    terms = np.zeros(st.ch.shape)
    pos = st.ch > 0
    terms[pos] = (st.ps[:, None] * st.ch)[pos] * st.log_ratio_to_pu(st.ch)[pos]
    return float(np.sum(terms))


@with_unit
def information_leakage_per_output(
    prior: PriorLike, mechanism: Mechanism | ArrayLike
) -> np.ndarray:
    """``H(S) − H(S|U=u)`` for every output ``u`` (nan where ``p(u) = 0``).

    [Calmon-Fawaz] Def. 4 and eq. (4). A single term can be negative.

    Parameters
    ----------
    prior : Prior, JointPrior, DatabasePrior or array_like
        The prior; a plain pmf (1-D, non-negative, summing to 1) is read as a single secret.
        For a joint prior ``p(s, y)`` the measure is taken on the channel ``p(u|s)``.
    mechanism : Mechanism or array_like
        Row-stochastic ``W[y, u] = p(u|y)``: one row per input symbol of ``prior`` (per
        observation ``y`` for a joint prior), one column per output ``u``.

    Returns
    -------
    numpy.ndarray
        Shape ``(|U|,)``, one entry per column of the mechanism, in nats: each in
        ``[H(S) − ln |supp p|, H(S)]``; ``nan`` for outputs that no secret of the support
        emits.

    Raises
    ------
    InputError
        If the prior or the mechanism is malformed, the mechanism does not have one row per
        input of the prior, or ``unit`` is neither ``"nats"`` nor ``"bits"``.
    """
    st = MeasureSetting(prior, mechanism)
    h_s = -float(np.sum(_xlogy_ratio(st.ps, np.ones_like(st.ps))))
    # p(s|u) = p(s) p(u|s) / p(u), in logs so that an underflowed p(u) is no 0/0
    posterior = np.exp(_log(st.ps)[:, None] + st.log_ratio_to_pu(st.ch))
    h_s_given_u = -np.sum(_xlogy_ratio(posterior, np.ones_like(posterior)), axis=0)
    out = np.full(st.p_u.size, np.nan)
    out[st.u_mask] = h_s - h_s_given_u
    return out


@with_unit
def max_information_leakage(prior: PriorLike, mechanism: Mechanism | ArrayLike) -> float:
    """Maximum information leakage ``max_{u: p(u)>0} H(S) − H(S|U=u)``.

    [Calmon-Fawaz] Def. 4 (restricted to ``p(u) > 0``: eq. (4) as printed also sums over outputs
    that never occur).

    Parameters
    ----------
    prior : Prior, JointPrior, DatabasePrior or array_like
        The prior; a plain pmf (1-D, non-negative, summing to 1) is read as a single secret.
        For a joint prior ``p(s, y)`` the measure is taken on the channel ``p(u|s)``.
    mechanism : Mechanism or array_like
        Row-stochastic ``W[y, u] = p(u|y)``: one row per input symbol of ``prior`` (per
        observation ``y`` for a joint prior), one column per output ``u``.

    Returns
    -------
    float
        The maximum in nats, in ``[0, H(S)]`` (at least the mutual information).

    Raises
    ------
    InputError
        If the prior or the mechanism is malformed, the mechanism does not have one row per
        input of the prior, or ``unit`` is neither ``"nats"`` nor ``"bits"``.
    """
    return float(np.nanmax(information_leakage_per_output(prior, mechanism)))


# --- Pointwise maximal leakage and relatives -------------------------------------------------
@with_unit
def pml_per_output(prior: PriorLike, mechanism: Mechanism | ArrayLike) -> np.ndarray:
    """PML ``ℓ(X→u) = ln max_{x∈supp p} p(u|x)/p(u)`` for every output.

    [Saeidian-PML] Def. 1 / Thm 1; [Saeidian-Rethinking] Def. 2.3. Outputs with ``p(u) = 0`` get 0,
    following [Saeidian-Rethinking] footnote 5 (``P_{X|U=u} := P_X``).

    Parameters
    ----------
    prior : Prior, JointPrior, DatabasePrior or array_like
        The prior; a plain pmf (1-D, non-negative, summing to 1) is read as a single secret.
        For a joint prior ``p(s, y)`` the measure is taken on the channel ``p(u|s)``.
    mechanism : Mechanism or array_like
        Row-stochastic ``W[y, u] = p(u|y)``: one row per input symbol of ``prior`` (per
        observation ``y`` for a joint prior), one column per output ``u``.

    Returns
    -------
    numpy.ndarray
        Shape ``(|U|,)``, one entry per column of the mechanism, in nats, each in
        ``[0, ε_max]`` (:func:`epsilon_max`).

    Raises
    ------
    InputError
        If the prior or the mechanism is malformed, the mechanism does not have one row per
        input of the prior, or ``unit`` is neither ``"nats"`` nor ``"bits"``.
    """
    st = MeasureSetting(prior, mechanism)
    out = np.zeros(st.p_u.size)
    out[st.u_mask] = st.log_ratio_to_pu(st.ch.max(axis=0))
    return np.maximum(out, 0.0)  # ℓ ≥ 0 ([Saeidian-PML] Lemma 1); clears −1e-17 rounding


@with_unit
def pml_level(prior: PriorLike, mechanism: Mechanism | ArrayLike) -> float:
    """The ε-PML level ``max_u ℓ(X→u)`` (= max-information ``I_∞(X;U)``).

    [Saeidian-PML] Def. 4 and Thm 1.

    Parameters
    ----------
    prior : Prior, JointPrior, DatabasePrior or array_like
        The prior; a plain pmf (1-D, non-negative, summing to 1) is read as a single secret.
        For a joint prior ``p(s, y)`` the measure is taken on the channel ``p(u|s)``.
    mechanism : Mechanism or array_like
        Row-stochastic ``W[y, u] = p(u|y)``: one row per input symbol of ``prior`` (per
        observation ``y`` for a joint prior), one column per output ``u``.

    Returns
    -------
    float
        The level in nats, in ``[0, ε_max]`` (:func:`epsilon_max`).

    Raises
    ------
    InputError
        If the prior or the mechanism is malformed, the mechanism does not have one row per
        input of the prior, or ``unit`` is neither ``"nats"`` nor ``"bits"``.
    """
    return float(np.max(pml_per_output(prior, mechanism)))


@with_unit
def epsilon_max(prior: PriorLike) -> float:
    """``ε_max = −ln min_{x∈supp p} p(x)``, the largest possible PML ([Saeidian-PML] Lemma 1 /
    Lemma 2).

    Parameters
    ----------
    prior : Prior, JointPrior, DatabasePrior or array_like
        The prior; a plain pmf (1-D, non-negative, summing to 1) is read as a single secret.
        For a joint prior ``p(s, y)`` it is taken on ``p(s)``.

    Returns
    -------
    float
        ``ε_max`` in nats, ``≥ 0`` (0 for a point mass).

    Raises
    ------
    InputError
        If the prior is malformed or ``unit`` is neither ``"nats"`` nor ``"bits"``.
    """
    p = as_prior(prior).secret_probs
    return float(-np.log(p[p > 0].min()))


def tail_threshold(values: np.ndarray, masses: np.ndarray, delta: float) -> float:
    """Smallest ``t`` with ``Σ_{values > t} masses ≤ δ`` (t taken among the values).

    The level of a tail guarantee ((ε, δ)-PML and its relatives): the mass of the outputs
    whose leakage exceeds ``t`` is at most ``δ``.

    Parameters
    ----------
    values : numpy.ndarray
        One value (a leakage) per output.
    masses : numpy.ndarray
        The outputs' probabilities, same shape.
    delta : float
        The mass that may exceed the threshold, in ``[0, 1]`` (already checked).

    Returns
    -------
    float
        The threshold; ``-inf`` when the whole mass is at most ``δ``.
    """
    order = np.argsort(-values, kind="stable")
    v, w = values[order], masses[order]
    # candidate t = v[k]: mass strictly above it is the mass of entries with value > v[k]
    cum = np.concatenate([[0.0], np.cumsum(w)])
    # relative slack for rounding in the cumulative sums; an absolute one would let outputs of
    # mass below it exceed the level even at δ = 0 (which must give the plain maximum)
    tol = 1e-12 * delta
    if cum[-1] <= delta + tol:  # every value may be exceeded
        return float("-inf")
    best = float(v[0])  # nothing lies above the largest value
    for k in range(1, v.size):
        first = np.searchsorted(-v, -v[k], side="left")  # first index with value == v[k]
        if cum[first] > delta + tol:
            break
        best = float(v[k])
    return best


@with_unit
def pml_tail_level(prior: PriorLike, mechanism: Mechanism | ArrayLike, delta: float) -> float:
    """The (ε,δ)-PML level: the least ε with ``P_{U}[ℓ(X→U) ≤ ε] ≥ 1 − δ``.

    [Saeidian-PML] Def. 5. Evaluated by sorting the outputs by leakage.

    Parameters
    ----------
    prior : Prior, JointPrior, DatabasePrior or array_like
        The prior; a plain pmf (1-D, non-negative, summing to 1) is read as a single secret.
        For a joint prior ``p(s, y)`` the measure is taken on the channel ``p(u|s)``.
    mechanism : Mechanism or array_like
        Row-stochastic ``W[y, u] = p(u|y)``: one row per input symbol of ``prior`` (per
        observation ``y`` for a joint prior), one column per output ``u``.
    delta : float
        The tail probability δ, in ``[0, 1]`` (δ = 1 gives 0).

    Returns
    -------
    float
        The level in nats, in ``[0, pml_level]``.

    Raises
    ------
    InputError
        If the prior or the mechanism is malformed, the mechanism does not have one row per
        input of the prior, δ is outside ``[0, 1]``, or ``unit`` is neither ``"nats"`` nor
        ``"bits"``.
    """
    delta = check_probability(delta)
    st = MeasureSetting(prior, mechanism)
    leak = st.log_ratio_to_pu(st.ch.max(axis=0))
    # every output of the support has positive probability, also where p(u) underflowed to 0
    # (a secret of mass 1e-200 alone emitting u with probability 1e-200): its mass is taken
    # as the least positive double, so that δ = 0 still gives the PML level
    masses = np.maximum(st.pu, np.finfo(float).smallest_subnormal)
    return max(tail_threshold(leak, masses, delta), 0.0)


@with_unit
def eml_level(prior: PriorLike, mechanism: Mechanism | ArrayLike, delta: float) -> float:
    """The (ε,δ)-EML level ``ln max_x h_x(δ)`` ([Saeidian-PML] Thm 3, Remark 9, eq. (19)).

    ``h_x(δ)`` is a fractional knapsack: outputs in decreasing order of
    ``p(u|x)/p(u)`` until their mass is exactly δ, the last one fractionally. δ = 0 is the
    PML level (the limit of (19)); δ = 1 gives 0.

    Parameters
    ----------
    prior : Prior, JointPrior, DatabasePrior or array_like
        The prior; a plain pmf (1-D, non-negative, summing to 1) is read as a single secret.
        For a joint prior ``p(s, y)`` the measure is taken on the channel ``p(u|s)``.
    mechanism : Mechanism or array_like
        Row-stochastic ``W[y, u] = p(u|y)``: one row per input symbol of ``prior`` (per
        observation ``y`` for a joint prior), one column per output ``u``.
    delta : float
        The tail probability δ, in ``[0, 1]``.

    Returns
    -------
    float
        The level in nats, in ``[0, pml_level]``.

    Raises
    ------
    InputError
        If the prior or the mechanism is malformed, the mechanism does not have one row per
        input of the prior, δ is outside ``[0, 1]``, or ``unit`` is neither ``"nats"`` nor
        ``"bits"``.
    """
    delta = check_probability(delta)
    st = MeasureSetting(prior, mechanism)
    if delta == 0.0:
        return float(max(st.log_ratio_to_pu(st.ch.max(axis=0)).max(), 0.0))
    best = 0.0
    for row in st.ch:
        with np.errstate(over="ignore"):  # a ratio beyond 1e308 is a level beyond 709
            ratio = np.exp(st.log_ratio_to_pu(row))
        order = np.argsort(-ratio, kind="stable")
        mass = np.cumsum(st.pu[order])
        # first output whose cumulative mass reaches δ (relative slack: an absolute one would
        # skip past outputs lighter than itself when δ is tiny)
        k = int(np.searchsorted(mass, delta * (1 - 1e-12), side="left"))
        k = min(k, row.size - 1)
        before = mass[k - 1] if k > 0 else 0.0
        taken_before = row[order[:k]].sum() if k > 0 else 0.0
        # h_x = (taken_before + (δ − before)·ratio_k) / δ, arranged so that a tiny δ neither
        # underflows nor amplifies rounding: the second term is ≥ 0 as earlier ratios are larger
        ratio_k = ratio[order[k]]
        best = max(best, ratio_k + max(taken_before - before * ratio_k, 0.0) / delta)
    return float(max(np.log(best), 0.0))


@with_unit
def maximal_leakage(prior: PriorLike, mechanism: Mechanism | ArrayLike) -> float:
    """Maximal leakage ``L = ln Σ_u max_{x∈supp p} p(u|x)`` ([Saeidian-PML] eq. (1), Def. 6).

    Depends on the prior only through its support.

    Parameters
    ----------
    prior : Prior, JointPrior, DatabasePrior or array_like
        The prior; a plain pmf (1-D, non-negative, summing to 1) is read as a single secret.
        For a joint prior ``p(s, y)`` the measure is taken on the channel ``p(u|s)``.
    mechanism : Mechanism or array_like
        Row-stochastic ``W[y, u] = p(u|y)``: one row per input symbol of ``prior`` (per
        observation ``y`` for a joint prior), one column per output ``u``.

    Returns
    -------
    float
        ``L`` in nats, in ``[0, ln min(|supp p|, |U|)]``.

    Raises
    ------
    InputError
        If the prior or the mechanism is malformed, the mechanism does not have one row per
        input of the prior, or ``unit`` is neither ``"nats"`` nor ``"bits"``.
    """
    st = MeasureSetting(prior, mechanism)
    return float(np.log(st.channel.max(axis=0).sum()))


def check_alpha(alpha: object, field: str = "alpha") -> float:
    """The order ``α`` of maximal α-leakage, checked: a number ``> 1`` or ``inf``.

    Parameters
    ----------
    alpha : object
        A number (``float("inf")``, ``"inf"`` and ``"infinity"`` are ``α = ∞``).
    field : str
        The field named in the error (default ``"alpha"``).

    Returns
    -------
    float
        ``α`` in ``(1, inf]``.

    Raises
    ------
    InputError
        For anything else (``α = 1`` is mutual information under the actual prior, not the
        limit of ``L_α``: use the notion ``mutual_information``; field ``field``).
    """
    if isinstance(alpha, str) and alpha.strip().lower() in ("inf", "infinity", "+inf", "∞"):
        return math.inf
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.integer, np.floating)):
        raise InputError(f"α must be a number > 1 or inf, got {alpha!r}", field)
    value = float(alpha)
    if math.isnan(value) or value <= 1.0:
        hint = (
            " (α = 1 is the mutual information I(X;Y) under the actual prior, Liao et al. "
            "(2019) Thm 2: use the notion mutual_information)"
            if value == 1.0
            else ""
        )
        raise InputError(f"α must be > 1 (or inf), got {alpha!r}{hint}", field)
    return value


def renyi_capacity(
    channel: ArrayLike, alpha: float, tol: float = 1e-11, max_iter: int = 5000
) -> tuple[float, float, np.ndarray, np.ndarray]:
    """The Rényi (Sibson) capacity of order ``α > 1`` of a channel, with a certified interval.

    ``K_α = max_P I_α^S(P, C) = min_Q max_x D_α(C_x ‖ Q)`` ([Liao-Alpha] Thm 2 and the
    minimax identity of Sibson's information it rests on), with Sibson's closed form
    ``I_α^S(P, C) = α/(α−1) ln Σ_u (Σ_x P(x) C[x,u]^α)^{1/α}`` and
    ``D_α(P‖Q) = 1/(α−1) ln Σ_u P(u)^α Q(u)^{1−α}``.

    ``F(P) = Σ_u (Σ_x P(x) C[x,u]^α)^{1/α}`` is concave in ``P``. It is maximised by the
    multiplicative fixed point ``P ← P·r^η`` (normalised), ``r_x = α ∂F/∂P_x / F`` (an
    Arimoto-type step; ``Σ_x P(x) r_x = 1``; the exponent ``η ≥ 1`` grows while ``F`` does
    and is halved when it would not), then polished by damped Newton steps on the face of the
    simplex where ``P`` lives (accepted only when they halve the interval, with
    Levenberg–Marquardt damping; after repeated refusals the fixed point runs alone for a
    while). Every iterate gives both bounds: ``I_α^S(P)`` from below and
    ``max_x D_α(C_x ‖ Q_P)`` from above, ``Q_P(u) ∝ (Σ_x P(x) C[x,u]^α)^{1/α}`` (Sibson's
    optimal output law); the two differ by ``ln(max_x r_x)/(α−1)``. The best of each over
    the iterates is returned. On the equalising channels the designs end at (every secret at
    the same divergence) the interval may stop near 1e-8 nats.

    Parameters
    ----------
    channel : array_like
        ``C[x, u] = p(u|x)``, rows summing to 1 (one row per input of the support).
    alpha : float
        The order, ``> 1`` and finite.
    tol : float
        Stop when the interval is at most ``tol · max(1, lower)`` (default 1e-11).
    max_iter : int
        Most steps (default 5000); the best interval found is then returned.

    Returns
    -------
    tuple of (float, float, numpy.ndarray, numpy.ndarray)
        ``(lower, upper, P, Q)``: ``lower ≤ K_α ≤ upper`` in nats, the input law ``P`` of the
        last iterate and the output law ``Q`` (length ``|U|``, zero on outputs no input
        emits) whose ``max_x D_α(C_x‖Q)`` is ``upper``.
    """
    C = np.asarray(channel, dtype=float)
    n_out = C.shape[1]
    top = C.max(axis=0) if C.size else np.zeros(n_out)
    used = top > 0
    C, top = C[:, used], top[used]
    if C.shape[0] <= 1 or C.shape[1] <= 1:
        q = np.zeros(n_out)
        q[used] = C[0] if C.shape[0] else 1.0 / max(int(used.sum()), 1)
        return 0.0, 0.0, np.ones(C.shape[0]), q
    scaled = (C / top) ** alpha  # ≤ 1, and 1 in each column: C^α without underflow
    power = 1.0 / alpha
    n = C.shape[0]

    def evaluate(p: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        mix = p @ scaled
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            slope = top * np.where(mix > 0, mix ** (power - 1.0), np.inf)
            value = float(top @ mix**power)
            ratio = (scaled @ np.where(np.isfinite(slope), slope, 0.0)) / value
        if not np.all(mix > 0):  # an emitted output left without mass: F can still grow
            ratio = np.where((scaled[:, mix <= 0] > 0).any(axis=1), np.inf, ratio)
        return value, ratio, mix

    def interval(value: float, ratio: np.ndarray) -> tuple[float, float]:
        lower = alpha / (alpha - 1.0) * math.log(value)
        return lower, lower + math.log(max(float(ratio.max()), 1.0)) / (alpha - 1.0)

    p = np.full(n, 1.0 / n)
    value, ratio, mix = evaluate(p)
    eta = max(1.0, 1.0 / (alpha - 1.0))
    damping, refusals, resume = 1e-10, 0, _NEWTON_AFTER
    lower, upper = interval(value, ratio)
    best_lower, best_upper, best_mix = lower, upper, mix
    for step in range(max_iter):
        if lower > best_lower:
            best_lower = lower
        if upper < best_upper:
            best_upper, best_mix = upper, mix
        if best_upper - best_lower <= tol * max(1.0, best_lower):
            break
        if step >= resume and np.isfinite(ratio).all():
            trial = _newton_trial(scaled, top, power, p, value, ratio, mix, damping)
            if trial is not None:
                new_value, new_ratio, new_mix = evaluate(trial)
                if np.isfinite(new_ratio).all() and new_value >= value * (1.0 - 1e-15):
                    new_lower, new_upper = interval(new_value, new_ratio)
                    if new_upper - new_lower <= 0.5 * (upper - lower):
                        p, value, ratio, mix = trial, new_value, new_ratio, new_mix
                        lower, upper = new_lower, new_upper
                        damping, refusals = max(damping / 10.0, 1e-14), 0
                        continue
            damping, refusals = damping * 100.0, refusals + 1
            if refusals >= 8:  # let the fixed point run alone for a while
                resume, refusals, damping = step + 100, 0, 1e-10
        with np.errstate(over="ignore", invalid="ignore"):
            log_ratio = np.log(np.clip(ratio, 1e-300, 1e300))
        while True:
            candidate = p * np.exp(eta * (log_ratio - log_ratio.max()))
            candidate /= candidate.sum()
            new_value, new_ratio, new_mix = evaluate(candidate)
            if new_value >= value or eta <= 1.0:
                break
            eta = max(1.0, eta / 2.0)
        if new_value >= value:
            eta *= 1.5
        p, value, ratio, mix = candidate, new_value, new_ratio, new_mix
        lower, upper = interval(value, ratio)
    best_lower, best_upper = max(best_lower, lower), min(best_upper, upper)
    if upper <= best_upper:
        best_mix = mix
    q = np.zeros(n_out)
    centre = top * best_mix**power
    q[used] = centre / centre.sum()
    return float(max(best_lower, 0.0)), float(max(best_upper, 0.0)), p, q


#: Fixed-point steps of :func:`renyi_capacity` before its first Newton step.
_NEWTON_AFTER = 200


def _newton_trial(
    scaled: np.ndarray,
    top: np.ndarray,
    power: float,
    p: np.ndarray,
    value: float,
    ratio: np.ndarray,
    mix: np.ndarray,
    damping: float,
) -> np.ndarray | None:
    """One damped Newton step of ``max F(P)`` on the face of the simplex where ``P`` lives
    (inputs of negligible mass whose gradient is below the multiplier are held at 0),
    projected back onto the simplex; ``None`` when the system cannot be solved."""
    grad = power * value * ratio  # ∂F/∂P_x = (1/α) Σ_u C̃[x,u] top_u mix_u^{1/α−1}
    multiplier = power * value  # Σ_x P(x) ∂F/∂P_x (F is homogeneous of degree 1/α)
    free = (p > 1e-9 * p.max()) | (grad > multiplier)
    idx = np.flatnonzero(free)
    with np.errstate(divide="ignore", over="ignore"):
        weight = top * mix ** (power - 2.0)
    if not np.isfinite(weight).all():
        return None
    hess = power * (power - 1.0) * (scaled[idx] * weight) @ scaled[idx].T
    hess -= damping * float(np.abs(np.diag(hess)).max()) * np.eye(idx.size)
    k = idx.size
    system = np.zeros((k + 1, k + 1))
    system[:k, :k] = hess
    system[:k, k] = system[k, :k] = 1.0
    rhs = np.concatenate([-grad[idx], [0.0]])
    try:
        solution = np.linalg.solve(system, rhs)
    except np.linalg.LinAlgError:
        return None
    if not np.isfinite(solution).all():
        return None
    trial = np.where(free, p, 0.0)
    trial[idx] += solution[:k]
    trial = np.clip(trial, 0.0, None)
    total = trial.sum()
    return trial / total if total > 0 else None


@with_unit
def maximal_alpha_leakage(
    prior: PriorLike, mechanism: Mechanism | ArrayLike, alpha: float = 2.0
) -> float:
    """Maximal α-leakage ``L_α(X→U)`` of order ``α ∈ (1, ∞]`` ([Liao-Alpha] Thm 2).

    ``L_α = sup_{P̃} I_α^A(X̃;U) = sup_{P̃} I_α^S(X̃;U) = min_Q max_{x∈supp} D_α(p(·|x) ‖ Q)``,
    the supremum over input laws ``P̃`` on the prior's support ([Liao-Alpha] Thm 2): the
    Rényi capacity of order ``α`` of the channel restricted to the support
    (:func:`renyi_capacity`; the upper end of its certified interval is returned, so a
    mechanism is never reported below its level). At ``α = ∞`` it is the maximal leakage
    ``ln Σ_u max_x p(u|x)`` (:func:`maximal_leakage`). Like maximal leakage it depends on the
    prior only through its support; it is non-decreasing in ``α`` and at most the maximal
    leakage, and 0 exactly when ``U`` is independent of the secret (each follows from the
    min-max form, as ``D_α`` is non-decreasing in ``α`` and 0 only between equal laws;
    [Liao-Alpha] list them among the properties of the measure).
    At ``α = 1`` [Liao-Alpha] define it as ``I(X;U)`` under the actual prior (not the limit
    ``α → 1``): that is :func:`mutual_information`, and ``α = 1`` is refused here.

    Parameters
    ----------
    prior : Prior, JointPrior, DatabasePrior or array_like
        The prior; a plain pmf (1-D, non-negative, summing to 1) is read as a single secret.
        For a joint prior ``p(s, y)`` the measure is taken on the channel ``p(u|s)``.
    mechanism : Mechanism or array_like
        Row-stochastic ``W[y, u] = p(u|y)``: one row per input symbol of ``prior`` (per
        observation ``y`` for a joint prior), one column per output ``u``.
    alpha : float
        The order ``α > 1``; ``inf`` (or ``"inf"``) for maximal leakage (default 2).

    Returns
    -------
    float
        ``L_α`` in nats, in ``[0, ln min(|supp p|, |U|)]``.

    Raises
    ------
    InputError
        If the prior or the mechanism is malformed, the mechanism does not have one row per
        input of the prior, ``alpha`` is not a number ``> 1`` or ``inf`` (field ``alpha``),
        or ``unit`` is neither ``"nats"`` nor ``"bits"``.

    Examples
    --------
    >>> import numpy as np
    >>> import privopt as po
    >>> W = np.array([[0.8, 0.2], [0.2, 0.8]])
    >>> round(po.measures.maximal_alpha_leakage([0.5, 0.5], W, alpha=np.inf), 6)
    0.470004
    >>> bool(po.measures.maximal_alpha_leakage([0.5, 0.5], W, alpha=2) < 0.470004)
    True
    """
    order = check_alpha(alpha)
    st = MeasureSetting(prior, mechanism)
    if math.isinf(order):
        return float(np.log(st.ch.max(axis=0).sum()))
    return renyi_capacity(st.ch, order)[1]


def _column_ratio_level(ch: np.ndarray) -> float:
    """``ln max_u max_{x,x'} ch[x,u]/ch[x',u]`` over columns that are not all zero."""
    if ch.shape[1] == 0:
        return 0.0
    col_max, col_min = ch.max(axis=0), ch.min(axis=0)
    used = col_max > 0
    if (col_min[used] == 0).any():
        return float("inf")
    with np.errstate(over="ignore"):  # subnormal minima: the ratio overflows to inf, rightly
        return float(max(np.log(col_max[used] / col_min[used]).max(), 0.0))


@with_unit
def ldp_level(prior: PriorLike, mechanism: Mechanism | ArrayLike) -> float:
    """Local DP level ``ln max_{u, x, x'} p(u|x)/p(u|x')`` over ``x, x' ∈ supp p``, ``p(u) > 0``.

    [Saeidian-PML] Def. 14. Equals :func:`leakage_capacity` for a full-support prior.

    Parameters
    ----------
    prior : Prior, JointPrior, DatabasePrior or array_like
        The prior; a plain pmf (1-D, non-negative, summing to 1) is read as a single secret.
        For a joint prior ``p(s, y)`` the measure is taken on the channel ``p(u|s)``.
    mechanism : Mechanism or array_like
        Row-stochastic ``W[y, u] = p(u|y)``: one row per input symbol of ``prior`` (per
        observation ``y`` for a joint prior), one column per output ``u``.

    Returns
    -------
    float
        The level in nats, ``≥ 0``: ``inf`` when an output is emitted by one secret of the
        support and not by another, 0 when the support holds a single secret.

    Raises
    ------
    InputError
        If the prior or the mechanism is malformed, the mechanism does not have one row per
        input of the prior, or ``unit`` is neither ``"nats"`` nor ``"bits"``.
    """
    st = MeasureSetting(prior, mechanism)
    return _column_ratio_level(st.ch)


@with_unit
def leakage_capacity(mechanism: Mechanism | ArrayLike) -> float:
    """Leakage capacity ``C(W) = ln sup_u max_{x,x'} W[x,u]/W[x',u]`` (prior-free).

    [Saeidian-Rethinking] Def. 2.7, Thm 2.8 (also free-lunch privacy, [Saeidian-Rethinking] Def.
    4.4).

    Parameters
    ----------
    mechanism : Mechanism or array_like
        Row-stochastic ``W[x, u] = p(u|x)``; every row counts, and all-zero columns are
        left out.

    Returns
    -------
    float
        ``C(W)`` in nats, ``≥ 0``: ``inf`` when a column holds both a zero and a positive
        entry, 0 for a single row.

    Raises
    ------
    InputError
        If the mechanism is not a row-stochastic matrix or ``unit`` is neither ``"nats"``
        nor ``"bits"``.
    """
    return _column_ratio_level(as_matrix(mechanism))


def _pair_level(
    log_num: np.ndarray, log_den: np.ndarray, neighbors: NeighborRelation, keep: np.ndarray
) -> float:
    """``max over pairs (a,b) ⊂ keep and columns of log_num[a,u] − log_den[b,u]`` (chunked).

    Logs in, so that products such as ``p(x)W[x,u]`` never underflow; a pair with both
    entries 0 (``ln 0 − ln 0``) constrains nothing.
    """
    if neighbors.kind == "all" and neighbors.n_pairs == neighbors.size * (neighbors.size - 1):
        return _all_pairs_level(log_num, log_den, np.asarray(keep))
    rel = neighbors.restricted(keep)
    if rel.n_pairs == 0 or log_num.shape[1] == 0:
        return 0.0
    chunk = max(1, 2**22 // log_num.shape[1])
    best = 0.0
    for start in range(0, rel.n_pairs, chunk):
        a = rel.left[start : start + chunk]
        b = rel.right[start : start + chunk]
        level = _difference(log_num[a], log_den[b]).max()
        if level == np.inf:
            return float("inf")
        best = max(best, float(level))
    return best


def _all_pairs_level(log_num: np.ndarray, log_den: np.ndarray, keep: np.ndarray) -> float:
    """:func:`_pair_level` on every ordered pair of distinct rows of ``keep``, in O(rows·cols).

    Per column, ``max_{a≠b} log_num[a] − log_den[b]`` is the largest minus the smallest log
    unless one row holds both, when the runner-up on either side is used.
    """
    top, bottom = log_num[keep], log_den[keep]
    if top.shape[0] < 2 or top.shape[1] == 0:
        return 0.0
    cols = np.arange(top.shape[1])
    a = np.argmax(top, axis=0)
    b = np.argmin(bottom, axis=0)
    top_1, bottom_1 = top[a, cols], bottom[b, cols]
    top_2 = np.partition(top, -2, axis=0)[-2]  # runner-ups (ties give the same value)
    bottom_2 = np.partition(bottom, 1, axis=0)[1]
    best = np.where(
        a != b,
        _difference(top_1, bottom_1),
        np.maximum(_difference(top_1, bottom_2), _difference(top_2, bottom_1)),
    )
    return max(0.0, float(best.max()))


def _log(x: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.log(x)


def _difference(hi: np.ndarray, lo: np.ndarray) -> np.ndarray:
    """``hi − lo`` of logs with ``ln 0 − ln 0 = −inf`` (0/0 pairs leave no constraint)."""
    with np.errstate(invalid="ignore"):
        out = hi - lo
    out[np.isneginf(hi)] = -np.inf
    return out


def _neighbors_for(st: MeasureSetting, neighbors) -> NeighborRelation:
    return resolve_neighbors(st.prior, neighbors)


def _full_rows(st: MeasureSetting) -> np.ndarray:
    """The channel on all secrets (rows outside the support zeroed) and outputs in supp p_U."""
    full = np.zeros((st.p.size, st.ch.shape[1]))
    full[st.s_mask] = st.ch
    return full


@with_unit
def dp_level(
    prior: PriorLike, mechanism: Mechanism | ArrayLike, neighbors: NeighborsLike = None
) -> float:
    """DP level ``ln max_{x~x', u} p(u|x)/p(u|x')`` ([Wang-Ying-Zhang] Def. 3; [Calmon-Fawaz] Def.
    5).

    ``neighbors`` defaults to Hamming neighbours on a database prior and all pairs otherwise.
    Secrets outside ``supp p`` and outputs with ``p(u) = 0`` are left out (see the
    support conventions in the module docstring).

    Parameters
    ----------
    prior : Prior, JointPrior, DatabasePrior or array_like
        The prior; a plain pmf (1-D, non-negative, summing to 1) is read as a single secret.
        For a joint prior ``p(s, y)`` the measure is taken on the channel ``p(u|s)``.
    mechanism : Mechanism or array_like
        Row-stochastic ``W[y, u] = p(u|y)``: one row per input symbol of ``prior`` (per
        observation ``y`` for a joint prior), one column per output ``u``.
    neighbors : NeighborRelation, {"hamming", "all"}, list of pairs or None, optional
        The neighbour relation on the secrets. ``None`` (default) is Hamming neighbours on
        a database prior and all ordered pairs of distinct secrets otherwise; a list of
        pairs ``[(a, b), …]`` holds indices or labels of secrets.

    Returns
    -------
    float
        The level in nats, ``≥ 0``: ``inf`` when an output is emitted by one secret of a
        neighbouring pair in the support and not by the other, 0 when no such pair exists.

    Raises
    ------
    InputError
        If the prior or the mechanism is malformed, the mechanism does not have one row per
        input of the prior, ``neighbors`` is unknown or does not fit the prior
        (``"hamming"`` needs a database prior), or ``unit`` is neither ``"nats"`` nor
        ``"bits"``.
    """
    st = MeasureSetting(prior, mechanism)
    rel = _neighbors_for(st, neighbors)
    log_full = _log(_full_rows(st))
    return _pair_level(log_full, log_full, rel, np.flatnonzero(st.s_mask))


@with_unit
def identifiability_level(
    prior: PriorLike, mechanism: Mechanism | ArrayLike, neighbors: NeighborsLike = None
) -> float:
    """Identifiability level ``ln max_{x~x', u} p(x|u)/p(x'|u)`` ([Wang-Ying-Zhang] Def. 2).

    Equivalently ``p(x) p(u|x) ≤ e^ε p(x') p(u|x')``.

    Parameters
    ----------
    prior : Prior, JointPrior, DatabasePrior or array_like
        The prior; a plain pmf (1-D, non-negative, summing to 1) is read as a single secret.
        For a joint prior ``p(s, y)`` the measure is taken on the channel ``p(u|s)``.
    mechanism : Mechanism or array_like
        Row-stochastic ``W[y, u] = p(u|y)``: one row per input symbol of ``prior`` (per
        observation ``y`` for a joint prior), one column per output ``u``.
    neighbors : NeighborRelation, {"hamming", "all"}, list of pairs or None, optional
        The neighbour relation on the secrets. ``None`` (default) is Hamming neighbours on
        a database prior and all ordered pairs of distinct secrets otherwise; a list of
        pairs ``[(a, b), …]`` holds indices or labels of secrets.

    Returns
    -------
    float
        The level in nats, at least :func:`least_identifiability_level` for the same
        ``neighbors``: ``inf`` when an output is emitted by one secret of a neighbouring
        pair in the support and not by the other, 0 when no such pair exists.

    Raises
    ------
    InputError
        If the prior or the mechanism is malformed, the mechanism does not have one row per
        input of the prior, ``neighbors`` is unknown or does not fit the prior
        (``"hamming"`` needs a database prior), or ``unit`` is neither ``"nats"`` nor
        ``"bits"``.
    """
    st = MeasureSetting(prior, mechanism)
    rel = _neighbors_for(st, neighbors)
    log_joint = _log(_full_rows(st)) + _log(st.p)[:, None]  # ln p(x)W[x,u], no underflow
    return _pair_level(log_joint, log_joint, rel, np.flatnonzero(st.s_mask))


def least_identifiability_level(prior: PriorLike, neighbors: NeighborsLike = None) -> float:
    """The least identifiability level of any mechanism, ``ε_X = max_{x~x'} ln p(x)/p(x')``
    over neighbours in the support (Wang, Ying & Zhang 2016, eq. (18) and Lemma 3; with all
    pairs, the least LDI level).

    Summing ``p(x) p(u|x) ≤ e^ε p(x') p(u|x')`` over ``u`` gives ``p(x) ≤ e^ε p(x')``, and a
    constant mechanism attains it, so identifiability at level ε is feasible exactly when
    ``ε ≥ ε_X``. For i.i.d. rows with Hamming neighbours it is ``ln max π / min π`` over the
    row values of positive mass (computed without enumerating ``Dⁿ``).

    Parameters
    ----------
    prior : Prior, JointPrior, DatabasePrior or array_like
        The prior; a plain pmf (1-D, non-negative, summing to 1) is read as a single secret.
        Only the secret's pmf ``p(x)`` counts.
    neighbors : NeighborRelation, {"hamming", "all"}, list of pairs or None
        Default: Hamming on databases, all pairs otherwise.

    Returns
    -------
    float
        ``ε_X`` in nats (0 when no two neighbours lie in the support).

    Raises
    ------
    InputError
        If the prior is malformed or ``neighbors`` is unknown or does not fit the prior
        (``"hamming"`` needs a database prior).
    """
    prior = as_prior(prior)
    rel = resolve_neighbors(prior, neighbors)
    if getattr(prior, "is_iid", False) and rel.kind == "hamming":
        q = prior.row_probs[prior.row_probs > 0]
        return float(np.log(q.max() / q.min())) if prior.n >= 1 else 0.0
    p = prior.secret_probs
    support = np.flatnonzero(p > 0)
    if rel.kind == "all" and rel.n_pairs == rel.size * (rel.size - 1):
        q = p[support]
        return float(np.log(q.max() / q.min())) if q.size > 1 else 0.0
    rel = rel.restricted(support)
    if rel.n_pairs == 0:
        return 0.0
    return float(max((np.log(p[rel.left]) - np.log(p[rel.right])).max(), 0.0))


@with_unit
def ldi_level(prior: PriorLike, mechanism: Mechanism | ArrayLike) -> float:
    """Local differential identifiability: identifiability over all pairs ([Saeidian-PML] Def.
    16).

    Parameters
    ----------
    prior : Prior, JointPrior, DatabasePrior or array_like
        The prior; a plain pmf (1-D, non-negative, summing to 1) is read as a single secret.
        For a joint prior ``p(s, y)`` the measure is taken on the channel ``p(u|s)``.
    mechanism : Mechanism or array_like
        Row-stochastic ``W[y, u] = p(u|y)``: one row per input symbol of ``prior`` (per
        observation ``y`` for a joint prior), one column per output ``u``.

    Returns
    -------
    float
        The level in nats, ``≥ ln max p(x)/min p(x)`` over the support; ``inf`` when an
        output is emitted by one secret of the support and not by another.

    Raises
    ------
    InputError
        If the prior or the mechanism is malformed, the mechanism does not have one row per
        input of the prior, or ``unit`` is neither ``"nats"`` nor ``"bits"``.
    """
    return identifiability_level(prior, mechanism, neighbors="all")


@with_unit
def information_privacy_level(prior: PriorLike, mechanism: Mechanism | ArrayLike) -> float:
    """Information privacy / LIP level ``max_{s, u} |ln p(u|s)/p(u)|`` over both supports.

    [Calmon-Fawaz] Def. 6; [Saeidian-PML] Def. 15.

    Parameters
    ----------
    prior : Prior, JointPrior, DatabasePrior or array_like
        The prior; a plain pmf (1-D, non-negative, summing to 1) is read as a single secret.
        For a joint prior ``p(s, y)`` the measure is taken on the channel ``p(u|s)``.
    mechanism : Mechanism or array_like
        Row-stochastic ``W[y, u] = p(u|y)``: one row per input symbol of ``prior`` (per
        observation ``y`` for a joint prior), one column per output ``u``.

    Returns
    -------
    float
        The level in nats, ``≥ 0``: ``inf`` when an output is emitted by one secret of the
        support and not by another.

    Raises
    ------
    InputError
        If the prior or the mechanism is malformed, the mechanism does not have one row per
        input of the prior, or ``unit`` is neither ``"nats"`` nor ``"bits"``.
    """
    st = MeasureSetting(prior, mechanism)
    if st.ch.size == 0:
        return 0.0
    return float(np.abs(st.log_ratio_to_pu(st.ch)).max())


def expected_distortion(
    prior: PriorLike, mechanism: Mechanism | ArrayLike, distortion: Distortion | ArrayLike | str
) -> float:
    """``E[d(Y,U)] = Σ_{y,u} p(y) p(u|y) d(y,u)`` ([Calmon-Fawaz] eq. 15; [Wang-Ying-Zhang] eq.
    14).

    Parameters
    ----------
    prior : Prior, JointPrior, DatabasePrior or array_like
        The prior; a plain pmf (1-D, non-negative, summing to 1) is read as a single secret.
        The distortion is averaged over the inputs ``y`` (the observations of a joint
        prior).
    mechanism : Mechanism or array_like
        Row-stochastic ``W[y, u] = p(u|y)``: one row per input symbol of ``prior`` (per
        observation ``y`` for a joint prior), one column per output ``u``.
    distortion : Distortion, array_like or {"hamming", "absolute", "squared"}
        A distortion object, a non-negative matrix ``d[y, u]`` of the mechanism's shape, or
        a name (``"hamming"`` on a database prior counts the differing rows).

    Returns
    -------
    float
        ``E[d(Y,U)]``, ``≥ 0``, in the distortion's units (not a leakage: no ``unit``).

    Raises
    ------
    InputError
        If the prior, the mechanism or the distortion is malformed, or the distortion's
        shape differs from the mechanism's.
    """
    prior = as_prior(prior)
    W = as_matrix(mechanism)
    distortion = as_distortion(distortion, prior)
    if distortion.shape != W.shape:
        raise InputError(
            f"the distortion has shape {distortion.shape} but the mechanism has shape "
            f"{W.shape}: rows are inputs and columns outputs for both",
            "distortion",
        )
    return distortion.expected(prior.input_probs, W)


def _loss_matrix(loss, rows: int, what: str) -> np.ndarray:
    """A finite ``rows × candidates`` loss (a matrix, or an object with ``.matrix``)."""
    try:
        matrix = np.asarray(getattr(loss, "matrix", loss), dtype=float)
    except (TypeError, ValueError):
        raise InputError("the loss is a matrix of numbers", "loss") from None
    if matrix.ndim != 2 or matrix.shape[0] != rows or matrix.shape[1] == 0:
        raise InputError(
            f"the loss has shape {matrix.shape}: one row per {what} ({rows}) and one column per "
            "candidate estimate",
            "loss",
        )
    if not np.isfinite(matrix).all():
        raise InputError("the loss must be finite", "loss")
    return matrix


def _best_candidates(joint: np.ndarray, fallback: np.ndarray, loss: np.ndarray) -> np.ndarray:
    """``argmin_c Σ_x joint[x, u] loss[x, c]`` for every column ``u`` (lowest index on ties);
    columns of ``joint`` that are all zero use ``fallback`` instead."""
    costs = joint.T @ loss
    empty = ~(joint > 0).any(axis=0)
    if empty.any():
        costs[empty] = fallback[:, empty].T @ loss
    return np.argmin(costs, axis=1)


def posterior_expected_loss(
    prior: PriorLike, mechanism: Mechanism | ArrayLike, loss: ArrayLike
) -> np.ndarray:
    """``C[u, c] = Σ_s p(s) p(u|s) loss(s, c)``: the expected loss of answering ``c`` when the
    output is ``u``, times ``p(u)`` (the posterior expectation unnormalised).

    The Bayes decision on seeing ``u`` is ``argmin_c C[u, c]``, and the least expected loss
    of any estimator is ``Σ_u min_c C[u, c]`` (the optimal inference attack of
    [Shokri-Theodorakopoulos-Troncoso-Hubaux-LeBoudec]: an adversary who knows the prior and
    the mechanism).

    Parameters
    ----------
    prior : Prior, JointPrior, DatabasePrior or array_like
        On the secret ``s`` (for a joint prior, the channel is ``p(u|s) = Σ_y p(y|s) p(u|y)``).
    mechanism : Mechanism or array_like
        ``W[y, u] = p(u|y)``.
    loss : array_like
        ``loss[s, c]``: one row per secret, one column per candidate estimate ``c`` (e.g. a
        :class:`~privopt.model.Metric`'s matrix to estimate the secret itself).

    Returns
    -------
    numpy.ndarray
        ``outputs × candidates``.
    """
    st = MeasureSetting(prior, mechanism)
    matrix = _loss_matrix(loss, st.p.size, "secret")
    joint = st.p[:, None] * st.prior.induced_channel(st.W)
    return joint.T @ matrix


def bayes_remap(
    prior: PriorLike, mechanism: Mechanism | ArrayLike, distortion: ArrayLike
) -> np.ndarray:
    """The optimal remap of a mechanism's outputs for its quality loss: each output ``u`` goes
    to ``argmin_c Σ_y p(y) W[y, u] d(y, c)``, the estimate of least expected distortion under
    the posterior on seeing ``u``.

    This is the optimal remap of [Chatzikokolakis-ElSalamouny-Palamidessi] (for a prior, a
    mechanism and a quality-loss function: each output to the point of least posterior
    expected loss), restricted to the candidate outputs ``c`` (the columns of
    ``distortion``; the paper's remap may pick any point of the plane, so on a discrete map
    this is its discrete form); ``W`` followed by it is a
    post-processing of ``W``, so every metric-privacy (and DP) guarantee of ``W`` still holds,
    and ``E[d]`` never grows (the identity is a candidate when the outputs are the
    candidates). Ties go to the lowest index; an output no input of positive probability
    emits is remapped as if the prior were uniform.

    Parameters
    ----------
    prior : Prior, JointPrior, DatabasePrior or array_like
        The distortion is on the inputs ``y`` (the observations of a joint prior).
    mechanism : Mechanism or array_like
        ``W[y, u] = p(u|y)``.
    distortion : Distortion or array_like
        ``d[y, c]``: one row per input, one column per candidate output.

    Returns
    -------
    numpy.ndarray
        ``remap[u]``: the candidate index each output goes to (length ``|U|``).
    """
    prior = as_prior(prior)
    W = as_matrix(mechanism)
    matrix = _loss_matrix(distortion, prior.n_inputs, "input")
    if W.shape[0] != prior.n_inputs:
        raise InputError(
            f"the mechanism has {W.shape[0]} rows but the prior has {prior.n_inputs} inputs",
            "mechanism",
        )
    return _best_candidates(prior.input_probs[:, None] * W, W, matrix)


def expected_inference_error(
    prior: PriorLike, mechanism: Mechanism | ArrayLike, loss: ArrayLike
) -> float:
    """The expected error of the Bayesian adversary: ``Σ_u min_ŝ Σ_s p(s) p(u|s) loss(s, ŝ)``.

    The location privacy of [Shokri-Theodorakopoulos-Troncoso-Hubaux-LeBoudec] (the user's
    privacy is the expected distance between the true place and the estimate of the optimal
    inference attack): an adversary who knows the prior and the mechanism answers, for each
    output, the estimate ``ŝ`` of least posterior expected loss (a deterministic Bayes
    estimator is optimal); its expected loss is the privacy figure (larger is more private).
    With ``loss`` the distance between places it is the expected distance between the user's
    place and the adversary's guess.

    Parameters
    ----------
    prior : Prior, JointPrior, DatabasePrior or array_like
        On the secret.
    mechanism : Mechanism or array_like
        ``W[y, u] = p(u|y)``.
    loss : array_like
        ``loss[s, ŝ]``: one row per secret, one column per estimate (usually the secrets
        themselves: the metric's matrix).

    Returns
    -------
    float
        In the loss's unit (not a leakage: no ``unit``).
    """
    costs = posterior_expected_loss(prior, mechanism, loss)
    return float(costs.min(axis=1).sum())


@with_unit
def conditional_pml(joint_xz: ArrayLike, channel: ArrayLike) -> np.ndarray:
    """Conditional PML ``ℓ(X→y|z) = ln max_{x∈supp P_{X|Z=z}} P(y|x,z)/P(y|z)``.

    [Saeidian-PML] Def. 3; [Saeidian-Rethinking] Def. 2.5.

    Parameters
    ----------
    joint_xz : array_like
        ``|X| × |Z|`` joint pmf of the secret and the side information.
    channel : array_like
        ``|X| × |Z| × |Y|`` array, ``channel[x, z, y] = P(y|x, z)``.

    Returns
    -------
    numpy.ndarray
        ``|Z| × |Y|`` array of ``ℓ(X→y|z)``; 0 where ``P(y|z) = 0`` or ``P(z) = 0``.
        In nats, each entry in ``[0, −ln min_{x: P(x|z) > 0} P(x|z)]``.

    Raises
    ------
    InputError
        If ``joint_xz`` is not a pmf, ``channel`` does not have shape ``(|X|, |Z|, |Y|)``,
        a slice ``channel[:, z, :]`` with ``P(z) > 0`` is not row-stochastic, or ``unit``
        is neither ``"nats"`` nor ``"bits"``.
    """
    joint_xz = np.asarray(joint_xz, dtype=float)
    channel = np.asarray(channel, dtype=float)
    if channel.ndim != 3 or channel.shape[:2] != joint_xz.shape:
        raise InputError(
            f"channel must have shape (|X|, |Z|, |Y|) = {joint_xz.shape + ('|Y|',)}, "
            f"got {channel.shape}",
            "channel",
        )
    as_pmf(joint_xz.ravel(), "joint_xz")
    p_z = joint_xz.sum(axis=0)
    out = np.zeros((joint_xz.shape[1], channel.shape[2]))
    for z in np.flatnonzero(p_z > 0):
        out[z] = pml_per_output(joint_xz[:, z] / p_z[z], channel[:, z, :])
    return out


# --- robust PML over a class of priors ([Saeidian-Rethinking] Def. 2.6) ------------------------
def _class_channel(prior, mechanism, priors: Sequence) -> tuple[np.ndarray, list[np.ndarray]]:
    """The channel ``p(u|s)`` on every secret and the class as validated pmfs."""
    prior = as_prior(prior)
    W = as_matrix(mechanism)
    if W.shape[0] != prior.n_inputs:
        raise InputError(
            f"the mechanism has {W.shape[0]} rows but the prior has {prior.n_inputs} inputs",
            "mechanism",
        )
    channel = np.asarray(prior.induced_channel(W), dtype=float)
    qs = [as_pmf(q, "priors") for q in priors]
    if not qs or any(q.size != channel.shape[0] for q in qs):
        raise InputError(
            f"needs a non-empty list of pmfs with {channel.shape[0]} entries (one per secret)",
            "priors",
        )
    return channel, qs


@with_unit
def robust_pml_level(prior: PriorLike, mechanism: Mechanism | ArrayLike, priors: Sequence) -> float:
    """``max_{Q ∈ 𝒫} max_y ℓ_Q(X→y)`` over a finite class ``𝒫`` of priors of the secret
    ([Saeidian-Rethinking] Def. 2.6, (ε, 𝒫)-PML for the listed priors).

    Parameters
    ----------
    prior : Prior, JointPrior, DatabasePrior or array_like
        The problem's prior (gives the channel ``p(u|s)`` of a joint prior).
    mechanism : Mechanism or array_like
        ``W[y, u]``.
    priors : sequence of array_like
        The class: pmfs over the secret alphabet.

    Returns
    -------
    float
        The level (nats).

    Raises
    ------
    InputError
        If the prior, the mechanism or a pmf of ``priors`` is malformed, the mechanism does
        not have one row per input of ``prior``, ``priors`` is empty or one of its pmfs does
        not have one entry per secret, or ``unit`` is neither ``"nats"`` nor ``"bits"``.
    """
    channel, qs = _class_channel(prior, mechanism, priors)
    return max(pml_level(q, channel) for q in qs)


@with_unit
def robust_pml_hull_level(
    prior: PriorLike, mechanism: Mechanism | ArrayLike, priors: Sequence
) -> float:
    """``sup`` of the PML level over the **convex hull** of the listed priors.

    For a prior ``Q = Σ_i λ_i Q_i`` of the hull and ``x ∈ supp Q``,
    ``p(u|x)/Q_U(u) ≤ p(u|x)/min_i Q_{i,U}(u)``, and the bound is approached by putting
    almost all weight on the vertex that minimises ``Q_{i,U}(u)`` and a vanishing weight on
    one whose support holds ``x``. So the supremum is
    ``ln max_u max_{x ∈ ∪ supp Q_i} p(u|x) / min_i Q_{i,U}(u)`` (``inf`` when some
    ``Q_{i,U}(u) = 0 < p(u|x)``). It equals :func:`robust_pml_level` when every vertex has the
    same support, and can exceed it otherwise ((ε, 𝒫)-PML at the listed priors does not
    extend to their hull; the vertices ``(½,½,0)`` and ``(0,½,½)`` show it).

    Parameters
    ----------
    prior : Prior, JointPrior, DatabasePrior or array_like
        The problem's prior (gives the channel ``p(u|s)`` of a joint prior).
    mechanism : Mechanism or array_like
        ``W[y, u]``.
    priors : sequence of array_like
        The vertices of the hull: pmfs over the secret alphabet.

    Returns
    -------
    float
        The supremum (nats; may be ``inf``).

    Raises
    ------
    InputError
        If the prior, the mechanism or a pmf of ``priors`` is malformed, the mechanism does
        not have one row per input of ``prior``, ``priors`` is empty or one of its pmfs does
        not have one entry per secret, or ``unit`` is neither ``"nats"`` nor ``"bits"``.
    """
    channel, qs = _class_channel(prior, mechanism, priors)
    union = np.any([q > 0 for q in qs], axis=0)
    q_u_min = np.min([q @ channel for q in qs], axis=0)
    top = channel[union].max(axis=0)
    used = top > 0
    if (q_u_min[used] <= 0).any():
        return float("inf")
    if not used.any():
        return 0.0
    return float(max(np.log(top[used] / q_u_min[used]).max(), 0.0))


# --- persuasive privacy with the log score ([Bon-Persuasive]) -------------------------------------
def _pp_information_densities(W: np.ndarray, priors: Sequence):
    """Yield ``(x, i_Q(x;·) on supp W[x], W[x] on that support)`` for each Q and x ∈ supp Q
    (an empty class is refused, as by :func:`robust_pml_level`)."""
    if isinstance(priors, (str, bytes)) or len(priors) == 0:
        raise InputError("give at least one prior (a pmf over the secrets)", "priors")
    for q in priors:
        q = as_pmf(q, "priors")
        if q.size != W.shape[0]:
            raise InputError(
                f"a prior has {q.size} entries but the mechanism {W.shape[0]} rows", "priors"
            )
        q_t = q @ W
        for x in np.flatnonzero(q > 0):
            t = W[x] > 0
            yield np.log(W[x, t] / q_t[t]), W[x, t]


def persuasive_privacy_delta(
    mechanism: Mechanism | ArrayLike, priors: Sequence, kappa: float
) -> float:
    """Least δ for which ``(L, 𝒬, κ, δ)``-persuasive privacy holds with the log score.

    ``δ = sup_{Q∈𝒬} sup_{x∈supp Q} P_{T∼W[x,·]}[i_Q(x;T) > κ]`` with
    ``i_Q(x;t) = ln W[x,t]/Σ_x' Q(x')W[x',t]`` ([Bon-Persuasive] Def. 3, App. A with the sign
    of Def. 9 corrected).

    Parameters
    ----------
    mechanism : Mechanism or array_like
        Row-stochastic ``W[x, t] = p(t|x)``, one row per secret.
    priors : sequence of array_like
        The class ``𝒬``: pmfs over the secrets, each with one entry per row of ``W``.
    kappa : float
        The level κ in nats (any real; ``inf`` gives 0). An information density counts
        as above κ only beyond ``κ + 1e-12``.

    Returns
    -------
    float
        δ in ``[0, 1]``.

    Raises
    ------
    InputError
        If the mechanism or a pmf of ``priors`` is malformed, or a pmf does not have one
        entry per row of the mechanism.
    """
    W = as_matrix(mechanism)
    worst = 0.0
    for dens, mass in _pp_information_densities(W, priors):
        worst = max(worst, float(mass[dens > kappa + 1e-12].sum()))
    return worst


@with_unit
def persuasive_privacy_level(
    mechanism: Mechanism | ArrayLike, priors: Sequence, delta: float = 0.0
) -> float:
    """Least κ for which ``(L, 𝒬, κ, δ)``-persuasive privacy holds with the log score.

    With one full-support prior and δ = 0 this is the PML level; with the two-point priors of
    :func:`neighbor_pair_priors` it approaches the (probabilistic) DP level ([Bon-Persuasive] Prop.
    6).

    Parameters
    ----------
    mechanism : Mechanism or array_like
        Row-stochastic ``W[x, t] = p(t|x)``, one row per secret.
    priors : sequence of array_like
        The class ``𝒬``: pmfs over the secrets, each with one entry per row of ``W``.
    delta : float, default 0.0
        The tail probability δ, in ``[0, 1]``.

    Returns
    -------
    float
        κ in nats, ``≥ 0``.

    Raises
    ------
    InputError
        If δ is outside ``[0, 1]``, the mechanism or a pmf of ``priors`` is malformed, a pmf
        does not have one entry per row of the mechanism, or ``unit`` is neither ``"nats"``
        nor ``"bits"``.
    """
    delta = check_probability(delta)
    W = as_matrix(mechanism)
    level = 0.0
    for dens, mass in _pp_information_densities(W, priors):
        level = max(level, tail_threshold(dens, mass, delta))
    return level


def neighbor_pair_priors(
    size: int, neighbors: NeighborRelation | None = None, weight: float = 1e-6
) -> list[np.ndarray]:
    """Two-point priors ``Q = w·δ_x + (1−w)·δ_x'`` on neighbouring pairs (the class ℋ of
    [Bon-Persuasive]).

    The infimum of [Bon-Persuasive] Prop. 6 is reached as ``w → 0``.

    Parameters
    ----------
    size : int
        The number of secrets, ``≥ 1``.
    neighbors : NeighborRelation or None, default None
        The pairs ``(x, x')`` (indices below ``size``); ``None`` is every ordered pair of
        distinct secrets.
    weight : float, default 1e-6
        The mass ``w`` on ``x``, in ``[0, 1]``; ``x'`` gets ``1 − w``.

    Returns
    -------
    list of numpy.ndarray
        One pmf of shape ``(size,)`` per pair of the relation, in its order (``size(size−1)``
        of them by default).

    Raises
    ------
    InputError
        If ``weight`` is not in ``[0, 1]``, or ``neighbors`` is ``None`` and ``size`` is not
        an integer ``≥ 1``.
    """
    weight = check_probability(weight, "weight")
    rel = all_pairs(size) if neighbors is None else neighbors
    out = []
    for a, b in zip(rel.left, rel.right, strict=True):
        q = np.zeros(size)
        q[a], q[b] = weight, 1.0 - weight
        out.append(q)
    return out


@with_unit
def metric_dp_level(
    prior: PriorLike,
    mechanism: Mechanism | ArrayLike,
    metric: Metric | ArrayLike,
    pairs: MetricPairs | None = None,
) -> float:
    """The least ε with the mechanism ε·d-private (metric privacy, d-privacy).

    ``p(u|x) ≤ e^{ε d(x,x')} p(u|x')`` for every pair of secrets (Chatzikokolakis, Andrés,
    Bordenabe & Palamidessi 2013, Def. 3; geo-indistinguishability, [Andres-Geo], Def. 3.1),
    so the level is ``max (ln p(u|x) − ln p(u|x')) / d(x,x')`` over pairs in ``supp p`` and
    outputs with ``p(u|x) > 0`` (an exact zero of the channel, never a rounded ``p(u)``).
    Secrets outside the support are left out, and so are their geodesics: the pairs are
    those of the metric restricted to the support.
    A pair at distance 0 needs equal rows (else ``+inf``); pairs at distance ``+inf`` are
    unconstrained; ``p(u|x') = 0 < p(u|x)`` at a finite distance gives ``+inf``. The maximum
    is taken over the metric's constraint pairs, which imply all others
    (:class:`~privopt.model.Metric`).

    Parameters
    ----------
    prior : Prior, JointPrior, DatabasePrior or array_like
        The prior; a plain pmf (1-D, non-negative, summing to 1) is read as a single secret.
        For a joint prior ``p(s, y)`` the measure is taken on the channel ``p(u|s)``.
    mechanism : Mechanism or array_like
        Row-stochastic ``W[y, u] = p(u|y)``: one row per input symbol of ``prior`` (per
        observation ``y`` for a joint prior), one column per output ``u``.
    metric : Metric or array_like
        On the secrets (a matrix is checked by :meth:`~privopt.model.Metric.from_matrix`).
    pairs : MetricPairs, optional
        Measure over these pairs instead (e.g. the edges of a spanner).

    Returns
    -------
    float
        Nats per unit of distance.

    Raises
    ------
    InputError
        If the prior or the mechanism is malformed, the mechanism does not have one row per
        input of the prior, the metric matrix is not a metric, the metric is not on the
        prior's secrets, or ``unit`` is neither ``"nats"`` nor ``"bits"``.
    """
    from privopt.model.metric import Metric, pair_level

    st = MeasureSetting(prior, mechanism)
    if not isinstance(metric, Metric):
        metric = Metric.from_matrix(metric, field="metric")
    if metric.size != st.p.size:
        raise InputError(
            f"the metric is on {metric.size} secrets but the prior has {st.p.size}", "metric"
        )
    full = np.zeros((st.p.size, st.channel.shape[1]))
    full[st.s_mask] = st.channel
    support = np.flatnonzero(st.s_mask)
    rel = metric.pairs_on(support) if pairs is None else pairs
    return pair_level(full, rel, support)


def adaptive_composition_levels(
    prior: PriorLike, first: Mechanism | ArrayLike, second: Sequence[Mechanism] | ArrayLike
) -> dict[str, float]:
    """The PML levels of an adaptive composition, as in [Saeidian-PML], Theorem 4(1).

    ``first`` is ``P_{Y|X}`` and ``second[y]`` is ``P_{Z|X,Y=y}``. Returns ``first`` =
    ``max_y ℓ(X→y)`` (ε₁), ``second`` = ``max_{y,z} ℓ(X→z|y)`` (ε₂, the PML of each second
    stage under the posterior ``P_{X|Y=y}``, :func:`conditional_pml`), ``bound`` = ε₁ + ε₂
    (Theorem 4(1)) and ``joint`` = ``max_{y,z} ℓ(X→y,z)``, the PML level of the joint
    release, which never exceeds the bound (Lemma 1(6)).

    Parameters
    ----------
    prior : Prior or array_like
        ``P_X`` (a single secret).
    first : Mechanism or array_like
        ``|X| × |Y|``.
    second : array_like or sequence of Mechanism
        ``|Y|`` matrices ``|X| × |Z|``.

    Returns
    -------
    dict
        ``first``, ``second``, ``bound``, ``joint`` (nats).

    Raises
    ------
    InputError
        If the prior is a joint prior or malformed, a mechanism is malformed, or the
        shapes do not fit (``|Y|`` second stages, each ``|X| × |Z|``).
    """
    from privopt.model import Mechanism

    prior = as_prior(prior)
    if prior.observation is not None:
        raise InputError("a composition is audited on a single secret (no joint prior)", "prior")
    W1 = Mechanism(as_matrix(first)) if not isinstance(first, Mechanism) else first
    joint_release = W1.compose_adaptive(second)
    p = prior.secret_probs
    stages = np.stack([as_matrix(s) for s in second], axis=1)  # x × y × z
    joint_xy = p[:, None] * W1.matrix
    eps1 = pml_level(prior, W1.matrix)
    eps2 = float(conditional_pml(joint_xy, stages).max())
    return {
        "first": float(eps1),
        "second": eps2,
        "bound": float(eps1) + eps2,
        "joint": float(pml_level(prior, joint_release.matrix)),
    }
