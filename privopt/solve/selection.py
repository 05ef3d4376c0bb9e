"""Which methods solve a request, in which order: one namespace, one set of rules.

``solver=None`` picks automatically: the fast paths whose :meth:`~privopt.methods.Method.auto`
rule chooses this instance (highest priority first), then the default cvxpy chain for the
notion's kind of program, with the methods that :meth:`~privopt.methods.Method.rescues` a
point inserted before its first-order last resorts. Every method after the first is a
fallback, tried when the one before fails, cannot be verified, or cannot be certified. A
name (``"CLARABEL"``, ``"symmetric"``, …, matched case-insensitively) or a list of names
gives the chain explicitly. An unknown or inapplicable name is an error that lists what applies.
"""

from __future__ import annotations

__all__ = ["MethodChain", "choose_methods", "applicable_methods", "named_methods", "why_not"]

from collections.abc import Sequence

from privopt.errors import InputError, close_matches
from privopt.methods import METHODS, Method, lookup
from privopt.methods.cvxpy_program.method import (
    CVXPY_CHAINS,
    LARGE_LP_ENTRIES,
    LAST_RESORT_SOLVERS,
)
from privopt.methods.symmetric.method import SOLVED_NOTIONS
from privopt.request import DesignRequest
from privopt.resources import format_bytes, max_memory, memory_reason


class MethodChain(list):
    """The methods to try for a request, in order, and whether the user named them.

    A list of :class:`~privopt.methods.Method`; :attr:`named` is ``True`` when the chain
    comes from a ``solver=`` name or list. The driver's near-optimal answer at the limit
    ε → ∞ then never takes their place.

    Parameters
    ----------
    methods : iterable of Method
    named : bool
        Whether the user named the methods.
    """

    def __init__(self, methods=(), named: bool = False):
        super().__init__(methods)
        self.named = bool(named)


def why_not(method: Method, request: DesignRequest, limit: float | None = None) -> str | None:
    """``None`` when ``method`` can solve ``request`` within ``limit`` bytes (default: the
    bound in force, :func:`privopt.resources.max_memory`); otherwise the reason.

    Parameters
    ----------
    method : Method
        The method to check.
    request : DesignRequest
        The validated request.
    limit : float, optional
        The memory bound in bytes.

    Returns
    -------
    str or None
        Why the method cannot take the request (it does not support it, does not solve its
        budget points, or would need more memory than ``limit``), or ``None`` if it can.
    """
    reason = method.unsupported(request)
    if reason is not None:
        return reason
    if request.mode == "max_distortion" and not request.uses_line_search:
        if not method.solves_budget(request):
            return "does not solve budget points of this notion"
    limit = max_memory() if limit is None else limit
    # a lower bound first: a map far too large is refused before its pairs are searched
    lower = method.memory_bytes(request, exact=False)
    if lower > limit:
        return memory_reason(lower, limit)
    return memory_reason(method.memory_bytes(request), limit)


def applicable_methods(request: DesignRequest, limit: float | None = None) -> list[str]:
    """Names of every registered method that can solve ``request`` (within ``limit``).

    Parameters
    ----------
    request : DesignRequest
        The validated request.
    limit : float, optional
        The memory bound in bytes (default: :func:`privopt.resources.max_memory`).

    Returns
    -------
    list of str
        The names, in the order of the registry, of the methods for which :func:`why_not`
        gives ``None``.
    """
    return [name for name, m in METHODS.items() if why_not(m, request, limit) is None]


