"""Input validation shared by the model classes (no solver, no measures)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from privopt.errors import InputError

#: Tolerance on the total mass of a pmf and on row sums of a mechanism.
SUM_TOLERANCE = 1e-9


def _rounding_slack(size: int) -> float:
    """How far from 1 the float sum of ``size`` normalised entries may be from rounding alone.

    Sums this close to 1 are left alone: dividing by them again would only shuffle the last
    bits, so validation would not be idempotent (a JSON round trip would change the matrix).
    """
    return 2.0 * size * float(np.finfo(float).eps)


def _refuse_non_numbers(values, field: str, ndim: int) -> None:
    """Refuse strings (``"0.5"``), bytes and booleans, which numpy would read as numbers."""
    what = "a list of numbers" if ndim == 1 else "a matrix (list of rows) of numbers"
    if isinstance(values, (str, bytes)):
        raise InputError(f"expected {what}, got the string {values!r:.60}", field)
    if isinstance(values, np.ndarray):
        kind = values.dtype.kind
        if kind in "iuf":
            return
        bad = _first_non_number(values.tolist()) if kind in "OUSb" else None
    else:
        bad = _first_non_number(values)
    if bad is not None:
        shown = f"the string {bad!r:.60}" if isinstance(bad, (str, bytes)) else repr(bad)
        raise InputError(
            f"expected {what}, got {shown}: write numbers, not strings or true/false", field
        )


_NUMBER_TYPES = {float, int, np.float64, np.float32, np.int64, np.int32}


def _first_non_number(values, depth: int = 0):
    """The first string, bytes or boolean in nested lists / tuples (``None`` if there is
    none); arrays of numbers are skipped at C speed."""
    if isinstance(values, (str, bytes, bool, np.bool_)):
        return values
    if isinstance(values, np.ndarray):
        return None if values.dtype.kind in "iuf" else _first_non_number(values.tolist(), depth)
    if depth > 2 or not isinstance(values, (list, tuple)):
        return None
    if set(map(type, values)) <= _NUMBER_TYPES:  # the common case, at C speed
        return None
    for value in values:
        if isinstance(value, (float, int)) and not isinstance(value, bool):
            continue
        bad = _first_non_number(value, depth + 1)
        if bad is not None:
            return bad
    return None


def as_real_array(values, field: str, ndim: int, copy: bool = True) -> np.ndarray:
    """Convert ``values`` to a float array of ``ndim`` dimensions, finite, or raise (strings
    and booleans are not numbers here, even where numpy would read them as such).

    Parameters
    ----------
    values : array_like
        Numbers: a flat list for ``ndim=1``, a list of equally long rows for ``ndim=2``.
    field : str
        The key named in error messages (e.g. ``"prior.probs"``).
    ndim : int
        The number of dimensions required (1 or 2).
    copy : bool
        ``False``: a float array of the right shape is kept as it is (for the builders that
        made it and hand it over, e.g. a map's distances: no second ``k × k`` copy).

    Returns
    -------
    numpy.ndarray
        A float array of ``ndim`` dimensions (new unless ``copy=False``), non-empty, every
        entry finite.

    Raises
    ------
    InputError
        If ``values`` holds strings, bytes or booleans, cannot be read as numbers, has
        another number of dimensions, is empty, or has an infinite or NaN entry (or one
        beyond the float range).
    """
    _refuse_non_numbers(values, field, ndim)
    try:
        array = np.array(values, dtype=float, copy=True if copy else None)
    except OverflowError:
        raise InputError(
            "an entry is too large to compute with (above ~1.8e308): every entry must be a "
            "finite number",
            field,
        ) from None
    except (TypeError, ValueError) as exc:
        raise InputError(
            f"expected {'a list of numbers' if ndim == 1 else 'a matrix (list of rows) of numbers'}"
            f", got {type(values).__name__} that cannot be read as numbers ({exc})",
            field,
        ) from None
    if array.ndim != ndim:
        what = "a flat list of numbers" if ndim == 1 else "a matrix (a list of equally long rows)"
        raise InputError(f"expected {what}, got an array of shape {array.shape}", field)
    if array.size == 0 or 0 in array.shape:
        raise InputError("is empty: give at least one entry", field)
    bad = ~np.isfinite(array)
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        raise InputError(
            f"entry {where if ndim > 1 else where[0]} is {array[where]}: every entry must be a "
            "finite number",
            field,
        )
    return array


def check_nonnegative(array: np.ndarray, field: str) -> None:
    """Raise unless every entry of ``array`` is ``≥ 0``.

    Parameters
    ----------
    array : numpy.ndarray
        A float array, of any number of dimensions.
    field : str
        The key named in the error message.

    Raises
    ------
    InputError
        If an entry is negative; the message gives the first one and its index.
    """
    if (array < 0).any():
        where = tuple(int(i) for i in np.argwhere(array < 0)[0])
        raise InputError(
            f"entry {where if array.ndim > 1 else where[0]} is {array[where]:.6g} < 0: "
            "every entry must be non-negative",
            field,
        )


def as_pmf(values, field: str, tol: float = SUM_TOLERANCE) -> np.ndarray:
    """Validate a probability vector; return it renormalised to sum to 1 (idempotent).

    Parameters
    ----------
    values : array_like
        A flat list of finite, non-negative numbers.
    field : str
        The key named in error messages.
    tol : float
        How far from 1 the sum may be (default :data:`SUM_TOLERANCE`, 1e-9).

    Returns
    -------
    numpy.ndarray
        The pmf as a float array, divided by its sum unless that sum is already 1 up to
        rounding.

    Raises
    ------
    InputError
        If ``values`` is not such a list (see :func:`as_real_array`), has a negative entry,
        or sums to more than ``tol`` away from 1.
    """
    pmf = as_real_array(values, field, ndim=1)
    check_nonnegative(pmf, field)
    total = float(pmf.sum())
    if abs(total - 1.0) > tol:
        raise InputError(
            f"sums to {total:.12g}, off by {total - 1:+.3g}: probabilities must sum to 1 "
            f"(within {tol:g}); divide by the total or fix the entries",
            field,
        )
    return pmf if abs(total - 1.0) <= _rounding_slack(pmf.size) else pmf / total


def normalised_weights(weights: np.ndarray) -> np.ndarray:
    """Non-negative finite weights divided by their total, without overflow.

    The weights are first divided by their largest entry (exact for powers of two, and
    never above 1), so that a total of huge counts such as ``1e308 + 1e308`` cannot overflow
    to ``inf`` (which would turn every probability into 0).

    Parameters
    ----------
    weights : numpy.ndarray
        Finite, non-negative, not all zero (checked by the caller).

    Returns
    -------
    numpy.ndarray
        Same shape, summing to 1.
    """
    top = float(weights.max())
    scaled = weights / top
    return scaled / scaled.sum()


def as_stochastic_matrix(values, field: str, tol: float = SUM_TOLERANCE) -> np.ndarray:
    """Validate a row-stochastic matrix; return it with rows renormalised (idempotent).

    Parameters
    ----------
    values : array_like
        A matrix (list of equally long rows) of finite, non-negative numbers.
    field : str
        The key named in error messages.
    tol : float
        How far from 1 each row sum may be (default :data:`SUM_TOLERANCE`, 1e-9).

    Returns
    -------
    numpy.ndarray
        The matrix as a new float array; each row whose sum is not 1 up to rounding is
        divided by its sum.

    Raises
    ------
    InputError
        If ``values`` is not such a matrix (see :func:`as_real_array`), has a negative
        entry, or has a row summing to more than ``tol`` away from 1.
    """
    matrix = as_real_array(values, field, ndim=2)
    check_nonnegative(matrix, field)
    sums = matrix.sum(axis=1)
    off = np.abs(sums - 1.0)
    if (off > tol).any():
        row = int(np.argmax(off))
        raise InputError(
            f"row {row} sums to {sums[row]:.12g}, off by {sums[row] - 1:+.3g}: every row is a "
            f"conditional distribution and must sum to 1 (within {tol:g})",
            field,
        )
    rescale = off > _rounding_slack(matrix.shape[1])
    matrix[rescale] /= sums[rescale, None]
    return matrix


def as_labels(labels: Sequence | None, size: int, field: str) -> tuple[str, ...]:
    """Validate labels (default ``"0", "1", ...``): right length, distinct.

    Parameters
    ----------
    labels : sequence or None
        One label per symbol (each converted with :class:`str`), or ``None`` for the
        default ``"0", "1", …, str(size − 1)``.
    size : int
        The number of symbols of the alphabet.
    field : str
        The key named in error messages.

    Returns
    -------
    tuple of str
        ``size`` distinct labels.

    Raises
    ------
    InputError
        If ``labels`` is a single string or not iterable, does not have ``size`` entries, or
        has two equal labels.
    """
    if labels is None:
        return tuple(str(i) for i in range(size))
    if isinstance(labels, str):
        raise InputError("expected a list of labels, got a single string", field)
    try:
        labels = tuple(str(label) for label in labels)
    except TypeError:
        raise InputError(
            f"expected a list of labels, got {type(labels).__name__} {labels!r}", field
        ) from None
    if len(labels) != size:
        raise InputError(
            f"has {len(labels)} labels but the alphabet has {size} symbols: give one label per "
            "symbol",
            field,
        )
    if len(set(labels)) != len(labels):
        seen: set[str] = set()
        duplicate = next(label for label in labels if label in seen or seen.add(label))
        raise InputError(f"label {duplicate!r} appears twice: labels must be distinct", field)
    return labels


def as_positive_int(value, field: str, minimum: int = 1) -> int:
    """Validate an integer ``≥ minimum`` (booleans and floats such as ``2.0`` are refused).

    Parameters
    ----------
    value : int
        A Python or numpy integer.
    field : str
        The key named in error messages.
    minimum : int
        The least value allowed (default 1).

    Returns
    -------
    int
        ``value`` as a Python :class:`int`.

    Raises
    ------
    InputError
        If ``value`` is not an integer (or is a boolean), or is below ``minimum``.
    """
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise InputError(f"expected an integer >= {minimum}, got {value!r}", field)
    if value < minimum:
        raise InputError(f"expected an integer >= {minimum}, got {value}", field)
    return int(value)


def as_number(value, field: str, message: str) -> float:
    """``value`` as a float (a boolean is not a number here; NaN and infinity pass, for the
    caller to judge).

    Parameters
    ----------
    value : object
        A number, or text that reads as one.
    field : str
        The key named in the error.
    message : str
        The error's message.

    Returns
    -------
    float

    Raises
    ------
    InputError
        Code ``"not_a_number"``, if ``value`` is a boolean or does not read as a number.
    """
    if not isinstance(value, bool):
        try:
            return float(value)
        except (TypeError, ValueError):
            pass
    raise InputError(message, field, code="not_a_number")
