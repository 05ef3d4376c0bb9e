"""What the commands share: the problem-file layer imported on first use, errors named after
the file or the option they are about, progress on a terminal, the outputs checked before any
solving, the figure of curves, the exit code of a ``[reference]`` mismatch, and the deadline
and memory bound of a command."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from typing import TYPE_CHECKING

from privopt._io import check_output_path, same_output
from privopt.errors import InputError

from ._output import _fmt, _note

if TYPE_CHECKING:  # pragma: no cover
    from privopt.io.files import ProblemSpec
    from privopt.methods.base import Deadline


# The problem-file layer imports the notions and cvxpy (about a second): it is imported on
# first use, so that ``privopt --help`` and argument errors answer at once.
def load_problem(*args, **kwargs) -> ProblemSpec:
    """:func:`privopt.io.files.load_problem` (a validated problem file), imported on first use."""
    from privopt.io.files import load_problem as load

    return load(*args, **kwargs)


def parse_problem(*args, **kwargs) -> ProblemSpec:
    """:func:`privopt.io.files.parse_problem` (a validated problem), imported on first use."""
    from privopt.io.files import parse_problem as parse

    return parse(*args, **kwargs)


def load_mechanism(*args, **kwargs):
    """:func:`privopt.io.files.load_mechanism` (a mechanism, dense or structured), imported on
    first use."""
    from privopt.io.files import load_mechanism as load

    return load(*args, **kwargs)


def check_reference(*args, **kwargs) -> list[dict]:
    """:func:`privopt.io.files.check_reference` (one record ``{"key", "expected", "got", "ok"}``
    per checked quantity), imported on first use."""
    from privopt.io.files import check_reference as check

    return check(*args, **kwargs)


#: Figure formats of ``--plot`` (the extension decides).
PLOT_FORMATS = (".png", ".pdf", ".svg")


#: Exit code of an answer that contradicts the file's ``[reference]``.
EXIT_REFERENCE_MISMATCH = 4


@contextlib.contextmanager
def _about(path: str | None):
    """Prefix every :class:`InputError` raised inside with the file it is about."""
    try:
        yield
    except InputError as exc:
        if path and not str(exc).startswith(f"{path}:"):
            err = InputError(f"{path}: {exc}", code=exc.code)
            err.field = exc.field
            err.suggestions = exc.suggestions
            raise err from None
        raise


@contextlib.contextmanager
def _options_named(args: argparse.Namespace):
    """Name the command-line option instead of the file key in the errors of a solve whose
    setting came from the command line: ``--solver`` (not ``solver.name``) when ``--solver``
    was given, and ``--max-memory`` (not ``PRIVOPT_MAX_MEMORY / max_memory=``) for a request
    that no method can hold within the memory bound."""
    try:
        yield
    except InputError as exc:
        renamed = _option_error(exc, getattr(args, "solver", None), args)
        if renamed is None:
            raise
        raise renamed from None


def _option_error(
    exc: InputError, solver: str | None, args: argparse.Namespace
) -> InputError | None:
    """The error ``exc`` (raised by the method choice) reworded for the command line, or
    ``None`` when it is not about a command-line option."""
    if exc.field not in ("solver.name", "max_memory"):
        return None
    text = str(exc)
    at = text.find(f"{exc.field}: ")
    head, body = text[:at], text[at + len(exc.field) + 2 :]
    if exc.field == "max_memory":  # no method fits the memory bound
        body = (
            body.replace("PRIVOPT_MAX_MEMORY / max_memory=", "--max-memory")
            .replace("--max-memory, max_memory= or PRIVOPT_MAX_MEMORY", "--max-memory")
            .replace(
                "set PRIVOPT_MAX_MEMORY, max_memory= or --max-memory to change it",
                "raise --max-memory to change it",
            )
        )
        if getattr(args, "max_memory", None) is not None:
            return InputError(body, "--max-memory")
        err = InputError(head + body)  # the bound from the environment: the file's name only
        err.field = None
        return err
    if solver is not None:
        return _as_option(exc, body, "--solver")
    return None


def _as_option(exc: InputError, message: str, option: str) -> InputError:
    """``exc`` (about a key of the API or the file) as an error of the command-line ``option``
    that set it, with the same suggestions."""
    renamed = InputError(message, option)
    renamed.suggestions = exc.suggestions
    return renamed


def _progress(desc: str):
    """A tqdm wrapper when stderr is a terminal; ``None`` (quiet) otherwise."""
    try:
        interactive = sys.stderr.isatty()
    except (AttributeError, ValueError):
        interactive = False
    if not interactive:
        return None
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover - tqdm is an optional dependency
        return None
    return lambda points: tqdm(points, desc=desc, unit="pt", leave=False, file=sys.stderr)


def _progress_bar(desc: str, total: int):
    """A tqdm bar of ``total`` points updated by hand when stderr is a terminal, else ``None``."""
    if _progress(desc) is None:
        return None
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="pt", leave=False, file=sys.stderr)


class _SolveStatus:
    """A one-line status (method, stage, iterations, elapsed) on a terminal during a solve."""

    def __init__(self):
        from tqdm import tqdm

        self.bar = tqdm(
            total=None,
            desc="solving",
            bar_format="{desc}: {postfix} [{elapsed}]",
            file=sys.stderr,
            leave=False,
        )

    def __call__(self, event) -> None:
        text = f"{event.method} {event.stage}"
        if event.iteration is not None:
            text += f", iteration {event.iteration}"
        self.bar.set_postfix_str(text)

    def close(self) -> None:
        self.bar.close()


def _solve_progress() -> _SolveStatus | None:
    """A :class:`_SolveStatus` when stderr is a terminal, else ``None``."""
    if _progress("solving") is None:
        return None
    return _SolveStatus()


def _load_demo() -> ProblemSpec:
    from importlib import resources

    try:
        import tomllib
    except ModuleNotFoundError:  # pragma: no cover - Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]

    text = (resources.files("privopt") / "data" / "demo.toml").read_text(encoding="utf-8")
    return parse_problem(tomllib.loads(text), "privopt/data/demo.toml (built in)")


def _reference_exit(spec: ProblemSpec, checks: list[dict], code: int) -> int:
    """``code``, or :data:`EXIT_REFERENCE_MISMATCH` with a note on stderr when a reference
    check failed."""
    bad = [c for c in checks if not c["ok"]]
    if not bad:
        return code
    what = "; ".join(
        f"{c['key']}: expected {_fmt(c['expected'], 12)}, got {_fmt(c['got'], 12)}" for c in bad
    )
    _note(f"privopt: {spec.path}: the answer does not match [reference]: {what}")
    return EXIT_REFERENCE_MISMATCH


#: When the running command started (``time.perf_counter()``), set by :func:`privopt.cli.main`:
#: a time limit covers the whole command (reading the file, building a map's metric), not only
#: the solve.
COMMAND_START: list[float] = []


def _started() -> None:
    """Note that a command starts now."""
    COMMAND_START[:] = [time.perf_counter()]


def _deadline(option: float | None, from_file: float | None) -> Deadline:
    """The deadline of a command: ``--time-limit``, else the file's ``[solver] time_limit``,
    counted from the command's start."""
    from privopt.methods.base import Deadline

    limit = option if option is not None else from_file
    return Deadline(limit, since=COMMAND_START[0] if COMMAND_START else None)


