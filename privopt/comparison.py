"""Compare every method that applies on one's own problem: time, peak memory, status, certified
gap and agreement with the best certified answer (:func:`compare`, ``privopt compare FILE``).

Each applicable method (:func:`privopt.solve.applicable_methods`, or the ones named) solves the
request once through :func:`privopt.design` with ``solver=`` that method alone, a time limit
and the memory bound, which the solve driver enforces; a method that fails, runs out of time,
or raises anything else is recorded with its status and message and the next one runs. Every
answer is re-measured and certified as any design is (docs/answers.md, "What verified and
optimal mean"), so the table compares answers that privopt has checked, not the solvers' own
claims.

Measured per method:

``seconds``
    Wall time of the whole call (building, solving, verifying, certifying).
``peak_mb``
    The peak resident memory of the run in MiB: the process's high-water mark (``VmHWM``),
    reset before each method through ``/proc/self/clear_refs`` (Linux); where the driver ran
    the method in a child process, the child's peak when it is larger
    (``getrusage(RUSAGE_CHILDREN)``). ``nan`` where the platform offers neither.
``added_mb``
    What the run added to the memory the process held when it started (``peak_mb`` less the
    resident size before the call; a child process's whole peak): the method's own cost,
    without the interpreter and the libraries already loaded. A lower bound: memory that the
    allocator freed earlier but still holds is reused without growing the resident size.
``objective``
    What the request minimises, re-measured: ``E[d]`` at a level, the level within a budget.
``lower_bound``, ``gap``, ``relative_gap``, ``certified``
    The certificate (:class:`privopt.CertificateReport`).
``difference``, ``agrees``
    The objective less the best certified objective among all methods, and whether it is
    within the two answers' certificate tolerances of it (``2·tol·(1 + |best|)``).

The same measuring code runs the developer benchmarks (``benchmarks/harness.py`` imports
:func:`measure`, :func:`reset_peak_memory` and :func:`peak_memory_mb` from here).
"""

from __future__ import annotations

__all__ = [
    "COMPARE_COLUMNS",
    "DEFAULT_TIME_LIMIT",
    "Comparison",
    "Measurement",
    "compare",
    "measure",
    "peak_memory_mb",
    "reset_peak_memory",
    "resident_memory_mb",
]

import gc
import math
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from privopt._frames import frame, html_table
from privopt.errors import InputError, PrivoptError
from privopt.status import Status

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

#: Seconds each method may take when no time limit is given.
DEFAULT_TIME_LIMIT = 60.0
#: The columns of a comparison's table, in order.
COMPARE_COLUMNS = (
    "method",
    "status",
    "verified",
    "certified",
    "seconds",
    "peak_mb",
    "added_mb",
    "objective",
    "lower_bound",
    "gap",
    "relative_gap",
    "difference",
    "agrees",
    "message",
)
#: Relative tolerance of agreement for an answer without a certificate of its own.
AGREEMENT_TOL = 1e-6


# --- measuring ---------------------------------------------------------------------------------
def reset_peak_memory() -> bool:
    """Reset this process's resident-memory high-water mark (Linux ``/proc/self/clear_refs``).

    Returns
    -------
    bool
        Whether it could be reset (``False`` elsewhere: :func:`peak_memory_mb` then reports the
        peak since the process started).
    """
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def peak_memory_mb() -> float:
    """This process's resident-memory high-water mark (``VmHWM``) in MiB.

    Returns
    -------
    float
        ``nan`` where ``/proc/self/status`` is not available.
    """
    return _status_mb("VmHWM")


def resident_memory_mb() -> float:
    """This process's resident memory now (``VmRSS``) in MiB.

    Returns
    -------
    float
        ``nan`` where ``/proc/self/status`` is not available.
    """
    return _status_mb("VmRSS")


