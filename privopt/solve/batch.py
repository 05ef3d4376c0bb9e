"""Many requests and sweeps over an executor: one machine's processes or a Dask cluster.

:func:`solve_many` solves a list of requests and :func:`privopt.sweep` (``executor=``) a
privacy–distortion curve through any :class:`concurrent.futures.Executor` — a
:class:`~concurrent.futures.ProcessPoolExecutor`, a
:class:`~concurrent.futures.ThreadPoolExecutor`, or a Dask ``distributed.Client`` (used
through ``client.get_executor()``, so that a cluster anywhere, ``Client("tcp://host:8786")``,
works the same way as a ``LocalCluster``). :func:`sweep_notions` sweeps several notions at once
(the multi-notion figure).

Each task solves in its worker exactly what the serial code solves: a request through
:func:`~privopt.solve.driver.solve_request`, or a chunk of consecutive sweep points through
:func:`~privopt.solve.api.sweep_points` (warm starts stay within a chunk). The results are
therefore bit for bit those of the serial run — the same chunks solved one after the other —
except the timings. What goes to a worker must pickle (Dask uses cloudpickle): priors,
distortions, notions, requests and results do; a request with cvxpy constraints added
(:meth:`~privopt.methods.cvxpy_program.PrivacyProblem.add_constraints`) needs cloudpickle.

Nothing is lost when a worker is: a task that does not come back (its process killed — the
``BrokenProcessPool`` of a process pool — or Dask's ``KilledWorker``, or any exception that
is not a privopt error) becomes a :class:`~privopt.errors.TaskLostError` in the place of its
request, or records with status ``error`` for the points of its sweep chunk, and every task
that did come back is kept. A :class:`~concurrent.futures.ProcessPoolExecutor` whose process
dies is broken for good: every task not yet finished on it is lost with it (make a new pool
to solve them again). Dask instead reschedules the tasks of a dead worker on the others and
gives up on a task only after its workers died ``distributed.scheduler.allowed-failures``
times (3 by default; set it with ``dask.config.set({"distributed.scheduler.allowed-failures":
N})`` before the cluster starts): that task alone is then lost.
"""

from __future__ import annotations

import concurrent.futures as cf
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from privopt.errors import InputError, PrivoptError, TaskLostError
from privopt.methods.base import ProgressEvent
from privopt.request import DesignRequest, prepare_request
from privopt.solve.api import DEFAULT_TOL, _solve, solve_sweep_points, sweep
from privopt.solve.progress import points_progress
from privopt.solve.results import Curve, DesignResult, ResultList
from privopt.validation import check_time_limit, check_tolerance

__all__ = [
    "executor_workers",
    "resolve_executor",
    "solve_many",
    "sweep_in_chunks",
    "sweep_notions",
]

#: Chunks per worker when a sweep's ``chunk_size`` is chosen automatically.
CHUNKS_PER_WORKER = 2


# --- executors -----------------------------------------------------------------------------
def resolve_executor(executor: Any) -> cf.Executor | None:
    """The :class:`concurrent.futures.Executor` to submit tasks to.

    Parameters
    ----------
    executor : Executor, distributed.Client or None
        An executor is used as it is; an object with ``get_executor()`` (a Dask
        ``distributed.Client``) gives its executor, with ``pure=False`` so that every task
        runs.

    Returns
    -------
    Executor or None
        ``None`` when ``executor`` is ``None`` (solve in this process).

    Raises
    ------
    InputError
        If ``executor`` is neither.
    """
    if executor is None or isinstance(executor, cf.Executor):
        return executor
    get_executor = getattr(executor, "get_executor", None)
    if callable(get_executor):
        return get_executor(pure=False)
    raise InputError(
        f"expected a concurrent.futures.Executor or a Dask distributed.Client, got "
        f"{type(executor).__name__}",
        "executor",
    )


def executor_workers(executor: Any) -> int:
    """How many tasks ``executor`` runs at once (1 when it cannot tell).

    Parameters
    ----------
    executor : Executor, distributed.Client or None

    Returns
    -------
    int
        The executor's ``max_workers``, or the total threads of a Dask cluster's workers.
    """
    if executor is None:
        return 1
    client = getattr(executor, "_client", None)
    if client is None and callable(getattr(executor, "get_executor", None)):
        client = executor
    if client is not None:
        try:
            workers = client.scheduler_info(n_workers=-1)["workers"]
        except TypeError:  # older distributed: no n_workers argument
            workers = client.scheduler_info()["workers"]
        except Exception:  # pragma: no cover - a scheduler that cannot be asked
            return 1
        return max(1, sum(int(w.get("nthreads", 1)) for w in workers.values()))
    return max(1, int(getattr(executor, "_max_workers", 1) or 1))


