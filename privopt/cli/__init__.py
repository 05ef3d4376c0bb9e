"""The ``privopt`` command line (docs/cli.md, "Command line", documents it).

Commands::

    privopt solve [FILE] [--json] [--solver NAME] [--out mech.json|.csv|.npz]
                  [--plot P.png|.pdf|.svg [--cell LABEL]]
    privopt curve FILE (--epsilon A:B:K | --max-distortion A:B:K) [--max-points N]
                  [--notions a,b,c] [--csv P] [--json] [--plot P.png|.pdf|.svg] [--solver NAME]
    privopt curve FILE (--epsilon A:B | --max-distortion A:B) (--band TOL | --band-abs TOL) …
    privopt audit FILE [--json] [--mechanism mech.json|.csv|.npz]
    privopt demo [--out-dir DIR] [--json] [--no-plot]
    privopt batch FILE|DIR… --out results.csv|.parquet [--workers N | --scheduler ADDRESS]
    privopt compare FILE [--methods a,b,c] [--time-limit S] [--csv P] [--plot P] [--json]
    privopt notions | solvers

Exit codes: 0 solved; 1 the request is infeasible (the least achievable value is on stderr and,
with ``--json``, in the JSON); 2 bad input (stderr names the file, the key and what is wrong);
3 a solver or verification failure, the time limit, or an unexpected error; 4 the answer
contradicts the file's ``[reference]``; 130 interrupted (Ctrl-C).
``--debug`` shows tracebacks.

Outputs (``--out``, ``--csv``, ``--plot``, the demo's figure) are checked before any solving
and written atomically (:mod:`privopt._io`): a temporary file in the target's folder renamed
over the target, so an existing file is never left truncated. ``curve --csv`` streams its rows
to ``PATH.partial`` while the sweep runs and renames it to ``PATH`` at the end; an interrupted
or failed run keeps ``PATH.partial`` with the rows computed so far.

One module per command (:mod:`~privopt.cli.solve`, :mod:`~privopt.cli.curve`,
:mod:`~privopt.cli.audit`, :mod:`~privopt.cli.demo`, :mod:`~privopt.cli.batch`,
:mod:`~privopt.cli.compare`, :mod:`~privopt.cli.info` for ``notions`` and ``solvers``), the
parser in :mod:`~privopt.cli.parser`, what they print in ``_output`` and what they share in
``_common``; this module runs a command and turns its errors into exit codes. Nothing here
imports the notions, cvxpy or matplotlib before a command needs them (``privopt --help``
answers at once). The constants below are copies of their modules' (a test that changes one
sets it where it is read, e.g. :data:`privopt.cli.curve.CHECKPOINT_SECONDS`).
"""

from __future__ import annotations

__all__ = [
    "main",
    "build_parser",
    "DEMO_FIGURE",
    "MAX_CURVE_POINTS",
    "PLOT_FORMATS",
    "MECHANISM_FORMATS",
    "MAX_DENSE_OUTPUT",
    "CHECKPOINT_SECONDS",
    "CHECKPOINT_SETUP_FACTOR",
    "EXIT_REFERENCE_MISMATCH",
]

import contextlib
import os
import sys
import warnings
from collections.abc import Sequence

from privopt.errors import InfeasibleError, InputError, PrivoptError

from ._common import EXIT_REFERENCE_MISMATCH, PLOT_FORMATS, _memory_bound, _started
from ._output import _note, _print_json
from .curve import CHECKPOINT_SECONDS, CHECKPOINT_SETUP_FACTOR, MAX_CURVE_POINTS
from .demo import DEMO_FIGURE
from .parser import _join_negative_ranges, build_parser
from .solve import MAX_DENSE_OUTPUT, MECHANISM_FORMATS

