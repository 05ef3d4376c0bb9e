"""``privopt solve``: solve a problem file's request, print the report (or JSON), write the
mechanism (``--out``) and a figure of the answer (``--plot``)."""

from __future__ import annotations

import argparse
import csv
import math
import os
import re
from typing import TYPE_CHECKING, Any

import numpy as np

from privopt._io import atomic_write, check_output_path, same_output
from privopt.errors import InputError

from ._common import (
    PLOT_FORMATS,
    _about,
    _load_demo,
    _options_named,
    _plotting,
    _reference_exit,
    _solve_progress,
    _time_left_of,
    check_reference,
    load_problem,
)
from ._output import (
    _dumps,
    _fixed,
    _fmt,
    _header,
    _leakage_lines,
    _lines,
    _matrix_lines,
    _note,
    _print_json,
    _reference_lines,
    _structure_lines,
    _wrote,
)

if TYPE_CHECKING:  # pragma: no cover
    from privopt.io.files import ProblemSpec


#: Mechanism formats of ``solve --out``.
MECHANISM_FORMATS = (".json", ".csv", ".npz")


#: Largest number of inputs whose mechanism --out writes densely (.csv, .npz); above, a
#: structured answer is written as its JSON description only.
MAX_DENSE_OUTPUT = 4096


def cmd_solve(args: argparse.Namespace) -> int:
    """``privopt solve``: solve a file's request, print the report or JSON, write ``--out``.

    Parameters
    ----------
    args : argparse.Namespace
        FILE (none: the built-in demo problem), the outputs and the solve's settings.

    Returns
    -------
    int
        The exit code: 0 solved, 1 infeasible (errors are raised; :func:`main` maps them).
    """
    spec = _problem(args)
    _check_solve_outputs(args, spec)
    with _options_named(args):
        out, checks, result = _solve_spec(spec, args.solver, args.time_limit)
    limit = args.time_limit if args.time_limit is not None else spec.time_limit
    comparison = _laplace_comparison(spec, result, limit)
    if comparison is not None:
        out["laplace_comparison"] = comparison
    _write_outputs(args, spec, out, result)
    return _finish_solve(spec, out, checks, args, result)


def _problem(args: argparse.Namespace) -> ProblemSpec:
    """The problem of FILE, or the built-in demo problem when no FILE is given."""
    if args.file is not None:
        return load_problem(args.file)
    spec = _load_demo()
    if not args.json:
        print("(no FILE given: solving the built-in demo problem; `privopt demo` also draws")
        print(" its privacy–distortion figure)\n")
    return spec


def _check_solve_outputs(args: argparse.Namespace, spec: ProblemSpec) -> None:
    """Check ``--out``, ``--plot`` and ``--cell`` before any solving."""
    if args.out:
        check_output_path(args.out, "--out", extensions=MECHANISM_FORMATS, inputs=[args.file])
        ext = os.path.splitext(args.out)[1].lower()
        if ext != ".json" and spec.prior.n_inputs > MAX_DENSE_OUTPUT:
            raise InputError(
                f"the mechanism on {spec.prior.n_inputs} inputs is held in structured form and "
                f"only .json holds it (its compact description); {ext} needs the dense matrix",
                "--out",
            )
    plot = getattr(args, "plot", None)
    if plot:
        check_output_path(plot, "--plot", extensions=PLOT_FORMATS, inputs=[args.file])
        if args.out and same_output(args.out, plot):
            raise InputError(f"{args.out!r} is also the --plot file; give two paths", "--out")
    cell = getattr(args, "cell", None)
    if cell is None:
        return
    if not plot:
        raise InputError("--cell chooses the place drawn by --plot; give --plot too", "--cell")
    if spec.location is None:
        raise InputError("--cell needs a map ([prior.grid] or [prior.points])", "--cell")
    if cell not in spec.location.labels:
        shown = ", ".join(spec.location.labels[:6])
        raise InputError(f"unknown place {cell!r}; places are labelled {shown}, …", "--cell")


