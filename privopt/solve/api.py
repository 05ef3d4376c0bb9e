"""The entry points: :func:`design` (one request), :func:`solve_problem` (a built cvxpy
program) and :func:`sweep` (a privacy–distortion curve)."""

from __future__ import annotations

__all__ = ["design", "solve_problem", "sweep"]

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from privopt.errors import InfeasibleError, InputError, close_matches
from privopt.methods.base import ProgressEvent
from privopt.model.types import DistortionLike, NeighborsLike, PriorLike
from privopt.request import prepare_request
from privopt.solve.options import DEFAULT_TOL, SolveOptions
from privopt.solve.progress import design_progress, points_progress
from privopt.solve.results import Curve, DesignResult
from privopt.solve.run import run_design
from privopt.solve.sweeps import solve_sweep_points, sweep_in_chunks
from privopt.solve.units import (
    check_unit,
    from_nats,
    least_level_message,
    records_in_unit,
    result_in_unit,
    to_nats,
)
from privopt.validation import (
    check_budget,
    check_callable,
    check_level,
)

if TYPE_CHECKING:  # pragma: no cover
    from privopt.methods.cvxpy_program.program import PrivacyProblem


def design(
    prior: PriorLike,
    distortion: DistortionLike,
    notion: str,
    *,
    epsilon: float | None = None,
    max_distortion: float | None = None,
    neighbors: NeighborsLike = None,
    solver: str | Sequence[str] | None = None,
    tol: float = DEFAULT_TOL,
    extra_distortions: Sequence[tuple] = (),
    observe_secret: bool = False,
    raise_on_infeasible: bool = True,
    time_limit: float | None = None,
    on_progress: Callable[[ProgressEvent], None] | None = None,
    solver_options: dict | None = None,
    max_memory: float | str | None = None,
    unit: str = "nats",
    progress: bool | None = None,
    **options,
) -> DesignResult:
    """Design the optimal mechanism for one request, re-measured and certified.

    Give exactly one of ``epsilon`` (least ``E[d]`` at that level) and ``max_distortion``
    (least level within that budget).

    Parameters
    ----------
    prior : Prior, JointPrior, DatabasePrior or array_like
        What the designer knows (a plain pmf is a single-secret :class:`~privopt.Prior`).
    distortion : Distortion, array_like or {"hamming", "absolute", "squared"}
        ``d[y, u]``; its column count sets the output alphabet.
    notion : str
        A registered notion (:func:`privopt.notion_names`).
    epsilon : float, optional
        The privacy level (nats; ``inf`` for none).
    max_distortion : float, optional
        The distortion budget.
    neighbors : NeighborRelation or {"hamming", "all"}, optional
        For ``dp`` and ``identifiability``; default Hamming on databases, all pairs otherwise.
    solver : str or sequence of str, optional
        A method (a cvxpy solver such as ``"CLARABEL"`` or a privopt method such as
        ``"symmetric"``; ``privopt solvers`` lists them) or a chain of them. Default: chosen
        automatically, with fallbacks.
    tol : float
        Bracket width of the budget-mode line search (nats).
    extra_distortions : sequence of (distortion, budget)
        Further constraints ``E[d_k] ≤ budget_k`` (Calmon & Fawaz 2012, Remark 1).
    observe_secret : bool
        The mechanism sees ``(Y, S)`` (Calmon & Fawaz 2012, Remarks 3–4); joint priors only.
    raise_on_infeasible : bool
        Raise :class:`~privopt.InfeasibleError` (default) or return a result with status
        ``infeasible`` and :attr:`~DesignResult.least_achievable`.
    time_limit : float, optional
        Seconds; a run that reaches it returns status ``time_limit`` (with the best feasible
        mechanism found, if any).
    on_progress : callable, optional
        Receives :class:`~privopt.methods.ProgressEvent` objects while the solve runs.
    solver_options : dict, optional
        ``{method name: {option: value}}`` handed to the methods (e.g. ``{"SCS": {"eps":
        1e-9}}``).
    unit : {"nats", "bits"}
        The unit of ``epsilon`` and of the result's levels (:mod:`privopt.solve.units`).
    max_memory : float or str, optional
        Memory bound in bytes (or ``"8G"``, ``"inf"``); methods estimated to need more are
        not tried, and a request none fits is an :class:`~privopt.InputError` naming its size
        (:mod:`privopt.resources`). Default: ``PRIVOPT_MAX_MEMORY`` or 4 GiB.
    progress : bool, optional
        A status line on stderr (the method at work, its iteration) once the solve has run
        2 s: by default only in a terminal or a notebook, and not when ``on_progress`` is
        given; ``True`` always, ``False`` never (:mod:`privopt.solve.progress`).
    **options
        The notion's own options (e.g. ``priors``, the prior class of ``robust_pml``).

    Returns
    -------
    DesignResult

    Raises
    ------
    InputError, InfeasibleError, SolverError

    Examples
    --------
    >>> import privopt as po
    >>> res = po.design([0.5, 0.3, 0.2], "hamming", "pml", epsilon=0.3)
    >>> res.status, res.verified, res.epsilon <= 0.3 + 1e-9
    ('optimal', True, True)
    """
    unit = check_unit(unit)
    asked = epsilon
    if unit != "nats" and epsilon is not None:
        epsilon = to_nats(check_level(epsilon, "epsilon"), unit)
    request = prepare_request(
        prior,
        distortion,
        notion,
        epsilon=epsilon,
        max_distortion=max_distortion,
        neighbors=neighbors,
        extra_distortions=extra_distortions,
        observe_secret=observe_secret,
        **options,
    )
    settings = SolveOptions.checked(
        solver=solver,
        tol=tol,
        time_limit=time_limit,
        raise_on_infeasible=raise_on_infeasible,
        on_progress=on_progress,
        solver_options=solver_options,
        max_memory=max_memory,
        unit=unit,
    )
    status = design_progress(progress, settings.on_progress, f"privopt: {request.notion.name}")
    if status is not None:
        settings = settings.replace(on_progress=status)
    try:
        result = run_design(request, settings)
    except InfeasibleError as exc:
        if unit != "nats" and exc.quantity == "epsilon" and exc.least_achievable is not None:
            least = from_nats(exc.least_achievable, unit)
            in_unit = InfeasibleError(least_level_message(str(exc), least, unit))
            in_unit.least_achievable, in_unit.quantity = least, "epsilon"
            raise in_unit from None
        raise
    finally:
        if status is not None:
            status.close()
    return result_in_unit(result, unit, requested=asked)


