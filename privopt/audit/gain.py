"""The gain-function view of pointwise maximal leakage ([Saeidian-PML] Section II-B).

An adversary who sees ``y`` picks a guess ``x̂`` in a finite set to maximise a gain
``g(x, x̂) ≥ 0``; the pointwise g-leakage ([Saeidian-PML] eq. (10)) is::

    ℓ_g(X→y) = ln max_x̂ Σ_x g(x, x̂) p(x|y)  /  max_x̂ Σ_x g(x, x̂) p(x).

A gain is a ``|X| × |X̂|`` array (rows: secrets, columns: guesses). This module gives the
g-leakage (:func:`g_leakage_per_output`), the gains of Examples 1–4 (:func:`identity_gain`,
:func:`membership_gain`, :func:`k_tries_gain`, :func:`metric_gain`), both directions of
Theorem 2 (:func:`gain_of_randomized_function`, :func:`randomized_function_of_gain`, with
:func:`randomized_function_leakage_per_output` the U-leakage of eq. (3)) and Corollary 1
(:func:`pml_gain`: a gain whose g-leakage *is* the PML, so the supremum over gains is
attained). All in nats.
"""

from __future__ import annotations

__all__ = [
    "g_leakage_per_output",
    "identity_gain",
    "membership_gain",
    "k_tries_gain",
    "metric_gain",
    "pml_gain",
    "gain_of_randomized_function",
    "randomized_function_leakage_per_output",
    "randomized_function_of_gain",
    "MAX_GUESSES",
]

import itertools
import math
from typing import TYPE_CHECKING

import numpy as np

from privopt.errors import InputError
from privopt.measures import MeasureSetting, with_unit
from privopt.validation import as_positive_int, as_stochastic_matrix, check_number, check_numbers

if TYPE_CHECKING:  # annotations only: nothing more is imported at run time
    from numpy.typing import ArrayLike

    from privopt.model import Mechanism
    from privopt.model.types import PriorLike

#: Largest guess space built by :func:`membership_gain` / :func:`k_tries_gain`.
MAX_GUESSES = 2**20


def _as_gain(gain, n_secrets: int) -> np.ndarray:
    g = check_numbers(gain, "gain", minimum=-math.inf)
    if g.ndim != 2 or g.shape[0] != n_secrets or g.shape[1] == 0:
        raise InputError(
            f"must be a |X| × |X̂| array with |X| = {n_secrets} rows, got shape {g.shape}", "gain"
        )
    if not np.isfinite(g).all() or (g < 0).any():
        raise InputError("entries must be finite and ≥ 0 (a gain g: X × X̂ → R+)", "gain")
    return g


def _as_kernel(kernel) -> np.ndarray:
    """A row-stochastic kernel ``P_{U|X}`` (a :class:`~privopt.model.Mechanism` or a matrix),
    refused under the field ``kernel``."""
    from privopt.model import Mechanism

    if isinstance(kernel, Mechanism):
        return kernel.matrix
    return as_stochastic_matrix(kernel, "kernel")


def _posteriors(st: MeasureSetting) -> np.ndarray:
    """``p(x|y)`` on the secret support (rows) and the outputs of positive mass (columns)."""
    return st.ps[:, None] * st.ch / st.pu[None, :]


@with_unit
def g_leakage_per_output(
    prior: PriorLike, mechanism: Mechanism | ArrayLike, gain: ArrayLike
) -> np.ndarray:
    """Pointwise g-leakage ``ℓ_g(X→y)`` of every output ([Saeidian-PML] eq. (10)).

    Parameters
    ----------
    prior : Prior, JointPrior, DatabasePrior or array_like
        The prior (a plain pmf reads as a single secret).
    mechanism : Mechanism or array_like
        ``W[y, u] = p(u|y)``: row-stochastic, one row per input of the prior.
    gain : array_like
        ``g[x, x̂] ≥ 0`` (rows: every secret, columns: guesses), with
        ``max_x̂ Σ_x g(x, x̂) p(x) > 0``. Finite, shape ``(|X|, |X̂|)`` with ``|X̂| ≥ 1``.

    Returns
    -------
    numpy.ndarray
        ``ℓ_g(X→y)`` per output (nan where ``p(y) = 0``). Can be negative (the identity gain
        gives the dynamic min-entropy leakage, eq. (11)); always ``≤ ℓ(X→y)`` (Corollary 1).
        One entry per column of the mechanism, in nats; ``−inf`` where every guess gains 0
        after ``y``.

    Raises
    ------
    InputError
        If the gain has the wrong shape, negative entries, or no guess with positive
        expected gain a priori; if the prior or the mechanism is malformed or the mechanism
        does not have one row per input of the prior; or if ``unit`` is neither ``"nats"``
        nor ``"bits"``.
    """
    st = MeasureSetting(prior, mechanism)
    g = _as_gain(gain, st.p.size)[st.s_mask]
    before = float((st.ps @ g).max())
    if before <= 0:
        raise InputError("every guess has expected gain 0 under the prior", "gain")
    after = (_posteriors(st).T @ g).max(axis=1)
    out = np.full(st.p_u.size, np.nan)
    with np.errstate(divide="ignore"):
        out[st.u_mask] = np.log(after / before)
    return out


