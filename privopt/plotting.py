"""Privacy–distortion figures for notebooks and papers (matplotlib, no pyplot).

Imported lazily by the plotting commands only, so that ``import privopt`` never pulls in
matplotlib. :func:`plot_curves` draws on a given :class:`~matplotlib.axes.Axes` or on a new
:class:`~matplotlib.figure.Figure` with an off-screen Agg canvas (no display needed, the
backend of a user's session is left alone) and returns the figure; writing a file is a separate
step, :func:`save_figure`, which writes atomically.

What is drawn:

* one line per curve (one per notion), thin lines, distinct colours (Okabe–Ito, colour-blind
  safe), markers and dash patterns, so that curves that coincide stay visible;
* level sweeps (``--epsilon``) at ``(requested ε, D*(ε))``; budget sweeps
  (``--max-distortion``) at the *achieved* point ``(least ε*, E[d] of the optimal mechanism)``:
  a budget above what the least level needs is slack and does not lie on the curve, so such
  points are drawn hollow and the legend says so (a budget of 1.0 whose answer has
  ``E[d] = 0.7`` is drawn at 0.7, not at 1.0);
* closed forms where the papers give the answer:

  - databases (or a single alphabet, read as ``n = 1`` row) with Hamming distortion, for
    ``dp``, ``ldp`` and ``identifiability``: ``h(ε) = n / (1 + e^ε/(m − 1))`` (Wang, Ying and
    Zhang, eq. 36) and the band ``h(ε + ε_X) ≤ D*_DP(ε) ≤ h(ε)`` of their Theorem 1, with
    ``ε_X`` (identifiability is infeasible below it) and ``ε̃_X`` (from which
    ``D*_I(ε) = h(ε)``) marked;
  - ``mutual_information`` on databases with Hamming distortion: the PD-MIP closed form
    ``H(X) − n h_b(D/n) − D ln(m − 1)`` on ``D ≤ h(ε̃_X)`` (Wang, Ying and Zhang, Theorem 2);
  - ``mutual_information`` when the observed ``Y`` is uniform on ``k`` symbols and a function
    of the secret, with Hamming distortion: the rate–distortion function
    ``ln k − h_b(D) − D ln(k − 1)`` (Calmon and Fawaz, Corollary 1);

* for a curve with a certified band (:attr:`privopt.solve.Curve.band`), the band shaded in
  the curve's colour: on every cell ``[x_j, x_{j+1}]`` of its grid the optimum lies between
  the cell's lower and upper bound (:mod:`privopt.solve.curve_band`), so the shading is drawn
  as steps — horizontal on a level sweep, vertical (levels between budgets) on a budget sweep;
* on a database with ``ldp`` alone (no ``dp`` or ``identifiability`` curve), only the lower end
  ``h(ε + ε_X)`` of that band: LDP is stricter than DP, so its curve lies above the band, and
  the lower end bounds it too;
* a title that describes the problem from its own objects (mode, notions, prior, distortion;
  for a map given as ``prior=`` — a :class:`~privopt.model.location.LocationGrid` or
  ``LocationPoints`` — its cells or places and the loss), wrapped to the width of the axes,
  and a legend outside the axes (below them, in two columns where they fit and in one under a
  narrow subplot), so that it never hides a curve; the band of Theorem 1 and the closed-form
  checks at the points take one legend entry each, and a curve's entry says why points are
  missing (``2 infeasible, 1 not reached (time limit), 1 failed``);
* for ``metric_dp`` the level is per unit of distance (the x axis says so), and a curve
  designed on a δ-spanner says that it guarantees ``δ·ε`` on the full metric;
* levels in the unit of the curves (``unit=`` of :func:`privopt.sweep`, nats or bits; the
  closed forms, which take levels in nats, are converted), and axes that start a little below
  0 so that the markers of points at ``ε = 0`` or ``D = 0`` are drawn whole.

:meth:`privopt.solve.Curve.plot` is :func:`plot_curve` called on the curve.

Labels use matplotlib's mathtext (``$\\varepsilon_X$``, ``$\\tilde{\\varepsilon}_X$``,
``$h^{-1}$``).
"""

from __future__ import annotations

__all__ = [
    "plot_comparison",
    "plot_curves",
    "plot_curve",
    "plot_location",
    "plot_mechanism",
    "save_figure",
    "LOCATION_PANELS",
    "sweep_title",
    "FIGURE_FORMATS",
    "XLABEL",
    "YLABEL",
    "BUDGET_XLABEL",
    "BUDGET_YLABEL",
]

import math
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from privopt.errors import InputError, close_matches
from privopt.model import DatabasePrior, Distortion
from privopt.papers import closed_forms

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

#: File formats of :func:`save_figure` (the extension of the path decides).
FIGURE_FORMATS = (".png", ".pdf", ".svg")
#: Axis labels of a level sweep.
XLABEL = r"privacy level $\varepsilon$ (nats)"
YLABEL = r"least expected distortion $D^*(\varepsilon)$"
#: Axis labels of a budget sweep (points at the achieved level and distortion).
BUDGET_XLABEL = r"least privacy level $\varepsilon^*$ (nats)"
BUDGET_YLABEL = r"achieved expected distortion $E[d]$"
#: A budget counts as not binding when budget − E[d] > SLACK_TOL · max(budget, 1) (solvers meet a
#: binding budget to about 1e-7).
SLACK_TOL = 1e-6

# Okabe–Ito colours (without yellow) plus wine and grey: 8 distinguishable, colour-blind safe
_COLORS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#882255", "#555555"]
_MARKERS = ["o", "s", "^", "D", "v", "P", "X", "h"]
_LINESTYLES = ["-", "--", "-.", ":", (0, (5, 1.5, 1, 1.5, 1, 1.5)), (0, (8, 2)), "-", "--"]
_LINE_WIDTH = 1.3
_OVERLAY_WIDTH = 1.0
_LEGEND_FONT = 7.5
_TITLE_FONT = 9.5
_FIG_WIDTH = 7.0
_FIG_HEIGHT = 4.2
_EPS = r"\varepsilon"
_DDP = r"$D^*_{\mathrm{DP}}$"
_DI = r"$D^*_{\mathrm{I}}$"
#: Nats per unit of level (levels of curves swept with ``unit="bits"`` are in bits).
_NATS_PER = {"nats": 1.0, "bits": math.log(2.0)}
#: The axes start this fraction of their span below 0 (room for the markers of edge points).
_EDGE_MARGIN = 0.02


# --- what the problem is ---------------------------------------------------------------------
def _as_problem(prior, distortion):
    """Accept what :func:`privopt.design` accepts: a pmf for the prior; ``"hamming"``,
    ``"absolute"``, ``"squared"`` or a matrix for the distortion."""
    if prior is not None and not hasattr(prior, "n_inputs"):
        from privopt.model.prior import as_prior

        prior = as_prior(prior)
    if distortion is None or isinstance(distortion, Distortion):
        return prior, distortion
    if isinstance(distortion, str):
        if prior is None:
            return prior, None
        if distortion == "hamming" and getattr(prior, "is_database", False):
            return prior, Distortion.database_hamming(prior.m, prior.n)
        if distortion in ("hamming", "absolute", "squared"):
            return prior, getattr(Distortion, distortion)(prior.n_inputs)
        raise InputError(
            f"unknown distortion {distortion!r}: pass a Distortion, a matrix, or one of "
            "'hamming', 'absolute', 'squared'",
            "distortion",
            suggestions=close_matches(distortion, ("hamming", "absolute", "squared")),
        )
    return prior, Distortion.from_matrix(distortion)


def _as_database(prior) -> DatabasePrior | None:
    """The prior as a database prior: itself, or a single alphabet read as ``n = 1`` row."""
    if getattr(prior, "is_database", False):
        return prior
    if getattr(prior, "is_joint", False) or prior is None:
        return None
    probs = np.asarray(prior.probs)
    if probs.size < 2:
        return None
    return DatabasePrior(probs.size, 1, probs=probs)


def _is_hamming(distortion: Distortion | None, prior) -> bool:
    if distortion is None:
        return False
    if distortion.is_database_hamming:
        return True
    if distortion.kind != "hamming" or getattr(prior, "is_joint", False):
        return False
    return getattr(prior, "n", 1) == 1 or not getattr(prior, "is_database", False)


