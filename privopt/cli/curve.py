"""``privopt curve``: the privacy–distortion curve of a problem file, swept over given levels
or budgets (``A:B:K``) or, with ``--band``, certified over a range with the points chosen
adaptively; the table streamed to ``--csv`` as the points finish (checkpoints every
:data:`CHECKPOINT_SECONDS`, a first Ctrl-C stops after the current point), and a figure."""

from __future__ import annotations

import argparse
import contextlib
import csv
import dataclasses
import math
import os
import signal
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from privopt._io import atomic_stream
from privopt.errors import InputError

from ._common import (
    _about,
    _as_option,
    _check_outputs,
    _deadline,
    _options_named,
    _plotting,
    _progress,
    _progress_bar,
    _time_left,
    load_problem,
)
from ._output import _csv_value, _fmt, _header, _lines, _note, _print_json, _wrote

if TYPE_CHECKING:  # pragma: no cover
    from privopt.io.files import ProblemSpec
    from privopt.methods.base import Deadline


#: Most points of one ``privopt curve`` run (COUNT × notions; each point is one solve) unless
#: ``--max-points`` allows more.
MAX_CURVE_POINTS = 10_000


#: ``curve --csv`` writes the rows computed so far to ``PATH.partial`` at least this often
#: (seconds of solving); the sweep then resumes from the next point (its warm start restarts),
#: but not before it has solved for :data:`CHECKPOINT_SETUP_FACTOR` times its set-up time.
CHECKPOINT_SECONDS = 5.0


CHECKPOINT_SETUP_FACTOR = 10.0


def cmd_curve(args: argparse.Namespace) -> int:
    """``privopt curve``: sweep levels or budgets; stream ``--csv``, draw ``--plot``.

    Parameters
    ----------
    args : argparse.Namespace
        FILE, the levels or budgets (``--epsilon`` / ``--max-distortion``), ``--band``, the
        outputs and the solve's settings.

    Returns
    -------
    int
        The exit code: 0 every point solved or infeasible, 3 a point failed or hit the time
        limit (the points computed are still printed and written).
    """
    spec = load_problem(args.file)
    if args.max_points is not None and args.max_points < 1:
        raise InputError(f"must be >= 1, got {args.max_points}", "--max-points")
    banded = args.band is not None or args.band_abs is not None
    if args.epsilon is not None:
        mode, option, text = "epsilon", "--epsilon", args.epsilon
    else:
        mode, option, text = "max_distortion", "--max-distortion", args.max_distortion
    unit = getattr(args, "unit", "nats")
    if banded and text.count(":") == 1:
        span = _parse_span(text, option)
        return _curve_banded(args, spec, mode, option, _levels_in_nats(span, mode, unit))
    if args.max_points is None:
        args.max_points = MAX_CURVE_POINTS
    points = _levels_in_nats(_parse_range(text, option, args.max_points), mode, unit)
    if banded:
        return _curve_banded(args, spec, mode, option, points)
    notions = _curve_notions(args, spec)
    _check_point_count(len(points), len(notions), args.max_points, option)
    _check_outputs(args)
    curves = _sweep_streamed(args, spec, notions, mode, points, unit)
    records = _curve_records(curves)
    if args.plot:  # the figure in the unit of the table (--unit)
        _plot(spec, [_curve_in(c, mode, unit) for c in curves], args.plot)
    if args.json:
        _print_json(_records_in(records, mode, unit))
    else:
        print(_curve_text(spec, curves, mode, unit))
        _wrote((("table", args.csv), ("figure", args.plot)))
    return _curve_exit(spec.path, records)