def lost_task_error(exc: BaseException, what: str) -> PrivoptError:
    """The error that stands for a task whose future raised ``exc`` instead of answering.

    Parameters
    ----------
    exc : BaseException
        What ``future.result()`` raised.
    what : str
        The task, for the message (e.g. ``"request 3"``).

    Returns
    -------
    PrivoptError
        ``exc`` itself when it is a privopt error, else a
        :class:`~privopt.errors.TaskLostError` naming the executor's exception.
    """
    if isinstance(exc, PrivoptError):
        return exc
    name = type(exc).__name__
    if name == "KilledWorker":
        why = "its Dask workers died every time it ran (the scheduler's retries are spent)"
    elif isinstance(exc, cf.BrokenExecutor):
        why = (
            "the executor broke (a worker process died: killed, or out of memory); tasks "
            "not finished on it are lost with it"
        )
    elif isinstance(exc, cf.CancelledError):
        why = "it was cancelled (the executor shut down)"
    else:
        why = f"it raised {name}: {exc}"
    return TaskLostError(f"{what} did not come back from the executor: {why}", name)


def _outcome_of(future: cf.Future | BaseException, what: str) -> Any:
    """The future's value, or the error that stands for it (``future`` may be the exception
    that refused its submission)."""
    if isinstance(future, BaseException):
        return lost_task_error(future, what)
    try:
        return future.result()
    except Exception as exc:  # noqa: BLE001 - a lost task is that task's error, never a stop
        return lost_task_error(exc, what)


class _Ticks:
    """An iterable of ``total`` ticks, one per finished point, for a ``progress`` wrapper."""

    def __init__(self, ticks: Iterable[Any], total: int):
        self._ticks = ticks
        self._total = total

    def __len__(self) -> int:
        return self._total

    def __iter__(self) -> Iterator[Any]:
        return iter(self._ticks)


# --- tasks (run in the workers) -----------------------------------------------------------------
def _solve_task(
    request: DesignRequest,
    solver: str | Sequence[str] | None,
    tol: float,
    time_limit: float | None,
    solver_options: dict | None,
) -> DesignResult | PrivoptError:
    """Solve one request; a privopt error is returned, not raised (it pickles as a value)."""
    try:
        return _solve(request, solver, tol, time_limit, False, None, solver_options)
    except PrivoptError as exc:
        return exc


def _sweep_task(
    request: DesignRequest,
    mode: str,
    points: list,
    values: list,
    solver: str | Sequence[str] | None,
    tol: float,
    time_limit: float | None,
    solver_options: dict | None,
    on_progress: Callable[[ProgressEvent], None] | None,
) -> tuple[list[dict], list[DesignResult | None]]:
    """Solve one chunk of consecutive sweep points, warm-starting within the chunk."""
    return solve_sweep_points(
        request,
        mode,
        points,
        values,
        solver=solver,
        tol=tol,
        time_limit=time_limit,
        solver_options=solver_options,
        on_progress=on_progress,
    )


# --- many requests -----------------------------------------------------------------------------
def _request_list(requests: Any) -> list:
    """``requests`` as a list, or an :class:`InputError` saying what ``solve_many`` takes."""
    expected = (
        "expected a list of requests (each a DesignRequest from privopt.prepare_request or a "
        "dict of privopt.design arguments)"
    )
    if isinstance(requests, (DesignRequest, Mapping)):
        raise InputError(
            f"{expected}, got a single {type(requests).__name__}: wrap it in a list", "requests"
        )
    if isinstance(requests, (str, bytes)) or not isinstance(requests, Iterable):
        raise InputError(f"{expected}, got {type(requests).__name__} {requests!r:.60}", "requests")
    return list(requests)


def _as_request(item: Any, index: int) -> DesignRequest:
    if isinstance(item, DesignRequest):
        return item
    if isinstance(item, Mapping):
        kwargs = dict(item)
        missing = [k for k in ("prior", "distortion", "notion") if k not in kwargs]
        if missing:
            raise InputError(
                f"a request given as a dict needs the keys prior, distortion and notion "
                f"(missing: {', '.join(missing)})",
                f"requests[{index}]",
            )
        return prepare_request(
            kwargs.pop("prior"), kwargs.pop("distortion"), kwargs.pop("notion"), **kwargs
        )
    raise InputError(
        f"expected a DesignRequest (privopt.prepare_request) or a dict of privopt.design "
        f"arguments, got {type(item).__name__}",
        f"requests[{index}]",
    )


