"""The ``privopt`` command line (spec/problem-format.md, "Commands and their JSON").

Commands::

    privopt solve [FILE] [--json] [--solver NAME] [--out mech.json|.csv|.npz]
    privopt curve FILE (--epsilon A:B:K | --max-distortion A:B:K)
                  [--notions a,b,c] [--csv P] [--json] [--plot P.png] [--solver NAME]
    privopt audit FILE [--json] [--mechanism mech.json|.csv|.npz]
    privopt demo [--out-dir DIR] [--json] [--no-plot]
    privopt notions | solvers

Exit codes: 0 solved; 1 the request is infeasible (the least achievable value is on stderr and,
with ``--json``, in the JSON); 2 bad input (stderr names the file, the key and what is wrong);
3 a solver or verification failure, or an unexpected error. ``--debug`` shows tracebacks.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import math
import os
import re
import sys
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from privopt.errors import InfeasibleError, InputError, PrivoptError
from privopt.files import ProblemSpec, check_reference, load_mechanism, load_problem, parse_problem

__all__ = ["main", "build_parser", "DEMO_FIGURE"]

#: Default file name of the demo's figure.
DEMO_FIGURE = "privopt-demo.png"
#: ε range of the demo's curves (START:STOP:COUNT).
DEMO_SWEEP = (0.0, 3.0, 31)
#: Largest mechanism printed in full in the human-readable output.
MAX_PRINT_ROWS = 16
MAX_PRINT_COLS = 10


# --- small helpers ---------------------------------------------------------------------------
class _Failure(Exception):
    """Carries an exit code and a message to :func:`main` (already formatted)."""

    def __init__(self, code: int, message: str, payload: dict | None = None):
        super().__init__(message)
        self.code = code
        self.payload = payload


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
    if value is None:
        return "—"
    if isinstance(value, float) and math.isinf(value):
        return "inf"
    if isinstance(value, (float, np.floating)):
        return f"{float(value):.{digits}g}"
    return str(value)


def _fixed(value, decimals: int = 10) -> str:
    if value is None:
        return "—"
    value = float(value)
    return f"{value:.{decimals}f}" if math.isfinite(value) else str(value)


@contextlib.contextmanager
def _about(path: str | None):
    """Prefix every :class:`InputError` raised inside with the file it is about."""
    try:
        yield
    except InputError as exc:
        if path and not str(exc).startswith(f"{path}:"):
            err = InputError(f"{path}: {exc}")
            err.field = exc.field
            raise err from None
        raise


def _parse_range(text: str, option: str) -> list[float]:
    """``START:STOP:COUNT`` → COUNT evenly spaced values from START to STOP inclusive."""
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
    if not (math.isfinite(start) and math.isfinite(stop)) or start < 0 or stop < 0:
        raise InputError(f"START and STOP must be finite numbers >= 0, got {text!r}", option)
    if count == 1:
        return [start]
    return [float(v) for v in np.linspace(start, stop, count)]


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


def _solve_progress():
    """A :class:`_SolveStatus` when stderr is a terminal, else ``None``."""
    try:
        interactive = sys.stderr.isatty()
    except (AttributeError, ValueError):
        interactive = False
    if not interactive:
        return None
    try:
        return _SolveStatus()
    except ImportError:  # pragma: no cover - tqdm is a dependency
        return None


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


def _leakage_lines(leakage: dict, asked: str | None, prior, neighbors: str | None) -> list[str]:
    rel = neighbors or ("hamming" if getattr(prior, "is_database", False) else "all")
    rel = "Hamming neighbours" if rel == "hamming" else "all pairs"
    lines = [f"leakage of this mechanism (nats; dp and identifiability on {rel})"]
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


def _solve_text(spec: ProblemSpec, out: dict, checks: list[dict]) -> str:
    lines = _header(spec)
    notion = out["notion"]
    if out.get("mode") == "max_distortion":
        budget = out["requested"]["max_distortion"]
        request = f"least {notion} level subject to E[d] <= {_fmt(budget)}"
    else:
        request = f"least E[d] subject to {notion} <= {_fmt(out['requested']['epsilon'])} nats"
    lines += ["", f"request     {request}"]
    if out["status"] == "infeasible":
        lines.append("status      INFEASIBLE")
        lines.append(f"reason      {out.get('message', '')}")
        return "\n".join(lines + [""] + _reference_lines(spec, checks))
    solver = out.get("solver", {})
    timing = solver.get("solve_time_s")
    lines.append(
        f"status      {out['status']}, verified: {'yes' if out['verified'] else 'NO'}   "
        f"solver: {solver.get('name', '?')}"
        + (f" ({timing:.3g} s)" if isinstance(timing, float) else "")
    )
    if out.get("line_search"):
        ls = out["line_search"]
        lines.append(
            f"line search {ls.get('solves')} solves, bracket [{_fmt(ls['bracket'][0])}, "
            f"{_fmt(ls['bracket'][1])}]"
        )
    cert = out.get("certificate")
    if cert:
        if cert.get("lower_bound") is not None:
            lines.append(
                f"certificate lower bound {_fmt(cert['lower_bound'], 12)}, relative gap "
                f"{_fmt(cert['relative_gap'], 3)} (tolerance {cert['tolerance']:g}; "
                f"{cert['source']})"
            )
        else:
            lines.append(f"certificate {cert['source']}")
    if out.get("message"):
        lines.append(f"note        {out['message']}")
    if out["epsilon"] is None:
        return "\n".join(lines + ["", "no feasible mechanism was found"])
    lines.append(f"level       {notion} = {_fixed(out['epsilon'], 12)} nats")
    lines.append(f"distortion  E[d] = {_fixed(out['distortion'], 12)}")
    if out.get("mechanism") is None:
        lines += ["", "the mechanism is too large to print (it is held in structured form)"]
    else:
        lines += ["", "optimal mechanism p(u|y)  (rows: inputs y, columns: outputs u)"]
        lines += _matrix_lines(np.array(out["mechanism"]), out["inputs"], out["outputs"])
    if out.get("leakage"):
        lines += [""] + _leakage_lines(out["leakage"], notion, spec.prior, spec.neighbors)
    if checks:
        lines += [""] + _reference_lines(spec, checks)
    return "\n".join(lines)


# --- commands --------------------------------------------------------------------------------
def _solve_spec(
    spec: ProblemSpec, solver: str | None, time_limit: float | None = None
) -> tuple[dict, list[dict]]:
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
    return out, checks


def _write_mechanism(out: dict, path: str) -> None:
    ext = os.path.splitext(path)[1].lower()
    matrix = np.array(out["mechanism"], dtype=float)
    try:
        if ext == ".json":
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(_dumps(out) + "\n")
        elif ext == ".csv":
            with open(path, "w", newline="", encoding="utf-8") as fh:
                writer = csv.writer(fh)
                writer.writerow(["input", *out["outputs"]])
                for label, row in zip(out["inputs"], matrix, strict=True):
                    writer.writerow([label, *(repr(float(v)) for v in row)])
        elif ext == ".npz":
            np.savez(
                path,
                mechanism=matrix,
                inputs=np.array(out["inputs"], dtype=str),
                outputs=np.array(out["outputs"], dtype=str),
            )
        else:
            raise InputError(f"unknown extension {ext!r}: use .json, .csv or .npz", "--out")
    except OSError as exc:
        raise InputError(f"cannot write {path!r}: {exc.strerror or exc}", "--out") from None


def _finish_solve(spec: ProblemSpec, out: dict, checks: list[dict], args) -> int:
    if args.json:
        _print_json(out)
    else:
        print(_solve_text(spec, out, checks))
    if out["status"] == "infeasible":
        quantity = out.get("least_achievable_quantity") or "value"
        least = out.get("least_achievable")
        message = out.get("message", "")
        hint = ""
        if least is not None and "least achievable" not in message:
            hint = f"; least achievable {quantity}: {_fmt(least, 12)}"
        print(f"privopt: {spec.path}: infeasible: {message}{hint}", file=sys.stderr)
        return 1
    if out["status"] == "time_limit":
        print(f"privopt: {spec.path}: {out.get('message', 'time limit reached')}", file=sys.stderr)
        return 3
    return 0


def cmd_solve(args) -> int:
    if args.file is None:
        spec = _load_demo()
        if not args.json:
            print("(no FILE given: solving the built-in demo problem; `privopt demo` also draws")
            print(" its privacy–distortion figure)\n")
    else:
        spec = load_problem(args.file)
    if args.out and os.path.splitext(args.out)[1].lower() not in (".json", ".csv", ".npz"):
        raise InputError(
            f"unknown extension {os.path.splitext(args.out)[1]!r}: use .json, .csv or .npz", "--out"
        )
    out, checks = _solve_spec(spec, args.solver, args.time_limit)
    if args.out and out.get("mechanism") is not None:
        _write_mechanism(out, args.out)
        if not args.json:
            print(f"\nwrote the mechanism to {args.out}")
    return _finish_solve(spec, out, checks, args)


def _run_sweep(
    spec: ProblemSpec,
    notion: str,
    mode: str,
    points: list[float],
    solver,
    time_limit: float | None = None,
):
    from privopt.notions import get_notion
    from privopt.solve import sweep

    key = "epsilons" if mode == "epsilon" else "max_distortions"
    with _about(spec.path):
        return sweep(
            spec.prior,
            spec.distortion,
            notion,
            solver=solver or spec.solver,
            progress=_progress(get_notion(notion).name),
            time_limit=time_limit if time_limit is not None else spec.time_limit,
            **{key: points},
            **spec.design_kwargs(notion),
        )


CURVE_COLUMNS = (
    "notion",
    "requested_epsilon",
    "requested_max_distortion",
    "epsilon",
    "distortion",
    "status",
    "verified",
    "solve_time_s",
    "least_achievable",
    "message",
)


def _curve_records(curves) -> list[dict]:
    return [dict(r) for curve in curves for r in curve.records]


def _write_csv(records: list[dict], path: str) -> None:
    present = [c for c in CURVE_COLUMNS if any(c in r for r in records)]
    extra = sorted({k for r in records for k in r} - set(present))
    try:
        with open(path, "w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fieldnames=present + extra, extrasaction="ignore")
            writer.writeheader()
            for r in records:
                writer.writerow({k: ("" if v is None else v) for k, v in _json_safe(r).items()})
    except OSError as exc:
        raise InputError(f"cannot write {path!r}: {exc.strerror or exc}", "--csv") from None


def _curve_text(spec: ProblemSpec, curves, mode: str) -> str:
    lines = _header(spec) + [""]
    req = "requested ε" if mode == "epsilon" else "budget"
    head = f"  {'notion':<24}{req:>14}{'ε (nats)':>16}{'E[d]':>16}  status"
    lines.append(head)
    for curve in curves:
        for r in curve.records:
            status = r.get("status", "")
            if status == "infeasible" and r.get("least_achievable") is not None:
                status += f" (least {_fmt(r['least_achievable'], 6)})"
            elif status == "error":
                status += f": {r.get('message', '')}"
            lines.append(
                f"  {curve.notion:<24}{_fmt(r.get(f'requested_{mode}'), 6):>14}"
                f"{_fmt(r.get('epsilon'), 10):>16}{_fmt(r.get('distortion'), 10):>16}  {status}"
            )
    return "\n".join(lines)


class _NoMatplotlib(InputError):
    """matplotlib is not installed (it is the optional extra ``privopt[plot]``)."""


def _plot(spec: ProblemSpec, curves, path: str, highlight=None) -> str:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise _NoMatplotlib(
            "figures need matplotlib, which is not installed: pip install 'privopt[plot]'",
            "--plot",
        ) from None
    from privopt import plotting

    title = spec.title or "privacy–distortion trade-off"
    try:
        return plotting.plot_curves(
            curves,
            path,
            prior=spec.prior,
            distortion=spec.distortion,
            neighbors=spec.neighbors,
            title=title,
            highlight=highlight,
        )
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot write the figure {path!r}: {exc}", "--plot") from None


def cmd_curve(args) -> int:
    from privopt.notions import get_notion

    spec = load_problem(args.file)
    if args.epsilon is not None:
        mode, points = "epsilon", _parse_range(args.epsilon, "--epsilon")
    else:
        mode, points = "max_distortion", _parse_range(args.max_distortion, "--max-distortion")
    if args.notions:
        names = [n.strip() for n in args.notions.split(",") if n.strip()]
        if not names:
            raise InputError("expected a comma-separated list of notions", "--notions")
        try:
            notions = [get_notion(n).name for n in names]
        except InputError as exc:
            raise InputError(str(exc).split(": ", 1)[-1], "--notions") from None
    else:
        notions = [spec.notion]
    for option, path in (("--plot", args.plot), ("--csv", args.csv)):
        if path:
            _check_writable(path, option)
    curves = [
        _run_sweep(spec, notion, mode, points, args.solver, args.time_limit) for notion in notions
    ]
    records = _curve_records(curves)
    if args.csv:
        _write_csv(records, args.csv)
    if args.plot:
        _plot(spec, curves, args.plot)
    if args.json:
        _print_json(records)
    else:
        print(_curve_text(spec, curves, mode))
        for what, path in (("table", args.csv), ("figure", args.plot)):
            if path:
                print(f"\nwrote the {what} to {path}")
    errors = [r for r in records if r.get("status") == "error"]
    if errors:
        print(
            f"privopt: {spec.path}: {len(errors)} point(s) failed; first: {errors[0]['message']}",
            file=sys.stderr,
        )
        return 3
    return 0


def _check_writable(path: str, option: str) -> None:
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise InputError(f"the folder {folder!r} does not exist", option)


def _audit(spec: ProblemSpec, mechanism) -> dict:
    from privopt import measures
    from privopt.notions import get_notion
    from privopt.solve import leakage_report

    with _about(spec.path):
        matrix = mechanism.matrix
        leakage = leakage_report(spec.prior, matrix, spec.neighbors)
        if spec.priors is not None:
            leakage["robust_pml"] = get_notion("robust_pml").measure(
                spec.prior, matrix, priors=spec.priors
            )
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
    return out


def cmd_audit(args) -> int:
    spec = load_problem(args.file, "audit" if args.mechanism is None else "any")
    if args.mechanism is not None:
        mech = load_mechanism(args.mechanism)
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
    checks = check_reference(spec.reference, out) if spec.reference else []
    if checks:
        out["reference_check"] = {"ok": all(c["ok"] for c in checks), "checks": checks}
    if args.json:
        _print_json(out)
        return 0
    lines = _header(spec) + ["", "mechanism p(u|y)  (rows: inputs y, columns: outputs u)"]
    lines += _matrix_lines(mech.matrix, out["inputs"], out["outputs"])
    lines += [""] + _leakage_lines(out["leakage"], spec.notion, spec.prior, spec.neighbors)
    lines += ["", "PML per output ℓ(X→u) (nats)"]
    lines += [
        f"  {str(u):<12}{_fmt(v, 12)}"
        for u, v in zip(out["outputs"], out["pml_per_output"], strict=True)
    ]
    if out["distortion"] is not None:
        lines += ["", f"distortion  E[d] = {_fmt(out['distortion'], 12)}"]
    if checks:
        lines += [""] + _reference_lines(spec, checks)
    print("\n".join(lines))
    return 0


def cmd_demo(args) -> int:
    start = time.perf_counter()
    spec = _load_demo()
    out, checks = _solve_spec(spec, args.solver, args.time_limit)
    figure = None
    curves = []
    if not args.no_plot:
        out_dir = args.out_dir or "."
        try:
            os.makedirs(out_dir, exist_ok=True)
        except OSError as exc:
            raise InputError(
                f"cannot create {out_dir!r}: {exc.strerror or exc}", "--out-dir"
            ) from None
        start_eps, stop_eps, count = DEMO_SWEEP
        points = [float(v) for v in np.linspace(start_eps, stop_eps, count)]
        notions = ["identifiability", "dp"]
        curves = [
            _run_sweep(spec, n, "epsilon", points, args.solver, args.time_limit) for n in notions
        ]
        highlight = None
        if out["status"] != "infeasible":
            highlight = (
                out["epsilon"],
                out["distortion"],
                f"this design: {out['notion']} ε = {_fmt(out['epsilon'], 4)}, "
                f"E[d] = {_fmt(out['distortion'], 6)}",
            )
        try:
            figure = _plot(spec, curves, os.path.join(out_dir, DEMO_FIGURE), highlight)
        except _NoMatplotlib as exc:
            print(f"privopt: warning: no figure: {exc}", file=sys.stderr)
    elapsed = time.perf_counter() - start
    if args.json:
        out["figure"] = figure
        out["curves"] = _curve_records(curves)
        _print_json(out)
    else:
        print(_solve_text(spec, out, checks))
        if figure:
            print(
                f"\nprivacy–distortion curves of identifiability and dp for ε in "
                f"[{DEMO_SWEEP[0]:g}, {DEMO_SWEEP[1]:g}] with the closed forms of Wang et al.:"
            )
            print(f"  wrote {figure}")
        print(f"\n(done in {elapsed:.1f} s; try `privopt solve problems/<file>.toml` next)")
    return 1 if out["status"] == "infeasible" else 0


def cmd_notions(args) -> int:
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
            }
        )
    if args.json:
        _print_json(rows)
    else:
        for r in rows:
            alias = f" (alias {', '.join(r['aliases'])})" if r["aliases"] else ""
            print(f"{r['name']:<26}{r['convexity']:<18}{r['source']}{alias}")
    return 0


def cmd_solvers(args) -> int:
    from privopt.methods import METHODS, method_names

    rows = [
        {"name": name, "family": METHODS[name].family, "description": METHODS[name].description}
        for name in method_names()
    ]
    if args.json:
        _print_json(rows)
    else:
        width = max(len(r["name"]) for r in rows)
        for r in rows:
            print(f"{r['name']:<{width}}  {r['description']}")
        print("\nNames are matched case-insensitively; privopt picks methods itself when none is")
        print("named, and falls back to the next one when a method fails or cannot certify.")
    return 0


# --- parser and entry point ------------------------------------------------------------------
def _seconds(text: str) -> float:
    from privopt.validation import check_time_limit

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds (a number > 0), got {text!r}") from None
    try:
        return check_time_limit(value, "--time-limit")
    except InputError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _time_limit_option(p: argparse.ArgumentParser, what: str = "") -> None:
    p.add_argument(
        "--time-limit",
        metavar="SECONDS",
        type=_seconds,
        default=None,
        help=f"stop after SECONDS{' ' + what if what else ''} with status time_limit (exit 3); "
        "overrides [solver] time_limit",
    )


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks on errors"
    )

    parser = argparse.ArgumentParser(
        prog="privopt",
        description="Design and audit optimal privacy mechanisms by convex optimisation.",
        epilog="Exit codes: 0 solved, 1 infeasible, 2 bad input, 3 solver failure. "
        "Start with `privopt demo`.",
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
    _time_limit_option(p)
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
    p.add_argument("--notions", metavar="a,b,c", help="sweep these notions instead of the file's")
    p.add_argument("--csv", metavar="PATH", help="write the table as CSV")
    p.add_argument("--json", action="store_true", help="print a JSON array on stdout")
    p.add_argument("--plot", metavar="PATH", help="write a figure (.png, .pdf, .svg)")
    p.add_argument(
        "--solver", metavar="NAME", help="a cvxpy solver or privopt fast path (privopt solvers)"
    )
    _time_limit_option(p, "for the whole curve")
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
    _time_limit_option(p)
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("notions", parents=[common], help="list the privacy notions")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_notions)

    p = sub.add_parser("solvers", parents=[common], help="list the available solvers")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_solvers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (never raises, never prints a traceback
    unless ``--debug``)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help / --version (0) or a usage error (2)
        return exc.code if isinstance(exc.code, int) else 2
    if args.command is None:
        parser.print_help()
        return 0
    want_json = bool(getattr(args, "json", False))
    for stream in (sys.stdout, sys.stderr):  # never fail on ε, ⊗ … with a non-UTF-8 console
        with contextlib.suppress(AttributeError, ValueError, OSError):
            stream.reconfigure(errors="backslashreplace")

    def fail(code: int, kind: str, message: str, least=None) -> int:
        print(f"privopt: {kind}: {message}", file=sys.stderr)
        if want_json:
            category = {"error": "input", "solver failure": "solver"}.get(kind, kind.split()[0])
            payload = {"status": "error", "error": category, "message": message}
            if least is not None:
                payload.update(status="infeasible", least_achievable=least)
            _print_json(payload)
        return code

    try:
        return int(args.func(args))
    except InputError as exc:
        if args.debug:
            import traceback

            traceback.print_exc()
        return fail(2, "error", str(exc))
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