def solve_problem(
    pp: PrivacyProblem,
    solver: str | Sequence[str] | None = None,
    *,
    tol: float = DEFAULT_TOL,
    raise_on_infeasible: bool = True,
    time_limit: float | None = None,
    on_progress: Callable[[ProgressEvent], None] | None = None,
    solver_options: dict | None = None,
    max_memory: float | str | None = None,
) -> DesignResult:
    """Solve a built :class:`~privopt.methods.cvxpy_program.PrivacyProblem`, with any
    constraints added to it, through the same driver as :func:`design`.

    Parameters
    ----------
    pp : PrivacyProblem
        From :func:`privopt.build_problem`.
    solver : str or sequence of str, optional
        As in :func:`design`. With added constraints only the cvxpy methods apply.
    tol, raise_on_infeasible, time_limit, on_progress, solver_options, max_memory
        As in :func:`design`.

    Returns
    -------
    DesignResult
    """
    from privopt.methods.cvxpy_program.program import PrivacyProblem  # imports cvxpy

    if not isinstance(pp, PrivacyProblem):
        raise InputError(
            f"expected a PrivacyProblem from privopt.build_problem, got {type(pp).__name__}",
            "problem",
        )
    settings = SolveOptions.checked(
        solver=solver,
        tol=tol,
        time_limit=time_limit,
        raise_on_infeasible=raise_on_infeasible,
        on_progress=on_progress,
        solver_options=solver_options,
        max_memory=max_memory,
    )
    return run_design(pp.request, settings, pp)


