"""``Curve.plot`` and the layout of figures: budget sweeps at the achieved points, legends outside
the axes (also under the narrow axes of a notebook's subplots), levels in bits.

The layering rule (the results layer never imports matplotlib at import time) is checked by
``test_plotting.py::test_import_privopt_loads_no_matplotlib``; here a subprocess checks that
``Curve`` itself and a sweep do not load it before ``Curve.plot`` is called.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")

from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

import privopt as po  # noqa: E402
from privopt import plotting  # noqa: E402
from privopt.io.files import load_problem  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
BUDGETS = list(np.linspace(0.05, 1, 8))


@pytest.fixture(scope="module")
def pdmip():
    """The issue's example: wang_pdmip.toml, budgets 0.05:1:8 (the last three are slack)."""
    spec = load_problem(ROOT / "problems" / "wang_pdmip.toml")
    curve = po.sweep(spec.prior, spec.distortion, spec.notion, max_distortions=BUDGETS)
    return spec, curve


@pytest.fixture(scope="module")
def level_curves():
    prior = po.DatabasePrior(m=2, n=2, probs=[0.42, 0.18, 0.28, 0.12])
    dist = po.Distortion.database_hamming(2, 2)
    curves = po.sweep_notions(prior, dist, ["identifiability", "dp"], epsilons=[0, 0.5, 1, 2, 3])
    return prior, dist, curves


def _curve_line(ax, notion: str):
    (line,) = [ln for ln in ax.get_lines() if ln.get_gid() == f"curve:{notion}"]
    return line


def _new_axes(figsize=(5.0, 4.0)):
    fig = Figure(figsize=figsize, layout="constrained")
    FigureCanvasAgg(fig)
    return fig, fig.add_subplot()


# --- Curve.plot ---------------------------------------------------------------------------------
def test_curve_plot_returns_the_figure_of_plot_curve(level_curves, tmp_path, monkeypatch):
    prior, dist, curves = level_curves
    monkeypatch.chdir(tmp_path)
    fig = curves[1].plot(prior=prior, distortion=dist)
    assert isinstance(fig, Figure) and len(fig.axes) == 1
    assert list(tmp_path.iterdir()) == []  # drawing writes no file
    line = _curve_line(fig.axes[0], "dp")
    np.testing.assert_allclose(line.get_xdata(), [0, 0.5, 1, 2, 3])
    np.testing.assert_allclose(line.get_ydata(), curves[1].column("distortion"))
    # the same figure as the plotting function draws (same lines, labels and title)
    ref = plotting.plot_curve(curves[1], prior=prior, distortion=dist)
    assert fig.axes[0].get_title() == ref.axes[0].get_title()
    assert [t.get_text() for t in fig.legends[0].get_texts()] == [
        t.get_text() for t in ref.legends[0].get_texts()
    ]
    # keywords are forwarded: a path writes the figure, a title replaces the default
    curves[1].plot(prior=prior, distortion=dist, title="(a) DP", path=tmp_path / "dp.svg")
    assert (tmp_path / "dp.svg").read_bytes().startswith(b"<?xml")


def test_curve_plot_draws_on_a_given_axes(level_curves, pdmip):
    prior, dist, curves = level_curves
    spec, budget = pdmip
    fig = Figure(figsize=(9, 5), layout="constrained")
    FigureCanvasAgg(fig)
    left, right = fig.subplots(1, 2)
    assert curves[0].plot(ax=left, prior=prior, distortion=dist, title="") is fig
    assert budget.plot(right, prior=spec.prior, distortion=spec.distortion) is fig
    assert len(fig.axes) == 2 and not fig.legends  # no new figure, no figure legend
    assert _curve_line(left, "identifiability").get_xdata().size == 3  # 0 and 0.5: infeasible
    assert "budget" in right.get_title() and left.get_title() == ""


