"""f-information, total-variation privacy and approximate max-information of a fixed mechanism,
with the bounds by which PML controls them (numpy only, no solver).

All from [Saeidian-PML] Section IV (pointwise maximal leakage, IEEE T-IT 2023):

* :func:`f_information` (Defs 17–18), :func:`chi_square_information`,
  :func:`total_variation_privacy` (eq. (24));
* :func:`approximate_max_information` (Defs 12–13), computed exactly through the
  hockey-stick divergence: ``I_∞^δ ≤ ε ⇔ Σ_{x,y} (P_XY − e^ε P_X P_Y)_+ ≤ δ``;
* :func:`expected_pml` (Prop. 7: ``I(X;Y) ≤ E_Y ℓ(X→Y)``), :func:`f_information_pml_bound`
  (Prop. 8), :func:`total_variation_pml_bound` (eq. (26)),
  :func:`total_variation_maximal_leakage_bound` and :func:`total_variation_tail_bound`
  (Prop. 9), :func:`mutual_information_tail_bound` (Prop. 7(2)).

Arguments are ``(prior, mechanism)`` as in :mod:`privopt.measures`; a joint prior is
measured on the channel the adversary sees. Logs are natural (nats).
"""

from __future__ import annotations

__all__ = [
    "f_information",
    "chi_square_information",
    "total_variation_privacy",
    "hockey_stick_divergence",
    "approximate_max_information",
    "expected_pml",
    "f_information_pml_bound",
    "total_variation_pml_bound",
    "total_variation_maximal_leakage_bound",
    "total_variation_tail_bound",
    "mutual_information_tail_bound",
]

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from privopt.errors import InputError
from privopt.measures import MeasureSetting, pml_per_output, with_unit
from privopt.validation import check_number, check_probability

if TYPE_CHECKING:  # annotations only: nothing more is imported at run time
    from numpy.typing import ArrayLike

    from privopt.model import Mechanism
    from privopt.model.types import PriorLike


def _joint_and_product(prior, mechanism) -> tuple[np.ndarray, np.ndarray]:
    """``P_XY`` and ``P_X ⊗ P_Y`` on ``supp P_X × supp P_Y`` (flattened)."""
    st = MeasureSetting(prior, mechanism)
    joint = st.ps[:, None] * st.ch
    product = st.ps[:, None] * st.pu[None, :]
    return joint.ravel(), product.ravel()


def _apply_f(f, t: np.ndarray) -> np.ndarray:
    """``f(t)`` for a vectorised ``f``, refused under the field ``f`` when ``f`` is not
    callable or does not return one number per entry of ``t``."""
    if not callable(f):
        raise InputError(f"expected a function of an array, got {type(f).__name__} {f!r:.60}", "f")
    try:
        values = np.asarray(f(t), dtype=float)
    except (TypeError, ValueError):
        raise InputError("must return an array of numbers", "f") from None
    if values.shape != t.shape:
        raise InputError(
            f"must be vectorised: called on an array of shape {t.shape} it returned shape "
            f"{values.shape} (use e.g. numpy functions, or numpy.vectorize)",
            "f",
        )
    return values


def f_information(
    prior: PriorLike, mechanism: Mechanism | ArrayLike, f: Callable[[np.ndarray], np.ndarray]
) -> float:
    """f-information ``I_f(P_XY) = Σ_{x,y} p(x)p(y) f(P_XY(x,y) / (p(x)p(y)))``.

    [Saeidian-PML] Def. 18 (with the f-divergence of Def. 17). ``f`` must be convex with
    ``f(1) = 0``; ``f(t) = t ln t`` gives the mutual information, ``½|t − 1|`` the
    total-variation privacy and ``(t − 1)²`` the χ²-information.

    Parameters
    ----------
    prior : Prior, JointPrior, DatabasePrior or array_like
        The prior (a plain pmf reads as a single secret).
    mechanism : Mechanism or array_like
        ``W[y, u] = p(u|y)``: row-stochastic, one row per input of the prior.
    f : callable
        Vectorised ``f`` on ``[0, ∞)``; called on the likelihood ratios of every cell of
        ``supp P_X × supp P_Y`` (a ratio can be 0). It takes a 1-D float array and returns
        an array of the same shape (first called on ``[1.0]`` to check ``f(1) = 0``).

    Returns
    -------
    float
        ``I_f``: ``≥ 0`` for a convex ``f``, in the unit of ``f`` (nats for ``t ln t``).

    Raises
    ------
    InputError
        If ``f`` is not callable, does not return one number per ratio, or does not vanish
        at 1 (within 1e-12) (field ``f``), or the prior or the mechanism is malformed or the
        mechanism does not have one row per input of the prior.
    """
    if not abs(float(_apply_f(f, np.array([1.0]))[0])) <= 1e-12:
        raise InputError("an f-information needs f(1) = 0", "f")
    joint, product = _joint_and_product(prior, mechanism)
    return float(np.sum(product * _apply_f(f, joint / product)))