def sweep(
    prior: PriorLike,
    distortion: DistortionLike,
    notion: str,
    *,
    epsilons: Sequence[float] | None = None,
    max_distortions: Sequence[float] | None = None,
    neighbors: NeighborsLike = None,
    solver: str | Sequence[str] | None = None,
    tol: float = DEFAULT_TOL,
    observe_secret: bool = False,
    extra_distortions: Sequence[tuple] = (),
    progress: Callable[[Iterable], Iterable] | bool | None = None,
    time_limit: float | None = None,
    on_progress: Callable[[ProgressEvent], None] | None = None,
    solver_options: dict | None = None,
    executor: Any = None,
    chunk_size: int | None = None,
    unit: str = "nats",
    max_memory: float | str | None = None,
    epsilon_range: tuple[float, float] | None = None,
    max_distortion_range: tuple[float, float] | None = None,
    band: float | None = None,
    band_abs: float | None = None,
    max_points: int | None = None,
    **options,
) -> Curve:
    """Sweep the privacy–distortion curve over ``epsilons`` or ``max_distortions``, or
    certify it on a whole range (``epsilon_range`` or ``max_distortion_range``).

    Each point goes through the same driver as :func:`design` and starts from the previous
    point's work where the method can (a simplex basis, a Blahut–Arimoto output law, the
    compiled cvxpy program re-solved through its parameter). Every point is verified; a
    point that fails is recorded with its status and message, never silently. Sort the
    points (ascending or descending) for the best warm starts.

    Parameters
    ----------
    prior, distortion, notion, neighbors, solver, tol, observe_secret, extra_distortions
        As in :func:`design`.
    epsilons : sequence of float, optional
        Levels (nats).
    max_distortions : sequence of float, optional
        Budgets (give exactly one of the two).
    progress : callable or bool, optional
        A bar of the points on stderr once the sweep has run 2 s: by default only in a
        terminal or a notebook; ``True`` always, ``False`` never
        (:mod:`privopt.solve.progress`); or a callable of your own that wraps the iterable of
        points (e.g. ``tqdm.tqdm``).
    time_limit : float, optional
        Seconds for the whole sweep; points after it are recorded with status
        ``time_limit``.
    on_progress : callable, optional
        Receives :class:`~privopt.methods.ProgressEvent` objects.
    solver_options, max_memory
        As in :func:`design` (with an ``executor``, the workers use ``PRIVOPT_MAX_MEMORY``).
    executor : concurrent.futures.Executor or distributed.Client, optional
        Spread the sweep over workers: the points are cut into chunks of ``chunk_size``
        consecutive points, each chunk solved by one task (warm starts stay within a chunk).
        A Dask ``distributed.Client`` is used through its ``get_executor()``. Points and
        results must pickle. See :mod:`privopt.solve.batch`.
    chunk_size : int, optional
        Points per chunk. Default without ``executor``: one chunk (the whole sweep); with
        one: enough chunks for two per worker. A sweep with an executor gives bit for bit
        the same records (timings aside) as the serial sweep with the same ``chunk_size``.
        With chunks, ``time_limit`` applies to each chunk.
    unit : {"nats", "bits"}
        The unit of ``epsilons`` and of the levels in the records and results (the
        ``closed_form.*`` columns stay in nats).
    epsilon_range, max_distortion_range : (float, float), optional
        Certify the curve on the whole range ``[lo, hi]`` (levels in ``unit``, or budgets):
        privopt chooses the points itself, refining where the certified band around the
        curve is wider than the tolerance, until it is within it everywhere or
        ``max_points`` (or ``time_limit``) is spent (:mod:`privopt.solve.curve_sweep`). The
        result's :attr:`Curve.band` bounds the optimum everywhere on the range, not only at
        the points (:mod:`privopt.solve.curve_band`).
    band : float, optional
        The tolerance as a fraction of the curve's range, ``D*(lo) − D*(hi)`` (or
        ``ε*(lo) − ε*(hi)``); default 0.01 with a range. With ``epsilons`` or
        ``max_distortions``, ``band`` or ``band_abs`` attaches the certified band of the
        given points (no point is added).
    band_abs : float, optional
        The tolerance as an absolute width (distortion units, or levels in ``unit`` for a
        budget curve).
    max_points : int, optional
        The point budget of a range (default 100).
    **options
        The notion's own options.

    Returns
    -------
    Curve
    """
    ranged = epsilon_range is not None or max_distortion_range is not None
    if ranged or band is not None or band_abs is not None or max_points is not None:
        given = [
            n
            for n, v in (
                ("epsilons", epsilons),
                ("max_distortions", max_distortions),
                ("epsilon_range", epsilon_range),
                ("max_distortion_range", max_distortion_range),
            )
            if v is not None
        ]
        if len(given) != 1:
            raise InputError(
                "give exactly one of 'epsilons', 'max_distortions', 'epsilon_range' and "
                "'max_distortion_range'",
                "sweep",
            )
        if executor is not None or chunk_size is not None:
            raise InputError("a certified band is computed in one process", "executor")
        return _banded_sweep(
            prior,
            distortion,
            notion,
            given[0],
            {
                "epsilons": epsilons,
                "max_distortions": max_distortions,
                "epsilon_range": epsilon_range,
                "max_distortion_range": max_distortion_range,
            }[given[0]],
            band=band,
            band_abs=band_abs,
            max_points=max_points,
            neighbors=neighbors,
            solver=solver,
            tol=tol,
            observe_secret=observe_secret,
            extra_distortions=extra_distortions,
            time_limit=time_limit,
            on_progress=on_progress,
            solver_options=solver_options,
            unit=unit,
            max_memory=max_memory,
            **options,
        )
    unit = check_unit(unit)
    mode, values, points = _sweep_points(epsilons, max_distortions, unit, options)
    first_ok = next(v for v in points if not isinstance(v, InputError))
    settings = SolveOptions.checked(
        solver=solver,
        tol=tol,
        time_limit=time_limit,
        on_progress=on_progress,
        solver_options=solver_options,
        max_memory=max_memory,
        unit=unit,
    )
    if not (progress is None or isinstance(progress, bool)):
        progress = check_callable(progress, "progress")
    request = prepare_request(
        prior,
        distortion,
        notion,
        neighbors=neighbors,
        observe_secret=observe_secret,
        extra_distortions=extra_distortions,
        **{mode: first_ok},
        **options,
    )
    progress = points_progress(progress, f"privopt: {request.notion.name}")
    if executor is None and chunk_size is None:
        records, results = solve_sweep_points(request, mode, points, values, settings, progress)
    else:
        records, results = sweep_in_chunks(
            request,
            mode,
            points,
            values,
            options=settings,
            executor=executor,
            chunk_size=chunk_size,
            progress=progress,
        )
    if unit != "nats":
        records = records_in_unit(records, mode, unit, values)
        results = [
            result_in_unit(r, unit, values[i] if mode == "epsilon" else None)
            if r is not None
            else None
            for i, r in enumerate(results)
        ]
    return Curve(request.notion.name, mode, records, results, unit=unit)


