"""The interface every method implements, and the one registry of method names.

A *method* solves one point of a design request: the least ``E[d]`` at a level ε (an
"ε point") or, where it can, the least level within a budget (a "budget point"). The cvxpy
program with each installed cvxpy solver is a method (named as cvxpy names the solver:
``CLARABEL``, ``HIGHS``, …); so is each of privopt's own fast paths (``symmetric``,
``blahut-arimoto``, ``sparse-highs-…``). The solve driver (:mod:`privopt.solve`) owns the
rest: modes, line search, verification and repair, certificates, fallback from one method to
the next, time limits and warm starts.

Everything a method returns travels as typed objects: :class:`Answer` (the raw answer and
what the method knows about it) with its :class:`Certificate` (a lower bound on the optimum)
and, for answers too large to hold densely, a structured :class:`Measurement`.

How a method registers
----------------------
A method is an instance of a :class:`Method` subclass handed to :func:`register` when its
module is imported; :mod:`privopt.methods` imports every such module (add a new one to its
list). The instance holds all that is needed to decide whether and when to use the method
without running it: its :attr:`~Method.name`, :attr:`~Method.description`,
:attr:`~Method.family`, :attr:`~Method.priority` and :attr:`~Method.memory_model`, and its
rules :meth:`~Method.unsupported` (the notions, kinds of prior, cones and sizes it takes),
:meth:`~Method.auto`, :meth:`~Method.rescues` and :meth:`~Method.solves_budget`. The method
listing (``privopt solvers``) and the selection (:mod:`privopt.solve.selection`) ask every
registered method these questions, so:

* the module that registers a method (and its package's ``__init__``) imports only numpy,
  privopt's lower layers and light modules of its own; its rules stay cheap;
* everything heavy the method needs to *run* — cvxpy, the solver packages (``highspy``,
  ``clarabel``, …), ``scipy.optimize``, and the method's own modules that import them — is
  imported inside :meth:`~Method.solve` (or what only it calls), at its first use;
* :func:`installed` tells whether a package is there without importing it (e.g. to register
  a method only where its solver is installed).

A new method follows the same pattern::

    class MyMethod(Method):
        name = "my-method"
        description = "one line for privopt solvers"
        priority = 10

        def unsupported(self, request):
            return plain_linear_reason(request, {"pml", "ldp"})

        def solve(self, task):
            from privopt.methods.my_method.run import solve_point  # imports the solver

            return solve_point(task)


    register(MyMethod())

``tests/repository/test_imports.py`` keeps it so: in a fresh interpreter, registering, listing and
choosing methods import none of the heavy packages, and a design answered by a method that
does not use cvxpy leaves cvxpy unloaded.
"""

from __future__ import annotations

__all__ = [
    "Answer",
    "Certificate",
    "Deadline",
    "Measurement",
    "Method",
    "ProgressEvent",
    "Stopping",
    "Task",
    "METHODS",
    "register",
    "register_alias",
    "lookup",
    "method_names",
    "TimeLimitReached",
    "deferred_exports",
    "installed",
    "plain_linear_reason",
]

import abc
import enum
import importlib
import importlib.util
import math
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from privopt._docstrings import complete_overrides
from privopt.errors import InputError
from privopt.status import Status

if TYPE_CHECKING:  # pragma: no cover
    from privopt.request import DesignRequest


class TimeLimitReached(Exception):
    """Raised inside a method when its :class:`Deadline` has passed (caught by the method,
    which then answers with :attr:`Status.TIME_LIMIT`)."""


#: Limits of more seconds than this (about 31 years) are no limit: a deadline that far away
#: is never reached, and waiting on it would overflow the operating system's timeouts.
NO_LIMIT_BEYOND = 1e9