def chi_square_information(prior: PriorLike, mechanism: Mechanism | ArrayLike) -> float:
    """χ²-information ``Σ_{x,y} (P_XY − P_X P_Y)² / (P_X P_Y)``: :func:`f_information` with
    ``f(t) = (t − 1)²`` ([Saeidian-PML] Def. 18 and the text after it).

    Parameters
    ----------
    prior : Prior, JointPrior, DatabasePrior or array_like
        The prior (a plain pmf reads as a single secret).
    mechanism : Mechanism or array_like
        ``W[y, u] = p(u|y)``: row-stochastic, one row per input of the prior.

    Returns
    -------
    float
        The χ²-information (dimensionless), ``≥ 0``.

    Raises
    ------
    InputError
        If the prior or the mechanism is malformed, or the mechanism does not have one row
        per input of the prior.
    """
    joint, product = _joint_and_product(prior, mechanism)
    return float(np.sum((joint - product) ** 2 / product))


def total_variation_privacy(prior: PriorLike, mechanism: Mechanism | ArrayLike) -> float:
    """Total-variation privacy ``T(X;Y) = Σ_y p(y) TV(P_{X|Y=y}, P_X)
    = ½ Σ_{x,y} |P_XY(x,y) − p(x)p(y)|`` ([Saeidian-PML] eq. (24)).

    Parameters
    ----------
    prior : Prior, JointPrior, DatabasePrior or array_like
        The prior (a plain pmf reads as a single secret).
    mechanism : Mechanism or array_like
        ``W[y, u] = p(u|y)``: row-stochastic, one row per input of the prior.

    Returns
    -------
    float
        ``T(X;Y)`` in ``[0, 1]``.

    Raises
    ------
    InputError
        If the prior or the mechanism is malformed, or the mechanism does not have one row
        per input of the prior.
    """
    joint, product = _joint_and_product(prior, mechanism)
    return float(0.5 * np.abs(joint - product).sum())


def hockey_stick_divergence(
    prior: PriorLike, mechanism: Mechanism | ArrayLike, eps: float
) -> float:
    """``E_{e^ε}(P_XY ‖ P_X P_Y) = Σ_{x,y} (P_XY(x,y) − e^ε p(x)p(y))_+``.

    ``max_E P_XY(E) − e^ε P_X P_Y(E)`` over events ``E``; by [Saeidian-PML] Def. 12 it is
    at most δ exactly when the δ-approximate max-information is at most ε (Lemma 4's
    argument read as an equivalence, see :func:`approximate_max_information`).

    Parameters
    ----------
    prior : Prior, JointPrior, DatabasePrior or array_like
        The prior (a plain pmf reads as a single secret).
    mechanism : Mechanism or array_like
        ``W[y, u] = p(u|y)``: row-stochastic, one row per input of the prior.
    eps : float
        The level ε (nats), finite; negative values are accepted.

    Returns
    -------
    float
        The divergence, in ``[0, 1]``.

    Raises
    ------
    InputError
        If ``eps`` is not a finite number (field ``eps``), or the prior or the mechanism
        is malformed or the mechanism does not have one row per input of the prior.
    """
    eps = check_number(eps, "eps", minimum=-math.inf)
    joint, product = _joint_and_product(prior, mechanism)
    return float(np.clip(joint - np.exp(eps) * product, 0.0, None).sum())