def _sweep_streamed(
    args: argparse.Namespace,
    spec: ProblemSpec,
    notions: list[str],
    mode: str,
    points: list[float],
    unit: str,
) -> list:
    """The curve of each notion; with ``--csv``, its rows streamed to ``PATH.partial`` as the
    points finish and renamed to ``PATH`` at the end (kept as ``PATH.partial`` when the run
    is interrupted or fails)."""
    stream = _CsvStream(args.csv, mode, unit) if args.csv else None
    deadline = _deadline(args.time_limit, spec.time_limit)
    on_records = (lambda rs: stream.write(_records_in(rs, mode, unit))) if stream else None
    try:
        with _stop_after_point_on_ctrl_c(stream is not None) as stop, _options_named(args):
            curves = [
                _run_sweep(
                    spec,
                    notion,
                    mode,
                    points,
                    args.solver,
                    on_records=on_records,
                    stop=stop if stream else None,
                    deadline=deadline,
                )
                for notion in notions
            ]
        if stream is not None:
            stream.commit()
    except BaseException as exc:
        if stream is not None:
            stream.abandon(exc)
        raise
    return curves


def _check_point_count(count: int, n_notions: int, max_points: int, option: str) -> None:
    """Refuse ``count`` points of each of ``n_notions`` notions beyond ``--max-points``."""
    if count * n_notions > max_points:
        what = f"points ({count} × {n_notions} notions)"
        raise InputError(_too_many_points(count * n_notions, max_points, what), option)


def _curve_exit(path: str, records: list[dict]) -> int:
    """The exit code of a curve: 0, or 3 (with a note on stderr) when a point failed or hit
    the time limit."""
    code = 0
    errors = [r for r in records if r.get("status") == "error"]
    if errors:
        _note(f"privopt: {path}: {len(errors)} point(s) failed; first: {errors[0]['message']}")
        code = 3
    if _note_time_limit(path, records):
        code = 3
    return code


def _levels_in_nats(values, mode: str, unit: str):
    """``--epsilon`` levels given in ``--unit`` as nats (budgets, and nats, as they are).

    Parameters
    ----------
    values : sequence of float
    mode : {"epsilon", "max_distortion"}
    unit : {"nats", "bits"}

    Returns
    -------
    list or tuple of float
        The same kind of sequence as ``values``.
    """
    if mode != "epsilon" or unit == "nats":
        return values
    from privopt.solve.units import to_nats

    return type(values)(to_nats(v, unit) for v in values)


def _parse_range(text: str, option: str, max_points: int = MAX_CURVE_POINTS) -> list[float]:
    """``START:STOP:COUNT`` → COUNT evenly spaced values from START to STOP inclusive (COUNT at
    most ``max_points``, checked before anything is allocated)."""
    parts = text.split(":")
    if len(parts) != 3:
        raise InputError(f"expected START:STOP:COUNT (e.g. 0:2:21), got {text!r}", option)
    try:
        start, stop = float(parts[0]), float(parts[1])
        count = int(parts[2])
    except ValueError:
        raise InputError(
            f"expected numbers START:STOP and an integer COUNT, got {text!r}", option
        ) from None
    if count < 1:
        raise InputError(f"COUNT must be >= 1, got {count}", option)
    if count > max_points:
        raise InputError(_too_many_points(count, max_points), option)
    if not (math.isfinite(start) and math.isfinite(stop)) or start < 0 or stop < 0:
        what = "a privacy level ε" if option == "--epsilon" else "a distortion budget"
        raise InputError(
            f"START and STOP must be finite numbers >= 0 ({what} cannot be negative), got {text!r}",
            option,
        )
    if count == 1:
        return [start]
    return [float(v) for v in np.linspace(start, stop, count)]


def _too_many_points(count: int, max_points: int, what: str = "points") -> str:
    return (
        f"{count} {what} is more than the limit of {max_points} (--max-points); each point is "
        f"one solve: ask for fewer, or pass --max-points {count} to run them all"
    )


def _parse_span(text: str, option: str) -> tuple[float, float]:
    """``START:STOP`` → the range of an adaptive banded curve."""
    parts = text.split(":")
    try:
        lo, hi = float(parts[0]), float(parts[1])
    except ValueError:
        raise InputError(
            f"expected numbers START:STOP (e.g. 0.05:3), got {text!r}", option
        ) from None
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo < 0 or not lo < hi:
        raise InputError(f"expected 0 <= START < STOP, both finite, got {text!r}", option)
    return lo, hi


