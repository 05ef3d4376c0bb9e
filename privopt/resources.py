"""Memory a design request needs, estimated before anything large is allocated.

Every method is costed here, in one place, from the request's sizes alone: the number of
secrets ``S``, inputs ``Y`` and outputs ``U``, the number of neighbouring pairs, and the
notion's kind of constraint. A method whose estimate exceeds the memory bound is not tried
(:func:`privopt.solve.selection.choose_methods` leaves it out with the reason), and a request
that no method can hold is refused with an :class:`~privopt.errors.InputError` naming the
size and the fast path or option that fits, instead of a ``MemoryError`` (or the operating
system killing the process) minutes later.

The bound is :data:`DEFAULT_MAX_MEMORY` (4 GiB), or the environment variable
``PRIVOPT_MAX_MEMORY`` (bytes, or a number with a suffix ``K``, ``M``, ``G``, ``T``, powers of
1024; ``inf`` for none), or the ``max_memory=`` argument of :func:`privopt.design`,
:func:`privopt.sweep` and :func:`privopt.solve_problem`, in increasing precedence.

The estimates are coarse, calibrated against the peak resident memory measured for each
method (``python -m benchmarks.limits memory``, recorded in benchmarks/): a dense working set of
:data:`DENSE_BYTES_PER_ENTRY` bytes per mechanism entry (the mechanism, its repaired copies,
the channel and the logs the measures take), plus, for the programs, a cost per constraint
non-zero (:data:`BYTES_PER_NONZERO`), with the pairs of metric privacy counted (they set the
size of its programs: 97,868 ordered pairs on a 20 × 20 map) and the terms measured where a
method holds more (cvxpy's parametrised metric ratios, the block interior point's arrays
over the pair rows). A method run in a child process (:mod:`privopt.solve.isolation`) is
held to the bound by its address-space limit; one run in the caller's process is trusted to
its estimate.

This module imports only :mod:`privopt.errors` (and :mod:`privopt._docstrings`).
"""

from __future__ import annotations

__all__ = [
    "DEFAULT_MAX_MEMORY",
    "MEMORY_ENV",
    "MAX_DATABASE_BITS",
    "DENSE_BYTES_PER_ENTRY",
    "BYTES_PER_NONZERO",
    "parse_memory",
    "max_memory",
    "pair_count",
    "constraint_nonzeros",
    "sparse_nonzeros",
    "estimate_bytes",
    "format_bytes",
    "memory_reason",
    "check_allocation",
    "check_database_size",
]

import math
import os
import re

from privopt._docstrings import sections_of
from privopt.errors import InputError

#: The default memory bound of one request (bytes).
DEFAULT_MAX_MEMORY = 4 * 2**30
#: The environment variable that overrides :data:`DEFAULT_MAX_MEMORY`.
MEMORY_ENV = "PRIVOPT_MAX_MEMORY"
#: Largest database alphabet, as ``log2(m**n)``: beyond ``2**1000`` databases not even the
#: count is a float, and no method (not the symmetric one either) can represent an answer.
MAX_DATABASE_BITS = 1000
#: Dense working set per mechanism entry (16 float64 arrays of the mechanism's shape).
DENSE_BYTES_PER_ENTRY = 128
#: Cost of one constraint non-zero, by kind of program, from the peak resident memory
#: measured per method (benchmarks/README.md, "Time and memory limits"): cvxpy with Clarabel
#: 1.0× this estimate on dp (2⁶, 2⁷ databases), 0.4× on pml; privopt's sparse LP with HiGHS
#: 185–320 bytes per non-zero beyond a few MB (dp on 2⁷ and 3⁶ databases, 6 × 6 and 8 × 8
#: maps), with Clarabel 360–740 (its factorisation fills in more).
BYTES_PER_NONZERO = {"cvxpy": 500.0, "sparse": 300.0, "sparse_clarabel": 800.0}
#: cvxpy's compilation of metric privacy's parametrised ratios (a parameter per pair times
#: a pairs × U expression) holds about this many bytes per pair² · output (measured 5–11 on
#: 4 × 4 to 6 × 6 maps: 198 MB at 36 cells; a 10 × 10 map asked for a 28.8 GiB array).
CVXPY_METRIC_BYTES = 12.0
#: Working set of the block interior point per mechanism entry (bytes).
COLUMN_BYTES_PER_ENTRY = 512.0
#: Bytes per mechanism entry and input of the block interior point's dense factor of a
#: pair notion's column (one ``|X| × |X|`` inverse per output column, formed in place).
COLUMN_FACTOR_BYTES = 8.0
#: Arrays over the pair rows (U × pairs) the block interior point holds at its peak, for
#: the pair notions (measured 10.1 on a 20 × 20 map: 3.6 GiB in all).
COLUMN_ROW_ARRAYS = 11.5