@with_unit
def approximate_max_information(
    prior: PriorLike, mechanism: Mechanism | ArrayLike, delta: float
) -> float:
    """δ-approximate max-information ``I_∞^δ(X;Y) = ln max_{E: P_XY(E) ≥ δ}
    (P_XY(E) − δ) / (P_X P_Y)(E)`` ([Saeidian-PML] Defs 12–13).

    For γ > 0, ``max_E (P(E) − δ)/Q(E) ≥ γ`` exactly when ``max_E P(E) − γQ(E) ≥ δ``, i.e.
    when the hockey-stick divergence ``E_γ = Σ (P − γQ)_+`` reaches δ (an event with
    ``P(E) − γQ(E) ≥ δ`` has ``P(E) ≥ δ``). ``E_γ`` is continuous and strictly decreasing
    while positive, so ``e^{I_∞^δ}`` is the root of ``E_γ = δ``; it is found exactly from
    the cells sorted by likelihood ratio (``E_γ`` is linear between consecutive ratios).
    δ = 0 gives the max-information ``I_∞`` = the PML level (Def. 13); Prop. 5 states
    ``I_∞^δ ≤`` the (ε,δ)-PML level. The value can be negative (at least ``ln(1 − δ)``,
    from ``E`` = everything).

    Parameters
    ----------
    prior : Prior, JointPrior, DatabasePrior or array_like
        The prior (a plain pmf reads as a single secret).
    mechanism : Mechanism or array_like
        ``W[y, u] = p(u|y)``: row-stochastic, one row per input of the prior.
    delta : float
        δ in ``[0, 1)``.

    Returns
    -------
    float
        ``I_∞^δ`` (nats; ``unit="bits"`` for bits), in ``[ln(1 − δ), I_∞]``.

    Raises
    ------
    InputError
        For δ outside ``[0, 1)`` (δ = 1 leaves ``P(E) − δ ≤ 0`` for every event); if the
        prior or the mechanism is malformed or the mechanism does not have one row per input
        of the prior; or if ``unit`` is neither ``"nats"`` nor ``"bits"``.
    """
    delta = check_probability(delta, "delta")
    if delta >= 1.0:
        raise InputError("must be below 1 (at δ = 1 no event has P(E) − δ > 0)", "delta")
    joint, product = _joint_and_product(prior, mechanism)
    ratio = joint / product
    order = np.argsort(-ratio, kind="stable")
    r, p_cum, q_cum = ratio[order], np.cumsum(joint[order]), np.cumsum(product[order])
    # on [r[k+1], r[k]] the cells above γ are the first k+1: E_γ = P_k − γ Q_k
    for k in range(r.size):
        gamma = (p_cum[k] - delta) / q_cum[k]
        lower = r[k + 1] if k + 1 < r.size else -np.inf
        if gamma >= lower - 1e-15 * max(1.0, abs(lower)):
            return float(np.log(min(gamma, r[k])))
    raise AssertionError("unreachable: E_γ at γ → 0 is 1 ≥ δ")  # pragma: no cover


@with_unit
def expected_pml(prior: PriorLike, mechanism: Mechanism | ArrayLike) -> float:
    """``E_{Y∼P_Y}[ℓ(X→Y)]``, the bound of [Saeidian-PML] Prop. 7 on the mutual information:
    ``I(X;Y) ≤ E_Y ℓ(X→Y)``, with equality iff ``P_{Y|X=x}(y)`` is constant over the ``x``
    with ``P_XY(x,y) > 0``.

    Parameters
    ----------
    prior : Prior, JointPrior, DatabasePrior or array_like
        The prior (a plain pmf reads as a single secret).
    mechanism : Mechanism or array_like
        ``W[y, u] = p(u|y)``: row-stochastic, one row per input of the prior.

    Returns
    -------
    float
        ``E_Y ℓ(X→Y)`` (nats), between the mutual information and the PML level.

    Raises
    ------
    InputError
        If the prior or the mechanism is malformed, or the mechanism does not have one row
        per input of the prior, or ``unit`` is neither ``"nats"`` nor
        ``"bits"``.
    """
    st = MeasureSetting(prior, mechanism)
    return float(st.p_u @ pml_per_output(st.prior, st.W))


def f_information_pml_bound(
    prior: PriorLike,
    mechanism: Mechanism | ArrayLike,
    f: Callable[[np.ndarray], np.ndarray],
    f_at_zero: float,
) -> float:
    """[Saeidian-PML] Prop. 8: ``I_f(P_XY) ≤ E_Y[max{f(e^{ℓ(X→Y)}), f(0⁺)}]``.

    Parameters
    ----------
    prior : Prior, JointPrior, DatabasePrior or array_like
        The prior (a plain pmf reads as a single secret).
    mechanism : Mechanism or array_like
        ``W[y, u] = p(u|y)``: row-stochastic, one row per input of the prior.
    f : callable
        Convex, ``f(1) = 0``, vectorised: called once on the 1-D array ``e^{ℓ(X→y)}`` over the
        outputs of positive probability (not checked).
    f_at_zero : float
        ``f(0⁺) = lim_{t→0⁺} f(t)``; must be finite (the proposition's hypothesis).

    Returns
    -------
    float
        The bound, in the unit of ``f``; at least ``f_at_zero``.

    Raises
    ------
    InputError
        If ``f_at_zero`` is not a finite number, ``f`` is not callable or does not return one
        number per entry (field ``f``), or the prior or the mechanism is malformed or the
        mechanism does not have one row per input of the prior.
    """
    f_at_zero = check_number(f_at_zero, "f_at_zero", minimum=-math.inf)
    if not callable(f):
        raise InputError(f"expected a function of an array, got {type(f).__name__} {f!r:.60}", "f")
    st = MeasureSetting(prior, mechanism)
    ell = pml_per_output(st.prior, st.W)[st.u_mask]
    return float(st.pu @ np.maximum(_apply_f(f, np.exp(ell)), f_at_zero))


