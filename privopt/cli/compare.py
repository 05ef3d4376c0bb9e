"""``privopt compare``: every method that applies to a file's request, each under a time
limit, side by side (:mod:`privopt.comparison`)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from privopt._io import escape_text
from privopt.errors import InputError

from ._common import _about, _as_option, _check_outputs, load_problem
from ._output import _fmt, _header, _lines, _note, _print_json, _wrote

if TYPE_CHECKING:  # pragma: no cover
    from privopt.comparison import Comparison
    from privopt.io.files import ProblemSpec


def cmd_compare(args: argparse.Namespace) -> int:
    """``privopt compare``: run every applicable method on a file's request with a time limit
    each; print the table (time, memory, status, certified gap, agreement with the best
    certified answer); write ``--csv`` and ``--plot`` (:mod:`privopt.comparison`).

    Parameters
    ----------
    args : argparse.Namespace
        FILE, ``--methods``, ``--time-limit`` (per method) and the outputs.

    Returns
    -------
    int
        0 when some method gave a verified answer, 1 when every method found the request
        infeasible, 3 otherwise.
    """
    spec = load_problem(args.file)
    if spec.notion is None or spec.mode is None or spec.distortion is None:
        raise InputError(
            "the file has no design request (needs [distortion] and [privacy] with a notion "
            "and epsilon or max_distortion)",
            "privacy",
        )
    _check_outputs(args, csv_extensions=(".csv",))
    methods = None
    if args.methods:
        methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    limit = _time_limit(args.time_limit, spec.time_limit)
    table = _compare(spec, methods, limit, quiet=args.json)
    if args.csv:
        table.to_csv(args.csv, option="--csv")
    if args.plot:
        from privopt import plotting

        plotting.save_figure(table.plot(), args.plot, option="--plot")
    if args.json:
        _print_json({"file": spec.path, "title": spec.title, **table.to_dict()})
    else:
        _print_table(spec, table, limit)
        _wrote((("table", args.csv), ("figure", args.plot)), gap="")
    return _exit_code(table)


def _time_limit(option: float | None, from_file: float | None) -> float:
    """The time limit of each method: ``--time-limit``, else the file's ``[solver]
    time_limit``, else :data:`privopt.comparison.DEFAULT_TIME_LIMIT`."""
    from privopt.comparison import DEFAULT_TIME_LIMIT

    limit = option if option is not None else from_file
    return DEFAULT_TIME_LIMIT if limit is None else limit


def _exit_code(table: Comparison) -> int:
    """0 when some method gave a verified answer, 1 when every one found the request
    infeasible, 3 otherwise."""
    statuses = [row["status"] for row in table.rows]
    if any(row.get("verified") for row in table.rows):
        return 0
    if statuses and all(status == "infeasible" for status in statuses):
        return 1
    return 3


def _compare(spec: ProblemSpec, methods: list[str] | None, limit: float, quiet: bool):
    """Run the comparison (each method's outcome said on stderr unless ``quiet``); an unknown
    method is an error of ``--methods``."""
    from privopt.comparison import compare

    def said(row: dict) -> None:
        _note(f"privopt compare: {row['method']}: {row['status']} in {row['seconds']:.3g} s")

    try:
        with _about(spec.path):
            return compare(
                spec.location if spec.location is not None else spec.prior,
                spec.distortion,
                spec.notion,
                epsilon=spec.epsilon,
                max_distortion=spec.max_distortion,
                methods=methods,
                time_limit=limit,
                on_method=None if quiet else said,
                progress=False,
                **spec.design_kwargs(),
            )
    except InputError as exc:
        if exc.field == "methods":  # the command line's option, not a key of the file
            raise _as_option(exc, str(exc).split("methods: ", 1)[-1], "--methods") from None
        raise


def _print_table(spec: ProblemSpec, table: Comparison, limit: float) -> None:
    """The comparison for people: the file, the request, the table and the best answer."""
    print(_lines(_header(spec)))
    asked = ", ".join(f"{k} = {_fmt(v)}" for k, v in table.requested.items())
    print(f"  request: {table.notion} at {asked}; {_fmt(limit)} s per method\n")
    print(_lines(escape_text(line) for line in table.table().splitlines()))
    if table.best is None:
        print("\nno method certified an answer")
    else:
        print(
            f"\nbest certified {table.objective_name}: {_fmt(table.best, 12)} "
            f"({escape_text(str(table.best_method))})"
        )
