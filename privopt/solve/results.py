"""What a design or a sweep returns: typed results, their JSON form, the leakage report."""

from __future__ import annotations

__all__ = [
    "RESULT_COLUMNS",
    "ResultList",
    "Attempt",
    "CertificateReport",
    "Curve",
    "DesignResult",
    "LeakageReport",
    "LineSearchInfo",
    "SolverRun",
    "leakage_report",
    "json_number",
]

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from privopt._frames import frame, html_table
from privopt._io import json_number
from privopt.errors import InputError, PrivoptError
from privopt.model import Mechanism
from privopt.model.types import NeighborsLike, PriorLike
from privopt.notions import STANDARD_NOTIONS, get_notion
from privopt.status import Status

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


# --- measurement ---------------------------------------------------------------------------
def leakage_report(
    prior: PriorLike,
    mechanism: Mechanism | ArrayLike,
    neighbors: NeighborsLike = None,
    notions: Iterable[str] = STANDARD_NOTIONS,
    unit: str = "nats",
) -> dict[str, float]:
    """Every standard notion measured on ``mechanism`` (nats, or bits with ``unit="bits"``).

    Parameters
    ----------
    prior : Prior, JointPrior or DatabasePrior
    mechanism : Mechanism or array_like
    neighbors : NeighborRelation or {"hamming", "all"}, optional
        For ``dp`` and ``identifiability`` (default: Hamming on databases, all pairs
        otherwise).
    notions : iterable of str
        Which notions (default: the standard eight).
    unit : {"nats", "bits"}
        The unit of the levels.

    Returns
    -------
    dict
        Notion name → level (``inf`` where unbounded).
    """
    from privopt.solve.units import check_unit, from_nats

    unit = check_unit(unit)
    out = {}
    for name in notions:
        notion = get_notion(name)
        out[name] = float(
            notion.measure(prior, mechanism, neighbors if notion.uses_neighbors else None)
        )
        out[name] = from_nats(out[name], unit)
    return out


class LeakageReport(Mapping):
    """:func:`leakage_report` of a mechanism, measured on first access (a read-only mapping
    notion → level in nats). Results of a sweep pay for it only where it is read.

    Parameters
    ----------
    prior : Prior, JointPrior or DatabasePrior
        The prior the levels are measured under.
    matrix : numpy.ndarray
        The mechanism's matrix (rows = inputs).
    neighbors : NeighborRelation, optional
        For ``dp`` and ``identifiability`` (default as in :func:`leakage_report`).
    """

    def __init__(self, prior, matrix: np.ndarray, neighbors=None):
        self._args: tuple | None = (prior, matrix, neighbors)
        self._values: dict[str, float] | None = None

    def _load(self) -> dict[str, float]:
        if self._values is None:
            self._values = leakage_report(*self._args)
            self._args = None
        return self._values

    def __getitem__(self, name: str) -> float:
        return self._load()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._load())

    def __len__(self) -> int:
        return len(self._load())

    def __repr__(self) -> str:
        return repr(self._load())


# --- parts of a result ---------------------------------------------------------------------
@dataclass(frozen=True)
class Attempt:
    """One method tried on one point, and how it went.

    Attributes
    ----------
    method : str
        The method's registered name.
    status : str
        The outcome (``optimal``, ``optimal_inaccurate``, ``failed``, ``infeasible``,
        ``time_limit``, ``unverified``).
    message : str
        Why it did not give a certified answer, if it did not.
    seconds : float
        Seconds the method ran.
    """

    method: str
    status: str
    message: str = ""
    seconds: float = 0.0

    def to_dict(self) -> dict:
        """JSON form.

        Returns
        -------
        dict
            Keys ``method``, ``status``, ``message`` and ``seconds``.
        """
        return {
            "method": self.method,
            "status": self.status,
            "message": self.message,
            "seconds": json_number(self.seconds),
        }