def total_variation_pml_bound(prior: PriorLike, mechanism: Mechanism | ArrayLike) -> float:
    """[Saeidian-PML] eq. (26) (Prop. 8 with ``f(t) = ½|t − 1|``):
    ``T(X;Y) ≤ ½ E_Y[max{e^{ℓ(X→Y)} − 1, 1}]``.

    Parameters
    ----------
    prior : Prior, JointPrior, DatabasePrior or array_like
        The prior (a plain pmf reads as a single secret).
    mechanism : Mechanism or array_like
        ``W[y, u] = p(u|y)``: row-stochastic, one row per input of the prior.

    Returns
    -------
    float
        The bound, ``≥ ½``.

    Raises
    ------
    InputError
        If the prior or the mechanism is malformed, or the mechanism does not have one row
        per input of the prior.
    """
    return f_information_pml_bound(prior, mechanism, lambda t: 0.5 * np.abs(t - 1.0), 0.5)


def total_variation_maximal_leakage_bound(
    prior: PriorLike, mechanism: Mechanism | ArrayLike
) -> float:
    """[Saeidian-PML] Prop. 9, first claim: ``T(X;Y) ≤ e^{L(P_{Y|X})} − 1`` with ``L`` the
    maximal leakage.

    Parameters
    ----------
    prior : Prior, JointPrior, DatabasePrior or array_like
        The prior (a plain pmf reads as a single secret).
    mechanism : Mechanism or array_like
        ``W[y, u] = p(u|y)``: row-stochastic, one row per input of the prior.

    Returns
    -------
    float
        ``e^L − 1``, ``≥ 0`` (``L`` over the secrets of positive probability).

    Raises
    ------
    InputError
        If the prior or the mechanism is malformed, or the mechanism does not have one row
        per input of the prior.
    """
    st = MeasureSetting(prior, mechanism)
    return float(st.channel.max(axis=0).sum() - 1.0)


def _tail_args(eps, delta, eps_max) -> tuple[float, float, float]:
    eps, eps_max = check_number(eps, "eps"), check_number(eps_max, "eps_max")
    return eps, check_probability(delta, "delta"), eps_max


def total_variation_tail_bound(eps: float, delta: float, eps_max: float) -> float:
    """[Saeidian-PML] Prop. 9: the bound on ``T(X;Y)`` of an (ε,δ)-PML mechanism,
    with ``c = (δ/2)(e^{ε_max} − 1)``:

    * ``ε ≤ ln 3/2``: ``e^ε − 1 + c``;
    * ``ln 3/2 ≤ ε ≤ ln 2``: ``½ + c``;
    * ``ε ≥ ln 2``: ``½(e^ε − 1) + c``.

    Parameters
    ----------
    eps : float
        The PML level ε ≥ 0 (nats).
    delta : float
        The tail probability δ in ``[0, 1]``.
    eps_max : float
        ``−ln min_x p(x)`` (:func:`privopt.measures.epsilon_max`), finite, ``≥ 0`` (nats).

    Returns
    -------
    float
        The bound, ``≥ 0`` (it can exceed 1, where it says nothing).

    Raises
    ------
    InputError
        If ``eps`` or ``eps_max`` is not a finite number ``≥ 0`` (fields ``eps`` and
        ``eps_max``) or ``delta`` is not in ``[0, 1]``.
    """
    eps, delta, eps_max = _tail_args(eps, delta, eps_max)
    tail = 0.5 * delta * np.expm1(eps_max)
    if eps <= np.log(1.5):
        return float(np.expm1(eps) + tail)
    if eps <= np.log(2.0):
        return float(0.5 + tail)
    return float(0.5 * np.expm1(eps) + tail)


def mutual_information_tail_bound(eps: float, delta: float, eps_max: float) -> float:
    """[Saeidian-PML] Prop. 7(2): an (ε,δ)-PML mechanism has ``I(X;Y) ≤ ε + δ ε_max``
    (δ = 0: Prop. 7(1), ``I ≤ ε``).

    Parameters
    ----------
    eps : float
        The PML level ε ≥ 0 (nats).
    delta : float
        δ in ``[0, 1]``.
    eps_max : float
        ``−ln min_x p(x)``, finite, ``≥ 0`` (nats).

    Returns
    -------
    float
        The bound (nats), ``≥ 0``.

    Raises
    ------
    InputError
        If ``eps`` or ``eps_max`` is not a finite number ``≥ 0`` (fields ``eps`` and
        ``eps_max``) or ``delta`` is not in ``[0, 1]``.
    """
    eps, delta, eps_max = _tail_args(eps, delta, eps_max)
    return eps + delta * eps_max