def _no_method(request: DesignRequest, limit: float) -> InputError:
    """No method can take the request: name its size, each method's reason and what would
    fit (the estimate of the cheapest method when memory is what excludes it)."""
    shape = (
        f"{request.prior.n_inputs} inputs x {request.distortion.n_outputs} outputs = "
        f"{request.entries:.4g} mechanism entries"
    )
    reasons: dict[str, list[str]] = {}
    for method in METHODS.values():
        reason = why_not(method, request, limit)
        reasons.setdefault(reason or "", []).append(method.name)
    listed = "; ".join(f"{', '.join(names)}: {why}" for why, names in reasons.items() if why)
    fitting = [m for m in METHODS.values() if m.unsupported(request) is None]
    size = ""
    if fitting:
        # the lower bounds first: their search for metric privacy's pairs is what a request
        # far too large must not pay for
        cheapest = min(m.memory_bytes(request, exact=False) for m in fitting)
        if cheapest <= limit:
            cheapest = min(m.memory_bytes(request) for m in fitting)
        size = (
            f" needs about {format_bytes(cheapest)} with the cheapest method that applies, "
            f"above the memory bound of {format_bytes(limit)};"
        )
    size_bound = size or any(
        word in why for why in reasons for word in ("entries", "memory", "too many")
    )
    hint = f" {_fast_path_hint(request, bool(size))}" if size_bound else ""
    return InputError(
        f"no installed method solves this {request.notion.name} request ({shape});{size}"
        f"{hint} (why each method was left out: {listed})",
        "max_memory" if size else "solver.name",  # the memory bound is what excludes them
    )


def _fast_path_hint(request: DesignRequest, memory_bound: bool) -> str:
    prior = request.prior
    if getattr(prior, "is_database", False) and not getattr(prior, "is_iid", True):
        if request.notion.name in SOLVED_NOTIONS:
            return (
                "with i.i.d. rows (give row_probs) and the row-wise Hamming distortion the "
                "symmetric fast path solves it without a dense matrix; otherwise use fewer rows"
            )
    if request.notion.name == "metric_dp":
        # the constraint pairs set the size: a spanner keeps few of them (unless the metric
        # is a graph's, whose edges are already its only pairs), fewer outputs shrink every
        # program
        metric = request.options.get("metric")
        if metric is not None and metric.pairs_found_directly(None):
            hint = (
                "use a coarser output grid (fewer outputs: a distortion with fewer columns, "
                "e.g. an OutputGrid) or fewer cells"
            )
        else:
            hint = (
                "use the spanner option (e.g. spanner = 1.1: the constraints on a greedy "
                "spanner's edges, a mechanism (1.1·ε)·d-private), a coarser output grid "
                "(fewer outputs: a distortion with fewer columns) or fewer cells"
            )
    else:
        hint = "use a smaller alphabet (fewer outputs or merged symbols)"
    if memory_bound:
        hint += (
            ", or raise the bound with --max-memory, max_memory= or PRIVOPT_MAX_MEMORY if the "
            "machine has that much memory (with a time limit: at this size a solve may take "
            "minutes, and the run then ends with its best mechanism at the limit)"
        )
    return hint


def _default_cvxpy_chain(request: DesignRequest) -> tuple[str, ...]:
    cone = request.notion.cone(request.options)
    if cone == "linear":
        key = "linear_large" if request.entries >= LARGE_LP_ENTRIES else "linear"
        return CVXPY_CHAINS[key]
    return CVXPY_CHAINS[cone]


#: From this many mechanism entries a request that no method takes within the memory bound is
#: refused before its distortion is rescaled (a copy of ``8·entries`` bytes).
EARLY_REFUSAL_ENTRIES = 2**24


def choose_methods(
    request: DesignRequest,
    solver: str | Sequence[str] | None = None,
    *,
    sweep: bool = False,
    max_memory_bytes: float | None = None,
) -> list[Method]:
    """The methods to try for ``request``, in order.

    Parameters
    ----------
    request : DesignRequest
    solver : str, sequence of str or None
        A method name, a chain of names, or ``None`` (automatic).
    sweep : bool
        Whether the request is a point of a sweep (warm starts change the automatic choice).
    max_memory_bytes : float, optional
        The memory bound (default :func:`privopt.resources.max_memory`); methods whose
        estimate exceeds it are left out.

    Returns
    -------
    MethodChain
        Never empty; ``named`` when ``solver`` names the methods.

    Raises
    ------
    InputError
        For an unknown or inapplicable name (listing the methods that apply), or a request
        no method can hold within the memory bound (naming the size and what would fit).
    """
    from privopt.solve.driver import scaled_request

    limit = max_memory() if max_memory_bytes is None else max_memory_bytes
    if request.entries >= EARLY_REFUSAL_ENTRIES and all(
        m.memory_bytes(request, exact=False) > limit or m.unsupported(request) is not None
        for m in METHODS.values()
    ):
        # no method takes it within the bound (lower bounds: no pair is searched for):
        # refused before the rescaled copy of the distortion below is made (1.7 GB on a
        # 120 × 120 map). Whether a method applies depends on the distortion's structure,
        # not its unit, except for rescaled shortcuts that do not matter at this size.
        raise _no_method(request, limit)
    # the methods see the distortion as the driver hands it over (largest entry in [1, 2)):
    # which of them applies must not depend on the unit of d either
    request = scaled_request(request)[0]
    if solver is None:
        return _automatic_chain(request, sweep, limit)
    return _named_chain(request, solver, limit)