def _write_outputs(args: argparse.Namespace, spec: ProblemSpec, out: dict, result) -> None:
    """Write ``--out`` (a dense mechanism in any format, a structured one only as .json) and
    draw ``--plot`` (a dense mechanism only)."""
    plot = getattr(args, "plot", None)
    ext = os.path.splitext(args.out)[1].lower() if args.out else None
    dense = out.get("mechanism") is not None
    if args.out and (dense or (ext == ".json" and out.get("structured_mechanism"))):
        _write_mechanism(out, args.out)
        if not args.json:
            _wrote([("mechanism", args.out)])
    if plot and result.mechanism is not None:
        figure = _plot_answer(spec, result, plot, getattr(args, "cell", None))
        if not args.json:
            _wrote([("figure", figure)])
    elif plot:
        _note(f"privopt: {spec.path}: no dense mechanism to draw; --plot wrote nothing")


def _solve_spec(
    spec: ProblemSpec, solver: str | None, time_limit: float | None = None
) -> tuple[dict, list[dict], Any]:
    """Solve the file's request: (JSON object, reference checks, the raw result).

    The time limit (``time_limit``, else the file's) counts from the command's start; a
    run that reaches it says so with the limit asked for."""
    limit = time_limit if time_limit is not None else spec.time_limit
    status = _solve_progress()
    try:
        with _about(spec.path):
            result = spec.solve(
                solver=solver,
                raise_on_infeasible=False,
                time_limit=_time_left_of(limit),
                on_progress=status,
            )
    finally:
        if status is not None:
            status.close()
    if result.status == "time_limit" and limit is not None and result.message:
        result.message = re.sub(
            r"time limit of \S+ s", f"time limit of {limit:g} s", result.message, count=1
        )
    out = result.to_dict()
    out["file"] = spec.path
    if spec.title:
        out["title"] = spec.title
    checks = check_reference(spec.reference, out) if spec.reference else []
    if checks:
        out["reference_check"] = {
            "ok": all(c["ok"] for c in checks),
            "checks": checks,
            "what": spec.reference.get("what"),
        }
    return out, checks, result


def _solve_text(spec: ProblemSpec, out: dict, checks: list[dict], result=None) -> str:
    """The report of ``privopt solve``; numbers from ``result`` (raw floats: an infinite level
    prints ``inf``) when given, else from the JSON object ``out``."""
    notion = out["notion"]
    unit = out.get("unit", "nats")
    lines = _header(spec) + ["", f"request     {_request_text(out, result)}"]
    if out["status"] == "infeasible":
        lines.append("status      INFEASIBLE")
        lines.append(f"reason      {out.get('message', '')}")
        return _lines(lines + [""] + _reference_lines(spec, checks))
    lines += _status_lines(out)
    level = result.epsilon if result is not None else out["epsilon"]
    distortion = result.distortion if result is not None else out["distortion"]
    if level is None:
        return _lines(lines + ["", "no feasible mechanism was found"])
    lines += _level_lines(notion, level, unit, out.get("notes") or {})
    lines.append(f"distortion  E[d] = {_fixed(distortion, 12)}")
    lines += _answer_lines(out)
    leakage = dict(result.leakage) if result is not None else out.get("leakage")
    if leakage:
        lines += [""] + _leakage_lines(leakage, notion, spec.prior, spec.neighbors, unit)
    lines += _closed_form_lines(out.get("closed_form") or [])
    lines += _comparison_lines(out.get("laplace_comparison"))
    notes = out.get("notes") or {}
    if notes:
        lines += ["", "notes"]
        lines += [f"  {key}: {_fmt(value, 9)}" for key, value in notes.items()]
    if checks:
        lines += [""] + _reference_lines(spec, checks)
    return _lines(lines)


def _level_lines(notion: str, level: float, unit: str, notes: dict) -> list[str]:
    """The answer's level; for a design written on a spanner (``notes`` has
    ``spanner_stretch``) the level labelled as the one on the spanner's edges, and the
    guarantee ε·δ on every pair of the metric with its re-measured value."""
    stretch = notes.get("spanner_stretch")
    if stretch is None:
        return [f"level       {notion} = {_fixed(level, 12)} {unit}"]
    from privopt.solve.units import from_nats

    guaranteed = notes.get("guaranteed_metric_level")
    guaranteed = level * stretch if guaranteed is None else from_nats(guaranteed, unit)
    measured = notes.get("metric_level")
    shown = "" if measured is None else f", measured {_fmt(from_nats(measured, unit), 9)}"
    return [
        f"level       {notion} = {_fixed(level, 12)} {unit} on the spanner's edges "
        f"(spanner = {stretch:g})",
        f"            {notion} <= {_fixed(guaranteed, 12)} {unit} on every pair "
        f"(level·{stretch:g}{shown})",
    ]


