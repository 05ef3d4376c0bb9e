"""The one validation layer: every request-level argument is checked here, once.

The model classes validate their own data (a pmf sums to 1, a distortion is non-negative);
this module validates how they are *combined* into a request, and the scalar settings
around it. The API, the problem files, the command line, the measures and every method call
these functions, so a given mistake gets the same message wherever it is made. Each function
raises :class:`~privopt.errors.InputError` naming the field (``privacy.epsilon``,
``privacy.neighbors``, …) and the fix; the file reader prefixes the file name.

The array checks the model classes run on their own data (``as_pmf``,
``as_stochastic_matrix``, ``as_labels``, ``as_positive_int``, ``as_real_array``) live in the
model package, below this module; they are re-exported here so that the modules above the
model (measures, closed forms, files, …) import every check from one place.

This module imports only :mod:`privopt.model`, :mod:`privopt.errors` and
:mod:`privopt.resources`.
"""

from __future__ import annotations

__all__ = [
    "MODES",
    "NEIGHBOR_NAMES",
    "DISTORTION_NAMES",
    "LEVEL_TOL",
    "DISTORTION_TOL",
    "OBJECTIVE_RTOL",
    "DISTORTION_FLOOR",
    "level_tolerance",
    "MIN_TOLERANCE",
    "MAX_TOLERANCE",
    "check_number",
    "check_level",
    "check_budget",
    "check_mode",
    "check_tolerance",
    "check_time_limit",
    "check_flag",
    "check_callable",
    "check_prior",
    "check_probability",
    "check_numbers",
    "default_neighbors",
    "resolve_neighbors",
    "neighbor_pairs",
    "secret_index",
    "as_distortion",
    "check_extra_distortions",
    # the array checks of the model classes, for the modules above the model
    "as_real_array",
    "as_pmf",
    "as_stochastic_matrix",
    "as_labels",
    "as_positive_int",
]

import math
import numbers
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from privopt.errors import InputError, close_matches
from privopt.model import (
    DatabasePrior,
    Distortion,
    JointPrior,
    NeighborRelation,
    Prior,
    all_pairs,
    as_prior,
    hamming_neighbors,
)
from privopt.model._validate import (
    _refuse_non_numbers,
    as_labels,
    as_pmf,
    as_positive_int,
    as_real_array,
    as_stochastic_matrix,
)
from privopt.resources import format_bytes, max_memory

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable
    from typing import Any

    from privopt.model.types import DistortionLike, PriorLike

#: The two modes of a design request.
MODES = ("epsilon", "max_distortion")
#: Named neighbour relations.
NEIGHBOR_NAMES = ("hamming", "all")
#: Named distortions (besides a matrix or a :class:`~privopt.model.Distortion`).
DISTORTION_NAMES = ("hamming", "absolute", "squared")
#: Range of tolerances accepted for a line search or a solver (below: round-off; above: no
#: longer an answer to the question asked).
MIN_TOLERANCE = 1e-14
MAX_TOLERANCE = 0.1
#: Absolute slack on a re-measured level, per unit of ``1 + ε`` (nats): the solve driver's
#: feasibility test, also used by methods that check their own answers.
LEVEL_TOL = 1e-9
#: Absolute slack on a re-measured distortion, per unit of ``1 + D``: the solve driver's
#: feasibility test of a budget.
DISTORTION_TOL = 1e-7
#: Largest relative gap (objective − lower bound)/(floor + |objective|) for status
#: ``optimal`` (the floor: :meth:`privopt.request.DesignRequest.objective_floor`); also the gap at
#: which methods that watch their own certificate know the driver will accept it.
OBJECTIVE_RTOL = 1e-6
#: The floor of a distortion objective's scale, per unit of the distortion's largest entry:
#: an answer is certified when ``gap ≤ OBJECTIVE_RTOL·(|objective| + max d / 8)``. The same
#: for every unit of ``d``; for a distortion whose largest entry is below 8 it is at least
#: as strict as the absolute floor of 1 used before (a floor of ``max d`` itself let an
#: answer 70 times the optimum of 1.9e-8 pass on ``d = |i − j|``, 5 symbols, max d = 4).
DISTORTION_FLOOR = 0.125


def level_tolerance(eps: float) -> float:
    """The slack accepted on a level ε.

    Parameters
    ----------
    eps : float
        The requested level (nats).

    Returns
    -------
    float
        ``LEVEL_TOL·(1 + |ε|)``: a re-measured level up to ``ε`` plus this is feasible.
    """
    return LEVEL_TOL * (1.0 + abs(eps))


