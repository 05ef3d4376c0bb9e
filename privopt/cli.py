"""The ``privopt`` command line (the README's "Command-line reference" documents it).

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
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import dataclasses
import json
import math
import os
import re
import signal
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from privopt._io import (
    atomic_stream,
    atomic_write,
    check_output_path,
    escape_text,
    same_output,
)
from privopt.errors import (
    InfeasibleError,
    InputError,
    PrivoptError,
    close_matches,
    did_you_mean,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without the import
if TYPE_CHECKING:  # pragma: no cover
    from privopt.files import ProblemSpec


# The problem-file layer imports the notions and cvxpy (about a second): it is imported on
# first use, so that ``privopt --help`` and argument errors answer at once.
def load_problem(*args, **kwargs):
    """:func:`privopt.files.load_problem`, imported on first use.

    Parameters
    ----------
    *args, **kwargs
        Passed on to :func:`privopt.files.load_problem`.

    Returns
    -------
    ProblemSpec
        The validated problem file.
    """
    from privopt.files import load_problem as load

    return load(*args, **kwargs)


def parse_problem(*args, **kwargs):
    """:func:`privopt.files.parse_problem`, imported on first use.

    Parameters
    ----------
    *args, **kwargs
        Passed on to :func:`privopt.files.parse_problem`.

    Returns
    -------
    ProblemSpec
        The validated problem.
    """
    from privopt.files import parse_problem as parse

    return parse(*args, **kwargs)


def load_mechanism(*args, **kwargs):
    """:func:`privopt.files.load_mechanism`, imported on first use.

    Parameters
    ----------
    *args, **kwargs
        Passed on to :func:`privopt.files.load_mechanism`.

    Returns
    -------
    Mechanism or structured mechanism
        The mechanism read from the file.
    """
    from privopt.files import load_mechanism as load

    return load(*args, **kwargs)


def check_reference(*args, **kwargs):
    """:func:`privopt.files.check_reference`, imported on first use.

    Parameters
    ----------
    *args, **kwargs
        Passed on to :func:`privopt.files.check_reference`.

    Returns
    -------
    list of dict
        One record ``{"key", "expected", "got", "ok"}`` per checked quantity.
    """
    from privopt.files import check_reference as check

    return check(*args, **kwargs)


__all__ = ["main", "build_parser", "DEMO_FIGURE", "MAX_CURVE_POINTS", "PLOT_FORMATS"]

#: Default file name of the demo's figure.
DEMO_FIGURE = "privopt-demo.png"
#: ε range of the demo's curves (START:STOP:COUNT).
DEMO_SWEEP = (0.0, 3.0, 31)
#: Largest mechanism printed in full in the human-readable output.
MAX_PRINT_ROWS = 16
MAX_PRINT_COLS = 10
#: Most points of one ``privopt curve`` run (COUNT × notions; each point is one solve) unless
#: ``--max-points`` allows more.
MAX_CURVE_POINTS = 10_000
#: ``curve --csv`` writes the rows computed so far to ``PATH.partial`` at least this often
#: (seconds of solving); the sweep then resumes from the next point (its warm start restarts),
#: but not before it has solved for :data:`CHECKPOINT_SETUP_FACTOR` times its set-up time.
CHECKPOINT_SECONDS = 5.0
CHECKPOINT_SETUP_FACTOR = 10.0
#: Figure formats of ``--plot`` (the extension decides).
PLOT_FORMATS = (".png", ".pdf", ".svg")
#: Mechanism formats of ``solve --out``.
MECHANISM_FORMATS = (".json", ".csv", ".npz")


# --- small helpers ---------------------------------------------------------------------------
def _json_safe(value):
    """Recursively turn numpy scalars into Python numbers and inf / nan into ``None``."""
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    if isinstance(value, np.ndarray):
        return _json_safe(value.tolist())
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        return value if math.isfinite(value) else None
    return value


_NUMERIC_ARRAY = re.compile(r"\[\s*((?:-?[0-9.eE+-]+|null)(?:,\s*(?:-?[0-9.eE+-]+|null))*)\s*\]")


def _dumps(obj) -> str:
    """Indented JSON with arrays of numbers kept on one line (matrix rows stay readable)."""
    text = json.dumps(_json_safe(obj), indent=2, allow_nan=False)

    def one_line(match: re.Match) -> str:
        return "[" + re.sub(r"\s+", "", match.group(1)).replace(",", ", ") + "]"

    return _NUMERIC_ARRAY.sub(one_line, text)


def _print_json(obj) -> None:
    sys.stdout.write(_dumps(obj) + "\n")


def _fmt(value, digits: int = 9) -> str:
    """A number for people: ``inf`` for an infinite level, ``—`` only for a missing value."""
    if value is None:
        return "—"
    if isinstance(value, (float, np.floating)):
        value = float(value)
        return f"{value:.{digits}g}" if math.isfinite(value) else str(value)
    return str(value)


def _fixed(value, decimals: int = 10) -> str:
    """Fixed decimals; ``inf`` / ``nan`` as such, ``—`` for a missing value."""
    if value is None:
        return "—"
    value = float(value)
    return f"{value:.{decimals}f}" if math.isfinite(value) else str(value)


def _lines(lines: Iterable[str]) -> str:
    """Join report lines, each with control characters escaped (text from files is untrusted:
    a title must not clear the screen or forge a line of the report)."""
    return "\n".join(escape_text(line) for line in lines)


def _note(message: str) -> None:
    """One line on stderr, control characters escaped."""
    print(escape_text(message), file=sys.stderr)


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
        renamed = InputError(body, "--solver")
        renamed.suggestions = exc.suggestions
        return renamed
    return None


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


# --- human-readable output -------------------------------------------------------------------
def _header(spec: ProblemSpec) -> list[str]:
    lines = []
    if spec.title:
        lines.append(spec.title)
    if spec.source:
        lines.append(f"  source: {spec.source}")
    lines.append(f"  file:   {spec.path}")
    return lines


def _matrix_lines(matrix: np.ndarray, inputs, outputs, corner: str = "y \\ u") -> list[str]:
    inputs = [escape_text(x) for x in inputs]  # escaped before the column widths are taken
    outputs = [escape_text(u) for u in outputs]
    n_rows, n_cols = matrix.shape
    rows = list(range(min(n_rows, MAX_PRINT_ROWS)))
    cols = list(range(min(n_cols, MAX_PRINT_COLS)))
    label_w = max([len(corner)] + [len(str(inputs[i])) for i in rows])
    width = max([9] + [len(str(outputs[j])) + 1 for j in cols])
    head = corner.ljust(label_w) + "".join(str(outputs[j]).rjust(width) for j in cols)
    if n_cols > len(cols):
        head += f"  … ({n_cols - len(cols)} more columns)"
    lines = ["  " + head]
    for i in rows:
        cells = "".join(f"{matrix[i, j]:.6f}".rjust(width) for j in cols)
        lines.append("  " + str(inputs[i]).ljust(label_w) + cells)
    if n_rows > len(rows):
        lines.append(f"  … ({n_rows - len(rows)} more rows; --json or --out give the full matrix)")
    return lines


def _leakage_lines(
    leakage: dict, asked: str | None, prior, neighbors, unit: str = "nats"
) -> list[str]:
    rel = neighbors or ("hamming" if getattr(prior, "is_database", False) else "all")
    if not isinstance(rel, str):
        rel = f"the file's {rel.n_pairs // 2} neighbour pairs"
    else:
        rel = "Hamming neighbours" if rel == "hamming" else "all pairs"
    lines = [f"leakage of this mechanism ({unit}; dp and identifiability on {rel})"]
    width = max(len(k) for k in leakage) if leakage else 10
    for name, value in leakage.items():
        mark = "  <- the asked notion" if name == asked else ""
        lines.append(f"  {name.ljust(width)}  {_fixed(value):>16}{mark}")
    return lines


def _reference_lines(spec: ProblemSpec, checks: list[dict]) -> list[str]:
    if not checks:
        return []
    ref = spec.reference
    tol = ref.get("tolerance", 1e-6)
    lines = [f"reference ({ref['what']})" if ref.get("what") else "reference"]
    for c in checks:
        verdict = "OK" if c["ok"] else "MISMATCH"
        exp, got = c["expected"], c["got"]
        if isinstance(exp, list):
            lines.append(f"  {c['key']}: expected {exp}, got {got}  {verdict}")
            continue
        diff = ""
        if isinstance(exp, (int, float)) and isinstance(got, (int, float)):
            if math.isfinite(exp) and math.isfinite(got):
                diff = f", |diff| {abs(got - exp):.2g} (tolerance {tol:g})"
        lines.append(
            f"  {c['key']}: expected {_fmt(exp, 12)}, got {_fmt(got, 12)}{diff}  {verdict}"
        )
    return lines


def _solve_text(spec: ProblemSpec, out: dict, checks: list[dict], result=None) -> str:
    """The report of ``privopt solve``; numbers from ``result`` (raw floats: an infinite level
    prints ``inf``) when given, else from the JSON object ``out``."""
    lines = _header(spec)
    notion = out["notion"]
    unit = out.get("unit", "nats")
    raw = result
    requested = dict(raw.requested) if raw is not None else out["requested"]
    if out.get("mode") == "max_distortion":
        request = f"least {notion} level subject to E[d] <= {_fmt(requested['max_distortion'])}"
    else:
        request = f"least E[d] subject to {notion} <= {_fmt(requested['epsilon'])} {unit}"
    lines += ["", f"request     {request}"]
    if out["status"] == "infeasible":
        lines.append("status      INFEASIBLE")
        lines.append(f"reason      {out.get('message', '')}")
        return _lines(lines + [""] + _reference_lines(spec, checks))
    solver = out.get("solver", {})
    timing = solver.get("solve_time_s")
    name = solver.get("name") or ""
    if name:
        shown = name + (f" ({timing:.3g} s)" if isinstance(timing, float) else "")
    else:  # stopped (e.g. by the time limit) before any method returned an answer
        tried = ", ".join(str(t) for t in solver.get("tried") or [])
        shown = "none finished" + (f" (tried: {tried})" if tried else "")
    lines.append(
        f"status      {out['status']}, verified: {'yes' if out['verified'] else 'NO'}   "
        f"solver: {shown}"
    )
    if out.get("line_search"):
        ls = out["line_search"]
        lines.append(
            f"line search {ls.get('solves')} solves, bracket [{_fmt(ls['bracket'][0])}, "
            f"{_fmt(ls['bracket'][1])}]"
        )
    lines += _certificate_lines(out.get("certificate"))
    if out.get("message"):
        lines.append(f"note        {out['message']}")
    level = raw.epsilon if raw is not None else out["epsilon"]
    distortion = raw.distortion if raw is not None else out["distortion"]
    if level is None:
        return _lines(lines + ["", "no feasible mechanism was found"])
    lines.append(f"level       {notion} = {_fixed(level, 12)} {unit}")
    lines.append(f"distortion  E[d] = {_fixed(distortion, 12)}")
    # only a certified answer is called optimal (a time limit hands over the best feasible one)
    kind = (
        "optimal mechanism" if out["status"] == "optimal" else "mechanism (not certified optimal)"
    )
    if out.get("mechanism") is None and out.get("structured_mechanism"):
        lines += ["", f"{kind}, held in structured form (too large to write out)"]
        lines += _structure_lines(out["structured_mechanism"])
    elif out.get("mechanism") is None:
        lines += ["", "no dense mechanism to print"]
    else:
        lines += ["", f"{kind} p(u|y)  (rows: inputs y, columns: outputs u)"]
        lines += _matrix_lines(np.array(out["mechanism"]), out["inputs"], out["outputs"])
    leakage = dict(raw.leakage) if raw is not None else out.get("leakage")
    if leakage:
        lines += [""] + _leakage_lines(leakage, notion, spec.prior, spec.neighbors, unit)
    lines += _closed_form_lines(out.get("closed_form") or [])
    comparison = out.get("laplace_comparison")
    if comparison and "skipped" in comparison:
        lines += ["", f"planar Laplace comparison skipped: {comparison['skipped']}"]
    elif comparison:
        from privopt.solve.location import comparison_table

        lines += ["", *comparison_table(comparison).splitlines()]
    notes = out.get("notes") or {}
    if notes:
        lines += ["", "notes"]
        lines += [f"  {key}: {_fmt(value, 9)}" for key, value in notes.items()]
    if checks:
        lines += [""] + _reference_lines(spec, checks)
    return _lines(lines)


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


# --- commands --------------------------------------------------------------------------------
def _solve_spec(
    spec: ProblemSpec, solver: str | None, time_limit: float | None = None
) -> tuple[dict, list[dict], Any]:
    """Solve the file's request: (JSON object, reference checks, the raw result)."""
    status = _solve_progress()
    try:
        with _about(spec.path):
            result = spec.solve(
                solver=solver,
                raise_on_infeasible=False,
                time_limit=time_limit,
                on_progress=status,
            )
    finally:
        if status is not None:
            status.close()
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


