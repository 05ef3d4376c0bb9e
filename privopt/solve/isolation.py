"""Methods that cannot stop themselves, run in a child process ended at the deadline.

A method declares how it honours a deadline (:class:`~privopt.methods.base.Stopping`).
``CHECKS`` methods (privopt's own loops) run in the driver's process and return soon after
the deadline. The others hand the time left to a native solver's own limit, but their set-up
(assembling a large LP, cvxpy's compilation, Clarabel's first factorisation) cannot be
interrupted and may allocate for minutes: measured on a 20 × 20 map under a 20 s limit,
assembling the LP alone took 15.6 s and 5 GB. Under a time limit, when the request is large
enough for a process start (about a second: a fresh interpreter importing privopt) to be
worth it, :func:`run_isolated` runs such a method in a child process:

* the child is a fresh interpreter (``python -m privopt.solve._child``), never a fork of the
  caller: a fork copies the locks but not the threads of the caller's native libraries
  (HiGHS's and OpenBLAS's thread pools), and a spawned :mod:`multiprocessing` child would
  re-run an unguarded script;
* it receives the method, the request, the point, the accuracy, the time left (measured
  when it is ready to start), the method's warm start and the solver options, pickled, and
  sends back the :class:`~privopt.methods.base.Answer` and any progress events; a warm start
  or structured answer that cannot be pickled is left behind, and what the method would
  have kept in the run's ``cache`` (a compiled program) stays in the child;
* its address space is limited to the memory bound above its size at start
  (``RLIMIT_AS``): an allocation beyond the bound fails in the child, which answers
  ``FAILED`` or dies, never the caller;
* the driver waits until the deadline plus :func:`grace` (for the native limit to return
  the child's answer), then kills the child's whole process group and reaps it: nothing is
  left running, and the caller's process exits cleanly;
* the child dies with its parent (``PR_SET_PDEATHSIG`` on Linux) and ignores the terminal's
  Ctrl-C (its own session): the caller's interrupt ends it through the driver.

``PRIVOPT_ISOLATE`` overrides the choice: ``never`` (run every method in process), ``always``
(isolate every method that is not ``CHECKS`` under a time limit, whatever the size), or
``auto`` (the default).
"""

from __future__ import annotations

__all__ = [
    "ISOLATION_ENV",
    "ISOLATE_FROM_BYTES",
    "should_isolate",
    "run_isolated",
    "grace",
    "IsolatedFailure",
]

import math
import os
import pickle
import signal
import subprocess
import sys
import tempfile
import time
from multiprocessing import Pipe
from multiprocessing.connection import Connection
from typing import Any

from privopt.methods.base import Answer, Deadline, Method, ProgressEvent, Stopping, Task
from privopt.resources import format_bytes
from privopt.status import Status

#: The environment variable that overrides the choice: ``auto``, ``always`` or ``never``.
ISOLATION_ENV = "PRIVOPT_ISOLATE"
#: Estimated memory (:func:`privopt.resources.estimate_bytes`) from which a method that is
#: not ``CHECKS`` runs in a child process under a time limit. The estimate grows with the
#: program the set-up builds: cvxpy's compilation took 1.7 s at 109 MB estimated (pml,
#: k = 60) and 3.5 s at 127 MB (dp, 2⁷ databases) at a load average of 6, about a child's
#: start (a fresh interpreter importing privopt: 1.1–1.5 s).
ISOLATE_FROM_BYTES = 2.0**26
#: Seconds between two looks at the child while waiting (each wait is this long at most, so
#: that no timeout handed to the operating system overflows).
POLL_SECONDS = 0.25


class IsolatedFailure(Exception):
    """An exception of the method in the child that could not be sent back as itself."""


def grace(deadline: Deadline) -> float:
    """Seconds the driver waits beyond the deadline for a child's answer before ending it.

    The child hands the same deadline to its native solver, which returns at its next
    iteration; its answer must then be pickled and sent. 0.3 s, plus 2 % of the limit up to
    1 s: well inside the target of ``max(2 s, 0.1·T)``.

    Parameters
    ----------
    deadline : Deadline

    Returns
    -------
    float
        Seconds, in ``[0.3, 1.0]``.
    """
    seconds = float(deadline.seconds or 0.0)
    return min(1.0, 0.3 + 0.02 * seconds)


