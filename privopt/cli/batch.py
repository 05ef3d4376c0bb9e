"""``privopt batch``: many problem files into one results table, resumably, in parallel
(:mod:`privopt.io.batch_files`)."""

from __future__ import annotations

import argparse

from privopt.errors import InputError

from ._output import _note


def cmd_batch(args: argparse.Namespace) -> int:
    """``privopt batch``: solve problem files into a results table, resumably
    (:mod:`privopt.io.batch_files`).

    Parameters
    ----------
    args : argparse.Namespace
        The files or folders, ``--out``, ``--workers`` or ``--scheduler`` and the solve's
        settings.

    Returns
    -------
    int
        The exit code: 0 every problem has a result, 3 some were recorded with an error.
    """
    from privopt.io.batch_files import print_line, run_batch

    if args.scheduler and args.workers is not None:
        raise InputError("give --workers or --scheduler, not both", "--workers")
    try:
        summary = run_batch(
            args.paths,
            args.out,
            workers=1 if args.workers is None else args.workers,
            scheduler=args.scheduler,
            solver=args.solver,
            time_limit=args.time_limit,
            retry_errors=args.retry_errors,
            report=print_line,
        )
    except KeyboardInterrupt:
        _note(
            f"privopt batch: interrupted; the results done so far are kept in "
            f"{args.out}.partial ({args.out} is unchanged): run the same command to resume"
        )
        raise
    counts = ", ".join(f"{n} {status}" for status, n in sorted(summary.statuses.items()))
    print_line(
        f"wrote {summary.out}: {summary.solved} solved ({counts or 'none'}), "
        f"{summary.skipped} already there"
    )
    return 3 if summary.errors else 0