def identity_gain(size: int) -> np.ndarray:
    """``g(x, x̂) = 1[x = x̂]`` ([Saeidian-PML] Example 1): its g-leakage is the dynamic
    min-entropy leakage ``ln max_x p(x|y) / max_x p(x)`` (eq. (11), with the log).

    Parameters
    ----------
    size : int
        ``|X|``, an integer ``≥ 1`` (an integral float is accepted).

    Returns
    -------
    numpy.ndarray
        The ``|X| × |X|`` identity (float).

    Raises
    ------
    InputError
        If ``size`` is not a positive integer.
    """
    return np.eye(_positive(size, "size"))


def membership_gain(membership: ArrayLike) -> np.ndarray:
    """The membership / group-privacy gain of [Saeidian-PML] Example 2.

    The adversary guesses, for each of ``k`` individuals, whether their data is in the
    database, and gains one per correct guess: ``X̂ = {0,1}^k`` and
    ``g(x, x̂) = Σ_j 1[x̂_j = membership[x, j]]``. With ``k = 1`` it is the binary gain
    ``1[x̂ = i]`` for ``x ∈ 𝒳_i``.

    Parameters
    ----------
    membership : array_like of bool
        ``|X| × k``: ``membership[x, j]`` is true when database ``x`` holds individual j.
        Entries are read as booleans (non-zero is true); a 1-D array is read as ``k = 1``.
        ``2^k`` may not exceed :data:`MAX_GUESSES`.

    Returns
    -------
    numpy.ndarray
        ``|X| × 2^k`` gain; column ``c`` is the guess whose bit ``j`` (most significant
        first) says "individual j is in". Entries are the numbers of correct guesses, in
        ``0 … k``.

    Raises
    ------
    InputError
        If ``membership`` is not a 1-D or 2-D array with at least one row and one column,
        or ``2^k`` exceeds :data:`MAX_GUESSES`.
    """
    mem = np.asarray(membership)
    if mem.ndim == 1:
        mem = mem[:, None]
    if mem.ndim != 2 or 0 in mem.shape:
        raise InputError(
            f"must be a |X| × k array of booleans, got shape {mem.shape}", "membership"
        )
    if 2 ** mem.shape[1] > MAX_GUESSES:
        raise InputError(f"k = {mem.shape[1]} gives more than {MAX_GUESSES} guesses", "membership")
    guesses = np.array(list(itertools.product([0, 1], repeat=mem.shape[1])), dtype=bool)
    return (mem.astype(bool)[:, None, :] == guesses[None, :, :]).sum(axis=2).astype(float)


def k_tries_gain(size: int, k: int) -> np.ndarray:
    """The k-tries gain of [Saeidian-PML] Example 3: ``g(x, x̂) = 1[x ∈ x̂]`` with ``x̂`` a
    set of at most ``k`` guesses (only sets of exactly ``min(k, |X|)`` are listed: a larger
    set never gains less).

    Parameters
    ----------
    size : int
        ``|X|``, an integer ``≥ 1``.
    k : int
        The number of tries, ``k ≥ 1`` (values above ``|X|`` act as ``|X|``).

    Returns
    -------
    numpy.ndarray
        ``|X| × C(|X|, k)`` gain; columns follow :func:`itertools.combinations`. Entries 0
        or 1.

    Raises
    ------
    InputError
        If ``size`` or ``k`` is not a positive integer, or ``C(|X|, k)`` exceeds
        :data:`MAX_GUESSES`.
    """
    size, k = _positive(size, "size"), _positive(k, "k")
    k = min(k, size)
    if math.comb(size, k) > MAX_GUESSES:
        raise InputError(f"C({size}, {k}) guesses exceed {MAX_GUESSES}", "k")
    sets = list(itertools.combinations(range(size), k))
    out = np.zeros((size, len(sets)))
    for j, s in enumerate(sets):
        out[list(s), j] = 1.0
    return out