def _status_mb(key: str) -> float:
    """The field ``key`` of ``/proc/self/status`` (in kB there) in MiB; ``nan`` without it."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(f"{key}:"):
                return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return float("nan")


def _children_peak_mb() -> float:
    """The largest peak resident memory of the finished child processes, in MiB."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not POSIX
        return float("nan")
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0  # KiB on Linux


@dataclass(frozen=True)
class Measurement:
    """What one measured call cost.

    Attributes
    ----------
    seconds : float
        Wall time of the call.
    peak_mb : float
        Peak resident memory during the call, in MiB (see the module docstring); ``nan`` when
        it cannot be measured.
    error : BaseException or None
        What the call raised (``None`` when it returned).
    added_mb : float
        ``peak_mb`` less the resident memory before the call (a child process's peak counts
        whole); ``nan`` when it cannot be measured.
    """

    seconds: float
    peak_mb: float
    error: BaseException | None = None
    added_mb: float = float("nan")


def measure(run: Callable[[], Any]) -> tuple[Any, Measurement]:
    """Call ``run()`` and measure its wall time and peak memory; an exception is recorded.

    Parameters
    ----------
    run : callable
        Called once without arguments.

    Returns
    -------
    (object, Measurement)
        What ``run`` returned (``None`` when it raised) and the measurement. ``Exception`` is
        caught and kept in :attr:`Measurement.error`; ``KeyboardInterrupt`` and
        ``SystemExit`` are not.
    """
    gc.collect()
    has_peak = reset_peak_memory()
    children = _children_peak_mb()
    start_mb = resident_memory_mb()
    error: BaseException | None = None
    value = None
    start = time.perf_counter()
    try:
        value = run()
    except Exception as exc:  # noqa: BLE001 - one failing run must not stop the others
        error = exc
    seconds = time.perf_counter() - start
    peak = peak_memory_mb() if has_peak else float("nan")
    added = peak - start_mb
    child = _children_peak_mb()
    if math.isfinite(child) and child > children:  # a child process of this run peaked higher
        peak = child if not math.isfinite(peak) else max(peak, child)
        added = child if not math.isfinite(added) else max(added, child)
    return value, Measurement(seconds, peak, error, max(added, 0.0))