def _request_text(out: dict, result=None) -> str:
    """The request in words: the least distortion at a level, or the least level at a budget."""
    notion, unit = out["notion"], out.get("unit", "nats")
    requested = dict(result.requested) if result is not None else out["requested"]
    if out.get("mode") == "max_distortion":
        return f"least {notion} level subject to E[d] <= {_fmt(requested['max_distortion'])}"
    return f"least E[d] subject to {notion} <= {_fmt(requested['epsilon'])} {unit}"


def _status_lines(out: dict) -> list[str]:
    """The status, the method that answered (or those tried), the line search, the
    certificate and the answer's note."""
    solver = out.get("solver", {})
    timing = solver.get("solve_time_s")
    name = solver.get("name") or ""
    if name:
        shown = name + (f" ({timing:.3g} s)" if isinstance(timing, float) else "")
    else:  # stopped (e.g. by the time limit) before any method returned an answer
        tried = ", ".join(str(t) for t in solver.get("tried") or [])
        shown = "none finished" + (f" (tried: {tried})" if tried else "")
    lines = [
        f"status      {out['status']}, verified: {'yes' if out['verified'] else 'NO'}   "
        f"solver: {shown}"
    ]
    if out.get("line_search"):
        ls = out["line_search"]
        lines.append(
            f"line search {ls.get('solves')} solves, bracket [{_fmt(ls['bracket'][0])}, "
            f"{_fmt(ls['bracket'][1])}]"
        )
    lines += _certificate_lines(out.get("certificate"))
    if out.get("message"):
        lines.append(f"note        {out['message']}")
    return lines


def _answer_lines(out: dict) -> list[str]:
    """The mechanism: its matrix, or its structure when it is held in structured form."""
    # only a certified answer is called optimal (a time limit hands over the best feasible one)
    kind = (
        "optimal mechanism" if out["status"] == "optimal" else "mechanism (not certified optimal)"
    )
    if out.get("mechanism") is None and out.get("structured_mechanism"):
        return [
            "",
            f"{kind}, held in structured form (too large to write out)",
            *_structure_lines(out["structured_mechanism"]),
        ]
    if out.get("mechanism") is None:
        return ["", "no dense mechanism to print"]
    return [
        "",
        f"{kind} p(u|y)  (rows: inputs y, columns: outputs u)",
        *_matrix_lines(np.array(out["mechanism"]), out["inputs"], out["outputs"]),
    ]


def _comparison_lines(comparison: dict | None) -> list[str]:
    """The planar Laplace comparison of a map (:func:`_laplace_comparison`), if any."""
    if comparison and "skipped" in comparison:
        return ["", f"planar Laplace comparison skipped: {comparison['skipped']}"]
    if comparison:
        from privopt.solve.location import comparison_table

        return ["", *comparison_table(comparison).splitlines()]
    return []


def _certificate_lines(cert: dict | None) -> list[str]:
    """The certificate of an answer: its lower bound and gap, or what it rests on."""
    if not cert:
        return []
    if cert.get("lower_bound") is None:
        return [f"certificate {cert['source']}"]
    return [
        f"certificate lower bound {_fmt(cert['lower_bound'], 12)}, relative gap "
        f"{_fmt(cert['relative_gap'], 3)} (tolerance {cert['tolerance']:g}; {cert['source']})"
    ]


def _closed_form_lines(checks: list[dict]) -> list[str]:
    """The papers' closed forms that apply, checked on the answer."""
    if not checks:
        return []
    lines = ["", "closed forms (the papers' statements that apply to this request)"]
    for c in checks:
        verdict = "OK" if c["passed"] else "FAILED"
        value = ""
        if c.get("expected") is not None:
            value = f": {_fmt(c['expected'], 12)}"
            if c.get("got") is not None:
                value += f", answer {_fmt(c['got'], 12)}"
        lines.append(f"  {c['statement']}{value}  {verdict}")
        lines.append(f"    {c['source']}; {c['conditions']}")
    return lines