def _rd_alphabet(prior) -> int | None:
    """``k`` when Y is uniform on ``k`` symbols and a function of the secret (else ``None``)."""
    if getattr(prior, "is_database", False):
        return None
    if getattr(prior, "is_joint", False):
        joint = prior.joint
        if ((joint > 0).sum(axis=1) > 1).any():
            return None  # Y is not a function of S
        p_y = prior.p_y
    else:
        p_y = prior.probs
    if p_y.size >= 2 and np.allclose(p_y, 1.0 / p_y.size, rtol=0, atol=1e-12):
        return int(p_y.size)
    return None


def _pmf_text(p, max_len: int = 6) -> str:
    p = np.asarray(p, dtype=float)
    if p.size > max_len:
        return f"{p.size} values"
    return "(" + ", ".join(f"{v:.3g}" for v in p) + ")"


def _is_uniform(p) -> bool:
    p = np.asarray(p, dtype=float)
    return bool(np.allclose(p, 1.0 / p.size, rtol=0, atol=1e-12))


def _is_map(value) -> bool:
    """A location map (:class:`~privopt.model.location.LocationGrid` or ``LocationPoints``)."""
    return all(hasattr(value, a) for a in ("planar_points", "n_outputs", "labels", "prior"))


def _map_text(location) -> str:
    """A short description of a map for a title, e.g. ``6 × 6 map cells of side 1, prior from
    counts``."""
    geographic = getattr(location, "projection", None) is not None
    unit = " km" if geographic else ""
    if hasattr(location, "rows"):
        head = f"{location.rows} × {location.cols} map cells of side {location.cell_size:g}{unit}"
    else:
        head = f"{location.size} places" + (" (latitude, longitude)" if geographic else "")
    probs = location.prior().probs
    head += ", uniform prior" if _is_uniform(probs) else ", prior from counts"
    if not location.outputs_are_secrets:
        grid = location.output_grid
        if grid is not None:
            head += f", {grid.rows} × {grid.cols} output cells"
        else:
            head += f", {location.n_outputs} output points"
    return head


def _map_loss_text(location, distortion: Distortion | None) -> str:
    """What the loss of a map is: the distance to the reported place, its square, or another
    matrix."""
    if distortion is None:
        return "loss: distance to the reported place"
    if distortion.matrix is not None and distortion.matrix.size <= 4_000_000:
        own = location.distortion().matrix
        if distortion.matrix.shape == own.shape:
            if np.allclose(distortion.matrix, own, rtol=1e-12, atol=0):
                return "loss: distance to the reported place"
            if np.allclose(distortion.matrix, own**2, rtol=1e-12, atol=0):
                return "loss: squared distance to the reported place"
    return _distortion_text(distortion)


def _prior_text(prior) -> str:
    """A short description of a prior for a title, e.g. ``2-row databases over 2 symbols,
    prior (0.6, 0.4) ⊗ (0.7, 0.3)``."""
    if prior is None:
        return ""
    if _is_map(prior):
        return _map_text(prior)
    if getattr(prior, "is_database", False):
        m, n = prior.m, prior.n
        head = f"{n}-row databases over {m} symbols" if n > 1 else f"{m} symbols"
        margs = None
        if prior.is_iid or prior.size <= 2**16:
            margs = prior.marginals()
        if margs is not None and all(np.allclose(q, margs[0], atol=1e-12) for q in margs):
            rows = "uniform" if _is_uniform(margs[0]) else _pmf_text(margs[0])
            return f"{head}, i.i.d. rows {rows}" if n > 1 else f"{head}, prior {rows}"
        if margs is not None and n <= 3:
            return f"{head}, prior " + " ⊗ ".join(_pmf_text(q) for q in margs)
        if margs is not None:
            return f"{head}, independent rows"
        return f"{head}, uniform prior" if _is_uniform(prior.probs) else f"{head}, joint prior"
    if getattr(prior, "is_joint", False):
        return f"private S ({prior.n_secrets} values), observed Y ({prior.n_inputs} values)"
    probs = np.asarray(prior.probs)
    if _is_uniform(probs):
        return f"uniform prior on {probs.size} symbols"
    if probs.size > 6:
        return f"prior on {probs.size} symbols"
    return f"prior {_pmf_text(probs)}"


def _distortion_text(distortion: Distortion | None) -> str:
    if distortion is None:
        return ""
    kind = getattr(distortion, "kind", None)
    return {
        "hamming": "Hamming distortion",
        "absolute": "absolute distortion |y − u|",
        "squared": "squared distortion (y − u)²",
    }.get(kind, "matrix distortion")


def sweep_title(curves: Sequence, prior=None, distortion: Distortion | None = None) -> str:
    """The default title of a figure of sweeps: what was swept, for which notions, on what.

    Parameters
    ----------
    curves : sequence of :class:`privopt.solve.Curve`
        The curves of the figure.
    prior : Prior, JointPrior or DatabasePrior, optional
        Described on the second line (alphabet and probabilities).
    distortion : Distortion, optional
        Its kind is named on the second line.

    Returns
    -------
    str
        One or two lines, e.g. ``"Least distortion at each privacy level: identifiability, dp"``
        and ``"2-row databases over 2 symbols, prior (0.6, 0.4) ⊗ (0.7, 0.3), Hamming
        distortion"``.
    """
    notions = list(dict.fromkeys(c.notion for c in curves))  # each named once
    modes = {c.mode for c in curves}
    if modes == {"max_distortion"}:
        first = "Least privacy level within each distortion budget"
    else:
        first = "Least distortion at each privacy level"
    if notions:
        first += ": " + (", ".join(notions) if len(notions) <= 3 else f"{len(notions)} notions")
    stretches = {_spanner_stretch([c]) for c in curves}
    if len(stretches) == 1 and None not in stretches:  # every curve on the same spanner
        first += f" on a {stretches.pop():g}-spanner"
    loss = _map_loss_text(prior, distortion) if _is_map(prior) else _distortion_text(distortion)
    second = ", ".join(t for t in (_prior_text(prior), loss) if t)
    return first + ("\n" + second if second else "")


def _spanner_stretch(curves: Sequence) -> float | None:
    """The stretch ``δ`` of the spanner the curves were designed on (``metric_dp`` with the
    ``spanner`` option, read from their results' notes), or ``None``."""
    for curve in curves:
        for result in getattr(curve, "results", None) or []:
            extra = getattr(result, "extra", None) or {}
            if "spanner_stretch" in extra:
                return float(extra["spanner_stretch"])
    return None


def _per_distance(curves: Sequence) -> bool:
    """Whether every curve is metric privacy, whose level is per unit of distance."""
    return bool(curves) and all(c.notion == "metric_dp" for c in curves)


# --- drawing ---------------------------------------------------------------------------------
def _curves_unit(curves: Sequence) -> str:
    """The unit of the levels of all the curves (``unit=`` of the sweeps; one for all)."""
    units = {getattr(curve, "unit", "nats") for curve in curves} or {"nats"}
    if len(units) > 1 or not units <= set(_NATS_PER):
        raise InputError(
            f"the curves have levels in {', '.join(sorted(map(str, units)))}: sweep them with "
            "the same unit= ('nats' or 'bits') to draw them together",
            "curves",
        )
    return units.pop()