@dataclass(frozen=True)
class CertificateReport:
    """privopt's own verdict on an answer's optimality.

    Attributes
    ----------
    objective : float
        The re-measured objective of the returned mechanism (``E[d]`` in ε mode, the level in
        budget mode at the final point).
    lower_bound : float or None
        A lower bound on the optimal objective (``None`` when the method gave none; then the
        answer is accepted on the agreement of the solver's objective with the re-measured
        one).
    gap : float or None
        ``objective − lower_bound``.
    relative_gap : float or None
        ``gap / (1 + |objective|)``.
    tolerance : float
        The largest relative gap accepted for status ``optimal``.
    certified : bool
        Whether the answer is certified optimal under the rule above.
    source : str
        Where the bound comes from.
    """

    objective: float
    lower_bound: float | None
    gap: float | None
    relative_gap: float | None
    tolerance: float
    certified: bool
    source: str

    def to_dict(self) -> dict:
        """JSON form.

        Returns
        -------
        dict
            The attributes by name (non-finite numbers as ``None``).
        """
        return {
            "objective": json_number(self.objective),
            "lower_bound": json_number(self.lower_bound),
            "gap": json_number(self.gap),
            "relative_gap": json_number(self.relative_gap),
            "tolerance": self.tolerance,
            "certified": bool(self.certified),
            "source": self.source,
        }


@dataclass
class SolverRun:
    """How an answer was obtained.

    Attributes
    ----------
    name : str
        The method whose answer was returned.
    solve_time_s, build_time_s, wall_time_s : float or None
        Seconds: the method's own solve time (summed over a line search), the time to build
        its program, and the whole run.
    iterations : int or None
        The method's iterations (summed over a line search).
    tried : list of str
        The methods tried, in order (with repeats removed).
    attempts : list of Attempt
        Every method call that did not end the run, with its reason.
    repair_weight : float
        The weight of a constant mechanism mixed in to meet the level (0 if none).
    repair_cost : float
        What that repair cost in the objective.
    details : dict
        JSON-ready facts from the method (LP sizes, slopes, …).
    """

    name: str
    solve_time_s: float | None = None
    build_time_s: float | None = None
    wall_time_s: float | None = None
    iterations: int | None = None
    tried: list[str] = field(default_factory=list)
    attempts: list[Attempt] = field(default_factory=list)
    repair_weight: float = 0.0
    repair_cost: float = 0.0
    details: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        """JSON form (the ``solver`` object of ``privopt solve --json``).

        Returns
        -------
        dict
            The attributes by name (non-finite numbers as ``None``), except that
            :attr:`attempts` is listed under ``fallbacks`` and :attr:`details` appears only
            when non-empty, as ``details``.
        """
        out = {
            "name": self.name,
            "solve_time_s": json_number(self.solve_time_s),
            "build_time_s": json_number(self.build_time_s),
            "wall_time_s": json_number(self.wall_time_s),
            "iterations": json_number(self.iterations),
            "tried": list(self.tried),
            "repair_weight": json_number(self.repair_weight),
            "repair_cost": json_number(self.repair_cost),
        }
        if self.attempts:
            out["fallbacks"] = [a.to_dict() for a in self.attempts]
        if self.details:
            out["details"] = {k: json_number(v) for k, v in self.details.items()}
        return out


@dataclass(frozen=True)
class LineSearchInfo:
    """The bisection of a budget-mode request over ε.

    Attributes
    ----------
    bracket : tuple of float
        ``(lo, hi)``: the answer is the level ``hi``; ``lo`` does not meet the budget.
    solves : int
        Points solved.
    tolerance : float
        The bracket width asked for.
    """

    bracket: tuple[float, float]
    solves: int
    tolerance: float

    def to_dict(self) -> dict:
        """JSON form.

        Returns
        -------
        dict
            Keys ``bracket`` (a list ``[lo, hi]``), ``solves`` and ``tolerance``.
        """
        return {
            "bracket": [json_number(b) for b in self.bracket],
            "solves": self.solves,
            "tolerance": self.tolerance,
        }