# --- the comparison ----------------------------------------------------------------------------
@dataclass
class Comparison:
    """Every method run on one request: one row each (:data:`COMPARE_COLUMNS`).

    Attributes
    ----------
    notion, mode : str
        The request's notion and what it minimises (``"epsilon"``: ``E[d]`` at a level;
        ``"max_distortion"``: the level within a budget).
    requested : dict
        ``{"epsilon": ε}`` or ``{"max_distortion": D}``.
    rows : list of dict
        One per method, in the order run.
    best : float or None
        The best (least) certified objective, ``None`` when no method certified an answer.
    best_method : str or None
        The method that reached it (the fastest of those that did).
    time_limit : float or None
        Seconds each method was given.
    description : str
        The problem in words (prior and distortion), for titles.
    results : dict
        Method name → its :class:`~privopt.DesignResult` (methods that raised have none).
    """

    notion: str
    mode: str
    requested: dict
    rows: list[dict]
    best: float | None
    best_method: str | None
    time_limit: float | None
    description: str = ""
    results: dict = field(default_factory=dict, repr=False)

    @property
    def objective_name(self) -> str:
        """``"E[d]"`` (a level asked) or ``"epsilon"`` (a budget asked)."""
        return "E[d]" if self.mode == "epsilon" else "epsilon"

    def to_records(self) -> list[dict]:
        """The rows, each with every column of :data:`COMPARE_COLUMNS`.

        Returns
        -------
        list of dict
        """
        return [{key: row.get(key) for key in COMPARE_COLUMNS} for row in self.rows]

    def to_frame(self):
        """The table as a pandas DataFrame (needs pandas: the ``[frames]`` extra).

        Returns
        -------
        pandas.DataFrame
            Columns :data:`COMPARE_COLUMNS`, one row per method.
        """
        return frame(self.to_records(), "Comparison.to_frame", COMPARE_COLUMNS)

    def to_csv(self, path: str | os.PathLike, option: str | None = None) -> str:
        """Write the table as CSV (atomically: a temporary file renamed over ``path``).

        Parameters
        ----------
        path : str or path-like
        option : str, optional
            The command-line option that named ``path`` (for messages).

        Returns
        -------
        str
            ``path``.
        """
        import csv

        from privopt._io import atomic_write

        def write(fh) -> None:
            writer = csv.writer(fh)
            writer.writerow(COMPARE_COLUMNS)
            for record in self.to_records():
                writer.writerow(["" if v is None else _csv_cell(v) for v in record.values()])

        return atomic_write(os.fspath(path), write, option=option or "path")

    def to_dict(self) -> dict:
        """JSON form (``privopt compare --json``).

        Returns
        -------
        dict
            ``notion``, ``mode``, ``requested``, ``time_limit``, ``best``, ``best_method`` and
            ``methods`` (the rows; non-finite numbers as ``None``).
        """
        from privopt.solve.results import json_number

        return {
            "notion": self.notion,
            "mode": self.mode,
            "requested": {k: json_number(v) for k, v in self.requested.items()},
            "time_limit": json_number(self.time_limit),
            "best": json_number(self.best),
            "best_method": self.best_method,
            "methods": [
                {k: json_number(v) for k, v in record.items()} for record in self.to_records()
            ],
        }

    def table(self) -> str:
        """The table as text, one line per method (what ``privopt compare`` prints).

        Returns
        -------
        str
        """
        name = self.objective_name
        width = max([len("method"), *(len(str(r["method"])) for r in self.rows)]) + 2
        head = (
            f"{'method':<{width}}{'status':<20}{'seconds':>10}{'+MiB':>8}"
            f"{name:>16}{'rel. gap':>11}{'vs best':>12}  agrees"
        )
        lines = [head]
        for r in self.rows:
            lines.append(
                f"{r['method']:<{width}}{r['status']:<20}{_num(r.get('seconds'), '.3f'):>10}"
                f"{_num(r.get('added_mb'), '.0f'):>8}{_num(r.get('objective'), '.10g'):>16}"
                f"{_num(r.get('relative_gap'), '.1e'):>11}"
                f"{_num(r.get('difference'), '+.2e'):>12}  {_yes_no(r.get('agrees'))}"
            )
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()

    def _repr_html_(self) -> str:
        """The table in a notebook."""
        columns = [c for c in COMPARE_COLUMNS if c != "message"]
        rows = [[r.get(c) for c in columns] for r in self.rows]
        best = "no certified answer" if self.best is None else f"best {self.best:.10g}"
        caption = f"{self.notion}, {self.requested}: {len(self.rows)} methods, {best}"
        return html_table(rows, columns, caption)

    def plot(self, ax: Axes | Sequence[Axes] | None = None, **kwargs: Any) -> Figure:
        """Draw the comparison with :func:`privopt.plotting.plot_comparison`.

        Parameters
        ----------
        ax : Axes or pair of Axes, optional
            Where to draw (default: a new figure).
        **kwargs
            Passed on (``title``, ``path``).

        Returns
        -------
        matplotlib.figure.Figure
        """
        from privopt import plotting

        return plotting.plot_comparison(self, ax=ax, **kwargs)


