"""Sweeps: consecutive points of a privacy–distortion curve, warm-started from each other,
in this process or in chunks over an executor.

:func:`sweep_points` is the loop of :func:`privopt.sweep` (each point through the driver,
warm-started from the previous one, every point recorded with its status);
:func:`solve_sweep_points` chooses the methods and runs that loop on one chunk;
:func:`sweep_in_chunks` cuts a sweep into chunks of consecutive points and solves them one
after the other here or at once over an injected executor (a local pool or a Dask client,
:mod:`privopt.solve.executors`). A chunk solved in a worker gives exactly the records the
same chunk gives here (timings aside); a chunk whose task never comes back is recorded with
status ``error`` point by point, and every other chunk is kept.
"""

from __future__ import annotations

__all__ = ["solve_sweep_points", "sweep_points", "sweep_in_chunks", "CHUNKS_PER_WORKER"]

import concurrent.futures as cf
import math
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from privopt.errors import InputError, PrivoptError
from privopt.methods.base import Deadline, ProgressEvent
from privopt.request import DesignRequest
from privopt.solve.driver import solve_request
from privopt.solve.executors import (
    Ticks,
    completed,
    executor_workers,
    outcome_of,
    resolve_executor,
    submit_all,
)
from privopt.solve.options import SolveOptions
from privopt.solve.results import DesignResult
from privopt.solve.run import attach_notes
from privopt.solve.selection import choose_methods
from privopt.status import Status

#: Chunks per worker when a sweep's ``chunk_size`` is chosen automatically.
CHUNKS_PER_WORKER = 2


def solve_sweep_points(
    request: DesignRequest,
    mode: str,
    points: Sequence,
    values: Sequence,
    options: SolveOptions,
    progress: Callable | None = None,
) -> tuple[list[dict], list[DesignResult | None]]:
    """Choose the methods for a sweep and solve its consecutive points (one chunk).

    Parameters
    ----------
    request : DesignRequest
    mode : {"epsilon", "max_distortion"}
    points, values : sequence
        The checked points and the points as given.
    options : SolveOptions
        The run's settings (``time_limit`` for the whole chunk).
    progress : callable, optional
        Wraps the iterable of points (e.g. ``tqdm.tqdm``).

    Returns
    -------
    (list of dict, list of DesignResult or None)
        The records and the results, as :func:`sweep_points`.
    """
    deadline = options.deadline()  # from here: choosing the methods is part of the run
    bound = options.memory_bytes()
    chain = choose_methods(request, options.solver, sweep=True, max_memory_bytes=bound)
    return sweep_points(
        request,
        chain,
        mode,
        points,
        values,
        tol=options.tol,
        deadline=deadline,
        time_limit=options.time_limit,
        cache=options.method_cache(),
        on_progress=options.on_progress,
        progress=progress,
        max_memory=bound,
    )


def sweep_points(
    request,
    chain: Sequence,
    mode: str,
    points: Sequence,
    values: Sequence,
    *,
    tol: float,
    deadline: Deadline,
    time_limit: float | None,
    cache: dict,
    on_progress: Callable[[ProgressEvent], None] | None = None,
    progress=None,
    warm: dict | None = None,
    max_memory: float | None = None,
) -> tuple[list[dict], list[DesignResult | None]]:
    """Solve consecutive points of a sweep, each warm-started from the previous one.

    The loop of :func:`sweep`, also run on each chunk of a sweep spread over an executor
    (:func:`sweep_in_chunks`).

    Parameters
    ----------
    request : DesignRequest
        The request at any point of the sweep (:meth:`DesignRequest.at` moves it).
    chain : sequence of Method
        From :func:`~privopt.solve.selection.choose_methods`.
    mode : {"epsilon", "max_distortion"}
    points : sequence of float or InputError
        The checked points (an :class:`InputError` for a point that failed its check).
    values : sequence
        The points as given (recorded as ``requested_<mode>``).
    tol : float
        Bracket width of the budget-mode line search (nats).
    deadline : Deadline
        Shared by every point.
    time_limit : float or None
        The seconds ``deadline`` was set with (for the message of a point after it).
    cache : dict
        Scratch space shared by the points (compiled programs, solver options).
    on_progress : callable, optional
        Receives progress events.
    progress : callable, optional
        Wraps the iterable of points (e.g. ``tqdm.tqdm``).
    warm : dict, optional
        The ``warm_state`` of a result of the same instance to start the first point from.
    max_memory : float, optional
        The memory bound (bytes) of a method run in a child process (default
        :func:`privopt.resources.max_memory`).

    Returns
    -------
    records : list of dict
        One :class:`Curve` record per point.
    results : list of DesignResult or None
        The full result of each point (``None`` where a point failed).
    """
    records: list[dict] = []
    results: list[DesignResult | None] = []
    noted: list[tuple[float, str]] = []
    iterator = progress(points) if progress is not None else points
    for index, value in enumerate(iterator):
        if isinstance(value, InputError):
            records.append(
                {
                    "notion": request.notion.name,
                    f"requested_{mode}": values[index],
                    "epsilon": None,
                    "distortion": None,
                    "status": str(Status.ERROR),
                    "verified": False,
                    "message": str(value),
                }
            )
            results.append(None)
            continue
        record = {"notion": request.notion.name, f"requested_{mode}": value}
        if deadline.expired():
            record.update(
                epsilon=None,
                distortion=None,
                status=str(Status.TIME_LIMIT),
                verified=False,
                message=f"time limit of {time_limit:g} s reached before this point",
            )
            records.append(record)
            results.append(None)
            continue
        point = request.at(**{mode: value})
        try:
            result = solve_request(
                point,
                chain,
                tol=tol,
                deadline=deadline,
                raise_on_infeasible=False,
                warm=warm,
                cache=cache,
                on_progress=on_progress,
                max_memory=max_memory,
            )
        except PrivoptError as exc:
            record.update(
                epsilon=None,
                distortion=None,
                status=str(Status.ERROR),
                verified=False,
                message=str(exc),
            )
            records.append(record)
            results.append(None)
            continue
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            attach_notes(point, result)
        if caught:
            noted.append((value, str(caught[0].message)))
        if result.warm_state is not None:
            warm = result.warm_state
        solve_time = result.solver.solve_time_s if result.solver is not None else None
        record.update(
            epsilon=result.epsilon,
            distortion=result.distortion,
            status=str(result.status),
            verified=result.verified,
            solve_time_s=solve_time,
        )
        if result.closed_form:
            record["closed_form_ok"] = all(c.passed for c in result.closed_form)
            for check in result.closed_form:
                if check.relation in ("equal", "at_least", "at_most"):
                    record[f"closed_form.{check.name}"] = check.expected
        if result.status == Status.INFEASIBLE:
            record["least_achievable"] = result.least_achievable
            record["message"] = result.message
        elif result.status == Status.TIME_LIMIT:
            record["message"] = result.message
        records.append(record)
        results.append(result)
    if noted:  # one warning for the sweep; each point's result.extra holds its own note
        first, message = noted[0]
        warnings.warn(
            f"{len(noted)} point(s) of the sweep, the first at {mode} = {first:g}: {message}",
            UserWarning,
            stacklevel=3,
        )
    return records, results


