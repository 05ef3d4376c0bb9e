"""Executors for many requests and sweeps: a local pool or a Dask cluster, and the tasks
that do not come back.

:func:`resolve_executor` takes any :class:`concurrent.futures.Executor` or a Dask
``distributed.Client``; :func:`submit_all` and :func:`completed` submit tasks and follow them
as they finish; :func:`outcome_of` turns a task that never came back (a killed worker, a
broken pool, Dask's ``KilledWorker``) into a :class:`~privopt.errors.TaskLostError` in its
place, so that every other task's answer is kept (see :mod:`privopt.solve.batch`).
"""

from __future__ import annotations

__all__ = [
    "Ticks",
    "completed",
    "executor_workers",
    "lost_task_error",
    "outcome_of",
    "resolve_executor",
    "submit_all",
]

import concurrent.futures as cf
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from privopt.errors import InputError, PrivoptError, TaskLostError


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


def outcome_of(future: cf.Future | BaseException, what: str) -> Any:
    """The future's value, or the error that stands for it.

    Parameters
    ----------
    future : Future or BaseException
        A submitted task, or the exception that refused its submission.
    what : str
        The task, for the message (e.g. ``"request 3"``).

    Returns
    -------
    object
        The task's value, or a :class:`~privopt.errors.PrivoptError` standing for it.
    """
    if isinstance(future, BaseException):
        return lost_task_error(future, what)
    try:
        return future.result()
    except Exception as exc:  # noqa: BLE001 - a lost task is that task's error, never a stop
        return lost_task_error(exc, what)


class Ticks:
    """An iterable of ``total`` ticks, one per finished point, for a ``progress`` wrapper."""

    def __init__(self, ticks: Iterable[Any], total: int):
        self._ticks = ticks
        self._total = total

    def __len__(self) -> int:
        return self._total

    def __iter__(self) -> Iterator[Any]:
        return iter(self._ticks)


def submit_all(pool: cf.Executor, tasks: list[tuple[Callable, tuple]]) -> list:
    """Submit every task; a task the executor refuses (a pool already broken or shut down)
    gets the exception in place of its future.

    Parameters
    ----------
    pool : Executor
    tasks : list of (callable, tuple)
        Each function and its arguments.

    Returns
    -------
    list
        A future, or the exception that refused it, per task.
    """
    futures: list = []
    for function, args in tasks:
        try:
            futures.append(pool.submit(function, *args))
        except Exception as exc:  # noqa: BLE001 - a broken pool refuses new work
            futures.append(exc)
    return futures


def completed(futures: list) -> Iterator[int]:
    """The indices of ``futures`` as they finish (refused submissions first).

    Parameters
    ----------
    futures : list
        As returned by :func:`submit_all`.

    Returns
    -------
    iterator of int
    """
    real = {}
    for k, future in enumerate(futures):
        if isinstance(future, cf.Future):
            real[future] = k
        else:
            yield k
    for future in cf.as_completed(real):
        yield real[future]
