"""One design request run to its result: :func:`run_design`.

What :func:`privopt.design`, :func:`privopt.solve_problem` and each task of
:func:`privopt.solve_many` share: choose the methods for the request, hand it to the driver
(:func:`~privopt.solve.driver.solve_request`) under the run's :class:`SolveOptions`, and attach
the notes the request and the notion have on the answer.
"""

from __future__ import annotations

__all__ = ["run_design", "attach_notes"]

import warnings
from typing import TYPE_CHECKING

from privopt.request import DesignRequest
from privopt.solve.driver import solve_request
from privopt.solve.options import SolveOptions
from privopt.solve.results import DesignResult
from privopt.solve.selection import choose_methods

if TYPE_CHECKING:  # pragma: no cover
    from privopt.methods.cvxpy_program.program import PrivacyProblem


def run_design(
    request: DesignRequest, options: SolveOptions, program: PrivacyProblem | None = None
) -> DesignResult:
    """Solve ``request`` under ``options``.

    Parameters
    ----------
    request : DesignRequest
        The validated request.
    options : SolveOptions
        The checked settings (:meth:`SolveOptions.checked`).
    program : PrivacyProblem, optional
        The user's cvxpy program for the request, with any constraints added to it.

    Returns
    -------
    DesignResult
        In nats (the caller converts to ``options.unit``).

    Raises
    ------
    InputError, InfeasibleError, SolverError
        As :func:`~privopt.solve.driver.solve_request`.
    """
    # the limit counts from here: choosing the methods may search metric privacy's pairs
    # (2 s on a 20 × 20 map) and is part of the run
    deadline = options.deadline()
    bound = options.memory_bytes()
    # a line search is a run of ε points, warm-started like a sweep
    chain = choose_methods(
        request, options.solver, sweep=request.uses_line_search, max_memory_bytes=bound
    )
    cache = options.method_cache()
    if program is not None:  # the user's program, with any constraints added to it
        cache[("cvxpy", program.form)] = program
    result = solve_request(
        request,
        chain,
        tol=options.tol,
        deadline=deadline,
        raise_on_infeasible=options.raise_on_infeasible,
        on_progress=options.on_progress,
        cache=cache,
        max_memory=bound,
    )
    attach_notes(request, result)
    return result


def attach_notes(request: DesignRequest, result: DesignResult, stacklevel: int = 4) -> None:
    """Copy the request's notes and the notion's notes on the answer into ``result.extra``;
    a note that weakens the guarantee is also a warning.

    Parameters
    ----------
    request : DesignRequest
    result : DesignResult
    stacklevel : int
        Of the warning (the user's call).
    """
    result.extra.update(dict(request.notes))
    if result.mechanism is None or request.mode is None:
        return
    level = request.epsilon if request.mode == "epsilon" else result.epsilon
    notes = request.notion.result_notes(
        request.prior, result.mechanism.matrix, float(level), **request.options
    )
    for value in notes.values():
        if isinstance(value, str):
            warnings.warn(value, UserWarning, stacklevel=stacklevel)
    result.extra.update(notes)