def metric_gain(distance: ArrayLike, scale: float = 1.0) -> np.ndarray:
    """``g(x, x̂) = exp(−ρ(x, x̂)/scale)`` for a metric ρ ([Saeidian-PML] Example 4).

    Parameters
    ----------
    distance : array_like
        ``ρ[x, x̂] ≥ 0``: a 2-D array of finite numbers (rows: secrets, columns: guesses).
    scale : float
        A positive length scale, finite, in the unit of ``distance`` (default 1).

    Returns
    -------
    numpy.ndarray
        The gain, of the shape of ``distance``, entries in ``[0, 1]`` (1 at distance 0).

    Raises
    ------
    InputError
        If ``distance`` is not a non-empty 2-D array of finite numbers ``≥ 0`` or ``scale``
        is not a finite number ``> 0``.
    """
    rho = check_numbers(distance, "distance")
    if rho.ndim != 2 or 0 in rho.shape or not np.isfinite(rho).all():
        raise InputError("must be a non-empty 2-d array of finite distances ≥ 0", "distance")
    scale = check_number(scale, "scale", strict=True)
    return np.exp(-rho / scale)


def pml_gain(prior: PriorLike) -> np.ndarray:
    """A gain whose g-leakage equals the PML: ``g(x, x̂) = 1[x = x̂]/p(x)`` on ``supp p``.

    [Saeidian-PML] Corollary 1 (``ℓ(X→y) = sup_g ℓ_g(X→y)``): with this gain the
    denominator of eq. (10) is ``max_x 1 = 1`` and the numerator ``max_x p(x|y)/p(x)``, so
    the supremum is attained.

    Parameters
    ----------
    prior : Prior, JointPrior, DatabasePrior or array_like
        The prior of the secret (a plain pmf reads as a single secret).

    Returns
    -------
    numpy.ndarray
        ``|X| × |X|`` diagonal gain (rows of zero-mass secrets are 0), ``|X|`` the number of
        secrets.

    Raises
    ------
    InputError
        If the prior is malformed.
    """
    from privopt.model import as_prior

    p = as_prior(prior).secret_probs
    diag = np.zeros(p.size)
    diag[p > 0] = 1.0 / p[p > 0]
    return np.diag(diag)


def gain_of_randomized_function(kernel: ArrayLike) -> np.ndarray:
    """Theorem 2 of [Saeidian-PML], first direction: a randomized function ``U`` of ``X``
    (kernel ``P_{U|X}``) is the gain ``g_U(x, u) = P_{U|X=x}(u)``, and
    ``ℓ_U(X→y) = ℓ_{g_U}(X→y)``.

    Parameters
    ----------
    kernel : array_like
        Row-stochastic ``|X| × |U|`` (finite, non-negative, rows summing to 1 within 1e-9).

    Returns
    -------
    numpy.ndarray
        The gain (the kernel itself, validated): a new ``|X| × |U|`` array.

    Raises
    ------
    InputError
        If ``kernel`` is not row-stochastic (field ``kernel``).
    """
    return _as_kernel(kernel).copy()


@with_unit
def randomized_function_leakage_per_output(
    prior: PriorLike, mechanism: Mechanism | ArrayLike, kernel: ArrayLike
) -> np.ndarray:
    """``ℓ_U(X→y) = ln max_u P_{U|Y=y}(u) / max_u P_U(u)`` ([Saeidian-PML] eq. (3)) for a
    randomized function ``U`` of ``X`` with kernel ``P_{U|X}`` (Markov chain ``U − X − Y``).

    Parameters
    ----------
    prior : Prior, JointPrior, DatabasePrior or array_like
        The prior of the secret; a plain pmf (1-D, non-negative, summing to 1) is read as a
        single secret.
    mechanism : Mechanism or array_like
        Row-stochastic ``W[y, u] = p(u|y)``: one row per input of the prior, one column per
        output.
    kernel : array_like
        ``P_{U|X}``, ``|X| × |U|`` row-stochastic.

    Returns
    -------
    numpy.ndarray
        Per output (nan where ``p(y) = 0``): one entry per column of the mechanism, in
        nats, each at most the PML ``ℓ(X→y)``; can be negative.

    Raises
    ------
    InputError
        If the prior or the mechanism is malformed, the mechanism does not have one row per
        input of the prior, ``kernel`` is not row-stochastic or has not one row per secret
        (field ``kernel``), or ``unit`` is neither ``"nats"`` nor ``"bits"``.
    """
    st = MeasureSetting(prior, mechanism)
    k = _as_kernel(kernel)
    if k.shape[0] != st.p.size:
        raise InputError(f"needs {st.p.size} rows (one per secret), got {k.shape[0]}", "kernel")
    k = k[st.s_mask]
    out = np.full(st.p_u.size, np.nan)
    with np.errstate(divide="ignore"):
        out[st.u_mask] = np.log((_posteriors(st).T @ k).max(axis=1) / (st.ps @ k).max())
    return out