def _write_mechanism(out: dict, path: str) -> None:
    """Write the mechanism of a solve atomically (format from the extension, checked before)."""
    ext = os.path.splitext(path)[1].lower()
    if ext == ".json":
        atomic_write(path, lambda fh: fh.write(_dumps(out) + "\n"), option="--out")
        return
    matrix = np.array(out["mechanism"], dtype=float)
    if ext == ".json":
        atomic_write(path, lambda fh: fh.write(_dumps(out) + "\n"), option="--out")
    elif ext == ".csv":

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
    return _reference_exit(spec, checks, 1 if out["status"] == "infeasible" else 0)


#: Largest number of inputs whose mechanism --out writes densely (.csv, .npz); above, a
#: structured answer is written as its JSON description only.
MAX_DENSE_OUTPUT = 4096
#: Exit code of an answer that contradicts the file's ``[reference]``.
EXIT_REFERENCE_MISMATCH = 4


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


def cmd_solve(args: argparse.Namespace) -> int:
    """``privopt solve``: solve a file's request, print the report or JSON, write ``--out``.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line (:func:`build_parser`).

    Returns
    -------
    int
        The exit code: 0 solved, 1 infeasible (errors are raised; :func:`main` maps them).
    """
    if args.file is None:
        spec = _load_demo()
        if not args.json:
            print("(no FILE given: solving the built-in demo problem; `privopt demo` also draws")
            print(" its privacy–distortion figure)\n")
    else:
        spec = load_problem(args.file)
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
    if cell is not None:
        if not plot:
            raise InputError("--cell chooses the place drawn by --plot; give --plot too", "--cell")
        if spec.location is None:
            raise InputError("--cell needs a map ([prior.grid] or [prior.points])", "--cell")
        if cell not in spec.location.labels:
            shown = ", ".join(spec.location.labels[:6])
            raise InputError(f"unknown place {cell!r}; places are labelled {shown}, …", "--cell")
    with _options_named(args):
        out, checks, result = _solve_spec(spec, args.solver, args.time_limit)
    comparison = _laplace_comparison(spec, result)
    if comparison is not None:
        out["laplace_comparison"] = comparison
    has_answer = out.get("mechanism") is not None or out.get("structured_mechanism")
    if args.out and has_answer and (out.get("mechanism") is not None or ext == ".json"):
        _write_mechanism(out, args.out)
        if not args.json:
            print(f"\nwrote the mechanism to {escape_text(args.out)}")
    if plot and result.mechanism is not None:
        figure = _plot_answer(spec, result, plot, cell)
        if not args.json:
            print(f"\nwrote the figure to {escape_text(figure)}")
    elif plot:
        _note(f"privopt: {spec.path}: no dense mechanism to draw; --plot wrote nothing")
    return _finish_solve(spec, out, checks, args, result)