# --- the result ----------------------------------------------------------------------------
@dataclass
class DesignResult:
    """The answer to a design request.

    Attributes
    ----------
    status : Status
        ``optimal`` (re-measured and certified), ``optimal_inaccurate`` (re-measured and
        feasible, optimality not certified), ``infeasible`` or ``time_limit``.
    notion, mode : str
    epsilon : float or None
        The re-measured level of :attr:`mechanism` under the notion (nats).
    distortion : float or None
        The re-measured ``E[d]`` of :attr:`mechanism`.
    mechanism : Mechanism or None
        The dense mechanism (``None`` when only a structured one fits in memory).
    requested : dict
        What was asked (``epsilon`` or ``max_distortion``).
    leakage : Mapping
        Every standard notion measured on the mechanism (nats; ``inf`` where unbounded),
        measured when first read.
    solver : SolverRun or None
        Which method answered, with timings, fallbacks and repair; for an infeasible request,
        the method that found it so, or ``"least-value check"`` when the least achievable
        level or distortion ruled the request out before any method ran.
    verified : bool
        Whether the mechanism was re-measured by privopt and meets the request.
    certificate : CertificateReport or None
        privopt's optimality verdict (lower bound and gap).
    least_achievable : float or None
        For infeasible requests: the least achievable level or distortion.
    least_achievable_quantity : str or None
        What it measures: ``"epsilon"`` or ``"distortion"``.
    message : str
    line_search : LineSearchInfo or None
        The bisection over ε (budget mode for notions without a convex level objective).
    objective : float or None
        The method's own optimal value.
    structured_mechanism : object or None
        A structured form of the mechanism (orbit or generating-row form), when the method
        has one.
    closed_form : list of ClosedFormCheck
        Every closed form of the papers that applies to the request, checked on the answer
        (:mod:`privopt.papers.closed_form_checks`); an answer that contradicts one is never
        returned.
    extra : dict
        Further notes.
    warm_state : object or None
        What a later solve of the same instance can start from; not serialised.
    unit : {"nats", "bits"}
        The unit of :attr:`epsilon`, ``requested["epsilon"]``, :attr:`leakage` and a level's
        :attr:`least_achievable` (``unit=`` of :func:`~privopt.design`); the certificate, the
        line search and the closed-form checks are in nats.
    """

    status: Status
    notion: str
    mode: str
    epsilon: float | None
    distortion: float | None
    mechanism: Mechanism | None
    requested: dict
    leakage: Mapping[str, float] = field(default_factory=dict)
    solver: SolverRun | None = None
    verified: bool = False
    certificate: CertificateReport | None = None
    least_achievable: float | None = None
    least_achievable_quantity: str | None = None
    message: str = ""
    line_search: LineSearchInfo | None = None
    objective: float | None = None
    structured_mechanism: Any = None
    closed_form: list = field(default_factory=list)
    extra: dict = field(default_factory=dict)
    warm_state: Any = field(default=None, repr=False, compare=False)
    unit: str = "nats"

    def __getstate__(self) -> dict:
        # the warm start may hold solver objects (a HiGHS basis) that do not pickle; a copy
        # or an unpickled result simply starts cold
        state = self.__dict__.copy()
        state["warm_state"] = None
        return state

    def to_dict(self) -> dict:
        """The JSON object of ``privopt solve --json``.

        Returns
        -------
        dict
            ``status``, ``notion``, ``epsilon``, ``distortion``, the dense ``mechanism`` with
            its ``inputs`` and ``outputs`` labels (``mechanism`` is ``None`` when there is no
            dense one), ``leakage``, ``solver``, ``verified``, ``mode``, ``requested`` and
            ``closed_form``; when present, ``structured_mechanism``, ``certificate``,
            ``least_achievable`` (with ``least_achievable_quantity``), ``message``,
            ``line_search``, ``notes`` (:attr:`extra`) and ``unit`` (when not nats).
            Non-finite numbers are ``None``.
        """
        out: dict[str, Any] = {
            "status": str(self.status),
            "notion": self.notion,
            "epsilon": json_number(self.epsilon),
            "distortion": json_number(self.distortion),
        }
        if self.mechanism is not None:
            out["mechanism"] = self.mechanism.matrix.tolist()
            out["inputs"] = list(self.mechanism.input_labels)
            out["outputs"] = list(self.mechanism.output_labels)
        else:
            out["mechanism"] = None
        if self.structured_mechanism is not None and hasattr(self.structured_mechanism, "describe"):
            out["structured_mechanism"] = self.structured_mechanism.describe()
        out["leakage"] = {k: json_number(v) for k, v in self.leakage.items()}
        out["solver"] = self.solver.to_dict() if self.solver is not None else {}
        out["verified"] = bool(self.verified)
        out["mode"] = self.mode
        out["requested"] = {k: json_number(v) for k, v in self.requested.items()}
        if self.certificate is not None:
            out["certificate"] = self.certificate.to_dict()
        if self.least_achievable is not None:
            out["least_achievable"] = json_number(self.least_achievable)
            if self.least_achievable_quantity:
                out["least_achievable_quantity"] = self.least_achievable_quantity
        if self.message:
            out["message"] = self.message
        if self.line_search is not None:
            out["line_search"] = self.line_search.to_dict()
        out["closed_form"] = [check.to_dict() for check in self.closed_form]
        if self.extra:
            out["notes"] = {
                k: (v if isinstance(v, str) else json_number(v)) for k, v in self.extra.items()
            }
        if self.unit != "nats":
            out["unit"] = self.unit
        return out

    def to_record(self, leakage: bool = False) -> dict:
        """The answer in one flat row (a row of :meth:`to_frame` and of a batch's frame).

        Parameters
        ----------
        leakage : bool
            Also the level of the mechanism under every notion, as ``leakage.<notion>``
            columns (measured now if not yet read; off by default, as it costs one measure
            per notion).

        Returns
        -------
        dict
            The keys of :data:`RESULT_COLUMNS` that apply: what was asked
            (``requested_epsilon`` or ``requested_max_distortion``), the answer (``status``,
            ``verified``, ``epsilon``, ``distortion``, ``unit``), how it was found
            (``method``, ``solve_time_s``, ``wall_time_s``, ``iterations``), the certificate
            (``lower_bound``, ``gap``, ``relative_gap``, ``certified``), and for an infeasible
            request ``least_achievable``; ``message`` when there is one. Missing numbers are
            ``None``; infinite ones stay ``inf``.
        """
        run, cert = self.solver, self.certificate
        row: dict[str, Any] = {"notion": self.notion, "mode": self.mode}
        for key, value in self.requested.items():
            row[f"requested_{key}"] = value
        row.update(
            status=str(self.status),
            verified=bool(self.verified),
            epsilon=self.epsilon,
            distortion=self.distortion,
            unit=self.unit,
            method=run.name if run is not None else None,
            solve_time_s=run.solve_time_s if run is not None else None,
            wall_time_s=run.wall_time_s if run is not None else None,
            iterations=run.iterations if run is not None else None,
            lower_bound=cert.lower_bound if cert is not None else None,
            gap=cert.gap if cert is not None else None,
            relative_gap=cert.relative_gap if cert is not None else None,
            certified=bool(cert.certified) if cert is not None else False,
            least_achievable=self.least_achievable,
            message=self.message or None,
        )
        if leakage:
            row.update({f"leakage.{k}": v for k, v in self.leakage.items()})
        return row

    def to_frame(self, leakage: bool = False):
        """The answer as a one-row pandas DataFrame (needs pandas: the ``[frames]`` extra).

        The mechanism itself is ``result.mechanism.to_frame()``
        (:meth:`privopt.Mechanism.to_frame`); many results in one frame:
        :meth:`ResultList.to_frame` (what :func:`privopt.solve_many` returns).

        Parameters
        ----------
        leakage : bool
            Add the ``leakage.<notion>`` columns (see :meth:`to_record`).

        Returns
        -------
        pandas.DataFrame
            The columns of :meth:`to_record`.
        """
        return frame([self.to_record(leakage)], "DesignResult.to_frame", RESULT_COLUMNS)

    def _repr_html_(self) -> str:
        """A summary table in a notebook: the answer, its certificate and how it was found
        (and the mechanism itself when it is small)."""
        record = self.to_record()
        shown = [(key, record[key]) for key in RESULT_COLUMNS if record.get(key) is not None]
        caption = f"DesignResult: {self.notion}, {self.status}"
        out = html_table(shown, ["", "value"], caption)
        if self.mechanism is not None and max(self.mechanism.shape) <= 10:
            out += self.mechanism._repr_html_()
        return out

    def __repr__(self) -> str:
        return (
            f"DesignResult(status={str(self.status)!r}, notion={self.notion!r}, "
            f"epsilon={self.epsilon!r}, distortion={self.distortion!r}, verified={self.verified})"
        )