def _overlays(
    ax, prior, distortion, notions, neighbors, x_max: float, budget_mode: bool, unit: str = "nats"
) -> None:
    """Draw the closed forms that apply; levels on the x axis are in ``unit``."""
    scale = _NATS_PER[unit]  # the closed forms take and give levels in nats
    bits = unit == "bits"
    grid = np.linspace(0.0, x_max, 400)
    db = _as_database(prior) if _is_hamming(distortion, prior) else None
    pairwise = {"dp", "identifiability", "ldp"} & set(notions)
    custom = neighbors is not None and not isinstance(neighbors, str)  # a file's own graph
    hamming_rel = not custom and (neighbors in (None, "hamming") or (db is not None and db.n == 1))
    # on databases (n > 1) LDP is stricter than DP with Hamming neighbours: its curve lies above
    # the DP band, so alone it gets only the band's lower end, a bound that holds for it too
    ldp_only = db is not None and db.n > 1 and not ({"dp", "identifiability"} & set(notions))
    if ldp_only and "ldp" in notions and not custom:
        eps_x = closed_forms.epsilon_x(db) / scale
        if math.isfinite(eps_x):
            shifted = rf"{_EPS} + {_EPS}_X"
            low_label = rf"$h(({shifted})\,\ln 2)$" if bits else rf"$h({shifted})$"
            (low,) = ax.plot(
                grid,
                closed_forms.h((grid + eps_x) * scale, db.m, db.n),
                color="black",
                lw=_OVERLAY_WIDTH,
                ls="--",
                label=(
                    f"{low_label}: lower bound on $D^*_{{\\mathrm{{LDP}}}}$ (Wang et al. Thm 1)"
                ),
                zorder=2,
            )
            low.set_gid("band:lower")
    elif db is not None and pairwise and (hamming_rel or ("ldp" in notions and not custom)):
        m, n = db.m, db.n
        h = closed_forms.h(grid * scale, m, n)
        eps_x = closed_forms.epsilon_x(db) / scale
        eps_t = closed_forms.epsilon_tilde_x(db) / scale
        # h takes a level in nats: a level ε in bits is ε ln 2 nats
        arg = rf"{_EPS}\,\ln 2" if bits else _EPS
        if n == 1:
            base = "2" if bits else "e"
            h_label = rf"$h({arg}) = {m - 1}/({base}^{{{_EPS}}} + {m - 1})$"
        else:
            h_label = rf"$h({arg})$"
        if budget_mode:
            h_label += rf" (${arg} = h^{{-1}}(D)$)"
        marks_tilde = math.isfinite(eps_t) and eps_t <= x_max
        if eps_x <= 1e-12:
            h_label += ": optimal for dp, ldp, identifiability"
        else:
            h_label += f": upper bound on {_DDP}"
            if "identifiability" in notions and marks_tilde:
                h_label += rf", $= D^*_{{\mathrm{{I}}}}$ from $\tilde{{{_EPS}}}_X$"
        (upper,) = ax.plot(grid, h, color="black", lw=_OVERLAY_WIDTH, label=h_label, zorder=2)
        upper.set_gid("band:upper")
        if math.isfinite(eps_x) and eps_x > 1e-12:
            low = closed_forms.h((grid + eps_x) * scale, m, n)
            shifted = rf"{_EPS} + {_EPS}_X"
            low_label = rf"$h(({shifted})\,\ln 2)$" if bits else rf"$h({shifted})$"
            (lower,) = ax.plot(
                grid,
                low,
                color="black",
                lw=_OVERLAY_WIDTH,
                ls="--",
                label=f"{low_label}: lower bound on {_DDP}",
                zorder=2,
            )
            lower.set_gid("band:lower")
            fill = ax.fill_between(
                grid,
                low,
                h,
                color="grey",
                alpha=0.13,
                lw=0,
                label=f"band of {_DDP} (Wang et al. Thm 1)",
                zorder=1,
            )
            fill.set_gid("band:fill")
            same = math.isfinite(eps_t) and abs(eps_t - eps_x) <= 1e-9
            if eps_x <= x_max and "identifiability" in notions:
                name = rf"${_EPS}_X = \tilde{{{_EPS}}}_X$" if same else rf"${_EPS}_X$"
                mark = ax.axvline(
                    eps_x,
                    color="grey",
                    ls=":",
                    lw=_OVERLAY_WIDTH,
                    label=f"{name} = {eps_x:.4g}: identifiability infeasible below",
                    zorder=2,
                )
                mark.set_gid("epsilon_x")
            if marks_tilde and not same:
                mark = ax.axvline(
                    eps_t,
                    color="grey",
                    ls="-.",
                    lw=_OVERLAY_WIDTH,
                    label=rf"$\tilde{{{_EPS}}}_X$ = {eps_t:.4g}: {_DI} $= h$ from here",
                    zorder=2,
                )
                mark.set_gid("epsilon_tilde_x")
    if "mutual_information" in notions and distortion is not None:
        if db is not None and getattr(prior, "is_database", False):
            lo, hi = closed_forms.pdmip_valid_range(db)
            ds = np.linspace(max(lo, 1e-6), hi, 300)[1:]
            rate = np.array([closed_forms.pdmip_value(db, d, strict=False) for d in ds]) / scale
            keep = rate <= x_max
            ax.plot(
                rate[keep],
                ds[keep],
                color="black",
                lw=_OVERLAY_WIDTH,
                ls=(0, (1, 1)),
                label="PD-MIP closed form (Wang et al. Thm 2)",
                zorder=2,
            )
        k = _rd_alphabet(prior) if distortion.kind == "hamming" else None
        if k is not None:
            ds = np.linspace(1e-6, (k - 1) / k, 300)
            rate = np.array([closed_forms.rate_distortion_hamming_uniform(k, d) for d in ds])
            rate = rate / scale
            keep = rate <= x_max
            ax.plot(
                rate[keep],
                ds[keep],
                color="black",
                lw=_OVERLAY_WIDTH,
                ls=(0, (1, 1)),
                label=(
                    rf"$\log_2 {k} - h_b(D) - D\log_2 {k - 1}$ (bits; Calmon–Fawaz Cor. 1)"
                    if bits
                    else rf"$\ln {k} - h_b(D) - D\ln {k - 1}$ (Calmon–Fawaz Cor. 1)"
                ),
                zorder=2,
            )


def _check_points(
    curve, budget_mode: bool, unit: str = "nats"
) -> dict[str, list[tuple[float, float]]]:
    """The closed-form values of a curve's own checks, placed on the figure's axes.

    Every point of a curve carries the checks the solver layer ran on it
    (``result.closed_form``, the same records as the JSON key ``closed_form`` and the curve
    columns ``closed_form.<name>``). A check that compares the plotted quantity (the distortion,
    or the level of a budget sweep) is drawn at its closed-form value, so the figure shows
    exactly what was checked. Returns the points grouped by ``equal``, ``at_most``,
    ``at_least`` and ``failed``. The checks compare levels in nats; a curve in bits has its
    level checks converted to ``unit``.
    """
    scale = _NATS_PER[unit]
    groups: dict[str, list[tuple[float, float]]] = {
        "equal": [],
        "at_most": [],
        "at_least": [],
        "failed": [],
    }
    x_all, y_all = _curve_xy(curve)
    eps_all = curve.column("epsilon")
    for j, result in enumerate(curve.results or []):
        if result is None or not np.isfinite(x_all[j]) or not np.isfinite(y_all[j]):
            continue
        for check in getattr(result, "closed_form", None) or []:
            if check.relation not in groups or check.got is None or check.expected is None:
                continue
            expected = float(check.expected)
            if not math.isfinite(expected):
                continue
            got = float(check.got)
            if abs(got - y_all[j]) <= 1e-9 * (1.0 + abs(y_all[j])):
                point = (float(x_all[j]), expected)  # a distortion check
            elif budget_mode and abs(got / scale - eps_all[j]) <= 1e-9 * (1.0 + abs(eps_all[j])):
                point = (expected / scale, float(y_all[j]))  # a level check of a budget sweep
            else:
                continue
            groups["failed" if not check.passed else check.relation].append(point)
    return groups


_CHECK_STYLE = {
    "equal": ("o", "closed-form value at the point (check passed)"),
    "at_most": ("v", "closed-form upper bound at the point (check passed)"),
    "at_least": ("^", "closed-form lower bound at the point (check passed)"),
    "failed": ("X", "closed-form check FAILED at the point"),
}


def _draw_checks(ax, curves, budget_mode: bool, unit: str = "nats") -> None:
    """Mark every curve point's closed-form checks (see :func:`_check_points`)."""
    merged: dict[str, list[tuple[float, float]]] = {key: [] for key in _CHECK_STYLE}
    for curve in curves:
        for key, points in _check_points(curve, budget_mode, unit).items():
            merged[key].extend(points)
    for key, (marker, label) in _CHECK_STYLE.items():
        points = merged[key]
        if not points:
            continue
        failed = key == "failed"
        (marks,) = ax.plot(
            [p[0] for p in points],
            [p[1] for p in points],
            ls="none",
            marker=marker,
            ms=7.0 if failed else 4.5,
            markerfacecolor="red" if failed else "none",
            markeredgecolor="red" if failed else "black",
            markeredgewidth=0.8,
            label=label,
            zorder=25 if failed else 2.5,
        )
        marks.set_gid(f"checks:{key}")