def _laplace_comparison(spec: ProblemSpec, result) -> dict | None:
    """For a map solved under ``metric_dp``: the optimal answer beside the planar Laplace
    mechanism with and without the optimal remap (:func:`privopt.compare_with_laplace`), as
    plain values; ``None`` otherwise. A comparison that cannot be made (e.g. a distortion
    whose outputs are not the map's) is reported as ``{"skipped": reason}``."""
    if spec.location is None or spec.notion != "metric_dp" or result.mechanism is None:
        return None
    level = spec.epsilon if spec.mode == "epsilon" else result.epsilon
    if level is None or not math.isfinite(level) or level <= 0:
        return None
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
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise _NoMatplotlib(
            "figures need matplotlib, which is not installed: pip install 'privopt[plot]'",
            "--plot",
        ) from None
    from privopt import plotting

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
    deadline=None,
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

    def time_left() -> float | None:
        return None if deadline is None or not deadline.limited else max(deadline.remaining(), 1e-6)

    if on_records is None and stop is None:  # one warm sweep (the demo, curve without --csv)
        with _about(spec.path):
            return sweep(
                spec.prior,
                spec.distortion,
                notion,
                solver=solver or spec.solver,
                progress=_progress(name),
                time_limit=time_left(),
                **{key: points},
                **spec.design_kwargs(notion),
            )
    stop = stop if stop is not None else {"stop": False}
    bar = _progress_bar(name, len(points))
    records: list[dict] = []
    results: list = []
    done = 0
    try:
        while done < len(points) and not stop["stop"]:
            gate = _Gate(stop, bar)
            with _about(spec.path):
                curve = sweep(
                    spec.prior,
                    spec.distortion,
                    notion,
                    solver=solver or spec.solver,
                    progress=gate,
                    time_limit=time_left(),
                    **{key: points[done:]},
                    **spec.design_kwargs(notion),
                )
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


def _curve_records(curves) -> list[dict]:
    return [dict(r) for curve in curves for r in curve.records]


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


def _csv_value(value) -> Any:
    """A CSV cell: empty for a missing value, ``inf`` for an infinite one."""
    if value is None:
        return ""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (float, np.floating)):
        return float(value)  # str(inf) == "inf", read back by float() and pandas
    if isinstance(value, np.integer):
        return int(value)
    return value


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


class _NoMatplotlib(InputError):
    """matplotlib is not installed (it is the optional extra ``privopt[plot]``)."""