def check_number(
    value: object,
    field: str,
    *,
    allow_inf: bool = False,
    minimum: float = 0.0,
    strict: bool = False,
) -> float:
    """A real number ``≥ minimum`` (``> minimum`` with ``strict``), as a float.

    Parameters
    ----------
    value : object
        What the caller gave.
    field : str
        The argument or file key, for the message.
    allow_inf : bool
        Whether ``+inf`` is accepted (default ``False``; ``-inf`` never is).
    minimum : float
        The least accepted value (default 0).
    strict : bool
        Require ``value > minimum`` (default ``False``).

    Returns
    -------
    float
        ``value`` as a float: ``≥ minimum`` (``> minimum`` with ``strict``), finite unless
        ``allow_inf``.

    Raises
    ------
    InputError
        For booleans, strings, ``nan``, numbers out of range or too large for a float.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise InputError(f"expected a number, got {type(value).__name__} {value!r}", field)
    try:
        number = float(value)
    except OverflowError:
        raise InputError(
            f"the number {value} is too large to compute with (above ~1.8e308)", field
        ) from None
    if math.isnan(number):
        raise InputError("expected a number, got nan", field)
    if math.isinf(number) and not (allow_inf and number > 0):
        raise InputError(f"must be a finite number, got {number}", field)
    if number < minimum or (strict and number == minimum):
        relation = ">" if strict else ">="
        raise InputError(f"must be a number {relation} {minimum:g}, got {number:g}", field)
    return number


def check_level(value: object, field: str = "privacy.epsilon") -> float:
    """A privacy level ε in nats: a number ``≥ 0`` (``inf`` allowed: no privacy constraint).

    Parameters
    ----------
    value : object
        What the caller gave: a real number ``≥ 0`` (nats) or ``inf``.
    field : str
        The argument or file key, for the message (default ``privacy.epsilon``).

    Returns
    -------
    float
        ε in ``[0, inf]``.

    Raises
    ------
    InputError
        For a non-number, ``nan``, ``-inf`` or a negative number.
    """
    return check_number(value, field, allow_inf=True)


def check_budget(value: object, field: str = "privacy.max_distortion") -> float:
    """A distortion budget: a finite number ``≥ 0``.

    Parameters
    ----------
    value : object
        What the caller gave: a budget on ``E[d]``, in the distortion's units.
    field : str
        The argument or file key, for the message (default ``privacy.max_distortion``).

    Returns
    -------
    float
        The budget, finite and ``≥ 0``.

    Raises
    ------
    InputError
        For a non-number, ``nan``, an infinite or a negative number.
    """
    return check_number(value, field)


def check_numbers(
    values: object, field: str, *, minimum: float = 0.0, maximum: float = math.inf
) -> np.ndarray:
    """A number or array of numbers in ``[minimum, maximum]`` (``inf`` allowed when
    ``maximum`` is), as a float array (0-d for a scalar).

    Parameters
    ----------
    values : object
        What the caller gave: a number or a (nested) sequence or array of numbers.
    field : str
        The argument or file key, for the message.
    minimum, maximum : float
        The accepted range, bounds included (default ``[0, inf]``).

    Returns
    -------
    numpy.ndarray
        Float array of the shape of ``values`` (0-d for a scalar), entries in
        ``[minimum, maximum]``.

    Raises
    ------
    InputError
        For strings, booleans, what cannot be read as numbers, ``nan`` or an entry out of
        range.
    """
    if isinstance(values, (str, bytes, bool, np.bool_)):
        raise InputError(f"expected numbers, got {type(values).__name__} {values!r}", field)
    if not np.isscalar(values):  # strings and booleans inside lists: the model's one rule
        _refuse_non_numbers(values, field, 1 if np.ndim(values) <= 1 else 2)
    try:
        array = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"expected numbers, got {values!r}", field) from None
    if np.isnan(array).any():
        raise InputError("expected numbers, got nan", field)
    if (array < minimum).any() or (array > maximum).any():
        bad = array[(array < minimum) | (array > maximum)].ravel()[0]
        raise InputError(f"must lie in [{minimum:g}, {maximum:g}], got {bad:g}", field)
    return array


def check_probability(value: object, field: str = "delta") -> float:
    """A probability (``δ`` of a tail guarantee): a number in ``[0, 1]``.

    Parameters
    ----------
    value : object
        What the caller gave.
    field : str
        The argument or file key, for the message (default ``delta``).

    Returns
    -------
    float
        The probability, in ``[0, 1]``.

    Raises
    ------
    InputError
        For a non-number, ``nan`` or a number outside ``[0, 1]``.
    """
    number = check_number(value, field)
    if number > 1.0:
        raise InputError(f"must lie in [0, 1], got {number:g}", field)
    return number


def check_mode(
    epsilon: float | None, max_distortion: float | None
) -> tuple[str, float | None, float | None]:
    """Exactly one of ``epsilon`` and ``max_distortion``, each checked.

    Parameters
    ----------
    epsilon, max_distortion : float or None
        What the caller gave: a level ε in nats (``≥ 0``, ``inf`` allowed; checked by
        :func:`check_level`) or a distortion budget (finite, ``≥ 0``; checked by
        :func:`check_budget`), exactly one of them not ``None``.

    Returns
    -------
    tuple
        ``(mode, epsilon, max_distortion)`` with ``mode`` in :data:`MODES` and the other
        value ``None``.

    Raises
    ------
    InputError
        If both or neither are given (field ``privacy``), or the one given is not valid.
    """
    if epsilon is not None and max_distortion is not None:
        raise InputError(
            "give epsilon OR max_distortion, not both: epsilon minimises the distortion at "
            "that level, max_distortion minimises the level within that budget",
            "privacy",
        )
    if epsilon is None and max_distortion is None:
        raise InputError(
            "give epsilon (minimise E[d] at that privacy level, nats) or max_distortion "
            "(minimise the level within that distortion budget); found neither",
            "privacy",
        )
    if epsilon is not None:
        return "epsilon", check_level(epsilon), None
    return "max_distortion", None, check_budget(max_distortion)


def check_tolerance(value: object, field: str = "solver.tolerance") -> float:
    """A tolerance in ``[MIN_TOLERANCE, MAX_TOLERANCE]`` (a bisection stops on it, so 0,
    negative or sub-round-off values would never end).

    Parameters
    ----------
    value : object
        What the caller gave: a number in ``[1e-14, 0.1]``.
    field : str
        The argument or file key, for the message (default ``solver.tolerance``).

    Returns
    -------
    float
        The tolerance, in ``[MIN_TOLERANCE, MAX_TOLERANCE]``.

    Raises
    ------
    InputError
        For a non-number, ``nan``, ``inf``, a number ``≤ 0`` or one out of that range.
    """
    tol = check_number(value, field, strict=True)
    if not MIN_TOLERANCE <= tol <= MAX_TOLERANCE:
        raise InputError(
            f"must lie between {MIN_TOLERANCE:g} and {MAX_TOLERANCE:g}, got {tol:g}", field
        )
    return tol


def check_time_limit(value: object, field: str = "solver.time_limit") -> float | None:
    """A time limit in seconds: ``None`` or ``inf`` (no limit) or a number ``≥ 0``.

    0 is a limit already reached (the run answers only what needs no solver). A limit of
    more than :data:`~privopt.methods.base.NO_LIMIT_BEYOND` seconds (about 31 years) is
    accepted and is no limit at all.

    Parameters
    ----------
    value : object
        What the caller gave: seconds, ``None`` or ``inf``.
    field : str
        The argument or file key, for the message (default ``solver.time_limit``).

    Returns
    -------
    float or None
        The limit in seconds (finite, ``≥ 0``), or ``None`` for no limit.

    Raises
    ------
    InputError
        For a non-number, ``nan``, ``-inf`` or a negative number.
    """
    if value is None:
        return None
    if isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_)):
        if value > 0 and value.bit_length() > 1000:  # beyond a float (10**400): no limit
            return None
    seconds = check_number(value, field, allow_inf=True)
    return None if math.isinf(seconds) else seconds


def check_flag(value: object, field: str) -> bool:
    """A true/false setting (``bool`` or numpy bool; not a string such as ``"no"``).

    Parameters
    ----------
    value : object
        What the caller gave.
    field : str
        The argument or file key, for the message.

    Returns
    -------
    bool
        ``value`` as a Python ``bool``.

    Raises
    ------
    InputError
        For anything but a ``bool`` or a numpy bool (``0``, ``1`` and ``"yes"`` included).
    """
    if not isinstance(value, (bool, np.bool_)):
        raise InputError(f"expected True or False, got {type(value).__name__} {value!r}", field)
    return bool(value)


def check_callable(value: object, field: str) -> Callable[..., Any] | None:
    """``None`` or a callable (a progress callback).

    Parameters
    ----------
    value : object
        What the caller gave.
    field : str
        The argument or file key, for the message.

    Returns
    -------
    callable or None
        ``value`` itself.

    Raises
    ------
    InputError
        If ``value`` is neither ``None`` nor callable.
    """
    if value is not None and not callable(value):
        raise InputError(
            f"expected a function (or None), got {type(value).__name__} {value!r}", field
        )
    return value


def check_prior(prior: PriorLike | None) -> Prior | JointPrior | DatabasePrior:
    """A prior object, or a plain pmf read as a single-secret :class:`~privopt.model.Prior`.

    Parameters
    ----------
    prior : Prior, JointPrior, DatabasePrior, array_like or None
        A prior object, or a pmf: a flat list of finite, non-negative numbers summing to 1
        within 1e-9.

    Returns
    -------
    Prior, JointPrior or DatabasePrior
        ``prior`` itself when it is a prior object, else a new :class:`~privopt.model.Prior`.

    Raises
    ------
    InputError
        For ``None`` (field ``prior``) or an invalid pmf (field ``prior.probs``).
    """
    if prior is None:
        raise InputError("missing: give a pmf, a Prior, a JointPrior or a DatabasePrior", "prior")
    return as_prior(prior)


def default_neighbors(prior: PriorLike) -> NeighborRelation:
    """Hamming neighbours on a database prior, all pairs of secrets otherwise.

    Parameters
    ----------
    prior : Prior, JointPrior, DatabasePrior or array_like
        The prior, or a pmf read as a single secret.

    Returns
    -------
    NeighborRelation
        On ``prior.n_secrets`` secrets: :func:`~privopt.model.hamming_neighbors` for a
        :class:`~privopt.model.DatabasePrior`, :func:`~privopt.model.all_pairs` otherwise.
    """
    prior = as_prior(prior)
    if prior.is_database:
        return hamming_neighbors(prior.m, prior.n)
    return all_pairs(prior.n_secrets)


def resolve_neighbors(
    prior: PriorLike,
    neighbors: NeighborRelation | str | Sequence | dict | None,
    field: str = "privacy.neighbors",
) -> NeighborRelation:
    """The neighbour relation on the secrets.

    Parameters
    ----------
    prior : Prior, JointPrior or DatabasePrior
        The prior (a pmf is read as a single secret); the relation is on its secrets.
    neighbors : NeighborRelation, {"hamming", "all"}, list of pairs, dict or None
        ``None`` is the default of the prior (:func:`default_neighbors`). A list of pairs
        ``[(a, b), …]`` (indices or symbols of the secret alphabet, as a problem file's edge
        list), ``{"edges": pairs}`` or ``{"adjacency": matrix}`` (symmetric 0/1, zero
        diagonal) is the relation of those pairs (:meth:`NeighborRelation.from_pairs`).
    field : str
        The key named in messages (default ``privacy.neighbors``).

    Returns
    -------
    NeighborRelation
        On ``prior.n_secrets`` symbols.

    Raises
    ------
    InputError
        For a relation on another number of symbols, ``"hamming"`` without a database
        prior, an unknown name, or pairs that :func:`neighbor_pairs` refuses.
    """
    prior = as_prior(prior)
    if neighbors is None:
        return default_neighbors(prior)
    if isinstance(neighbors, NeighborRelation):
        if neighbors.size != prior.n_secrets:
            raise InputError(
                f"the relation is on {neighbors.size} symbols but the secret has {prior.n_secrets}",
                field,
            )
        return neighbors
    if isinstance(neighbors, dict) or (
        not isinstance(neighbors, (str, bytes)) and isinstance(neighbors, (Sequence, np.ndarray))
    ):
        return neighbor_pairs(prior, neighbors, field)
    if neighbors == "hamming":
        if not prior.is_database:
            raise InputError(
                "'hamming' needs a database prior ([prior.database] with m and n); on a single "
                "alphabet or a joint prior use 'all' or give the pairs",
                field,
            )
        return hamming_neighbors(prior.m, prior.n)
    if neighbors == "all":
        return all_pairs(prior.n_secrets)
    raise InputError(
        f"unknown relation {neighbors!r}: use one of {', '.join(NEIGHBOR_NAMES)}, a list of "
        "pairs [(a, b), …] or a NeighborRelation (e.g. NeighborRelation.from_pairs)",
        field,
        suggestions=close_matches(neighbors, NEIGHBOR_NAMES),
    )


def neighbor_pairs(
    prior: PriorLike, value: Sequence | np.ndarray | dict, field: str = "privacy.neighbors"
) -> NeighborRelation:
    """The relation of a list of pairs, ``{"edges": pairs}`` or ``{"adjacency": matrix}``.

    Parameters
    ----------
    prior : Prior, JointPrior or DatabasePrior
        The prior (a pmf is read as a single secret) whose ``k`` secrets the pairs join.
    value : sequence of pairs or dict
        Pairs ``(a, b)`` of indices or symbols of the secret alphabet; or a dict with the one
        key ``edges`` (such pairs) or ``adjacency`` (a symmetric 0/1 ``k × k`` matrix with a
        zero diagonal).
    field : str
        The key named in messages (default ``privacy.neighbors``).

    Returns
    -------
    NeighborRelation
        On ``prior.n_secrets`` symbols (symmetrised).

    Raises
    ------
    InputError
        For an empty list, an entry that is not a pair, an unknown symbol or index, a pair
        joining a secret to itself, or a dict or matrix of another form.
    """
    prior = as_prior(prior)
    k = prior.n_secrets
    if isinstance(value, dict):
        if len(value) != 1 or next(iter(value)) not in ("edges", "adjacency"):
            raise InputError(
                f"a dict of neighbours takes exactly one of the keys edges, adjacency; got "
                f"{', '.join(map(repr, value)) or 'none'}",
                field,
            )
        form, value = next(iter(value.items()))
        if form == "adjacency":
            try:
                adj = np.asarray(value, dtype=float)
            except (TypeError, ValueError):
                raise InputError("expected a 0/1 matrix of numbers", f"{field}.adjacency") from None
            if adj.shape != (k, k):
                raise InputError(
                    f"has shape {adj.shape}; the secret has {k} symbols", f"{field}.adjacency"
                )
            if not np.isin(adj, (0.0, 1.0)).all() or (adj != adj.T).any() or np.diag(adj).any():
                raise InputError(
                    "must be a symmetric 0/1 matrix with a zero diagonal", f"{field}.adjacency"
                )
            return NeighborRelation.from_pairs(k, np.argwhere(np.triu(adj) > 0))
        field = f"{field}.edges"
    if isinstance(value, (str, bytes)) or not isinstance(value, (Sequence, np.ndarray)):
        raise InputError(f"expected a list of pairs [(a, b), …], got {type(value).__name__}", field)
    if len(value) == 0:
        raise InputError("expected a non-empty list of pairs [(a, b), …]", field)
    labels = list(prior.secret_labels)
    pairs = []
    for n, pair in enumerate(value):
        if (
            isinstance(pair, (str, bytes))
            or not isinstance(pair, (Sequence, np.ndarray))
            or len(pair) != 2
        ):
            raise InputError(f"entry {n} is {pair!r}: write each pair as [a, b]", field)
        pairs.append([secret_index(v, labels, f"{field}[{n}]") for v in pair])
    return NeighborRelation.from_pairs(k, pairs)


def secret_index(value: object, labels: Sequence[str], field: str) -> int:
    """A symbol of the secret alphabet, or an index into it, as an index.

    Shared by neighbour pairs and metric-graph edges.

    Parameters
    ----------
    value : str or int
        A symbol of ``labels``, an integer index, or the digits of one (as read from a CSV
        file). Floats and booleans are refused.
    labels : sequence of str
        The secret alphabet.
    field : str
        The key named in messages.

    Returns
    -------
    int
        The index, in ``0 … len(labels) − 1``.

    Raises
    ------
    InputError
        For an unknown symbol, an index out of range or a value of another type.
    """
    if isinstance(value, str) and value in labels:
        return labels.index(value)
    if isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_)):
        if 0 <= int(value) < len(labels):
            return int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():  # "3" from a CSV file
        if 0 <= int(value) < len(labels):
            return int(value)
    shown = ", ".join(labels[:10]) + (" …" if len(labels) > 10 else "")
    integral = isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))
    digits = isinstance(value, str) and value.strip().lstrip("-").isdigit()
    raise InputError(
        f"unknown secret {value!r}: use a symbol of the secret alphabet ({shown}) or an index "
        f"0..{len(labels) - 1}",
        field,
        code="index_out_of_range" if integral or digits else "unknown_symbol",
    )


def as_distortion(
    distortion: DistortionLike, prior: PriorLike, field: str = "distortion"
) -> Distortion:
    """A :class:`~privopt.model.Distortion` with one row per input of ``prior``.

    Parameters
    ----------
    distortion : Distortion, array_like or str
        A distortion object, a matrix ``d[y, u]``, or one of :data:`DISTORTION_NAMES`
        (``"hamming"`` on a database prior is the number of differing rows).
    prior : Prior, JointPrior or DatabasePrior
        The prior (a pmf is read as a single secret); a named distortion is built on its
        ``n_inputs`` symbols.
    field : str
        The key named in messages (default ``distortion``).

    Returns
    -------
    Distortion
        With ``prior.n_inputs`` rows (``distortion`` itself when it is a
        :class:`~privopt.model.Distortion` of that shape).

    Raises
    ------
    InputError
        For ``None``, an unknown name, a named distortion too large for the memory bound, an
        invalid matrix, or a number of rows other than ``prior.n_inputs``.
    """
    prior = as_prior(prior)
    if distortion is None:
        raise InputError(
            f"missing: give a matrix d[y, u], a Distortion or one of {', '.join(DISTORTION_NAMES)}",
            field,
        )
    if isinstance(distortion, Distortion):
        d = distortion
    elif isinstance(distortion, str):
        if distortion == "hamming" and prior.is_database:
            d = Distortion.database_hamming(prior.m, prior.n)
        elif distortion in DISTORTION_NAMES:
            need = 8.0 * float(prior.n_inputs) ** 2
            if need > max_memory():
                raise InputError(
                    f"a dense {distortion} distortion on {prior.n_inputs} symbols needs "
                    f"{format_bytes(need)}, above the memory bound of {format_bytes(max_memory())}"
                    " (PRIVOPT_MAX_MEMORY); use fewer symbols",
                    field,
                )
            d = getattr(Distortion, distortion)(prior.n_inputs)
        else:
            raise InputError(
                f"unknown distortion {distortion!r}: pass a Distortion, a matrix, or one of "
                f"{', '.join(repr(n) for n in DISTORTION_NAMES)}",
                field,
                suggestions=close_matches(distortion, DISTORTION_NAMES),
            )
    else:
        d = Distortion.from_matrix(distortion)
    if d.n_inputs != prior.n_inputs:
        raise InputError(
            f"the distortion has {d.n_inputs} rows but the prior has {prior.n_inputs} inputs: "
            "one row per input symbol (rows = inputs y, columns = outputs u)",
            field,
        )
    return d


def check_extra_distortions(
    extras: Sequence | None, main: Distortion, prior: PriorLike, field: str = "extra_distortions"
) -> list[tuple[Distortion, float]]:
    """Further budgets ``E[d_k] ≤ b_k`` (Calmon & Fawaz 2012, Remark 1), each of the main
    distortion's shape.

    Parameters
    ----------
    extras : sequence of (distortion, budget) or None
        Pairs of a distortion (as :func:`as_distortion` accepts) and its budget ``b_k``
        (finite, ``≥ 0``, in that distortion's units); ``None`` for none.
    main : Distortion
        The main distortion (sets the shape).
    prior : Prior, JointPrior or DatabasePrior
        The prior (a pmf is read as a single secret).
    field : str
        The key named in messages (default ``extra_distortions``; entry ``i`` is
        ``extra_distortions[i]``).

    Returns
    -------
    list of (Distortion, float)
        One ``(distortion, budget)`` per entry, in order; empty for ``None``.

    Raises
    ------
    InputError
        For something that is not a list of pairs, an invalid distortion or budget, or a
        distortion of a shape other than ``main.shape``.
    """
    out = []
    if extras is None:
        extras = ()
    try:
        if isinstance(extras, (str, bytes)):
            raise TypeError
        items = list(extras)
    except TypeError:
        raise InputError(
            f"expected a list of pairs (distortion, budget), got {type(extras).__name__}", field
        ) from None
    for i, item in enumerate(items):
        try:
            extra, budget = item
        except (TypeError, ValueError):
            raise InputError(
                "expected pairs (distortion, budget), e.g. [(matrix, 0.5)]", field
            ) from None
        extra = as_distortion(extra, prior, f"{field}[{i}]")
        if extra.shape != main.shape:
            raise InputError(
                f"has shape {extra.shape} but the main distortion has {main.shape}",
                f"{field}[{i}]",
            )
        out.append((extra, check_budget(budget, f"{field}[{i}].budget")))
    return out