def _sweep_points(epsilons, max_distortions, unit: str, options: dict) -> tuple[str, list, list]:
    """The mode of a sweep, its points as given, and each point checked (in nats): a bad
    point is an :class:`InputError` in its place (recorded, the others still solved)."""
    if (epsilons is None) == (max_distortions is None):
        if epsilons is None:  # a misspelt keyword (epsilon=, max_distortion=) is named
            for key in options:
                close = close_matches(key, ("epsilons", "max_distortions"))
                if close:
                    raise InputError(
                        f"sweep takes no keyword {key!r}: give the points as epsilons= (levels) "
                        "or max_distortions= (budgets)",
                        key,
                        suggestions=close,
                    )
        raise InputError("give exactly one of 'epsilons' and 'max_distortions'", "sweep")
    mode = "epsilon" if epsilons is not None else "max_distortion"
    field = "epsilons" if mode == "epsilon" else "max_distortions"
    raw = epsilons if epsilons is not None else max_distortions
    if isinstance(raw, (str, bytes)):
        raise InputError("expected a sequence of numbers, got a string", field)
    try:
        values = list(raw)
    except TypeError:
        raise InputError(f"expected a sequence of numbers, got {raw!r}", field) from None
    if not values:
        raise InputError("no points to sweep", field)
    check = check_level if mode == "epsilon" else check_budget
    points: list = []
    for i, v in enumerate(values):
        try:
            point = check(v, f"{field}[{i}]")
            points.append(to_nats(point, unit) if mode == "epsilon" else point)
        except InputError as exc:
            points.append(exc)
    if all(isinstance(v, InputError) for v in points):
        raise points[0]
    return mode, values, points