def _time_left_of(limit: float | None) -> float | None:
    """The seconds left of a limit counted from the command's start (``None``: no limit).

    Parameters
    ----------
    limit : float or None

    Returns
    -------
    float or None
    """
    if limit is None or not COMMAND_START:
        return limit
    return _deadline(limit, None).remaining() if limit <= 1e9 else limit


@contextlib.contextmanager
def _memory_bound(size: str | None):
    """``--max-memory`` for the duration of a command (as ``PRIVOPT_MAX_MEMORY``, which
    worker processes started by the command inherit)."""
    from privopt.resources import MEMORY_ENV

    if size is None:
        yield
        return
    saved = os.environ.get(MEMORY_ENV)
    os.environ[MEMORY_ENV] = size
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop(MEMORY_ENV, None)
        else:
            os.environ[MEMORY_ENV] = saved


class _NoMatplotlib(InputError):
    """matplotlib is not installed (it is the optional extra ``privopt[plot]``)."""


def _plotting():
    """:mod:`privopt.plotting`, or :class:`_NoMatplotlib` (naming ``--plot``) when matplotlib
    is not installed."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise _NoMatplotlib(
            "figures need matplotlib, which is not installed: pip install 'privopt[plot]'",
            "--plot",
        ) from None
    from privopt import plotting

    return plotting


def _check_outputs(args: argparse.Namespace, csv_extensions: tuple[str, ...] | None = None):
    """Check ``--plot`` and ``--csv`` before any solving: writable, of a known format, not
    one of the inputs, and not the same file."""
    if args.plot:
        check_output_path(args.plot, "--plot", extensions=PLOT_FORMATS, inputs=[args.file])
    if args.csv:
        check_output_path(args.csv, "--csv", extensions=csv_extensions, inputs=[args.file])
        if args.plot and same_output(args.csv, args.plot):
            raise InputError(f"{args.csv!r} is also the --plot file; give two paths", "--csv")


def _time_left(deadline: Deadline | None) -> float | None:
    """The seconds left before ``deadline`` (at least a microsecond), ``None`` without one."""
    if deadline is None or not deadline.limited:
        return None
    return max(deadline.remaining(), 1e-6)