def randomized_function_of_gain(
    prior: PriorLike, mechanism: Mechanism | ArrayLike, gain: ArrayLike, output: int
) -> np.ndarray:
    """Theorem 2 of [Saeidian-PML], converse: a randomized function ``U_g`` of ``X`` with
    ``ℓ_{U_g}(X→y) = ℓ_g(X→y)`` at the given output ``y``.

    A construction simpler than the paper's Appendix A (same statement): with
    ``x̂_V`` the best guess after ``y``, ``x̂_W`` the best guess a priori and the gain scaled
    to ``c·g ≤ 1/2``, ``U_g`` has the columns ``c·g(·, x̂_V)``, ``c·g(·, x̂_W)`` and ``N``
    equal filler columns ``r/N`` with ``r = 1 − c·g(·, x̂_V) − c·g(·, x̂_W)`` (one column
    when ``x̂_V = x̂_W``). With ``N`` large enough that a filler column is never the most
    likely one (neither after ``y`` nor a priori), ``max_u P(u|y) = c·max_x̂ E[g|y]`` and
    ``max_u P(u) = c·max_x̂ E[g]``, so the two leakages agree.

    Parameters
    ----------
    prior, mechanism
        As in :func:`randomized_function_leakage_per_output`.
    gain : array_like
        ``g[x, x̂] ≥ 0``: finite, shape ``(|X|, |X̂|)`` (rows: every secret).
    output : int
        The output ``y`` (with ``p(y) > 0`` and ``max_x̂ E[g|y] > 0``): a column index of
        the mechanism.

    Returns
    -------
    numpy.ndarray
        The kernel ``P_{U_g|X}``, ``|X| × |U|`` row-stochastic, with ``|U| = N + 2``
        (``N + 1`` when ``x̂_V = x̂_W``).

    Raises
    ------
    InputError
        If ``p(y) = 0``, the gain is 0 in expectation after ``y``, or the construction
        would need more than :data:`MAX_GUESSES` columns; also if ``y`` is not an output
        index, the gain has the wrong shape or negative entries, or the prior or the
        mechanism is malformed.
    """
    st = MeasureSetting(prior, mechanism)
    g = _as_gain(gain, st.p.size)
    y = as_positive_int(output, "output", minimum=0)
    if not (0 <= y < st.p_u.size) or st.p_u[y] <= 0:
        raise InputError(f"must be an output of positive probability, got {output}", "output")
    post = np.zeros(st.p.size)
    post[st.s_mask] = st.ps * st.channel[:, y] / st.p_u[y]
    best_after, best_before = int(np.argmax(post @ g)), int(np.argmax(st.p @ g))
    num, den = float(post @ g[:, best_after]), float(st.p @ g[:, best_before])
    if num <= 0 or den <= 0:
        raise InputError("the gain is 0 in expectation (after y or a priori)", "gain")
    c = 0.5 / max(float(g.max()), 1e-300)
    cols = [c * g[:, best_after]] + ([c * g[:, best_before]] if best_before != best_after else [])
    rest = 1.0 - np.sum(cols, axis=0)
    rest = np.clip(rest, 0.0, None)
    need = max(float(post @ rest) / (c * num), float(st.p @ rest) / (c * den))
    n_fill = max(1, math.ceil(need * (1 + 1e-9)))
    if n_fill + len(cols) > MAX_GUESSES:
        raise InputError(f"the construction needs {n_fill} filler outputs", "gain")
    kernel = np.column_stack(cols + [rest / n_fill] * n_fill)
    return kernel / kernel.sum(axis=1, keepdims=True)


def _positive(value, field: str) -> int:
    """An integer ``≥ 1`` (an integral float such as ``3.0`` is accepted)."""
    if isinstance(value, (float, np.floating)):
        number = check_number(value, field, minimum=1.0)
        if number != math.floor(number):
            raise InputError(f"must be a positive integer, got {value!r}", field)
        value = int(number)
    return as_positive_int(value, field, minimum=1)