def _draw_band(ax, curve, color: str, index: int) -> None:
    """Shade a curve's certified band: on the cell ``[x_j, x_{j+1}]`` the optimum lies
    between ``lower_{j+1}`` and ``upper_j`` (a step on each cell)."""
    band = curve.band
    x = np.asarray(band.x, dtype=float)
    if x.size < 2:
        return
    low = np.append(band.lower[1:], band.lower[-1])  # the cell's lower bound, at its start
    high = np.asarray(band.upper, dtype=float)
    finite = np.isfinite(low) & np.isfinite(high)
    label = f"{curve.notion}: certified band"
    if band.mode == "epsilon":
        patch = ax.fill_between(
            x,
            low,
            high,
            where=finite,
            step="post",
            color=color,
            alpha=0.22,
            lw=0,
            label=label,
            zorder=1 + index,
        )
    else:  # a budget curve's band is on levels: between the budgets on the vertical axis
        patch = ax.fill_betweenx(
            x,
            low,
            high,
            where=finite,
            step="post",
            color=color,
            alpha=0.22,
            lw=0,
            label=label,
            zorder=1 + index,
        )
    patch.set_gid(f"band:{curve.notion}")


def _unsolved_text(curve, ok: np.ndarray) -> str:
    """How many points of a curve are not drawn, and why: ``"2 infeasible, 1 failed"``
    (infeasible levels, points the time limit did not reach, points no method solved)."""
    counts: dict[str, int] = {}
    for record, drawn in zip(curve.records, ok, strict=True):
        if drawn:
            continue
        status = str(record.get("status"))
        why = {"infeasible": "infeasible", "time_limit": "not reached (time limit)"}.get(
            status, "failed"
        )
        counts[why] = counts.get(why, 0) + 1
    return ", ".join(f"{n} {why}" for why, n in counts.items())


def _merged_legend(handles: list, labels: list[str]) -> tuple[list, list[str]]:
    """Fewer legend entries: the band of Wang et al.'s Theorem 1 (its lower end and the shading)
    in one entry, and the passed closed-form checks at the points in one entry (the failed
    ones stay on their own, in red)."""
    by_gid = {getattr(h, "get_gid", lambda: None)(): i for i, h in enumerate(handles)}
    drop: set[int] = set()
    out_h, out_l = list(handles), list(labels)
    lower, fill = by_gid.get("band:lower"), by_gid.get("band:fill")
    if lower is not None and fill is not None:
        out_h[lower] = (handles[fill], handles[lower])
        out_l[lower] = f"{labels[lower]}; shaded: {labels[fill]}"
        drop.add(fill)
    kinds = [
        (k, by_gid[f"checks:{k}"])
        for k in ("equal", "at_most", "at_least")
        if f"checks:{k}" in by_gid
    ]
    if len(kinds) > 1:
        names = {"equal": "value", "at_most": "upper bound", "at_least": "lower bound"}
        first = kinds[0][1]
        out_h[first] = tuple(handles[i] for _, i in kinds)
        out_l[first] = (
            "closed-form "
            + ", ".join(names[k] for k, _ in kinds)
            + (" at the points (checks passed)")
        )
        drop.update(i for _, i in kinds[1:])
    keep = [i for i in range(len(handles)) if i not in drop]
    return [out_h[i] for i in keep], [out_l[i] for i in keep]


def _solved(curve) -> np.ndarray:
    """Points that have an answer (optimal, finite level and distortion)."""
    status = np.array(
        [r.get("status") in ("optimal", "optimal_inaccurate") for r in curve.records], dtype=bool
    )
    return status & np.isfinite(curve.column("epsilon")) & np.isfinite(curve.column("distortion"))


def _curve_xy(curve) -> tuple[np.ndarray, np.ndarray]:
    """The points of a curve: ``(requested ε, D*)`` for a level sweep, the achieved
    ``(least ε*, E[d])`` for a budget sweep (the budget itself may be slack)."""
    if curve.mode == "epsilon":
        return curve.column("requested_epsilon"), curve.column("distortion")
    return curve.column("epsilon"), curve.column("distortion")


def _slack(curve) -> np.ndarray:
    """Budget sweeps: points whose budget is above the achieved distortion (not binding)."""
    if curve.mode != "max_distortion":
        return np.zeros(len(curve.records), dtype=bool)
    budget = curve.column("requested_max_distortion")
    achieved = curve.column("distortion")
    with np.errstate(invalid="ignore"):
        return budget - achieved > SLACK_TOL * np.maximum(np.abs(budget), 1.0)


def _annotate_slack(ax, x, y, budgets, slack, color: str) -> None:
    """Name the budgets that share each hollow (slack) point."""
    groups: dict[tuple[float, float], list[float]] = {}
    for j in np.flatnonzero(slack):
        groups.setdefault((round(float(x[j]), 9), round(float(y[j]), 9)), []).append(budgets[j])
    for (px, py), values in groups.items():
        values = sorted(values)
        shown = ", ".join(f"{b:.3g}" for b in values[:4]) + (", …" if len(values) > 4 else "")
        ax.annotate(
            f"budget{'s' if len(values) > 1 else ''} {shown}",
            (px, py),
            xytext=(7, 4),
            textcoords="offset points",
            fontsize=6.5,
            color=color,
            zorder=30,
        )


def _text_width(text: str, size: float) -> float:
    """The width in points of ``text`` set at ``size`` points (mathtext where it has ``$…$``)."""
    from matplotlib.backends.backend_agg import RendererAgg
    from matplotlib.font_manager import FontProperties

    ismath = text.count("$") - 2 * text.count(r"\$") >= 2
    try:
        width, _, _ = RendererAgg(1, 1, 72).get_text_width_height_descent(
            text, FontProperties(size=size), ismath=ismath
        )
    except Exception:  # noqa: BLE001 - a label mathtext cannot parse: estimate
        return 0.55 * size * len(text)
    return float(width)


def _axes_width(ax, fig) -> float:
    """About the width of the axes in points, once laid out.

    Under a layout engine (``layout="constrained"`` or ``"tight"``) the axes get their share
    of the figure's width less the room of the tick labels; otherwise their current width.
    """
    spec = ax.get_subplotspec() if hasattr(ax, "get_subplotspec") else None
    if spec is not None and fig.get_layout_engine() is not None:
        columns = spec.get_gridspec().ncols
        span = spec.colspan.stop - spec.colspan.start
        return float(fig.get_figwidth() * 72.0 * span / columns - 50.0)
    return float(ax.get_position().width * fig.get_figwidth() * 72.0)


def _legend_columns(labels: Sequence[str], width: float) -> int:
    """Two legend columns when they fit in ``width`` points (and there are more than two
    entries), else one."""
    if len(labels) <= 2:
        return 1
    column = max(_text_width(label, _LEGEND_FONT) for label in labels)
    column += (2.6 + 0.8) * _LEGEND_FONT  # handle length and pad (as set below)
    return 2 if 2 * column + 2.3 * _LEGEND_FONT <= width else 1


def _wrap_title(text: str, width: float, size: float) -> str:
    """Break the lines of a title that are wider than ``width`` points: after ``", "`` or
    ``": "`` outside parentheses (a pmf ``(0.6, 0.4)`` stays whole), at spaces only for a part
    that is still too wide."""
    out: list[str] = []
    for line in text.splitlines():
        parts, depth, start = [], 0, 0
        for i, char in enumerate(line):
            depth += {"(": 1, ")": -1}.get(char, 0)
            if char in ",:" and depth == 0 and line[i + 1 : i + 2] == " ":
                parts.append(line[start : i + 2])
                start = i + 2
        parts.append(line[start:])
        pieces = []
        for part in parts:  # a part still too wide is broken at its spaces
            if _text_width(part, size) <= width:
                pieces.append(part)
            else:
                pieces.extend(word + " " for word in part.split(" ") if word)
        current = ""
        for piece in pieces:
            if current and _text_width((current + piece).rstrip(), size) > width:
                out.append(current.rstrip())
                current = piece
            else:
                current += piece
        out.append(current.rstrip())
    return "\n".join(out)