class Deadline:
    """A wall-clock limit for a run.

    Parameters
    ----------
    seconds : float or None
        The time allowed from ``since``, ``≥ 0`` (0: already passed); ``None``, ``inf`` or
        more than :data:`NO_LIMIT_BEYOND` for no limit.
    since : float, optional
        When the time started (a ``time.perf_counter()`` value; default now): e.g. the start
        of a command whose limit covers reading its files too.
    """

    def __init__(self, seconds: float | None = None, since: float | None = None) -> None:
        self.seconds = seconds
        self.start = time.perf_counter() if since is None else float(since)
        limited = seconds is not None and seconds <= NO_LIMIT_BEYOND  # no float(10**400)
        self.end = self.start + max(float(seconds), 0.0) if limited else math.inf

    @property
    def limited(self) -> bool:
        """Whether there is a limit at all (``bool``: ``False`` for ``seconds=None``)."""
        return math.isfinite(self.end)

    def remaining(self) -> float:
        """Seconds left (``inf`` without a limit, never negative).

        Returns
        -------
        float
            Seconds until the limit, in ``[0, inf]``.
        """
        return max(0.0, self.end - time.perf_counter())

    def elapsed(self) -> float:
        """Seconds since the deadline was set.

        Returns
        -------
        float
            Wall-clock seconds (``time.perf_counter``) since construction, ``≥ 0``.
        """
        return time.perf_counter() - self.start

    def expired(self) -> bool:
        """Whether the limit has passed.

        Returns
        -------
        bool
            ``True`` once the limit has passed; always ``False`` without a limit.
        """
        return time.perf_counter() >= self.end

    def check(self) -> None:
        """Raise :class:`TimeLimitReached` if the limit has passed."""
        if self.expired():
            raise TimeLimitReached(f"time limit of {self.seconds:g} s reached")


class Stopping(str, enum.Enum):
    """How a method honours :attr:`Task.deadline`: what the solve driver can rely on.

    ``CHECKS``
        privopt's own loops check the deadline between steps that each take a small part of
        a second to a few seconds at the sizes the method takes (``block-ipm``,
        ``blahut-arimoto``, ``symmetric``, the closed forms): the method returns soon after
        the deadline, with its best iterate where it has one. It always runs in the
        driver's process.
    ``NATIVE``
        The method hands the time left to a native solver's own limit (HiGHS's and
        Clarabel's ``time_limit``, SCS's ``time_limit_secs``, an iteration cap), but its
        set-up (building the program, a compilation, a first factorisation) cannot be
        interrupted and may allocate without bound.
    ``NONE``
        Nothing stops the method once it started.

    Under a time limit the driver runs a method that is not ``CHECKS``, on a request large
    enough for a child process to pay (:mod:`privopt.solve.isolation`), in a child process
    that it terminates at the deadline; the memory bound is that process's address-space
    limit.
    """

    CHECKS = "checks"
    NATIVE = "native"
    NONE = "none"


@dataclass(frozen=True)
class ProgressEvent:
    """What a long run reports while it works (to ``on_progress`` callbacks).

    Attributes
    ----------
    stage : str
        ``"start"`` (a method starts a point), ``"iteration"`` (a method's own progress),
        ``"done"`` (a point is answered), ``"fallback"`` (the next method takes over),
        ``"line_search"`` (a bisection step of the budget-mode search).
    method : str
        The method at work.
    elapsed : float
        Seconds since the run started.
    iteration : int or None
        The method's iteration count, where it reports one.
    message : str
        A short human-readable note.
    """

    stage: str
    method: str
    elapsed: float
    iteration: int | None = None
    message: str = ""


@dataclass(frozen=True)
class Certificate:
    """Evidence of optimality: a lower bound on the optimal objective of the point.

    Attributes
    ----------
    lower_bound : float or None
        A value no feasible mechanism can beat (``E[d]`` for an ε point, the level for a
        budget point), or ``None`` when the method has none.
    source : str
        Where the bound comes from (e.g. "HiGHS dual objective", "Blahut–Arimoto dual bound").
    details : dict
        JSON-ready numbers about it (iterations, slopes, tolerances…).
    dual_point : Multipliers or None
        The multipliers of the notion's own constraints the bound was computed at
        (:class:`~privopt.methods.multipliers.Multipliers`), when the method can state them.
        The driver then evaluates the bound again from them, through the notion's Lagrangian
        terms, independently of the program the method wrote, and keeps the smaller of the
        two: a method whose rows were not the notion's cannot certify its answer.
    """

    lower_bound: float | None
    source: str
    details: dict = field(default_factory=dict)
    dual_point: Any = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class Measurement:
    """A structured re-measurement of an answer too large to hold as a dense matrix,
    computed independently of the solve (e.g. on orbits of a symmetric mechanism).

    Attributes
    ----------
    level : float
        The notion's level of the mechanism (nats).
    distortion : float
        Its ``E[d]``.
    row_sum_error : float
        The largest ``|Σ_u W[x,u] − 1|`` (negative entries count as errors too).
    details : dict
        JSON-ready extras (how it was measured).
    """

    level: float
    distortion: float
    row_sum_error: float
    details: dict = field(default_factory=dict)


