"""The child process of :mod:`privopt.solve.isolation`: ``python -m privopt.solve._child FD
PARENT_PID``.

It tells the parent it is ready (after its imports), receives the pickled task and the time
left, limits its address space to the memory bound, solves the point as the driver would in
its own process, and sends back progress events and the answer (or the exception the method
raised), then exits at once (``os._exit``: a native library's clean-up at exit has nothing to
do in a process that is done).
"""

from __future__ import annotations

__all__ = ["main"]

import math
import os
import pickle
import signal
import sys
import traceback


def _die_with_parent(parent: int) -> None:
    """Linux: be killed when the parent dies (``PR_SET_PDEATHSIG``); leave at once if it
    already has."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG = 1
        except (OSError, AttributeError):  # pragma: no cover - no prctl
            pass
    if os.getppid() != parent:
        os._exit(1)


def _address_space() -> int:
    """The process's virtual size in bytes (0 where ``/proc`` is not available)."""
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _limit_memory(limit: float) -> None:
    """Let the address space grow by at most ``limit`` bytes beyond its size now."""
    if not math.isfinite(limit):
        return
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        target = int(_address_space() + limit)
        if hard != resource.RLIM_INFINITY:
            target = min(target, hard)
        resource.setrlimit(resource.RLIMIT_AS, (target, hard))
    except (ImportError, ValueError, OSError):  # pragma: no cover - not supported here
        pass


def _sendable(answer):
    """``answer`` with what does not pickle (a warm start such as a HiGHS basis, then a
    structured mechanism) left out."""
    for name in ("warm", "structured"):
        try:
            pickle.dumps(answer)
            return answer
        except Exception:  # noqa: BLE001
            setattr(answer, name, None)
    return answer


#: Least seconds between two ``iteration`` events sent to the parent (a simplex reports
#: every iteration; the other stages are always sent).
EVENT_INTERVAL = 0.1


def _reporter(conn):
    """``report(event)`` sending progress events to the parent, iterations thinned out."""
    import time

    last = [-float("inf")]

    def report(event) -> None:
        now = time.perf_counter()
        if event.stage == "iteration":
            if now - last[0] < EVENT_INTERVAL:
                return
            last[0] = now
        conn.send(("event", event))

    return report


def main(argv: list[str] | None = None) -> None:
    """Serve one task (module docstring).

    Parameters
    ----------
    argv : list of str, optional
        ``[FD, PARENT_PID]`` (default ``sys.argv[1:]``).
    """
    args = sys.argv[1:] if argv is None else argv
    fd, parent = int(args[0]), int(args[1])
    _die_with_parent(parent)
    from multiprocessing.connection import Connection

    conn = Connection(fd)
    import privopt.methods  # noqa: F401  (the registry, and every method's module)
    from privopt.methods.base import Deadline, Task
    from privopt.solve.point import solve_in_process

    conn.send(("ready", os.getpid()))
    payload = pickle.loads(conn.recv_bytes())
    seconds = conn.recv()
    _limit_memory(payload["memory_limit"])
    task = Task(
        payload["request"],
        epsilon=payload["epsilon"],
        budget=payload["budget"],
        tol=payload["tol"],
        deadline=Deadline(seconds),
        warm=payload["warm"],
        cache=dict(payload["cache"]),
        report=_reporter(conn) if payload["report"] else None,
    )
    try:
        answer = solve_in_process(payload["method"], task)
        conn.send(("answer", _sendable(answer)))
    except BaseException as exc:  # noqa: BLE001 - the parent raises it (InputError included)
        text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        try:
            blob = pickle.dumps(exc)
        except Exception:  # noqa: BLE001 - it does not pickle: its text only
            blob = None
        conn.send(("raise", (blob, text)))
    conn.close()
    os._exit(0)


if __name__ == "__main__":
    main()
