"""The console entry point of ``privopt`` (and ``python -m privopt``), kept tiny on purpose.

Importing the command line pulls in numpy, scipy and cvxpy (about a second); a Ctrl-C during
that time used to print a ``KeyboardInterrupt`` traceback. This module imports nothing heavy
itself: it catches the interrupt around the import of :mod:`privopt.cli` and the run, prints
``privopt: interrupted`` and exits with 130 (128 + SIGINT, as shells do).
"""

from __future__ import annotations

__all__ = ["main", "EXIT_INTERRUPTED"]

import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing anything at start-up
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Sequence

#: Exit code after Ctrl-C (128 + SIGINT).
EXIT_INTERRUPTED = 130


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``privopt`` command line with Ctrl-C handled from the first instant.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments (default ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit code of :func:`privopt.cli.main`, or 130 when interrupted.
    """
    import signal  # built into the interpreter: nothing is loaded

    # Ctrl-C is noted as well as raised: a KeyboardInterrupt raised inside a callback of the
    # import system (a module lock's weakref callback) is only reported by Python ("Exception
    # ignored in ...") and the run would go on to exit 0 (seen once in 10 CI runs)
    interrupted: list[bool] = []
    previous = signal.getsignal(signal.SIGINT)
    installed = previous is signal.default_int_handler

    def on_interrupt(signum, frame):
        interrupted.append(True)
        raise KeyboardInterrupt

    # ... and Python reports such an interrupt through sys.unraisablehook, with its traceback
    # ("Exception ignored in: <function _get_module_lock.<locals>.cb>"; seen on a loaded
    # machine): an interrupt is noted there instead, anything else reported as before
    previous_hook = sys.unraisablehook

    def on_unraisable(unraisable) -> None:
        if isinstance(unraisable.exc_value, KeyboardInterrupt):
            interrupted.append(True)
        else:
            previous_hook(unraisable)

    sys.unraisablehook = on_unraisable
    if installed:
        try:
            signal.signal(signal.SIGINT, on_interrupt)
        except ValueError:  # not the main thread: leave Python's handler
            installed = False
    try:
        from privopt.cli import main as cli_main

        if interrupted:  # swallowed during the imports
            return _interrupted()
        code = cli_main(argv)
    except KeyboardInterrupt:
        return _interrupted()
    except Exception:
        # an import the interrupt broke: numpy turns a KeyboardInterrupt inside its extension's
        # import into an ImportError ("PyCapsule_Import could not import module datetime";
        # seen in CI with Ctrl-C at the start of the imports)
        if interrupted:
            return _interrupted()
        raise
    finally:
        if installed:
            signal.signal(signal.SIGINT, previous)
        sys.unraisablehook = previous_hook
    return _interrupted() if interrupted and code != EXIT_INTERRUPTED else code


def _interrupted() -> int:
    """Say ``privopt: interrupted`` and return 130."""
    try:
        sys.stderr.write("privopt: interrupted\n")
        sys.stderr.flush()
    except Exception:  # noqa: BLE001 - stderr may be closed; the exit code still says it
        pass
    return EXIT_INTERRUPTED


def run() -> None:  # pragma: no cover - exercised through subprocesses
    """``sys.exit(main())``, for ``python -m privopt``.

    After Ctrl-C the process ends with :func:`os._exit` (streams flushed first): under
    ``python -m``, CPython 3.11 turns a KeyboardInterrupt that passed through an extension's
    ``PyRun_String`` during the imports into death by SIGINT at exit (status -2 instead of
    130), even though it was handled here.
    """
    code = main()
    if code == EXIT_INTERRUPTED:
        import os

        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001 - a closed stream must not hide the exit code
                pass
        os._exit(code)
    sys.exit(code)
