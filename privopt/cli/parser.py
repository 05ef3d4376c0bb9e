"""The argument parser of ``privopt``: one sub-command per command module, the options they
share, a "did you mean" for a misspelt command or option, and negative range values joined to
their option before argparse sees them."""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence

from privopt.errors import InputError, close_matches, did_you_mean

from . import audit, batch, compare, curve, demo, info, solve
from .curve import MAX_CURVE_POINTS
from .demo import DEMO_FIGURE


def _seconds(text: str) -> float:
    """``--time-limit``: seconds, a number >= 0 (``inf``: no limit)."""
    from privopt.validation import check_time_limit

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected seconds (a number >= 0), got {text!r}"
        ) from None
    try:
        return check_time_limit(value, "--time-limit")
    except InputError as exc:  # argparse names the option: drop the field of the message
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--time-limit: ")) from None


def _time_limit_option(
    p: argparse.ArgumentParser, what: str = "", outcome: str = "with status time_limit (exit 3)"
) -> None:
    p.add_argument(
        "--time-limit",
        metavar="SECONDS",
        type=_seconds,
        default=None,
        help=f"stop after SECONDS{' ' + what if what else ''} {outcome}; "
        "overrides [solver] time_limit",
    )


def _memory_size(value: str) -> str:
    """``--max-memory``: a size such as ``8G``, ``512M``, bytes, or ``inf``."""
    from privopt.resources import parse_memory

    try:
        parse_memory(value)
    except InputError as exc:  # argparse names the option; drop the API's field name
        raise argparse.ArgumentTypeError(str(exc).removeprefix("max_memory: ")) from None
    return value


def _memory_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--max-memory",
        metavar="SIZE",
        type=_memory_size,
        default=None,
        help="memory bound when choosing methods, e.g. 8G, 512M or inf (default 4G); "
        "overrides PRIVOPT_MAX_MEMORY",
    )


def _unit_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--unit",
        choices=("nats", "bits"),
        default="nats",
        help="unit of the levels shown and of --epsilon (default nats; the levels in a file "
        "are always in nats)",
    )