def _automatic_chain(request: DesignRequest, sweep: bool, limit: float) -> MethodChain:
    """The methods picked without being named: the fast paths that choose themselves (by
    priority), the default cvxpy chain, the rescue methods, the last-resort solvers."""
    fast = [
        m
        for m in METHODS.values()
        if m.family != "cvxpy"
        and why_not(m, request, limit) is None
        and m.auto(request, sweep=sweep)
    ]
    fast.sort(key=lambda m: -m.priority)
    cvx = [
        METHODS[n]
        for n in _default_cvxpy_chain(request)
        if n in METHODS and why_not(METHODS[n], request, limit) is None
    ]
    rescue = [
        m
        for m in METHODS.values()
        if m not in fast
        and m.family != "cvxpy"
        and why_not(m, request, limit) is None
        and m.rescues(request)
    ]
    rescue.sort(key=lambda m: -m.priority)
    last = [m for m in cvx if m.name in LAST_RESORT_SOLVERS]
    chain = fast + [m for m in cvx if m not in last] + rescue + last
    if not chain:  # nothing measured for this size: every method that fits, by priority
        chain = [m for m in METHODS.values() if why_not(m, request, limit) is None]
        chain.sort(key=lambda m: -m.priority)
    if not chain:
        raise _no_method(request, limit)
    return MethodChain(chain)


def _named_chain(request: DesignRequest, solver: str | Sequence[str], limit: float) -> MethodChain:
    """The methods the user named, in order, each checked against the request."""
    try:
        names = [solver] if isinstance(solver, str) else list(solver)
    except TypeError:
        raise InputError(
            f"expected a method name or a list of names, got {type(solver).__name__} "
            f"{solver!r}; privopt solvers lists them",
            "solver.name",
        ) from None
    if not names:
        raise InputError("an empty list of solvers: give at least one name", "solver.name")
    return MethodChain(named_methods(request, names, limit, "solver.name"), named=True)


def named_methods(
    request: DesignRequest, names: Sequence[object], limit: float | None, field: str
) -> list[Method]:
    """The methods ``names`` names, in order and each once, every one checked against
    ``request``.

    Parameters
    ----------
    request : DesignRequest
        The request the methods are to solve (as the driver hands it to them).
    names : sequence
        The names given (method names or aliases, any case).
    limit : float or None
        The memory bound (bytes) a method must fit in (:func:`why_not`).
    field : str
        The argument or option named in the errors.

    Returns
    -------
    list of Method

    Raises
    ------
    InputError
        For a name that is not a string or not a method's, or a method that does not apply
        to ``request`` (its reason, and the methods that apply).
    """

    def applicable() -> str:  # for the errors only: it asks every method about the request
        return ", ".join(applicable_methods(request, limit)) or "none"

    chosen: list[Method] = []
    for name in names:
        if not isinstance(name, str):
            raise InputError(f"expected a method name (a string), got {name!r}", field)
        method = lookup(name)
        if method is None:
            raise InputError(
                f"unknown solver {name!r}; for this request use one of: {applicable()} "
                "(all methods: privopt solvers)",
                field,
                suggestions=close_matches(name, applicable_methods(request, limit))
                or close_matches(name, METHODS),
            )
        reason = why_not(method, request, limit)
        if reason is not None:
            raise InputError(
                f"{method.name} does not apply to this request ({reason}); use one of: "
                f"{applicable()}",
                field,
            )
        if method not in chosen:
            chosen.append(method)
    return chosen