def test_curve_plot_does_not_load_matplotlib_before_it_is_called():
    code = (
        "import sys, privopt as po\n"
        "from privopt.solve.results import Curve\n"
        "c = po.sweep([0.5, 0.5], 'hamming', 'ldp', epsilons=[1.0])\n"
        "assert 'matplotlib' not in sys.modules and 'privopt.plotting' not in sys.modules\n"
        "fig = c.plot()\n"
        "assert type(fig).__name__ == 'Figure' and 'privopt.plotting' in sys.modules\n"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    subprocess.run([sys.executable, "-c", code], check=True, env=env, timeout=120)


# --- budget sweeps ------------------------------------------------------------------------------
def test_budget_curve_is_drawn_at_the_achieved_points(pdmip):
    spec, curve = pdmip
    ax = curve.plot(prior=spec.prior, distortion=spec.distortion).axes[0]
    line = _curve_line(ax, "mutual_information")
    drawn = sorted(zip(line.get_xdata(), line.get_ydata(), strict=True))
    achieved = sorted(zip(curve.column("epsilon"), curve.column("distortion"), strict=True))
    np.testing.assert_allclose(drawn, achieved, atol=1e-12)
    budgets = curve.column("requested_max_distortion")
    np.testing.assert_allclose(budgets, BUDGETS)
    # the drawn distortions are the achieved ones, not the budgets: the three slack budgets
    # (0.73, 0.86, 1.0) all have E[d] = 0.7 at ε* = 0, and nothing is drawn above 0.7
    assert not np.allclose(sorted(line.get_ydata()), sorted(budgets))
    assert max(line.get_ydata()) == pytest.approx(0.7, abs=1e-6)
    (hollow,) = [ln for ln in ax.get_lines() if ln.get_gid() == "slack:mutual_information"]
    np.testing.assert_allclose(hollow.get_xdata(), [0, 0, 0], atol=1e-6)
    np.testing.assert_allclose(hollow.get_ydata(), [0.7] * 3, atol=1e-6)


def test_points_on_the_edges_of_the_axes_are_not_cut(pdmip):
    """The slack point (0, 0.7) sits on ε* = 0: the axes start a little left of 0 so that its
    hollow marker is drawn whole, and there is room above it for the names of its budgets."""
    spec, curve = pdmip
    fig = curve.plot(prior=spec.prior, distortion=spec.distortion)
    ax = fig.axes[0]
    fig.canvas.draw()
    left, right = ax.get_xlim()
    bottom, top = ax.get_ylim()
    assert left < 0 < right and bottom < 0 < top
    (hollow,) = [ln for ln in ax.get_lines() if ln.get_gid() == "slack:mutual_information"]
    x0 = ax.transData.transform((0.0, 0.7))[0]
    radius = hollow.get_markersize() / 2 * fig.dpi / 72  # pixels
    assert x0 - radius >= ax.bbox.x0  # the whole marker is inside the axes
    (note,) = [t for t in ax.texts if t.get_text().startswith("budgets")]
    assert note.get_window_extent().y1 <= ax.bbox.y1


# --- legends outside the axes -------------------------------------------------------------------
@pytest.mark.parametrize("own", [True, False])
def test_the_legend_sits_outside_the_axes(level_curves, own):
    prior, dist, curves = level_curves
    if own:
        fig = plotting.plot_curves(curves, prior=prior, distortion=dist)
        ax = fig.axes[0]
        (legend,) = fig.legends
    else:
        fig, ax = _new_axes()
        plotting.plot_curves(curves, ax=ax, prior=prior, distortion=dist)
        legend = ax.get_legend()
    fig.canvas.draw()
    box, axes_box = legend.get_window_extent(), ax.get_window_extent()
    assert box.y1 <= axes_box.y0 and not box.overlaps(axes_box)  # under the axes
    assert fig.bbox.x0 <= box.x0 and box.x1 <= fig.bbox.x1  # and inside the figure
    texts = [t.get_text() for t in legend.get_texts()]
    assert r"$\varepsilon_X = \tilde{\varepsilon}_X$ = 0.8473" in " ".join(texts)
    assert any(t.startswith(r"$h(\varepsilon)$") for t in texts)  # mathtext, not "eps_X"
    assert ax.get_ylabel() == r"least expected distortion $D^*(\varepsilon)$"


def test_narrow_subplots_keep_legends_and_titles_apart(level_curves, pdmip):
    """Side-by-side subplots of a notebook figure: each legend goes under its own axes in one
    column when two do not fit, long titles are wrapped to the axes, and constrained layout
    keeps room for the axes (it warned that they collapsed)."""
    prior, dist, curves = level_curves
    spec, budget = pdmip
    fig = Figure(figsize=(9, 5), layout="constrained")
    FigureCanvasAgg(fig)
    left, right = fig.subplots(1, 2)
    plotting.plot_curves(curves, ax=left, prior=prior, distortion=dist)
    budget.plot(ax=right, prior=spec.prior, distortion=spec.distortion)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fig.canvas.draw()
    boxes = []
    for ax in (left, right):
        legend = ax.get_legend()
        columns = {round(t.get_window_extent().x0) for t in legend.get_texts()}
        assert len(columns) == 1  # one column: two would not fit under a 4.5-inch subplot
        box = legend.get_window_extent()
        assert not box.overlaps(ax.get_window_extent()) and box.y1 <= ax.bbox.y0
        assert fig.bbox.x0 <= box.x0 and box.x1 <= fig.bbox.x1
        title = ax.title.get_window_extent()
        assert fig.bbox.x0 <= title.x0 and title.x1 <= fig.bbox.x1 and title.y1 <= fig.bbox.y1
        assert len(ax.get_title().splitlines()) > 2  # wrapped (two lines on a 7-inch figure)
        assert ax.bbox.height > 100  # the axes keep a usable height (pixels)
        boxes.append(box)
    assert not boxes[0].overlaps(boxes[1])
    # the wrapping keeps a pmf such as (0.6, 0.4) on one line
    assert "(0.6, 0.4)" in right.get_title()


def test_wrap_title_breaks_after_commas_outside_parentheses():
    text = "a title: first part, prior (0.6, 0.4) ⊗ (0.7, 0.3), Hamming distortion"
    assert plotting._wrap_title(text, 1e6, 9.5) == text
    wrapped = plotting._wrap_title(text, 130, 9.5).splitlines()
    assert len(wrapped) > 1 and " ".join(wrapped) == text
    assert any("(0.6, 0.4) ⊗ (0.7, 0.3)," in line for line in wrapped)


# --- levels in bits -----------------------------------------------------------------------------
def test_curves_in_bits_are_drawn_in_bits_with_the_closed_forms_converted(level_curves):
    prior, dist, _ = level_curves
    bits = [0.5, 1.0, 2.0, 3.0]
    curves = po.sweep_notions(prior, dist, ["identifiability", "dp"], epsilons=bits, unit="bits")
    fig = plotting.plot_curves(curves, prior=prior, distortion=dist)
    ax = fig.axes[0]
    assert ax.get_xlabel() == r"privacy level $\varepsilon$ (bits)"
    line = _curve_line(ax, "dp")
    np.testing.assert_allclose(line.get_xdata(), bits)
    # the h(ε) overlay is h of the level in nats; it meets the dp points from ε̃_X = ln(7/3)
    # nats = 1.22 bits on (D*_DP = h there, Wang et al. Thm 1: at 2 and 3 bits), and
    # ε_X = ε̃_X is marked at log2(7/3) bits
    (upper,) = [ln for ln in ax.get_lines() if ln.get_label().startswith(r"$h(\varepsilon\,")]
    h = np.interp(bits, upper.get_xdata(), upper.get_ydata())
    exact = [po.closed_forms.h(b * math.log(2), 2, 2) for b in bits]
    np.testing.assert_allclose(h, exact, atol=1e-5)  # linear interpolation on the overlay grid
    np.testing.assert_allclose(curves[1].column("distortion")[2:], exact[2:], atol=1e-7)
    (mark,) = [ln for ln in ax.get_lines() if ln.get_gid() == "epsilon_x"]
    assert mark.get_xdata()[0] == pytest.approx(math.log2(7 / 3))
    # every point's closed-form checks are drawn at the point (none dropped for the unit)
    (checks,) = [ln for ln in ax.get_lines() if ln.get_gid() == "checks:at_most"]
    assert set(np.round(checks.get_xdata(), 9)) >= {round(b, 9) for b in bits}
    nats = po.sweep(prior, dist, "dp", epsilons=[1.0])
    with pytest.raises(po.InputError, match="same unit"):
        plotting.plot_curves([curves[1], nats])


def test_budget_curve_in_bits_places_its_level_checks(pdmip):
    spec, _ = pdmip
    curve = po.sweep(
        spec.prior, spec.distortion, spec.notion, max_distortions=[0.2, 0.4], unit="bits"
    )
    ax = curve.plot(prior=spec.prior, distortion=spec.distortion).axes[0]
    assert ax.get_xlabel() == r"least privacy level $\varepsilon^*$ (bits)"
    (checks,) = [ln for ln in ax.get_lines() if ln.get_gid() == "checks:equal"]
    # the PD-MIP value check (Wang et al. Thm 2) compares the level: drawn at the point, in bits
    np.testing.assert_allclose(sorted(checks.get_xdata()), sorted(curve.column("epsilon")))