def _legend_below(ax, fig, handles, labels, ncols: int, handler_map: dict | None = None):
    """A legend under the axes, below the tick labels and the x label (outside the axes)."""
    from matplotlib import transforms

    anchor = transforms.offset_copy(ax.transAxes, fig=fig, x=0, y=-34, units="points")
    return ax.legend(
        handles,
        labels,
        loc="upper center",
        bbox_to_anchor=(0.5, 0.0),
        bbox_transform=anchor,
        ncols=ncols,
        fontsize=_LEGEND_FONT,
        frameon=False,
        handlelength=2.6,
        columnspacing=1.5,
        handler_map=handler_map,
    )


def _check_curves(curves) -> list:
    """The curves of :func:`plot_curves` as a list (one curve is taken as a list of one), or
    an :class:`InputError` saying what is expected (curves from :func:`privopt.sweep`)."""
    from privopt.solve import Curve

    if isinstance(curves, Curve):
        return [curves]
    try:
        items = list(curves)
    except TypeError:
        items = None
    if items is None or isinstance(curves, (str, bytes)) or isinstance(curves, dict):
        raise InputError(
            f"expected a list of curves (privopt.sweep results), got {type(curves).__name__}",
            "curves",
        )
    for i, item in enumerate(items):
        if not all(hasattr(item, a) for a in ("notion", "mode", "records", "column")):
            raise InputError(
                f"item {i} is {type(item).__name__} {item!r:.60}, not a Curve: pass the results "
                "of privopt.sweep (one per notion)",
                "curves",
            )
    return items


def _check_highlight(highlight) -> tuple[float, float, str] | None:
    """``(epsilon, distortion, label)``, or ``None`` when there is nothing to mark (no level or
    no distortion, e.g. a design stopped by its time limit)."""
    if highlight is None:
        return None
    try:
        x, y, label = highlight
    except (TypeError, ValueError):
        raise InputError(
            f"expected (epsilon, distortion, label), got {highlight!r:.80}", "highlight"
        ) from None
    if x is None or y is None:
        return None
    try:
        x, y = float(x), float(y)
    except (TypeError, ValueError):
        raise InputError(
            f"expected numbers for epsilon and distortion, got {highlight!r:.80}", "highlight"
        ) from None
    if not (math.isfinite(x) and math.isfinite(y)):
        return None
    return x, y, str(label)


def plot_curves(
    curves: Sequence,
    path: str | os.PathLike | None = None,
    *,
    ax: Axes | None = None,
    prior=None,
    distortion: Distortion | str | None = None,
    neighbors: str | None = None,
    title: str | None = None,
    highlight: tuple[float, float, str] | None = None,
    closed_form: bool = True,
    legend: str | None = "below",
    figsize: tuple[float, float] | None = None,
) -> Figure:
    """Draw privacy–distortion curves; return the figure (write it with :func:`save_figure`).

    Parameters
    ----------
    curves : sequence of :class:`privopt.solve.Curve`
        One line per curve (per notion); a single curve is drawn alone. Points that are
        infeasible or failed are left out and counted in the legend.
    path : str or path-like, optional
        Also write the figure there (same as ``save_figure(fig, path)``).
    ax : matplotlib.axes.Axes, optional
        Draw on these axes (e.g. a subplot of a notebook figure); no figure is created.
        Default: a new figure with an off-screen canvas.
    prior, distortion, neighbors
        The problem, for the closed-form overlays and the title (see the module docstring);
        given like to :func:`privopt.design` (a prior object or a pmf; a
        :class:`~privopt.model.Distortion`, ``"hamming"``, ``"absolute"``, ``"squared"`` or a
        matrix).
    title : str, optional
        Default :func:`sweep_title`; ``""`` for none (e.g. a figure with a caption).
    highlight : (epsilon, distortion, label), optional
        One point to mark with a star, e.g. the solved design; not drawn when its level or
        distortion is ``None`` or not finite (a design stopped by its time limit).
    closed_form : bool
        Draw the closed forms of the papers where they apply (default true), and mark at each
        point the closed-form values its own checks compared it with (``result.closed_form``;
        a failed check is a red cross).
    legend : {"below", "right", "inside", None}
        Where the legend goes: under the axes (default), right of them, inside them (matplotlib's
        ``"best"``), or nowhere.
    figsize : (float, float), optional
        Size in inches of a new figure (default 7 wide, taller with a long legend below).

    Returns
    -------
    matplotlib.figure.Figure
        The figure drawn on (``ax.figure`` when ``ax`` is given).

    Raises
    ------
    InputError
        For an unknown ``legend`` placement, ``curves`` that are not curves, or a malformed
        ``highlight``.
    """
    if legend not in ("below", "right", "inside", None):
        raise InputError(
            f"unknown placement {legend!r}: use 'below', 'right', 'inside' or None",
            "legend",
            suggestions=close_matches(legend, ("below", "right", "inside")),
        )
    curves = _check_curves(curves)
    highlight = _check_highlight(highlight)
    location = prior if _is_map(prior) else None  # a map: described as one, its prior drawn
    prior, distortion = _as_problem(location.prior() if location else prior, distortion)
    own = ax is None
    if own:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        fig = Figure(figsize=figsize or (_FIG_WIDTH, _FIG_HEIGHT), dpi=150, layout="constrained")
        FigureCanvasAgg(fig)
        ax = fig.add_subplot()
    else:
        fig = ax.figure

    budget_mode = bool(curves) and all(c.mode == "max_distortion" for c in curves)
    unit = _curves_unit(curves)
    xs = [0.0]
    for curve in curves:
        x, _ = _curve_xy(curve)
        xs.extend(float(v) for v in x[_solved(curve)])
    if highlight is not None:
        xs.append(float(highlight[0]))
    x_max = max(xs) * 1.03 if max(xs) > 0 else 1.0

    notions = [curve.notion for curve in curves]
    if closed_form:
        _overlays(ax, prior, distortion, notions, neighbors, x_max, budget_mode, unit)
        _draw_checks(ax, curves, budget_mode, unit)

    any_slack = False
    for i, curve in enumerate(curves):
        color = _COLORS[i % len(_COLORS)]
        marker = _MARKERS[i % len(_MARKERS)]
        # markers shrink from the first curve to the last, so that where curves coincide the
        # later markers sit inside the earlier ones and both stay visible
        size = 8.0 - 5.0 * i / max(len(curves) - 1, 1) if len(curves) > 1 else 5.0
        x, y = _curve_xy(curve)
        ok = _solved(curve)
        slack = _slack(curve) & ok
        label = curve.notion
        stretch = _spanner_stretch([curve])
        if stretch is not None:  # the level holds on the spanner's edges (metric_dp's notes)
            label += (
                rf" on a {stretch:g}-spanner (guarantees ${stretch:g}\,{_EPS}$ on the full metric)"
            )
        unsolved = _unsolved_text(curve, ok)
        if unsolved:
            label += f" ({unsolved})"
        if curve.band is not None:
            _draw_band(ax, curve, color, i)
        order = np.lexsort((-y[ok], x[ok]))  # by level, then by distortion downwards
        (line,) = ax.plot(
            x[ok][order],
            y[ok][order],
            color=color,
            lw=_LINE_WIDTH,
            ls=_LINESTYLES[i % len(_LINESTYLES)],
            marker=marker,
            ms=size,
            markevery=[int(j) for j in np.flatnonzero(~slack[ok][order])],
            label=label,
            zorder=3 + i,
        )
        line.set_gid(f"curve:{curve.notion}")
        if slack.any():
            any_slack = True
            (hollow,) = ax.plot(
                x[slack],
                y[slack],
                ls="none",
                marker=marker,
                ms=size + 1.0,
                markerfacecolor="white",
                markeredgecolor=color,
                markeredgewidth=1.1,
                label="_nolegend_",
                zorder=3.5 + i,
            )
            hollow.set_gid(f"slack:{curve.notion}")
            _annotate_slack(ax, x, y, curve.column("requested_max_distortion"), slack, color)
    if highlight is not None:
        ax.plot(
            [highlight[0]],
            [highlight[1]],
            marker="*",
            ms=13,
            color="gold",
            markeredgecolor="black",
            markeredgewidth=0.8,
            ls="none",
            label=highlight[2],
            zorder=20,
        )

    xlabel = BUDGET_XLABEL if budget_mode else XLABEL
    if _per_distance(curves):  # metric privacy: the level is per unit of distance
        per = "km" if getattr(location, "projection", None) is not None else "unit distance"
        xlabel = xlabel.replace("(nats)", f"per {per} (nats)")
    ax.set_xlabel(xlabel.replace("(nats)", f"({unit})"))
    ax.set_ylabel(BUDGET_YLABEL if budget_mode else YLABEL)
    # a small margin left of ε = 0 and under D = 0, so that the markers of points on these
    # edges (e.g. a slack budget answered at ε* = 0) are drawn whole, not cut in half
    ax.set_xlim(-_EDGE_MARGIN * x_max, x_max)
    top = ax.get_ylim()[1]
    if any_slack:  # room above the highest hollow point for the names of its budgets
        top = max(
            top,
            1.08
            * max(
                float(np.max(_curve_xy(c)[1][_slack(c) & _solved(c)], initial=0.0)) for c in curves
            ),
        )
    ax.set_ylim(-_EDGE_MARGIN * top, top)
    ax.grid(alpha=0.25, lw=0.6)
    text = sweep_title(curves, location or prior, distortion) if title is None else title
    if text:
        ax.set_title(_wrap_title(text, _axes_width(ax, fig), _TITLE_FONT), fontsize=_TITLE_FONT)

    handles, labels = _merged_legend(*ax.get_legend_handles_labels())
    if any_slack:
        from matplotlib.lines import Line2D

        handles.append(
            Line2D(
                [],
                [],
                ls="none",
                marker="o",
                ms=6,
                markerfacecolor="white",
                markeredgecolor="black",
                markeredgewidth=1.1,
            )
        )
        labels.append("hollow: budget not binding (achieved $E[d]$ < budget)")
    if legend is not None and handles:
        from matplotlib.legend_handler import HandlerTuple

        tuples = {tuple: HandlerTuple(ndivide=None, pad=0.3)}
        if legend == "inside":
            ax.legend(
                handles,
                labels,
                loc="best",
                fontsize=_LEGEND_FONT,
                framealpha=0.9,
                handler_map=tuples,
            )
        elif legend == "right":
            ax.legend(
                handles,
                labels,
                loc="upper left",
                bbox_to_anchor=(1.02, 1.0),
                fontsize=_LEGEND_FONT,
                frameon=False,
                handler_map=tuples,
            )
        else:
            # two columns where they fit: under a new figure, or under the given axes (a
            # subplot of a notebook figure is often too narrow for two)
            ncols = _legend_columns(labels, _FIG_WIDTH * 72.0 if own else _axes_width(ax, fig))
            if own:  # a figure legend: constrained layout keeps the axes clear of it
                fig.legend(
                    handles,
                    labels,
                    loc="outside lower center",
                    ncols=ncols,
                    fontsize=_LEGEND_FONT,
                    frameon=False,
                    handlelength=2.6,
                    columnspacing=1.5,
                    handler_map=tuples,
                )
                if figsize is None:  # room for the legend rows under the axes
                    rows = math.ceil(len(handles) / ncols)
                    fig.set_size_inches(_FIG_WIDTH, _FIG_HEIGHT + 0.15 + 0.16 * rows)
            else:
                _legend_below(ax, fig, handles, labels, ncols, tuples)
    if path is not None:
        save_figure(fig, path)
    return fig