def _mode() -> str:
    value = os.environ.get(ISOLATION_ENV, "auto").strip().lower()
    return value if value in ("auto", "always", "never") else "auto"


def _supported() -> bool:
    """Child processes with a passed descriptor (POSIX) and a known interpreter."""
    return os.name == "posix" and bool(sys.executable)


def should_isolate(method: Method, request, deadline: Deadline) -> bool:
    """Whether the driver runs ``method`` on ``request`` in a child process.

    Parameters
    ----------
    method : Method
    request : DesignRequest
    deadline : Deadline
        The run's deadline: without a limit nothing is isolated.

    Returns
    -------
    bool
        ``True`` for a method that is not ``CHECKS``, under a limit, on a request whose
        estimate for the method is at least :data:`ISOLATE_FROM_BYTES` (or always / never
        with :data:`ISOLATION_ENV`), on a platform that supports it, for a method that can
        be found by a fresh interpreter (not defined in ``__main__``).
    """
    if method.stopping == Stopping.CHECKS or not deadline.limited or not _supported():
        return False
    mode = _mode()
    if mode == "never" or type(method).__module__ == "__main__":
        return False
    if mode == "always":
        return True
    return method.memory_bytes(request) >= ISOLATE_FROM_BYTES


def _payload(method: Method, task: Task, memory_limit: float) -> bytes | None:
    """The pickled task for the child, or ``None`` if it cannot be pickled (the method then
    runs in the driver's process). Of the run's cache only the solver options and a
    program the caller gave (``("cvxpy", form)``) are sent; a warm start that does not
    pickle (a HiGHS basis) is left out."""
    cache = {
        key: value
        for key, value in task.cache.items()
        if isinstance(key, tuple) and key and key[0] in ("options", "cvxpy")
    }
    warm = task.warm
    if warm is not None:
        try:
            pickle.dumps(warm)
        except Exception:  # noqa: BLE001 - any pickling failure: start cold
            warm = None
    payload = {
        "method": method,
        "request": task.request,
        "epsilon": task.epsilon,
        "budget": task.budget,
        "tol": task.tol,
        "warm": warm,
        "cache": cache,
        "report": task.report is not None,
        "memory_limit": float(memory_limit),
    }
    try:
        return pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # noqa: BLE001 - e.g. a caller's program with closures: run in process
        return None


def _package_root() -> str:
    """The folder holding the ``privopt`` package (this file is ``privopt/solve/…``)."""
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _start(child_end: Connection, stderr) -> subprocess.Popen:
    env = dict(os.environ)
    root = _package_root()  # the child imports this privopt, wherever it came from
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    # fewer malloc arenas: each reserves 64 MB of address space, which RLIMIT_AS counts
    env.setdefault("MALLOC_ARENA_MAX", "2")
    fd = child_end.fileno()
    return subprocess.Popen(
        [sys.executable, "-m", "privopt.solve._child", str(fd), str(os.getpid())],
        pass_fds=(fd,),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,  # native banners and logs must not reach the caller's
        stderr=stderr,
        start_new_session=True,  # no terminal signals: the driver ends it
        env=env,
        close_fds=True,
    )


_TIMEOUT = object()
_ENDED = object()


def _receive(conn: Connection, proc: subprocess.Popen, until: float) -> Any:
    """The child's next message, :data:`_ENDED` if it ended, :data:`_TIMEOUT` at ``until``
    (a ``time.perf_counter`` value, possibly ``inf``)."""
    while True:
        left = until - time.perf_counter()
        if left <= 0:
            return _TIMEOUT
        try:
            if conn.poll(min(left, POLL_SECONDS)):
                return conn.recv()
        except (EOFError, OSError):
            return _ENDED
        if proc.poll() is not None and not conn.poll(0):
            return _ENDED