def _parse_band(text: str, option: str) -> float:
    """``--band``: a fraction (``0.01``) or a percentage (``1%``); ``--band-abs``: a width."""
    raw = text.strip()
    percent = option == "--band" and raw.endswith("%")
    try:
        value = float(raw[:-1] if percent else raw)
    except ValueError:
        what = "a fraction such as 0.01 or 1%" if option == "--band" else "a number > 0"
        raise InputError(f"expected {what}, got {text!r}", option) from None
    value = value / 100 if percent else value
    if not (math.isfinite(value) and value > 0) or (option == "--band" and value > 1):
        raise InputError(f"expected a tolerance in (0, 1] (or (0%, 100%]), got {text!r}", option)
    return value


def _curve_notions(args: argparse.Namespace, spec) -> list[str]:
    """The notions of ``privopt curve``: ``--notions`` or the file's."""
    from privopt.notions import get_notion

    if not args.notions:
        return [spec.notion]
    names = [n.strip() for n in args.notions.split(",") if n.strip()]
    if not names:
        raise InputError("expected a comma-separated list of notions", "--notions")
    try:
        return [get_notion(n).name for n in names]
    except InputError as exc:
        raise _as_option(exc, str(exc).split(": ", 1)[-1], "--notions") from None


@contextlib.contextmanager
def _stop_after_point_on_ctrl_c(enabled: bool) -> Iterator[dict]:
    """While a ``curve --csv`` sweep runs, the first Ctrl-C asks to stop after the current point
    (so that every row computed is kept); a second one interrupts at once.

    Yields a dict whose ``"stop"`` entry turns true on the first Ctrl-C.
    """
    state = {"stop": False}
    usable = enabled and threading.current_thread() is threading.main_thread()
    previous = signal.getsignal(signal.SIGINT) if usable else None
    if not usable or previous in (signal.SIG_IGN, None):
        yield state
        return

    def first_interrupt(signum, frame) -> None:
        state["stop"] = True
        signal.signal(signal.SIGINT, previous)
        _note(
            "privopt: interrupted: stopping after the current point to keep the rows computed "
            "so far (Ctrl-C again to stop at once)"
        )

    signal.signal(signal.SIGINT, first_interrupt)
    try:
        yield state
    finally:
        signal.signal(signal.SIGINT, previous)


class _Gate:
    """The ``progress`` wrapper of a checkpointed sweep: hands out points until a checkpoint is
    due (:data:`CHECKPOINT_SECONDS` of solving, and :data:`CHECKPOINT_SETUP_FACTOR` × the set-up
    time) or a Ctrl-C asked to stop; the sweep then returns the records of the points it got."""

    def __init__(self, stop: dict, bar=None):
        self.stop = stop
        self.bar = bar
        self.handed = 0
        self.created = time.perf_counter()

    def __call__(self, values: Iterable[float]) -> Iterator[float]:
        first = budget = None
        for value in values:
            now = time.perf_counter()
            if self.stop["stop"]:
                return
            if first is None:
                first = now
                budget = max(CHECKPOINT_SECONDS, CHECKPOINT_SETUP_FACTOR * (first - self.created))
            elif now - first >= budget:
                return
            self.handed += 1
            yield value  # resumed when the sweep has recorded this point
            if self.bar is not None:
                self.bar.update(1)


