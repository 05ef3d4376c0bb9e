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
:func:`~privopt.solve.sweeps.sweep_points` (warm starts stay within a chunk). The results are
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

__all__ = ["solve_many", "sweep_notions"]

import concurrent.futures as cf
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from privopt.errors import InputError, PrivoptError
from privopt.request import DesignRequest, prepare_request
from privopt.solve.api import sweep
from privopt.solve.executors import (
    Ticks,
    completed,
    outcome_of,
    resolve_executor,
    submit_all,
)
from privopt.solve.options import DEFAULT_TOL, SolveOptions
from privopt.solve.progress import points_progress
from privopt.solve.results import Curve, DesignResult, ResultList
from privopt.solve.run import run_design


# --- tasks (run in the workers) -----------------------------------------------------------------
def _solve_task(request: DesignRequest, options: SolveOptions) -> DesignResult | PrivoptError:
    """Solve one request; a privopt error is returned, not raised (it pickles as a value)."""
    try:
        return run_design(request, options)
    except PrivoptError as exc:
        return exc


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
    max_memory: float | str | None = None,
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
    max_memory : float or str, optional
        The memory bound of each request (bytes or a size such as ``"8G"``; default
        ``PRIVOPT_MAX_MEMORY``, else 4 GiB, read where the request is solved).
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
    options = SolveOptions.checked(
        solver=solver,
        tol=tol,
        time_limit=time_limit,
        raise_on_infeasible=False,
        solver_options=solver_options,
        max_memory=max_memory,
    )
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
    if pool is None:

        def finished() -> Iterator[int]:
            for i, request in prepared:
                outcomes[i] = _solve_task(request, options)
                yield i

    else:
        futures = submit_all(pool, [(_solve_task, (request, options)) for _, request in prepared])
        indices = [i for i, _ in prepared]

        def finished() -> Iterator[int]:
            try:
                for k in completed(futures):
                    i = indices[k]
                    outcomes[i] = outcome_of(futures[k], f"request {i}")
                    yield i
            finally:
                for future in futures:
                    if isinstance(future, cf.Future):
                        future.cancel()

    ticks = Ticks(finished(), len(prepared))
    wrap = points_progress(progress, "privopt: requests")
    for _ in wrap(ticks) if wrap is not None else ticks:
        pass
    if errors == "raise":
        for outcome in outcomes:
            if isinstance(outcome, PrivoptError):
                outcome.results = outcomes  # every answer that came back, in place
                raise outcome
    return outcomes


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