def _csv_cell(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


def _num(value: Any, spec: str) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    return format(value, spec)


def _yes_no(value: Any) -> str:
    return "—" if value is None else ("yes" if value else "NO")


def _objective(result, mode: str) -> float | None:
    value = result.distortion if mode == "epsilon" else result.epsilon
    return None if value is None else float(value)


def _row(name: str, result, measured: Measurement, mode: str) -> dict:
    """One method's row (before the agreement columns)."""
    if measured.error is not None:
        error = measured.error
        status = str(Status.INFEASIBLE) if getattr(error, "exit_code", None) == 1 else "error"
        if not isinstance(error, PrivoptError):
            status = "crashed"  # not one of privopt's errors: recorded, the others still run
        return {
            "method": name,
            "status": status,
            "verified": False,
            "certified": False,
            "seconds": measured.seconds,
            "peak_mb": measured.peak_mb,
            "added_mb": measured.added_mb,
            "objective": None,
            "lower_bound": None,
            "gap": None,
            "relative_gap": None,
            "message": f"{type(error).__name__}: {error}",
        }
    cert = result.certificate
    used = result.solver.name if result.solver is not None else name
    message = result.message or ""
    if used != name:  # the driver answered otherwise (e.g. the least-value check)
        message = f"answered by {used}" + (f"; {message}" if message else "")
    return {
        "method": name,
        "status": str(result.status),
        "verified": bool(result.verified),
        "certified": bool(cert.certified) if cert is not None else False,
        "seconds": measured.seconds,
        "peak_mb": measured.peak_mb,
        "added_mb": measured.added_mb,
        "objective": _objective(result, mode) if result.verified else None,
        "lower_bound": cert.lower_bound if cert is not None else None,
        "gap": cert.gap if cert is not None else None,
        "relative_gap": cert.relative_gap if cert is not None else None,
        "tolerance": cert.tolerance if cert is not None else None,
        "message": message or None,
    }


def _agreement(rows: list[dict]) -> tuple[float | None, str | None]:
    """Fill ``difference`` and ``agrees`` against the best certified objective; return it and
    the (fastest) method that reached it."""
    certified = [r for r in rows if r.get("certified") and r.get("objective") is not None]
    if not certified:
        for r in rows:
            r["difference"], r["agrees"] = None, None
        return None, None
    best = min(r["objective"] for r in certified)
    best_tol = max(r.get("tolerance") or AGREEMENT_TOL for r in certified)
    reached = [r for r in certified if r["objective"] == best]
    best_method = min(reached, key=lambda r: r["seconds"])["method"]
    for r in rows:
        if r.get("objective") is None:
            r["difference"], r["agrees"] = None, None
            continue
        r["difference"] = r["objective"] - best
        tol = 2.0 * max(r.get("tolerance") or AGREEMENT_TOL, best_tol) * (1.0 + abs(best))
        r["agrees"] = abs(r["difference"]) <= tol
    return best, best_method


def _chosen_methods(request, methods, limit: float) -> list[str]:
    """The methods to run: those named (checked), or every one that applies."""
    from privopt.solve.driver import scaled_request
    from privopt.solve.selection import applicable_methods, named_methods

    scaled = scaled_request(request)[0]  # as the driver hands it to the methods
    applicable = applicable_methods(scaled, limit)
    if methods is None:
        if not applicable:
            raise InputError(
                "no method applies to this request within the memory bound: raise max_memory "
                "or make the problem smaller",
                "methods",
            )
        return applicable
    names = [methods] if isinstance(methods, str) else list(methods)
    if not names:
        raise InputError("an empty list of methods: give at least one, or None for all", "methods")
    return [method.name for method in named_methods(scaled, names, limit, "methods")]


def _describe(prior, distortion) -> str:
    from privopt import plotting

    return ", ".join(
        t
        for t in (
            plotting._prior_text(prior),
            plotting._map_loss_text(prior, distortion)
            if plotting._is_map(prior)
            else plotting._distortion_text(distortion),
        )
        if t
    )


def compare(
    prior,
    distortion,
    notion: str,
    *,
    epsilon: float | None = None,
    max_distortion: float | None = None,
    methods: str | Sequence[str] | None = None,
    time_limit: float | None = DEFAULT_TIME_LIMIT,
    max_memory: float | str | None = None,
    progress: Callable | bool | None = None,
    on_method: Callable[[dict], None] | None = None,
    **design_kwargs: Any,
) -> Comparison:
    """Run every applicable method on one request and compare them.

    Parameters
    ----------
    prior, distortion, notion, epsilon, max_distortion
        The request, as in :func:`privopt.design` (``prior`` may also be a map,
        :class:`~privopt.LocationGrid` or :class:`~privopt.LocationPoints`, whose prior is
        used and whose cells name the figure).
    methods : str or sequence of str, optional
        The methods to run (default: every one that applies,
        :func:`privopt.solve.applicable_methods`).
    time_limit : float, optional
        Seconds for each method (default :data:`DEFAULT_TIME_LIMIT`; ``None`` for none). The
        driver enforces it; a method that reaches it is recorded with status ``time_limit``.
    max_memory : float or str, optional
        The memory bound, as in :func:`privopt.design` (methods estimated above it are not
        applicable).
    progress : callable or bool, optional
        A bar over the methods, as the ``progress`` of :func:`privopt.sweep`.
    on_method : callable, optional
        Called with each row as soon as its method has run (e.g. to print it; its
        ``difference`` and ``agrees`` are filled once every method has run).
    **design_kwargs
        Further keywords of :func:`privopt.design` (``neighbors``, ``extra_distortions``,
        ``observe_secret``, ``tol``, ``solver_options``, the notion's options…).

    Returns
    -------
    Comparison

    Raises
    ------
    InputError
        For a bad request, an unknown or inapplicable method name (with suggestions), or when
        no method applies.

    Examples
    --------
    >>> import privopt as po
    >>> table = po.compare([0.5, 0.3, 0.2], "hamming", "pml", epsilon=0.5,
    ...                    methods=["sparse-highs", "CLARABEL"], time_limit=30)
    >>> [row["agrees"] for row in table.rows]
    [True, True]
    """
    from privopt.request import prepare_request
    from privopt.resources import max_memory as memory_bound
    from privopt.solve import design
    from privopt.solve.progress import points_progress
    from privopt.validation import check_time_limit

    if "solver" in design_kwargs:
        raise InputError("compare runs every method itself: name them with methods=", "solver")
    if design_kwargs.get("unit", "nats") != "nats":
        raise InputError("compare takes and reports levels in nats: leave unit out", "unit")
    design_kwargs.pop("unit", None)
    time_limit = check_time_limit(time_limit, "time_limit")
    location = prior if hasattr(prior, "planar_points") and hasattr(prior, "prior") else None
    if location is not None:
        prior = location.prior()
    request_kwargs = {
        k: v
        for k, v in design_kwargs.items()
        if k not in ("tol", "solver_options", "raise_on_infeasible", "on_progress")
    }
    request = prepare_request(
        prior,
        distortion,
        notion,
        epsilon=epsilon,
        max_distortion=max_distortion,
        **request_kwargs,
    )
    limit = memory_bound(max_memory)
    names = _chosen_methods(request, methods, limit)
    rows: list[dict] = []
    results: dict = {}
    wrap = points_progress(progress, "privopt compare")
    for name in wrap(names) if wrap is not None else names:

        def run(name=name):
            return design(
                prior,
                distortion,
                notion,
                epsilon=epsilon,
                max_distortion=max_distortion,
                solver=name,
                time_limit=time_limit,
                max_memory=max_memory,
                raise_on_infeasible=False,
                progress=False,
                **design_kwargs,
            )

        result, measured = measure(run)
        if result is not None:
            results[name] = result
        row = _row(name, result, measured, request.mode)
        rows.append(row)
        if on_method is not None:
            on_method(row)
    best, best_method = _agreement(rows)
    for row in rows:
        row.pop("tolerance", None)
    return Comparison(
        notion=request.notion.name,
        mode=request.mode,
        requested=dict(request.requested),
        rows=rows,
        best=best,
        best_method=best_method,
        time_limit=time_limit,
        description=_describe(location or request.prior, request.distortion),
        results=results,
    )
