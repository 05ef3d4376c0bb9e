"""Which methods solve a request, in which order: one namespace, one set of rules.

``solver=None`` picks automatically: the fast paths whose :meth:`~privopt.methods.Method.auto`
rule chooses this instance (highest priority first), then the default cvxpy chain for the
notion's kind of program. Every method after the first is a fallback, tried when the one
before fails, cannot be verified, or cannot be certified. A name (``"CLARABEL"``,
``"symmetric"``, …, matched case-insensitively) or a list of names gives the chain
explicitly. An unknown or inapplicable name is an error that lists what applies.
"""

from __future__ import annotations

from collections.abc import Sequence

from privopt.errors import InputError
from privopt.methods import METHODS, Method, lookup
from privopt.methods.cvxpy_program.method import CVXPY_CHAINS, LARGE_LP_ENTRIES
from privopt.request import DesignRequest

__all__ = ["choose_methods", "applicable_methods", "why_not"]


def why_not(method: Method, request: DesignRequest) -> str | None:
    """``None`` when ``method`` can solve ``request``; otherwise the reason."""
    reason = method.unsupported(request)
    if reason is not None:
        return reason
    if request.mode == "max_distortion" and not request.uses_line_search:
        if not method.solves_budget(request):
            return "does not solve budget points of this notion"
    return None


def applicable_methods(request: DesignRequest) -> list[str]:
    """Names of every registered method that can solve ``request``."""
    return [name for name, m in METHODS.items() if why_not(m, request) is None]


def _default_cvxpy_chain(request: DesignRequest) -> tuple[str, ...]:
    if request.notion.convexity == "linear":
        key = "linear_large" if request.entries >= LARGE_LP_ENTRIES else "linear"
        return CVXPY_CHAINS[key]
    return CVXPY_CHAINS["exponential_cone"]


def choose_methods(
    request: DesignRequest, solver: str | Sequence[str] | None = None, *, sweep: bool = False
) -> list[Method]:
    """The methods to try for ``request``, in order.

    Parameters
    ----------
    request : DesignRequest
    solver : str, sequence of str or None
        A method name, a chain of names, or ``None`` (automatic).
    sweep : bool
        Whether the request is a point of a sweep (warm starts change the automatic choice).

    Returns
    -------
    list of Method
        Never empty.

    Raises
    ------
    InputError
        For an unknown or inapplicable name (listing the methods that apply).
    """
    if solver is None:
        fast = [
            m
            for m in METHODS.values()
            if m.family != "cvxpy" and why_not(m, request) is None and m.auto(request, sweep=sweep)
        ]
        fast.sort(key=lambda m: -m.priority)
        cvx = [METHODS[n] for n in _default_cvxpy_chain(request) if n in METHODS]
        chain = fast + [m for m in cvx if why_not(m, request) is None]
        if not chain:
            raise InputError(
                f"no installed method solves this {request.notion.name} request; methods "
                f"that apply: {', '.join(applicable_methods(request)) or 'none'}",
                "solver.name",
            )
        return chain
    names = [solver] if isinstance(solver, str) else list(solver)
    if not names:
        raise InputError("an empty list of solvers: give at least one name", "solver.name")
    chain = []
    for name in names:
        method = lookup(name)
        if method is None:
            raise InputError(
                f"unknown solver {name!r}; for this request use one of: "
                f"{', '.join(applicable_methods(request))} (all methods: privopt solvers)",
                "solver.name",
            )
        reason = why_not(method, request)
        if reason is not None:
            raise InputError(
                f"{method.name} does not apply to this request ({reason}); use one of: "
                f"{', '.join(applicable_methods(request))}",
                "solver.name",
            )
        if method not in chain:
            chain.append(method)
    return chain