#: The columns of :meth:`DesignResult.to_record` (and of :meth:`DesignResult.to_frame`), in
#: order; the ``leakage.<notion>`` columns follow when asked for.
RESULT_COLUMNS = (
    "notion",
    "mode",
    "requested_epsilon",
    "requested_max_distortion",
    "status",
    "verified",
    "epsilon",
    "distortion",
    "unit",
    "method",
    "solve_time_s",
    "wall_time_s",
    "iterations",
    "lower_bound",
    "gap",
    "relative_gap",
    "certified",
    "least_achievable",
    "message",
)

#: The columns of a curve record (:class:`Curve`), in order.
CURVE_KEYS = (
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


#: Points of a curve that its notebook display shows.
HTML_MAX_POINTS = 30


@dataclass
class Curve:
    """A privacy–distortion curve: one record per point.

    Each record has ``epsilon`` (re-measured level), ``distortion`` (re-measured), ``status``,
    ``verified``, the requested value (``requested_epsilon`` or ``requested_max_distortion``),
    ``notion`` and ``solve_time_s``; failed points carry ``message``.

    Attributes
    ----------
    notion, mode : str
    records : list of dict
    results : list of DesignResult or None
        The full result of each point (``None`` where a point failed).
    unit : {"nats", "bits"}
        The unit of the levels in the records and results (``unit=`` of
        :func:`~privopt.sweep`).
    band : CurveBand or None
        The certified band around the curve (:mod:`privopt.solve.curve_band`), for a sweep
        asked for one (``epsilon_range=``, ``band=``…); its records then also carry the
        envelopes at their points (``distortion_lower``/``distortion_upper``, or
        ``epsilon_lower``/``epsilon_upper`` for a budget curve).
    """

    notion: str
    mode: str
    records: list[dict]
    results: list[DesignResult | None] = field(repr=False, default_factory=list)
    unit: str = "nats"
    band: Any = field(repr=False, default=None)

    def __repr__(self) -> str:
        statuses: dict[str, int] = {}
        for record in self.records:
            statuses[str(record.get("status"))] = statuses.get(str(record.get("status")), 0) + 1
        key = f"requested_{self.mode}"  # the record key of the value asked at each point
        asked = [r.get(key) for r in self.records if isinstance(r.get(key), (int, float))]
        span = f", {self.mode} {min(asked):.6g}..{max(asked):.6g}" if asked else ""
        counts = ", ".join(f"{n} {status}" for status, n in statuses.items())
        banded = ""
        if self.band is not None:
            banded = f", band width {self.band.width:.3g}"
        return (
            f"Curve(notion={self.notion!r}, {len(self.records)} points{span} "
            f"({self.unit if self.mode == 'epsilon' else 'distortion'}): {counts or 'none'}"
            f"{banded})"
        )

    def to_frame(self, band: bool = False):
        """The records as a pandas DataFrame (needs pandas: the ``[frames]`` extra).

        Parameters
        ----------
        band : bool
            The certified band's rows instead (:meth:`CurveBand.to_records
            <privopt.solve.curve_band.CurveBand.to_records>`: the grid value, ``…_lower``,
            ``…_upper`` and whether it is a solved point); the point records carry the
            envelopes at their points either way.

        Returns
        -------
        pandas.DataFrame
        """
        if band:
            if self.band is None:
                raise InputError("this curve has no band: sweep with band= or a range", "band")
            return frame(self.band.to_records(), "Curve.to_frame")
        return frame(self.records, "Curve.to_frame")

    def _repr_html_(self) -> str:
        """The points as an HTML table in a notebook (the first :data:`HTML_MAX_POINTS`)."""
        key = f"requested_{self.mode}"
        columns = [key, "epsilon", "distortion", "status"]
        rows = [[r.get(c) for c in columns] for r in self.records[:HTML_MAX_POINTS]]
        more = len(self.records) - len(rows)
        unit = f", levels in {self.unit}" if self.unit != "nats" else ""
        cut = f", first {len(rows)} shown (to_frame() has all)" if more > 0 else ""
        caption = f"Curve: {self.notion}, {len(self.records)} points{unit}{cut}"
        return html_table(rows, columns, caption)

    def column(self, key: str) -> np.ndarray:
        """One numeric column of the records as a float array (``nan`` where missing).

        Parameters
        ----------
        key : str
            ``epsilon``, ``distortion``, ``requested_epsilon``, ``solve_time_s``, …

        Returns
        -------
        numpy.ndarray
        """
        values = [r.get(key) for r in self.records]
        if any(isinstance(v, str) for v in values):
            raise InputError(
                f"the column {key!r} holds text, not numbers; read it from curve.records",
                "key",
            )
        try:
            return np.array([np.nan if v is None else v for v in values], dtype=float)
        except (TypeError, ValueError):
            raise InputError(f"the column {key!r} is not numeric", "key") from None

    def plot(self, ax: Axes | None = None, **kwargs: Any) -> Figure:
        """Draw the curve with :func:`privopt.plotting.plot_curve` and return the figure.

        A level sweep is drawn at ``(requested ε, D*(ε))``, a budget sweep at the achieved
        ``(least ε*, E[d])`` with slack budgets hollow (see :mod:`privopt.plotting`).

        :mod:`privopt.plotting` (and so matplotlib) is imported here, when the method is called,
        not when this module is imported: the results layer never imports the faces (plotting,
        command line) at import time, so ``import privopt`` stays free of matplotlib. This is
        how ``pandas.DataFrame.plot`` forwards to its plotting backend.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Draw on these axes (e.g. a subplot of a notebook figure); no figure is created.
            Default: a new figure with an off-screen canvas.
        **kwargs
            Passed to :func:`~privopt.plotting.plot_curves`: ``prior`` and ``distortion`` (for
            the closed-form overlays and the title; the curve does not store its problem),
            ``neighbors``, ``title``, ``legend``, ``path``…

        Returns
        -------
        matplotlib.figure.Figure
            The figure drawn on (``ax.figure`` when ``ax`` is given).

        Examples
        --------
        >>> import privopt as po
        >>> curve = po.sweep([0.5, 0.5], "hamming", "ldp", epsilons=[0.5, 1.0])
        >>> fig = curve.plot(prior=[0.5, 0.5], distortion="hamming")
        >>> type(fig).__name__, len(fig.axes)
        ('Figure', 1)
        """
        from privopt import plotting

        return plotting.plot_curve(self, ax=ax, **kwargs)

    def __len__(self) -> int:
        return len(self.records)


class ResultList(list):
    """A list of results that also makes one table: what :func:`privopt.solve_many` and
    :func:`privopt.sweep_notions` return.

    A plain :class:`list` in every other way (indexing, iteration, equality, pickling).
    Its items are :class:`DesignResult` objects, :class:`Curve` objects, or the errors of
    requests that failed (``solve_many(..., errors="return")``).
    """

    def to_frame(self, leakage: bool = False):
        """Every item in one pandas DataFrame (needs pandas: the ``[frames]`` extra).

        Parameters
        ----------
        leakage : bool
            With results: add the ``leakage.<notion>`` columns (:meth:`DesignResult.to_record`).

        Returns
        -------
        pandas.DataFrame
            Results: one row each, with ``index`` (the position in the list) and the columns
            of :meth:`DesignResult.to_record`; an error has status ``error``, ``error`` (its
            class name) and ``message``. Curves: every record of every curve, the ``notion``
            column telling them apart.
        """
        rows: list[dict] = []
        for index, item in enumerate(self):
            if isinstance(item, Curve):
                rows.extend(dict(record) for record in item.records)
            elif isinstance(item, DesignResult):
                rows.append({"index": index, **item.to_record(leakage)})
            elif isinstance(item, BaseException):
                rows.append(
                    {
                        "index": index,
                        "status": str(Status.ERROR),
                        "verified": False,
                        "error": type(item).__name__,
                        "message": str(item),
                        "field": getattr(item, "field", None)
                        if isinstance(item, PrivoptError)
                        else None,
                    }
                )
            else:
                raise InputError(
                    f"item {index} is {type(item).__name__}, not a result, a curve or an error",
                    "results",
                )
        return frame(rows, "ResultList.to_frame", ("index", *RESULT_COLUMNS))