@dataclass
class Answer:
    """What a method returns for one point, before the driver verifies it.

    Attributes
    ----------
    status : Status
        ``OPTIMAL`` / ``OPTIMAL_INACCURATE`` (an answer), ``INFEASIBLE``, ``FAILED`` or
        ``TIME_LIMIT``.
    method : str
        The method's registered name.
    matrix : numpy.ndarray or None
        The dense mechanism ``W[y, u]`` as the method computed it.
    structured : object or None
        A structured mechanism (``row(i)``, ``sample``, ``to_dense``, ``describe``) when the
        dense one is too large or the structure is worth keeping.
    measured : Measurement or None
        The method's structured re-measurement, for answers with no dense ``matrix``.
    objective : float
        The method's optimal value: ``E[d]`` at an ε point, the level (nats) at a budget
        point.
    certificate : Certificate or None
        A lower bound on the optimum, when the method has one.
    iterations : int or None
    solve_time, build_time : float
        Seconds.
    least_achievable : float or None
        With ``INFEASIBLE``: the least achievable level or distortion, when known.
    message : str
        Why a point failed, or a note.
    warm : object
        What a later point of the same instance can start from (a simplex basis, an output
        pmf); never serialised.
    details : dict
        JSON-ready facts about the run (LP sizes, the HiGHS status, …).
    """

    status: Status
    method: str
    matrix: np.ndarray | None = None
    structured: Any = None
    measured: Measurement | None = None
    objective: float = math.nan
    certificate: Certificate | None = None
    iterations: int | None = None
    solve_time: float = 0.0
    build_time: float = 0.0
    least_achievable: float | None = None
    message: str = ""
    warm: Any = field(default=None, repr=False)
    details: dict = field(default_factory=dict)


@dataclass
class Task:
    """One point handed to a method.

    Attributes
    ----------
    request : DesignRequest
        The validated request (its mode may differ from the point's: a line search hands
        ε points of a budget-mode request).
    epsilon : float or None
        An ε point: minimise ``E[d]`` subject to level ≤ ε.
    budget : float or None
        A budget point: minimise the level subject to ``E[d] ≤ budget``.
    tol : float
        The accuracy asked of the method (relative duality gap).
    deadline : Deadline
    warm : object
        The ``warm`` of a previous answer of the same method on the same instance, or None.
    cache : dict
        Scratch space shared by the points of one run (e.g. a compiled cvxpy program).
    report : callable or None
        ``report(ProgressEvent)`` for progress.
    """

    request: DesignRequest
    epsilon: float | None = None
    budget: float | None = None
    tol: float = 1e-9
    deadline: Deadline = field(default_factory=Deadline)
    warm: Any = None
    cache: dict = field(default_factory=dict)
    report: Callable[[ProgressEvent], None] | None = None

    def emit(
        self, method: str, stage: str, iteration: int | None = None, message: str = ""
    ) -> None:
        """Send a :class:`ProgressEvent` to :attr:`report`, if any.

        Parameters
        ----------
        method : str
            The registered name of the method at work.
        stage : str
            ``"start"``, ``"iteration"``, ``"done"``, ``"fallback"`` or ``"line_search"``
            (see :class:`ProgressEvent`).
        iteration : int or None
            The method's iteration count, where it reports one (default ``None``).
        message : str
            A short human-readable note (default empty).
        """
        if self.report is not None:
            self.report(ProgressEvent(stage, method, self.deadline.elapsed(), iteration, message))