def solve_many(
    requests: Iterable[DesignRequest | Mapping[str, Any]],
    executor: Any = None,
    *,
    solver: str | Sequence[str] | None = None,
    tol: float = DEFAULT_TOL,
    time_limit: float | None = None,
    solver_options: dict | None = None,
    errors: str = "raise",
    progress: Callable | bool | None = None,
) -> ResultList:
    """Solve many requests, in this process or over an executor.

    Parameters
    ----------
    requests : iterable of DesignRequest or dict
        Each a :class:`~privopt.DesignRequest` (:func:`privopt.prepare_request`) or a dict of
        :func:`privopt.design` arguments (``prior``, ``distortion``, ``notion``, ``epsilon`` or
        ``max_distortion``, notion options, …).
    executor : concurrent.futures.Executor or distributed.Client, optional
        Where to solve; default: one after the other in this process.
    solver, tol, solver_options
        As in :func:`privopt.design`, for every request.
    time_limit : float, optional
        Seconds for each request.
    errors : {"raise", "return"}
        On a request that fails (bad input, no solver succeeded): raise its error once every
        task has ended (``"raise"``), or put the error in its place in the list
        (``"return"``). An infeasible request is never an error: its result has status
        ``infeasible``.
    progress : callable or bool, optional
        A bar of the finished requests on stderr once the batch has run 2 s: by default only
        in a terminal or a notebook; ``True`` always, ``False`` never
        (:mod:`privopt.solve.progress`); or a callable that wraps an iterable with one item
        per finished request (e.g. ``tqdm.tqdm``).

    Returns
    -------
    ResultList
        A list of DesignResult (or PrivoptError with ``errors="return"``) in the order of
        ``requests``, bit for bit the serial results (timings aside); its
        :meth:`~privopt.solve.results.ResultList.to_frame` makes one table of them.

    Raises
    ------
    InputError
        A bad setting, or (with ``errors="raise"``) a bad request.
    PrivoptError
        With ``errors="raise"``: the error of the first request that failed, once every
        task has ended; its attribute ``results`` is the list that ``errors="return"``
        would have returned (every answer that came back is kept). A request whose task
        never came back (a killed worker) fails with :class:`~privopt.errors.TaskLostError`.

    Examples
    --------
    >>> import privopt as po
    >>> from concurrent.futures import ThreadPoolExecutor
    >>> asks = [{"prior": [0.5, 0.5], "distortion": "hamming", "notion": "ldp",
    ...          "epsilon": e} for e in (0.5, 1.0)]
    >>> with ThreadPoolExecutor(2) as pool:
    ...     results = po.solve_many(asks, executor=pool)
    >>> [round(r.distortion, 6) for r in results]
    [0.377541, 0.268941]
    """
    if errors not in ("raise", "return"):
        raise InputError(f"expected 'raise' or 'return', got {errors!r}", "errors")
    tol = check_tolerance(tol, "tol")
    time_limit = check_time_limit(time_limit, "time_limit")
    items = _request_list(requests)
    outcomes: list[Any] = ResultList([None] * len(items))
    prepared: list[tuple[int, DesignRequest]] = []
    for i, item in enumerate(items):
        try:
            prepared.append((i, _as_request(item, i)))
        except InputError as exc:
            if errors == "raise":
                raise
            outcomes[i] = exc
    pool = resolve_executor(executor)
    args = (solver, tol, time_limit, solver_options)
    if pool is None:

        def finished() -> Iterator[int]:
            for i, request in prepared:
                outcomes[i] = _solve_task(request, *args)
                yield i

    else:
        futures = _submit_all(pool, [(_solve_task, (request, *args)) for _, request in prepared])
        indices = [i for i, _ in prepared]

        def finished() -> Iterator[int]:
            try:
                for k in _completed(futures):
                    i = indices[k]
                    outcomes[i] = _outcome_of(futures[k], f"request {i}")
                    yield i
            finally:
                for future in futures:
                    if isinstance(future, cf.Future):
                        future.cancel()

    ticks = _Ticks(finished(), len(prepared))
    wrap = points_progress(progress, "privopt: requests")
    for _ in wrap(ticks) if wrap is not None else ticks:
        pass
    if errors == "raise":
        for outcome in outcomes:
            if isinstance(outcome, PrivoptError):
                outcome.results = outcomes  # every answer that came back, in place
                raise outcome
    return outcomes


# --- sweeps --------------------------------------------------------------------------------------
def _chunk_bounds(count: int, chunk_size: int) -> list[tuple[int, int]]:
    return [(start, min(count, start + chunk_size)) for start in range(0, count, chunk_size)]