def all_pairs(request) -> bool:
    """Whether ``request`` is dp or identifiability with every pair of inputs neighbours:
    a column's pair rows then hold iff its extremes do (LDP's constraints, on ``W`` or on
    ``p∘W``), which ``block-ipm`` writes in ``O(|X|)`` rows per output column (Saeidian et
    al. 2023, Def. 14) instead of one row per pair.

    Parameters
    ----------
    request : DesignRequest

    Returns
    -------
    bool
    """
    relation = request.neighbors
    return request.notion.uses_neighbors and relation is not None and relation.kind == "all"


@sections_of(all_pairs, ("Parameters", "Returns"))
def dense_pair_columns(request) -> bool:
    """Whether ``request``'s privacy rows are one row per pair of inputs (dp,
    identifiability, metric privacy), so that the block interior point holds a dense
    ``|X| × |X|`` normal matrix per output column; dp and identifiability over all pairs
    are written with one auxiliary per column instead (:func:`all_pairs`).
    """
    return request.notion.pairwise and not all_pairs(request)


_UNITS = {"": 1, "B": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def parse_memory(value, field: str = "max_memory") -> float:
    """A memory size in bytes from a number or a text such as ``"512M"`` or ``"8G"``.

    Parameters
    ----------
    value : int, float or str
        Bytes, or a number followed by ``K``, ``M``, ``G`` or ``T`` (powers of 1024, an
        optional trailing ``B`` or ``iB``), or ``"inf"`` for no bound.
    field : str
        The argument named in messages.

    Returns
    -------
    float
        Bytes (``inf`` for no bound).

    Raises
    ------
    InputError
        For anything else, zero or negative sizes.
    """
    if isinstance(value, bool):
        raise InputError(f"expected a size in bytes, got {value!r}", field)
    if isinstance(value, str):
        text = value.strip()
        if text.lower() in ("inf", "none", "unlimited"):
            return math.inf
        match = re.fullmatch(
            r"([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([KMGT]?)(I?B)?", text.upper()
        )
        if match is None:
            raise InputError(
                f"cannot read {value!r} as a memory size: give bytes or a number with K, M, G "
                "or T (e.g. 8G), or inf",
                field,
            )
        number = float(match.group(1)) * _UNITS[match.group(2)]
    else:
        try:
            number = float(value)
        except (TypeError, ValueError, OverflowError):
            raise InputError(f"expected a size in bytes, got {value!r}", field) from None
    if math.isnan(number) or number <= 0:
        raise InputError(f"must be a positive size in bytes, got {value!r}", field)
    return number


def max_memory(override=None) -> float:
    """The memory bound in force: ``override``, else ``PRIVOPT_MAX_MEMORY``, else the default.

    Parameters
    ----------
    override : int, float, str or None
        The ``max_memory=`` argument of the call, if any.

    Returns
    -------
    float
        Bytes (``inf`` for no bound).
    """
    if override is not None:
        return parse_memory(override, "max_memory")
    text = os.environ.get(MEMORY_ENV)
    if text:
        return parse_memory(text, MEMORY_ENV)
    return float(DEFAULT_MAX_MEMORY)


def format_bytes(size: float) -> str:
    """``size`` bytes as a short text (``"3.2 GB"``, powers of 1024).

    Parameters
    ----------
    size : float
        A number of bytes (``inf`` for no bound).

    Returns
    -------
    str
        Three significant digits and a unit from B to PB (whole bytes below 1 KB), or
        ``"unbounded"`` for a non-finite ``size``.
    """
    if not math.isfinite(size):
        return "unbounded"
    for unit in ("B", "KB", "MB", "GB", "TB", "PB"):
        if size < 1024 or unit == "PB":
            return f"{size:.3g} {unit}" if unit != "B" else f"{size:.0f} B"
        size /= 1024
    return f"{size:.3g} PB"  # pragma: no cover


def _sizes(request) -> tuple[float, float, float]:
    prior = request.prior
    return float(prior.n_secrets), float(prior.n_inputs), float(request.distortion.n_outputs)


def pair_count(request, exact: bool = True) -> float | None:
    """Ordered pairs of secrets the notion's constraints are written on, or ``None`` for a
    notion without pairs.

    The neighbour relation's pairs; for metric privacy the constraint pairs of the metric
    (``request.pair_count()``: ``O(k³)`` once, then kept on the metric). With ``exact=False``
    those are not computed and 0 stands for them: the estimates are then lower bounds, which
    refuse a request far beyond the bound before any pair is searched for.

    Parameters
    ----------
    request : DesignRequest
    exact : bool

    Returns
    -------
    float or None
    """
    if request.neighbors is not None:
        return float(request.neighbors.n_pairs)
    counter = getattr(request, "pair_count", None)
    if counter is None:
        return None
    if not exact:
        return 0.0 if request.notion.name == "metric_dp" else None
    count = counter()
    return None if count is None else float(count)


def constraint_nonzeros(request, exact: bool = True) -> float:
    """Non-zeros of the notion's constraints at one level, written on the dense mechanism
    (as the cvxpy program writes them).

    Pairwise notions (``dp``, ``identifiability``, ``metric_dp``): two per pair and output
    (``Y`` per pair on a joint prior); ``ldp`` and the others over all pairs, written with an
    auxiliary column minimum: two rows per secret and output. Notions on the output law (``pml``,
    ``information_privacy``, ``mutual_information``, ``max_information_leakage``,
    ``robust_pml``): ``p(u) = Σ_y p(y) W[y,u]`` appears in each of the ``S·U`` constraints,
    ``Y + 1`` non-zeros each (times the number of priors of ``robust_pml``). Others: ``2·S·U``.

    Parameters
    ----------
    request : DesignRequest
    exact : bool
        ``False``: metric privacy's pairs count as none (:func:`pair_count`).

    Returns
    -------
    float
    """
    s, y, u = _sizes(request)
    per_pair = 2.0 if y == s else 2.0 * y
    if all_pairs(request):
        # written with an auxiliary column minimum (notions._pairwise.ratio_constraints):
        # two rows per secret and output, as ldp (the notion's own count)
        return 2.0 * s * u * (per_pair / 2.0 + 1.0)
    own = request.notion.constraint_nonzeros(int(s), int(y), int(u), request.options)
    if own is not None:
        return float(own)
    pairs = pair_count(request, exact)
    if pairs is not None:
        return pairs * u * per_pair
    return 2.0 * s * u


def sparse_nonzeros(request, exact: bool = True) -> float:
    """Non-zeros of privopt's sparse LP (:mod:`privopt.methods.sparse_lp`): two per pair and
    output for the pair notions written pair by pair (dp and identifiability on a relation,
    metric privacy), about four per mechanism entry for the notions written with an
    auxiliary per output (ldp, all pairs, the output-law notions: one row on each side of
    each entry), plus the row sums and bounds (two per entry).

    Parameters
    ----------
    request : DesignRequest
    exact : bool
        As in :func:`constraint_nonzeros`.

    Returns
    -------
    float
    """
    s, _, u = _sizes(request)
    pairs = None if all_pairs(request) else pair_count(request, exact)
    rows = 2.0 * pairs * u if pairs is not None else 4.0 * s * u
    return rows + 2.0 * float(request.entries)


def estimate_bytes(request, model: str, exact: bool = True) -> float:
    """The memory a method of the given ``model`` needs for ``request`` (bytes), calibrated
    against the peak resident memory measured for each method (benchmarks/README.md, "Time
    and memory limits"; ``python -m benchmarks.limits memory``).

    Parameters
    ----------
    request : DesignRequest
    model : {"cvxpy", "sparse", "sparse_clarabel", "dense", "structured", "columns"}
        ``"cvxpy"``: the dense cvxpy program; ``"sparse"``: privopt's sparse LP solved by
        HiGHS, ``"sparse_clarabel"`` by Clarabel (whose factorisation fills in more);
        ``"dense"``: a method holding a few dense matrices of the mechanism's shape
        (Blahut–Arimoto); ``"structured"``: a method that never holds more than a bounded
        dense matrix; ``"columns"``: the block interior point, which for the pair notions
        (dp, identifiability, metric privacy) holds a dense ``|X| × |X|`` matrix per output
        column and its arrays over the pair rows.
    exact : bool
        ``False``: a lower bound that does not search for metric privacy's constraint pairs
        (:func:`pair_count`).

    Returns
    -------
    float
    """
    entries = float(request.entries)
    if model == "structured":
        return DENSE_BYTES_PER_ENTRY * min(entries, 4096.0**2)
    dense = DENSE_BYTES_PER_ENTRY * entries
    if model == "columns":
        # ~30 iterate-sized arrays (measured peak: 680 MB at 1000 × 1000, LDP), plus the
        # Schur complement; the pair notions also hold a dense normal matrix per output
        # column (inverted in place) and COLUMN_ROW_ARRAYS arrays over the pair rows
        inputs = float(request.prior.n_inputs)
        need = COLUMN_BYTES_PER_ENTRY * entries + 8.0 * inputs**2
        if dense_pair_columns(request):
            pairs = pair_count(request, exact) or 0.0
            outputs = float(request.distortion.n_outputs)
            rows = COLUMN_ROW_ARRAYS * 8.0 * outputs * pairs
            need += COLUMN_FACTOR_BYTES * entries * inputs + rows
        return need
    if model == "cvxpy":
        nnz = constraint_nonzeros(request, exact) + 2.0 * entries  # plus row sums and bounds
        need = dense + BYTES_PER_NONZERO[model] * nnz
        if request.notion.name == "metric_dp":  # the parametrised ratios (module docstring)
            pairs = pair_count(request, exact) or 0.0
            need += CVXPY_METRIC_BYTES * pairs**2 * float(request.distortion.n_outputs)
        return need
    if model in BYTES_PER_NONZERO:
        return dense + BYTES_PER_NONZERO[model] * sparse_nonzeros(request, exact)
    return dense


def memory_reason(need: float, limit: float) -> str | None:
    """``None`` when ``need`` bytes fit in ``limit``, else why not.

    Parameters
    ----------
    need : float
        A method's estimate (:func:`estimate_bytes`, or the method's own
        ``memory_bytes``).
    limit : float
        The bound (bytes).

    Returns
    -------
    str or None
    """
    if need <= limit:
        return None
    return (
        f"needs about {format_bytes(need)}, above the memory bound of {format_bytes(limit)} "
        f"(set {MEMORY_ENV}, max_memory= or --max-memory to change it)"
    )


def check_allocation(need: float, what: str, field: str, fits: str = "") -> None:
    """Refuse, before allocating, an array of about ``need`` bytes above the memory bound in
    force (:func:`max_memory`: ``PRIVOPT_MAX_MEMORY`` or the default).

    For the model's builders of dense matrices (a map's distances, a metric), which run
    before any request exists: a ``MemoryError`` (or the operating system killing the
    process) minutes later becomes an :class:`~privopt.errors.InputError` at once.

    Parameters
    ----------
    need : float
        Bytes the allocation would take at its peak.
    what : str
        What would be built (e.g. ``"the 14,400 × 14,400 distances of a 120 × 120 grid"``).
    field : str
        The argument named in the message.
    fits : str
        What would fit instead (e.g. ``"a coarser grid"``), said in the message.

    Raises
    ------
    InputError
        When ``need`` exceeds the bound; the message names the estimate, the bound, what
        fits and how to raise the bound.
    """
    limit = max_memory()
    if need <= limit:
        return
    hint = f"use {fits}, or " if fits else ""
    raise InputError(
        f"{what} needs about {format_bytes(need)}, above the memory bound of "
        f"{format_bytes(limit)}: {hint}raise the bound with {MEMORY_ENV} (or max_memory= / "
        "--max-memory) if the machine has that much memory",
        field,
    )


def check_database_size(m: int, n: int, field: str = "prior.database.n") -> None:
    """Refuse database alphabets ``m**n`` above ``2**MAX_DATABASE_BITS`` before computing
    ``m**n`` (with ``n = 2**63 − 1`` that integer alone would never finish).

    Parameters
    ----------
    m, n : int
        Row alphabet size and number of rows.
    field : str
        The key named in the message.

    Raises
    ------
    InputError
    """
    bits = n * math.log2(m) if n <= MAX_DATABASE_BITS else math.inf
    if bits > MAX_DATABASE_BITS:
        largest = int(MAX_DATABASE_BITS // math.log2(m))
        raise InputError(
            f"m**n = {m}**{n if n < 10**12 else f'(an n of {n.bit_length()} bits)'} databases "
            "are more than any method can "
            f"represent (at most 2**{MAX_DATABASE_BITS}); with m = {m} use n <= {largest}",
            field,
        )