def _run_sweep(
    spec: ProblemSpec,
    notion: str,
    mode: str,
    points: list[float],
    solver,
    on_records: Callable[[list[dict]], None] | None = None,
    stop: dict | None = None,
    deadline: Deadline | None = None,
):
    """Sweep one notion; with ``on_records``, in stretches of about :data:`CHECKPOINT_SECONDS`
    whose records are handed over as soon as they exist (streamed ``--csv``).

    ``stop["stop"]`` (set by a first Ctrl-C) ends the sweep after the current point and raises
    :class:`KeyboardInterrupt` once the finished records are handed over.
    """
    from privopt.notions import get_notion
    from privopt.solve import Curve, sweep

    key = "epsilons" if mode == "epsilon" else "max_distortions"
    name = get_notion(notion).name

    def sweep_from(first: int, progress):
        with _about(spec.path):
            return sweep(
                spec.prior,
                spec.distortion,
                notion,
                solver=solver or spec.solver,
                progress=progress,
                time_limit=_time_left(deadline),
                **{key: points[first:]},
                **spec.design_kwargs(notion),
            )

    if on_records is None and stop is None:  # one warm sweep (the demo, curve without --csv)
        return sweep_from(0, _progress(name))
    stop = stop if stop is not None else {"stop": False}
    bar = _progress_bar(name, len(points))
    records: list[dict] = []
    results: list = []
    done = 0
    try:
        while done < len(points) and not stop["stop"]:
            gate = _Gate(stop, bar)
            curve = sweep_from(done, gate)
            if len(curve.records) != gate.handed:  # pragma: no cover - defensive
                raise RuntimeError(f"the sweep returned {len(curve.records)} of {gate.handed}")
            if not gate.handed:  # Ctrl-C before the first point of this stretch
                break
            records += curve.records
            results += curve.results
            done += gate.handed
            if on_records is not None:
                on_records(curve.records)
    finally:
        if bar is not None:
            bar.close()
    if stop["stop"] and done < len(points):
        raise KeyboardInterrupt
    return Curve(name, mode, records, results)


def _curve_in(curve, mode: str, unit: str):
    """A copy of a curve (swept in nats) with its records and results in ``unit``."""
    from privopt.solve.units import result_in_unit

    if unit == "nats":
        return curve
    return dataclasses.replace(
        curve,
        records=_records_in(curve.records, mode, unit),
        results=[None if r is None else result_in_unit(r, unit) for r in curve.results],
        unit=unit,
        band=None if curve.band is None else curve.band.in_unit(unit),
    )


def _records_in(records: list[dict], mode: str, unit: str) -> list[dict]:
    """Copies of curve records with their levels in ``unit`` (``--unit``; points are given
    and solved in nats)."""
    from privopt.solve.units import from_nats, records_in_unit

    out = [dict(r) for r in records]
    if unit == "nats":
        return out
    values = (
        [from_nats(r.get("requested_epsilon"), unit) for r in out] if mode == "epsilon" else None
    )
    for r in out:  # a banded budget curve's envelopes are levels too
        for key in ("epsilon_lower", "epsilon_upper"):
            if r.get(key) is not None:
                r[key] = from_nats(r[key], unit)
    return records_in_unit(out, mode, unit, values)


class _CsvStream:
    """The ``curve --csv`` table, streamed: rows go to ``PATH.partial`` as their points finish;
    :meth:`commit` renames it to ``PATH`` (atomically); :meth:`abandon` keeps it, with a note on
    stderr, when the run is interrupted or fails (``PATH`` itself is never touched then)."""

    def __init__(self, path: str, mode: str, unit: str = "nats"):
        self.path = path
        # next to the file a link points to, so that the final rename stays in one folder
        self.partial = (os.path.realpath(path) if os.path.islink(path) else path) + ".partial"
        other = "requested_max_distortion" if mode == "epsilon" else "requested_epsilon"
        from privopt.solve.results import CURVE_KEYS  # a curve record's keys

        self.columns = [c for c in CURVE_KEYS if c != other]
        if unit != "nats":
            self.columns.append("unit")
        self.rows = 0
        self._context = None
        self._writer = None
        self._fh = None

    def write(self, records: list[dict]) -> None:
        """Append rows and flush them to disk."""
        try:
            if self._writer is None:  # opened with the first finished point
                self._context = atomic_stream(
                    self.path, newline="", temp_path=self.partial, keep_on_error=True
                )
                self._fh = self._context.__enter__()
                self._writer = csv.DictWriter(
                    self._fh, fieldnames=self.columns, extrasaction="ignore"
                )
                self._writer.writeheader()
            for r in records:
                self._writer.writerow({k: _csv_value(v) for k, v in r.items()})
            self._fh.flush()
            os.fsync(self._fh.fileno())
        except OSError as exc:
            raise InputError(
                f"cannot write {self.partial!r}: {exc.strerror or exc} ({self.path!r} is "
                "unchanged)",
                "--csv",
            ) from None
        self.rows += len(records)

    def commit(self) -> None:
        """Rename ``PATH.partial`` to ``PATH`` (a header-only table when there were no rows)."""
        if self._writer is None:
            self.write([])
        try:
            self._context.__exit__(None, None, None)
        except OSError as exc:
            reason = exc.strerror or exc
            raise InputError(f"cannot write {self.path!r}: {reason}", "--csv") from None

    def abandon(self, exc: BaseException) -> None:
        """Close ``PATH.partial`` after an interruption or an error: kept when it holds rows."""
        if self._context is None:
            return
        with contextlib.suppress(Exception):
            self._context.__exit__(type(exc), exc, exc.__traceback__)
        if self.rows:
            _note(
                f"privopt: kept the {self.rows} row(s) computed so far in {self.partial} "
                f"({self.path} is unchanged)"
            )
        else:
            with contextlib.suppress(OSError):
                os.unlink(self.partial)


