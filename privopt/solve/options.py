"""The settings of a run, checked once: :class:`SolveOptions`.

Every entry point (:func:`privopt.design`, :func:`privopt.sweep`, :func:`privopt.solve_many`,
:func:`privopt.solve_problem`, and through them the problem files and the command line)
turns its keyword arguments into one frozen :class:`SolveOptions` with
:meth:`SolveOptions.checked`; the layers below receive that object instead of loose
settings, so that a setting is validated in one place and travels whole (to a worker process
too: it pickles when its ``on_progress`` does).
"""

from __future__ import annotations

__all__ = ["SolveOptions", "DEFAULT_TOL", "check_solver_options", "method_cache"]

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from privopt.errors import InputError
from privopt.methods.base import Deadline, ProgressEvent
from privopt.resources import max_memory as memory_bound
from privopt.solve.units import check_unit
from privopt.validation import check_callable, check_flag, check_time_limit, check_tolerance

#: Default bracket width of the budget-mode line search (nats).
DEFAULT_TOL = 1e-7


def check_solver_options(solver_options: Mapping | None) -> dict[str, dict]:
    """``{method name: {option: value}}``, checked.

    Parameters
    ----------
    solver_options : mapping, optional
        Options handed to the methods (e.g. ``{"SCS": {"eps": 1e-9}}``).

    Returns
    -------
    dict
        A new dict of new dicts (empty for ``None``).

    Raises
    ------
    InputError
        Field ``solver_options``, when it is not a mapping of mappings.
    """
    if solver_options is None:
        return {}
    if not isinstance(solver_options, Mapping):
        raise InputError("expected a dict {method name: {option: value}}", "solver_options")
    for name, opts in solver_options.items():
        if not isinstance(opts, Mapping):
            raise InputError(
                f"the options of {name!r} must be a dict {{option: value}}, got "
                f"{type(opts).__name__} {opts!r}",
                "solver_options",
            )
    return {str(name): dict(opts) for name, opts in solver_options.items()}


def method_cache(solver_options: Mapping | None) -> dict:
    """Checked solver options laid out as the methods read them from the run's cache (keys
    ``("options", name)``).

    Parameters
    ----------
    solver_options : mapping, optional
        As for :func:`check_solver_options`.

    Returns
    -------
    dict
        A new dict (the run's cache starts from it).

    Raises
    ------
    InputError
        Field ``solver_options``, when it is not a mapping of mappings.
    """
    return {("options", name): opts for name, opts in check_solver_options(solver_options).items()}


@dataclass(frozen=True)
class SolveOptions:
    """How to solve: the settings shared by every entry point, checked.

    Build it with :meth:`checked` (which validates every field and names the one that is
    wrong); the constructor itself does not check.

    Attributes
    ----------
    solver : str or tuple of str or None
        The methods to try, in order (``None``: chosen automatically); the names are resolved
        against the request by :func:`~privopt.solve.selection.choose_methods`.
    tol : float
        Bracket width of the budget-mode line search (nats).
    time_limit : float or None
        Seconds for the whole run (``None``: no limit).
    raise_on_infeasible : bool
        Raise :class:`~privopt.errors.InfeasibleError` (``True``) or return a result with
        status ``infeasible``.
    on_progress : callable or None
        Receives :class:`~privopt.methods.ProgressEvent` objects.
    solver_options : dict
        ``{method name: {option: value}}``, checked.
    max_memory : float
        The memory bound in bytes (the default bound already resolved).
    unit : {"nats", "bits"}
        The unit of the levels given and reported.
    """

    solver: str | tuple[str, ...] | None = None
    tol: float = DEFAULT_TOL
    time_limit: float | None = None
    raise_on_infeasible: bool = True
    on_progress: Callable[[ProgressEvent], None] | None = None
    solver_options: dict = field(default_factory=dict)
    max_memory: float | None = None
    unit: str = "nats"

    @classmethod
    def checked(
        cls,
        *,
        solver: str | Sequence[str] | None = None,
        tol: float = DEFAULT_TOL,
        time_limit: float | None = None,
        raise_on_infeasible: bool = True,
        on_progress: Callable[[ProgressEvent], None] | None = None,
        solver_options: Mapping | None = None,
        max_memory: float | str | None = None,
        unit: str = "nats",
    ) -> SolveOptions:
        """Validate the settings as the API takes them.

        Parameters
        ----------
        solver : str or sequence of str, optional
        tol : float
        time_limit : float, optional
            Seconds; ``inf`` or a huge value is no limit.
        raise_on_infeasible : bool
        on_progress : callable, optional
        solver_options : mapping, optional
        max_memory : float or str, optional
            Bytes, or a size such as ``"8G"``; default :func:`privopt.resources.max_memory`.
        unit : {"nats", "bits"}

        Returns
        -------
        SolveOptions

        Raises
        ------
        InputError
            Naming the field that is wrong (``tol``, ``time_limit``, ``raise_on_infeasible``,
            ``on_progress``, ``solver_options``, ``max_memory``, ``unit``).
        """
        if solver is not None and not isinstance(solver, str):
            if not isinstance(solver, Sequence) or not all(isinstance(s, str) for s in solver):
                raise InputError(
                    f"expected a method name or a list of names, got {solver!r:.80}", "solver.name"
                )
            solver = tuple(solver)
        # the memory bound stays unresolved when it is not given, so that options checked
        # now follow PRIVOPT_MAX_MEMORY as it is when a run starts (and in a worker)
        bound = None if max_memory is None else memory_bound(max_memory)
        return cls(
            solver=solver,
            tol=check_tolerance(tol, "tol"),
            time_limit=check_time_limit(time_limit, "time_limit"),
            raise_on_infeasible=check_flag(raise_on_infeasible, "raise_on_infeasible"),
            on_progress=check_callable(on_progress, "on_progress"),
            solver_options=check_solver_options(solver_options),
            max_memory=bound,
            unit=check_unit(unit),
        )

    def replace(self, **changes: Any) -> SolveOptions:
        """A copy with some fields changed (not checked again: give checked values).

        Parameters
        ----------
        **changes
            Field names and their new values.

        Returns
        -------
        SolveOptions
        """
        return dataclasses.replace(self, **changes)

    def deadline(self) -> Deadline:
        """A new deadline of :attr:`time_limit` seconds from now.

        Returns
        -------
        Deadline
        """
        return Deadline(self.time_limit)

    def memory_bytes(self) -> float:
        """The memory bound in force: :attr:`max_memory`, else the default bound now.

        Returns
        -------
        float
        """
        return memory_bound(None) if self.max_memory is None else float(self.max_memory)

    def method_cache(self) -> dict:
        """The run's cache, started with the methods' options (:func:`method_cache`).

        Returns
        -------
        dict
        """
        return method_cache(self.solver_options)
