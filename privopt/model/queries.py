"""Distortions of a released query answer on databases ``x ∈ Dⁿ`` (``|D| = m``).

The mechanism sees the database and releases an answer ``u`` of a query ``q``; the
distortion is the loss of ``u`` against the true answer, ``d(x, u) = loss(q(x), u)``:

``count``
    ``q(x) = #{i : x_i ∈ match}`` (``match``: row values, default every value but the
    first; with ``D = {0, 1}`` the number of ones); outputs ``0, 1, …, n``.
``sum``
    ``q(x) = Σ_i v(x_i)`` (``values``: one number per row value, default ``0, …, m−1``);
    outputs the distinct sums reachable.
``histogram``
    ``q(x) = (c_0, …, c_{m−1})``, the number of rows holding each value; outputs every
    histogram of ``n`` rows (``C(n+m−1, m−1)`` of them).

Losses: ``absolute`` (``|q(x) − u|``; the L1 distance for histograms), ``squared``
(``(q(x) − u)²``; squared L2 for histograms) and ``hamming`` (``[q(x) ≠ u]``). The counting
query with the absolute loss is the setting of [Ghosh-Roughgarden-Sundararajan].
"""

from __future__ import annotations

__all__ = ["QUERIES", "QUERY_LOSSES", "query_answers", "query_distortion"]

from collections.abc import Sequence
from itertools import combinations

import numpy as np

from privopt.errors import InputError, close_matches
from privopt.model.distortion import Distortion
from privopt.model.prior import database_digits

QUERIES = ("count", "sum", "histogram")
QUERY_LOSSES = ("absolute", "squared", "hamming")
#: Largest number of databases ``mⁿ`` a query distortion is built for (dense rows).
MAX_QUERY_DATABASES = 2**16


def _symbol_index(value, symbols: Sequence[str], m: int, field: str) -> int:
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        if 0 <= int(value) < m:
            return int(value)
    elif str(value) in symbols:
        return list(symbols).index(str(value))
    raise InputError(
        f"{value!r} is not a row value: give one of {', '.join(symbols)} or an index 0..{m - 1}",
        field,
    )


def _histograms(m: int, n: int) -> np.ndarray:
    """Every ``(c_0, …, c_{m−1})`` with ``Σ c = n`` (stars and bars, lexicographic)."""
    out = []
    for bars in combinations(range(n + m - 1), m - 1):
        edges = (-1, *bars, n + m - 1)
        out.append([edges[i + 1] - edges[i] - 1 for i in range(m)])
    return np.array(out, dtype=float)


def query_answers(
    m: int,
    n: int,
    query: str,
    *,
    match: Sequence | None = None,
    values: Sequence[float] | None = None,
    symbols: Sequence[str] | None = None,
    field: str = "distortion",
) -> tuple[np.ndarray, np.ndarray]:
    """The true answers ``q(x)`` of every database and the output alphabet.

    Parameters
    ----------
    m, n : int
        Row alphabet size and number of rows.
    query : {"count", "sum", "histogram"}
    match : sequence, optional
        ``count``: the row values counted (symbols or indices).
    values : sequence of float, optional
        ``sum``: the number of each row value.
    symbols : sequence of str, optional
        Names of the row values (default ``"0", …``).
    field : str
        The section named in messages.

    Returns
    -------
    answers : numpy.ndarray
        ``mⁿ × dim`` (``dim = 1`` except for histograms).
    outputs : numpy.ndarray
        ``|U| × dim``.
    """
    if query not in QUERIES:
        raise InputError(
            f"unknown query {query!r}; valid: {', '.join(QUERIES)}",
            f"{field}.query",
            suggestions=close_matches(query, QUERIES),
        )
    if m**n > MAX_QUERY_DATABASES:
        raise InputError(
            f"{m}^{n} databases: a query distortion is built densely up to "
            f"{MAX_QUERY_DATABASES} databases",
            f"{field}.query",
        )
    symbols = [str(i) for i in range(m)] if symbols is None else [str(s) for s in symbols]
    digits = database_digits(m, n)
    if query != "count" and match is not None:
        raise InputError('only used with query = "count"', f"{field}.match")
    if query != "sum" and values is not None:
        raise InputError('only used with query = "sum"', f"{field}.values")
    if query == "count":
        chosen = list(range(1, m)) if match is None else list(match)
        if not chosen:
            raise InputError("count at least one row value", f"{field}.match")
        idx = {_symbol_index(v, symbols, m, f"{field}.match") for v in chosen}
        mask = np.isin(digits, sorted(idx))
        answers = mask.sum(axis=1).astype(float)[:, None]
        outputs = np.arange(n + 1, dtype=float)[:, None]
    elif query == "sum":
        vals = np.arange(m, dtype=float) if values is None else np.asarray(values, dtype=float)
        if vals.shape != (m,) or not np.isfinite(vals).all():
            raise InputError(
                f"give one finite number per row value ({m} of them)", f"{field}.values"
            )
        answers = vals[digits].sum(axis=1)[:, None]
        outputs = np.unique(np.round(answers[:, 0], 12))[:, None]
    else:
        answers = np.stack([(digits == v).sum(axis=1) for v in range(m)], axis=1).astype(float)
        outputs = _histograms(m, n)
    return answers, outputs


def query_distortion(
    m: int,
    n: int,
    query: str,
    loss: str = "absolute",
    *,
    match: Sequence | None = None,
    values: Sequence[float] | None = None,
    symbols: Sequence[str] | None = None,
    field: str = "distortion",
) -> Distortion:
    """``d(x, u) = loss(q(x), u)`` for a query on ``Dⁿ`` (module docstring).

    Parameters
    ----------
    m, n : int
    query : {"count", "sum", "histogram"}
    loss : {"absolute", "squared", "hamming"}
    match, values, symbols, field
        As in :func:`query_answers`.

    Returns
    -------
    Distortion
        ``mⁿ × |U|``, with the answers as output labels.
    """
    if loss not in QUERY_LOSSES:
        raise InputError(
            f"unknown loss {loss!r}; valid: {', '.join(QUERY_LOSSES)}",
            f"{field}.loss",
            suggestions=close_matches(loss, QUERY_LOSSES),
        )
    answers, outputs = query_answers(
        m, n, query, match=match, values=values, symbols=symbols, field=field
    )
    diff = answers[:, None, :] - outputs[None, :, :]
    if loss == "absolute":
        matrix = np.abs(diff).sum(axis=2)
    elif loss == "squared":
        matrix = (diff**2).sum(axis=2)
    else:
        matrix = (np.abs(diff).sum(axis=2) > 1e-12).astype(float)
    if outputs.shape[1] == 1:
        labels = [f"{v:g}" for v in outputs[:, 0]]
    else:
        labels = ["(" + ",".join(f"{v:g}" for v in row) + ")" for row in outputs]
    return Distortion(matrix, output_labels=labels)