#: Exit code, kind of failure (said on stderr) of the errors a command raises, first match.
_FAILURES = (
    (InputError, 2, "error"),
    (InfeasibleError, 1, "infeasible"),
    (PrivoptError, 3, "solver failure"),
)
#: What ``--json`` calls each kind of failure (its first word otherwise).
_CATEGORIES = {"error": "input", "solver failure": "solver", "out of memory": "memory"}
_OUT_OF_MEMORY = (
    # the estimate (privopt.resources) missed: say so plainly, with the knob
    "the machine ran out of memory although the request's estimate was within the bound; "
    "lower PRIVOPT_MAX_MEMORY (e.g. PRIVOPT_MAX_MEMORY=1G) so that larger programs are "
    "refused before they start, or use a smaller alphabet"
)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; never raises, never prints a traceback unless ``--debug``.

    Parameters
    ----------
    argv : sequence of str, optional
        The command line without the program's name (default: this process's,
        ``sys.argv[1:]``).

    Returns
    -------
    int
        0 solved, 1 infeasible, 2 bad input, 3 solver failure or unexpected error,
        4 the answer contradicts ``[reference]``, 130 interrupted (Ctrl-C).
    """
    _started()
    parser = build_parser()
    try:
        args = parser.parse_args(_join_negative_ranges(sys.argv[1:] if argv is None else argv))
    except SystemExit as exc:  # --help / --version (0) or a usage error (2)
        return exc.code if isinstance(exc.code, int) else 2
    if args.command is None:  # a usage error: the help, on stderr, and exit 2
        parser.print_help(sys.stderr)
        print("\nprivopt: error: give a command (e.g. privopt demo)", file=sys.stderr)
        return 2
    for stream in (sys.stdout, sys.stderr):  # never fail on ε, ⊗ … with a non-UTF-8 console
        with contextlib.suppress(AttributeError, ValueError, OSError):
            stream.reconfigure(errors="backslashreplace")
    try:
        return _run(args)
    except KeyboardInterrupt:
        print("privopt: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `privopt solve … | head`
        with contextlib.suppress(Exception):
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115
        return 0
    except Exception as exc:  # noqa: BLE001 - the CLI must never show a bare traceback
        return _failed(exc, args)


def _run(args) -> int:
    """Run the command of ``args`` with its ``--max-memory`` in force and each library
    warning (e.g. robust_pml's hull note) said in one line, not in Python's format."""

    def show_warning(message, category, *_args, **_kwargs) -> None:
        _note(f"privopt: warning: {message}")

    with warnings.catch_warnings(), _memory_bound(getattr(args, "max_memory", None)):
        warnings.simplefilter("always", UserWarning)
        warnings.showwarning = show_warning
        return int(args.func(args))


def _failed(exc: Exception, args) -> int:
    """The exit code of a command that raised ``exc`` (called while it is handled), said on
    stderr and, with ``--json``, as a JSON object on stdout; the traceback with ``--debug``."""
    if isinstance(exc, MemoryError):
        return _fail(args, 3, "out of memory", _OUT_OF_MEMORY)
    if args.debug:
        import traceback

        traceback.print_exc()
    for kind_of_error, code, kind in _FAILURES:
        if isinstance(exc, kind_of_error):
            least = exc.least_achievable if isinstance(exc, InfeasibleError) else None
            return _fail(args, code, kind, str(exc), least=least, error=exc)
    return _fail(
        args,
        3,
        "internal error",
        f"{type(exc).__name__}: {exc} (run with --debug for the traceback; please report it)",
    )


def _fail(args, code: int, kind: str, message: str, least=None, error=None) -> int:
    """Say ``privopt: KIND: MESSAGE`` on stderr (escaped) and, with ``--json``, the same as a
    JSON object on stdout (exact): its status, category, message, and for an input error the
    key and the code programs react to; return ``code``."""
    _note(f"privopt: {kind}: {message}")
    if getattr(args, "json", False):
        category = _CATEGORIES.get(kind, kind.split()[0])
        payload = {"status": "error", "error": category, "message": message}
        if isinstance(error, InputError):  # what programs react to: the key and the kind
            payload.update(field=error.field, code=getattr(error, "code", None))
        if least is not None:
            payload.update(status="infeasible", least_achievable=least)
        _print_json(payload)
    return code