class _Parser(argparse.ArgumentParser):
    """argparse with a "did you mean" for a misspelt command or option (``privopt slove``,
    ``--jsn``); Python's own parser suggests nothing before 3.14."""

    def _names(self, commands: bool) -> set[str]:
        """The commands (``commands``), else every option of this parser and its commands."""
        names = set() if commands else set(self._option_string_actions)
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    names.update([name] if commands else sub._option_string_actions)
        return names

    def error(self, message: str):  # noqa: D102 - argparse's hook: print usage, exit 2
        command = re.search(r"argument COMMAND: invalid choice: '([^']*)'", message)
        option = re.search(r"unrecognized arguments: (-\S+)", message)
        word = command or option
        if word is not None:
            message += did_you_mean(close_matches(word.group(1), self._names(bool(command))))
        super().error(message)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``privopt`` (one sub-command per ``cmd_*`` function).

    Returns
    -------
    argparse.ArgumentParser
    """
    common = _Parser(add_help=False)
    common.add_argument(
        "--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks on errors"
    )

    parser = _Parser(
        prog="privopt",
        description="Design and audit optimal privacy mechanisms by convex optimisation.",
        epilog="Exit codes: 0 solved, 1 infeasible, 2 bad input, 3 solver failure or time "
        "limit, 4 answer contradicts [reference], 130 interrupted. Start with `privopt demo`.",
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    from privopt import __version__

    parser.add_argument("--version", action="version", version=f"privopt {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for add in (
        _add_solve,
        _add_curve,
        _add_audit,
        _add_demo,
        _add_batch,
        _add_compare,
        _add_notions,
        _add_solvers,
    ):
        add(sub, common)
    return parser


def _add_solve(sub, common: argparse.ArgumentParser) -> None:
    """``privopt solve`` and its options."""
    p = sub.add_parser(
        "solve",
        parents=[common],
        help="solve a problem file (no FILE: the built-in demo problem)",
        description="Solve the design request of a problem file and verify the answer.",
    )
    p.add_argument("file", nargs="?", metavar="FILE", help="problem file (.toml)")
    _json_option(p)
    _solver_option(
        p,
        "a cvxpy solver or privopt fast path, see `privopt solvers` (overrides [solver] name)",
    )
    p.add_argument(
        "--out", metavar="PATH", help="also write the mechanism to PATH (.json, .csv or .npz)"
    )
    p.add_argument(
        "--plot",
        metavar="PATH",
        help="draw the answer (.png, .pdf or .svg): a map's heatmaps (prior, release law of "
        "--cell, expected loss per place), else the mechanism's matrix",
    )
    p.add_argument(
        "--cell",
        metavar="LABEL",
        help='the place whose release law --plot draws (a label such as "2,3"; default: the '
        "most probable place)",
    )
    _time_limit_option(p)
    _memory_option(p)
    _unit_option(p)
    p.set_defaults(func=solve.cmd_solve)


def _add_curve(sub, common: argparse.ArgumentParser) -> None:
    """``privopt curve`` and its options."""
    p = sub.add_parser(
        "curve",
        parents=[common],
        help="sweep the privacy-distortion curve of a problem file",
        description="Sweep the privacy level or the distortion budget for the file's prior, "
        "distortion and notion (or --notions).",
    )
    _file_argument(p)
    group = p.add_mutually_exclusive_group(required=True)
    group.add_argument("--epsilon", metavar="A:B:K", help="K levels from A to B (inclusive)")
    group.add_argument(
        "--max-distortion", metavar="A:B:K", help="K distortion budgets from A to B (inclusive)"
    )
    p.add_argument(
        "--max-points",
        metavar="N",
        type=int,
        default=None,
        help=f"refuse to run more than N points in all (default {MAX_CURVE_POINTS}); with "
        "--band and a range A:B, the point budget of each notion (default 200)",
    )
    band = p.add_mutually_exclusive_group()
    band.add_argument(
        "--band",
        metavar="TOL",
        help="certify the whole curve: with a range A:B, choose the points until the band "
        "around the optimum is within TOL of the curve's range everywhere (0.01 or 1%%); "
        "with A:B:K, the band of those points",
    )
    band.add_argument(
        "--band-abs", metavar="TOL", help="as --band, an absolute width (distortion, or nats)"
    )
    p.add_argument("--notions", metavar="a,b,c", help="sweep these notions instead of the file's")
    p.add_argument(
        "--csv",
        metavar="PATH",
        help="write the table as CSV (streamed to PATH.partial, renamed to PATH at the end)",
    )
    _json_option(p, "print a JSON array on stdout")
    p.add_argument("--plot", metavar="PATH", help="write a figure (.png, .pdf or .svg)")
    _solver_option(p)
    _time_limit_option(
        p,
        "for the whole curve",
        "(the points not reached get status time_limit; exit 3 when any did)",
    )
    _memory_option(p)
    _unit_option(p)
    p.set_defaults(func=curve.cmd_curve)


def _add_audit(sub, common: argparse.ArgumentParser) -> None:
    """``privopt audit`` and its options."""
    p = sub.add_parser(
        "audit",
        parents=[common],
        help="measure every notion on a given mechanism",
        description="Measure the leakage of the [mechanism] of a file (or --mechanism).",
    )
    p.add_argument("file", metavar="FILE", help="file with [prior], [mechanism], [distortion]")
    _json_option(p)
    p.add_argument(
        "--mechanism",
        metavar="PATH",
        help="audit this mechanism (.json, .csv, .npz as written by solve --out) instead",
    )
    _unit_option(p)
    p.set_defaults(func=audit.cmd_audit)


def _add_demo(sub, common: argparse.ArgumentParser) -> None:
    """``privopt demo`` and its options."""
    p = sub.add_parser(
        "demo",
        parents=[common],
        help="solve the built-in demo problem and draw its privacy-distortion figure",
        description="Solve privopt/data/demo.toml, print the mechanism and its audit, and "
        f"write the figure {DEMO_FIGURE}.",
    )
    p.add_argument("--out-dir", metavar="DIR", help=f"where to write {DEMO_FIGURE} (default: .)")
    p.add_argument("--no-plot", action="store_true", help="do not draw the figure")
    _json_option(p)
    _solver_option(p)
    _time_limit_option(
        p,
        "for the solve and again for the curves",
        "(status time_limit; exit 3 when the solve or any curve point hit it)",
    )
    _memory_option(p)
    p.set_defaults(func=demo.cmd_demo)


def _add_batch(sub, common: argparse.ArgumentParser) -> None:
    """``privopt batch`` and its options."""
    p = sub.add_parser(
        "batch",
        parents=[common],
        help="solve many problem files into a results table (resumable, parallel)",
        description="Solve every problem file (FOLDER: its *.toml files) and write one row per "
        "file to OUT; rows stream to OUT.partial as they finish; a re-run skips the files "
        "already in the results (same content).",
    )
    p.add_argument("paths", nargs="+", metavar="FILE|DIR", help="problem files or folders")
    p.add_argument("--out", required=True, metavar="PATH", help="results table (.csv, .parquet)")
    p.add_argument(
        "--workers",
        metavar="N",
        type=int,
        default=None,
        help="processes on this machine (default 1: solve in this process)",
    )
    p.add_argument(
        "--scheduler", metavar="ADDRESS", help="a Dask scheduler (tcp://host:8786) to solve on"
    )
    _solver_option(p)
    p.add_argument(
        "--retry-errors", action="store_true", help="solve again the problems recorded as errors"
    )
    _time_limit_option(
        p,
        "for each problem",
        "(recorded with status time_limit; the batch goes on and exits 0)",
    )
    _memory_option(p)
    p.set_defaults(func=batch.cmd_batch)


def _add_compare(sub, common: argparse.ArgumentParser) -> None:
    """``privopt compare`` and its options."""
    p = sub.add_parser(
        "compare",
        parents=[common],
        help="run every method that applies on a file's request and compare them",
        description="Solve the file's request with each applicable method in turn (or those "
        "of --methods), each under the time limit, and report wall time, memory, status, "
        "certified gap and agreement with the best certified answer; as a table, a CSV file "
        "and a figure.",
    )
    _file_argument(p)
    p.add_argument(
        "--methods",
        metavar="a,b,c",
        help="compare these methods only (default: every one that applies; privopt solvers)",
    )
    p.add_argument("--csv", metavar="PATH", help="write the table as CSV")
    p.add_argument("--plot", metavar="PATH", help="write a figure (.png, .pdf or .svg)")
    _json_option(p)
    _time_limit_option(
        p,
        "for each method (default: [solver] time_limit, else 60)",
        "(that method's status is time_limit; the others still run)",
    )
    _memory_option(p)
    p.set_defaults(func=compare.cmd_compare)


def _add_notions(sub, common: argparse.ArgumentParser) -> None:
    """``privopt notions`` and its options."""
    p = sub.add_parser(
        "notions",
        parents=[common],
        help="list the privacy notions",
        description="List the privacy notions privopt designs for: name, convexity, the paper "
        "that defines it, aliases and the [privacy] options it takes.",
    )
    _json_option(
        p,
        "print a JSON array on stdout (name, aliases, convexity, uses_neighbors, source, options)",
    )
    p.set_defaults(func=info.cmd_notions)


def _add_solvers(sub, common: argparse.ArgumentParser) -> None:
    """``privopt solvers`` and its options."""
    p = sub.add_parser(
        "solvers",
        parents=[common],
        help="list the available solvers",
        description="List the installed methods (cvxpy solvers and privopt fast paths) with "
        "what each is and which notions it solves on which kinds of prior.",
    )
    _json_option(p, "print a JSON array on stdout (name, family, description, notions)")
    p.set_defaults(func=info.cmd_solvers)


def _file_argument(p: argparse.ArgumentParser) -> None:
    """The problem file a command reads."""
    p.add_argument("file", metavar="FILE", help="problem file (.toml)")


def _json_option(p: argparse.ArgumentParser, text: str = "print one JSON object on stdout"):
    """``--json``: the answer as JSON on stdout (``text``: its help)."""
    p.add_argument("--json", action="store_true", help=text)


def _solver_option(
    p: argparse.ArgumentParser,
    text: str = "a cvxpy solver or privopt fast path (privopt solvers)",
) -> None:
    """``--solver``: the method to use (``text``: its help)."""
    p.add_argument("--solver", metavar="NAME", help=text)


#: Options whose value (a START:STOP:COUNT range, a size) may start with a minus sign.
_RANGE_OPTIONS = ("--epsilon", "--max-distortion", "--max-memory")


_NEGATIVE = re.compile(r"-\.?\d")


def _join_negative_ranges(argv: Sequence[str]) -> list[str]:
    """``--epsilon -1:1:3`` → ``--epsilon=-1:1:3``: argparse takes a value that starts with
    ``-`` and is not a plain number for an option and says only "expected one argument"; joined,
    the value reaches its own check, which says what is wrong with it.

    Parameters
    ----------
    argv : sequence of str
        The arguments.

    Returns
    -------
    list of str
        The arguments, with each option of :data:`_RANGE_OPTIONS` joined to a following value
        that starts with ``-`` and a digit.
    """
    args = [str(a) for a in argv]
    out: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":  # what follows is positional
            out += args[i:]
            break
        if arg in _RANGE_OPTIONS and i + 1 < len(args) and _NEGATIVE.match(args[i + 1]):
            out.append(f"{arg}={args[i + 1]}")
            i += 2
            continue
        out.append(arg)
        i += 1
    return out