class Method(abc.ABC):
    """A way to solve points of a design request (see the module docstring).

    Attributes
    ----------
    name : str
        The name users pass as ``solver=`` (``[solver] name``, ``--solver``).
    description : str
        One line for ``privopt solvers`` and the documentation.
    family : str
        ``"cvxpy"`` (the cvxpy program with a cvxpy solver) or ``"privopt"`` (a fast path).
    priority : int
        Higher is tried first among the methods picked automatically.
    warm_starts : bool
        Whether passing the previous answer's ``warm`` saves work (sweeps, line searches).
    stopping : Stopping
        How the method honours :attr:`Task.deadline` (default ``NATIVE``: a native solver's
        limit, not during the set-up); the driver isolates the methods that are not
        ``CHECKS`` in a child process under a time limit on large requests. A new method
        declares what it does; nothing else is needed.
    memory_model : str
        How :func:`privopt.resources.estimate_bytes` costs the method: ``"cvxpy"``,
        ``"sparse"``, ``"sparse_clarabel"``, ``"dense"``, ``"structured"`` or ``"columns"``.

    An override in a subclass documents what it does for its method; the ``Parameters`` and
    ``Returns`` sections it leaves out are those of the method here
    (:mod:`privopt._docstrings`).
    """

    name: str = ""
    description: str = ""
    family: str = "privopt"
    priority: int = 0
    warm_starts: bool = False
    stopping: Stopping = Stopping.NATIVE
    memory_model: str = "dense"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # the Parameters and Returns an override leaves out are the overridden method's
        super().__init_subclass__(**kwargs)
        complete_overrides(cls)

    @abc.abstractmethod
    def unsupported(self, request: DesignRequest) -> str | None:
        """``None`` when the method can solve ``request``; otherwise why not (one phrase).

        Parameters
        ----------
        request : DesignRequest
            The validated request.

        Returns
        -------
        str or None
            ``None`` when the method takes the request, else one phrase saying why not, shown
            in messages (e.g. ``"needs a single secret (no joint prior)"``).
        """

    def memory_bytes(self, request: DesignRequest, exact: bool = True) -> float:
        """The memory the method needs for ``request`` (bytes, coarse): by default the
        estimate of its :attr:`memory_model` (:func:`privopt.resources.estimate_bytes`); a
        method whose footprint depends on more than the model overrides it.

        Parameters
        ----------
        request : DesignRequest
            The validated request.
        exact : bool
            ``False``: a lower bound that does not search for metric privacy's constraint
            pairs (checked first, so that a map far too large is refused at once).

        Returns
        -------
        float
        """
        from privopt.resources import estimate_bytes

        return estimate_bytes(request, self.memory_model, exact)

    def auto(self, request: DesignRequest, *, sweep: bool = False) -> bool:
        """Whether to pick the method without being named (for a single design, or a
        ``sweep`` where warm starts change the balance). Each choice should rest on a
        measurement in ``benchmarks/``.

        Parameters
        ----------
        request : DesignRequest
            The validated request, which the method supports (:meth:`unsupported` is
            ``None``).
        sweep : bool
            Whether the point is one of a sweep or line search, whose later points start
            warm from earlier answers (default ``False``: a single design).

        Returns
        -------
        bool
            ``True`` to pick the method without being named; ``False`` by default.
        """
        return False

    def rescues(self, request: DesignRequest) -> bool:
        """Whether to try the method, when :meth:`auto` did not pick it, after the automatic
        choices (but before the first-order last resorts) have failed to certify a point: a
        fallback chosen for its accuracy, not its speed. It costs nothing on the points the
        automatic choices certify.

        Parameters
        ----------
        request : DesignRequest
            The validated request, which the method supports (:meth:`unsupported` is
            ``None``).

        Returns
        -------
        bool
            ``True`` to try the method as an accurate fallback; ``False`` by default.
        """
        return False

    def solves_budget(self, request: DesignRequest) -> bool:
        """Whether the method answers budget points of ``request`` itself (beyond the
        notions whose level is a convex objective, which every method answers).

        Parameters
        ----------
        request : DesignRequest
            The validated request.

        Returns
        -------
        bool
            ``True`` when the method minimises the level within a budget itself; by default
            the notion's ``direct_level``. It is asked only of budget requests that are not
            line-searched over ε points, and a method answering ``False`` is not chosen for
            them.
        """
        return bool(request.notion.direct_level)

    @abc.abstractmethod
    def solve(self, task: Task) -> Answer:
        """Solve one point; never raises for a solver failure (returns ``FAILED``).

        Parameters
        ----------
        task : Task
            The point: an ε point (``task.epsilon`` set) or a budget point (``task.budget``
            set), with its accuracy, deadline, warm start and progress callback.

        Returns
        -------
        Answer
            The raw answer before the driver verifies it: ``OPTIMAL`` or
            ``OPTIMAL_INACCURATE`` with a mechanism, or ``INFEASIBLE``, ``FAILED`` or
            ``TIME_LIMIT`` with a message.
        """

    def __repr__(self) -> str:
        return f"<method {self.name} ({self.family})>"


def installed(package: str) -> bool:
    """Whether the Python package ``package`` can be imported, found without importing it
    (``importlib.util.find_spec``).

    Parameters
    ----------
    package : str
        A top-level module name, e.g. ``"highspy"``.

    Returns
    -------
    bool
        ``True`` when an importable module of that name is on the path.
    """
    try:
        return importlib.util.find_spec(package) is not None
    except (ImportError, ValueError):  # a broken package, or a module without a spec
        return False