def _write_mechanism(out: dict, path: str) -> None:
    """Write the mechanism of a solve atomically (format from the extension, checked before)."""
    ext = os.path.splitext(path)[1].lower()
    if ext == ".json":
        atomic_write(path, lambda fh: fh.write(_dumps(out) + "\n"), option="--out")
        return
    matrix = np.array(out["mechanism"], dtype=float)
    if ext == ".csv":

        def write_csv(fh) -> None:
            writer = csv.writer(fh)
            writer.writerow(["input", *out["outputs"]])
            for label, row in zip(out["inputs"], matrix, strict=True):
                writer.writerow([label, *(repr(float(v)) for v in row)])

        atomic_write(path, write_csv, newline="", option="--out")
    elif ext == ".npz":

        def write_npz(fh) -> None:
            np.savez(
                fh,
                mechanism=matrix,
                inputs=np.array(out["inputs"], dtype=str),
                outputs=np.array(out["outputs"], dtype=str),
            )

        atomic_write(path, write_npz, binary=True, option="--out")
    else:  # pragma: no cover - refused by check_output_path before solving
        raise InputError(f"unknown extension {ext!r}: use .json, .csv or .npz", "--out")


def _finish_solve(spec: ProblemSpec, out: dict, checks: list[dict], args, result=None) -> int:
    from privopt.solve.units import json_in_unit, result_in_unit

    unit = getattr(args, "unit", "nats")  # --unit: the levels shown, after the reference check
    if args.json:
        _print_json(json_in_unit(out, unit))
    else:
        shown = result_in_unit(result, unit) if result is not None else None
        print(_solve_text(spec, json_in_unit(out, unit), checks, shown))
    if out["status"] == "infeasible":
        quantity = out.get("least_achievable_quantity") or "value"
        least = out.get("least_achievable")
        message = out.get("message", "")
        hint = ""
        if least is not None and "least achievable" not in message:
            hint = f"; least achievable {quantity}: {_fmt(least, 12)}"
        _note(f"privopt: {spec.path}: infeasible: {message}{hint}")
        return _reference_exit(spec, checks, 1)
    if out["status"] == "time_limit":
        _note(f"privopt: {spec.path}: {out.get('message', 'time limit reached')}")
        return 3
    return _reference_exit(spec, checks, 0)


def _laplace_comparison(spec: ProblemSpec, result, time_limit: float | None = None) -> dict | None:
    """For a map solved under ``metric_dp``: the optimal answer beside the planar Laplace
    mechanism with and without the optimal remap (:func:`privopt.compare_with_laplace`), as
    plain values; ``None`` otherwise. A comparison that cannot be made (e.g. a distortion
    whose outputs are not the map's), or one the command's time limit leaves no time for
    (``time_limit``, counted from the command's start), is reported as
    ``{"skipped": reason}``."""
    if spec.location is None or spec.notion != "metric_dp" or result.mechanism is None:
        return None
    level = spec.epsilon if spec.mode == "epsilon" else result.epsilon
    if level is None or not math.isfinite(level) or level <= 0:
        return None
    if result.status == "time_limit" or _time_left_of(time_limit) == 0.0:
        # an extra beside the answer: not computed beyond the command's limit (on a
        # 20 × 20 map it measures the Laplace mechanisms' levels on every pair, 3 s)
        return {"skipped": "the time limit was reached"}
    from privopt.solve.location import compare_with_laplace

    try:
        found = compare_with_laplace(
            spec.location,
            level,
            result=result,
            metric=spec.options.get("metric"),
            distortion=spec.distortion,
        )
    except InputError as exc:
        return {"skipped": str(exc)}
    return found.to_dict()


def _plot_answer(spec: ProblemSpec, result, path: str, cell: str | None) -> str:
    """``solve --plot``: a map's heatmaps (prior, release law of ``cell``, expected loss per
    place), else the mechanism's matrix; saved atomically."""
    plotting = _plotting()
    if spec.location is not None and result.mechanism.matrix.shape == (
        spec.location.size,
        spec.location.n_outputs,
    ):
        place = cell if cell is not None else int(np.argmax(spec.prior.input_probs))
        fig = plotting.plot_location(
            spec.location,
            result,
            cell=place,
            panels=["prior", "release", "loss"],
            distortion=spec.distortion,
            title=spec.title,
        )
    else:
        fig = plotting.plot_mechanism(result, title=spec.title)
    return plotting.save_figure(fig, path, option="--plot")