def sweep_in_chunks(
    request: DesignRequest,
    mode: str,
    points: Sequence,
    values: Sequence,
    *,
    executor: Any = None,
    chunk_size: int | None = None,
    solver: str | Sequence[str] | None = None,
    tol: float = DEFAULT_TOL,
    time_limit: float | None = None,
    solver_options: dict | None = None,
    on_progress: Callable[[ProgressEvent], None] | None = None,
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
    executor : Executor or distributed.Client, optional
        Default: the chunks one after the other in this process.
    chunk_size : int, optional
        Points per chunk; default: enough chunks for two per worker.
    solver, tol, time_limit, solver_options, on_progress
        As in :func:`privopt.sweep`; ``time_limit`` applies to each chunk and
        ``on_progress`` is called where the chunk is solved.
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
        return (
            request,
            mode,
            list(points[a:b]),
            list(values[a:b]),
            solver,
            tol,
            time_limit,
            solver_options,
            on_progress,
        )

    if pool is None:

        def finished() -> Iterator[int]:
            for k, (a, b) in enumerate(bounds):
                parts[k] = _sweep_task(*task_args(a, b))
                yield from range(a, b)

    else:
        futures = _submit_all(pool, [(_sweep_task, task_args(a, b)) for a, b in bounds])

        def finished() -> Iterator[int]:
            try:
                for k in _completed(futures):
                    a, b = bounds[k]
                    part = _outcome_of(futures[k], f"the sweep points {a}..{b - 1}")
                    if isinstance(part, PrivoptError):
                        part = _lost_chunk(request, mode, values[a:b], part)
                    parts[k] = part
                    yield from range(a, b)
            finally:
                for future in futures:
                    if isinstance(future, cf.Future):
                        future.cancel()

    ticks = _Ticks(finished(), count)
    for _ in progress(ticks) if progress is not None else ticks:
        pass
    records: list[dict] = []
    results: list[DesignResult | None] = []
    for part_records, part_results in parts:
        records.extend(part_records)
        results.extend(part_results)
    return records, results


def _submit_all(pool: cf.Executor, tasks: list[tuple[Callable, tuple]]) -> list:
    """Submit every task; a task the executor refuses (a pool already broken or shut down)
    gets the exception in place of its future."""
    futures: list = []
    for function, args in tasks:
        try:
            futures.append(pool.submit(function, *args))
        except Exception as exc:  # noqa: BLE001 - a broken pool refuses new work
            futures.append(exc)
    return futures


def _completed(futures: list) -> Iterator[int]:
    """The indices of ``futures`` as they finish (refused submissions first)."""
    real = {}
    for k, future in enumerate(futures):
        if isinstance(future, cf.Future):
            real[future] = k
        else:
            yield k
    for future in cf.as_completed(real):
        yield real[future]


def _lost_chunk(
    request: DesignRequest, mode: str, values: Sequence, error: PrivoptError
) -> tuple[list[dict], list[None]]:
    """The records of a sweep chunk whose task never came back: status ``error`` each."""
    from privopt.status import Status

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


def sweep_notions(
    prior: Any,
    distortion: Any,
    notions: Sequence[str],
    *,
    executor: Any = None,
    **kwargs: Any,
) -> ResultList:
    """Sweep several notions over the same points (one curve each, e.g. for one figure).

    Parameters
    ----------
    prior, distortion
        As in :func:`privopt.design`.
    notions : sequence of str
        Registered notions (:func:`privopt.notion_names`).
    executor : Executor or distributed.Client, optional
        With an executor the notions are swept at the same time, each over the executor
        (``chunk_size`` applies to each).
    **kwargs
        As in :func:`privopt.sweep` (``epsilons`` or ``max_distortions``, ``neighbors``,
        ``chunk_size``, …). ``neighbors`` is passed only to the notions that use it.

    Returns
    -------
    ResultList
        A list of Curve, one per notion, in the order of ``notions``; plot them together with
        :func:`privopt.plotting.plot_curves`; ``to_frame()`` gives every point of every curve
        in one table.

    Raises
    ------
    InputError
        If ``notions`` is empty or not a sequence of names.

    Examples
    --------
    >>> import privopt as po
    >>> curves = po.sweep_notions([0.5, 0.5], "hamming", ["ldp", "pml"], epsilons=[0.5, 1.0])
    >>> [c.notion for c in curves], [len(c) for c in curves]
    (['ldp', 'pml'], [2, 2])
    """
    from privopt.notions import get_notion

    if isinstance(notions, (str, bytes)) or not isinstance(notions, Sequence) or not notions:
        raise InputError("expected a non-empty list of notion names", "notions")
    neighbors = kwargs.pop("neighbors", None)
    names = [get_notion(n).name for n in notions]

    def one(name: str) -> Curve:
        own = {"neighbors": neighbors} if get_notion(name).uses_neighbors else {}
        return sweep(prior, distortion, name, executor=executor, **own, **kwargs)

    if resolve_executor(executor) is None:
        return ResultList(one(name) for name in names)
    # every notion's chunks go to the executor at once: submit from one thread per notion
    with cf.ThreadPoolExecutor(max_workers=len(names)) as threads:
        return ResultList(threads.map(one, names))
