"""``privopt demo``: solve the built-in problem (``privopt/data/demo.toml``), print the answer
and draw the privacy–distortion curves of identifiability and DP with the closed forms of
[Wang-Ying-Zhang]."""

from __future__ import annotations

import argparse
import os
import time
from typing import TYPE_CHECKING

import numpy as np

from privopt._io import check_output_path, escape_text
from privopt.errors import InputError

from ._common import _deadline, _load_demo, _NoMatplotlib, _options_named
from ._output import _fmt, _note, _print_json
from .curve import _curve_records, _note_time_limit, _plot, _run_sweep
from .solve import _solve_spec, _solve_text

if TYPE_CHECKING:  # pragma: no cover
    from privopt.io.files import ProblemSpec

#: Default file name of the demo's figure.
DEMO_FIGURE = "privopt-demo.png"
#: ε range of the demo's curves (START:STOP:COUNT).
DEMO_SWEEP = (0.0, 3.0, 31)
#: The notions of the demo's curves.
DEMO_NOTIONS = ("identifiability", "dp")


def cmd_demo(args: argparse.Namespace) -> int:
    """``privopt demo``: solve the built-in problem and draw its figure.

    Parameters
    ----------
    args : argparse.Namespace
        Where to draw (``--out-dir``, ``--no-plot``) and the solve's settings.

    Returns
    -------
    int
        The exit code: 0 solved, 1 infeasible, 3 the solve or a curve point hit the time limit
        (what was computed is still reported and drawn).
    """
    start = time.perf_counter()
    spec = _load_demo()
    target = None if args.no_plot else _figure_path(args.out_dir)
    with _options_named(args):
        out, checks, result = _solve_spec(spec, args.solver, args.time_limit)
    figure = None
    curves = []
    if target is not None:
        curves = _demo_curves(args, spec)
        try:
            figure = _plot(spec, curves, target, _highlight(out))
        except _NoMatplotlib as exc:
            _note(f"privopt: warning: no figure: {exc}")
    elapsed = time.perf_counter() - start
    records = _curve_records(curves)
    if args.json:
        out["figure"] = figure
        out["curves"] = records
        _print_json(out)
    else:
        print(_solve_text(spec, out, checks, result))
        _print_figure_note(figure, records)
        print(f"\n(done in {elapsed:.1f} s; try `privopt solve problems/<file>.toml` next)")
    if out["status"] == "infeasible":
        return 1
    code = 0
    if out["status"] == "time_limit":
        _note(f"privopt: {spec.path}: {out.get('message') or 'time limit reached'}")
        code = 3
    if _note_time_limit(spec.path, records, "left out of the figure"):
        code = 3
    return code


def _figure_path(out_dir: str | None) -> str:
    """The demo's figure in ``--out-dir`` (made if missing), checked before any solving."""
    out_dir = out_dir or "."
    try:
        os.makedirs(out_dir, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create {out_dir!r}: {exc.strerror or exc}", "--out-dir") from None
    return check_output_path(os.path.join(out_dir, DEMO_FIGURE), "--out-dir")


def _demo_curves(args: argparse.Namespace, spec: ProblemSpec) -> list:
    """The curves of :data:`DEMO_NOTIONS` over :data:`DEMO_SWEEP`, within ``--time-limit``."""
    start_eps, stop_eps, count = DEMO_SWEEP
    points = [float(v) for v in np.linspace(start_eps, stop_eps, count)]
    deadline = _deadline(args.time_limit, spec.time_limit)
    with _options_named(args):
        return [
            _run_sweep(spec, n, "epsilon", points, args.solver, deadline=deadline)
            for n in DEMO_NOTIONS
        ]


def _highlight(out: dict) -> tuple[float, float, str] | None:
    """The solved design as a marked point of the figure, ``None`` when there is none."""
    if out["status"] == "infeasible" or out.get("epsilon") is None:
        return None
    return (
        out["epsilon"],
        out["distortion"],
        f"this design: {out['notion']}, $\\varepsilon = {_fmt(out['epsilon'], 4)}$, "
        f"$E[d] = {_fmt(out['distortion'], 6)}$",
    )


def _print_figure_note(figure: str | None, records: list[dict]) -> None:
    """Say what the figure shows and where it is, and how many points it leaves out."""
    if figure:
        print(
            f"\nprivacy–distortion curves of identifiability and dp for ε in "
            f"[{DEMO_SWEEP[0]:g}, {DEMO_SWEEP[1]:g}] with the closed forms of Wang et al.:"
        )
        print(f"  wrote {escape_text(figure)}")
    timed_out = sum(r.get("status") == "time_limit" for r in records)
    if timed_out:
        print(
            f"  {timed_out} of {len(records)} curve points hit the time limit and are left "
            "out of the figure"
        )