def plot_curve(curve, ax: Axes | None = None, **kwargs: Any) -> Figure:
    """Draw one privacy–distortion curve (see :func:`plot_curves` for the keywords).

    Parameters
    ----------
    curve : :class:`privopt.solve.Curve`
        The curve, e.g. from :func:`privopt.sweep`.
    ax : matplotlib.axes.Axes, optional
        Draw on these axes instead of a new figure.
    **kwargs
        Passed to :func:`plot_curves` (``prior``, ``distortion``, ``title``, ``legend``…).

    Returns
    -------
    matplotlib.figure.Figure
    """
    return plot_curves([curve], ax=ax, **kwargs)


#: The panels :func:`plot_location` can draw, and their colour-bar labels.
LOCATION_PANELS = {
    "prior": ("prior $p(x)$", "probability $p(x)$"),
    "output": ("output law $p(u)$", "probability $p(u)$"),
    "release": ("$p(u \\mid x = {cell})$", "probability $p(u \\mid x)$"),
    "loss": ("expected loss per place", "$E[d(x, U) \\mid x]$"),
}


def _as_result_parts(mechanism, per: str = "unit distance"):
    """``(matrix or None, annotation or None)`` of a mechanism, array or design result; a
    metric privacy level is stated ``per`` unit of distance."""
    note = None
    if mechanism is not None and hasattr(mechanism, "mechanism") and hasattr(mechanism, "status"):
        result = mechanism
        if result.epsilon is not None and result.distortion is not None:
            unit = "" if getattr(result, "unit", "nats") == "nats" else f" {result.unit}"
            level = f"{result.epsilon:.4g}{unit}"
            if result.notion == "metric_dp":
                level += f" per {per}"
            note = (
                f"{result.notion} $\\varepsilon$ = {level}, "
                f"E[d] = {result.distortion:.4g} ({result.status})"
            )
        mechanism = result.mechanism
    if mechanism is None:
        return None, note
    return np.asarray(getattr(mechanism, "matrix", mechanism), dtype=float), note


def _cell_index(location, cell) -> int:
    labels = location.labels
    index = labels.index(cell) if isinstance(cell, str) and cell in labels else cell
    if (
        isinstance(index, bool)
        or not isinstance(index, (int, np.integer))
        or not 0 <= int(index) < location.size
    ):
        raise InputError(f'unknown cell {cell!r}: an index or a label such as "r,c"', "cell")
    return int(index)


#: Most tick labels on one side of a map (every k-th cell beyond).
_MAX_CELL_TICKS = 12


def _cell_ticks(axis, grid) -> None:
    """Ticks at the centres of a grid's columns and rows, labelled by their index (cell
    ``"r,c"`` is above tick ``c`` and beside tick ``r``); every k-th one on a large grid."""
    for count, start, set_ticks in (
        (grid.cols, grid.origin[0], axis.set_xticks),
        (grid.rows, grid.origin[1], axis.set_yticks),
    ):
        step = max(1, math.ceil(count / _MAX_CELL_TICKS))
        index = np.arange(0, count, step)
        set_ticks(start + (index + 0.5) * grid.cell_size, [str(i) for i in index])


def _draw_places(axis, fig, location, values, on: str, cmap: str, label: str):
    """Draw ``values`` over the secrets (``on="secrets"``) or the outputs of ``location``: an
    image over a grid of cells, else coloured points; a labelled colour bar."""
    geographic = getattr(location, "projection", None) is not None
    grid = None
    if on == "secrets" and hasattr(location, "as_map"):
        grid, image = location.cells, location.as_map(values)
    elif on == "outputs" and location.output_grid is not None:
        grid = location.output_grid
        image = np.asarray(values, dtype=float).reshape(grid.rows, grid.cols)
    if grid is not None:
        x0, y0, x1, y1 = grid.bounds
        if geographic:  # north up
            drawn = axis.imshow(
                image, cmap=cmap, extent=(x0, x1, y0, y1), origin="lower", interpolation="nearest"
            )
        else:  # row 0 at the top, as printed
            drawn = axis.imshow(image, cmap=cmap, extent=(x0, x1, y1, y0), interpolation="nearest")
    else:
        points = location.planar_points if on == "secrets" else location.output_points
        drawn = axis.scatter(
            points[:, 0], points[:, 1], c=np.asarray(values, dtype=float), cmap=cmap, s=18
        )
        axis.set_aspect("equal", adjustable="datalim")
        if not geographic:
            axis.invert_yaxis()
    if geographic:
        axis.set_xlabel("km east", fontsize=8)
        axis.set_ylabel("km north", fontsize=8)
    elif grid is not None:  # ticks at the cell centres, numbered as the labels "r,c" are
        what = "output " if on == "outputs" and not location.outputs_are_secrets else ""
        _cell_ticks(axis, grid)
        axis.set_xlabel(f"{what}column c", fontsize=8)
        axis.set_ylabel(f"{what}row r", fontsize=8)
    else:  # the secret is x: the plane's axes are named apart from it
        axis.set_xlabel("first coordinate", fontsize=8)
        axis.set_ylabel("second coordinate", fontsize=8)
    axis.tick_params(labelsize=7)
    bar = fig.colorbar(drawn, ax=axis, shrink=0.85)
    bar.ax.tick_params(labelsize=7)
    bar.set_label(label, fontsize=8)