def _curve_text(spec: ProblemSpec, curves, mode: str, unit: str = "nats") -> str:
    lines = _header(spec) + [""]
    req = "requested ε" if mode == "epsilon" else "budget"
    head = f"  {'notion':<24}{req:>14}{f'ε ({unit})':>16}{'E[d]':>16}  status"
    lines.append(head)
    for curve in curves:
        for r in _records_in(curve.records, mode, unit):
            status = r.get("status", "")
            if status == "infeasible" and r.get("least_achievable") is not None:
                status += f" (least {_fmt(r['least_achievable'], 6)})"
            elif status == "error":
                status += f": {r.get('message', '')}"
            lines.append(
                f"  {curve.notion:<24}{_fmt(r.get(f'requested_{mode}'), 6):>14}"
                f"{_fmt(r.get('epsilon'), 10):>16}{_fmt(r.get('distortion'), 10):>16}  {status}"
            )
    return _lines(lines)


def _curve_banded(args: argparse.Namespace, spec, mode: str, option: str, given) -> int:
    """``privopt curve --band``: the curve of each notion with its certified band, chosen
    adaptively on a range ``(lo, hi)`` or over given points; the table (points, then the
    band's rows), JSON, figure and a summary of each band."""
    if args.band is not None:
        tolerance = {"band": _parse_band(args.band, "--band")}
    else:
        band_abs = _parse_band(args.band_abs, "--band-abs")
        if mode == "max_distortion":  # a budget curve's band is on levels, in --unit
            band_abs = _levels_in_nats([band_abs], "epsilon", getattr(args, "unit", "nats"))[0]
        tolerance = {"band_abs": band_abs}
    notions = _curve_notions(args, spec)
    points = _band_points(args, mode, option, given, len(notions))
    _check_outputs(args)
    unit = getattr(args, "unit", "nats")  # of the output; levels are given in nats
    curves = _sweep_banded(args, spec, notions, {**tolerance, **points})
    records = _curve_records(curves)
    shown = [_curve_in(c, mode, unit) for c in curves]
    rows = _records_in(records, mode, unit)
    for curve in shown:
        rows += [{"notion": curve.notion, "kind": "band", **r} for r in curve.band.to_records()]
    if args.csv:
        _write_band_csv(args.csv, rows, mode)
    if args.plot:
        _plot(spec, shown, args.plot)
    if args.json:
        _print_json(
            {
                "records": _records_in(records, mode, unit),
                "bands": [{"notion": c.notion, **c.band.to_dict()} for c in shown],
            }
        )
    else:
        print(_curve_text(spec, curves, mode, unit))
        for curve in shown:
            print(_band_text(curve))
        _wrote((("table", args.csv), ("figure", args.plot)))
    for curve in shown:
        if not curve.band.met and curve.band.stopped:
            _note(f"privopt: {spec.path}: {_band_text(curve).strip()}")
    return _curve_exit(spec.path, records)