def _banded_sweep(
    prior,
    distortion,
    notion,
    kind: str,
    given,
    *,
    band,
    band_abs,
    max_points,
    neighbors,
    solver,
    tol,
    observe_secret,
    extra_distortions,
    time_limit,
    on_progress,
    solver_options,
    unit,
    max_memory,
    **options,
) -> Curve:
    """A sweep with its certified band: adaptive on a range, or over given points."""
    from privopt.solve.curve_sweep import (
        DEFAULT_MAX_POINTS,
        certified_sweep,
        check_band,
        check_points,
        check_range,
    )

    unit = check_unit(unit)
    mode = "epsilon" if kind in ("epsilons", "epsilon_range") else "max_distortion"
    band, band_abs = check_band(band, band_abs)
    if band_abs is not None and mode == "max_distortion":
        band_abs = to_nats(band_abs, unit)
    settings = SolveOptions.checked(
        solver=solver,
        tol=tol,
        time_limit=time_limit,
        on_progress=on_progress,
        solver_options=solver_options,
        max_memory=max_memory,
        unit=unit,
    )
    refine = kind.endswith("_range")
    values = None
    if refine:
        lo, hi = check_range(given, kind, budget=mode == "max_distortion")
        if mode == "epsilon":
            lo, hi = to_nats(lo, unit), to_nats(hi, unit)
        limit = DEFAULT_MAX_POINTS if max_points is None else check_points(max_points)
    else:
        if max_points is not None:
            raise InputError("a point budget applies to a range only", "max_points")
        if isinstance(given, (str, bytes)):
            raise InputError("expected a sequence of numbers, got a string", kind)
        check = check_level if mode == "epsilon" else check_budget
        try:
            values = [check(v, f"{kind}[{i}]") for i, v in enumerate(given)]
        except TypeError:
            raise InputError(f"expected a sequence of numbers, got {given!r}", kind) from None
        if not values:
            raise InputError("no points to sweep", kind)
        if mode == "epsilon":
            values = [to_nats(v, unit) for v in values]
        lo, hi = min(values), max(values)
        limit = len(values)
    request = prepare_request(
        prior,
        distortion,
        notion,
        neighbors=neighbors,
        observe_secret=observe_secret,
        extra_distortions=extra_distortions,
        **{mode: lo},
        **options,
    )
    if refine:
        least = request.least_level() if mode == "epsilon" else request.least_distortion()
        if lo < least - 1e-12 * (1.0 + abs(least)):
            what = "level" if mode == "epsilon" else "distortion"
            shown = from_nats(least, unit) if mode == "epsilon" else least
            raise InputError(
                f"the range starts below the least achievable {what}, {shown:.9g}: start it "
                "there or above",
                kind,
            )
    curve = certified_sweep(
        request,
        mode,
        lo,
        hi,
        band=band,
        band_abs=band_abs,
        max_points=limit,
        solver=settings.solver,
        tol=settings.tol,
        time_limit=settings.time_limit,
        solver_options=settings.solver_options,
        on_progress=settings.on_progress,
        max_memory=settings.max_memory,
        refine=refine,
        values=values,
    )
    if unit != "nats":
        records = records_in_unit([dict(r) for r in curve.records], mode, unit)
        keys = ("requested_epsilon",) if mode == "epsilon" else ("epsilon_lower", "epsilon_upper")
        for r in records:
            for key in keys:
                if r.get(key) is not None:
                    r[key] = from_nats(r[key], unit)
        results = [None if r is None else result_in_unit(r, unit) for r in curve.results]
        curve = Curve(
            curve.notion, mode, records, results, unit=unit, band=curve.band.in_unit(unit)
        )
    return curve