def _stop(proc: subprocess.Popen) -> None:
    """Kill the child's process group (it may have started helpers) and reap it."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):  # pragma: no cover - already gone
            proc.kill()
    proc.wait()


def _ended_answer(method: Method, proc: subprocess.Popen, stderr, memory_limit: float) -> Answer:
    """The ``FAILED`` answer of a child that ended without answering (a native abort, a
    signal), with the last line it wrote."""
    code = proc.returncode
    if code is not None and code < 0:
        try:
            how = f"was ended by {signal.Signals(-code).name}"
        except ValueError:  # pragma: no cover
            how = f"was ended by signal {-code}"
    else:
        how = f"exited with code {code}"
    stderr.seek(0)
    lines = [line for line in stderr.read().decode("utf-8", "replace").splitlines() if line]
    last = f" ({lines[-1].strip()[:200]})" if lines else ""
    bound = (
        f"; its address space was limited to the memory bound of {format_bytes(memory_limit)}"
        if math.isfinite(memory_limit)
        else ""
    )
    return Answer(
        Status.FAILED,
        method.name,
        message=f"{method.name}'s child process {how} before it answered{last}{bound}",
        details={"isolated": True, "exit_code": code},
    )


def run_isolated(method: Method, task: Task, memory_limit: float) -> Answer | None:
    """Solve ``task`` with ``method`` in a child process (module docstring).

    Parameters
    ----------
    method : Method
    task : Task
        The point; its deadline must be limited.
    memory_limit : float
        The memory bound (bytes, ``inf`` for none): the child's address space may grow by
        this much.

    Returns
    -------
    Answer or None
        The child's answer; ``TIME_LIMIT`` when it had not answered by the deadline plus
        :func:`grace` (it is then killed); ``FAILED`` when it ended without answering.
        ``None`` when the task cannot be pickled: the caller solves it in its own process.

    Raises
    ------
    InputError
        Raised by the method in the child (bad solver options), as in the caller's process.
    Exception
        Any other exception of the method, as the method raised it when it can be pickled
        (else :class:`IsolatedFailure` with its text).
    """
    payload = _payload(method, task, memory_limit)
    if payload is None:
        return None
    deadline = task.deadline
    parent_end, child_end = Pipe(duplex=True)
    stderr = tempfile.TemporaryFile()
    try:
        proc = _start(child_end, stderr)
    except OSError:
        parent_end.close()
        child_end.close()
        stderr.close()
        return None
    child_end.close()
    started = time.perf_counter()
    try:
        message = _receive(parent_end, proc, deadline.end)  # "ready" after its imports
        if message is _ENDED:
            return _ended_answer(method, proc, stderr, memory_limit)
        if message is _TIMEOUT:
            return _time_limit_answer(method, "before it was ready")
        ready = time.perf_counter()
        parent_end.send_bytes(payload)
        parent_end.send(deadline.remaining())
        while True:
            message = _receive(parent_end, proc, deadline.end + grace(deadline))
            if message is _TIMEOUT:
                return _time_limit_answer(method, "still running")
            if message is _ENDED:
                return _ended_answer(method, proc, stderr, memory_limit)
            kind, value = message
            if kind == "event" and task.report is not None:
                task.report(
                    ProgressEvent(
                        value.stage,
                        value.method,
                        deadline.elapsed(),
                        value.iteration,
                        value.message,
                    )
                )
            elif kind == "answer":
                value.details.setdefault("isolated", True)
                value.details.setdefault("process_start_s", round(ready - started, 3))
                if value.status == Status.FAILED and math.isfinite(memory_limit):
                    if value.message == "out of memory":
                        value.message += f" (at the memory bound of {format_bytes(memory_limit)})"
                return value
            elif kind == "raise":
                raise _exception(*value)
    finally:
        _stop(proc)
        parent_end.close()
        stderr.close()


def _exception(blob: bytes | None, text: str) -> BaseException:
    """The method's exception sent by the child (:class:`IsolatedFailure` with its traceback
    when it cannot be rebuilt here)."""
    if blob is not None:
        try:
            exc = pickle.loads(blob)
            if isinstance(exc, BaseException):
                return exc
        except Exception:  # noqa: BLE001 - fall back to the text
            pass
    return IsolatedFailure(text)


def _time_limit_answer(method: Method, state: str) -> Answer:
    return Answer(
        Status.TIME_LIMIT,
        method.name,
        message=f"{method.name} was {state} in its child process at the time limit (ended)",
        details={"isolated": True},
    )