def _band_points(
    args: argparse.Namespace, mode: str, option: str, given, n_notions: int
) -> dict[str, Any]:
    """The points of a banded sweep, as keywords of :func:`privopt.sweep`: a range ``(lo, hi)``
    with its point budget, or the given points."""
    from privopt.solve.curve_sweep import DEFAULT_MAX_POINTS

    if isinstance(given, tuple):
        key = "epsilon_range" if mode == "epsilon" else "max_distortion_range"
        budget = args.max_points if args.max_points is not None else DEFAULT_MAX_POINTS
        if budget < 2:
            raise InputError(f"a range needs at least 2 points, got {budget}", "--max-points")
        return {key: given, "max_points": budget}
    _check_point_count(len(given), n_notions, args.max_points, option)
    return {"epsilons" if mode == "epsilon" else "max_distortions": given}


def _sweep_banded(
    args: argparse.Namespace, spec: ProblemSpec, notions: list[str], settings: dict
) -> list:
    """The banded curve of each notion (``settings``: the tolerance and the points), within
    ``--time-limit`` for them all."""
    from privopt.notions import get_notion
    from privopt.solve import sweep

    deadline = _deadline(args.time_limit, spec.time_limit)
    curves = []
    with _options_named(args):
        for notion in notions:
            with _about(spec.path), warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the summary below says where it is wide
                curves.append(
                    sweep(
                        spec.prior,
                        spec.distortion,
                        notion,
                        solver=args.solver or spec.solver,
                        time_limit=_time_left(deadline),
                        **settings,
                        **spec.design_kwargs(get_notion(notion).name),
                    )
                )
    return curves


def _band_text(curve) -> str:
    """One notion's band in words: its width and, if it is not within the tolerance, where."""
    band = curve.band
    what = "E[d]" if band.mode == "epsilon" else f"ε ({band.unit})"
    share = f" ({100 * band.relative_width:.3g} % of the range)" if band.range > 0 else ""
    head = (
        f"\n  {curve.notion}: band on {what} {band.width:.4g}{share}, tolerance "
        f"{band.tolerance:.4g}, {band.points} points"
    )
    if band.met:
        return head + ": within the tolerance everywhere"
    wide = ", ".join(f"[{a:.4g}, {b:.4g}] ({w:.3g})" for a, b, w in band.wide()[:6])
    stop = f" ({band.stopped})" if band.stopped else ""
    return head + f"{stop}: still wider on {wide}"


def _write_band_csv(path: str, rows: list[dict], mode: str) -> None:
    """The ``curve --band`` table: the points, then every band's rows (``kind = band``)."""
    from privopt.solve.curve_band import band_columns
    from privopt.solve.results import CURVE_KEYS

    other = "requested_max_distortion" if mode == "epsilon" else "requested_epsilon"
    x = "epsilon" if mode == "epsilon" else "max_distortion"
    columns = ["kind", *[c for c in CURVE_KEYS if c != other], *band_columns(mode), "solved"]
    if any("unit" in r for r in rows):
        columns.append("unit")
    with atomic_stream(path, newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns, extrasaction="ignore")
        writer.writeheader()
        for r in rows:
            r = dict(r)
            if r.get("kind") == "band":  # the band's value is the row's requested one
                r[f"requested_{mode}"] = r.pop(x)
            else:
                r["kind"] = "point"
            writer.writerow({k: _csv_value(v) for k, v in r.items()})


def _plot(spec: ProblemSpec, curves, path: str, highlight=None) -> str:
    """Draw the curves (title: the sweep, not the file's single request) and save atomically."""
    plotting = _plotting()
    fig = plotting.plot_curves(
        curves,
        prior=spec.location if spec.location is not None else spec.prior,  # a map: named so
        distortion=spec.distortion,
        neighbors=spec.neighbors,
        highlight=highlight,
    )
    return plotting.save_figure(fig, path, option="--plot")


def _curve_records(curves) -> list[dict]:
    return [dict(r) for curve in curves for r in curve.records]


def _note_time_limit(path: str, records: list[dict], more: str = "") -> int:
    """Say on stderr how many curve points stopped at the time limit (``more`` is appended);
    return that number."""
    timed_out = [r for r in records if r.get("status") == "time_limit"]
    if timed_out:
        reason = timed_out[0].get("message") or "time limit reached"
        _note(
            f"privopt: {path}: {len(timed_out)} of {len(records)} curve point(s) hit the time "
            f"limit ({reason}){'; ' + more if more else ''}"
        )
    return len(timed_out)
