"""Keeping native solver libraries from writing to the process's standard output.

HiGHS (from 1.16) prints a two-line banner on file descriptor 1 the first time a ``Highs``
object is created in a process, whatever ``output_flag`` says afterwards. That output would
corrupt ``privopt solve --json`` and any pipeline reading privopt's standard output. The banner
is printed once per process, so :func:`silence_highs_banner` creates one ``Highs`` object with
descriptor 1 pointed at the null device; later objects (ours or cvxpy's) stay quiet.
"""

from __future__ import annotations

__all__ = ["native_stdout_to_null", "silence_highs_banner"]

import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_LOCK = threading.Lock()
_HIGHS_SILENCED = False


@contextmanager
def native_stdout_to_null() -> Iterator[None]:
    """Point file descriptor 1 at the null device for the duration of the block.

    Returns
    -------
    Iterator[None]
        A context manager; Python-level ``sys.stdout`` is flushed before and after.
    """
    try:
        sys.stdout.flush()
        saved = os.dup(1)
    except (OSError, ValueError, AttributeError):  # no descriptor 1 (embedded interpreters)
        yield
        return
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1)
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(null)


def silence_highs_banner() -> None:
    """Absorb HiGHS's once-per-process banner (a no-op after the first call).

    Returns
    -------
    None
    """
    global _HIGHS_SILENCED
    if _HIGHS_SILENCED:
        return
    with _LOCK:
        if _HIGHS_SILENCED:
            return
        try:
            import highspy
        except ImportError:
            _HIGHS_SILENCED = True
            return
        with native_stdout_to_null():
            highspy.Highs()
        _HIGHS_SILENCED = True