def deferred_exports(package: str, exports: dict[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` (PEP 562) for a method package that re-exports names of its
    heavy modules: each name is imported from its module on first use, so that registering
    the method (which imports the package) does not import them.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    exports : dict
        Public name → the submodule of ``package`` that defines it. No name may be that of
        a submodule: importing the submodule would bind its name in the package and shadow
        the export (``blahut_arimoto`` imports ``rate_distortion`` eagerly for that reason).

    Returns
    -------
    callable
        To be bound as the package's ``__getattr__``; it raises ``AttributeError`` for any
        other name (so that ``from package import submodule`` still imports the submodule).

    Raises
    ------
    ValueError
        If an exported name is also the name of one of the submodules (a programming error).
    """
    shadowed = set(exports) & set(exports.values())
    if shadowed:
        raise ValueError(f"{package}: exports named like a submodule: {sorted(shadowed)}")

    def __getattr__(name: str) -> Any:
        try:
            module = exports[name]
        except KeyError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        return getattr(importlib.import_module(f"{package}.{module}"), name)

    return __getattr__


def plain_linear_reason(request: DesignRequest, notions: Collection[str]) -> str | None:
    """Why a method for plain single-secret requests of the ``notions`` cannot take
    ``request`` (``None`` when it can): the shared first checks of the LP methods.

    Parameters
    ----------
    request : DesignRequest
    notions : collection of str
        The notions the method solves.

    Returns
    -------
    str or None
    """
    if request.notion.name not in notions:
        return f"solves the linear notions {', '.join(sorted(notions))} only"
    if request.prior.is_joint:
        return "needs a single secret (no joint prior)"
    if not request.is_plain:
        return "takes no extra distortion budgets or added constraints"
    return None


#: Every registered method by name.
METHODS: dict[str, Method] = {}
#: Other accepted spellings → registered name.
ALIASES: dict[str, str] = {}


def register(method: Method) -> Method:
    """Add ``method`` to :data:`METHODS` (its name must be new, also case-insensitively).

    Parameters
    ----------
    method : Method
        An instance with a non-empty :attr:`Method.name` that no registered method or alias
        has, in any case.

    Returns
    -------
    Method
        ``method`` itself.

    Raises
    ------
    ValueError
        If the name is empty or already taken (a programming error, not a user's).
    """
    key = method.name
    if not key or any(k.lower() == key.lower() for k in (*METHODS, *ALIASES)):
        raise ValueError(f"method name {key!r} is empty or registered twice")
    METHODS[key] = method
    return method


def register_alias(alias: str, name: str) -> None:
    """Accept ``alias`` as another name of the registered method ``name``.

    Parameters
    ----------
    alias : str
        The other spelling (matched case-insensitively, like names).
    name : str
        A registered method name.

    Raises
    ------
    ValueError
        If ``alias`` clashes with a registered name or alias (a programming error in a
        method module, raised at import).
    """
    if any(k.lower() == alias.lower() for k in (*METHODS, *ALIASES)):
        raise ValueError(f"alias {alias!r} clashes with a registered name")
    ALIASES[alias] = name


def lookup(name: str) -> Method | None:
    """The method called ``name`` (case-insensitive; aliases accepted), or ``None``.

    Parameters
    ----------
    name : str
        A registered method name or alias, in any case; surrounding spaces are ignored.

    Returns
    -------
    Method or None
        The registered method, or ``None`` when no name or alias matches.

    Raises
    ------
    InputError
        If ``name`` is not a string (field ``solver.name``).
    """
    if not isinstance(name, str):
        raise InputError(f"expected a method name (a string), got {name!r}", "solver.name")
    folded = name.strip().lower()
    for key, method in METHODS.items():
        if key.lower() == folded:
            return method
    for alias, target in ALIASES.items():
        if alias.lower() == folded:
            return METHODS[target]
    return None


def method_names(family: str | None = None) -> list[str]:
    """Registered method names (of one ``family`` if given), cvxpy solvers first.

    Parameters
    ----------
    family : {"cvxpy", "privopt"} or None
        Only the methods of this family; ``None`` for all.

    Returns
    -------
    list of str
        Sorted by family (cvxpy first), then by name.
    """
    names = [n for n, m in METHODS.items() if family is None or m.family == family]
    return sorted(names, key=lambda n: (METHODS[n].family != "cvxpy", n))