def plot_location(
    grid,
    mechanism=None,
    *,
    prior=None,
    cell: int | str | None = None,
    ax: Axes | Sequence[Axes] | None = None,
    title: str | None = None,
    cmap: str = "viridis",
    panels: Sequence[str] | None = None,
    distortion=None,
) -> Figure:
    """Heatmaps of a location problem on its map: the prior, the mechanism's output law, the
    law of what it releases from one ``cell``, and the expected loss of each place.

    Panels (``panels``, in the order given): ``"prior"`` ``p(x)``; ``"output"`` the output law
    ``p(u) = Σ_x p(x) W[x,u]``; ``"release"`` ``p(u | x = cell)`` (the cell is marked);
    ``"loss"`` the expected loss ``E[d(x, U) | x] = Σ_u W[x,u] d(x,u)`` of each place. By
    default: the prior, then with a ``mechanism`` the output law, then with a ``cell`` its
    release law. Values over a grid's cells (or an output grid) are drawn as an image, values
    over given places or output points as coloured points. Each panel has its own labelled
    colour bar. Row 0 of a planar grid is drawn at the top (as printed), its axes named
    "column c" and "row r" with ticks at the cell centres, numbered as the labels ``"r,c"``
    are (every k-th on a large grid); a geographic map (latitude/longitude) is drawn north up,
    in km. With a design result, the figure's title states its notion, level (per unit of
    distance for ``metric_dp``) and ``E[d]``.

    Parameters
    ----------
    grid : LocationGrid or LocationPoints
        The map (:mod:`privopt.model.location`): its secrets, outputs and prior.
    mechanism : Mechanism, array_like or DesignResult, optional
        ``W[x, u]``, secrets × outputs (a result's mechanism is taken).
    prior : Prior or array_like, optional
        Default: ``grid.prior()``.
    cell : int or str, optional
        A secret's index or label (``"r,c"`` for a grid) whose release law is drawn.
    ax : Axes or sequence of Axes, optional
        Draw on these axes, one per panel (a single Axes when there is one panel). Default: a
        new figure with an off-screen canvas.
    title : str, optional
        A title over the figure (a new figure only).
    cmap : str
        A matplotlib colour map.
    panels : sequence of str, optional
        Among :data:`LOCATION_PANELS`.
    distortion : Distortion or array_like, optional
        The loss of the ``"loss"`` panel (default ``grid.distortion()``).

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    InputError
        When ``grid`` is not a map (field ``grid``), the sizes do not match the map, an unknown
        cell or panel, a panel that needs a mechanism or a cell without one, or the wrong
        number of axes.
    """
    if not _is_map(grid):
        raise InputError(
            f"expected a map (privopt.LocationGrid or LocationPoints) as the first argument, got "
            f"{type(grid).__name__}; a mechanism without a map is drawn by plot_mechanism",
            "grid",
        )
    per = "km" if getattr(grid, "projection", None) is not None else "unit distance"
    matrix, note = _as_result_parts(mechanism, per)
    if matrix is not None and matrix.shape != (grid.size, grid.n_outputs):
        raise InputError(
            f"the mechanism is {matrix.shape}; a location mechanism is cells × cells, one row "
            f"per place and one column per output ({grid.size} × {grid.n_outputs})",
            "mechanism",
        )
    if panels is None:
        panels = ["prior"]
        if matrix is not None:
            panels.append("output")
            if cell is not None:
                panels.append("release")
        elif cell is not None:
            raise InputError("a cell's release law needs a mechanism", "cell")
    panels = list(panels)
    for name in panels:
        if name not in LOCATION_PANELS:
            raise InputError(
                f"unknown panel {name!r}; valid: {', '.join(LOCATION_PANELS)}",
                "panels",
                suggestions=close_matches(name, LOCATION_PANELS),
            )
        if name != "prior" and matrix is None:
            raise InputError(f"the {name!r} panel needs a mechanism", "panels")
    if "release" in panels and cell is None:
        raise InputError("the 'release' panel needs a cell", "cell")
    index = None if cell is None else _cell_index(grid, cell)
    p = grid.prior().probs if prior is None else np.asarray(getattr(prior, "probs", prior))
    if ax is None:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        fig = Figure(figsize=(3.6 * len(panels), 3.3), dpi=150, layout="constrained")
        FigureCanvasAgg(fig)
        axes = list(fig.subplots(1, len(panels), squeeze=False)[0])
        heading = "; ".join(part for part in (title, note) if part)
        if heading:
            fig.suptitle(heading, fontsize=10)
    else:
        axes = [ax] if not isinstance(ax, (list, tuple, np.ndarray)) else list(np.ravel(ax))
        if len(axes) != len(panels):
            raise InputError(f"{len(panels)} panel(s) to draw but {len(axes)} axes given", "ax")
        fig = axes[0].figure
    for axis, name in zip(axes, panels, strict=True):
        heading, label = LOCATION_PANELS[name]
        if name == "prior":
            _draw_places(axis, fig, grid, p, "secrets", cmap, label)
        elif name == "output":
            _draw_places(axis, fig, grid, p @ matrix, "outputs", cmap, label)
        elif name == "release":
            heading = heading.format(cell=grid.labels[index])
            _draw_places(axis, fig, grid, matrix[index], "outputs", cmap, label)
            x, y = grid.planar_points[index]
            axis.plot(x, y, marker="x", color="#D55E00", markersize=8, markeredgewidth=2)
        else:
            loss = grid.distortion() if distortion is None else distortion
            loss = np.asarray(getattr(loss, "matrix", loss), dtype=float)
            if loss.shape != matrix.shape:
                raise InputError(
                    f"the distortion is {loss.shape}, the mechanism {matrix.shape}", "distortion"
                )
            _draw_places(axis, fig, grid, (matrix * loss).sum(axis=1), "secrets", cmap, label)
        axis.set_title(heading, fontsize=9)
    return fig


def plot_mechanism(
    mechanism,
    *,
    ax: Axes | None = None,
    title: str | None = None,
    cmap: str = "viridis",
    input_labels: Sequence[str] | None = None,
    output_labels: Sequence[str] | None = None,
) -> Figure:
    """A heatmap of a mechanism's matrix ``p(u | y)`` (rows: inputs, columns: outputs).

    Labels are written on the axes up to 30 rows or columns. With a design result, the
    title states its notion, level and ``E[d]``.

    Parameters
    ----------
    mechanism : Mechanism, array_like or DesignResult
    ax : Axes, optional
        Default: a new figure with an off-screen canvas.
    title : str, optional
    cmap : str
    input_labels, output_labels : sequence of str, optional
        Default: the mechanism's.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    InputError
        Without a dense mechanism.
    """
    owner = getattr(mechanism, "mechanism", mechanism)
    matrix, note = _as_result_parts(mechanism)
    if matrix is None or matrix.ndim != 2:
        raise InputError("no dense mechanism to draw", "mechanism")
    inputs = list(input_labels or getattr(owner, "input_labels", range(matrix.shape[0])))
    outputs = list(output_labels or getattr(owner, "output_labels", range(matrix.shape[1])))
    if ax is None:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        width = min(9.0, 3.0 + 0.25 * matrix.shape[1])
        height = min(8.0, 2.2 + 0.22 * matrix.shape[0])
        fig = Figure(figsize=(width, height), dpi=150, layout="constrained")
        FigureCanvasAgg(fig)
        ax = fig.add_subplot()
    else:
        fig = ax.figure
    drawn = ax.imshow(matrix, cmap=cmap, aspect="auto", interpolation="nearest", vmin=0.0)
    bar = fig.colorbar(drawn, ax=ax, shrink=0.85)
    bar.set_label("probability $p(u \\mid y)$", fontsize=8)
    bar.ax.tick_params(labelsize=7)
    ax.set_xlabel("output u", fontsize=8)
    ax.set_ylabel("input y", fontsize=8)
    if matrix.shape[1] <= 30:
        ax.set_xticks(range(matrix.shape[1]), [str(u) for u in outputs], fontsize=6, rotation=90)
    if matrix.shape[0] <= 30:
        ax.set_yticks(range(matrix.shape[0]), [str(y) for y in inputs], fontsize=6)
    heading = "; ".join(part for part in (title, note) if part)
    if heading:
        ax.set_title(heading, fontsize=9)
    return fig