def _plot(spec: ProblemSpec, curves, path: str, highlight=None) -> str:
    """Draw the curves (title: the sweep, not the file's single request) and save atomically."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise _NoMatplotlib(
            "figures need matplotlib, which is not installed: pip install 'privopt[plot]'",
            "--plot",
        ) from None
    from privopt import plotting

    fig = plotting.plot_curves(
        curves,
        prior=spec.location if spec.location is not None else spec.prior,  # a map: named so
        distortion=spec.distortion,
        neighbors=spec.neighbors,
        highlight=highlight,
    )
    return plotting.save_figure(fig, path, option="--plot")


def cmd_curve(args: argparse.Namespace) -> int:
    """``privopt curve``: sweep levels or budgets; stream ``--csv``, draw ``--plot``.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line (:func:`build_parser`).

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
    if banded and text.count(":") == 1:
        return _curve_banded(args, spec, mode, option, _parse_span(text, option))
    if args.max_points is None:
        args.max_points = MAX_CURVE_POINTS
    points = _parse_range(text, option, args.max_points)
    if banded:
        return _curve_banded(args, spec, mode, option, points)
    notions = _curve_notions(args, spec)
    if len(points) * len(notions) > args.max_points:
        total, what = len(points) * len(notions), f"points ({len(points)} × {len(notions)} notions)"
        raise InputError(_too_many_points(total, args.max_points, what), option)
    if args.plot:
        check_output_path(args.plot, "--plot", extensions=PLOT_FORMATS, inputs=[args.file])
    if args.csv:
        check_output_path(args.csv, "--csv", inputs=[args.file])
        if args.plot and same_output(args.csv, args.plot):
            raise InputError(f"{args.csv!r} is also the --plot file; give two paths", "--csv")
    unit = getattr(args, "unit", "nats")
    stream = _CsvStream(args.csv, mode, unit) if args.csv else None
    deadline = _deadline(args.time_limit, spec.time_limit)
    try:
        with _stop_after_point_on_ctrl_c(stream is not None) as stop, _options_named(args):
            curves = [
                _run_sweep(
                    spec,
                    notion,
                    mode,
                    points,
                    args.solver,
                    on_records=(lambda rs: stream.write(_records_in(rs, mode, unit)))
                    if stream
                    else None,
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
    records = _curve_records(curves)
    if args.plot:  # the figure in the unit of the table (--unit)
        _plot(spec, [_curve_in(c, mode, unit) for c in curves], args.plot)
    if args.json:
        _print_json(_records_in(records, mode, unit))
    else:
        print(_curve_text(spec, curves, mode, unit))
        for what, path in (("table", args.csv), ("figure", args.plot)):
            if path:
                print(f"\nwrote the {what} to {escape_text(path)}")
    code = 0
    errors = [r for r in records if r.get("status") == "error"]
    if errors:
        _note(f"privopt: {spec.path}: {len(errors)} point(s) failed; first: {errors[0]['message']}")
        code = 3
    if _note_time_limit(spec.path, records):
        code = 3
    return code


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


def _curve_banded(args: argparse.Namespace, spec, mode: str, option: str, given) -> int:
    """``privopt curve --band``: the curve of each notion with its certified band, chosen
    adaptively on a range ``(lo, hi)`` or over given points; the table (points, then the
    band's rows), JSON, figure and a summary of each band."""
    from privopt.notions import get_notion
    from privopt.solve import sweep
    from privopt.solve.curve_sweep import DEFAULT_MAX_POINTS

    tolerance: dict = {}
    if args.band is not None:
        tolerance["band"] = _parse_band(args.band, "--band")
    else:
        tolerance["band_abs"] = _parse_band(args.band_abs, "--band-abs")
    notions = _curve_notions(args, spec)
    ranged = isinstance(given, tuple)
    if ranged:
        key = "epsilon_range" if mode == "epsilon" else "max_distortion_range"
        budget = args.max_points if args.max_points is not None else DEFAULT_MAX_POINTS
        if budget < 2:
            raise InputError(f"a range needs at least 2 points, got {budget}", "--max-points")
        extra = {key: given, "max_points": budget}
    else:
        extra = {"epsilons" if mode == "epsilon" else "max_distortions": given}
        if len(given) * len(notions) > args.max_points:
            what = f"points ({len(given)} × {len(notions)} notions)"
            raise InputError(
                _too_many_points(len(given) * len(notions), args.max_points, what), option
            )
    if args.plot:
        check_output_path(args.plot, "--plot", extensions=PLOT_FORMATS, inputs=[args.file])
    if args.csv:
        check_output_path(args.csv, "--csv", inputs=[args.file])
        if args.plot and same_output(args.csv, args.plot):
            raise InputError(f"{args.csv!r} is also the --plot file; give two paths", "--csv")
    unit = getattr(args, "unit", "nats")  # of the output; levels are given in nats
    deadline = _deadline(args.time_limit, spec.time_limit)
    curves = []
    with _options_named(args):
        for notion in notions:
            remaining = None if not deadline.limited else max(deadline.remaining(), 1e-6)
            with _about(spec.path), warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the summary below says where it is wide
                curves.append(
                    sweep(
                        spec.prior,
                        spec.distortion,
                        notion,
                        solver=args.solver or spec.solver,
                        time_limit=remaining,
                        **tolerance,
                        **extra,
                        **spec.design_kwargs(get_notion(notion).name),
                    )
                )
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
        for what, path in (("table", args.csv), ("figure", args.plot)):
            if path:
                print(f"\nwrote the {what} to {escape_text(path)}")
    for curve in shown:
        if not curve.band.met and curve.band.stopped:
            _note(f"privopt: {spec.path}: {_band_text(curve).strip()}")
    code = 0
    errors = [r for r in records if r.get("status") == "error"]
    if errors:
        _note(f"privopt: {spec.path}: {len(errors)} point(s) failed; first: {errors[0]['message']}")
        code = 3
    if _note_time_limit(spec.path, records):
        code = 3
    return code


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
        raise InputError(str(exc).split(": ", 1)[-1], "--notions") from None


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


def _optioned_levels(spec: ProblemSpec, matrix) -> dict[str, float]:
    """The levels of the notions that take options, where the file gives them all
    (e.g. ``robust_pml`` with ``[privacy] priors``)."""
    from privopt.notions import get_notion, notion_names

    out = {}
    for name in notion_names():
        notion = get_notion(name)
        declared = [o.name for o in notion.options]
        if not declared or not all(o.name in spec.options for o in notion.options if o.required):
            continue
        given = {k: spec.options[k] for k in declared if k in spec.options}
        if not given:
            continue
        neighbors = spec.neighbors if notion.uses_neighbors else None
        out[name] = float(notion.measure(spec.prior, matrix, neighbors, **given))
    return out


def _audit_structured(spec: ProblemSpec, mechanism) -> dict:
    """The audit of a mechanism held in structured form (``solve --out x.json`` of a large
    answer): the leakage report computed on the structure, nothing of the full size built."""
    with _about(spec.path):
        leakage = mechanism.leakage(spec.prior)
    out: dict[str, Any] = {
        "leakage": leakage,
        "distortion": None,
        "structured_mechanism": mechanism.describe(),
        "file": spec.path,
    }
    if spec.notion is not None:
        out["notion"] = spec.notion
        out["epsilon"] = leakage.get(spec.notion)
    return out


def _paper_audits(spec: ProblemSpec, matrix) -> dict[str, Any]:
    """The audits beyond the leakage report: information measures always, the tail and event
    levels at ``[privacy] delta``, the least δ at ``[privacy] epsilon``."""
    from privopt import disclosure, f_information, guarantees, measures, persuasive

    prior = spec.prior
    out: dict[str, Any] = {
        "information": {
            "total_variation": f_information.total_variation_privacy(prior, matrix),
            "chi_square": f_information.chi_square_information(prior, matrix),
            "expected_pml": f_information.expected_pml(prior, matrix),
            "min_entropy": disclosure.min_entropy(prior.secret_probs),
            "singles_out": bool(disclosure.singles_out(prior, matrix)),
        }
    }
    if spec.delta is not None:
        tail: dict[str, Any] = {
            "delta": spec.delta,
            "pml_tail": measures.pml_tail_level(prior, matrix, spec.delta),
            "eml": measures.eml_level(prior, matrix, spec.delta),
        }
        if spec.delta < 1:
            tail["approximate_max_information"] = f_information.approximate_max_information(
                prior, matrix, spec.delta
            )
        if prior.observation is None:  # probabilistic DP is about the mechanism's own rows
            from privopt.validation import resolve_neighbors

            rel = resolve_neighbors(prior, spec.neighbors)
            tail["probabilistic_dp"] = persuasive.probabilistic_dp_level(
                matrix, spec.delta, rel.restricted(np.flatnonzero(prior.secret_probs > 0))
            )
        out["tail"] = tail
    priors = spec.options.get("priors")
    if isinstance(priors, list) and spec.options.get("about", "secret") == "secret":
        # the PML supremum over the convex hull of the listed priors (robust_pml's class)
        out["information"]["robust_pml_hull"] = measures.robust_pml_hull_level(
            prior, matrix, priors
        )
    if spec.epsilon is not None and math.isfinite(spec.epsilon):
        out["least_delta"] = {
            "epsilon": spec.epsilon,
            "pml_tail": guarantees.pml_least_delta(prior, matrix, spec.epsilon),
            "eml": guarantees.eml_least_delta(prior, matrix, spec.epsilon),
        }
    return out


def _paper_audit_lines(out: dict) -> list[str]:
    unit = out.get("unit", "nats")
    lines = ["", f"information measures (levels in {unit}; total variation and χ² have no unit)"]
    for key, value in out["information"].items():
        shown = ("yes" if value else "no") if isinstance(value, bool) else _fmt(value, 12)
        lines.append(f"  {key:<28}{shown}")
    if "tail" in out:
        lines += ["", f"tail and event audits at δ = {_fmt(out['tail']['delta'], 6)} ({unit})"]
        lines += [f"  {k:<28}{_fmt(v, 12)}" for k, v in out["tail"].items() if k != "delta"]
    if "least_delta" in out:
        lines += ["", f"least δ at ε = {_fmt(out['least_delta']['epsilon'], 6)} {unit}"]
        lines += [
            f"  {k:<28}{_fmt(v, 12)}" for k, v in out["least_delta"].items() if k != "epsilon"
        ]
    return lines


def _audit(spec: ProblemSpec, mechanism) -> dict:
    from privopt import measures
    from privopt.solve import leakage_report

    with _about(spec.path):
        matrix = mechanism.matrix
        leakage = leakage_report(spec.prior, matrix, spec.neighbors)
        leakage.update(_optioned_levels(spec, matrix))
        out: dict[str, Any] = {
            "leakage": leakage,
            "distortion": (
                measures.expected_distortion(spec.prior, matrix, spec.distortion)
                if spec.distortion is not None
                else None
            ),
            "pml_per_output": measures.pml_per_output(spec.prior, matrix).tolist(),
            "mechanism": matrix.tolist(),
            "inputs": list(mechanism.input_labels),
            "outputs": list(mechanism.output_labels),
            "file": spec.path,
        }
        if spec.notion is not None:
            out["notion"] = spec.notion
            out["epsilon"] = leakage.get(spec.notion)
        out.update(_paper_audits(spec, matrix))
    return out


def _composition_levels(spec: ProblemSpec) -> dict:
    """The PML levels of the stages of ``[composition]`` and the papers' bound on the joint
    release ([Saeidian-PML]: Theorem 4(1) for adaptive and parallel releases, the
    post-processing inequality of Lemma 1 for ``then``)."""
    from privopt import measures

    comp = spec.composition
    first = comp["first"]
    if comp["kind"] == "then":
        eps1 = measures.pml_level(spec.prior, first.matrix)
        return {
            "kind": "then",
            "first": eps1,
            "bound": eps1,
            "joint": measures.pml_level(spec.prior, comp["mechanism"].matrix),
            "theorem": "post-processing: ℓ(X→z) ≤ max_y ℓ(X→y) (Saeidian et al. 2023, Lemma 1)",
        }
    second = comp["second"]
    if comp["kind"] == "parallel":
        second = [second] * first.n_outputs
    levels = measures.adaptive_composition_levels(
        spec.prior, first.matrix, [s.matrix for s in second]
    )
    levels["kind"] = comp["kind"]
    levels["theorem"] = (
        "ε₁-PML then ε₂-PML given y gives (ε₁+ε₂)-PML (Saeidian et al. 2023, Theorem 4(1))"
    )
    return levels


def _composition_lines(comp: dict) -> list[str]:
    lines = [f"composition ({comp['kind']})"]
    lines.append(f"  first stage PML level           {_fmt(comp['first'], 12)}")
    if "second" in comp:
        lines.append(f"  second stage PML level (max_y)  {_fmt(comp['second'], 12)}")
    lines.append(f"  bound on the joint release      {_fmt(comp['bound'], 12)}")
    holds = "holds" if comp["joint"] <= comp["bound"] + 1e-9 else "VIOLATED"
    lines.append(f"  PML level of the joint release  {_fmt(comp['joint'], 12)}  ({holds})")
    lines.append(f"  {comp['theorem']}")
    return lines


def cmd_audit(args: argparse.Namespace) -> int:
    """``privopt audit``: measure every notion on a given mechanism.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line (:func:`build_parser`).

    Returns
    -------
    int
        The exit code: 0, or 4 when the audit contradicts the file's ``[reference]``.
    """
    spec = load_problem(args.file, "audit" if args.mechanism is None else "any")
    if args.mechanism is not None:
        mech = load_mechanism(args.mechanism)
        if hasattr(mech, "describe"):  # held in structured form
            return _finish_structured_audit(spec, mech, args)
        if mech.n_inputs != spec.prior.n_inputs:
            raise InputError(
                f"has {mech.n_inputs} rows but the prior of {spec.path} has "
                f"{spec.prior.n_inputs} inputs",
                args.mechanism,
            )
        if spec.distortion is not None and spec.distortion.n_outputs != mech.n_outputs:
            raise InputError(
                f"has {mech.n_outputs} outputs but the distortion of {spec.path} has "
                f"{spec.distortion.n_outputs}",
                args.mechanism,
            )
    else:
        mech = spec.mechanism
    out = _audit(spec, mech)
    if spec.composition is not None and args.mechanism is None:
        with _about(spec.path):
            out["composition"] = _composition_levels(spec)
    checks = check_reference(spec.reference, out) if spec.reference else []
    if checks:
        out["reference_check"] = {"ok": all(c["ok"] for c in checks), "checks": checks}
    from privopt.solve.units import json_in_unit

    out = json_in_unit(out, args.unit)  # --unit: the levels shown, after the reference check
    if args.json:
        _print_json(out)
        return _reference_exit(spec, checks, 0)
    lines = _header(spec) + ["", "mechanism p(u|y)  (rows: inputs y, columns: outputs u)"]
    lines += _matrix_lines(mech.matrix, out["inputs"], out["outputs"])
    if "composition" in out:
        lines += [""] + _composition_lines(out["composition"])
    leakage_lines = _leakage_lines(
        out["leakage"], spec.notion, spec.prior, spec.neighbors, args.unit
    )
    lines += [""] + leakage_lines
    lines += ["", f"PML per output ℓ(X→u) ({args.unit})"]
    lines += [
        f"  {escape_text(u):<12}{_fmt(v, 12)}"
        for u, v in zip(out["outputs"], out["pml_per_output"], strict=True)
    ]
    lines += _paper_audit_lines(out)
    if out["distortion"] is not None:
        lines += ["", f"distortion  E[d] = {_fmt(out['distortion'], 12)}"]
    if checks:
        lines += [""] + _reference_lines(spec, checks)
    print(_lines(lines))
    return _reference_exit(spec, checks, 0)


def _finish_structured_audit(spec: ProblemSpec, mech, args) -> int:
    if mech.shape[0] != spec.prior.n_inputs:
        raise InputError(
            f"is a mechanism on {mech.shape[0]} inputs but the prior of {spec.path} has "
            f"{spec.prior.n_inputs}",
            args.mechanism,
        )
    from privopt.solve.units import json_in_unit

    out = _audit_structured(spec, mech)
    checks = check_reference(spec.reference, out) if spec.reference else []
    out = json_in_unit(out, args.unit)
    if args.json:
        _print_json(out)
        return _reference_exit(spec, checks, 0)
    lines = _header(spec) + ["", f"mechanism held in structured form ({mech!r})"]
    lines += _structure_lines(out["structured_mechanism"])
    leakage_lines = _leakage_lines(
        out["leakage"], spec.notion, spec.prior, spec.neighbors, args.unit
    )
    lines += [""] + leakage_lines
    if checks:
        lines += [""] + _reference_lines(spec, checks)
    print(_lines(lines))
    return _reference_exit(spec, checks, 0)


def _structure_lines(desc: dict) -> list[str]:
    """A structured mechanism's rule and its generating data (row kernel or first row)."""
    lines = [f"  rule: {desc.get('rule', desc['kind'])}"]
    if "kernel" in desc:
        kernel = np.array(desc["kernel"])
        labels = [str(i) for i in range(kernel.shape[0])]
        lines += _matrix_lines(kernel, labels, labels, corner="x_i \\ y_i")
    elif "f" in desc:
        f = np.array(desc["f"])
        lines.append(
            "  f = ["
            + ", ".join(f"{v:.6g}" for v in f[:MAX_PRINT_COLS])
            + (", …" if f.size > MAX_PRINT_COLS else "")
            + "]"
        )
    return lines


def cmd_demo(args: argparse.Namespace) -> int:
    """``privopt demo``: solve the built-in problem and draw its figure.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line (:func:`build_parser`).

    Returns
    -------
    int
        The exit code: 0 solved, 1 infeasible, 3 the solve or a curve point hit the time limit
        (what was computed is still reported and drawn).
    """
    start = time.perf_counter()
    spec = _load_demo()
    target = None
    if not args.no_plot:  # the figure's folder is made and checked before any solving
        out_dir = args.out_dir or "."
        try:
            os.makedirs(out_dir, exist_ok=True)
        except OSError as exc:
            raise InputError(
                f"cannot create {out_dir!r}: {exc.strerror or exc}", "--out-dir"
            ) from None
        target = check_output_path(os.path.join(out_dir, DEMO_FIGURE), "--out-dir")
    with _options_named(args):
        out, checks, result = _solve_spec(spec, args.solver, args.time_limit)
    figure = None
    curves = []
    if target is not None:
        start_eps, stop_eps, count = DEMO_SWEEP
        points = [float(v) for v in np.linspace(start_eps, stop_eps, count)]
        notions = ["identifiability", "dp"]
        deadline = _deadline(args.time_limit, spec.time_limit)
        with _options_named(args):
            curves = [
                _run_sweep(spec, n, "epsilon", points, args.solver, deadline=deadline)
                for n in notions
            ]
        highlight = None
        if out["status"] != "infeasible" and out.get("epsilon") is not None:
            highlight = (
                out["epsilon"],
                out["distortion"],
                f"this design: {out['notion']}, $\\varepsilon = {_fmt(out['epsilon'], 4)}$, "
                f"$E[d] = {_fmt(out['distortion'], 6)}$",
            )
        try:
            figure = _plot(spec, curves, target, highlight)
        except _NoMatplotlib as exc:
            _note(f"privopt: warning: no figure: {exc}")
    elapsed = time.perf_counter() - start
    records = _curve_records(curves)
    timed_out = sum(r.get("status") == "time_limit" for r in records)
    if args.json:
        out["figure"] = figure
        out["curves"] = records
        _print_json(out)
    else:
        print(_solve_text(spec, out, checks, result))
        if figure:
            print(
                f"\nprivacy–distortion curves of identifiability and dp for ε in "
                f"[{DEMO_SWEEP[0]:g}, {DEMO_SWEEP[1]:g}] with the closed forms of Wang et al.:"
            )
            print(f"  wrote {escape_text(figure)}")
        if timed_out:
            print(
                f"  {timed_out} of {len(records)} curve points hit the time limit and are left "
                "out of the figure"
            )
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


def cmd_notions(args: argparse.Namespace) -> int:
    """``privopt notions``: list the privacy notions.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line (:func:`build_parser`).

    Returns
    -------
    int
        The exit code: 0.
    """
    from privopt.notions import NOTIONS, notion_names

    rows = []
    for name in notion_names():
        notion = NOTIONS[name]
        aliases = [k for k, v in NOTIONS.items() if v is notion and k != name]
        rows.append(
            {
                "name": name,
                "aliases": aliases,
                "convexity": notion.convexity,
                "uses_neighbors": notion.uses_neighbors,
                "source": notion.source,
                "options": {o.name: o.description for o in notion.options},
            }
        )
    if args.json:
        _print_json(rows)
    else:
        for r in rows:
            alias = f" (alias {', '.join(r['aliases'])})" if r["aliases"] else ""
            print(f"{r['name']:<26}{r['convexity']:<18}{r['source']}{alias}")
            for key, text in r["options"].items():
                print(f"{'':<4}[privacy] {key}: {text}")
        print(
            "\nnot designable (non-convex; audited by privopt audit with delta): "
            "pml_tail, eml, probabilistic_dp, persuasive_privacy"
        )
    return 0


def cmd_solvers(args: argparse.Namespace) -> int:
    """``privopt solvers``: list the solvers and fast paths.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line (:func:`build_parser`).

    Returns
    -------
    int
        The exit code: 0.
    """
    from privopt.methods import METHODS, method_names
    from privopt.solve.method_notions import method_notions, notions_text

    solves = method_notions()
    rows = [
        {
            "name": name,
            "family": METHODS[name].family,
            "description": METHODS[name].description,
            "notions": solves.get(name, {}),
        }
        for name in method_names()
    ]
    if args.json:
        _print_json(rows)
    else:
        width = max(len(r["name"]) for r in rows)
        for r in rows:
            print(f"{r['name']:<{width}}  {r['description']}")
            print(f"{'':<{width}}  solves: {notions_text(r['notions'])}")
        print("\nNames are matched case-insensitively; privopt picks methods itself when none is")
        print("named, and falls back to the next one when a method fails or cannot certify.")
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    """``privopt compare``: run every applicable method on a file's request with a time limit
    each; print the table (time, memory, status, certified gap, agreement with the best
    certified answer); write ``--csv`` and ``--plot`` (:mod:`privopt.comparison`).

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line (:func:`build_parser`).

    Returns
    -------
    int
        0 when some method gave a verified answer, 1 when every method found the request
        infeasible, 3 otherwise.
    """
    from privopt.comparison import DEFAULT_TIME_LIMIT, compare

    spec = load_problem(args.file)
    if spec.notion is None or spec.mode is None or spec.distortion is None:
        raise InputError(
            "the file has no design request (needs [distortion] and [privacy] with a notion "
            "and epsilon or max_distortion)",
            "privacy",
        )
    if args.plot:
        check_output_path(args.plot, "--plot", extensions=PLOT_FORMATS, inputs=[args.file])
    if args.csv:
        check_output_path(args.csv, "--csv", extensions=(".csv",), inputs=[args.file])
        if args.plot and same_output(args.csv, args.plot):
            raise InputError(f"{args.csv!r} is also the --plot file; give two paths", "--csv")
    methods = None
    if args.methods:
        methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    limit = args.time_limit if args.time_limit is not None else spec.time_limit
    limit = DEFAULT_TIME_LIMIT if limit is None else limit

    def said(row: dict) -> None:
        _note(f"privopt compare: {row['method']}: {row['status']} in {row['seconds']:.3g} s")

    try:
        with _about(spec.path):
            table = compare(
                spec.location if spec.location is not None else spec.prior,
                spec.distortion,
                spec.notion,
                epsilon=spec.epsilon,
                max_distortion=spec.max_distortion,
                methods=methods,
                time_limit=limit,
                on_method=None if args.json else said,
                progress=False,
                **spec.design_kwargs(),
            )
    except InputError as exc:
        if exc.field == "methods":  # the command line's option, not a key of the file
            renamed = InputError(str(exc).split("methods: ", 1)[-1], "--methods")
            renamed.suggestions = exc.suggestions
            raise renamed from None
        raise
    if args.csv:
        table.to_csv(args.csv, option="--csv")
    if args.plot:
        from privopt import plotting

        plotting.save_figure(table.plot(), args.plot, option="--plot")
    if args.json:
        _print_json({"file": spec.path, "title": spec.title, **table.to_dict()})
    else:
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
        for what, path in (("table", args.csv), ("figure", args.plot)):
            if path:
                print(f"wrote the {what} to {escape_text(path)}")
    statuses = [row["status"] for row in table.rows]
    if any(row.get("verified") for row in table.rows):
        return 0
    if statuses and all(status == "infeasible" for status in statuses):
        return 1
    return 3


def cmd_batch(args: argparse.Namespace) -> int:
    """``privopt batch``: solve problem files into a results table, resumably
    (:mod:`privopt.batch_files`).

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line (:func:`build_parser`).

    Returns
    -------
    int
        The exit code: 0 every problem has a result, 3 some were recorded with an error.
    """
    from privopt.batch_files import print_line, run_batch

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


def _deadline(option: float | None, from_file: float | None):
    """The deadline of a command: ``--time-limit``, else the file's ``[solver] time_limit``."""
    from privopt.methods.base import Deadline

    return Deadline(option if option is not None else from_file)


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


def _unit_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--unit",
        choices=("nats", "bits"),
        default="nats",
        help="unit of the levels shown (default nats; the file's levels are always nats)",
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

    p = sub.add_parser(
        "solve",
        parents=[common],
        help="solve a problem file (no FILE: the built-in demo problem)",
        description="Solve the design request of a problem file and verify the answer.",
    )
    p.add_argument("file", nargs="?", metavar="FILE", help="problem file (.toml)")
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    p.add_argument(
        "--solver",
        metavar="NAME",
        help="a cvxpy solver or privopt fast path, see `privopt solvers` (overrides [solver] name)",
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
    p.set_defaults(func=cmd_solve)

    p = sub.add_parser(
        "curve",
        parents=[common],
        help="sweep the privacy-distortion curve of a problem file",
        description="Sweep the privacy level or the distortion budget for the file's prior, "
        "distortion and notion (or --notions).",
    )
    p.add_argument("file", metavar="FILE", help="problem file (.toml)")
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
    p.add_argument("--json", action="store_true", help="print a JSON array on stdout")
    p.add_argument("--plot", metavar="PATH", help="write a figure (.png, .pdf or .svg)")
    p.add_argument(
        "--solver", metavar="NAME", help="a cvxpy solver or privopt fast path (privopt solvers)"
    )
    _time_limit_option(
        p,
        "for the whole curve",
        "(the points not reached get status time_limit; exit 3 when any did)",
    )
    _memory_option(p)
    _unit_option(p)
    p.set_defaults(func=cmd_curve)

    p = sub.add_parser(
        "audit",
        parents=[common],
        help="measure every notion on a given mechanism",
        description="Measure the leakage of the [mechanism] of a file (or --mechanism).",
    )
    p.add_argument("file", metavar="FILE", help="file with [prior], [mechanism], [distortion]")
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    p.add_argument(
        "--mechanism",
        metavar="PATH",
        help="audit this mechanism (.json, .csv, .npz as written by solve --out) instead",
    )
    _unit_option(p)
    p.set_defaults(func=cmd_audit)

    p = sub.add_parser(
        "demo",
        parents=[common],
        help="solve the built-in demo problem and draw its privacy-distortion figure",
        description="Solve privopt/data/demo.toml, print the mechanism and its audit, and "
        f"write the figure {DEMO_FIGURE}.",
    )
    p.add_argument("--out-dir", metavar="DIR", help=f"where to write {DEMO_FIGURE} (default: .)")
    p.add_argument("--no-plot", action="store_true", help="do not draw the figure")
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    p.add_argument(
        "--solver", metavar="NAME", help="a cvxpy solver or privopt fast path (privopt solvers)"
    )
    _time_limit_option(
        p,
        "for the solve and again for the curves",
        "(status time_limit; exit 3 when the solve or any curve point hit it)",
    )
    _memory_option(p)
    p.set_defaults(func=cmd_demo)

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
    p.add_argument(
        "--solver", metavar="NAME", help="a cvxpy solver or privopt fast path (privopt solvers)"
    )
    p.add_argument(
        "--retry-errors", action="store_true", help="solve again the problems recorded as errors"
    )
    _time_limit_option(
        p,
        "for each problem",
        "(recorded with status time_limit; the batch goes on and exits 0)",
    )
    _memory_option(p)
    p.set_defaults(func=cmd_batch)

    p = sub.add_parser(
        "compare",
        parents=[common],
        help="run every method that applies on a file's request and compare them",
        description="Solve the file's request with each applicable method in turn (or those "
        "of --methods), each under the time limit, and report wall time, memory, status, "
        "certified gap and agreement with the best certified answer; as a table, a CSV file "
        "and a figure.",
    )
    p.add_argument("file", metavar="FILE", help="problem file (.toml)")
    p.add_argument(
        "--methods",
        metavar="a,b,c",
        help="compare these methods only (default: every one that applies; privopt solvers)",
    )
    p.add_argument("--csv", metavar="PATH", help="write the table as CSV")
    p.add_argument("--plot", metavar="PATH", help="write a figure (.png, .pdf or .svg)")
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    _time_limit_option(
        p,
        "for each method (default: [solver] time_limit, else 60)",
        "(that method's status is time_limit; the others still run)",
    )
    _memory_option(p)
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser(
        "notions",
        parents=[common],
        help="list the privacy notions",
        description="List the privacy notions privopt designs for: name, convexity, the paper "
        "that defines it, aliases and the [privacy] options it takes.",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="print a JSON array on stdout (name, aliases, convexity, uses_neighbors, source, "
        "options)",
    )
    p.set_defaults(func=cmd_notions)

    p = sub.add_parser(
        "solvers",
        parents=[common],
        help="list the available solvers",
        description="List the installed methods (cvxpy solvers and privopt fast paths) with "
        "what each is and which notions it solves on which kinds of prior.",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="print a JSON array on stdout (name, family, description, notions)",
    )
    p.set_defaults(func=cmd_solvers)
    return parser


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


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; never raises, never prints a traceback unless ``--debug``.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments (default ``sys.argv[1:]``).

    Returns
    -------
    int
        0 solved, 1 infeasible, 2 bad input, 3 solver failure or unexpected error,
        130 interrupted (Ctrl-C).
    """
    parser = build_parser()
    try:
        args = parser.parse_args(_join_negative_ranges(sys.argv[1:] if argv is None else argv))
    except SystemExit as exc:  # --help / --version (0) or a usage error (2)
        return exc.code if isinstance(exc.code, int) else 2
    if args.command is None:  # a usage error: the help, on stderr, and exit 2
        parser.print_help(sys.stderr)
        print("\nprivopt: error: give a command (e.g. privopt demo)", file=sys.stderr)
        return 2
    want_json = bool(getattr(args, "json", False))
    for stream in (sys.stdout, sys.stderr):  # never fail on ε, ⊗ … with a non-UTF-8 console
        with contextlib.suppress(AttributeError, ValueError, OSError):
            stream.reconfigure(errors="backslashreplace")

    def fail(code: int, kind: str, message: str, least=None, error=None) -> int:
        _note(f"privopt: {kind}: {message}")  # escaped; the JSON below keeps it exact
        if want_json:
            category = {
                "error": "input",
                "solver failure": "solver",
                "out of memory": "memory",
            }.get(kind, kind.split()[0])
            payload = {"status": "error", "error": category, "message": message}
            if isinstance(error, InputError):  # what programs react to: the key and the kind
                payload.update(field=error.field, code=getattr(error, "code", None))
            if least is not None:
                payload.update(status="infeasible", least_achievable=least)
            _print_json(payload)
        return code

    def show_warning(message, category, *_args, **_kwargs) -> None:
        # a library warning (e.g. robust_pml's hull note) is one line, not Python's format
        _note(f"privopt: warning: {message}")

    try:
        with warnings.catch_warnings(), _memory_bound(getattr(args, "max_memory", None)):
            warnings.simplefilter("always", UserWarning)
            warnings.showwarning = show_warning
            return int(args.func(args))
    except InputError as exc:
        if args.debug:
            import traceback

            traceback.print_exc()
        return fail(2, "error", str(exc), error=exc)
    except InfeasibleError as exc:
        if args.debug:
            import traceback

            traceback.print_exc()
        return fail(1, "infeasible", str(exc), exc.least_achievable)
    except PrivoptError as exc:
        if args.debug:
            import traceback

            traceback.print_exc()
        return fail(3, "solver failure", str(exc))
    except KeyboardInterrupt:
        print("privopt: interrupted", file=sys.stderr)
        return 130
    except MemoryError:
        # the estimate (privopt.resources) missed: say so plainly, with the knob
        return fail(
            3,
            "out of memory",
            "the machine ran out of memory although the request's estimate was within the "
            "bound; lower PRIVOPT_MAX_MEMORY (e.g. PRIVOPT_MAX_MEMORY=1G) so that larger "
            "programs are refused before they start, or use a smaller alphabet",
        )
    except BrokenPipeError:  # e.g. `privopt solve … | head`
        with contextlib.suppress(Exception):
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115
        return 0
    except Exception as exc:  # noqa: BLE001 - the CLI must never show a bare traceback
        if args.debug:
            import traceback

            traceback.print_exc()
        return fail(
            3,
            "internal error",
            f"{type(exc).__name__}: {exc} (run with --debug for the traceback; please report it)",
        )


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