def _sweep_task(
    request: DesignRequest, mode: str, points: list, values: list, options: SolveOptions
) -> tuple[list[dict], list[DesignResult | None]]:
    """Solve one chunk of consecutive sweep points, warm-starting within the chunk (run in
    a worker)."""
    return solve_sweep_points(request, mode, points, values, options)


def _chunk_bounds(count: int, chunk_size: int) -> list[tuple[int, int]]:
    return [(start, min(count, start + chunk_size)) for start in range(0, count, chunk_size)]


def sweep_in_chunks(
    request: DesignRequest,
    mode: str,
    points: Sequence,
    values: Sequence,
    *,
    options: SolveOptions,
    executor: Any = None,
    chunk_size: int | None = None,
    progress: Callable | None = None,
) -> tuple[list[dict], list[DesignResult | None]]:
    """Solve a sweep's points in chunks of consecutive points, over an executor or here.

    Used by :func:`privopt.sweep` when it is given ``executor`` or ``chunk_size``.

    Parameters
    ----------
    request : DesignRequest
        The request at any point of the sweep.
    mode : {"epsilon", "max_distortion"}
    points : sequence of float or InputError
        The checked points.
    values : sequence
        The points as given.
    options : SolveOptions
        The run's settings; ``time_limit`` applies to each chunk and ``on_progress`` is
        called where the chunk is solved.
    executor : Executor or distributed.Client, optional
        Default: the chunks one after the other in this process.
    chunk_size : int, optional
        Points per chunk; default: enough chunks for two per worker.
    progress : callable, optional
        Wraps an iterable with one item per finished point.

    Returns
    -------
    records : list of dict
    results : list of DesignResult or None
    """
    pool = resolve_executor(executor)
    count = len(points)
    if chunk_size is None:
        chunks = CHUNKS_PER_WORKER * executor_workers(executor) if pool is not None else 1
        chunk_size = max(1, math.ceil(count / chunks))
    elif isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
        raise InputError(f"expected a positive whole number, got {chunk_size!r}", "chunk_size")
    bounds = _chunk_bounds(count, chunk_size)
    parts: list[Any] = [None] * len(bounds)

    def task_args(a: int, b: int) -> tuple:
        return (request, mode, list(points[a:b]), list(values[a:b]), options)

    if pool is None:

        def finished() -> Iterator[int]:
            for k, (a, b) in enumerate(bounds):
                parts[k] = _sweep_task(*task_args(a, b))
                yield from range(a, b)

    else:
        futures = submit_all(pool, [(_sweep_task, task_args(a, b)) for a, b in bounds])

        def finished() -> Iterator[int]:
            try:
                for k in completed(futures):
                    a, b = bounds[k]
                    part = outcome_of(futures[k], f"the sweep points {a}..{b - 1}")
                    if isinstance(part, PrivoptError):
                        part = _lost_chunk(request, mode, values[a:b], part)
                    parts[k] = part
                    yield from range(a, b)
            finally:
                for future in futures:
                    if isinstance(future, cf.Future):
                        future.cancel()

    ticks = Ticks(finished(), count)
    for _ in progress(ticks) if progress is not None else ticks:
        pass
    records: list[dict] = []
    results: list[DesignResult | None] = []
    for part_records, part_results in parts:
        records.extend(part_records)
        results.extend(part_results)
    return records, results


def _lost_chunk(
    request: DesignRequest, mode: str, values: Sequence, error: PrivoptError
) -> tuple[list[dict], list[None]]:
    """The records of a sweep chunk whose task never came back: status ``error`` each."""
    records = [
        {
            "notion": request.notion.name,
            f"requested_{mode}": value,
            "epsilon": None,
            "distortion": None,
            "status": str(Status.ERROR),
            "verified": False,
            "message": str(error),
        }
        for value in values
    ]
    return records, [None] * len(records)