#: Colours of the statuses in a comparison (Okabe–Ito): certified, verified only, the rest.
_STATUS_COLORS = {"certified": "#009E73", "verified": "#E69F00", "other": "#999999"}


def plot_comparison(
    comparison,
    *,
    ax: Axes | Sequence[Axes] | None = None,
    title: str | None = None,
    path: str | os.PathLike | None = None,
) -> Figure:
    """Draw a method comparison (:func:`privopt.compare`): the time and the memory of each
    method (what its run added to the process, at the peak) as bars, coloured by the answer's
    standing.

    Green: certified optimal; orange: verified, not certified; grey: no verified answer
    (failed, time limit, infeasible, error), hatched. Each time bar is annotated with the
    method's status and relative gap, and "≠ best" where its answer does not agree with the
    best certified one. Methods are listed in the order they ran, fastest marked by the
    shortest bar.

    Parameters
    ----------
    comparison : Comparison
        From :func:`privopt.compare`.
    ax : pair of Axes, optional
        The time and memory axes (default: a new figure with both side by side).
    title : str, optional
        Default: the notion, the request and the problem's description.
    path : str or path-like, optional
        Also write the figure there (:func:`save_figure`).

    Returns
    -------
    matplotlib.figure.Figure
    """
    rows = comparison.rows
    if not rows:
        raise InputError("the comparison has no methods to draw", "comparison")
    if ax is None:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        height = 1.6 + 0.28 * len(rows)
        fig = Figure(figsize=(_FIG_WIDTH + 1.5, height), dpi=150, layout="constrained")
        FigureCanvasAgg(fig)
        time_ax, memory_ax = fig.subplots(1, 2, sharey=True, width_ratios=(3, 2))
    else:
        axes = list(np.ravel(ax)) if isinstance(ax, (list, tuple, np.ndarray)) else [ax]
        if len(axes) != 2:
            raise InputError(f"give two axes (time, memory), got {len(axes)}", "ax")
        time_ax, memory_ax = axes
        fig = time_ax.figure
    names = [str(r["method"]) for r in rows]
    y = np.arange(len(rows))[::-1]  # the first method at the top

    def standing(row) -> str:
        if row.get("certified"):
            return "certified"
        return "verified" if row.get("verified") else "other"

    colors = [_STATUS_COLORS[standing(r)] for r in rows]
    hatches = ["//" if standing(r) == "other" else "" for r in rows]
    seconds = np.array([float(r.get("seconds") or np.nan) for r in rows])
    memory = np.array(
        [float(r.get("added_mb") if r.get("added_mb") is not None else np.nan) for r in rows]
    )
    for axis, values in ((time_ax, seconds), (memory_ax, memory)):
        bars = axis.barh(y, np.nan_to_num(values, nan=0.0), color=colors, height=0.65)
        for bar, hatch in zip(bars, hatches, strict=True):
            bar.set_hatch(hatch)
            bar.set_edgecolor("white" if not hatch else "#555555")
        axis.grid(axis="x", alpha=0.25, lw=0.6)
        axis.tick_params(labelsize=7)
    time_ax.set_yticks(y, names, fontsize=7)
    finite = seconds[np.isfinite(seconds) & (seconds > 0)]
    if finite.size and finite.max() / max(finite.min(), 1e-9) > 30:
        time_ax.set_xscale("log")
    time_ax.set_xlabel("wall time (s)", fontsize=8)
    memory_ax.set_xlabel("memory added by the run, at its peak (MiB)", fontsize=8)
    top = np.nanmax(seconds) if np.isfinite(seconds).any() else 1.0
    for yi, row, value in zip(y, rows, seconds, strict=True):
        note = str(row["status"])
        if row.get("relative_gap") is not None and math.isfinite(row["relative_gap"]):
            note += f", gap {row['relative_gap']:.1e}"
        if row.get("agrees") is False:
            note += ", ≠ best"
        time_ax.annotate(
            note,
            (value if np.isfinite(value) else 0.0, yi),
            xytext=(3, 0),
            textcoords="offset points",
            va="center",
            fontsize=6.5,
        )
    if time_ax.get_xscale() == "log":
        time_ax.set_xlim(right=top * 12)
    else:
        time_ax.set_xlim(0, top * 1.6 if top > 0 else 1.0)
    from matplotlib.patches import Patch

    handles = [
        Patch(color=_STATUS_COLORS["certified"], label="certified optimal"),
        Patch(color=_STATUS_COLORS["verified"], label="verified, not certified"),
        Patch(
            facecolor=_STATUS_COLORS["other"],
            edgecolor="#555555",
            hatch="//",
            label="no verified answer",
        ),
    ]
    if ax is None:  # under both axes, clear of the bars
        fig.legend(
            handles=handles,
            loc="outside lower center",
            ncols=3,
            fontsize=_LEGEND_FONT,
            frameon=False,
        )
    else:
        memory_ax.legend(handles=handles, fontsize=_LEGEND_FONT, loc="best", framealpha=0.9)
    if title is None:
        asked = ", ".join(f"{k} = {v:g}" for k, v in comparison.requested.items())
        best = (
            "no certified answer"
            if comparison.best is None
            else f"best {comparison.objective_name} = {comparison.best:.6g} "
            f"({comparison.best_method})"
        )
        limit = "" if comparison.time_limit is None else f", {comparison.time_limit:g} s each"
        title = f"Methods on {comparison.notion} at {asked}{limit}: {best}"
        if comparison.description:
            title += "\n" + comparison.description
    if title:
        width = fig.get_figwidth() * 72.0 - 20.0
        fig.suptitle(_wrap_title(title, width, _TITLE_FONT), fontsize=_TITLE_FONT)
    if path is not None:
        save_figure(fig, path)
    return fig


def save_figure(
    fig: Figure,
    path: str | os.PathLike,
    *,
    dpi: float | None = None,
    option: str | None = None,
) -> str:
    """Write a figure atomically: to a temporary file in the same folder, then renamed.

    An existing file at ``path`` is replaced only once the new one is complete (a full disk
    or an error half-way leave it as it was).

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure, e.g. from :func:`plot_curves`.
    path : str or path-like
        Where to write; the extension decides the format: ``.png``, ``.pdf`` or ``.svg``.
    dpi : float, optional
        Resolution of a ``.png`` (default: the figure's, 150 for figures of this module).
    option : str, optional
        The command-line option that named ``path`` (for messages).

    Returns
    -------
    str
        ``path`` as a string.

    Raises
    ------
    InputError
        For another extension (the message lists the formats), a folder that does not exist,
        or when the file cannot be written (named by ``option``, else by ``path``).
    """
    from privopt._io import atomic_write

    name = os.fspath(path)
    field = option or "path"
    ext = os.path.splitext(name)[1].lower()
    if ext not in FIGURE_FORMATS:
        what = f"unknown figure format {ext!r}" if ext else f"no extension in {name!r}"
        raise InputError(f"{what}: use .png, .pdf or .svg", field)
    folder = os.path.dirname(os.path.realpath(name))
    if not os.path.isdir(folder):
        shown = os.path.dirname(os.path.abspath(name))
        raise InputError(
            f"cannot write {name!r}: its folder {shown!r} does not exist; create it first",
            field,
        )
    fmt = ext[1:]

    def write(fh) -> None:
        fig.savefig(fh, format=fmt, dpi=dpi, bbox_inches="tight", pad_inches=0.04)

    return atomic_write(name, write, binary=True, option=field)
